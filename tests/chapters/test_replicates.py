"""The chapters claims judged over replicates: the memory-construction claims measure independent
draws (model and batch per seed) with the exact zeros zero on every draw, and the leak claims
judge a Student-t interval over seeds (at least 2 seeds, no NaN)."""

import math

import pytest

from verify.chapters.leak import _causal_rule, _interval, _leak_threshold
from verify.chapters.memory import TOY, check_leak_causality, check_router_gradient
from verify.chapters.toy_routing import BALANCE_ALPHA, BALANCE_LOOKS
from verify.claims import Context
from verify.criteria import Sequential


def test_router_gradient_draws_vary_and_the_zeros_are_exact():
    ctx = Context(seed=0, scale="quick")
    p = {**TOY, "draws": 2, "weighted_arm": True, "wo_arm": "normal"}  # 2 draws: the test's budget
    judgement, details = check_router_gradient(p, ctx)
    g = details["gradient_norms"]
    assert judgement.verdict == "pass" and details["draw_seeds"] == [0, 1]
    assert len(set(g["weighted_normal"])) == 2 and min(g["weighted_normal"]) > 1e-8
    assert all(v == 0.0 for k in ("concatenated_normal", "weighted_zero", "concatenated_zero") for v in g[k])


def test_causality_reads_a_leaky_arm_at_the_causal_arms_place():
    ctx = Context(seed=0, scale="quick")
    p = {
        **TOY,
        "draws": 2,
        "length": 8,
        "leaky": "sequence",
        "causal": ["prefix", "first"],
        "wo_init": "normal",
    }
    judgement, details = check_leak_causality(p, ctx)
    assert judgement.verdict == "pass"
    assert len(set(details["effects"]["sequence"])) == 2
    control, _ = check_leak_causality({**p, "causal": ["prefix", "sequence"]}, ctx)
    assert control.verdict == "fail" and "causal_arm_2" in control.measured


def test_leak_rules_read_an_interval_over_seeds():
    floor = math.log(16)
    assert _leak_threshold(floor).judge(_interval([2.52, 2.58, 2.56]), seeds=3).verdict == "pass"
    assert _leak_threshold(floor).judge(_interval([2.777, 2.776, 2.778]), seeds=3).verdict == "fail"
    assert _causal_rule(floor, "prefix").judge(_interval([2.777, 2.776, 2.778]), seeds=3).verdict == "pass"
    with pytest.raises(ValueError, match="at least 2 seeds"):
        _interval([2.5])
    with pytest.raises(ValueError, match="NaN"):
        _interval([2.5, math.nan])


def test_balance_looks_hold_their_simulated_rates():
    """The looks of router_balance_staged at the pilot's mean and sd (in sd units, 1.34 above the
    threshold): nearly always a pass; at the threshold, a pass at most about 0.05."""
    from verify.criteria_seeds import staged_rates

    rule = Sequential("entropy", 0.0, ">=", "convention", BALANCE_LOOKS, BALANCE_ALPHA)
    assert staged_rates(rule, 1.34, 1.0, reps=400)["pass"] > 0.97
    assert staged_rates(rule, 0.0, 1.0, reps=400)["pass"] <= 0.05


def test_storage_looks_hold_their_simulated_rates():
    """The fact-storage claims' staged rule: at the threshold it passes and fails at most about
    0.05 each; 10 sd above it (far less than the records' effect) it passes at the first look."""
    from verify.chapters.toy_setup import STORAGE_LOOKS, storage_rule
    from verify.criteria_seeds import staged_rates

    rule = storage_rule(STORAGE_LOOKS)
    at = staged_rates(rule, rule.value, 1.0, reps=400)
    assert at["pass"] <= 0.06 and at["fail"] <= 0.06
    far = staged_rates(rule, rule.value + 10.0, 1.0, reps=400)
    assert far["pass"] > 0.99 and far["mean_seeds"] < 3.1
