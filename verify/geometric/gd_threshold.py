"""The trained single-hop threshold against N (docs/geometric.md#the-trained-model).

The smallest embedding dimension d* at which the trained model (verify.geometric.gd) reaches train
accuracy 1, found by bisection over d for each (N, seed) through verify.sweep.run_grid. "Log
dimension suffices" is the paper's [abstract]; the sweep and the criterion are [derived]: the same
growth-factor rule as single_hop.log_scaling (verify.geometric.scaling), with the same competing-law
controls.
"""

from __future__ import annotations

import math

import numpy as np

from constructions.geometric.train import train_accuracy, train_model
from constructions.tasks import make_bijections
from verify.claims import Outcome, claim, rng_for
from verify.geometric.gd_setup import SRC
from verify.geometric.scaling_setup import LAW_CONTROLS, LAWS
from verify.ledger import LedgerEntry, record
from verify.measure import bootstrap_interval


def threshold_point(params, seed):
    """Sweep point: does the trained model at (N, R, d, m) reach train accuracy 1 within ``steps``?"""
    import torch

    gen = torch.Generator(device="cpu")
    gen.manual_seed(int(seed))
    perms = make_bijections(
        params["n_subjects"],
        params["n_relations"],
        rng_for(seed, 17, params["n_subjects"]),
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
    """Smallest d in [1, d_max] whose trained model reaches accuracy 1, by bisection (reaching accuracy 1
    is treated as monotone in d, as it is for the construction); returns (d*, tried points)."""
    lo, hi, tried = 0, p["d_max"], []  # invariant: lo fails (or is 0), hi succeeds
    base = {
        k: p[k] for k in ("n_relations", "mlp_width", "steps", "lr", "record_every", "train_dtype") if k in p
    }
    if threshold_point({**base, "n_subjects": n, "dim": hi}, seed)["accuracy"] < 1.0:
        raise ValueError(f"d_max={hi} does not reach accuracy 1 at N={n}; raise d_max or steps")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        res = threshold_point({**base, "n_subjects": n, "dim": mid}, seed)
        tried.append({"dim": mid, **res})
        lo, hi = (lo, mid) if res["accuracy"] == 1.0 else (mid, hi)
    return hi, tried


def threshold_search(params, seed) -> dict:
    """Sweep point (verify.sweep): the trained threshold d* at one N for one seed."""
    d_star, tried = trained_threshold(params["n_subjects"], params, seed)
    return {"d_star": d_star, "tried": tried}


@claim(
    "geometric.gd.threshold_scaling",
    source=f"{SRC}, log dimension suffices (abstract)",
    provenance="abstract",
    controls=LAW_CONTROLS,
    needs=("torch",),
    seed_rule="95% bootstrap interval over seeds of the per-seed growth factor d*(N_max)/d*(N_min)",
    statement="the smallest trained d reaching train accuracy 1 grows like ln N: over a grid spanning at "
    "least two decades of N (N_max/N_min >= 100, so that the laws can be told apart), the 95% bootstrap "
    "interval of the growth factor d*(N_max)/d*(N_min) lies above 1 and below the factors of "
    "N^(1/4), N^(1/3) and (ln N)^2, and the fit of the per-N means d* = a ln N + b has a > 0 "
    "and R^2 >= 0.8 (derived criterion); the construction's R*d0*(margin 0.25) is reported beside it",
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
    fit in the CPU budget, so the quick verdict is "not reproduced" (ledger) and the full scale (N =
    64..16384) decides. The quick growth-factor rule's own result is recorded
    (measured["growth_rule_passed"])."""
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

    key = ("geometric.gd.threshold", *(str(p[k]) for k in sorted(p) if k != "control"), ctx.seed)
    records = ctx.shared(key, compute)
    ns = list(p["n_values"])
    table = {n: [r["result"]["d_star"] for r in records if r["params"]["n_subjects"] == n] for n in ns}
    law = (p.get("control") or "")[4:]
    if law:  # synthetic competitor anchored at each seed's smallest-N threshold
        table = {n: [d * LAWS[law](n) / LAWS[law](ns[0]) for d in table[ns[0]]] for n in ns}
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
    factors = [hi / lo for lo, hi in zip(table[ns[0]], table[ns[-1]])]
    interval = bootstrap_interval(factors, 0.95, seed=ctx.seed)
    competitors = {name: LAWS[name](ns[-1]) / LAWS[name](ns[0]) for name in ("quarter", "cuberoot", "lnsq")}
    old = fit["slope"] > 0 and fit["r2"] >= 0.8
    growth_ok = interval[0] > 1 and interval[1] < min(competitors.values()) * (1 - 1e-9)
    span_ok = ns[-1] / ns[0] >= 100
    return Outcome(
        predicted={
            "growth_factor_interval": f"in (1, {min(competitors.values()):.3g})",
            "competitors": competitors,
            "slope": "> 0",
            "r2": ">= 0.8",
        },
        measured={
            "growth_factor_interval": list(interval),
            "growth_factors": factors,
            "mean_trained_d_star": [r["mean"] for r in rows],
            "span": ns[-1] / ns[0],
            "growth_rule_passed": growth_ok,
            **fit,
        },
        passed=span_ok and growth_ok and old,
        details={
            "rows": rows,
            "fit": fit,
            "construction_fit": construction_fit,
            "previous_criterion": {"rule": "slope > 0, R^2 >= 0.8 on per-N means", "passed": old},
            "tried": [r["result"]["tried"] for r in records],
        },
    )


record(
    LedgerEntry(
        "geometric.gd.threshold_scaling",
        measured="quick (N = 64..512, R = 2, m = 32, 200 Adam steps, float32), seeds 0, 1: trained d* = "
        "(4, 3), (4, 4), (5, 4), (5, 6), means 3.5, 4, 4.5, 5.5, per-seed growth factors "
        "d*(512)/d*(64) = 1.25, 2.0, 95% interval [1.25, 2.0] against N^(1/4) 1.68, ln N 1.5; span 8x < 100x",
        tried="the old fit rule (a > 0, R^2 >= 0.8: passed, but so did synthetic N^(1/4), N^(1/3), (ln N)^2 "
        "data); the growth-factor rule of single_hop.log_scaling with competing-law controls; a two-decade "
        "trained grid is over the quick CPU budget (one N = 4096 training costs > 10 CPU-s). Cheapest "
        "two-decade grid piloted (seeds 100-102, not judged): N = 16, 64, 256, 1600, R = 1, m = 16, 200 steps, "
        "float32 gave d* = 2, 3, 3, 4 on each seed, but N = 1600 alone costs 13.6-14.5 CPU-s per seed, "
        "about the whole area's remaining budget for one seed",
        reason="at quick scale the grid spans under one decade and d* moves in integer steps of ~20%, so ln N "
        "and N^(1/4) (growth 1.5 vs 1.68) cannot be told apart; the claim needs its full-scale grid "
        "(N = 64..16384, 256x), which is judged normally (not run in this session: no device)",
        scales=("quick",),
    )
)
