"""Full-scale ledger entries of the fact_mlp claims (criterion kept, numbers here: verify/ledger.py), from
the partial full-scale run of 2026-12-01 on the shared 2-core CPU (results/full/README.md). The
quick-scale entries stay beside their claims. Registers no claim.
"""

from __future__ import annotations

from verify.ledger import LedgerEntry, record

record(
    LedgerEntry(
        claim_id="fact_mlp.capacity.whitened_ties",
        measured="full scale (d = 64, n_V = 256, F = 512, 1024, 2048, 4096 x spherical, spiked, clustered), "
        "seed 0: P_whitened / P_std = 1.0, 1.0, 0.8, 1.2, 1.6, 1.6, 1.33 at 7 of the 12 points; at the "
        "other 6 the whitened readout does not store up to width 1024 (P = 196,608), so "
        "'<= 2 at every point' fails; the ntk_baseline control fails too (stores at 1 of 12 points). "
        "Run of 2026-12-01 on the shared CPU (results/full). Quick scale passes (judged normally)",
        tried="one full-scale run only (seed 0); the readout's width grid stops at 1024",
        reason="suspected: the whitened readout's features span d(d + 1)/2 = 2080 directions at d = 64, so it "
        "cannot store the largest fact sets at any width (as at F = d^2 in gd_vs_construction); "
        "whether a wider grid would store the others was not tried",
        scales=("full",),
    )
)


record(
    LedgerEntry(
        claim_id="fact_mlp.decoder.jl_decoder",
        measured="full scale (n_V = 10,000, d = 256, m_c = 48, 10 draws of Rp), seed 0: 8 of 10 draws miss "
        "some value (accuracies 0.9999, 0.9998, 0.9999, 1.0, 0.9999, 0.9996, 1.0, 0.9999, 0.9997, "
        "0.9998; rho 0.637, ln(n_V)/rho^2 = 22.7, B2 = 182), against <= 1 allowed; the control "
        "m_c = 8 fails all 10. Run of 2026-12-01 on the shared CPU (results/full). Quick scale "
        "(n_V = 512) passes and is judged normally",
        tried="one full-scale run (seed 0); not investigated further",
        reason="suspected: the full setting keeps the m_c = 48 chosen for n_V = 512 while n_V grows "
        "20x, so m_c falls to 0.26 of B2 and to about 2.1 ln(n_V)/rho^2; a few values in 10^4 "
        "then collide. The statement's numbers (d = 256, n_V = 512) are the quick setting's",
        scales=("full",),
    )
)

record(
    LedgerEntry(
        claim_id="fact_mlp.edit.equal_information",
        measured="full scale (k = 4, 16, 32, 48 of 64, 5 draws, mean (efficacy, retention)), seed 0: the "
        "construction's full-map fine-tuning at k = 4 reaches (0.944, 0.979), below efficacy 0.95; "
        "every other cell passes: construction swap (0.95, 0.97), (0.988, 0.963), (0.97, 0.968), "
        "(0.968, 0.975) and full-map fine-tuning (0.983, 0.973), (0.966, 0.979), (0.965, 0.983) at "
        "k = 16, 32, 48; GD MLP (1.0, 1.0) everywhere. Run of 2026-12-01 on the shared CPU "
        "(results/full). The quick-scale entry (flips with the seed) is beside the claim",
        tried="one full-scale run (seed 0); not investigated further",
        reason="as at quick scale: the construction's cells sit at the 0.95 threshold because the "
        "MLP-first model's own recall through its frozen attention is about 0.97",
        scales=("full",),
    )
)


