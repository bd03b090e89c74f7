"""Hopfield claims whose verdict must not move with the base seed: a deterministic toy with random
starts (no spread for verify oc to simulate), and two claims judged per seed on a margin that sits
near its bound (first_order.top1's margin at the agreement's rank, gated.separation's smallest
gain), whose simulated power is below 1. Each runs here at quick scale, with its controls, at base
seeds 0, 1 and 2."""

import pytest

from verify.claims import CLAIMS, Context, load_all
from verify.runner import run_claim

#: a pass and every control failing as required at each base seed
SEED_FREE = (
    "hopfield.multistability.above",
    "hopfield.first_order.top1",
    "hopfield.gated.separation",
)


@pytest.mark.parametrize("claim_id", SEED_FREE)
def test_the_verdict_is_the_same_at_three_base_seeds(claim_id):
    load_all()
    claim = CLAIMS[claim_id]
    for seed in (0, 1, 2):
        record = run_claim(claim, Context(seed=seed))
        assert record["status"] == "pass", (claim_id, seed, record.get("resolution"))
        assert all(c["status"] == "fails as required" for c in record["controls"]), (claim_id, seed)
