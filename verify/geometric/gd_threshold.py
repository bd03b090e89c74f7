"""The trained single-hop threshold against N (docs/geometric.md#the-trained-model).

The smallest embedding dimension d* at which the trained model (verify.geometric.gd) reaches train
accuracy 1, found by bisection over d for each (N, seed) through verify.sweep.run_grid. "Log
dimension suffices" is the paper's [abstract]; the sweep and the criterion are [derived]: the same
growth-law criterion as single_hop.log_scaling (verify.criteria.growth_law_judgement), with the
same competing-law controls.
"""

from __future__ import annotations

import math

import numpy as np

from constructions.geometric.train import train_accuracy, train_model
from constructions.search import smallest_size
from constructions.seeding import torch_generator
from constructions.tasks import make_bijections
from verify.claims import claim, rng_for, shared
from verify.criteria import Judgement, growth_law_judgement
from verify.geometric.scaling_setup import SCALING_CONTROLS, code_threshold, law_table
from verify.geometric.single_hop_setup import SRC, TrainRecipe
from verify.measure import linear_fit
from verify.sweep import run_grid


def threshold_point(params, seed):
    """Sweep point: does the trained model at (N, R, d, m) reach train accuracy 1 within ``steps``?"""
    import torch

    gen = torch_generator(int(seed))
    perms = make_bijections(
        params["n_subjects"],
        params["n_relations"],
        rng_for(seed, "geometric.gd_threshold.make_bijections", params["n_subjects"]),
    )
    dtype = {"float32": torch.float32, "float64": torch.float64}[params.get("train_dtype", "float64")]
    model = train_model(
        perms,
        params["dim"],
        params["mlp_width"],
        steps=params["steps"],
        lr=params["lr"],
        generator=gen,
        record_every=params["record_every"],
        stop_at_full_accuracy=True,
        dtype=dtype,
    )
    acc = train_accuracy(model)
    return {"accuracy": acc, "steps_run": model.history["step"][-1]}


def trained_threshold(n, p, seed) -> tuple[int, list]:
    """Smallest d in [1, d_max] whose trained model reaches accuracy 1 (the predicate), by bisection
    (constructions.search; reaching accuracy 1 is treated as monotone in d, as it is for the
    construction). d_max is probed first (ValueError when it fails), then the bisection runs over
    the dimensions below it (d_max when none stores); returns (d*, the points tried below d_max)."""
    d_max, tried = p["d_max"], []
    base = {
        k: p[k] for k in ("n_relations", "mlp_width", "steps", "lr", "record_every", "train_dtype") if k in p
    }
    if threshold_point({**base, "n_subjects": n, "dim": d_max}, seed)["accuracy"] < 1.0:
        raise ValueError(f"d_max={d_max} does not reach accuracy 1 at N={n}; raise d_max or steps")

    def reaches(dim: int) -> bool:
        res = threshold_point({**base, "n_subjects": n, "dim": dim}, seed)
        tried.append({"dim": dim, **res})
        return res["accuracy"] == 1.0

    below = smallest_size(range(1, d_max), reaches).size if d_max > 1 else None
    return (d_max if below is None else below), tried


def threshold_search(params, seed) -> dict:
    """Sweep point (verify.sweep): the trained threshold d* at one N for one seed."""
    d_star, tried = trained_threshold(params["n_subjects"], params, seed)
    return {"d_star": d_star, "tried": tried}


def judge_threshold_scaling(ns, by_seed) -> Judgement:
    """threshold_scaling's criterion on a measurement (per-seed trained thresholds over ``ns``):
    :func:`verify.criteria.growth_law_judgement`, inconclusive (not pass) over a grid spanning less
    than two decades. The check is this on the measured table; ``python -m verify oc`` feeds it
    simulated ones.

    >>> judge_threshold_scaling([64, 128, 256, 512], [[4, 4, 5, 5], [3, 4, 4, 6]]).verdict
    'inconclusive'
    """
    judgement = growth_law_judgement(ns, by_seed)
    span = ns[-1] / ns[0]
    if span < 100 and judgement.verdict != "fail":
        judgement = Judgement(
            "inconclusive",
            {"span": ">= 100 (two decades, so that the laws can be told apart)", **judgement.predicted},
            {"span": span, **judgement.measured},
            {
                "rule": "range",
                "value": span,
                "kind": "grid_span",
                "unit": "ratio N_max/N_min",
                "coarse": True,
                "text": f"the grid spans {span:g}x < 100x; " + judgement.resolution["text"],
                "parts": {"growth": dict(judgement.resolution)},
            },
            "a grid over two decades of N (the full scale's N = 64..16384)",
        )
    return judgement


@shared
def trained_thresholds(
    ctx, n_values: list, n_relations: int, recipe: TrainRecipe, n_seeds: int, workers: int, progress: bool
) -> list[dict]:
    """The sweep records (verify.sweep.run_grid) of :func:`threshold_search`: the trained threshold
    d* per N of ``n_values`` and seed of ctx.seeds(n_seeds), once per run (the claim and its
    controls share it).

    >>> from verify.claims import Context
    >>> recipe = TrainRecipe(8, 50, 3e-2, 25, 4, "float32")
    >>> recs = trained_thresholds(Context(), [8], 1, recipe, 1, 1, False)
    >>> [(r["params"]["n_subjects"], 1 <= r["result"]["d_star"] <= 4) for r in recs]
    [(8, True)]
    """
    grid = [{"n_relations": n_relations, **recipe.as_dict(), "n_subjects": n} for n in n_values]
    return run_grid(threshold_search, grid, seeds=ctx.seeds(n_seeds), workers=workers, progress=progress)


