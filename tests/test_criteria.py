"""Criteria as objects (verify.criteria) and the third verdict, inconclusive, through the runner."""

from __future__ import annotations

import math

import numpy as np
import pytest

from verify.claims import Claim, Context, Control, Outcome
from verify.criteria import (
    Agreement,
    Bracket,
    EverySeed,
    IntervalTest,
    KOfN,
    Threshold,
    all_of,
    binomial_k,
    growth_exponent,
    growth_law_judgement,
    seeds_to_decide,
)
from verify.runner import is_failure, run_claim

NS = [100.0, 316.0, 1000.0, 3162.0, 10000.0, 31623.0, 100000.0]


def _seeds(law, n_seeds, noise, seed=0):
    rng = np.random.default_rng(seed)
    return [[law(n) + noise * rng.standard_normal() for n in NS] for _ in range(n_seeds)]


def test_threshold_three_verdicts_and_errors():
    t = Threshold("accuracy", 0.9, ">=", "convention")
    assert t.judge([0.91, 0.99]).verdict == "pass"
    assert t.judge([0.5, 0.89]).verdict == "fail"
    j = t.judge([0.8, 0.95], seeds=4)
    assert j.verdict == "inconclusive" and j.budget.startswith("about") and not j.passed
    assert Threshold("error", 0.1, "<=").judge([0.01, 0.05]).verdict == "pass"
    with pytest.raises(ValueError, match="NaN"):
        t.judge([float("nan"), 1.0])
    with pytest.raises(ValueError, match="lower end"):
        t.judge([1.0, 0.5])
    with pytest.raises(ValueError, match="source"):
        Threshold("x", 1.0, ">=", "hunch")


def test_interval_test_names_nearest_rejected_on_each_side():
    law = IntervalTest("q", 1.0, {"a": 0.5, "b": 1.5, "c": 2.0})
    j = law.judge([0.8, 1.2])
    assert j.verdict == "pass" and j.resolution["rejected"] == ["a", "b"] and not j.resolution["coarse"]
    j = law.judge([0.8, 1.6], seeds=5)
    assert j.verdict == "inconclusive" and j.resolution["not_rejected"] == ["b"]
    assert "about" in j.budget
    assert law.judge([1.3, 1.7]).verdict == "fail"


def test_bracket_resolution_is_the_factor_to_the_boundary():
    assert Bracket("d", 10, 6, 14).factor == pytest.approx(10 / 6) and not Bracket("d", 10, 6, 14).coarse
    wide = Bracket("d", 6.29, 60, 110)  # both points on one side: does not straddle
    assert wide.coarse and "does not straddle" in wide.judge(True, True).resolution["text"]
    assert Bracket("d", 10, 4, 14).coarse  # 2.5x below the boundary
    with pytest.raises(ValueError):
        Bracket("d", 10, 14, 6)


def test_bracket_sides_a_claim_and_its_control_from_one_measurement():
    b = Bracket("d", 10, 6, 14)
    assert b.judge_side("below", True, False).verdict == "pass"  # breaks below, holds above
    assert b.judge_side("above", True, False).verdict == "fail"  # the control fails as required
    j = b.judge_side("below", True, True)  # breaks above too: the guarantee does not hold there
    assert j.verdict == "fail" and "does not hold at 14" in j.resolution["text"]
    assert b.judge_side("above", True, True).verdict == "pass"  # the control passes: vacuous
    assert "does not break at 6" in b.judge(False, True).resolution["text"]
    with pytest.raises(ValueError, match="side"):
        b.judge_side("middle", True, False)


def test_rules_over_seeds_fail_on_one_missing_seed_and_name_it():
    every = EverySeed("accuracy", 1.0, ">=", "theory")
    ok = every.judge([1.0, 1.0, 1.0], seeds=[3, 4, 5])
    assert ok.verdict == "pass" and ok.resolution["value"] == 0.0 and ok.resolution["missed"] == []
    bad = every.judge([1.0, 0.999, 1.0], seeds=[3, 4, 5])
    assert bad.verdict == "fail" and bad.resolution["missed"] == [4] and bad.resolution["worst_seed"] == 4
    low = EverySeed("error", 1e-9, "<=", "convention").judge([1e-12, 2e-9])
    assert low.verdict == "fail" and low.resolution["missed"] == [1]
    k = KOfN("margin", 0.5, ">=", k=binomial_k(20, 0.01), source="theory")
    assert k.judge([0.6] * 18 + [0.4] * 2).verdict == "pass"
    assert k.judge([0.6] * 17 + [0.4] * 3).verdict == "fail"
    for rule in (every, k):
        with pytest.raises(ValueError, match="NaN"):
            rule.judge([1.0] * 19 + [math.nan])
    with pytest.raises(ValueError, match="seed labels"):
        every.judge([1.0, 1.0], seeds=[0])
    with pytest.raises(ValueError, match="only 2 were measured"):
        KOfN("x", 0.0, k=3).judge([1.0, 1.0])


