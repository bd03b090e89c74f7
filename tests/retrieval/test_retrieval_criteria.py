"""The criterion objects behind the retrieval claims' verdicts: strict inequalities stay strict,
an infinite N_c fails on its own rule, NaN raises, and the two must-fail claims that are not
brackets say so in a coarse resolution."""

import math

import pytest

from verify.criteria import EverySeed
from verify.retrieval.early_gd import _standardised
from verify.retrieval.gd_capacity import gd_capacity_judgement
from verify.retrieval.lower import lower_judgement
from verify.retrieval.sufficient import small_n_judgement, sufficient_judgement


def test_strict_sides_keep_a_strict_inequality_strict():
    above, below = EverySeed("x", 2.0, ">"), EverySeed("x", 2.0, "<")
    assert above.judge([2.0]).verdict == "fail" and above.judge([2.0000001]).verdict == "pass"
    assert below.judge([2.0]).verdict == "fail" and below.judge([1.9999999]).verdict == "pass"
    with pytest.raises(ValueError, match="side"):
        EverySeed("x", 1.0, ">>")


def test_gd_capacity_reads_staged_looks_over_seeds_and_an_infinite_n_c_fails():
    base = {"base": 500.0, "bigger_v": 900.0, "smaller_d": 800.0}
    spread = [{k: v * (f if k != "base" else 1.0) for k, v in base.items()} for f in (0.95, 1.0, 1.05, 1.0)]
    j = gd_capacity_judgement(spread, 1.3)
    assert j.verdict == "pass" and j.resolution["parts"]["smaller_d"]["stopped_at"] == 4
    exact = [{**row, "smaller_d": 650.0} for row in spread]  # exactly 1.3x at every seed: not above
    assert gd_capacity_judgement(exact, 1.3).verdict == "fail"
    straddles = [{**row, "smaller_d": 650.0 * f} for row, f in zip(spread, (0.8, 1.0, 1.3, 1.1))]
    j = gd_capacity_judgement(straddles, 1.3)  # undecided at the first look: the next one is named
    assert j.verdict == "inconclusive" and "8" in j.resolution["parts"]["smaller_d"]["text"]
    assert gd_capacity_judgement(straddles * 2, 1.3).verdict == "inconclusive"  # and at the cap
    j = gd_capacity_judgement([{k: math.inf for k in base}] * 4, 1.3)  # the "init" control
    assert j.verdict == "fail" and j.resolution["rule"] == "threshold"
    with pytest.raises(ValueError, match="NaN"):
        gd_capacity_judgement([{**base, "base": math.nan}] * 4, 1.3)


def test_small_d_reads_intervals_over_draws():
    from verify.criteria import Bracket
    from verify.retrieval.sufficient import small_d_judgement

    b = Bracket("d", 15.3, 14, 17)
    below, above = [0.85, 0.86, 0.84, 0.855], [0.95, 0.94, 0.96, 0.945]
    assert small_d_judgement(b, below, above, 0.9, "below").verdict == "pass"
    assert small_d_judgement(b, [0.92, 0.93, 0.94], above, 0.9, "below").verdict == "fail"
    assert small_d_judgement(b, [0.8, 0.95, 0.9], above, 0.9, "below").verdict == "inconclusive"
    assert small_d_judgement(b, below, above, 0.9, "above").verdict == "fail"  # the control holds above
    assert small_d_judgement(b, below, [0.85, 0.86, 0.84], 0.9, "below").verdict == "fail"  # breaks above


def _row(d, n, margins):
    return {
        "vocab_size": 64,
        "d_model": d,
        "seq_len": 4,
        "embedding": "gaussian",
        "n_samples": n,
        "margins": margins,
    }


def test_sufficient_needs_k_exact_draws_and_both_kinds_of_grid_point():
    infinite = _row(9, math.inf, None)
    good, short = _row(256, 900.0, [0.2] * 9 + [-0.01]), _row(2048, 800.0, [0.2] * 8 + [0.0] * 2)
    assert sufficient_judgement([good, infinite], 9).verdict == "pass"
    assert sufficient_judgement([good, short, infinite], 9).verdict == "fail"  # a tie (0) is not exact
    assert sufficient_judgement([good], 9).verdict == "fail"  # no point with n_sufficient = inf
    assert sufficient_judgement([infinite], 9).verdict == "fail"  # no finite point
    with pytest.raises(ValueError, match="NaN"):
        sufficient_judgement([_row(256, 900.0, [math.nan] + [0.2] * 9), infinite], 9)


def test_small_n_fail_is_a_staged_rule_and_not_a_bracket():
    below = [-0.25, -0.2, -0.3, -0.22, -0.27]
    j = small_n_judgement(below, 326, 326, 31950.0)
    assert j.verdict == "pass" and j.resolution["coarse"] and "not a bracket" in j.resolution["note"]
    assert j.resolution["stopped_at"] == 5 and round(j.resolution["factor"]) == 98
    assert small_n_judgement([0.1, 0.12, 0.09, 0.11, 0.1], 326, 326, 31950.0).verdict == "fail"
    edge = [0.1, -0.1, 0.05, -0.08, 0.02] * 4  # on the edge: undecided at the cap of 20 draws
    assert small_n_judgement(edge, 326, 326, 31950.0).verdict == "inconclusive"
    with pytest.raises(ValueError, match="NaN"):
        small_n_judgement([math.nan] + below, 326, 326, 31950.0)


def test_plateau_reads_both_ends_in_stages():
    from verify.retrieval.sufficient import plateau_judgement

    near = [0.004, -0.003, 0.001, 0.002, -0.001, 0.0, 0.003, -0.002]
    assert plateau_judgement({12: near, 16: near}, 0.025).verdict == "pass"
    assert plateau_judgement({12: near, 16: [x + 0.1 for x in near]}, 0.025).verdict == "fail"
    wide = [0.09, -0.08, 0.07, -0.09, 0.08, -0.07, 0.09, -0.08] * 4  # undecided at the cap of 32
    assert plateau_judgement({12: wide}, 0.025).verdict == "inconclusive"
    with pytest.raises(ValueError, match="NaN"):
        plateau_judgement({12: [math.nan] + near}, 0.025)


def test_lower_rate_is_strictly_below_and_the_gap_is_reported():
    row = {
        "d_model": 16,
        "seq_len": 65,
        "n_samples": [2500],
        "swap_n_lower": [2501],
        "n_sufficient_decoder": [15400],
    }
    assert lower_judgement([{**row, "exact_rate": 0.45}], 0.5).verdict == "pass"
    j = lower_judgement([{**row, "exact_rate": 0.5}], 0.5)
    assert j.verdict == "fail" and j.resolution["coarse"] and round(j.resolution["value"], 1) == 6.2
    with pytest.raises(ValueError, match="NaN"):
        lower_judgement([{**row, "exact_rate": math.nan}], 0.5)
    with pytest.raises(ValueError, match="configuration"):
        lower_judgement([], 0.5)


def test_standardised_difference_without_a_standard_error():
    assert _standardised(0.1, 0.02) == pytest.approx(5.0)
    assert _standardised(0.0, 0.0) == 0.0 and _standardised(0.1, 0.0) == math.inf
