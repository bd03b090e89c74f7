"""The fact_mlp claims judged over replicates (seeds, draws or Monte Carlo batches) so that
verify oc can simulate them: their per-replicate helpers and the stored measurement's form."""

from __future__ import annotations

import math

import pytest


def test_signed_log_ratio_keeps_the_sign_and_refuses_nan():
    from verify.fact_mlp.usability import signed_log_ratio

    assert signed_log_ratio(1.0) == pytest.approx(math.log10(2.0))
    assert signed_log_ratio(-99.0) == pytest.approx(-2.0)
    # a stored fact is a ratio above 1: above log10 2 on the scale, never at it
    assert signed_log_ratio(1.0 + 1e-9) > math.log10(2.0)
    with pytest.raises(ValueError, match="NaN"):
        signed_log_ratio(float("nan"))


def test_b2_pair_tail_stores_one_value_per_batch():
    from verify.claims import Context, load_all

    claim = load_all()["fact_mlp.decoder.b2_pair_tail"]
    p = {**claim.params("quick"), "draws": 2000, "batches": 3}
    out = claim.check(p, Context())
    values = out.measured["largest rate / bound over the points"]
    assert len(values) == 3 and len(set(values)) == 3
    assert len(out.details["rows"]) == 3 * len(p["cosines"]) * len(p["code_dims"])
    assert out.passed
    assert not claim.check({**p, "exponent": 1.0}, Context()).passed


def test_lipschitz_tradeoff_judges_every_seed_and_its_control_fails():
    from verify.claims import Context, load_all

    claim = load_all()["fact_mlp.usability.lipschitz_tradeoff"]
    p = {**claim.params("quick"), "n_facts": [64, 128], "seeds": 2}
    out = claim.check(p, Context(seed=100))
    assert [r["seed"] for r in out.details["per_seed"]] == [100, 101]
    assert out.passed
    assert not claim.check({**p, "second": "hebbian"}, Context(seed=100)).passed


def test_lipschitz_tradeoff_stores_the_capacity_comparison_as_0_or_1():
    """The capacity part is the per-seed comparison itself (0/1, drawn as a Bernoulli by verify oc),
    not the grid difference, which stays in the details."""
    from verify.claims import Context, load_all

    claim = load_all()["fact_mlp.usability.lipschitz_tradeoff"]
    p = {**claim.params("quick"), "n_facts": [64, 128], "seeds": 2}
    out = claim.check(p, Context(seed=100))
    (values,) = [v for k, v in out.measured["capacity"].items() if k != "seeds"]
    assert values == [1.0, 1.0]
    caps = [r["capacity"] for r in out.details["per_seed"]]
    assert all(c["hebbian_whitened"] - c["hebbian"] >= 64 for c in caps)


def _grid(ratios):
    return [{"ratio_hebbian_whitened": x} for x in ratios]


def test_whitened_ties_measures_the_second_look_only_when_the_first_does_not_decide(monkeypatch):
    """Five seeds whose worst ratios sit well below 2 pass at the first look (no sixth grid); five
    with a mean near 2 draw five more; a point where the readout stores at no size fails at once."""
    import verify.fact_mlp.compare as compare
    from verify.claims import Context, load_all

    claim = load_all()["fact_mlp.capacity.whitened_ties"]
    p = claim.params("quick")

    def run(worst, none_at=None):
        drawn = []

        def rows(ctx, params, name):
            drawn.append(ctx.seed)
            return _grid([1.0, None if ctx.seed == none_at else worst(ctx.seed)]), True

        monkeypatch.setattr(compare, "grid_rows", rows)
        return claim.check(p, Context(seed=100)), drawn

    out, drawn = run(lambda s: [1.6, 1.33, 1.6, 1.5, 1.6][s - 100])
    assert out.passed and drawn == list(range(100, 105))
    out, drawn = run(lambda s: [2.0, 1.6, 2.4, 1.6, 2.0, 2.4, 2.0, 1.6, 2.4, 2.0][s - 100])
    assert drawn == list(range(100, 110)) and out.inconclusive
    out, drawn = run(lambda s: 2.67)
    assert not out.passed and not out.inconclusive and drawn == list(range(100, 105))
    out, drawn = run(lambda s: 1.33, none_at=101)
    assert not out.passed and not out.inconclusive and drawn == list(range(100, 105))


def test_beats_baseline_judges_the_log2_of_the_ratio_at_the_same_threshold(monkeypatch):
    """log2 of the ratio's lower end >= 1 is the former rule (the lower end >= 2): a draw at 2.0
    passes, one just below fails."""
    import verify.fact_mlp.compare as compare
    from verify.claims import Context, load_all

    claim = load_all()["fact_mlp.capacity.beats_baseline"]
    p = claim.params("quick")
    monkeypatch.setattr(compare, "beats_facts", lambda ctx, *a: (None, type("R", (), {"rho": 0.5})()))

    def run(lows):
        def draw(facts, res, seed, k, baseline):
            return {"draw": k, "status": "both store", "ratio": lows[k] * 1.2, "ratio_low": lows[k]}

        monkeypatch.setattr(compare, "ratio_draw", draw)
        return claim.check(p, Context())

    out = run([2.0, 4.0, 8.0, 4.0, 4.0])
    assert out.passed
    (values,) = [v for k, v in out.measured["ratio"].items() if k != "draws"]
    assert values == pytest.approx([1.0, 2.0, 3.0, 2.0, 2.0])
    assert not run([1.99, 4.0, 8.0, 4.0, 4.0]).passed
