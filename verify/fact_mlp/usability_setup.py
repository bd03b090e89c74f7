"""What the fact_mlp claim modules share with verify.fact_mlp.usability (.compare, .minimal,
.transformer_setup): the source, the ratio of the size grids, the GD grid, the GD capacity search
and the Lipschitz estimate. Registers no claim."""

from __future__ import annotations

import numpy as np

from theory.papers import paper
from verify.claims import rng_for, shared

SRC = paper("fact_mlp")
#: ratio between consecutive sizes of the search grids of compare and minimal
RATIO = 2**0.25
GD_GRID = [4, 5, 6, 7, 8, 10, 12, 14, 17, 20, 24, 29, 34, 41, 49, 58, 64]
#: GD capacity searches run as batches of this many draws (seeds s .. s + GD_BATCH - 1), so that
#: gd.gd_linear_capacity (1 draw at quick scale) and capacity.gd_vs_construction (3 draws) share one
GD_BATCH = 3


def gd_facts(F: int, d: int, n_values: int, seed: int):
    """The fact set of the GD capacity searches (shared with capacity.gd_vs_construction).

    >>> gd_facts(8, 4, 8, 0).keys.shape
    (8, 4)
    """
    from constructions.fact_mlp.facts import fact_set

    return fact_set(F, n_values, d, rng_for(seed, "fact_mlp.usability.gd_facts.fact_set", F))


def gd_search(F: int, d: int, n_values: int, epochs: int, seeds, device: str = "cpu") -> list:
    """Smallest GD width m in GD_GRID storing F facts (binary search) and its trace, for every seed
    of ``seeds`` (draw j: the fact set and initialisation of seeds[j]), the draws trained together
    as one batched model (constructions.fact_mlp.gd_batch; equal to the single-draw path up to float
    round-off, tests/fact_mlp/test_gd_batch.py): [(m or None, trace)] per draw.

    >>> [m for m, _ in gd_search(8, 4, 8, 0, [0])]
    [None]
    """
    from constructions.fact_mlp.gd_batch import smallest_sizes_batch, train_gated_mlp_batch

    seeds = [int(s) for s in seeds]
    facts = [gd_facts(F, d, n_values, s) for s in seeds]

    def build(draws, widths):
        return train_gated_mlp_batch(
            [facts[b] for b in draws], widths, [seeds[b] for b in draws], epochs=epochs, device=device
        )

    return smallest_sizes_batch(build, GD_GRID, len(seeds))


@shared
def gd_capacities(ctx, F: int, d: int, n_values: int, epochs: int, seeds) -> list:
    """:func:`gd_search` on the run's device, once per run for the whole batch of ``seeds``: the
    costliest step of the area (gd.gd_linear_capacity and capacity.gd_vs_construction share it).

    >>> from verify.claims import Context
    >>> [m for m, _ in gd_capacities(Context(), 8, 4, 8, 0, [0])]
    [None]
    """
    return gd_search(F, d, n_values, epochs, seeds, ctx.device)


def lipschitz(
    mlp, keys: np.ndarray, rng: np.random.Generator, pairs: int = 200, radius: float = 0.05
) -> float:
    """max over random pairs of ||M(x) - M(x')|| / ||x - x'|| with ||x - x'|| = radius, x a key,
    divided by the mean output norm on the keys (scale-free; docs/fact_mlp.md#experimental-settings).

    >>> from types import SimpleNamespace
    >>> round(lipschitz(SimpleNamespace(forward=lambda X: 2 * X), np.eye(3), np.random.default_rng(0)), 9)
    1.0
    """
    idx = rng.integers(0, len(keys), pairs)
    X = keys[idx]
    D = rng.standard_normal(X.shape)
    D *= radius / np.linalg.norm(D, axis=1, keepdims=True)
    ratio = np.linalg.norm(mlp.forward(X + D) - mlp.forward(X), axis=1) / radius
    return float(ratio.max() / np.linalg.norm(mlp.forward(keys), axis=1).mean())
