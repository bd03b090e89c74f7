"""Attribute codes of the geometric constructions [derived] (docs/geometric.md#setting): one unit
vector per attribute in a block of ``block_dim`` coordinates, spherical or +-1/sqrt(d) (Rademacher,
optionally all distinct), and the check every builder applies to a code table.
"""

from __future__ import annotations

import numpy as np

from constructions.tasks import check_generator, require_size

CODE_KINDS = ("spherical", "rademacher", "rademacher_distinct")


def attribute_codes(n_attributes: int, block_dim: int, kind: str, rng: np.random.Generator) -> np.ndarray:
    """Attribute codes U0, shape (N, d0) [derived].

    spherical: i.i.d. N(0, 1) rows normalised to unit length; rademacher: entries +-1/sqrt(d0).
    rademacher_distinct: sign patterns drawn without replacement while the 2^d0 patterns last
    (every pattern once per round, in a random order), so two attributes share a code only when
    N > 2^d0 forces it (the pigeonhole bound B4, without the birthday collisions of i.i.d. signs).
    Sizes are integers (4.0 is 4; 2.5 is a ValueError naming the parameter).

    >>> import numpy as np
    >>> attribute_codes(5, 3, "rademacher_distinct", np.random.default_rng(0)).shape
    (5, 3)
    """
    check_generator(rng)
    block_dim = require_size("block_dim", block_dim, 1, "d0", "block_dim d0")
    n_attributes = require_size("n_attributes", n_attributes, 2, "N")
    if kind == "spherical":
        g = rng.standard_normal((n_attributes, block_dim))
        return g / np.linalg.norm(g, axis=1, keepdims=True)
    if kind == "rademacher":
        signs = rng.integers(0, 2, size=(n_attributes, block_dim)) * 2 - 1
        return signs / np.sqrt(block_dim)
    if kind == "rademacher_distinct":
        if block_dim > 62:
            raise ValueError(f"rademacher_distinct needs d0 <= 62 (integer patterns), got d0={block_dim}")
        n, total = n_attributes, 2**block_dim
        rounds = []
        while sum(len(r) for r in rounds) < n:
            take = min(total, n - sum(len(r) for r in rounds))
            rounds.append(
                rng.choice(total, size=take, replace=False)
                if total <= 2**40
                else _distinct_ints(rng, total, take)
            )
        ints = np.concatenate(rounds)
        bits = (ints[:, None] >> np.arange(block_dim)[None, :]) & 1
        return (bits * 2 - 1) / np.sqrt(block_dim)
    raise ValueError(f"code kind {kind!r} not in {CODE_KINDS}")


def _distinct_ints(rng, total, take):
    """``take`` distinct integers in [0, total) by rejection (total far above take)."""
    out = np.unique(rng.integers(0, total, size=take))
    while len(out) < take:
        out = np.unique(np.concatenate([out, rng.integers(0, total, size=take - len(out))]))
    return rng.permutation(out)


def check_codes(codes) -> np.ndarray:
    codes = np.asarray(codes, dtype=np.float64)
    if codes.ndim != 2 or codes.shape[1] < 1:
        raise ValueError(f"attribute codes must have shape (N, d0) with d0 >= 1, got {codes.shape}")
    if not np.all(np.isfinite(codes)):
        raise ValueError("attribute codes contain NaN or inf")
    return codes
