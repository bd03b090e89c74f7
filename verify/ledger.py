"""The ledger of claims that did not reproduce after an honest investigation (DESIGN.md).

A ledger entry keeps the claim's criterion unchanged. The runner reports such a claim as
"not reproduced" (``passed`` false, field ``ledger`` with the reason); it does not make the
exit status non-zero while it keeps failing, but a ledgered claim that starts passing does
(someone must update this file). Each entry's test asserts the claim still fails as recorded.

An entry with ``flips_with_seed=True`` records a claim whose verdict depends on the base seed (it
passes at some ``--seed`` values and fails at others). A verdict that flips with the seed is not a
pass, so such a claim is reported "not reproduced" at every seed; the seed's own verdict is kept in
the record (field ``seed_verdict``).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LedgerEntry:
    claim_id: str
    measured: str   # the numbers measured when it was recorded
    tried: str      # what was tried
    reason: str     # the suspected reason
    flips_with_seed: bool = False  # passes at some base seeds, fails at others (numbers in `measured`)


LEDGER: dict[str, LedgerEntry] = {}


def record(entry: LedgerEntry) -> LedgerEntry:
    if entry.claim_id in LEDGER:
        raise ValueError(f"ledger entry for {entry.claim_id} recorded twice")
    LEDGER[entry.claim_id] = entry
    return entry