@shared
def construction_d0(ctx, n: int, margin: float) -> int:
    """The construction's block dimension at N = n: the smallest d0 in 2..120 whose spherical codes
    (of the run's seed) reach ``margin`` (verify.geometric.scaling_setup.code_threshold).

    >>> from verify.claims import Context
    >>> construction_d0(Context(), 64, 0.25) == code_threshold(64, 0.25, 0, range(2, 121))[0]
    True
    """
    return code_threshold(n, margin, ctx.seed, range(2, 121))[0]


@claim(
    "geometric.gd.threshold_scaling",
    source=f"{SRC}, log dimension suffices (abstract)",
    provenance="abstract",
    controls=SCALING_CONTROLS,
    needs=("torch",),
    templated=True,
    seed_rule="Student-t interval over seeds of the per-seed fitted growth exponent, 97.5% in each of two "
    "families of laws; a grid under two decades of N is inconclusive",
    statement="the smallest trained d reaching train accuracy 1 grows like ln N over N = {n_values} ({seeds} "
    "seeds): fitting d* = a + b g(N) with g = (N^p - 1)/p and with g = (ln N)^q, the 97.5% Student-t "
    "intervals over seeds of p and q contain ln N's (p = 0, q = 1) and exclude N^(1/8) ... N^(1/3) and "
    "(ln N)^(1/2), (ln N)^(3/2), (ln N)^2; a grid spanning less than two decades (N_max/N_min < 100) "
    "cannot tell the laws apart and is inconclusive (derived criterion); the construction's "
    "R*d0*(margin 0.25) is reported beside it",
    quick={
        "n_values": [64, 128, 256, 512],
        "n_relations": 2,
        "mlp_width": 32,
        "steps": 200,
        "lr": 3e-2,
        "record_every": 25,
        "d_max": 8,
        "seeds": 2,
        "workers": 1,
        "train_dtype": "float32",
        "law": "measured",
    },
    full={
        "n_values": [64, 256, 1024, 4096, 16384],
        "n_relations": 4,
        "mlp_width": 128,
        "steps": 1000,
        "lr": 1e-2,
        "record_every": 50,
        "d_max": 64,
        "seeds": 3,
        "workers": 2,
        "law": "measured",
    },
)
def gd_threshold_scaling(p, ctx):
    """Criterion changed (not because it failed): the old rule (a > 0, R^2 >= 0.8 on the per-N means) also
    passed synthetic N^(1/4), N^(1/3) and (ln N)^2 data; its result is kept in
    details["previous_criterion"]. Pilot (recorded here): one seed per N gave d* = 4, 4, 5, 5 (seed 0) and
    3, 4, 4, 6 (seed 1). The trained threshold barely moves, unlike the construction's R*d0* (26 -> 50):
    argmax accuracy with a trainable, unnormalised unembedding needs no margin. At quick scale (N = 64..512,
    under one decade) N^(1/4) grows by 1.68 and ln N by 1.5, which two seeds cannot separate, and d* in 3..6
    moves in integer steps of ~20%; separating the laws needs two decades, which a trained sweep does not
    fit in the CPU budget, so the quick verdict is "inconclusive" (it was a ledger entry before the
    third verdict existed: it was never a refutation) and the full scale (N = 64..16384) decides. The
    growth-factor rule's own result is kept in details["previous_criterion"]."""
    ns = list(p["n_values"])
    # full= has no train_dtype: TrainRecipe.of takes threshold_point's default, float64
    records = trained_thresholds(
        ctx, ns, p["n_relations"], TrainRecipe.of(p), p["seeds"], p["workers"], ctx.progress
    )
    table = {n: [r["result"]["d_star"] for r in records if r["params"]["n_subjects"] == n] for n in ns}
    table = law_table(table, ns, p["law"])
    rows = []
    for n in ns:
        rows.append(
            {
                "N": n,
                "trained_d_star": table[n],
                "mean": float(np.mean(table[n])),
                "sd": float(np.std(table[n])),
                "construction_d": p["n_relations"] * construction_d0(ctx, n, 0.25),
            }
        )
    fit = linear_fit([math.log(r["N"]) for r in rows], [r["mean"] for r in rows])
    construction_fit = linear_fit([math.log(r["N"]) for r in rows], [r["construction_d"] for r in rows])
    by_seed = [[table[n][s] for n in ns] for s in range(len(table[ns[0]]))]
    judgement = judge_threshold_scaling(ns, by_seed)
    return judgement, {
        "rows": rows,
        "fit": fit,
        "construction_fit": construction_fit,
        "mean_trained_d_star": [r["mean"] for r in rows],
        "tried": [r["result"]["tried"] for r in records],
    }
