"""Task generators shared by the areas: bijections, fact sets, embeddings.

Randomness only through an explicit ``numpy.random.Generator`` passed by the caller.
"""

from __future__ import annotations

import numpy as np


def check_generator(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator (no global RNG), got {type(rng).__name__}")
    return rng


def make_bijections(n_subjects: int, n_relations: int, rng: np.random.Generator) -> np.ndarray:
    """Random bijections pi_r: [N] -> [N], one per relation (docs/geometric.md#setting).

    Returns an int64 array of shape (R, N); row r is ``rng.permutation(N)``, drawn for r = 0..R-1.
    Hypotheses: N >= 2, R >= 1.
    """
    check_generator(rng)
    if int(n_subjects) != n_subjects or n_subjects < 2:
        raise ValueError(f"n_subjects={n_subjects} violates the hypothesis N >= 2")
    if int(n_relations) != n_relations or n_relations < 1:
        raise ValueError(f"n_relations={n_relations} violates the hypothesis R >= 1")
    return np.stack([rng.permutation(int(n_subjects)) for _ in range(int(n_relations))]).astype(np.int64)


def check_bijections(perms: np.ndarray) -> np.ndarray:
    """Validate a relation table: int array (R, N), each row a permutation of 0..N-1."""
    perms = np.asarray(perms)
    if perms.ndim != 2:
        raise ValueError(f"relation table must have shape (R, N), got {perms.shape}")
    n_rel, n = perms.shape
    if n < 2:
        raise ValueError(f"N={n} violates the hypothesis N >= 2")
    if n_rel < 1:
        raise ValueError(f"R={n_rel} violates the hypothesis R >= 1")
    if not np.issubdtype(perms.dtype, np.integer):
        if not np.all(np.isfinite(perms)) or np.any(perms != np.round(perms)):
            raise ValueError("relation table must hold integer attribute ids")
        perms = perms.astype(np.int64)
    for r in range(n_rel):
        if not np.array_equal(np.sort(perms[r]), np.arange(n)):
            raise ValueError(
                f"relation {r} is not a bijection of [0, {n}): each attribute must appear exactly once"
            )
    return perms.astype(np.int64)


def single_hop_dataset(perms: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All N*R single-hop facts (subj, rel, target), s major and r minor; target = perms[rel, subj]."""
    perms = check_bijections(perms)
    n_rel, n = perms.shape
    subj = np.repeat(np.arange(n), n_rel)
    rel = np.tile(np.arange(n_rel), n)
    return subj, rel, perms[rel, subj]
