"""The band claims of the retrieval area (verify/retrieval/equal_counts.py, product_form.py): a
staged band over base seeds passes inside, fails outside, stays inconclusive on an end at the
cap, stops at the first infinite N_c; the L-d interaction is 0 for every product law and not for
the additive control."""

import math

import pytest

from verify.retrieval.capacity_setup import band_rules, staged_band
from verify.retrieval.product_form import interaction, read_fit


def _run(values):
    rules = band_rules("x", 0.0, 0.2, "pilot")
    return staged_band(lambda s: values[s], range(12), rules)


def test_staged_band_decides_inside_and_outside_and_not_on_an_end():
    inside, n = _run([0.01, -0.02, 0.0] * 4)
    assert inside.verdict == "pass" and len(n) == 3
    outside, n = _run([0.5, 0.52, 0.49] * 4)
    assert outside.verdict == "fail" and len(n) == 3
    on_end, n = _run([0.1, 0.3, 0.2, 0.25, 0.15, 0.2] * 2)
    assert on_end.verdict == "inconclusive" and len(n) == 12
    infinite, n = _run([0.0, math.inf] + [0.0] * 10)
    assert infinite.verdict == "fail" and len(n) == 2
    with pytest.raises(ValueError, match="NaN"):
        _run([0.0, math.nan] + [0.0] * 10)
    with pytest.raises(ValueError, match="tol"):
        band_rules("x", 0.0, 0.0, "pilot")


def test_interaction_is_zero_for_products_and_not_for_the_additive_law():
    ds, Ls = [32, 128], [8, 32]
    for f, g in ((lambda L: L, lambda d: 1 / d), (lambda L: L**0.5 + 3, lambda d: math.exp(-d / 50))):
        n_c = {(d, L): 1e4 * f(L) * g(d) for d in ds for L in Ls}
        assert abs(interaction(n_c, ds, Ls)) < 1e-12
        assert interaction(n_c, ds, Ls, "additive") > 0.1
    assert interaction({(d, L): math.inf for d in ds for L in Ls}, ds, Ls) == math.inf
    with pytest.raises(ValueError, match="NaN"):
        interaction({(d, L): math.nan for d in ds for L in Ls}, ds, Ls)


def test_the_band_half_width_is_half_the_pilot_additive_interaction():
    fit = read_fit()
    assert fit["half_width"] == pytest.approx(fit["additive_interaction_mean"] / 2, abs=1e-3)
    assert min(fit["pilot_seeds"]) >= 100


def test_md_staged_needs_both_parts_and_reads_later_looks():
    from verify.retrieval.mlp_product import MD_PILOT, md_staged_judgement

    tol = MD_PILOT["tolerance"]
    assert tol == pytest.approx(0.2 * MD_PILOT["mean_64_32"], abs=5e-4)
    flat = [0.0, 0.01, -0.01, 0.005, -0.005, 0.0]
    drop = [0.2, 0.21, 0.19, 0.2, 0.22, 0.18]
    assert md_staged_judgement(flat, drop, tol, (3, 6)).verdict == "pass"
    assert md_staged_judgement(flat, flat, tol, (3, 6)).verdict == "fail"  # halving m*d changes nothing
    assert md_staged_judgement(drop, drop, tol, (3, 6)).verdict == "fail"  # the same m*d differs
    with pytest.raises(ValueError, match="NaN"):
        md_staged_judgement([math.nan] * 3, drop[:3], tol, (3,))
