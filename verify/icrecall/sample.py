"""Sample complexity of IC-recall fine-tuning (docs/icrecall.md, claim sample_complexity).

N*(eps) is the smallest N_train on a factor-2 grid whose held-out accuracy is >= 1 - eps
[derived proxy for the abstract's polylog(#triplets) statement], found by scanning the grid
upwards (no monotonicity assumed; the whole scanned curve is recorded), and interpolated in
log N_train between the last grid point below 1 - eps and the first above it. Worlds grow in S at
fixed R and fixed d (d = ceil(32 ln max N_f) = 295, the heuristic memory dimension of
docs/icrecall.md for the largest world), so that only N_f varies, over the range of
docs/icrecall.md, N_f = 10^3 -> 10^4 (S = 200 -> 2000): two sizes at quick scale, three at full.

The verdict [derived rule]: each seed's power-law exponent of N* in N_f (the slope of ln N* on
ln N_f), its mean over seeds below 0.5 (a power law with exponent >= 0.5 rejected), judged in
stages by one-sided Student-t bounds (:class:`verify.criteria.Sequential`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping

import numpy as np

from constructions.search import smallest_size
from theory.icrecall import SOURCE, fit_sample_complexity
from verify.claims import Context, Control, claim
from verify.criteria import run_staged
from verify.icrecall.finetune_setup import PFULL, STRUCT_ABLATION, train_run

#: the staged looks (verify.criteria.Sequential) at each scale: see :data:`PILOT`
_PFULL = {k: v for k, v in PFULL.items() if k != "n_seeds"}  # the looks set the seed count
QUICK = dict(
    _PFULL,
    dim=math.ceil(32 * math.log(10000)),
    subjects=[200, 2000],
    grid=[2**k for k in range(10)],
    eps=0.1,
    looks=[3],
    struct_subjects=[200, 2000],
    law=None,
)
FULL = dict(
    _PFULL,
    n_ans_per_rel=20,
    dim=math.ceil(32 * math.log(10000)),
    subjects=[200, 632, 2000],
    grid=[2**k for k in range(13)],
    eps=0.1,
    looks=[3, 6, 12, 24],
    struct_subjects=[200, 2000],
    law=None,
)
#: the pilot that fixed the looks: the quick setting's N* curves at seeds 100-111 (never judged;
#: revision 51028dc, N* interpolated as the claim does), about 6.7 CPU-s per seed. Per-seed
#: exponents: mean 0.507, sd 0.346, 95% t-interval [0.287, 0.727]: the mean sits on 0.5, so no
#: affordable budget decides it (staged_rates at that spread, 4000 runs: looks (3,) inconclusive
#: 0.90, (3, 6, 12, 24) 0.90 after 22.8 seeds on average; a mean 0.3 below 0.5 passes 0.99 at
#: (3, 6, 12, 24)). Quick scale therefore looks once, at 3 seeds (about 20 CPU-s), and the staged
#: budget is spent at full scale. The former quick range N_f = 10^2 -> 10^3 (S = 20 -> 200, d = 222)
#: gave grid N* 2 -> 8 and 4 -> 32 at pilot seeds 100 and 101 (exponents 0.6 and 0.9)
PILOT = {
    "seeds": list(range(100, 112)),
    "revision": "51028dc",
    "exponents": [-0.003, 0.374, 0.506, 1.074, 0.121, 0.604, 0.53, 0.346, 0.586, 0.587, 1.159, 0.198],
    "mean": 0.507,
    "sd": 0.346,
    "t_interval95": [0.287, 0.727],
    "former_quick_range_grid_exponents": {"100": 0.602, "101": 0.903},
}


def sample_need(
    p: Mapping[str, Any], ctx: Context, n_subj: int, seed: int, param: str = "full"
) -> tuple[int | None, list[dict]]:
    """(N*, curve) at one world size and seed: the first grid point with accuracy >= 1 - eps (the
    predicate), the grid scanned upwards (constructions.search).

    >>> p = dict(QUICK, n_rel=3, n_ans_per_rel=4, dim=40, n_pairs=3, n_test=50, steps=3, grid=[2, 4])
    >>> n_star, curve = sample_need(dict(p, eps=1.0), Context(), 8, 0)
    >>> n_star, [c["n_train"] for c in curve]
    (2, [2])
    """
    q = dict(p, n_subj=n_subj)
    extra = dict(param="struct", slots=False, lr=STRUCT_ABLATION["lr"]) if param == "struct" else {}
    curve = []

    def learns(n_train: int) -> bool:
        run = train_run(q, ctx, n_train=n_train, seed=seed, **extra)
        curve.append({"n_train": n_train, "acc": run["acc"], "query_share": run["metrics"]["query_share"]})
        return run["acc"] >= 1 - p["eps"]

    return smallest_size(p["grid"], learns, strategy="scan").size, curve


def exponent_interval(n_facts, n_star, level=0.95) -> dict:
    """Pooled least-squares slope k of log N* on log N_f with its Student-t interval
    (n - 2 degrees of freedom); a zero residual gives a zero-width interval."""
    from scipy import stats

    x, y = np.log(np.asarray(n_facts, float)), np.log(np.asarray(n_star, float))
    if x.size < 3 or np.unique(x).size < 2:
        raise ValueError("an exponent interval needs >= 3 points at >= 2 distinct N_f")
    A = np.stack([np.ones_like(x), x], axis=1)
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    resid = y - A @ coef
    s2 = float(resid @ resid) / (x.size - 2)
    se = math.sqrt(s2 / float(((x - x.mean()) ** 2).sum()))
    half = float(stats.t.ppf((1 + level) / 2, x.size - 2)) * se
    return {
        "exponent": float(coef[1]),
        "low": float(coef[1] - half),
        "high": float(coef[1] + half),
        "se": se,
        "points": int(x.size),
    }


def interpolated_need(curve: list[dict], eps: float) -> float | None:
    """N* between grid points: the scanned curve (``n_train``, ``acc``; scanned upwards to the
    first point with accuracy >= 1 - eps) interpolated linearly in log2 N_train between the last
    point below 1 - eps and the first at or above it. The grid floor when the first point already
    clears (censored there); None when no point clears (N* above the grid).

    >>> interpolated_need([{"n_train": 2, "acc": 0.5}, {"n_train": 4, "acc": 0.95}], 0.1)
    3.7...
    >>> interpolated_need([{"n_train": 1, "acc": 0.95}], 0.1), interpolated_need([{"n_train": 1, "acc": 0.5}], 0.1)
    (1.0, None)
    """
    target = 1 - eps
    if not curve or curve[-1]["acc"] < target:
        return None
    if len(curve) == 1:
        return float(curve[0]["n_train"])
    (n0, a0), (n1, a1) = ((c["n_train"], c["acc"]) for c in curve[-2:])
    if not a0 < target <= a1:
        raise ValueError(f"the curve's last two points {a0}, {a1} do not straddle 1 - eps = {target}")
    frac = (target - a0) / (a1 - a0)
    return float(2 ** (math.log2(n0) + frac * (math.log2(n1) - math.log2(n0))))


def seed_exponent(n_facts: list[int], n_star: list[float]) -> float:
    """One seed's power-law exponent of N* in N_f: the least-squares slope of ln N* on ln N_f,
    rounded to 12 decimals (so that an exact power law, as the control's, gives its exponent
    exactly, not 0.4999999999999998).

    >>> round(seed_exponent([100, 1000, 10000], [4.0, 8.0, 16.0]), 4)
    0.301
    """
    if len(n_facts) != len(n_star) or len(set(n_facts)) < 2:
        raise ValueError("an exponent needs N* at >= 2 distinct N_f, one N* per N_f")
    if any(not (v is not None and v > 0 and math.isfinite(v)) for v in n_star):
        raise ValueError(f"N* must be finite and positive at every N_f, got {n_star}")
    return round(float(np.polyfit(np.log(n_facts), np.log(n_star), 1)[0]), 12)


def polylog_judgement(exponents: list[float], seeds: list, looks: tuple[int, ...], off_grid: int):
    """sample_complexity.polylog's criterion: N* on the grid at every (seed, N_f)
    (:class:`verify.criteria.Agreement`: no pair off the grid) and the mean over seeds of the
    per-seed power-law exponent below 0.5 (:class:`verify.criteria.Sequential` at ``looks``, one-sided
    Student-t bounds, error 0.05 per direction over the looks; a convention), joined by
    :func:`verify.criteria.all_of`.

    >>> polylog_judgement([0.1, 0.2, 0.15], [0, 1, 2], (3, 6), 0).verdict
    'pass'
    >>> polylog_judgement([0.9, 1.0, 0.95], [0, 1, 2], (3, 6), 0).verdict
    'fail'
    """
    from verify.criteria import Agreement, Sequential, all_of

    parts = {"on_grid": Agreement("(seed, N_f) pairs with N* above the grid", 0).judge(off_grid)}
    if len(exponents) >= looks[0]:  # a pair off the grid already fails the claim
        parts["exponent"] = Sequential(
            "mean power-law exponent of N* in N_f", POLYLOG_MAX, "<", "convention", looks
        ).judge(exponents, seeds=seeds)
    return all_of(**parts)


#: the exponent below which N*'s growth counts as slower than any power law we reject (a convention)
POLYLOG_MAX = 0.5


@claim(
    "icrecall.sample_complexity.polylog",
    source=SOURCE + ", polylog(#triplets) samples [abstract]",
    provenance="derived",
    statement="the fine-tuning sample need N*(eps=0.1) of P-full with slot embeddings (d = {dim} "
    "fixed, factor-2 grid, N* interpolated in log N_train between grid points) grows slower than "
    "any power law of exponent >= 0.5 in N_f: over S = {subjects} (N_f = 5 S) N* is on the grid "
    "for every size and seed, and the mean over seeds of each seed's power-law exponent of N* in "
    "N_f lies below 0.5, judged in stages at {looks} seeds by one-sided Student-t bounds (error 0.05 "
    "per direction over the looks; fail: above; inconclusive: the last look does not decide, or N* "
    "sits on the grid floor at the smallest N_f, where it is censored). 0.5 is a convention",
    templated=True,
    quick=QUICK,
    full=FULL,
    seed_rule="sequential looks over the seeds seed..seed+n-1 of the per-seed exponent (a one-sided "
    "Student-t bound per look; per-seed N* and curves recorded)",
    controls=[
        Control(
            "law_sqrt",
            {"law": 0.5},
            "a synthetic competing law N* ~ N_f^0.5 (started from each seed's measured "
            "N* at the smallest N_f) must not pass the exponent criterion",
        )
    ],
)
def _polylog(p, ctx):
    """Each seed's exponent is the slope of ln N* on ln N_f over the sizes, N* interpolated between
    grid points (:func:`interpolated_need`); the mean over seeds is judged in stages
    (:func:`polylog_judgement`). The first three seeds also record P-struct's N* (an ablation).

    Until this revision every (N_f, grid N*) of 3 seeds was pooled into one least-squares fit whose
    95% interval of the exponent had to lie below 0.5: not simulated by ``verify oc`` (no
    Student-t interval over a seed count) and undecided at base seed 0 (quick, S = 20 -> 200, d =
    222: [0.246, 1.360], N* on the grid floor at seed 0; full, S = 200 -> 2000, d = 295, 5 seeds:
    [0.171, 0.672]). Quick scale then spanned N_f = 10^2 -> 10^3, below the range of
    docs/icrecall.md (10^3 -> 10^4): it now runs that range at two sizes (S = 200 and 2000, d =
    295), the full scale at three (S = 200, 632, 2000, D = 20); a run at S = 2000 costs about 1
    CPU-s. The pilot numbers that fixed the looks are in :data:`PILOT`."""
    if p["law"] is not None and not p["law"] > 0:
        raise ValueError(f"law={p['law']} must be a positive exponent (or None)")
    n_facts = [S * p["n_rel"] for S in p["subjects"]]
    looks = tuple(int(n) for n in p["looks"])
    seeds = ctx.seeds(looks[-1])

    def measure(seed):
        needs = [sample_need(p, ctx, S, seed) for S in p["subjects"]]
        curves = [c for _, c in needs]
        interp = [interpolated_need(c, p["eps"]) for c in curves]
        row = {"seed": seed, "n_star": [n for n, _ in needs], "n_star_interp": interp, "curves": curves}
        if p["law"] is not None and interp[0] is not None:
            row["measured_n_star_interp"] = interp
            row["n_star_interp"] = [interp[0] * (n / n_facts[0]) ** p["law"] for n in n_facts]
        ok = all(v is not None for v in row["n_star_interp"])
        row["exponent"] = seed_exponent(n_facts, row["n_star_interp"]) if ok else None
        return row

    def judge(rows):
        off = sum(v is None for r in rows for v in r["n_star_interp"])
        done = [r for r in rows if r["exponent"] is not None]
        return polylog_judgement([r["exponent"] for r in done], [r["seed"] for r in done], looks, off)

    judgement, per_seed = run_staged(looks, seeds, measure, judge)
    floor = [r["seed"] for r in per_seed if r["n_star"][0] is not None and r["n_star"][0] <= p["grid"][0]]
    if floor and judgement.verdict == "pass":
        judgement = dataclasses.replace(
            judgement,
            verdict="inconclusive",
            budget=f"a grid below N* (N* sits on the grid floor {p['grid'][0]} at seeds {floor}: censored)",
        )
    struct = [
        {
            "seed": r["seed"],
            "n_star": [sample_need(p, ctx, S, r["seed"], "struct")[0] for S in p["struct_subjects"]],
        }
        for r in per_seed[:3]
    ]
    stars = [r["n_star"] for r in per_seed]
    details = {
        "n_facts": n_facts,
        "subjects": list(p["subjects"]),
        "dim": p["dim"],
        "grid": list(p["grid"]),
        "eps": p["eps"],
        "per_seed": per_seed,
        "exponents": [r["exponent"] for r in per_seed],
        "seeds": [r["seed"] for r in per_seed],
        "p_struct_ablation": {"subjects": list(p["struct_subjects"]), "per_seed": struct},
        "law": p["law"],
        "n_star": stars,
        "floor_seeds": floor,
    }
    if all(v is not None for row in stars for v in row):  # the pooled fit of grid N*: recorded, not judged
        ci = exponent_interval([n for _ in stars for n in n_facts], [v for row in stars for v in row])
        details["exponent_interval"] = ci
        details["fit_per_seed"] = [fit_sample_complexity(n_facts, row) for row in stars]
    return judgement, details
