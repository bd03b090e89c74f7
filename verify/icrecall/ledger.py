"""Ledger of the IC-recall claims that did not reproduce (criterion kept, numbers here: verify/ledger.py).

Numbers are quick scale; "seeds a..b" are the base seeds of ``verify run --seed S`` (each claim
runs seeds S..S+2). Calibration seeds 100-104 were used only to look for a setting that passes.
"""

from __future__ import annotations

from verify.ledger import LedgerEntry, record

record(
    LedgerEntry(
        claim_id="icrecall.finetune.solves",
        measured="quick scale (S=200, R=5, D=10, d=222, N_train=128, P-full with slots, lr 0.005, "
        "200 steps): held-out accuracy after fine-tuning at seeds 0..6: 0.958, 0.947, "
        "0.961, 0.963, 0.924, 0.925, 0.944 (init 0.17-0.22); the rule 'every seed of 3 >= "
        "0.95' fails at every base seed 0..4. Calibration seeds 100-104: 0.922-0.950 (N_train 128), "
        "0.933-0.947 (N_train 256), 0.928-0.959 (d = 256), 0.935-0.949 (400 steps). "
        "P-struct (4 parameters) at N_train = 32 reaches 0.974-0.998 on the same worlds",
        tried="N_train 64, 128, 256; d 222 and 256; 200 and 400 steps; lr 0.005 and (pilot) 0.001-0.05; "
        "slot embeddings in the values or not (pilot)",
        reason="P-full plateaus at about 0.94: it learns an answers-plus-query pattern (within-pair "
        "imbalance 0.6-0.8, see finetune.pattern_emerges), which leaves more crosstalk in F's "
        "input than the balanced pairwise pattern (hand-set: 0.995 at d = 128). N_train = 128 "
        "was chosen on seed 0, where 0.958 happened to clear 0.95; the plateau, not the sample "
        "size, decides. The task itself is solved by the 4-parameter P-struct. Full scale (S=200, D=20, "
        "d=256, N_train=256) passes at base seed 0 (0.966, 0.964, 0.974; run of 2026-12-01 on the "
        "shared CPU, results/full), so this entry holds at quick scale only",
        scales=("quick",),
    )
)

record(
    LedgerEntry(
        claim_id="icrecall.finetune.pattern_emerges",
        measured="quick scale (S=200, R=5, D=10, d=222, N_train=128, P-full with slots), seeds 0..6: "
        "query share 0.298, 0.279, 0.285, 0.369, 0.278, 0.348, 0.295 (init 0.99; drop >= 0.3 "
        "holds, <= 0.35 fails at seed 3), within-pair imbalance 0.754, 0.744, 0.608, 0.793, "
        "0.718, 0.734, 0.630 (> 0.4 fails at every seed; init 0.23-0.35), H_p 0.99 (0.99 at "
        "init, so no longer judged): answers draw most of the context attention, subjects little",
        tried="lr 0.001, 0.002, 0.005, 0.02, 0.05; N_train 16-1024; slot embeddings in the values or not; "
        "P-full without slots (imbalance 0.24-0.31 at lr 0.05, but no generalisation to unseen "
        "subjects); d 64-256; 400 steps",
        reason="in this derived model the context subjects carry no useful signal: the relation comes "
        "from the answers (rho e_r) and the query's own subject from the residual, while "
        "attention on a context subject only raises the wrong neuron (s_i, r). Gradient descent "
        "therefore learns an answers-plus-query pattern, even over pairs but not balanced within "
        "pairs; the paper's pairwise pattern likely needs its own construction (its "
        "definition and the model are unknown)",
    )
)

record(
    LedgerEntry(
        claim_id="icrecall.pretrained.pattern",
        measured="quick scale (S=100, R=4, D=10, d=64, width 512, N_train=64, P-struct, train_omega), "
        "seeds 0..6: query share 0.397, 0.312, 0.299, 0.402, 0.325, 0.284, 0.304 (init "
        "0.75-0.76; drop 0.35-0.47), within-pair imbalance 0.828, 0.864, 0.874, 0.872, 0.894, "
        "0.907, 0.914 (init 0.26-0.27; > 0.4 fails at every seed), answer share 0.55-0.66 "
        "against subject share 0.04-0.05 (seeds 0-2); H_p 0.99 (0.98 at init)",
        tried="the same pattern rule as finetune.pattern_emerges (one rule for both); "
        "before, this variant was judged on H_p >= 0.9 alone, which the untrained model meets",
        reason="as for finetune.pattern_emerges: the relation is read from the answers, context subjects "
        "only feed wrong neurons, so fine-tuning moves the query's attention to the answers. "
        "The pretrained variant solves the task (pretrained.solves) without the balanced "
        "pairwise pattern",
    )
)

