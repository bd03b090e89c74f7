"""Capacity claims of the retrieval area (2603.15923, docs/retrieval.md#experiments): N_c(target) by
geometric bisection, its growth with V and L, its decay and plateau in d, and the orthogonal
control. The fitted scaling law and the multiplicative L/d claim are in
verify/retrieval/scaling.py; the corrected statements and the two "must fail" claims (bracketed
at their boundaries) are in verify/retrieval/sufficient.py.

The former claim capacity.pred_order (F1 within a factor 10 of N_c(0.9) at six reference points,
spread <= 5) was removed: its verdict flipped with the seed because the point (V, d, L) =
(256, 16, 8) sits at the plateau boundary d*(0.9) = 15.3 (N_c there 8e4, 2.3e5 or infinite by
seed), and without that point the coupon scale V ln V, which ignores d and L, passed the same
criterion (spreads 2.5-3.9), so it tested nothing. F1's exponents are compared with the measured
ones by retrieval.scaling.fit; its failure as a guarantee is retrieval.capacity.sufficient.

All accuracies are oracle accuracies of the one-step value memory (docs/retrieval.md#setting), computed from
the exactly-distributed co-occurrence counts (constructions.retrieval.task.sample_cooccurrence_counts).
"""

from __future__ import annotations

import math

import numpy as np

from theory.retrieval import bounds as th
from theory.retrieval import sufficient as th_suff
from verify.claims import Control, Outcome, claim
from verify.criteria import IntervalTest, Threshold
from verify.ledger import LedgerEntry, record
from verify.measure import seeds_verdict, t_interval
from verify.retrieval.capacity_setup import (
    RATIO,
    SOURCE,
    accuracy_curve,
    law,
    loglog_slope,
    mean_oracle_accuracy,
    shared_nc,
)

SEED_RULE3 = "every seed of seed..seed+2 (each N_c: mean accuracy of 3 draws)"
SEED_RULE_SLOPE = (
    "95% Student-t interval over seeds seed..seed+2 of the per-seed log-log slope "
    "(each N_c: mean accuracy of 3 draws)"
)


