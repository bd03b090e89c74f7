"""docs/contributing.md, followed step by step: its example claim, written into a temporary
package, registers, runs at quick scale with its control, and gives a complete record."""

from __future__ import annotations

import importlib
import re
import sys

import pytest

from tests.layout import ROOT
from verify.claims import CLAIMS, Context, load_all, missing_controls
from verify.runner import run_claim

GUIDE = ROOT / "docs" / "contributing.md"
EXAMPLE_ID = "geometric.example.random_cosines"


def guide_example() -> str:
    """The guide's first Python block: the example claim module."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    assert blocks, "docs/contributing.md lost its example claim"
    return blocks[0]


@pytest.fixture
def example_claim(tmp_path, monkeypatch):
    from constructions.seeding import SALTS

    load_all()
    assert "geometric.example.vectors" not in SALTS and 4242 not in SALTS.values()
    monkeypatch.setitem(SALTS, "geometric.example.vectors", 4242)  # the guide's new salt
    package = tmp_path / "contrib_example"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "random_cosines.py").write_text(guide_example())
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        importlib.import_module("contrib_example.random_cosines")
        yield CLAIMS[EXAMPLE_ID]
    finally:
        CLAIMS.pop(EXAMPLE_ID, None)
        for name in [m for m in sys.modules if m.startswith("contrib_example")]:
            del sys.modules[name]


def test_the_guides_example_claim_runs_with_its_control(example_claim):
    assert missing_controls(example_claim) is None
    assert example_claim.kind == "empirical" and example_claim.provenance == "reference"
    for seed in (0, 1):  # the verdict belongs to the claim, not to one base seed
        record = run_claim(example_claim, Context(seed=seed, scale="quick"))
        assert record["status"] == "pass", record.get("error") or record["measured"]
        assert record["resolution"]["rule"] == "every_seed" and record["resolution"]["text"]
        assert [c["status"] for c in record["controls"]] == ["fails as required"]
        assert "N=200 independent uniform unit vectors in R^256" in record["statement"]
        assert {"seed", "device", "dtype", "versions", "git"} <= set(record)
        assert record["seed"] == seed and record["dtype"] == "float64"


def test_the_example_fails_when_its_hypothesis_is_dropped(example_claim):
    """The control's setting, run as the claim itself: the same criterion fails (it can fail)."""
    params = example_claim.controls[0].apply(example_claim.params("quick"))
    outcome = example_claim.check(params, Context(scale="quick"))
    assert outcome.passed is False and outcome.inconclusive is None
    assert min(outcome.measured["largest |cos| over pairs"]) > 0.4
