"""What the fact_mlp claim modules share with verify.fact_mlp.usability (.minimal, .transformer):
the GD grid, the GD capacity search and the Lipschitz estimate. Registers no claim."""

from __future__ import annotations

import numpy as np

from verify.claims import rng_for

GD_GRID = [4, 5, 6, 7, 8, 10, 12, 14, 17, 20, 24, 29, 34, 41, 49, 58, 64]


def gd_facts(F, d, n_values, seed):
    """The fact set of the GD capacity searches (shared with capacity.gd_vs_construction)."""
    from constructions.fact_mlp.facts import fact_set

    return fact_set(F, n_values, d, rng_for(seed, 22, F))


def gd_capacity(F, d, n_values, epochs, seed, device, ctx=None):
    """Smallest GD width m in GD_GRID storing F facts (binary search) and the search trace;
    cached in ``ctx`` when given (the search is the costliest step of the area)."""
    from constructions.fact_mlp.baselines import smallest_size, train_gated_mlp

    def compute():
        facts = gd_facts(F, d, n_values, seed)
        return smallest_size(lambda m: train_gated_mlp(facts, m, seed, epochs=epochs, device=device), GD_GRID)

    if ctx is None:
        return compute()
    return ctx.shared(("fact_mlp.gd_capacity", F, d, n_values, epochs, seed), compute)


def lipschitz(mlp, keys, rng, pairs=200, radius=0.05) -> float:
    """max over random pairs of ||M(x) - M(x')|| / ||x - x'|| with ||x - x'|| = radius, x a key,
    divided by the mean output norm on the keys (scale-free, spec §7 lipschitz_tradeoff)."""
    idx = rng.integers(0, len(keys), pairs)
    X = keys[idx]
    D = rng.standard_normal(X.shape)
    D *= radius / np.linalg.norm(D, axis=1, keepdims=True)
    ratio = np.linalg.norm(mlp.forward(X + D) - mlp.forward(X), axis=1) / radius
    return float(ratio.max() / np.linalg.norm(mlp.forward(keys), axis=1).mean())