@claim(
    "retrieval.capacity.orth_coupon",
    source=SOURCE + ", our F2/F3 (coupon collector; docs/retrieval.md)",
    bounds=("retrieval.coupon_floor",),
    provenance="derived",
    statement="orthogonal embeddings, N = 4 V ln V: the one-step oracle accuracy equals 1 on at "
    "least 18 of K=20 seeds (coupon floor V(ln V + ln 10) alone is not enough)",
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
    seed_rule="k of n: at least 18 of 20 seeds exact",
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
    V, d, L = p["vocab_size"], p["d_model"], p["seq_len"]
    floor = int(math.ceil(th.coupon_floor(V, 0.1)))
    N = int(round(4 * V * math.log(V))) if p["n_rule"] == "4VlnV" else floor
    accs = [mean_oracle_accuracy(V, d, L, N, s, 1, "orthogonal") for s in ctx.seeds(p["n_seeds"])]
    perfect = int(sum(a == 1.0 for a in accs))
    curve = accuracy_curve(V, d, L, ctx.seed, "orthogonal", [128, 256, 512, floor, 1500, N, 5000])
    return Outcome(
        predicted=f">= {p['min_perfect']}/{p['n_seeds']} perfect at N={N} ({p['n_rule']})",
        measured=f"{perfect}/{p['n_seeds']} perfect",
        passed=seeds_verdict([a == 1.0 for a in accs], f"k_of_n:{p['min_perfect']}"),
        details={
            "n_samples": N,
            "coupon_floor": floor,
            "perfect": perfect,
            "accuracies": accs,
            "curve": {"label": f"orthogonal d={d}, L={L}", "points": curve},
        },
    )


def _per_seed(ctx, n_seeds, points, embedding="gaussian"):
    return [[shared_nc(ctx, V, d, L, embedding, seed=s) for (V, d, L) in points] for s in ctx.seeds(n_seeds)]


def slope_judgement(xs, runs, test):
    """The per-seed log-log slopes of N_c in x and ``test`` (a verify.criteria.IntervalTest) judged
    on their 95% Student-t interval over seeds; an infinite N_c (the target missed up to 10^7
    samples: no threshold, no slope) fails, NaN raises. Returns (judgement, slopes; None when an
    N_c is infinite).

    >>> from verify.criteria import IntervalTest
    >>> law = IntervalTest("slope", 1.0, {"no growth": 0.0})
    >>> slope_judgement([4, 16], [[10, 41], [10, 39], [10, 40]], law)[0].verdict
    'pass'
    """
    values = [float(x) for ncs in runs for x in ncs]
    if any(math.isnan(x) for x in values):
        raise ValueError("an N_c is NaN")
    finite = float(np.mean([math.isfinite(x) for x in values]))
    if finite < 1:
        return Threshold("fraction of N_c below 10^7", 1.0, ">=", "theory").judge(finite), None
    slopes = [loglog_slope(xs, ncs) for ncs in runs]
    return test.judge(list(t_interval(slopes, 0.95)), seeds=len(slopes)), slopes


@claim(
    "retrieval.capacity.nc_increases_v",
    source=SOURCE + ", abstract (capacity formulas); our F1 (docs/retrieval.md)",
    bounds=("retrieval.nc_pred",),
    provenance="abstract",
    templated=True,
    statement="N_c(0.9) grows in V at d={d_model}, L={seq_len} as F1 says: over V = {vocab_sizes}, the 95% "
    "Student-t interval over {n_seeds} base seeds of the log-log slope of N_c in V contains F1's "
    "slope over the same V and excludes no growth (0) and the slope of V ln V (the orthogonal "
    "scale F3, i.e. F1 without its population-margin factor); an infinite N_c fails",
    quick={"vocab_sizes": [128, 256, 512], "d_model": 32, "seq_len": 8, "n_seeds": 3},
    full={"vocab_sizes": [128, 256, 512, 1024, 2048, 4096, 8192], "d_model": 32, "seq_len": 8, "n_seeds": 3},
    seed_rule=SEED_RULE_SLOPE,
    controls=[
        Control(
            "law_sqrt",
            {"control": "law_pow:0.5"},
            "a competing law N_c ~ V^0.5: its slope interval must exclude F1's",
        ),
        Control(
            "law_square",
            {"control": "law_pow:2"},
            "a competing law N_c ~ V^2: its slope interval must exclude F1's",
        ),
    ],
)
def nc_increases_v(p, ctx):
    """Criterion (verify.criteria.IntervalTest) replaced the slope window [0.8, 1.6] on every seed,
    which held F1's slope and the measured one alike and so told nothing about F1; its verdict stays
    in details["previous_criterion"]."""
    Vs = p["vocab_sizes"]
    runs = [
        law(Vs, ncs, p.get("control"))
        for ncs in _per_seed(ctx, p["n_seeds"], [(V, p["d_model"], p["seq_len"]) for V in Vs])
    ]
    pred = [th.nc_pred(V, p["d_model"], p["seq_len"]) for V in Vs]
    v_ln_v = loglog_slope(Vs, [V * math.log(V) for V in Vs])
    test = IntervalTest(
        "log-log slope of N_c in V",
        loglog_slope(Vs, pred),
        {"no growth": 0.0, "V ln V (F3; F1 without its margin factor)": v_ln_v},
        theory_name="F1",
    )
    judgement, slopes = slope_judgement(Vs, runs, test)
    old = [
        bool(sl is not None and all(np.diff(ncs) > 0) and 0.8 <= sl <= 1.6)
        for ncs, sl in zip(runs, slopes or [None] * len(runs))
    ]
    return Outcome.judged(
        judgement,
        details={
            "vocab_sizes": Vs,
            "n_c_per_seed": runs,
            "n_c": runs[0],
            "slopes": slopes,
            "slope": slopes[0] if slopes else math.inf,
            "f1_slope": test.theory,
            "v_ln_v_slope": v_ln_v,
            "predicted": pred,
            "d_model": p["d_model"],
            "seq_len": p["seq_len"],
            "previous_criterion": {
                "rule": "strictly increasing and log-log slope in [0.8, 1.6] on every one of 3 base seeds",
                "passed": all(old),
                "per_seed": old,
            },
        },
    )


record(
    LedgerEntry(
        claim_id="retrieval.capacity.nc_increases_v",
        measured="d = 32, L = 8, V in {128, 256, 512}, each N_c over 3 draws; per-seed log-log slopes "
        "1.25, 1.32, 1.21 (seeds 0-2), 1.32, 1.21, 1.32 (1-3), 1.21, 1.32, 1.28 (2-4); 95% Student-t "
        "intervals at base seeds 0, 1, 2: [1.11, 1.41] (excludes F1's 1.44: fail), [1.12, 1.45] "
        "(holds F1's 1.44 and V ln V's 1.18: inconclusive, about 6 seeds would decide), [1.12, 1.42] "
        "(fail); no growth (0) rejected at every seed. The window [0.8, 1.6] passed at every seed",
        tried="F1's slope from F1's values on the same V (1.44, steeper than V ln V's 1.18 through its "
        "population-margin factor at d = 32); the same mismatch in all three exponents of "
        "retrieval.scaling.fit, and its pilot with equal label counts (see that claim's entry)",
        reason="the L-independent requirement that F1 leaves out (label counts vary, and a wrong "
        "label's crosstalk scales with its count) grows with V about like V ln V, so the measured "
        "slope sits between V ln V's and F1's. Measured at quick scale only; the criterion is kept",
        scales=("quick",),
    )
)


@claim(
    "retrieval.capacity.nc_decreases_d",
    source=SOURCE + ", abstract (capacity formulas); theory retrieval.n_sufficient (plateau)",
    provenance="derived",
    statement="N_c(0.9) at V=256, L=8 is non-increasing in d (each step within the bisection "
    "ratio 1.1), falls by more than 2x from d=32 to the largest d, and plateaus at the "
    "orthogonal threshold: N_c(d_max) / N_c^orth(0.9) in [2/3, 3/2] (the Gaussian "
    "crosstalk vanishes as d -> inf, so the sufficient condition tends to the "
    "orthogonal one), on every one of 3 base seeds",
    quick={
        "vocab_size": 256,
        "d_models": [32, 64, 128, 256, 512, 1024],
        "seq_len": 8,
        "plateau": [2 / 3, 1.5],
        "fall": 2.0,
        "n_seeds": 3,
    },
    full={
        "vocab_size": 256,
        "d_models": [32, 64, 128, 256, 512, 1024, 2048, 4096],
        "seq_len": 8,
        "plateau": [2 / 3, 1.5],
        "fall": 2.0,
        "n_seeds": 3,
    },
    seed_rule=SEED_RULE3,
    controls=[
        Control(
            "law_F1",
            {"control": "law_F1"},
            "the F1 heuristic's shape (a power law near d^-1.8 with no plateau), through "
            "the first measured point, must fail the plateau criterion",
        )
    ],
    bounds=("retrieval.nc_pred", "retrieval.n_sufficient"),
)
def nc_decreases_d(p, ctx):
    V, L, ds = p["vocab_size"], p["seq_len"], p["d_models"]
    pred = [th.nc_pred(V, d, L) for d in ds]
    suff = [th_suff.n_sufficient(V, d, L) for d in ds]
    rows = []
    for s, ncs in zip(ctx.seeds(p["n_seeds"]), _per_seed(ctx, p["n_seeds"], [(V, d, L) for d in ds])):
        if p.get("control") == "law_F1":
            ncs = [ncs[0] * q / pred[0] for q in pred]
        orth = shared_nc(ctx, V, V, L, "orthogonal", seed=s)
        steps_ok = all(b <= a * RATIO for a, b in zip(ncs, ncs[1:]))
        fall = ncs[0] / ncs[-1]
        ratio = ncs[-1] / orth
        ok = steps_ok and fall > p["fall"] and p["plateau"][0] <= ratio <= p["plateau"][1]
        slope = loglog_slope(ds[:3], ncs[:3])
        old = bool(all(np.diff(ncs[:3]) < 0) and -1.6 <= slope <= -0.5)
        rows.append(
            {
                "seed": s,
                "n_c": ncs,
                "n_c_orth": orth,
                "fall": fall,
                "plateau_ratio": ratio,
                "steps_non_increasing": steps_ok,
                "passed": ok,
                "slope_first3": slope,
                "previous_criterion_passed": old,
            }
        )
    return Outcome(
        predicted=f"non-increasing, fall > {p['fall']}, N_c(d_max)/N_c^orth in "
        f"[{p['plateau'][0]:.2f}, {p['plateau'][1]}]",
        measured="; ".join(
            f"N_c={[round(x) for x in r['n_c']]}, orth {r['n_c_orth']:.0f}, ratio {r['plateau_ratio']:.2f}"
            for r in rows
        ),
        passed=seeds_verdict([r["passed"] for r in rows]),
        details={
            "d_models": ds,
            "rows": rows,
            "n_c": rows[0]["n_c"],
            "predicted": pred,
            "n_sufficient": suff,
            "vocab_size": V,
            "seq_len": L,
            "previous_criterion": {
                "rule": "strictly decreasing over d in {32, 64, 128}, "
                "log-log slope in [-1.6, -0.5] (excluded F1's own "
                "slope -1.78; no plateau)",
                "passed": [r["previous_criterion_passed"] for r in rows],
            },
        },
    )


@claim(
    "retrieval.capacity.nc_increases_l",
    source=SOURCE + ", abstract (capacity formulas); our F1 (docs/retrieval.md)",
    bounds=("retrieval.nc_pred",),
    provenance="abstract",
    templated=True,
    statement="N_c(0.9) grows in L at V={vocab_size}, d={d_model} as F1 says: over L = {seq_lens}, the 95% "
    "Student-t interval over {n_seeds} base seeds of the log-log slope of N_c in L contains F1's "
    "slope over the same L (1: F1 is linear in L) and excludes no growth (0); an infinite N_c fails",
    quick={"vocab_size": 256, "d_model": 32, "seq_lens": [4, 8, 16, 32], "n_seeds": 3},
    full={"vocab_size": 256, "d_model": 32, "seq_lens": [4, 8, 16, 32, 64, 128, 256], "n_seeds": 3},
    seed_rule=SEED_RULE_SLOPE,
    controls=[
        Control(
            "law_flat",
            {"control": "law_pow:0"},
            "a competing law with no L dependence: its slope interval must exclude F1's",
        ),
        Control(
            "law_steep",
            {"control": "law_pow:1.5"},
            "a competing law N_c ~ L^1.5: its slope interval must exclude F1's",
        ),
    ],
)
def nc_increases_l(p, ctx):
    """Criterion (verify.criteria.IntervalTest) replaced the slope window (0, 1.2] on every seed,
    which held F1's slope (1) and the measured one alike and so told nothing about F1; its verdict
    stays in details["previous_criterion"]."""
    Ls = p["seq_lens"]
    runs = [
        law(Ls, ncs, p.get("control"))
        for ncs in _per_seed(ctx, p["n_seeds"], [(p["vocab_size"], p["d_model"], L) for L in Ls])
    ]
    pred = [th.nc_pred(p["vocab_size"], p["d_model"], L) for L in Ls]
    test = IntervalTest(
        "log-log slope of N_c in L", loglog_slope(Ls, pred), {"no growth": 0.0}, theory_name="F1"
    )
    judgement, slopes = slope_judgement(Ls, runs, test)
    old = [
        bool(sl is not None and all(np.diff(ncs) >= 0) and 0.0 < sl <= 1.2)
        for ncs, sl in zip(runs, slopes or [None] * len(runs))
    ]
    return Outcome.judged(
        judgement,
        details={
            "seq_lens": Ls,
            "n_c_per_seed": runs,
            "n_c": runs[0],
            "slopes": slopes,
            "slope": slopes[0] if slopes else math.inf,
            "f1_slope": test.theory,
            "predicted": pred,
            "vocab_size": p["vocab_size"],
            "d_model": p["d_model"],
            "previous_criterion": {
                "rule": "non-decreasing and log-log slope in (0, 1.2] on every one of 3 base seeds",
                "passed": all(old),
                "per_seed": old,
            },
        },
    )


record(
    LedgerEntry(
        claim_id="retrieval.capacity.nc_increases_l",
        measured="V = 256, d = 32, L in {4, 8, 16, 32}, each N_c over 3 draws (seed 0: 5233, 6153, 9475, "
        "16253); per-seed log-log slopes 0.55, 0.50, 0.59 (seeds 0-2), 0.50, 0.59, 0.54 (1-3), "
        "0.59, 0.54, 0.51 (2-4); 95% Student-t intervals at base seeds 0, 1, 2: [0.43, 0.66], "
        "[0.43, 0.66], [0.45, 0.65], each excluding F1's slope 1 and no growth (0). The window "
        "(0, 1.2] passed at every seed",
        tried="the same exponent from the fit of retrieval.scaling.fit (b = 0.47-0.49 over L in "
        "{4, 16}); a pilot at seeds 100, 101, 102 with every label count set to N/V: the L exponent "
        "between L = 4 and 16 rises from 0.51 to 1.21 at d = 32 (see that claim's entry)",
        reason="F1 treats every label count as N/V; with multinomial counts a wrong label's "
        "crosstalk scales with its count, an L-independent requirement, so N_c grows like "
        "A + B L (slope about 0.5 over L = 4..32) rather than like L. Measured at quick scale only; "
        "the criterion is kept",
        scales=("quick",),
    )
)


@claim(
    "retrieval.capacity.orth_d_independent",
    source=SOURCE + ", abstract ('beyond orthogonal'); F3",
    bounds=("retrieval.orth_scale",),
    provenance="derived",
    statement="with orthogonal embeddings (V=128, L=8) N_c(0.9) does not depend on d: over "
    "d in {128, 256, 512} max/min <= 1.25 on every one of 3 base seeds (Gaussian "
    "embeddings at d < V, the control, change by far more)",
    quick={
        "vocab_size": 128,
        "seq_len": 8,
        "d_models": [128, 256, 512],
        "embedding": "orthogonal",
        "spread": 1.25,
        "n_seeds": 3,
    },
    seed_rule=SEED_RULE3,
    controls=[
        Control(
            "gaussian_small_d",
            {"embedding": "gaussian", "d_models": [16, 32, 64]},
            "non-orthogonal embeddings below d = V: the crosstalk makes N_c depend on d",
        )
    ],
)
def orth_d_independent(p, ctx):
    V, L, ds, emb = p["vocab_size"], p["seq_len"], p["d_models"], p["embedding"]
    runs = _per_seed(ctx, p["n_seeds"], [(V, d, L) for d in ds], emb)
    spreads = [max(r) / min(r) if all(math.isfinite(x) for x in r) else math.inf for r in runs]
    passes = [sp <= p["spread"] for sp in spreads]
    return Outcome(
        predicted=f"max/min N_c over d <= {p['spread']}",
        measured=f"spreads {[round(x, 2) for x in spreads]}",
        passed=seeds_verdict(passes),
        details={
            "vocab_size": V,
            "seq_len": L,
            "d_models": ds,
            "embedding": emb,
            "n_c_per_seed": runs,
            "spreads": spreads,
            "v_ln_v": V * math.log(V),
        },
    )
