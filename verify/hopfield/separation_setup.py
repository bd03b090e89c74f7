"""Set-up of the hopfield claims on retrieval near a stored pattern (docs/hopfield.md): the
boundaries in beta that separation_violated_fails reads (R1's, and its controls' conditions), the
measured boundary of a pattern, D1's curve at the noise-free query and error_exponential_in_beta's
query. Registers no claim.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import softmax

from constructions.hopfield.networks import sphere_patterns
from theory.hopfield.derived import epsilon_ungated, error_bound, norm_bound, separation
from theory.hopfield.reference import sphere_radius, well_separated_threshold
from verify.claims import choice, shared


def r1_beta(delta: float, n: int, m: float) -> float:
    """The smallest inverse temperature from which a pattern of separation ``delta`` meets R1 at
    every larger beta: the root of well_separated_threshold(beta, N, M) = delta above the
    threshold's maximum, at beta = exp(1 - 2/N) / (2 (N-1) N M^2), past which it decreases; 0 when
    ``delta`` clears that maximum (R1 then holds at every beta)."""
    top = math.exp(1.0 - 2.0 / n) / (2.0 * (n - 1) * n * m * m)
    if delta >= well_separated_threshold(top, n, m):
        return 0.0
    return float(brentq(lambda b: well_separated_threshold(b, n, m) - delta, top, 1e9))


#: the sufficient conditions the claim's criterion reads, as each pattern's boundary in beta: R1, and
#: the two conditions of its controls (R1 without its log term; R1 read at half its beta)
CONDITIONS = {
    "R1": lambda delta, n, m: r1_beta(delta, n, m),
    "no_log_term": lambda delta, n, m: 2.0 / (n * delta),
    "half_beta": lambda delta, n, m: r1_beta(delta, n, m) / 2.0,
}


def measured_beta(grid, inside_i) -> float | None:
    """The smallest grid beta from which the pattern is retrieved at every larger grid beta; None
    when it is not retrieved at the largest."""
    bad = np.flatnonzero(~inside_i)
    if len(bad) == 0:
        return float(grid[0])
    return None if bad[-1] == len(grid) - 1 else float(grid[bad[-1] + 1])


def retrieval_error_bound_curve(betas, X, i):
    """D1 at the noise-free query (r = 0) for each beta: 2 M min(1, eps)."""
    m = norm_bound(X)
    return [error_bound(epsilon_ungated(X, X[:, i], i, b), m) for b in betas]


def _query(params, X, i):
    """error_exponential_in_beta's query: x_i itself, or (``query`` "toward neighbour", its control)
    the point a quarter of the way from x_i to its nearest distractor."""
    if choice(params, "query", ("pattern", "toward neighbour")) == "pattern":
        return X[:, i]
    gaps = np.delete(X[:, i] @ X[:, i] - X[:, i] @ X, i)
    j = int(np.delete(np.arange(params["n_patterns"]), i)[np.argmin(gaps)])
    return X[:, i] + 0.25 * (X[:, j] - X[:, i])


def _r1_sweep(params, ctx, beta, meeting_r1: bool):
    """Patterns that meet (or violate) R1, iterated ``updates`` times from x_i: (count, ended
    outside S_i, per seed the largest distance from x_i over its selected patterns in units of S_i's
    radius 1/(beta N M), 0.0 for a seed with no selected pattern, per seed the selected count)."""
    count, outside, worst, counts = 0, 0, [], []
    for s in ctx.seeds(params["seeds"]):
        X = sphere_patterns(
            params["n_patterns"],
            params["dim"],
            params["radius"],
            ctx.rng("hopfield.separation.r1_sweep.sphere_patterns", s),
        )
        need = well_separated_threshold(beta, params["n_patterns"], params["radius"])
        tol = sphere_radius(beta, params["n_patterns"], params["radius"])
        chosen = [i for i in range(params["n_patterns"]) if (separation(X, i) >= need) == meeting_r1]
        count += len(chosen)
        states = X[:, chosen].copy()  # column k: the state started at x_{chosen[k]}
        for _ in range(params["updates"]):  # f applied to every column at once
            states = X @ softmax(beta * (X.T @ states), axis=0)
        dist = np.linalg.norm(states - X[:, chosen], axis=0)
        outside += int(np.sum(dist > tol))
        worst.append(float(dist.max()) / tol if len(chosen) else 0.0)
        counts.append(len(chosen))
    return count, outside, worst, counts


@shared
def _retrieval_grid(
    ctx, n_patterns: int, dim: int, radius: float, updates: int, beta_range: list, per_octave: int, seed: int
):
    """Patterns of ``seed`` (the draw of _r1_sweep), their separations, and for each beta of the grid
    2^(k/per_octave) in ``beta_range`` and each pattern whether ``updates`` updates from x_i end within
    1/(beta N M) of x_i: (grid, separations, inside)."""
    n, m = n_patterns, radius
    X = sphere_patterns(n, dim, m, ctx.rng("hopfield.separation.retrieval_grid.sphere_patterns", seed))
    lo, hi = beta_range
    grid = 2.0 ** (
        np.arange(round(per_octave * math.log2(lo)), round(per_octave * math.log2(hi)) + 1) / per_octave
    )
    inside = np.zeros((len(grid), n), dtype=bool)
    for row, beta in enumerate(grid):
        states = X.copy()
        for _ in range(updates):
            states = X @ softmax(beta * (X.T @ states), axis=0)
        inside[row] = np.linalg.norm(states - X, axis=0) <= sphere_radius(beta, n, m)
    return grid, np.array([separation(X, i) for i in range(n)]), inside