def test_agreement_is_exact_at_zero_tolerance_and_rejects_nan():
    assert Agreement("count difference", 0.0).judge(0).verdict == "pass"
    assert Agreement("count difference", 0.0).judge(1).verdict == "fail"
    assert Agreement("max error", 1e-9).judge(-5e-10).verdict == "pass"
    with pytest.raises(ValueError, match="NaN"):
        Agreement("max error", 1e-9).judge(math.nan)


def test_strict_sides_fail_on_a_tie_and_units_name_what_was_counted():
    assert Threshold("rho", 0.0, ">=", "theory").judge(0.0).verdict == "pass"
    assert Threshold("rho", 0.0, ">", "theory").judge(0.0).verdict == "fail"
    assert Threshold("rho", 0.0, ">", "theory").judge([0.0, 0.1], seeds=3).verdict == "inconclusive"
    assert Threshold("err", 1e-6, "<", "convention").judge([0.0, 1e-7]).verdict == "pass"
    assert EverySeed("gap", 0.0, ">", unit="draws").judge([0.1, 0.0]).resolution["missed"] == [1]
    assert KOfN("gap", 0.0, "<", k=1, unit="points").judge([0.0, -1.0]).verdict == "pass"
    j = KOfN("exact", 1.0, ">=", k=2, source="convention", unit="draws").judge([1.0, 0.0])
    assert j.verdict == "fail" and "draws" in j.resolution["text"] and "draws" in j.measured
    with pytest.raises(ValueError, match="side"):
        Threshold("x", 0.0, "=>")
    assert Agreement("error", 1e-6, strict=True).judge(1e-6).verdict == "fail"
    with pytest.raises(ValueError, match="tolerance"):
        Agreement("error", 0.0, strict=True)


def test_a_closed_bracket_may_hold_on_its_boundary_and_an_open_one_may_not():
    assert Bracket("H", 16, 15, 16).coarse
    closed = Bracket("H", 16, 15, 16, closed=True)
    assert not closed.coarse and closed.straddles and round(closed.factor, 3) == 1.067
    assert Bracket("H", 16, 16, 17, closed=True).coarse  # the break side may not sit on it


def test_all_of_fail_beats_inconclusive_beats_pass():
    p, i, f = (
        Threshold("x", 1).judge(2.0),
        Threshold("x", 1).judge([0, 2], seeds=3),
        Threshold("x", 1).judge(0.0),
    )
    assert all_of(a=p, b=i).verdict == "inconclusive"
    assert all_of(a=i, b=f).verdict == "fail"
    assert all_of(a=p, b=p).verdict == "pass"


def test_seeds_to_decide_scales_as_the_square_of_the_width_ratio():
    assert seeds_to_decide(0.4, 0.1, 5) == 80
    with pytest.raises(ValueError):
        seeds_to_decide(0.4, 0.0, 5)


def test_growth_law_tells_ln_n_from_its_competitors():
    """ln N data passes and names its nearest rejected competitors; N^(1/5) and (ln N)^2 data
    fail; the same ln N data with large noise over 3 seeds is inconclusive with a seed budget."""
    ln = growth_law_judgement(NS, _seeds(lambda n: 3 + 4 * math.log(n), 8, 0.05))
    assert ln.verdict == "pass", ln.resolution["text"]
    for law in (lambda n: 2 * n**0.2, lambda n: 0.5 * math.log(n) ** 2):
        assert growth_law_judgement(NS, _seeds(law, 8, 0.05)).verdict == "fail"
    # the same law with large noise over 3 seeds: mostly undecided, rarely (about the 5% the
    # interval allows) a false fail; every inconclusive verdict names a seed budget
    noisy = [
        growth_law_judgement(NS, _seeds(lambda n: 3 + 4 * math.log(n), 3, 3.0, seed=s)) for s in range(20)
    ]
    verdicts = [j.verdict for j in noisy]
    assert verdicts.count("inconclusive") >= 12 and verdicts.count("fail") <= 3, verdicts
    assert all("seeds" in j.budget for j in noisy if j.verdict == "inconclusive")


