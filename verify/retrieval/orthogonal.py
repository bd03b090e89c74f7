"""Capacity claims of the retrieval area with orthogonal embeddings (2603.15923,
docs/retrieval.md#experiments): exact recall at N = 4 V ln V against the coupon floor (F2), and the
independence of N_c(0.9) from d (F3). The Gaussian capacity claims are in
verify/retrieval/capacity.py.

All accuracies are oracle accuracies of the one-step value memory (docs/retrieval.md#setting), computed from
the exactly-distributed co-occurrence counts (constructions.retrieval.task.sample_cooccurrence_counts).
"""

from __future__ import annotations

import math

from theory.retrieval import bounds as th
from verify.claims import Control, claim
from verify.criteria import EverySeed, KOfN, Sequential
from verify.retrieval.capacity_setup import (
    SOURCE,
    accuracy_curve,
    draw_oracle,
    no_nan,
    shared_nc,
)


@claim(
    "retrieval.capacity.orth_coupon",
    source=SOURCE + ", our F2/F3 (coupon collector; docs/retrieval.md)",
    bounds=("retrieval.coupon_floor",),
    provenance="derived",
    templated=True,
    statement="orthogonal embeddings (V={vocab_size}, d={d_model}, L={seq_len}), N = 4 V ln V: the "
    "one-step oracle accuracy equals 1 on at least {min_perfect} of K={n_seeds} seeds (a convention), "
    "read as the smallest decoding margin > 0 (> 0 exactly when the accuracy is 1) "
    "(coupon floor V(ln V + ln 10) alone is not enough)",
    quick={
        "vocab_size": 128,
        "d_model": 128,
        "seq_len": 4,
        "n_seeds": 20,
        "min_perfect": 18,
        "n_rule": "4VlnV",
    },
    full={
        "vocab_size": 4096,
        "d_model": 4096,
        "seq_len": 4,
        "n_seeds": 20,
        "min_perfect": 18,
        "n_rule": "4VlnV",
    },
    seed_rule="k of n: at least 18 of 20 seeds exact (smallest decoding margin > 0)",
    controls=[
        Control(
            "coupon_floor",
            {"n_rule": "coupon_floor"},
            "at the coupon floor V (ln V + ln 10) every token is seen w.p. >= 0.9 but "
            "noise-token ties still break exact recall on most seeds",
        )
    ],
)
def orth_coupon(p, ctx):
    """Criterion: verify.criteria.KOfN over seeds on the smallest decoding margin
    (constructions.retrieval.task.oracle_margin) > 0, the same decision per seed as the former
    indicator of exact recall (accuracy == 1, ties errors in both), with the same k: it stored 1
    on every seed, no spread for ``verify oc``; the margin keeps the decision and has one."""
    V, d, L = p["vocab_size"], p["d_model"], p["seq_len"]
    floor = int(math.ceil(th.coupon_floor(V, 0.1)))
    N = int(round(4 * V * math.log(V))) if p["n_rule"] == "4VlnV" else floor
    seeds = ctx.seeds(p["n_seeds"])
    draws = [draw_oracle(V, d, L, N, s, 1, "orthogonal") for s in seeds]
    accs = [a[0] for a, _ in draws]
    margins = [m[0] for _, m in draws]
    no_nan(accs)
    perfect = int(sum(a == 1.0 for a in accs))
    curve = accuracy_curve(V, d, L, ctx.seed, "orthogonal", [128, 256, 512, floor, 1500, N, 5000])
    rule = KOfN(
        f"smallest decoding margin at N={N} ({p['n_rule']}; > 0 exactly when the oracle accuracy is 1)",
        0.0,
        ">",
        k=p["min_perfect"],
        source="convention",
    )
    return rule.judge(margins, seeds=seeds), {
        "n_samples": N,
        "coupon_floor": floor,
        "perfect": perfect,
        "accuracies": accs,
        "margins": margins,
        "curve": {"label": f"orthogonal d={d}, L={L}", "points": curve},
    }


#: the setting of orth_d_independent and its staged restatement (quick scale), and the override of
#: their control: non-orthogonal embeddings below d = V
ORTH_SETTING = {
    "vocab_size": 128,
    "seq_len": 8,
    "d_models": [128, 256, 512],
    "embedding": "orthogonal",
    "spread": 1.25,
}
GAUSSIAN_SMALL_D = {"embedding": "gaussian", "d_models": [16, 32, 64]}


