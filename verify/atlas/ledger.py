"""Ledger of the capacity atlas claims that did not reproduce (criterion kept, numbers here; see
verify/ledger.py and README.md#kinds-of-claim-controls-and-verdicts-over-seeds).

Quick scale; "seed S" is the base seed of ``verify run --seed S``. The setting (sizes, grid, 300
steps, lr 0.02) was fixed on pilot seeds 100 and 101, never on a judged seed.
"""

from __future__ import annotations

from verify.ledger import LedgerEntry, record

record(
    LedgerEntry(
        claim_id="atlas.chapters_bank.smallest_bank",
        measured="C* (chapters of 4 slots, first storing grid size of {1/16, 1/8, 1/4} x F, 3 draws) "
        "at F = 32 / 64 / 128: seed 0 [2, 2, 2] / [16, 8, 4] / [32, 16, 16] (pass; [8, 8, 4] / [32, 8, 16] "
        "before the search was pinned to one thread, the same verdict); seed 1 [2, 2, 4] / "
        "[4, 4, 16] / [32, 8, 16] (pass); seed 2 [2, 2, 2] / [8, 4, 8] / [32, None, 16] (fail: F = 128 "
        "draw 1 reaches accuracy 0.984, 0.992, 0.992 at C = 8, 16, 32, one or two of 128 facts "
        "wrong after 300 steps). Pilot seeds 100, 101 stored everywhere (F = 128: [16, 16, 16], "
        "[32, 8, 32]). Control untrained (0 steps): no draw stores at any F (fails as required)",
        tried="only the pilot setting; the criterion (every draw stores within F slots) is kept",
        reason="at F = 128 the first storing grid size is often the last one (C = 32 = F/4, at seeds 0, "
        "1, 2 and pilot 101), and exact accuracy 1.0 after 300 full-batch Adam steps misses one or "
        "two facts in some draws at every grid size: the budget of steps, not the bank, is at its "
        "edge; a decision needs a longer schedule (cost) or a grid beyond F slots",
        flips_with_seed=True,
    )
)

record(
    LedgerEntry(
        claim_id="atlas.chapters_bank.within_constant",
        measured="median P / (I/32), I = F log2 16, at F = 32 / 64 / 128: seed 0 300.5 / 211.0 / 146.0 "
        "(spread 2.058 > 2, exponent 0.59, interval [0.31, 0.86]; 0.51 [0.20, 0.81] before the "
        "search was pinned to one thread); seed 1 300.5 / 170.5 / 146.0 "
        "(spread 2.058, exponent 0.48, [0.10, 0.85]); seed 2: F = 128 draw 1 does not store (see "
        "atlas.chapters_bank.smallest_bank), so the criterion fails. Pilot seeds: 100 spread 2.06, "
        "101 spread 1.42. Control faster_than_bound: exponent 1.5, fails as required. Full scale (F = 32 "
        "/ 64 / 128 / 256, 5 draws), seed 0: draws 1 and 3 at F = 256 store at no size of the grid "
        "(atlas.chapters_bank.smallest_bank's C* at F = 256: 32, none, 32, none, 64), so the criterion "
        "fails before its spread and exponent are computed",
        tried="nothing after the judged seeds: the shared criterion of the atlas claims is kept",
        reason="P grows more slowly than the bound, not faster: the fixed memory attention "
        "(4 d^2 + d = 1040 of the 1202 parameters at C = 2) dominates at F = 32, so P/I falls by "
        "about 2x from F = 32 to 128 and the two-sided factor-2 spread is crossed from below; the "
        "exponent part (<= 1.25) holds at every judged seed that stores",
    )
)

record(
    LedgerEntry(
        claim_id="atlas.chapters_toy.within_constant",
        measured="quick scale, seeds 0, 1, 2 (identical): C* = 5 chapters (the router's floor, 20 slots) for "
        "every draw at F = 16 / 32 / 64 (stored at steps 15-25 / 20-40 / 30-40), so P = 118,981 / "
        "120,005 / 122,053 (backbone 98,624 + memory attention 16,448 + embedding (4 + F + 16) 64 + "
        "bank and router 1,605) and median P / (I/32), I = F log2 16, = 59,490 / 30,001 / 15,257: "
        "spread 3.90 > 2, exponent 0.018 [0.015, 0.021] (<= 1.25 holds). Pilot seeds 100, 101: the "
        "same C* and P, spread 3.90. Full scale (F = 128 / 256 / 512 / 1024 / 2048, 5 draws, 1000 "
        "steps), seed 0: C* = 5 for all 25 draws (stored at steps 40-60 / 60-70 / 90-150 / 210-430 / "
        "530-760; the backbone with no memory layer at 40-60 / 60-80 / 100-130 / 230-440 / 540-630), "
        "P = 126,149 / 134,341 / 150,725 / 183,493 / 249,029, median P / (I/32) = 7,884 / 4,198 / 2,355 "
        "/ 1,434 / 973: spread 8.11 > 2, exponent 0.241 [0.211, 0.271]; the full pilot (seed 100, 2 "
        "draws) gave the same C* and P, spread 8.11. Control faster_than_bound: exponent 1.5, fails "
        "as required",
        tried="nothing after the judged seeds: the shared criterion of the atlas claims is kept",
        reason="P grows far more slowly than the bound, not faster: at every F the toy stores with the "
        "smallest bank the router allows, and the backbone with no memory layer stores at about the "
        "same step (pilots and the full run), so the facts sit in the backbone and the per-key embedding rows; P is the fixed "
        "backbone plus 64 embedding parameters per key, nearly constant at these F, and P/I falls 1.4-2x "
        "per doubling of F (the 64 F embedding parameters outweigh the fixed part only beyond F of "
        "about 1,800): "
        "the two-sided factor-2 spread is crossed from below",
    )
)