record(
    LedgerEntry(
        claim_id="icrecall.finetune.n_star_vs_subjects",
        measured="quick scale (P-full, R = 5, D = 10, n = 4, d = 154 = ceil(32 ln N_f(S_max)), S = 6 -> "
        "24, grid 2..128, eps = 0.1, N_test = 300), N*[S=6, S=24] by seed 0..4 (a censored "
        "'>g' is N* above the scanned points <= N*(S=6)): without slots [32, >32], [32, >32], "
        "[16, >16], [16, >16], [16, >16] (the growth half holds at every seed; accuracy at "
        "S = 24, N_train = N*(6): 0.75, 0.70, 0.55, 0.50, 0.62); with slots [16, 16], [2, >2], "
        "[8, 8], [8, >8], [2, >2] (S = 24 accuracy at N_train = N*(6): 0.95, 0.53, 0.95, "
        "0.89, 0.29): the no-growth half fails at seeds 1, 3, 4, so the claim fails at base "
        "seeds 0, 1 and 2. Calibration seeds 100-102 (never judged): at d = 64, S = 12 -> 48, "
        "the slotted N* grew at every seed (32 -> >32, 16 -> >16, 32 -> >32); at d = 176, "
        "S = 12 -> 48, full slotted curves 4 -> 8, 8 -> 32, 16 -> 8",
        tried="d = 64 and 96 (colleague's calibration, slotted N* 32/64/128, 16/16/128, 8/16/128 for "
        "S = 12/24/48) on calibration seeds only; the judged setting fixes d at the memory "
        "heuristic of docs/icrecall.md for the larger world so the frozen memory is not the bottleneck",
        reason="the no-slot model's N* grows with S as our pilot predicts (it must see the query "
        "subjects), but the slotted model's N* is not S-independent either: where N*(S_min) is "
        "on the first grid points (2 sequences), 2 sequences do not suffice at S = 24 (accuracy "
        "0.29-0.53), and at 8 sequences S = 24 reaches 0.89 < 0.9. With 2-16 training sequences "
        "the accuracy after 200 full-batch steps depends on which sequences were drawn (as in "
        "sample_complexity.polylog). More seeds decide it against the statement: N* at S = 6 and 24 "
        "over the full grid (no censoring; verify.icrecall.subjects.n_star at the quick setting), "
        "seeds 0-11 and 100-111: with slots the mean log2(N*(24)/N*(6)) is 1.46, 95% t-interval "
        "[0.85, 2.07] (17 seeds up, 2 down, 5 tied; one-sided sign test p = 0.0004; seeds 0-11 "
        "alone 1.50 [0.66, 2.34], 9 up, 0 down); without slots it grows more, 2.25 [1.70, 2.80] "
        "(seeds 0-11). The slotted N* grows with S, about 2.8x for 4x the subjects: refuted here, "
        "not undecided",
    )
)

record(
    LedgerEntry(
        claim_id="icrecall.finetune.no_slots_per_subject",
        measured="full scale (S=200 and 2000 subjects, D=20, d=128, N_train=256, P-full without slots, "
        "200 steps), base seed 0 (seeds 0..2): unseen-subject accuracy drops 0.240 from init "
        "(criterion <= 0.2): unseen 0.434 / 0.454, seen 0.858 / 0.755 at S = 200 / 2000; the "
        "control with_slots gives a drop of 0.075 (run of 2026-12-01 on the shared CPU, "
        "results/full). Quick scale passes (judged normally there)",
        tried="one full-scale run only (seed 0); not investigated",
        reason="not investigated; suspected: the full setting uses N_train = 256 >= S = 200, so every "
        "subject can appear as a training query and the 'unseen subjects' of the statement "
        "(written for N_train = 64) are not unseen at S = 200",
        scales=("full",),
    )
)

record(
    LedgerEntry(
        claim_id="icrecall.finetune.unseen_facts",
        measured="full scale (S=200, D=20, d=256, N_train=128, P-full with slots, 200 steps), base seed 0: "
        "|acc_unseen - acc_seen| = 0.029, 0.054, 0.023 at seeds 0, 1, 2 (criterion <= 0.05 every seed); "
        "unseen 0.968 / 0.967 / 0.980 against seen 0.940 / 0.913 / 0.958, so the unseen query subjects "
        "do BETTER; the control no_slots gives a gap of 0.438. Run of 2026-12-01 on the shared CPU "
        "(results/full), with the full setting's N_train set to 128 before the run (the earlier "
        "N_train = 256 >= S had raised). Quick scale passes (judged normally)",
        tried="one full-scale run (seed 0); not investigated further",
        reason="not investigated; the failing gap has the opposite sign to the claim's concern (unseen "
        "query subjects are recalled slightly better than seen ones), and seed 1 exceeds the 0.05 "
        "tolerance by 0.004",
        scales=("full",),
    )
)

record(
    LedgerEntry(
        claim_id="icrecall.finetune.unseen_facts",
        measured="quick scale, |acc_unseen - acc_seen| at the 3 seeds of each base seed against <= 0.05 on "
        "every seed: base seed 0 [0.009, 0.002, 0.027], 1 [0.002, 0.027, 0.043], 2 [0.027, 0.043, 0.002], "
        "3 [0.043, 0.002, 0.004], 4 [0.002, 0.004, 0.008], 11 [0.058, 0.037, 0.017] (fail), 13 [0.017, "
        "0.021, 0.030]",
        tried="nothing after the judged seeds (``verify stability``); the tolerance is kept",
        reason="per-seed gaps range 0.002-0.058 with the tolerance 0.05 inside that range, and the rule "
        "needs every seed: a base seed whose window holds one large gap fails (training seed 11 alone); "
        "the full-scale run fails the same way (seed 1, 0.054, entry above)",
        flips_with_seed=True,
        scales=("quick",),
        seed_verdicts={0: "pass", 1: "pass", 2: "pass", 3: "pass", 4: "pass", 11: "fail", 13: "pass"},
    )
)
