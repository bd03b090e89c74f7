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
