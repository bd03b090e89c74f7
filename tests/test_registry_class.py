"""The one registry class: every registry is a Registry and refuses a name twice."""

import pytest

from theory.registry import BOUNDS, Registry


def test_registry_refuses_a_name_twice():
    reg = Registry("widget")
    assert reg.add("a", 1) == 1
    with pytest.raises(ValueError, match="widget a registered twice"):
        reg.add("a", 2)
    assert reg == {"a": 1}


def test_every_registry_is_a_registry():
    from paper_figs.registry import FIGURES
    from verify.bench import BENCHES
    from verify.claims import CLAIMS

    kinds = {r.kind for r in (BOUNDS, CLAIMS, FIGURES, BENCHES) if isinstance(r, Registry)}
    assert kinds == {"bound", "claim", "figure", "bench"}