def test_growth_exponent_rejects_bad_shapes_and_nan():
    with pytest.raises(ValueError, match="seeds x"):
        growth_exponent(NS, [[1.0, 2.0]])
    with pytest.raises(ValueError, match="NaN"):
        growth_exponent(NS[:3], [[1.0, float("nan"), 2.0], [1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="2 seeds"):
        growth_exponent(NS[:3], [[1.0, 2.0, 3.0]])


def _claim(check, controls=()):
    return Claim(
        "geometric.test.inconclusive",
        "test",
        "derived",
        "x >= {threshold}",
        {"threshold": 1.0, "width": 0.5},
        {"threshold": 1.0, "width": 0.5},
        check,
        controls=tuple(controls),
        templated=True,
    )


def _check(p, ctx):
    centre = 1.2 if p["width"] < 1 else 0.0
    return Outcome.judged(
        Threshold("x", p["threshold"], ">=", "theory").judge(
            [centre - p["width"], centre + p["width"]], seeds=3
        )
    )


def test_runner_records_inconclusive_apart_and_it_is_not_a_failure():
    rec = run_claim(_claim(_check), Context(), controls=False)
    assert rec["status"] == "inconclusive" and not rec["passed"] and not is_failure(rec)
    assert "would decide" in rec["inconclusive"] and rec["resolution"]["rule"] == "threshold"
    assert rec["statement"] == "x >= 1.0"


def test_a_control_the_measurement_cannot_reject_makes_a_pass_inconclusive():
    def check(p, ctx):
        j = Threshold("x", p["threshold"], ">=", "theory").judge(
            [1.1, 1.3] if p["width"] < 1 else [0.9, 1.3], seeds=3
        )
        return Outcome.judged(j)

    claim = _claim(check, [Control("wide", {"width": 2.0}, "a wider interval straddles the threshold")])
    rec = run_claim(claim, Context())
    assert rec["controls"][0]["status"] == "inconclusive"
    assert rec["status"] == "inconclusive" and "not told apart" in rec["inconclusive"]


def test_an_inconclusive_outcome_cannot_be_passed():
    with pytest.raises(ValueError, match="inconclusive"):
        Outcome(predicted=1, measured=1, passed=True, inconclusive="straddles")


def test_templated_statement_with_an_unknown_field_fails_at_registration():
    with pytest.raises(ValueError, match="statement field"):
        Claim("a.b.c", "s", "derived", "n = {missing}", {"n": 1}, {"n": 1}, _check, templated=True)


def test_falsify_json_gives_every_claim_a_resolution(tmp_path, capsys, monkeypatch):
    """From the stored record when it has one; otherwise "not computed" and coarse."""
    import json

    from verify.cli import main
    from verify.results import ResultStore

    monkeypatch.setenv("RECALL_RESULTS", str(tmp_path))
    claim = "hopfield.capacity.constants"
    assert main(["falsify", claim, "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["claims"][0]
    assert row["resolution"]["rule"] == "not computed" and row["resolution"]["coarse"]
    stored = {"rule": "threshold", "value": 0.2, "coarse": False, "text": "x >= 1: measured 1.2"}
    ResultStore(tmp_path).append({"id": claim, "scale": "quick", "status": "pass", "resolution": stored})
    assert main(["falsify", claim, "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["claims"][0]
    assert row["resolution"]["rule"] == "threshold" and row["resolution"]["from"] == "stored record"


def test_every_criterion_resolution_says_what_its_value_is():
    judged = [
        Threshold("accuracy", 0.9).judge([0.92, 0.95]),
        IntervalTest("exponent", 1.0, {"0.8": 0.8}, unit="dimensionless").judge([0.9, 1.1]),
        Bracket("d0", boundary=6.0, below=4, above=9).judge(True, True),
        EverySeed("gap", 0.0, ">").judge([0.1, 0.2]),
        KOfN("gap", 0.0, ">", k=1).judge([0.1, -0.2]),
        Agreement("difference", 1e-9).judge(1e-12),
    ]
    kinds = [j.resolution["kind"] for j in judged]
    assert kinds == [
        "distance_to_threshold",
        "distance_to_nearest_rejected",
        "bracket_factor",
        "worst_clearance",
        "seeds_to_spare",
        "absolute_difference",
    ]
    assert (
        judged[1].resolution["unit"] == "dimensionless" and judged[0].resolution["unit"] == "unit of accuracy"
    )
    whole = all_of(a=judged[0], b=judged[1]).resolution
    assert (whole["kind"], whole["unit"]) == ("parts", "none")


def test_interval_test_holds_exact_data_within_its_tolerance():
    law = IntervalTest("exponent", 1.0, {"bound^0.8": 0.8, "bound^1.2": 1.2})
    assert law.judge([1.0000000000000002, 1.0000000000000002]).verdict == "pass"
    assert law.judge([1.001, 1.002]).verdict == "fail"
    with pytest.raises(ValueError, match="tolerance"):
        IntervalTest("exponent", 1.0, {}, tol=-1.0)


def test_growth_law_rejects_a_falling_threshold():
    rising = _seeds(lambda n: 3 * math.log(n), 4, 0.05)
    falling = [[60 - v for v in y] for y in rising]
    assert growth_law_judgement(NS, rising).verdict == "pass"
    judged = growth_law_judgement(NS, falling)
    assert judged.verdict == "fail" and judged.resolution["parts"]["slope"]["value"] == 0.0


LOG_NS = [100.0, 316.0, 1000.0, 3162.0, 10000.0]


def test_a_growth_fit_at_its_grid_edge_is_inconclusive_never_a_zero_width_verdict():
    """Thresholds flat then jumping put every seed's exponent on the top of both grids (p = 1,
    q = 4), and saturating ones put q on the bottom (1/60): the intervals [1, 1] and [4, 4] (or
    [1/60, 1/60]) have zero width and exclude ln N, so the parts say "widen the grid" instead."""
    jump = growth_law_judgement([64, 128, 256, 512], [[4, 4, 4, 6], [4, 4, 4, 5]])
    assert jump.verdict == "inconclusive"
    for family, edge in (("boxcox", 1.0), ("log_power", 4.0)):
        part = jump.resolution["parts"][family]
        assert part["degenerate"] == "at the grid edge; widen the grid" and part["rejected"] == []
        assert part["coarse"] and "widen the grid" in part["text"]
        assert (
            growth_exponent([64, 128, 256, 512], [[4, 4, 4, 6], [4, 4, 4, 5]], family)["per_seed"]
            == [edge] * 2
        )
    assert "widen the grid" in jump.inconclusive and "exponent grid reaching beyond" in jump.budget
    # saturating thresholds: q sits on the grid's lower end on every seed; the part is undecided
    # and the claim's verdict comes from the other, non-degenerate parts (here the Box-Cox
    # interval, which excludes ln N), with the undecided part named in the text
    saturating = [[16, 24, 29, 35, 38], [18, 24, 31, 35, 38], [14, 21, 27, 39, 37]]
    assert growth_exponent(LOG_NS, saturating, "log_power")["per_seed"] == [1 / 60] * 3
    judged = growth_law_judgement(LOG_NS, saturating)
    log_power = judged.resolution["parts"]["log_power"]
    assert log_power["degenerate"] == "at the grid edge; widen the grid"
    assert judged.resolution["parts"]["boxcox"].get("degenerate") is None
    assert judged.verdict == "fail" and "not read (degenerate): log_power" in judged.resolution["text"]
    # one seed on the edge is enough: that seed's best law may lie beyond the grid
    one = growth_law_judgement([64, 128, 256, 512], [[4, 4, 4, 6], [3, 4, 5, 6], [3, 4, 4, 5]])
    assert one.resolution["parts"]["log_power"]["degenerate"] == "at the grid edge; widen the grid"


def test_growth_replicates_all_equal_are_inconclusive():
    """Seeds whose curves differ by a constant fit the same grid exponents: a zero-width interval,
    which used to pass; now each exponent part says there is no spread to decide. The slope is a
    continuous estimate: equal at every seed, it is an exact measurement and is judged."""
    same = [[3 * math.log(n) + shift for n in NS] for shift in (0.0, 0.5, 1.0)]
    judged = growth_law_judgement(NS, same)
    assert judged.verdict == "inconclusive"
    for name in ("boxcox", "log_power"):
        part = judged.resolution["parts"][name]
        assert part["degenerate"] == "replicates all equal: no spread to decide", name
        assert "no spread to decide" in part["text"]
    assert "degenerate" not in judged.resolution["parts"]["slope"]
    assert "more seeds" in judged.budget
    # a constant law: slopes of exactly 0 at every seed decide "no growth" (a control must fail)
    flat = growth_law_judgement(NS, [[5.0 for _ in NS] for _ in range(3)])
    assert flat.verdict == "fail"
    # the same law with seed-to-seed noise is decided as before
    assert growth_law_judgement(NS, _seeds(lambda n: 3 * math.log(n), 4, 0.05)).verdict == "pass"
