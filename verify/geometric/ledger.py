"""Ledger of the geometric claims whose verdict flips with the base seed (criterion kept, numbers
here: verify/ledger.py). Quick scale; "base seed S" is ``verify run --seed S``. Registers no claim.
"""

from __future__ import annotations

from verify.ledger import LedgerEntry, record

record(
    LedgerEntry(
        claim_id="geometric.gd.intervention",
        measured="quick scale, 95% interval over 5 training seeds of the mean hit rate against >= 0.1, and "
        "of the 'others unchanged' gap against >= 0.03: base seed 0 [0.105, 0.177] / [0.034, 0.066] (pass), "
        "1 [0.099, 0.177] / [0.028, 0.077] (inconclusive), 2 [0.099, 0.177] / [0.036, 0.088] "
        "(inconclusive), 3 [0.091, 0.176] / [0.041, 0.092] (inconclusive), 4 [0.103, 0.145] / [0.029, "
        "0.096] (inconclusive), 11 [0.120, 0.154] / [0.026, 0.059] (inconclusive), 13 [0.109, 0.159] / "
        "[0.033, 0.060] (pass); the random change's hit rate 0.005 at every seed. The intervals move by up "
        "to 0.005 between runs of one revision (seed 1: [0.099, 0.177] and [0.101, 0.177]; seed 2: [0.099, "
        "0.177] and [0.096, 0.178]) and at revision 819e643 seeds 2 and 11 passed ([0.101, 0.177], [0.122, "
        "0.150] / [0.031, 0.059]): as much as their distance to the thresholds"
        ". quick scale, base seeds 0-4 at revision 5bcbefa (verify stability): 0 inconclusive "
        "{hit: {mean hit rate: [0.10744415410601241, 0.17855584589398757]}, random_hit: {random "
        "changes largest hit ...; 1 inconclusive {hit: {mean hit rate: [0.10262876523180721, "
        "0.17937123476819278]}, random_hit: {random changes largest hit ...; 2 inconclusive {hit:"
        " {mean hit rate: [0.09819475716050464, 0.17980524283949534]}, random_hit: {random "
        "changes largest hit ...; 3 inconclusive {hit: {mean hit rate: [0.08863054103391263, "
        "0.17536945896608738]}, random_hit: {random changes largest hit ...; 4 inconclusive {hit:"
        " {mean hit rate: [0.10078843915841765, 0.14521156084158235]}, random_hit: {random "
        "changes largest hit .... The runs that moved used different thread counts: at two intra-op "
        "threads (revision 80dd953) base seeds 0 and 1 passed and 2-4 were inconclusive, because the "
        "float32 training's reductions depended on the thread count. The training runs on one thread "
        "since, so any thread count reproduces the one-thread intervals above (seed 1: [0.1026, 0.1794] "
        "at one and at two threads)",
        tried="nothing after the judged seeds (``verify stability``); the thresholds are kept",
        reason="the intervals' lower ends sit within 0.01 of the 0.1 and 0.03 conventions at every base "
        "seed, so whether they clear them depends on the draw: pass at two base seeds, inconclusive at "
        "five (never fail). The hit rate is 15-30x chance, well above the random change; the 0.1 level is what the "
        "budget cannot decide",
        flips_with_seed=True,
        scales=("quick",),
        seed_verdicts={
            0: "inconclusive",
            1: "inconclusive",
            2: "inconclusive",
            3: "inconclusive",
            4: "inconclusive",
            11: "inconclusive",
            13: "pass",
        },
    )
)
