"""The sequential rule over seeds (verify.criteria.Sequential): its error rates with optional
stopping stay within alpha where the mean sits on the threshold, it stops at the look that
decides, and verify oc rebuilds it from a record and simulates the whole staged procedure."""

import math

import numpy as np
import pytest

from verify.criteria import Sequential
from verify.criteria_seeds import staged_rates
from verify.oc import rates
from verify.oc.generic import over_seeds


def _rates(rule: Sequential, mean: float, sd: float) -> dict:
    return staged_rates(rule, mean, sd, reps=3000)


@pytest.mark.parametrize("side", [">=", "<="])
def test_error_rates_at_the_threshold_include_stopping(side):
    rule = Sequential("x", 0.0, side, looks=(3, 6, 12, 24))
    at = _rates(rule, 0.0, 1.0)
    # Bonferroni over 4 looks: at most alpha = 0.05 each way; a rate of 0.05 over 3000 runs has a
    # Monte Carlo standard error of 0.004, so a rate above 0.05 + 3 standard errors refutes it
    allowed = 0.05 + 3 * math.sqrt(0.05 * 0.95 / 3000)
    assert at["pass"] <= allowed and at["fail"] <= allowed, at
    # and the rule is not vacuous: one sd away it decides the right way nearly always
    good = _rates(rule, 1.0 if side == ">=" else -1.0, 1.0)
    bad = _rates(rule, -1.0 if side == ">=" else 1.0, 1.0)
    assert good["pass"] >= 0.9 and bad["fail"] >= 0.9, (good, bad)


def test_run_stops_at_the_deciding_look():
    calls = []

    def measure(seed):
        calls.append(seed)
        return 1.0 + 0.01 * (seed % 3)

    j = Sequential("acc", 0.5, looks=(3, 6, 12)).run(measure, range(100, 112))
    assert j.verdict == "pass" and calls == [100, 101, 102]
    assert j.measured["looks"][-1]["n"] == 3 and j.measured["seeds"] == [100, 101, 102]


def test_undecided_at_the_cap_names_a_budget():
    j = Sequential("x", 0.0, looks=(3, 6)).judge([0.2, -0.1, 0.3, -0.2, 0.25, 0.0])
    assert j.verdict == "inconclusive" and "cap of about" in j.budget


@pytest.mark.parametrize(
    "looks, alpha", [((1, 4), 0.05), ((4, 4), 0.05), ((), 0.05), ((3, 6), 0.0), ((3, 6), 0.7)]
)
def test_bad_rules_are_refused(looks, alpha):
    with pytest.raises(ValueError):
        Sequential("x", 0.0, looks=looks, alpha=alpha)


def test_nan_and_short_input_are_errors():
    rule = Sequential("x", 0.0, looks=(3, 6))
    with pytest.raises(ValueError, match="NaN"):
        rule.run(lambda s: float("nan"), range(6))
    with pytest.raises(ValueError, match="first look"):
        rule.judge([1.0, 2.0])
    with pytest.raises(ValueError, match="cap"):
        rule.run(lambda s: 1.0, range(4))


@pytest.mark.parametrize("threshold", [0.9, math.log(2.5)])  # printed exactly, and rounded
def test_oc_simulates_the_staged_procedure_from_a_record(threshold):
    rule = Sequential("accuracy", threshold, ">=", "convention", looks=(3, 6, 12))
    rng = np.random.default_rng(1)
    j = rule.run(lambda s: float(threshold + 0.05 + 0.03 * rng.standard_normal()), range(12))
    record = {
        "params": {"seeds": 12},
        "seed_rule": "sequential looks over seeds",
        "resolution": j.resolution,
        "measured": j.measured,
        "predicted": j.predicted,
        "controls": [],
    }
    setup = over_seeds(record)
    assert setup.alternatives == ["at the threshold"]
    got = rates(setup, reps=1500)
    assert got["at the threshold"]["pass"] <= 0.05
    assert got["as measured"]["pass"] >= 0.8
    # at more seeds the looks are continued to the new cap
    assert over_seeds(record, seeds=24).budget["seeds"] == 24
