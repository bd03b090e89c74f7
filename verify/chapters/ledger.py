"""Ledger of the chapters claims whose verdict flips with the base seed (criterion kept, numbers
here: verify/ledger.py). Quick scale; "base seed S" is ``verify run --seed S`` (the claim trains
seeds S and S + 1). Registers no claim.
"""

from __future__ import annotations

from verify.ledger import LedgerEntry, record

record(
    LedgerEntry(
        claim_id="chapters.toy.fact_storage_vs_isoflop",
        measured="quick scale, base seeds 0-4 at revision 5bcbefa (verify stability): 0 pass {MoC - iso-"
        "FLOP dense value accuracy (95% t interval over seeds): [0.4423774604345998, "
        "0.8642631645654002]}; 1 pass {MoC - iso-FLOP dense value accuracy (95% t interval over "
        "seeds): [0.6163820127493176, 0.7156492372506824]}; 2 inconclusive {MoC - iso-FLOP dense "
        "value accuracy (95% t interval over seeds): [0.07317089024249368, 1.1651103597575063]}; "
        "3 pass {MoC - iso-FLOP dense value accuracy (95% t interval over seeds): "
        "[0.4289372538106234, 0.7019221211893766]}; 4 inconclusive {MoC - iso-FLOP dense value "
        "accuracy (95% t interval over seeds): [0.14314123974385845, 1.0365462602561415]}",
        tried="nothing after the judged seeds: the criterion is kept (verify stability over the "
        "whole registry)",
        reason="at base seeds 2 and 4 the interval over the two training seeds is over 0.9 wide and "
        "the run is inconclusive (its record says why); at 0, 1 and 3 it passes, and it never fails: "
        "more training seeds would decide; not investigated further",
        flips_with_seed=True,
        scales=("quick",),
        seed_verdicts={0: "pass", 1: "pass", 2: "inconclusive", 3: "pass", 4: "inconclusive"},
    )
)


record(
    LedgerEntry(
        claim_id="chapters.toy.fact_storage_tuned",
        measured="quick scale, base seeds 0-4 at revision 5bcbefa (verify stability): 0 pass {MoC - iso-"
        "FLOP dense value accuracy (95% t interval over seeds): [0.4722481543092586, "
        "0.9437674706907414]}; 1 pass {MoC - iso-FLOP dense value accuracy (95% t interval over "
        "seeds): [0.6328677410613058, 0.8065853839386942]}; 2 inconclusive {MoC - iso-FLOP dense "
        "value accuracy (95% t interval over seeds): [0.25780179586919966, 1.1015732041308004]}; "
        "3 pass {MoC - iso-FLOP dense value accuracy (95% t interval over seeds): "
        "[0.4858647882479528, 0.7836664617520472]}; 4 inconclusive {MoC - iso-FLOP dense value "
        "accuracy (95% t interval over seeds): [0.21150061474385845, 1.1049056352561415]}",
        tried="nothing after the judged seeds: the criterion is kept (verify stability over the "
        "whole registry)",
        reason="at base seeds 2 and 4 the interval over the two training seeds is over 0.9 wide and "
        "the run is inconclusive (its record says why); at 0, 1 and 3 it passes, and it never fails: "
        "more training seeds would decide; not investigated further",
        flips_with_seed=True,
        scales=("quick",),
        seed_verdicts={0: "pass", 1: "pass", 2: "inconclusive", 3: "pass", 4: "inconclusive"},
    )
)
