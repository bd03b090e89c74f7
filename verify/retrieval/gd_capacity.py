"""Capacity of the GD-trained attention model itself (2603.15923, abstract: "storage capacity" of the
transformer "trained by empirical gradient descent"). Every other capacity claim measures the one-step oracle
memory (docs/retrieval.md#setting); this one measures the full model after the three steps of gradient descent
(eta = V, gamma = 2 L^2), on fresh test sequences. The N of one bisection are nested subsets of one sample per
draw, so the accuracy is a learning curve in N.

N_c^GD(target) is the smallest N whose three-step test accuracy (4096 sequences) reaches the
target, by geometric bisection over [128, 32768] stopped at ratio 1.2; the accuracy at each N is
the mean over 3 draws (task, training pool, test set). The points and the target 0.5 were set
from pilots on separate random keys (101, 102): at d = 32, V = 128 the three-step accuracy
saturates near 0.5 (so V grows at d = 64), and from d = 64 to d = 128 N_c^GD(0.5) no longer
falls (861 -> 1024, 1024 -> 724: the GD model's capacity plateaus in d like the oracle memory's),
so the d contrast is d = 32 against d = 64. A first single-draw version with target 0.4 failed
at seed 0 (noisy bisection) and is not registered.
"""

from __future__ import annotations

import math

import numpy as np

from constructions.retrieval.gd import evaluate, three_steps_closed_form
from constructions.retrieval.task import RetrievalData, make_retrieval_task, sample_sequences
from constructions.search import smallest_size_geometric
from verify.claims import Control, choice, claim, rng_for, shared
from verify.criteria import Judgement, Sequential, Threshold, all_of
from verify.retrieval.capacity_setup import N_TEST, SOURCE, critical_n_run

N_RANGE_GD = (128, 32768)
RATIO_GD = 1.2
#: base seeds per verdict, set on pilot base seeds 100-103 (never judged): ln ratios 1.04, 1.39,
#: 0.87, 0.87 (bigger V) and 1.21, 0.69, 1.04, 0.87 (smaller d), sd 0.24 and 0.22, so 4 seeds give
#: a 95% half-width of about 0.38 and a lower end near 0.6, above ln 1.3 = 0.26 with room for an
#: outlier such as base seed 13's ratio of 1.0 (ledger)
N_REPLICATES = 4
#: the looks of the staged rule (verify.criteria.Sequential): judged at N_REPLICATES base seeds,
#: and at twice as many where that look does not decide. The first look spends 0.025 per
#: direction, the one-sided level of the 95% t-interval the rule read before, so a verdict at 4
#: seeds is that rule's; ``verify oc`` gave power 0.69 at 4 seeds and 0.99 at 8
LOOKS = (N_REPLICATES, 2 * N_REPLICATES)


@shared
def _pool(ctx, V: int, d: int, L: int, seed: int) -> tuple:
    """One task, a pool of N_max training sequences and a test set per (V, d, L, seed): every N of
    the bisection trains on the first N sequences of the pool (nested samples, common task), so
    the accuracy is a learning curve in N rather than a fresh draw at every N."""
    rng = rng_for(int(seed), "retrieval.gd_capacity.rng", V, d, L)
    task = make_retrieval_task(V, d, rng)
    return task, sample_sequences(task, L, N_RANGE_GD[1], rng), sample_sequences(task, L, N_TEST, rng)


def gd_accuracy_one(ctx, V, d, L, N, seed, init=False) -> float:
    """Three-step test accuracy acc(W_v^(2), W^(1)) after training on the first N sequences of
    the pool; ``init``: the model at initialisation (eta = gamma = 0)."""
    eta, gamma = (0.0, 0.0) if init else (float(V), float(2 * L * L))
    task, pool, test = _pool(ctx, V, d, L, seed)
    n = int(N)
    data = RetrievalData(
        task=task, tokens=pool.tokens[:n], info_pos=pool.info_pos[:n], labels=pool.labels[:n]
    )
    steps = three_steps_closed_form(data, eta, gamma)
    return evaluate(test, steps.w_out_2, steps.w_kq_1).accuracy


def gd_accuracy(ctx, V, d, L, N, seed, init=False, n_draws=3) -> float:
    """Mean three-step test accuracy over ``n_draws`` draws (task, pool, test) keyed (seed, k)."""
    return float(np.mean([gd_accuracy_one(ctx, V, d, L, N, seed * 1000 + k, init) for k in range(n_draws)]))


def critical_n_gd(ctx, V, d, L, seed, target, init=False, n_draws=3) -> dict:
    """N_c^GD(target) by the geometric bisection of the module doc
    (:func:`constructions.search.smallest_size_geometric`), with every evaluation."""
    trace = []

    def reaches(N: int) -> bool:
        trace.append([int(N), gd_accuracy(ctx, V, d, L, N, seed, init, n_draws)])
        return trace[-1][1] >= target

    found = smallest_size_geometric(*N_RANGE_GD, reaches, RATIO_GD)
    if found.size is None:
        return {"n_c": math.inf, "trace": trace}
    return {"n_c": float(found.size), "trace": trace if found.below is None else sorted(trace)}


