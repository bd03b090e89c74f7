"""The atlas laws judged over replicate seeds (verify.atlas.replicates) and the smallest-bank
headroom (verify.atlas.verdict.storing_headroom)."""

from __future__ import annotations

import pytest

from verify.atlas.replicates import BAND, judge_over_seeds, over_seeds_params
from verify.atlas.verdict import judge_smallest_bank, storing_headroom

BOUNDS = [[1.0, 1.0], [10.0, 10.0], [100.0, 100.0]]


def family(exponent: float, scale: float = 2.0) -> list[list[float]]:
    return [[scale * b**exponent for b in bs] for bs in BOUNDS]


def judge(exponents, **p):
    params = {**over_seeds_params(len(exponents)), **p}
    return judge_over_seeds(params, list(range(len(exponents))), [(family(e), BOUNDS) for e in exponents])


def test_exponents_inside_the_band_pass():
    judgement, details = judge([0.97, 0.99, 1.01, 1.0, 0.98])
    assert judgement.verdict == "pass"
    assert len(details["per_seed_exponent"]) == 5


def test_exponents_beyond_the_band_fail_and_across_it_are_inconclusive():
    assert judge([0.82, 0.84, 0.83, 0.85, 0.81])[0].verdict == "fail"  # closer to bound^0.8
    assert judge([1.18, 1.2, 1.17])[0].verdict == "fail"  # closer to bound^1.2
    assert judge([0.8, 1.0, 0.9])[0].verdict == "inconclusive"  # the interval holds 0.9


def test_the_band_is_the_midpoints_of_the_alternatives():
    assert BAND == (0.9, 1.1)


def test_spread_above_the_constant_fails():
    # a ratio that grows 3x from the first to the last point on every seed: spread 3 > 2
    sizes = [[2.0, 2.0], [20.0 * 1.7, 20.0 * 1.7], [600.0, 600.0]]
    p = over_seeds_params(3)
    judgement, _ = judge_over_seeds(p, [0, 1, 2], [(sizes, BOUNDS)] * 3)
    assert judgement.verdict == "fail"


def test_affine_law_judges_the_sizes_less_the_overhead():
    sizes = [[100.0 + 2.0 * b for b in bs] for bs in BOUNDS]
    p = over_seeds_params(3, overhead=100.0)
    assert judge_over_seeds(p, [0, 1, 2], [(sizes, BOUNDS)] * 3)[0].verdict == "pass"
    # the proportional law on the same sizes is closer to bound^0.8 than to the bound
    assert judge_over_seeds(over_seeds_params(3), [0, 1, 2], [(sizes, BOUNDS)] * 3)[0].verdict == "fail"
    # a size at or below the overhead refutes the affine law outright
    low = over_seeds_params(3, overhead=102.0)
    judgement, details = judge_over_seeds(low, [0, 1, 2], [(sizes, BOUNDS)] * 3)
    assert judgement.verdict == "fail" and details["overhead"] == 102.0


def test_controls_fail_on_every_seed():
    for sizes in ("synthetic bound^1.5", "synthetic bound^0.5"):
        assert judge([0.97, 0.99, 1.01], judged_sizes=sizes)[0].verdict == "fail"


def test_bad_input_names_the_hypothesis():
    with pytest.raises(ValueError, match="one replicate per seed"):
        judge_over_seeds(over_seeds_params(3), [0, 1], [(family(1.0), BOUNDS)] * 2)
    with pytest.raises(ValueError, match=">= 3 seeds"):
        over_seeds_params(2)


def test_headroom_is_positive_exactly_when_the_draw_stores():
    assert storing_headroom(0, 10, 1.0) == 1.0
    assert 0 < storing_headroom(10, 10, 1.0) < 1
    assert storing_headroom(None, 10, 0.5) == -0.5
    with pytest.raises(ValueError, match="below accuracy 1"):
        storing_headroom(None, 10, 1.0)
    with pytest.raises(ValueError, match="storing step"):
        storing_headroom(11, 10, 1.0)


def test_smallest_bank_decides_as_stores_within_the_grid():
    rows = [
        {"F": 32, "c_star": [2, 4], "stored_at_step": [36, 999], "accuracy_trace": [[1.0], [0.9, 1.0]]},
        {
            "F": 64,
            "c_star": [4, None],
            "stored_at_step": [57, None],
            "accuracy_trace": [[1.0], [0.9, 0.95, 0.99]],
        },
    ]
    found = {"rows": rows, "info_bits": [128.0, 256.0]}
    judgement, _ = judge_smallest_bank(found, 1000, "test")
    assert judgement.verdict == "fail"
    values = judgement.measured[next(iter(judgement.predicted))]
    assert [v > 0 for v in values] == [True, True, True, False]
    rows[1]["c_star"][1], rows[1]["stored_at_step"][1] = 16, 400
    rows[1]["accuracy_trace"][1] = [0.9, 0.95, 1.0]
    assert judge_smallest_bank(found, 1000, "test")[0].verdict == "pass"
