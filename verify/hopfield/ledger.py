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
        "(capacity.gain's criterion with the correct context), gain exponent interval against D3's 0.924: "
        "base seed 0 [0.823, 0.933] fails as required, 1 [0.835, 1.026] inconclusive, 2 [0.837, 0.954] "
        "fails as required, 3 [0.819, 1.040] inconclusive, 4 [0.843, 1.005] inconclusive, 11 [0.740, "
        "1.065] inconclusive, 13 [0.824, 0.934] passes the wrong-context criterion (capacity.gain's "
        "verdict fail there): the bracket passes at 0, 2, is inconclusive at 1, 3, 4, 11 and vacuous at "
        "13. At revision 819e643 (capacity.gain's criterion before its operating characteristic was "
        "measured) it passed at 0-4",
        tried="nothing: the bracket's passing side is the capacity.gain claim, whose criterion is being "
        "decided from its operating characteristic; this entry records the seeds as measured",
        reason="the bracket's other side, capacity.gain, is itself undecided at this budget (its interval "
        "over 3 seeds is about 0.3 wide around D3's 0.924 and the 0.75 alternative), so at some base seeds "
        "the correct context cannot be told from the wrong one by the same criterion",
        flips_with_seed=True,
        scales=("quick",),
        known_vacuous=("correct_context",),
        seed_verdicts={
            0: "pass",
            1: "inconclusive",
            2: "pass",
            3: "inconclusive",
            4: "inconclusive",
            11: "inconclusive",
            13: "pass",
        },
    )
)