def gd_capacity_judgement(runs: list, factor: float, looks: tuple[int, ...] = LOOKS) -> Judgement:
    """The criterion of ``retrieval.gd.capacity`` over replicates (base seeds), each a dict of
    N_c^GD at the points "base", "bigger_v" and "smaller_d": every N_c^GD finite (a
    verify.criteria.Threshold on the finite fraction; an infinite one fails alone, as there is no
    ratio), then for each of the two contrasts ln(N_c^GD(point) / N_c^GD(base)) over replicates
    judged by a staged rule (verify.criteria.Sequential at ``looks``, error 0.05 per direction over
    the looks) against ln(``factor``) (verify.criteria.all_of of the two): the geometric-mean ratio
    exceeds ``factor``; inconclusive while a look leaves it undecided. NaN raises.

    >>> runs = [{"base": 512.0, "bigger_v": 861.0 * f, "smaller_d": 724.0 * f} for f in (1.0, 1.05, 1.1, 1.0)]
    >>> gd_capacity_judgement(runs, 1.3).verdict
    'pass'
    >>> gd_capacity_judgement(runs[:3] + [{"base": 512.0, "bigger_v": 861.0, "smaller_d": math.inf}], 1.3).verdict
    'fail'
    """
    values = [float(v) for n_c in runs for v in n_c.values()]
    if any(math.isnan(v) for v in values):
        raise ValueError("an N_c^GD is NaN")
    finite = float(np.mean([math.isfinite(v) for v in values]))
    if finite < 1:
        return Threshold("fraction of N_c^GD below 32768 (finite)", 1.0, ">=", "theory").judge(finite)

    def contrast(key: str) -> Judgement:
        logs = [math.log(n_c[key] / n_c["base"]) for n_c in runs]
        rule = Sequential(
            f"ln(N_c^GD({key.replace('_', ' ')})/N_c^GD(base))", math.log(factor), ">", "convention", looks
        )
        return rule.judge(logs, seeds=list(range(len(logs))))

    return all_of(bigger_v=contrast("bigger_v"), smaller_d=contrast("smaller_d"))


@claim(
    "retrieval.gd.capacity",
    source=SOURCE + ", abstract (capacity of the GD-trained model)",
    provenance="derived",
    templated=True,
    statement="the three-step GD-trained model's N_c^GD({target}) (mean test accuracy of {n_draws} draws) "
    "grows with V and falls with d: the mean over base seeds of ln(N_c^GD(point) / N_c^GD(base)) at "
    "(V, d, L) = {bigger_v} (V doubled) and at {smaller_d} (d halved) against N_c^GD at {base} lies "
    "above ln {factor} (the geometric-mean ratio exceeds {factor}, a convention above the bisection "
    "ratio 1.2), judged in stages at {looks} base seeds by one-sided Student-t bounds (error 0.05 "
    "per direction over the looks, optional stopping included), every N_c^GD finite (below 32768)",
    quick={
        "base": [64, 64, 4],
        "bigger_v": [128, 64, 4],
        "smaller_d": [64, 32, 4],
        "target": 0.5,
        "factor": 1.3,
        "n_draws": 3,
        "looks": list(LOOKS),
        "weights": "trained",
    },
    seed_rule="sequential looks over base seeds seed..seed+n-1 of the log ratios (the first look that "
    "decides); each accuracy is the mean of 3 draws keyed (base seed, k)",
    controls=[
        Control(
            "init",
            {"weights": "init"},
            "the model at initialisation (all weights 0) ties every label, so no N reaches the target",
        )
    ],
)
def gd_capacity(p, ctx):
    """The former rule read one base seed's two ratios against 1.3 as points; the base curve is
    flat around 0.5, so its crossing moved 4x between seeds and the ratio fell to 1.0 at base seed
    13 (ledger, cause resolution). The replicate count was set on pilot base seeds 100-103 (see
    :data:`N_REPLICATES`); the base seeds are measured in stages (:data:`LOOKS`), the next stage
    only where the look before it does not decide."""
    init = choice(p, "weights", ("trained", "init")) == "init"  # the control
    keys = ("base", "bigger_v", "smaller_d")
    looks = tuple(int(n) for n in p["looks"])
    seeds = ctx.seeds(looks[-1])
    per_seed: list[dict] = []
    for look in looks:
        per_seed += [
            {k: critical_n_gd(ctx, *p[k], s, p["target"], init, p["n_draws"]) for k in keys}
            for s in seeds[len(per_seed) : look]
        ]
        judgement = gd_capacity_judgement(
            [{k: v["n_c"] for k, v in row.items()} for row in per_seed], p["factor"], looks
        )
        if judgement.verdict != "inconclusive":
            break
    runs = {k: v for k, v in per_seed[0].items()}
    n = {k: v["n_c"] for k, v in runs.items()}
    n_per_seed = [{k: v["n_c"] for k, v in row.items()} for row in per_seed]
    oracle = {k: critical_n_run(ctx, *p[k], ctx.seed, target=p["target"])["n_c"] for k in keys}
    return judgement, {
        "n_c_gd": n,
        "n_c_gd_per_seed": n_per_seed,
        "traces": {k: v["trace"] for k, v in runs.items()},
        "points": {k: p[k] for k in keys},
        "oracle_n_c": oracle,
        "target": p["target"],
        "lr_value": "V",
        "lr_attn": "2 L^2",
        "gd_over_oracle": {k: n[k] / oracle[k] for k in keys},
    }
