"""Hopfield claims whose verdict must not move with the base seed: a deterministic toy with random
starts (no spread for verify oc to simulate); first_order.top1, judged per seed on its margin at
the agreement's rank; and the two gate claims whose theorem parts are counted (the draws with
Delta_i^g < Delta_i, the trials with eps_g > eps: 0 on every seed by D2's algebra once g_i = max
g, so verify oc holds them fixed and this test shows them at several base seeds). Each runs here
at quick scale, with its controls, at base seeds 0, 1 and 2."""

import pytest

from verify.claims import CLAIMS, Context, load_all
from verify.runner import run_claim

#: a pass and every control failing as required at each base seed
SEED_FREE = (
    "hopfield.multistability.above",
    "hopfield.first_order.top1",
    "hopfield.gated.separation",
    "hopfield.gated.error_bound",
)


@pytest.mark.parametrize("claim_id", SEED_FREE)
def test_the_verdict_is_the_same_at_three_base_seeds(claim_id):
    load_all()
    claim = CLAIMS[claim_id]
    for seed in (0, 1, 2):
        record = run_claim(claim, Context(seed=seed))
        assert record["status"] == "pass", (claim_id, seed, record.get("resolution"))
        assert all(c["status"] == "fails as required" for c in record["controls"]), (claim_id, seed)
