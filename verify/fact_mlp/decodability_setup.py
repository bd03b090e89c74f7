"""What verify.fact_mlp.decodability shares with .decoder: the source, spherical codes and the
shared decodability rho. Registers no claim."""

from __future__ import annotations

from theory.papers import paper

SRC = paper("fact_mlp")


def _spherical(n, d, rng):
    from constructions.fact_mlp.facts import spherical

    return spherical(n, d, rng)


def shared_rho(ctx, n_values, d, beta=0.0, salt=0):
    """Values spherical(n_V, d) (spiked by beta when beta > 0) and their exact decodability,
    cached per run. With salt 0 the draw is np.random.default_rng(seed): values first, then u."""
    from constructions.fact_mlp.facts import spike
    from theory.fact_mlp.rho import decodability

    def compute():
        rng = ctx.rng(salt) if salt else ctx.rng()
        V = _spherical(n_values, d, rng)
        if beta > 0:
            V = spike(V, beta, _spherical(1, d, rng)[0])
        return V, decodability(V)

    return ctx.shared(("fact_mlp.rho", n_values, d, float(beta), salt, ctx.seed), compute)