record(
    LedgerEntry(
        claim_id="atlas.icrecall_linear_memory.within_constant",
        measured="full scale, seed 0 (records of icrecall.linear_memory.capacity at d = 32 / 64 / 128 / "
        "256 / 512, 3 draws): N99 = [34, 27, 35] / [92, 86, 63] / [436, 412, 412] / [1728, 1664, 1680] "
        "/ [6336, 6272, 6464], P = d^2, median P / (I/32) with I = N99 log2 N99 = 189.4 / 237.2 / 146.5 "
        "/ 116.5 / 104.8: spread 2.26 > 2, exponent 0.857 [0.813, 0.902] (<= 1.25 holds). Quick scale "
        "(d = 32, 64, 128) passes",
        tried="nothing after the result: the shared criterion of the atlas claims is kept",
        reason="not a faster-than-bound growth: P grows more slowly than I. With V = N99 values the "
        "information per fact, log2 N99, itself grows with d (5.1 -> 12.6 bits from d = 32 to 512) while "
        "N99 / d^2 stays about 0.02-0.03, so I ~ d^2 log d against P = d^2 and the ratio drifts down by "
        "that log factor; over the five doublings of the full grid it exceeds the two-sided factor 2 "
        "(suspected; the small-d points, N99 = 27-35, also scatter)",
        scales=("full",),
    )
)

# Failures of the two-sided exponent rule (the criterion object of verify.atlas.verdict: the 95%
# interval of the log-log exponent must contain 1 and exclude 0.8 and 1.2). Measured at base seeds
# 0, 1, 2 when the rule replaced the one-sided one (spread <= 2, exponent <= 1.25), which every one
# of these passed; its verdict stays in each record's details["previous_criterion"].

record(
    LedgerEntry(
        claim_id="atlas.hopfield.within_constant",
        measured="quick scale (N = 16, 64, 256, 1024, 3 draws): exponent of P against I/32 (I = N log2 N) "
        "0.9998 [0.983, 1.017] at seed 0 (pass), [0.938, 0.979] at seed 1 (fail), [0.953, 1.015] at seed 2 "
        "(pass); spreads 1.0, 1.25, 1.22. Controls bound^1.5 and bound^0.5 fail at every seed",
        tried="the rule as fixed before the run; no parameter was changed",
        reason="the smallest storing dimension moves in integer steps at N = 16..1024, so P / (N log2 N) "
        "drifts by up to 25% between draws and the exponent's interval (narrow: the draws nearly agree) "
        "sits on either side of 1 depending on the draw; the band itself (spread <= 2) holds everywhere",
        flips_with_seed=True,
        scales=("quick",),
    )
)

record(
    LedgerEntry(
        claim_id="atlas.hopfield_gated.within_constant",
        measured="quick scale (N = 16, 64, 256, 1024, 3 draws): exponent of P against I/32 (I = N log2 N) "
        "[0.948, 0.979] at seed 0, [0.908, 0.980] at seed 1, [0.929, 0.986] at seed 2; spreads 1.2, 1.35, "
        "1.25 (ratios 48, 42.7, 40, 41.6 at seed 0). Controls bound^1.5 and bound^0.5 fail",
        tried="the rule as fixed before the run; no parameter was changed",
        reason="suspected: the gated construction's d* grows a little more slowly than log2 N over this "
        "range (a fixed overhead at N = 16: the ratio falls from 48 to 40 and then levels off), so a "
        "straight log-log fit gives an exponent just below 1 with a narrow interval; the factor-2 band "
        "holds; whether the exponent tends to 1 at larger N was not tried",
        scales=("quick",),
    )
)

