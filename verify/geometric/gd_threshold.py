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
from verify.claims import Outcome, claim, rng_for
from verify.criteria import Judgement, growth_law_judgement
from verify.geometric.gd_setup import SRC
from verify.geometric.scaling_setup import LAWS, SCALING_CONTROLS, law_table
from verify.measure import bootstrap_interval


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
    from verify.geometric.single_hop_setup import code_threshold
    from verify.measure import linear_fit
    from verify.sweep import run_grid

    def compute():
        base = {
            k: p[k]
            for k in ("n_relations", "mlp_width", "steps", "lr", "record_every", "d_max", "train_dtype")
            if k in p  # full= has no train_dtype: threshold_point's default float64 (was a KeyError)
        }
        grid = [{**base, "n_subjects": n} for n in p["n_values"]]
        return run_grid(
            threshold_search, grid, seeds=ctx.seeds(p["seeds"]), workers=p["workers"], progress=ctx.progress
        )

    key = ("geometric.gd.threshold", *(str(p[k]) for k in sorted(p) if k != "law"), ctx.seed)
    records = ctx.shared(key, compute)
    ns = list(p["n_values"])
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
                "construction_d": p["n_relations"]
                * ctx.shared(
                    ("geometric.code_threshold", n, 0.25, ctx.seed, 2, 121),
                    lambda n=n: code_threshold(n, 0.25, ctx.seed, range(2, 121))[0],
                ),
            }
        )
    fit = linear_fit([math.log(r["N"]) for r in rows], [r["mean"] for r in rows])
    construction_fit = linear_fit([math.log(r["N"]) for r in rows], [r["construction_d"] for r in rows])
    by_seed = [[table[n][s] for n in ns] for s in range(len(table[ns[0]]))]
    judgement = judge_threshold_scaling(ns, by_seed)
    span = ns[-1] / ns[0]
    factors = [hi / lo for lo, hi in zip(table[ns[0]], table[ns[-1]])]
    interval = bootstrap_interval(factors, 0.95, seed=ctx.seed)
    competitors = {name: LAWS[name](ns[-1]) / LAWS[name](ns[0]) for name in ("quarter", "cuberoot", "lnsq")}
    growth_ok = interval[0] > 1 and interval[1] < min(competitors.values()) * (1 - 1e-9)
    old = fit["slope"] > 0 and fit["r2"] >= 0.8
    return Outcome.judged(
        judgement,
        details={
            "rows": rows,
            "fit": fit,
            "construction_fit": construction_fit,
            "mean_trained_d_star": [r["mean"] for r in rows],
            "previous_criterion": {
                "rule": "span >= 100, 95% bootstrap interval of d*(N_max)/d*(N_min) in (1, smallest competitor "
                "factor), slope > 0 and R^2 >= 0.8 on per-N means (quick scale: ledgered, not reproduced)",
                "passed": bool(span >= 100 and growth_ok and old),
                "growth_factor_interval": list(interval),
                "growth_factors": factors,
                "competitor_factors": competitors,
            },
            "tried": [r["result"]["tried"] for r in records],
        },
    )
