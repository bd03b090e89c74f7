"""The affine law of the atlas (verify.atlas.affine_fit, verify.atlas.verdict): the pilot fit, its
stored file, the criterion on sizes less the overhead, and a family whose sizes are all equal."""

from __future__ import annotations

import numpy as np
import pytest

from tests.atlas.test_atlas import _judged, _with_linear_memory
from verify.atlas.affine_fit import AFFINE_FAMILIES, fit_affine, load_fit
from verify.atlas.verdict import affine_judgement, less_overhead
from verify.claims import CLAIMS, Context, load_all


def test_fit_recovers_an_overhead_and_a_slope():
    rng = np.random.default_rng(5)
    bounds = [[b] * 3 for b in (2.0, 10.0, 50.0, 250.0)]
    sizes = [[(300.0 + 40.0 * b) * float(np.exp(rng.normal(0, 0.01))) for b in bs] for bs in bounds]
    fit = fit_affine(sizes, bounds)
    assert fit["overhead"] == pytest.approx(300.0, rel=0.1) and fit["slope"] == pytest.approx(40.0, rel=0.03)
    with pytest.raises(ValueError, match="NaN"):
        fit_affine([[1.0], [float("nan")], [3.0]], [[1.0], [2.0], [3.0]])
    with pytest.raises(ValueError, match="distinct bounds"):
        fit_affine([[1.0], [2.0], [3.0]], [[1.0], [1.0], [1.0]])


def test_every_affine_family_has_a_pilot_fit_and_a_claim():
    load_all()
    for name in AFFINE_FAMILIES:
        fit = load_fit(name)
        assert min(fit["pilot_seeds"]) >= 100 and np.isfinite(fit["overhead"])
        claim = CLAIMS[f"atlas.{name}.affine_overhead"]
        assert claim.quick["overhead"] == fit["overhead"] == claim.full["overhead"]
        assert {c.name for c in claim.controls} == {"faster_than_bound", "slower_than_bound"}
    with pytest.raises(ValueError, match="no affine fit"):
        load_fit("no_such_family")


def test_the_affine_criterion_tells_an_overhead_from_a_proportional_law():
    bounds = [[b] * 2 for b in (1.0, 10.0, 100.0)]
    affine = [[100.0 + 5.0 * b] * 2 for b, _ in bounds]
    assert affine_judgement(affine, bounds, 100.0, 2.0, "full").verdict == "pass"
    assert affine_judgement(affine, bounds, 0.0, 2.0, "full").verdict == "fail"  # the proportional law
    below = affine_judgement(affine, bounds, 105.0, 2.0, "full")  # every size at or below P0 + 0
    assert below.verdict == "fail" and "overhead" in below.resolution["text"]
    with pytest.raises(ValueError, match="finite"):
        less_overhead(affine, float("nan"))


def test_equal_sizes_give_a_verdict_not_a_nan(tmp_path):
    """icrecall_linear_memory's affine claim on a record whose sizes are all d^2 = 1024: the exponent
    part says 'every size equal' (inconclusive), never 'a criterion was given NaN'; its controls fail."""
    same = {"dims": [32, 32, 32], "per_seed": [{"n99": [34, 30, 32]}, {"n99": [27, 33, 35]}]}
    _with_linear_memory(tmp_path, same)
    c = CLAIMS["atlas.icrecall_linear_memory.affine_overhead"]
    p = {**c.quick, "results": str(tmp_path)}
    out = _judged(p, Context(seed=0, scale="quick"))
    assert (
        not out.passed
        and out.resolution["parts"]["exponent"]["degenerate"] == "every size equal: no growth to fit"
    )
    assert out.details["points"][0]["size_measured_per_draw"] == [1024.0, 1024.0]
    for control in c.controls:
        assert not _judged(control.apply(p), Context(seed=0, scale="quick")).passed, control.name
