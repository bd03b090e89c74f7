"""Task generators shared by the areas: bijections, fact sets, embeddings.

Randomness only through an explicit ``numpy.random.Generator`` passed by the caller.
"""

from __future__ import annotations

import numpy as np

from theory.validate import require_int, require_memory


def check_generator(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng must be a numpy.random.Generator (no global RNG), got {type(rng).__name__}")
    return rng


def require_size(name: str, value, minimum: int, symbol: str | None = None, label: str | None = None) -> int:
    """A size as an int (:func:`theory.validate.require_int`: 4.0 and numpy ints accepted, 2.5,
    NaN, a truth value or text rejected naming ``name``), then ``value >= minimum``, the
    hypothesis written with the paper's ``symbol`` (default: ``name``) and the value introduced
    by ``label`` (default: ``name``).

    >>> require_size("hidden", 4.0, 1, "m")
    4
    >>> require_size("hidden", 0, 1, "m")
    Traceback (most recent call last):
    ...
    ValueError: hidden=0 violates the hypothesis m >= 1
    >>> require_size("hidden", 2.5, 1, "m")
    Traceback (most recent call last):
    ...
    ValueError: hidden=2.5 must be an integer
    """
    size = require_int(name, value)
    if size < minimum:
        raise ValueError(f"{label or name}={size} violates the hypothesis {symbol or name} >= {minimum}")
    return size


def make_bijections(n_subjects: int, n_relations: int, rng: np.random.Generator) -> np.ndarray:
    """Random bijections pi_r: [N] -> [N], one per relation (docs/geometric.md#setting).

    Returns an int64 array of shape (R, N); row r is ``rng.permutation(N)``, drawn for r = 0..R-1.
    Hypotheses: N >= 2, R >= 1, both integers (4.0 is 4; 2.5 is a ValueError, never truncated).
    A table above the memory budget (8 R N bytes > :data:`theory.validate.MEMORY_BUDGET_BYTES`)
    is a ValueError naming N, R and the estimate, before anything is drawn.

    >>> import numpy as np
    >>> make_bijections(4, 2, np.random.default_rng(0)).shape
    (2, 4)
    >>> make_bijections(10**6, 10**6, np.random.default_rng(0))
    Traceback (most recent call last):
    ...
    ValueError: make_bijections(n_subjects=1000000, n_relations=1000000): the relation table (R, N) = (1000000, 1000000) of int64 would take about 7.28 TiB, above the memory budget of 4 GiB (theory.validate.MEMORY_BUDGET_BYTES)
    """
    check_generator(rng)
    n_subjects = require_size("n_subjects", n_subjects, 2, "N")
    n_relations = require_size("n_relations", n_relations, 1, "R")
    require_memory(
        f"make_bijections(n_subjects={n_subjects}, n_relations={n_relations}): the relation table "
        f"(R, N) = ({n_relations}, {n_subjects}) of int64",
        8.0 * n_relations * n_subjects,
    )
    table = np.empty((n_relations, n_subjects), dtype=np.int64)
    for r in range(n_relations):  # row by row: no second copy of the table
        table[r] = rng.permutation(n_subjects)
    return table


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
