"""What the fact_mlp claim modules share with verify.fact_mlp.usability (.minimal, .transformer):
the GD grid, the GD capacity search and the Lipschitz estimate. Registers no claim."""

from __future__ import annotations

import numpy as np

from verify.claims import rng_for

GD_GRID = [4, 5, 6, 7, 8, 10, 12, 14, 17, 20, 24, 29, 34, 41, 49, 58, 64]
#: GD capacity searches run as batches of this many draws (seeds s .. s + GD_BATCH - 1), so that
#: gd.gd_linear_capacity (1 draw at quick scale) and capacity.gd_vs_construction (3 draws) share one
GD_BATCH = 3


def gd_facts(F, d, n_values, seed):
    """The fact set of the GD capacity searches (shared with capacity.gd_vs_construction)."""
    from constructions.fact_mlp.facts import fact_set

    return fact_set(F, n_values, d, rng_for(seed, "fact_mlp.usability.gd_facts.fact_set", F))


def gd_capacities(F, d, n_values, epochs, seeds, device, ctx=None) -> list:
    """Smallest GD width m in GD_GRID storing F facts (binary search) and its trace, for every seed of ``seeds`` (draw j: the fact set and initialisation of seeds[j]),
    the draws trained together as one batched model (constructions.fact_mlp.gd_batch; equal to the
    single-draw path up to float round-off, tests/fact_mlp/test_gd_batch.py). [(m or None, trace)]
    per draw; cached in ``ctx`` under the whole tuple of seeds (the batch), the costliest step of
    the area (gd.gd_linear_capacity and capacity.gd_vs_construction share it)."""
    from constructions.fact_mlp.gd_batch import smallest_sizes_batch, train_gated_mlp_batch

    seeds = tuple(int(s) for s in seeds)

    def compute():
        facts = [gd_facts(F, d, n_values, s) for s in seeds]

        def build(draws, widths):
            return train_gated_mlp_batch(
                [facts[b] for b in draws], widths, [seeds[b] for b in draws], epochs=epochs, device=device
            )

        return smallest_sizes_batch(build, GD_GRID, len(seeds))

    if ctx is None:
        return compute()
    return ctx.shared(("fact_mlp.gd_capacities", F, d, n_values, epochs, seeds), compute)


def lipschitz(mlp, keys, rng, pairs=200, radius=0.05) -> float:
    """max over random pairs of ||M(x) - M(x')|| / ||x - x'|| with ||x - x'|| = radius, x a key,
    divided by the mean output norm on the keys (scale-free; docs/fact_mlp.md#experimental-settings)."""
    idx = rng.integers(0, len(keys), pairs)
    X = keys[idx]
    D = rng.standard_normal(X.shape)
    D *= radius / np.linalg.norm(D, axis=1, keepdims=True)
    ratio = np.linalg.norm(mlp.forward(X + D) - mlp.forward(X), axis=1) / radius
    return float(ratio.max() / np.linalg.norm(mlp.forward(keys), axis=1).mean())