# Quick-scale entries of claims whose verdict flips with the base seed (``verify stability
# 'fact_mlp.*' --seeds 0,1,2,3,4,11,13``); the criteria are unchanged. Such a claim is "not
# reproduced" at every seed, with its own verdict at the seed in the record.
record(
    LedgerEntry(
        claim_id="fact_mlp.capacity.linear_cost",
        measured="quick scale (d = 128, n_V = 256, F = 512, 1024, 2048), log-log slope of P_std in F "
        "against 0.9 <= slope <= 1.1: base seed 0 1.000, 1 1.000, 2 1.000, 3 1.000, 4 1.123 (fail), "
        "11 0.877 (fail), 13 1.000; every fact set stored at every seed",
        tried="nothing after the judged seeds: the grid, the decoder draws and the window are kept",
        reason="m_c is searched on a 2^(1/4)-ratio grid, so one grid step at an end of the F range moves the "
        "fitted slope by about 0.25 / 2 = 0.12 (two octaves of F): the window 1 +- 0.1 is "
        "narrower than one grid step, and a single-step move of one F (m_c* 32 -> 38 or 27) decides it",
        flips_with_seed=True,
        scales=("quick",),
        seed_verdicts={0: "pass", 1: "pass", 2: "pass", 3: "pass", 4: "fail", 11: "fail", 13: "pass"},
    )
)

record(
    LedgerEntry(
        claim_id="fact_mlp.edit.rank_one_equal_width",
        measured="quick scale, retention(GD, width 576) - retention(construction, width 576) at k = 32 "
        "(mean over 3 draws, criterion > 0): base seed 0 0.0378, 1 0.0078, 2 0.0378, 3 0.0 (fail: "
        "equal retention), 4 0.0521, 11 0.0339, 13 0.0208",
        tried="nothing after the judged seeds: the criterion (strictly more retained on the GD MLP) is kept",
        reason="the difference is a few of 64 x 3 unedited facts (one fact of one draw is 0.0052): at "
        "seed 3 both models retain the same count, so the strict inequality fails; the sign holds or ties "
        "at every seed run, its size is within the draw noise",
        flips_with_seed=True,
        scales=("quick",),
        seed_verdicts={0: "pass", 1: "pass", 2: "pass", 3: "fail", 4: "pass", 11: "pass", 13: "pass"},
    )
)

record(
    LedgerEntry(
        claim_id="fact_mlp.transformer.recall_spec_scale",
        measured="quick scale (d = 32, one training seed per base seed), recall of the worse schedule "
        "against >= 0.95: base seed 0 0.941, 1 0.941, 2 0.828, 3 0.953 (pass), 4 0.975 (pass), "
        "11 0.893, 13 0.873. The full-scale refutation (5 seeds) is in transformer_spec.py",
        tried="see the full-scale entry beside the claim (lr, d = 64, the attention-only ceiling)",
        reason="the MLP-first schedule at d = 32 reaches 0.83-0.97 depending on the draw, around the "
        "0.95 threshold: two of seven base seeds pass, so 'ledger now passes' there was not a refutation "
        "that stopped holding but a verdict that flips with the seed",
        flips_with_seed=True,
        scales=("quick",),
        seed_verdicts={0: "fail", 1: "fail", 2: "fail", 3: "pass", 4: "pass", 11: "fail", 13: "fail"},
    )
)


record(
    LedgerEntry(
        claim_id="fact_mlp.edit.equal_width",
        measured="quick scale, base seeds 0-4 at revision 5bcbefa (verify stability): 0 inconclusive "
        "{efficacy: {lowest 95% t interval of a cells mean efficacy: [0.7790561362604391, "
        "0.989526245487412]}, reten...; 1 pass {efficacy: {lowest 95% t interval of a cells mean "
        "efficacy: [0.9835868418496108, 1.0]}, retention: {lowest ...; 2 inconclusive {efficacy: "
        "{lowest 95% t interval of a cells mean efficacy: [0.9447640340651098, 1.0]}, retention: "
        "{lowest ...; 3 pass {efficacy: {lowest 95% t interval of a cells mean efficacy: 1.0}, "
        "retention: {lowest 95% t interval of a ce...; 4 inconclusive {efficacy: {lowest 95% t "
        "interval of a cells mean efficacy: [0.9252155421271216, 0.9886753290751946]}, rete...",
        tried="nothing after the judged seeds: the criterion is kept (verify stability over the "
        "whole registry)",
        reason="its 95% interval over seeds ends near its threshold at this budget, so whether it clears"
        " it depends on the base seed (pass at some, inconclusive at others, never fail): at the "
        "inconclusive seeds the lowest cell's efficacy interval straddles the 0.95 convention",
        flips_with_seed=True,
        scales=("quick",),
        seed_verdicts={0: "inconclusive", 1: "pass", 2: "inconclusive", 3: "pass", 4: "inconclusive"},
    )
)


