"""Ledger of the hopfield claims whose verdict flips with the base seed (criterion kept, numbers
here: verify/ledger.py). Quick scale; "base seed S" is ``verify run --seed S``. Registers no claim.
"""

from __future__ import annotations

from verify.ledger import LedgerEntry, record

record(
    LedgerEntry(
        claim_id="hopfield.wrong_context.fails",
        measured="quick scale: with the wrong context capacity.gain's criterion fails at every base seed "
        "(0, 1, 2, 3, 4, 11, 13; no seed has both capacities on the grid); its control correct_context "
        "(capacity.gain itself) fails as required at 0-4, is inconclusive at 11 (gain exponent [0.740, "
        "1.065]: cannot tell D3 0.924 from 0.75) and passes the wrong-context criterion at 13 ([0.824, "
        "0.934]), so the bracket is inconclusive at 11 and vacuous at 13",
        tried="nothing: the bracket's passing side is the capacity.gain claim, whose criterion is being "
        "decided from its operating characteristic; this entry records the seeds as measured",
        reason="the bracket's other side, capacity.gain, is itself undecided at this budget (its interval "
        "over 3 seeds is about 0.3 wide around D3's 0.924 and the 0.75 alternative), so at some base seeds "
        "the correct context cannot be told from the wrong one by the same criterion",
        flips_with_seed=True,
        scales=("quick",),
        known_vacuous=("correct_context",),
        seed_verdicts={0: "pass", 1: "pass", 2: "pass", 3: "pass", 4: "pass", 11: "inconclusive", 13: "pass"},
    )
)