@claim(
    "retrieval.capacity.orth_d_independent",
    source=SOURCE + ", abstract ('beyond orthogonal'); F3",
    bounds=("retrieval.orth_scale",),
    provenance="derived",
    templated=True,
    statement="with {embedding} embeddings (V={vocab_size}, L={seq_len}) N_c(0.9) does not depend on d: "
    "over d in {d_models} max/min <= {spread} (a convention) on every one of {n_seeds} base seeds "
    "(Gaussian embeddings at d < V, the control, change by far more)",
    quick=dict(ORTH_SETTING, n_seeds=6),
    seed_rule="every seed of seed..seed+5 (6 seeds, the count verify oc named for an admissible pass; "
    "each N_c: mean accuracy of 3 draws)",
    controls=[
        Control(
            "gaussian_small_d",
            GAUSSIAN_SMALL_D,
            "non-orthogonal embeddings below d = V: the crosstalk makes N_c depend on d",
        )
    ],
)
def orth_d_independent(p, ctx):
    """Criterion: verify.criteria.EverySeed on the per-seed spread max/min N_c over d (an
    infinite N_c gives an infinite spread, which fails), the former rule."""
    V, L, ds, emb = p["vocab_size"], p["seq_len"], p["d_models"], p["embedding"]
    seeds = ctx.seeds(p["n_seeds"])
    runs = [[shared_nc(ctx, V, d, L, emb, seed=s) for d in ds] for s in seeds]
    spreads = [max(r) / min(r) if all(math.isfinite(x) for x in r) else math.inf for r in runs]
    rule = EverySeed("max/min N_c(0.9) over d", p["spread"], "<=", "convention")
    return rule.judge(spreads, seeds=seeds), {
        "vocab_size": V,
        "seq_len": L,
        "d_models": ds,
        "embedding": emb,
        "n_c_per_seed": runs,
        "spreads": spreads,
        "v_ln_v": V * math.log(V),
    }


#: the staged looks and per-direction error of orth_d_independent_staged (see ORTH_SPREAD_PILOT)
ORTH_SPREAD_LOOKS, ORTH_SPREAD_ALPHA = (6, 12), 0.01
#: the pilot that fixed them: the per-seed spread max/min N_c(0.9) over d in [128, 256, 512]
#: (orthogonal, V = 128, L = 8) at seeds 100-123 (never judged; revision 3dacb71): mean 1.074, sd
#: 0.047, largest 1.177 (values on a few discrete levels). Simulated on bootstrap draws of these
#: spreads (2000 runs each): the pilot's law passes 1.00 at every choice; shifted to a mean on 1.25
#: it passes 0.107 at error 0.05, 0.053 at 0.025 and 0.036 at 0.01 (looks 6, 12). Error 0.01 is
#: taken
ORTH_SPREAD_PILOT = {
    "seeds": list(range(100, 124)),
    "revision": "3dacb71",
    "mean": 1.074,
    "sd": 0.047,
    "pass_at_1.25": {"0.05": 0.107, "0.025": 0.053, "0.01": 0.036},
}


@claim(
    "retrieval.capacity.orth_d_independent_staged",
    source=SOURCE + ", abstract ('beyond orthogonal'); F3",
    bounds=("retrieval.orth_scale",),
    provenance="derived",
    templated=True,
    statement="with {embedding} embeddings (V={vocab_size}, L={seq_len}) N_c(0.9) does not depend on d: "
    "the mean over seeds of the spread max/min N_c over d in {d_models} is <= {spread} (a convention), "
    "judged in stages at {looks} seeds by a one-sided Student-t bound (error 0.01 over the looks, fixed "
    "on pilot seeds 100-123; inconclusive when the last look does not decide). Restates "
    "orth_d_independent, whose every-seed rule failed at an unused base seed on one seed's spread "
    "(1.311) from the tail of the per-seed spread (Gaussian embeddings at d < V, the control, spread "
    "by far more)",
    quick=dict(ORTH_SETTING, looks=list(ORTH_SPREAD_LOOKS)),
    seed_rule="sequential looks over the seeds seed..seed+n-1 of the per-seed spread (a one-sided "
    "Student-t bound per look; per-seed values recorded; each N_c: mean accuracy of 3 draws)",
    controls=[
        Control(
            "gaussian_small_d",
            GAUSSIAN_SMALL_D,
            "non-orthogonal embeddings below d = V: the crosstalk makes N_c depend on d (the former "
            "rule's control: spreads 9.6-46 at seeds 0-5)",
        )
    ],
)
def orth_d_independent_staged(p, ctx):
    """The successor of orth_d_independent, whose rule "spread <= 1.25 on every one of 6 seeds"
    failed at an unused base seed (seeds 777-782: one spread 1.311, the others 1.0-1.18); that claim
    stays, with its ledger entry, as history. Here the per-seed spread's mean is judged by a
    :class:`verify.criteria.Sequential` rule, looks and error fixed on pilot seeds 100-123
    (:data:`ORTH_SPREAD_PILOT`). A seed where some N_c is infinite (never reached) is an error
    naming it: the spread is not a number there."""
    V, L, ds, emb = p["vocab_size"], p["seq_len"], p["d_models"], p["embedding"]
    looks = tuple(int(n) for n in p["looks"])
    runs = {}

    def spread(seed):
        r = [shared_nc(ctx, V, d, L, emb, seed=seed) for d in ds]
        if not all(math.isfinite(x) for x in r):
            raise ValueError(f"N_c(0.9) not reached at seed {seed} for some d in {ds}: no spread to judge")
        runs[seed] = r
        return max(r) / min(r)

    rule = Sequential(
        "mean max/min N_c(0.9) over d", p["spread"], "<=", "convention", looks, alpha=ORTH_SPREAD_ALPHA
    )
    judgement = rule.run(spread, ctx.seeds(looks[-1]))
    return judgement, {
        "vocab_size": V,
        "seq_len": L,
        "d_models": ds,
        "embedding": emb,
        "seeds": list(runs),
        "n_c_per_seed": list(runs.values()),
        "spreads": [max(r) / min(r) for r in runs.values()],
        "v_ln_v": V * math.log(V),
    }