record(
    LedgerEntry(
        claim_id="fact_mlp.edit.equal_information",
        measured="quick scale, base seeds 0-4 at revision 5bcbefa (verify stability): 0 inconclusive "
        "{efficacy: {lowest 95% t interval of a cells mean efficacy: [0.9022855584766712, "
        "0.9915160361224924]}, rete...; 1 inconclusive {efficacy: {lowest 95% t interval of a "
        "cells mean efficacy: [0.9651629838045217, 1.0]}, retention: {lowest ...; 2 inconclusive "
        "{efficacy: {lowest 95% t interval of a cells mean efficacy: [0.9175374226830638, 1.0]}, "
        "retention: {lowest ...; 3 pass {efficacy: {lowest 95% t interval of a cells mean "
        "efficacy: [0.9930955042581386, 1.0]}, retention: {lowest ...; 4 pass {efficacy: {lowest "
        "95% t interval of a cells mean efficacy: [0.9666597585162775, 0.9890694081503892]}, "
        "rete...",
        tried="nothing after the judged seeds: the criterion is kept (verify stability over the "
        "whole registry)",
        reason="its 95% interval over seeds ends near its threshold at this budget, so whether it clears"
        " it depends on the base seed (pass at some, inconclusive at others, never fail): at the "
        "inconclusive seeds the lowest cell's efficacy interval straddles the 0.95 convention",
        flips_with_seed=True,
        scales=("quick",),
        seed_verdicts={0: "inconclusive", 1: "inconclusive", 2: "inconclusive", 3: "pass", 4: "pass"},
    )
)


record(
    LedgerEntry(
        claim_id="fact_mlp.edit.by_k",
        measured="quick scale, base seeds 0-4 at revision 5bcbefa (verify stability): 0 pass "
        "{swap_min_score_ge_0.9: {min swap Score over k: 0.9509892086330934}, "
        "swap_beats_finetune_ed: {Score(swap) -...; 1 pass {swap_min_score_ge_0.9: {min swap "
        "Score over k: 0.9947368421052631}, swap_beats_finetune_ed: {Score(swap) -...; 2 pass "
        "{swap_min_score_ge_0.9: {min swap Score over k: 0.9574468085106383}, "
        "swap_beats_finetune_ed: {Score(swap) -...; 3 pass {swap_min_score_ge_0.9: {min swap "
        "Score over k: 1.0}, swap_beats_finetune_ed: {Score(swap) - Score(finetune...; 4 fail "
        "{swap_min_score_ge_0.9: {min swap Score over k: 0.9947677615990708}, "
        "swap_beats_finetune_ed: {Score(swap) -...",
        tried="nothing after the judged seeds: the criterion is kept (verify stability over the "
        "whole registry)",
        reason="fails at base seed 4 only, on its part 'rank-one edit close to the swap on the "
        "construction at every k' (max gap 0.065 at seed 4, 0.023 at seed 3): a point rule on one"
        " draw near its tolerance; not investigated further",
        flips_with_seed=True,
        scales=("quick",),
        seed_verdicts={0: "pass", 1: "pass", 2: "pass", 3: "pass", 4: "fail"},
    )
)
