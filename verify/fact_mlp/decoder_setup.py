"""Shared parts of the fact_mlp decoder claims (docs/fact_mlp.md): decoding the values through a
random projection Rp, the smallest code dimension that decodes, and the random-codes control.
Registers no claim; used by :mod:`verify.fact_mlp.decoder` and :mod:`verify.fact_mlp.decoder_scaling`.
"""

from __future__ import annotations

import math

import numpy as np

from constructions.search import smallest_size
from verify.claims import Control


def decoder_accuracy(V, separators, code_dim, rng) -> float:
    """Fraction of values j decoded from Rp^T Rp u*_j by argmax <., v_i> (ties are errors)."""
    from constructions.fact_mlp.encoder import random_projection
    from constructions.fact_mlp.facts import decode_numpy

    Rp = random_projection(int(code_dim), V.shape[1], rng)
    return decode_numpy(separators @ Rp.T @ Rp, V, np.arange(len(V)))[0]


def draws_ok(V, separators, code_dim, draws, rng) -> list[float]:
    return [decoder_accuracy(V, separators, code_dim, rng) for _ in range(draws)]


def smallest_code_dim(V, separators, draws: int, need: int, rng, grid) -> int | None:
    """Smallest m_c in ``grid`` with accuracy 1 in >= ``need`` of ``draws`` draws of Rp, the draws
    taken from ``rng`` in probe order (bisection over the sorted grid, constructions.search)."""

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


def half_success_dim(V, separators, draws, rng, m_max) -> int | None:
    """Smallest m_c in 1..m_max at which the decoder decodes every value in at least half of
    ``draws`` draws of Rp (bisection, as :func:`smallest_code_dim`); None when none does."""
    return smallest_code_dim(V, separators, draws, math.ceil(draws / 2), rng, range(1, m_max + 1))
