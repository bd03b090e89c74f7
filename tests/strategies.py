"""Hypothesis strategies: draw small scalars, build arrays from a seeded Generator (DESIGN.md)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

seeds = st.integers(min_value=0, max_value=2**32 - 1)
n_subjects = st.integers(min_value=2, max_value=300)
n_relations = st.integers(min_value=1, max_value=6)
block_dims = st.integers(min_value=1, max_value=64)


def rng_from(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


@st.composite
def bijections(draw, n=n_subjects, r=n_relations):
    """(perms, seed): R random permutations of N drawn from a seeded Generator."""
    from constructions.tasks import make_bijections

    n_, r_, seed = draw(n), draw(r), draw(seeds)
    return make_bijections(n_, r_, rng_from(seed)), seed