record(
    LedgerEntry(
        claim_id="atlas.hopfield_trained.within_constant",
        measured="quick scale (N = 16, 64, 256, 3 draws, trained): exponent of P against I/32 "
        "[0.854, 0.960] at seed 0 (fail), [0.816, 1.021] at seed 1 (inconclusive), [0.813, 0.935] at "
        "seed 2 (fail); spread 1.19 at every seed (ratios 57.9, 52.2, 48.4 at seed 0)"
        ". quick scale, base seeds 0-4 at revision 5bcbefa (verify stability): 0 fail {spread: "
        "{size/bound spread: 1.194488314446237}, exponent: {log-log exponent of size against "
        "bound: [0.8538...; 1 inconclusive {spread: {size/bound spread: 1.194488314446237}, "
        "exponent: {log-log exponent of size against bound: [0.8159...; 2 fail {spread: "
        "{size/bound spread: 1.194488314446237}, exponent: {log-log exponent of size against "
        "bound: [0.8128...; 3 fail {spread: {size/bound spread: 1.194488314446237}, exponent: "
        "{log-log exponent of size against bound: [0.9003...; 4 fail {spread: {size/bound spread:"
        " 1.194488314446237}, exponent: {log-log exponent of size against bound: [0.8538...",
        tried="the rule as fixed before the run; no parameter was changed",
        reason="suspected: as for the gated construction, the ratio P / (I/32) falls with N (57.9 -> 48.4) "
        "over only three sizes, so the fitted exponent sits below 1; the factor-2 band holds",
        scales=("quick",),
        flips_with_seed=True,
        seed_verdicts={0: "fail", 1: "inconclusive", 2: "fail", 3: "fail", 4: "fail"},
    )
)

record(
    LedgerEntry(
        claim_id="atlas.geometric_multihop_gd.within_constant",
        measured="quick scale, from the stored record of geometric.multihop.gd (every base seed reads the "
        "same record): trained one-pass dimensions 3, 4, 6 at the three (N, k) points against bounds with "
        "ratios 9.6, 6.5, 5.1: exponent 0.52 [0.47, 0.57], spread 1.88",
        tried="the rule as fixed before the run; no parameter was changed",
        reason="the trained model's smallest dimension grows about as the square root of the information "
        "bound at these sizes: far above the bound (5-10x) and closing in on it, as the trained single-hop "
        "threshold barely moves with N (argmax accuracy with a trainable unembedding needs no margin); "
        "'proportional to the bound' does not describe it",
        scales=("quick",),
    )
)

record(
    LedgerEntry(
        claim_id="atlas.icrecall_linear_memory.within_constant",
        measured="quick scale, from the stored record of icrecall.linear_memory.capacity: P = d^2 = 1024, "
        "4096, 16384, ratios P / (I/32) = 189, 237, 146: exponent 0.85 [0.71, 0.998], spread 1.62",
        tried="the rule as fixed before the run; no parameter was changed",
        reason="as at full scale: with V = N99 values the information per fact, log2 N99, grows with d, "
        "so I ~ d^2 log d against P = d^2 and the exponent sits below 1 by that log factor",
        scales=("quick",),
    )
)

record(
    LedgerEntry(
        claim_id="atlas.hopfield_gated.within_constant",
        measured="full scale (N = 16, 64, 256, 1024, 4096, 5 draws), seed 0: d* = 6 / 8-9 / 10 / 12-14 / "
        "14-16, ratios P / (I/32) = 48, 42.7, 40, 41.6, 42.7: spread 1.2 (<= 2 holds), exponent 0.975 "
        "[0.965, 0.986], which excludes 1. Controls bound^1.5 and bound^0.5 fail as required. Run of "
        "2026-12-06 at revision b18dcc4",
        tried="the rule as fixed before the run; no parameter changed",
        reason="as at quick scale: the ratio falls from 48 at N = 16 to about 41 and stays there from "
        "N = 64 to 4096, so the straight log-log fit is pulled below 1 by the smallest size, and five "
        "draws that nearly agree give a narrow interval; the factor-2 band holds at every size",
        scales=("full",),
    )
)

record(
    LedgerEntry(
        claim_id="atlas.geometric_multihop_gd.within_constant",
        measured="full scale, from the stored full record of geometric.multihop.trained_depth (N = 128, "
        "R = 3, k = 1, 2, 3, 5 draws): trained one-pass dimensions 4 / 9-10 / 26-28 against bounds "
        "0.656 / 1.959 / 5.786, ratios 6.10, 4.59, 4.67: spread 1.33 (<= 2 holds), exponent 0.873 "
        "[0.830, 0.917], which excludes 1. Controls bound^1.5 and bound^0.5 fail as required",
        tried="the rule as fixed before the run; no parameter changed",
        reason="as at quick scale, more mildly: the trained model's smallest dimension sits 4.6-6.1x "
        "above the bound and the ratio falls from k = 1 to 2, so over three points the exponent is "
        "below 1; whether it levels off at larger k was not tried",
        scales=("full",),
    )
)

record(
    LedgerEntry(
        claim_id="atlas.hopfield_trained.within_constant",
        measured="full scale (N = 16, 32, 64, 128, 256, 3 draws, trained), seed 0, revision 9e61c93: d* = "
        "5 / 6-7 / 6-7 / 7-8 / 8-9, ratios P / (I/32) = 57.9, 52.2, 48.4, 40.0, 38.9: spread 1.49 (<= 2 "
        "holds), exponent 0.891 [0.860, 0.923], which excludes 1. Controls bound^1.5 and bound^0.5 fail "
        "as required",
        tried="the rule as fixed before the run; no parameter changed",
        reason="as at quick scale: the ratio P / (I/32) keeps falling with N over the whole full grid "
        "(57.9 -> 38.9), so the trained memory needs relatively fewer parameters per bit at larger N "
        "and the exponent sits below 1; the factor-2 band holds",
        scales=("full",),
    )
)
