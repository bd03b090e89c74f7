"""The geometric claims declared deterministic (exact constructions judged on one run): their
verdict and their controls' are the same at several base seeds (docs/contributing.md, section 6)."""

from __future__ import annotations

import pytest

from verify.claims import Context, load_all
from verify.runner import run_claim

EXACT = (
    "geometric.single_hop.selector_exact",
    "geometric.single_hop.construct_transfer",
    "geometric.multihop.cot_khop",
    "geometric.multihop.nocot_blocks",
)


@pytest.mark.parametrize("claim_id", EXACT)
def test_an_exact_construction_passes_at_every_base_seed(claim_id):
    claim = load_all()[claim_id]
    assert not claim.seed_rule and "one deterministic run" in claim.statement
    for seed in (0, 1, 2):
        record = run_claim(claim, Context(seed=seed, scale="quick"))
        assert record["status"] == "pass", (seed, record.get("error") or record["measured"])
        assert {c["status"] for c in record["controls"]} <= {"fails as required"}, seed
