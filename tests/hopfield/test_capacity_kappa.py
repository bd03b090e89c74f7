"""The kappa sweep of hopfield.capacity.kappa_slope: the excess slope is 0 for D3 times any constant
prefactor and c - 1-like for a larger exponent, the fit file holds both scales, and the fast gated
errors agree with the reference batch."""

import math

import numpy as np
import pytest

from constructions.hopfield.networks import (
    context_gates,
    gated_errors_over_kappas,
    retrieval_errors_batch,
    sphere_patterns,
)
from theory.hopfield.derived import gated_capacity_prediction
from verify.hopfield.capacity_kappa_setup import (
    PREFACTOR_COMPETITOR,
    excess_rows,
    exponent_for,
    law_slope,
    read_fit,
)

KAPPAS = [2.0, 3.0, 4.0, 5.0, 6.0]


def _rows(n_u: float, gated: list[float]) -> list[dict]:
    return [{"seed": 0, "capacity_ungated": n_u, "capacity_gated": gated}]


def test_a_constant_prefactor_has_no_excess_slope():
    n_u = 60.0
    gated = [1.2 * gated_capacity_prediction(n_u, 16, k) for k in KAPPAS]
    (row,) = excess_rows(_rows(n_u, gated), 16, KAPPAS)
    assert abs(row["excess_slope"]) < 1e-12
    assert row["ln_prefactor"] == pytest.approx(math.log(1.2))


def test_a_larger_exponent_has_the_law_s_excess_slope():
    n_u, c = 60.0, 1.1
    gated = [16 + (n_u - 16) * math.exp(c * k) for k in KAPPAS]
    (row,) = excess_rows(_rows(n_u, gated), 16, KAPPAS)
    assert row["excess_slope"] == pytest.approx(law_slope(n_u, 16, KAPPAS, c))
    assert exponent_for(row["excess_slope"], n_u, 16, KAPPAS) == pytest.approx(c)


def test_a_capacity_off_the_grid_gives_no_excess():
    (row,) = excess_rows(_rows(60.0, [300.0, None, 2000.0, 6000.0, 18000.0]), 16, KAPPAS)
    assert row["excess_slope"] is None


def test_the_fit_file_holds_a_law_for_each_scale():
    for scale in ("quick", "full"):
        fit = read_fit(scale)
        assert fit["law"] in ("exponent", "prefactor")
        if fit["law"] == "prefactor":
            assert fit["excess_fit"] == 0.0 and fit["c_competitor"] == pytest.approx(PREFACTOR_COMPETITOR)
        else:
            assert fit["c_competitor"] == 1.0 and min(fit["pilot_seeds"]) >= 100
    with pytest.raises(KeyError, match="no pilot fit"):
        read_fit("medium")


def test_fast_gated_errors_match_the_reference_batch():
    gen = np.random.default_rng(5)
    X = sphere_patterns(300, 16, 1.0, gen)
    targets = [0, 7, 42]
    sets, U = [], []
    for t in targets:
        u, active = context_gates(300, t, 16, 1.0, gen)
        sets.append(active)
        U.append(u)
    fast = gated_errors_over_kappas(X, targets, 16.0, np.array(sets), [0.0, 2.0, 6.0])
    assert np.allclose(fast[0], retrieval_errors_batch(X, targets, 16.0), rtol=1e-6, atol=1e-12)
    for row, k in ((1, 2.0), (2, 6.0)):
        ref = retrieval_errors_batch(X, targets, 16.0, k * np.array(U))
        assert np.allclose(fast[row], ref, rtol=1e-6, atol=1e-12)


def test_the_nearest_law_band_sits_at_the_midpoints():
    """capacity.*_nearest: the interval must lie between the midpoints from the theory to its
    nearest alternative on each side; wholly beyond one it fails, straddling one it is
    inconclusive, so two overlapping intervals never give a pass and a fail."""
    from verify.hopfield.capacity_setup import nearest_band

    alts = {"low": -0.4, "far low": -1.0, "high": 0.2, "far high": 2.0}
    j = nearest_band("x", 0.0, alts, [-0.15, 0.05], 6)
    assert j.verdict == "pass"
    assert j.predicted["lower_edge"]["x"] == ">= -0.2" and j.predicted["upper_edge"]["x"] == "<= 0.1"
    assert nearest_band("x", 0.0, alts, [0.05, 0.15], 6).verdict == "inconclusive"
    assert nearest_band("x", 0.0, alts, [0.11, 0.3], 6).verdict == "fail"
    assert nearest_band("x", 0.0, alts, [-0.5, -0.25], 6).verdict == "fail"
    with pytest.raises(ValueError, match="equals the theory"):
        nearest_band("x", 0.0, {"same": 0.0}, [-0.1, 0.1], 6)


def test_d3_nearest_judges_log_factors_and_fails_off_the_grid():
    from verify.hopfield.capacity_setup import d3_nearest_judgement, gain_nearest_judgement

    rows = [
        {"capacity_ungated": nu, "capacity_gated": f * gated_capacity_prediction(nu, 16, 4.0)}
        for nu, f in [(60.0, 0.95), (62.0, 1.02), (58.0, 0.9), (61.0, 1.05)]
    ]
    assert d3_nearest_judgement(rows, 16, 4.0, 2.0).verdict == "pass"
    assert gain_nearest_judgement(rows, 16, 4.0).verdict == "pass"
    plain = [
        {**r, "capacity_gated": r["capacity_ungated"] * math.exp(4.0) * f}
        for r, f in zip(rows, (1, 1.01, 0.99, 1))
    ]
    assert d3_nearest_judgement(plain, 16, 4.0, 2.0).verdict == "fail"
    off = [*rows[:3], {"capacity_ungated": 60.0, "capacity_gated": None}]
    assert d3_nearest_judgement(off, 16, 4.0, 2.0).verdict == "fail"
    assert gain_nearest_judgement(off, 16, 4.0).verdict == "fail"
