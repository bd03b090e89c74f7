"""The random-MLP variant of the retrieval area's three-step gradient descent (2603.15923,
docs/retrieval.md#experiments): does the test accuracy depend on the product m*d of the MLP width and
the embedding dimension? Split from verify/retrieval/early_gd.py, same claim, same
numbers; the three-step model is shared through verify/retrieval/early_gd_setup.py.
"""

from __future__ import annotations

import numpy as np

from constructions.retrieval.gd import evaluate
from theory.papers import paper
from verify.claims import Control, Outcome, claim
from verify.ledger import LedgerEntry, record
from verify.measure import t_interval
from verify.retrieval.early_gd_setup import trained

SOURCE = paper("retrieval")


@claim(
    "retrieval.mlp.md_product",
    source=SOURCE + ", abstract (capacity); random-MLP variant (docs/retrieval.md)",
    provenance="derived",
    statement="with a fixed random MLP and d > 2 ln V, the three-step test accuracy depends on m*d: "
    "over 3 seeds, the 95% t-interval of acc(64, 32) - acc(128, 16) (same m*d) lies within "
    "+-20% of acc(64, 32), while that of acc(64, 32) - acc(64, 16) (half the m*d) excludes "
    "0 and its mean exceeds 20% of acc(64, 32)",
    quick={
        "vocab_size": 256,
        "seq_len": 4,
        "n_samples": 32768,
        "pairs": [[64, 32], [128, 16]],
        "contrast": [64, 16],
        "counter": [256, 8],
        "n_seeds": 3,
        "rel_tol": 0.2,
    },
    seed_rule="95% t-intervals over seeds seed..seed+2 of the per-seed differences",
    controls=[
        Control(
            "same_contrast",
            {"contrast": [64, 32]},
            "a contrast with the same (m, d) as the first pair cannot differ from it",
        )
    ],
)
def mlp_md(p, ctx):
    V, L, N = p["vocab_size"], p["seq_len"], p["n_samples"]
    lr = float(V)

    def acc(m, d, seed):
        _, steps, test = trained(ctx, V, d, L, N, lr, lr, mlp_width=m, seed=seed)
        return evaluate(test, steps.w_out_2, steps.w_kq_1).accuracy

    seeds = ctx.seeds(p["n_seeds"])
    accs = [[acc(m, d, s) for s in seeds] for m, d in p["pairs"]]
    contrast = [acc(*p["contrast"], s) for s in seeds]
    means = [float(np.mean(a)) for a in accs]
    c_mean = float(np.mean(contrast))
    tol = p["rel_tol"] * means[0]
    same_lo, same_hi = t_interval([a - b for a, b in zip(*accs)], 0.95)
    diff_vals = [a - c for a, c in zip(accs[0], contrast)]
    diff_lo, diff_hi = t_interval(diff_vals, 0.95)
    agree = -tol <= same_lo and same_hi <= tol
    differ = (diff_lo > 0 or diff_hi < 0) and abs(float(np.mean(diff_vals))) > tol
    counter = acc(*p["counter"], ctx.seed)
    old_same = abs(means[0] - means[1]) / max(means[0], means[1])
    old_diff = abs(means[0] - c_mean) / max(means[0], c_mean)
    return Outcome(
        predicted=f"CI(same m*d) within +-{tol:.3f}; CI(half m*d) excludes 0, |mean| > {tol:.3f}",
        measured=f"means (64,32) {means[0]:.3f}, (128,16) {means[1]:.3f}, "
        f"{tuple(p['contrast'])} {c_mean:.3f}; CI same [{same_lo:.3f}, {same_hi:.3f}], "
        f"CI contrast [{diff_lo:.3f}, {diff_hi:.3f}]",
        passed=bool(agree and differ),
        details={
            "pairs": p["pairs"],
            "accuracies": accs,
            "mean_accuracy": means,
            "contrast": p["contrast"],
            "contrast_accuracies": contrast,
            "ci_same": [same_lo, same_hi],
            "ci_contrast": [diff_lo, diff_hi],
            "counter_example": p["counter"],
            "counter_accuracy": counter,
            "lr_value": lr,
            "lr_attn": lr,
            "previous_criterion": [
                {
                    "rule": "|acc(64,32) - acc(128,16)| <= 0.1 absolute (mean of 3 seeds)",
                    "passed": abs(means[0] - means[1]) <= 0.1,
                },
                {
                    "rule": "relative gap of the means <= 0.2 at same m*d and > 0.2 at half "
                    "m*d (flipped: passed at base seed 4)",
                    "passed": old_same <= p["rel_tol"] and old_diff > p["rel_tol"],
                },
            ],
        },
    )


record(
    LedgerEntry(
        claim_id="retrieval.mlp.md_product",
        measured="V=256, L=4, N=32768, eta=gamma=V; three-step test accuracy by seed 0..6: (m, d) = (64, 32) "
        "0.224, 0.138, 0.213, 0.238, 0.339, 0.166, 0.050; (128, 16) (same m*d) 0.057, 0.167, 0.089, "
        "0.073, 0.213, 0.183, 0.164; (64, 16) (half m*d) 0.217, 0.139, 0.198, 0.189, 0.126, 0.083, "
        "0.180. At fixed (m, d) the accuracy spans 0.05-0.34 across seeds, more than any difference "
        "between configurations; over 3 seeds the 95% t-intervals of the differences span about "
        "+-0.25, so neither 'same m*d agree' nor 'half m*d differs' can be shown",
        tried="absolute gap <= 0.1 (flipped: failed at seed 2); relative gaps of 3-seed means with "
        "a contrast at half m*d (failed at seeds 0-3, passed at seed 4: noise); "
        "t-intervals of the per-seed differences (kept)",
        reason="with a fixed random ReLU MLP after three GD steps the test accuracy is dominated by the "
        "draw of the task and the MLP (seed-to-seed spread 0.05-0.34), so at quick scale the m*d "
        "hypothesis ([derived], docs/retrieval.md) is not decidable; the pooled means ((64,32) 0.195, "
        "(128,16) 0.135, (64,16) 0.162) do not support it either. The criterion is kept",
    )
)
