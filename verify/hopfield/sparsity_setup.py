"""What hopfield.sparsity.pr (verify.hopfield.gating) draws: participation ratios of gated and
ungated retrieval distributions (D5, docs/hopfield.md#statements-and-proof-sketches). Registers no
claim."""

from __future__ import annotations

import numpy as np

from constructions.hopfield.networks import context_gates, retrieval_distribution, sphere_patterns
from theory.hopfield.derived import participation_ratio


def _pr_draws(params, ctx, kappa, supports=None):
    """PR of the gated (p_g) and ungated retrieval distributions per draw; ``supports``, when a
    list, receives (non-zero entries of p_g, size of the gates' open set) per draw.

    >>> from verify.claims import Context
    >>> supports = []
    >>> p = {"dim": 8, "n_patterns": 32, "beta": 0.5, "n_eff": 4, "draws": 3}
    >>> pr_g, pr_u = _pr_draws(p, Context(seed=0), float("inf"), supports)
    >>> supports, max(pr_g) <= 4
    ([(4, 4), (4, 4), (4, 4)], True)
    """
    gen = ctx.rng("hopfield.sparsity.gen")
    n = params["n_patterns"]
    pr_g, pr_u = [], []
    for _ in range(params["draws"]):
        X = sphere_patterns(n, params["dim"], 1.0, gen)
        q = sphere_patterns(1, params["dim"], 1.0, gen)[:, 0]
        u, active = context_gates(n, int(gen.integers(n)), params["n_eff"], kappa, gen)
        p_g = retrieval_distribution(X, q, params["beta"], u)
        pr_g.append(participation_ratio(p_g))
        pr_u.append(participation_ratio(retrieval_distribution(X, q, params["beta"])))
        if supports is not None:
            supports.append((int(np.count_nonzero(p_g)), len(active)))
    return pr_g, pr_u
