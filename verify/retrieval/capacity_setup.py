"""What verify.retrieval.capacity shares with .gd_capacity, .lower, .scaling, .sufficient and
verify.atlas.retrieval: the source, the grid constants, the oracle accuracy draws and the
critical N_c search shared through ``ctx.shared``. Registers no claim."""

from __future__ import annotations

import math

import numpy as np

from constructions.retrieval.task import (
    make_retrieval_task,
    oracle_accuracy,
    sample_cooccurrence_counts,
    value_memory,
)
from constructions.search import smallest_size_geometric
from constructions.seeding import rng_for
from theory.papers import paper

SOURCE = paper("retrieval")
EMB_CODE = {"gaussian": 0, "orthogonal": 1}
N_RANGE = (10, 10**7)
RATIO = 1.1
TARGET = 0.9
N_SEEDS = 3
#: the seed rule of the capacity claims judged on every one of 3 base seeds
SEED_RULE3 = "every seed of seed..seed+2 (each N_c: mean accuracy of 3 draws)"


def draw_accuracies(V, d, L, N, seed, n_draws=N_SEEDS, embedding="gaussian") -> list:
    """Oracle accuracy of the one-step value memory of ``n_draws`` independent draws; draw k fixes its task
    (embeddings, pi, trigger) from (seed, k, V, d, L, embedding) and its counts from the same key plus N."""
    accs = []
    for k in range(n_draws):
        key = [int(seed), k, int(V), int(d), int(L), EMB_CODE[embedding]]
        task = make_retrieval_task(V, d, rng_for(*key), embedding)
        label_counts, counts = sample_cooccurrence_counts(
            task, L, int(N), rng_for(*key, int(N))
        )
        accs.append(oracle_accuracy(task, value_memory(task, label_counts, counts, L)))
    return accs


def mean_oracle_accuracy(V, d, L, N, seed, n_seeds=N_SEEDS, embedding="gaussian") -> float:
    """Mean oracle accuracy over ``n_seeds`` draws (:func:`draw_accuracies`)."""
    return float(np.mean(draw_accuracies(V, d, L, N, seed, n_seeds, embedding)))


def critical_n(V, d, L, seed, target=TARGET, embedding="gaussian", n_seeds=N_SEEDS) -> dict:
    """N_c(target): smallest N with mean oracle accuracy >= target over ``n_seeds`` seeds, by
    geometric bisection over [10, 10^7] stopped at ratio hi/lo <= 1.1
    (:func:`constructions.search.smallest_size_geometric`, docs/retrieval.md). Returns the bracket
    and every evaluation; N_c = inf when even 10^7 samples miss the target."""
    trace = []

    def reaches(N: int) -> bool:
        trace.append([int(N), mean_oracle_accuracy(V, d, L, N, seed, n_seeds, embedding)])
        return trace[-1][1] >= target

    found = smallest_size_geometric(*N_RANGE, reaches, RATIO)
    if found.size is None:
        return {"n_c": math.inf, "lo": N_RANGE[1], "hi": math.inf, "trace": trace}
    if found.below is None:
        return {"n_c": float(found.size), "lo": found.size, "hi": found.size, "trace": trace}
    return {"n_c": float(found.size), "lo": found.below, "hi": found.size, "trace": sorted(trace)}


def shared_nc(ctx, V, d, L, embedding="gaussian", target=TARGET, seed=None) -> float:
    seed = ctx.seed if seed is None else int(seed)
    key = ("retrieval.critical_n", V, d, L, embedding, target, N_SEEDS, seed)
    return ctx.shared(key, lambda: critical_n(V, d, L, seed, target, embedding))["n_c"]


def loglog_slope(xs, ys) -> float:
    """Least-squares slope of log y against log x."""
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def accuracy_curve(V, d, L, seed, embedding, n_values) -> list:
    return [[int(N), mean_oracle_accuracy(V, d, L, N, seed, N_SEEDS, embedding)] for N in n_values]


def law(xs, ncs, which: str) -> list:
    """The N_c the criterion reads: ``"measured"`` (the claim) or ``"power K"`` (a control), a
    synthetic competing law through the first measured point, N_c(x0) (x / x0)^K.

    >>> law([1, 2, 4], [10.0, 30.0, 50.0], "measured")
    [10.0, 30.0, 50.0]
    >>> law([1, 2, 4], [10.0, 30.0, 50.0], "power 0.5")
    [10.0, 14.142135623730951, 20.0]
    """
    if which == "measured":
        return list(ncs)
    if which.startswith("power "):
        k = float(which.split(" ", 1)[1])
        return [ncs[0] * (x / xs[0]) ** k for x in xs]
    raise ValueError(f"law must be 'measured' or 'power K', got {which!r}")
