"""What the fact_mlp decodability and decoder claim modules share (docs/fact_mlp.md): the source,
spherical values and their decodability rho (cached per run), decoding the values through a random
projection Rp, the smallest code dimension that decodes, and the random-codes control. Registers no
claim; used by :mod:`verify.fact_mlp.decodability`, :mod:`verify.fact_mlp.decoder` and
:mod:`verify.fact_mlp.decoder_scaling`.
"""

from __future__ import annotations

import math

import numpy as np

from constructions.search import smallest_size
from theory.papers import paper
from verify.claims import Control, shared

SRC = paper("fact_mlp")


def _spherical(n, d, rng):
    from constructions.fact_mlp.facts import spherical

    return spherical(n, d, rng)


@shared
def shared_rho(ctx, n_values: int, d: int, beta: float = 0.0, salt: int = 0) -> tuple:
    """Values spherical(n_V, d) (spiked by beta when beta > 0) and their exact decodability,
    cached per run. With salt 0 the draw is np.random.default_rng(seed): values first, then u.

    >>> from verify.claims import Context
    >>> V, res = shared_rho(Context(seed=0), 8, 4)
    >>> V.shape, 0.0 < res.rho <= 1.0
    ((8, 4), True)
    """
    from constructions.fact_mlp.facts import spike
    from theory.fact_mlp.rho import decodability

    rng = ctx.rng(salt) if salt else ctx.rng()
    V = _spherical(n_values, d, rng)
    if beta > 0:
        V = spike(V, beta, _spherical(1, d, rng)[0])
    return V, decodability(V)


def decoder_accuracy(V: np.ndarray, separators: np.ndarray, code_dim: int, rng: np.random.Generator) -> float:
    """Fraction of values j decoded from Rp^T Rp u*_j by argmax <., v_i> (ties are errors).

    >>> from theory.fact_mlp.rho import decodability
    >>> V = _spherical(8, 16, np.random.default_rng(0))
    >>> decoder_accuracy(V, decodability(V).separators, 16, np.random.default_rng(1))
    1.0
    """
    from constructions.fact_mlp.encoder import random_projection
    from constructions.fact_mlp.facts import decode_numpy

    Rp = random_projection(int(code_dim), V.shape[1], rng)
    return decode_numpy(separators @ Rp.T @ Rp, V, np.arange(len(V)))[0]


def decoder_margin(
    V: np.ndarray, separators: np.ndarray, code_dim: int, rng: np.random.Generator
) -> tuple[float, float]:
    """One draw of Rp: the accuracy of :func:`decoder_accuracy` and the smallest decoding margin
    over the values, min(margin, 0) when some value is not decoded (a tie within the decode
    kernel's tolerance included), so margin > 0 exactly when every value is decoded.

    >>> from theory.fact_mlp.rho import decodability
    >>> V = _spherical(8, 16, np.random.default_rng(0))
    >>> acc, margin = decoder_margin(V, decodability(V).separators, 16, np.random.default_rng(1))
    >>> acc, margin > 0
    (1.0, True)
    """
    from constructions.fact_mlp.encoder import random_projection
    from constructions.fact_mlp.facts import decode_numpy

    Rp = random_projection(int(code_dim), V.shape[1], rng)
    acc, margin = decode_numpy(separators @ Rp.T @ Rp, V, np.arange(len(V)))
    return acc, (float(margin) if acc == 1.0 else min(float(margin), 0.0))


def draws_ok(
    V: np.ndarray, separators: np.ndarray, code_dim: int, draws: int, rng: np.random.Generator
) -> list[float]:
    """The decoder's accuracy (:func:`decoder_accuracy`) on each of ``draws`` draws of Rp.

    >>> from theory.fact_mlp.rho import decodability
    >>> V = _spherical(8, 16, np.random.default_rng(0))
    >>> draws_ok(V, decodability(V).separators, 16, 2, np.random.default_rng(1))
    [1.0, 1.0]
    """
    return [decoder_accuracy(V, separators, code_dim, rng) for _ in range(draws)]


def smallest_code_dim(
    V: np.ndarray, separators: np.ndarray, draws: int, need: int, rng: np.random.Generator, grid
) -> int | None:
    """Smallest m_c in ``grid`` with accuracy 1 in >= ``need`` of ``draws`` draws of Rp, the draws
    taken from ``rng`` in probe order (bisection over the sorted grid, constructions.search).

    >>> from theory.fact_mlp.rho import decodability
    >>> V = _spherical(8, 16, np.random.default_rng(0))
    >>> smallest_code_dim(V, decodability(V).separators, 4, 3, np.random.default_rng(1), [2, 4, 8, 12, 16])
    12
    """

    def stores(code_dim: int) -> bool:
        return sum(a == 1.0 for a in draws_ok(V, separators, code_dim, draws, rng)) >= need

    return smallest_size(grid, stores).size


#: the codes decoded through Rp: each value's separator u*_j, or (RANDOM_CODES) random unit vectors
CODES = ("separators", "random unit vectors")
RANDOM_CODES = Control(
    "random_codes",
    {"codes": "random unit vectors"},
    "the code of value j is a random unit vector, not its separator u*_j (the "
    "hypothesis of B2 dropped): no m_c in the grid decodes, so m_c* <= B2 fails",
)


def half_success_dim(
    V: np.ndarray, separators: np.ndarray, draws: int, rng: np.random.Generator, m_max: int
) -> int | None:
    """Smallest m_c in 1..m_max at which the decoder decodes every value in at least half of
    ``draws`` draws of Rp (bisection, as :func:`smallest_code_dim`); None when none does.

    >>> from theory.fact_mlp.rho import decodability
    >>> V = _spherical(8, 16, np.random.default_rng(0))
    >>> half_success_dim(V, decodability(V).separators, 4, np.random.default_rng(1), 16)
    8
    """
    return smallest_code_dim(V, separators, draws, math.ceil(draws / 2), rng, range(1, m_max + 1))
