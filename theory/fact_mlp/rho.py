"""Decodability (value separability) rho of a value table, computed exactly with a certificate.

docs/fact_mlp.md#setting. For values V (n_V, d) the per-value decodability is [reference definition]

    rho_i(V) = max_{||u|| <= 1} min_{j != i} <u, w_ij>,   w_ij = (v_i - v_j) / ||v_i - v_j||,

and rho(V) = min_i rho_i. A dot-product argmax decoder can output v_i for some query iff
rho_i > 0 (B4, docs/fact_mlp.md#statements-and-proof-sketches). Computation method [derived]:

* Minimax duality: rho_i = dist(0, conv{w_ij : j != i}) when 0 is outside the hull, else 0
  (u = 0 is admissible, so rho_i >= 0). The minimum-norm point p* of the hull gives the
  separator u*_i = p*/||p*||, and min_j <u*_i, w_ij> = ||p*||.
* The minimum-norm point is found exactly by Lawson & Hanson's least-distance programming
  (LDP, "Solving Least Squares Problems", ch. 23): minimise ||x|| subject to W x >= 1 by the
  non-negative least-squares problem min_{lam >= 0} ||[W^T; 1^T] lam - e_{d+1}||, solved with
  scipy.optimize.nnls (an active-set method that terminates at the KKT point, no iteration
  count to tune). lam / sum(lam) are the convex weights of p*.
* Column generation: the NNLS is solved on a working set of columns (the j nearest to v_i in
  the direction v_i), then every column is checked; columns violating min_j <u, w_ij> >= ||p||
  are added and the NNLS re-solved. The loop stops only when the full check passes, so the
  result is exact for the whole problem, at a cost of about O(n_V * d) per value.
* Speed (theory/fact_mlp/nnls.py): a working set of at most d columns is solved by
  block pivoting on the NNLS normal equations, its Gram matrix read from the value Gram matrix
  when that is held; large tables screen the n_V^2 distances and checks in float32 and re-check
  in float64 every column that float32 rounding could misjudge. The certificate below is
  computed in float64 on every path.

Distances and directions are computed from the difference vectors v_i - v_j wherever the
expansion ||v_i||^2 + ||v_j||^2 - 2 <v_i, v_j> would cancel (near-duplicate values), so rho is
invariant under scaling, rotation and translation of the table to rounding;
duplicates are detected relative to the largest norm.

Certificate: for every value the *primal* value min_j <u_i, w_ij> of the returned separator
(a lower bound on rho_i) and the *dual* value ||p_i|| of the returned hull point (an upper
bound) are both reported; ``gap`` = max_i (dual - primal) >= 0 bounds the error of rho_i.

This module uses numpy and scipy only (theory/ never imports torch).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theory.fact_mlp.nnls import gram_weights as _gram_weights
from theory.fact_mlp.nnls import ldp_min_norm as _ldp_min_norm
from theory.fact_mlp.screen import (  # noqa: F401  (the tolerances are part of this module's interface)
    DUPLICATE_TOL,
    NEAR_TOL,
    SCREEN_EXACT,
    SCREEN_MARGIN,
    VIOLATION_TOL,
    _raise_on_duplicates,
    screened,
)

#: Rows whose squared distances all exceed SEPARATED_TOL * max ||v||^2 read their directions'
#: Gram matrix from the expanded value Gram matrix (cancellation costs at most ~1e-13 there).
SEPARATED_TOL = 1e-2
#: The range of every rho_i (and of its primal and dual bounds): a value computed outside it by
#: rounding (1 + 2^-52 for two values, 71 of 200 random two-value tables) is clipped to it, so
#: the result is always a valid ``rho`` of the bounds (fact_mlp.jl_code_dim takes 0 < rho <= 1).
RANGE = (0.0, 1.0)
#: The range of the coherence mu (a cosine), to which :func:`coherence` clips its rounding.
COHERENCE_RANGE = (-1.0, 1.0)


@dataclass(frozen=True)
class Decodability:
    """Result of :func:`decodability` (docs/fact_mlp.md#setting).

    rho: min_i rho_i, in [0, 1]. per_value: rho_i for every value (the primal value of the
    separator, clipped to [0, 1]: rounding can put it a few ulps above 1, e.g. 1 + 2^-52 for
    two values, and rho_i <= 1 always holds, so the clipped number is still a lower bound). separators: (n_V, d) unit rows u*_i (a zero row where rho_i = 0).
    primal / dual: lower and upper bounds on every rho_i (see module docstring), clipped to
    [0, 1] like per_value.
    gap: max_i (dual_i - primal_i). working_set: number of columns each NNLS needed.
    """

    rho: float
    per_value: np.ndarray
    separators: np.ndarray
    primal: np.ndarray
    dual: np.ndarray
    gap: float
    working_set: np.ndarray

    @property
    def argmin(self) -> int:
        return int(np.argmin(self.per_value))


def check_values(values, name: str = "values", duplicates: bool = True) -> np.ndarray:
    """Validate a value table: finite float array (n_V, d), n_V >= 2, no duplicate rows.

    Raises ValueError naming the offending shape or the offending value indices.
    ``duplicates=False`` skips the O(n_V^2 d) duplicate scan (callers that compute every
    pairwise distance anyway, like :func:`decodability`, check it there).
    """
    V = np.asarray(values, dtype=np.float64)
    if V.ndim != 2:
        raise ValueError(f"{name} must have shape (n_values, d), got shape {V.shape}")
    n, d = V.shape
    if n < 2 or d < 1:
        raise ValueError(f"{name} shape {V.shape} violates the hypothesis n_values >= 2, d >= 1")
    bad = np.argwhere(~np.isfinite(V))
    if len(bad):
        raise ValueError(f"{name}[{bad[0][0]}] holds a NaN or infinite entry (column {bad[0][1]})")
    sq = np.einsum("ij,ij->i", V, V)
    scale = float(sq.max())
    if not scale > 0:
        raise ValueError(f"{name} are all zero: every value is a duplicate of every other (rho = 0)")
    if duplicates:
        chunk = max(1, int(2**22 // n))
        for start in range(0, n, chunk):
            rows = np.arange(start, min(n, start + chunk))
            _raise_on_duplicates(_pair_dist2(V, sq, rows, scale), rows, scale, name)
    return V


def _pair_dist2(
    V: np.ndarray,
    sq: np.ndarray,
    rows: np.ndarray,
    scale: float,
    gram: np.ndarray | None = None,
    recompute: float = NEAR_TOL,
) -> np.ndarray:
    """Squared distances ||v_i - v_j||^2 for i in ``rows`` and every j (inf on j = i).

    Expanded as ||v_i||^2 + ||v_j||^2 - 2 <v_i, v_j> (one GEMM), then recomputed from the
    difference vectors wherever the expansion is below NEAR_TOL * scale, where it has no
    correct digits left (near-duplicates)."""
    dist2 = sq[rows, None] + sq[None, :] - 2.0 * (V[rows] @ V.T if gram is None else gram)
    dist2[np.arange(len(rows)), rows] = np.inf
    a, b = np.nonzero(dist2 <= recompute * scale)
    if len(a):
        diff = V[rows[a]] - V[b]
        dist2[a, b] = np.einsum("ij,ij->i", diff, diff)
    return dist2


def _directions(V: np.ndarray, i: int, cols: np.ndarray) -> np.ndarray:
    """Unit rows w_ij = (v_i - v_j) / ||v_i - v_j||, normalised from the difference vectors."""
    diff = V[i] - V[cols]
    return diff / np.linalg.norm(diff, axis=1)[:, None]


def _nearest(score: np.ndarray, k: int) -> list[np.ndarray]:
    """Per row, about the k columns of smallest score (the initial working sets; any choice is
    exact after column generation, this one only saves rounds). Long rows: the columns below
    each row's 2k n / m-th smallest score among m = 8192 evenly strided columns, at most k of
    them, instead of a full argpartition of every row (its cost dominated at n_V = 10^5)."""
    c, n = score.shape
    if n <= 16384:
        init = np.argpartition(score, k - 1, axis=1)[:, :k]
        return [init[a] for a in range(c)]
    sample = score[:, :: n // 8192]
    q = min(sample.shape[1] - 1, int(np.ceil(2 * k * sample.shape[1] / n)))
    thr = np.partition(sample, q, axis=1)[:, q]
    a_, b_ = np.nonzero(score <= thr[:, None])
    out = []
    for a, cols in enumerate(np.split(b_, np.searchsorted(a_, np.arange(1, c)))):
        if len(cols) > k:
            cols = cols[np.argpartition(score[a, cols], k - 1)[:k]]
        out.append(cols)
    return out


def decodability(
    values: np.ndarray,
    *,
    working_set: int | None = None,
    chunk: int = 256,
    gram_bytes: int = 2**30,
    solver: str = "pivoting",
    screen: bool | None = None,
    workers: int = 1,
) -> Decodability:
    """Exact per-value decodability rho_i with a primal-dual certificate ([derived]
    computation of the [reference] definition; see the module docstring for the method).

    values: (n_V, d) array; duplicates, NaN or a wrong shape raise ValueError.
    working_set: initial number of columns per value (default min(n_V - 1, d + 8, 256), 128 from
    d = 512 on; the column generation adds what is missing, so the result does not depend on it).
    gram_bytes: the whole n_V x n_V Gram matrix is held when it fits in this many bytes (a speed
    choice only: the result is the same to rounding, and certified by the same full check).
    solver: "pivoting" (block pivoting on the normal equations where a working set has at most d
    columns, else scipy's NNLS) or "active_set" (scipy's NNLS for every working set, the slower
    reference path; the tests compare the two).
    screen: float32 screening of the n_V^2 distances and checks, exact float64 re-check of every
    column that could matter (see SCREEN_MARGIN); default on for n_V >= 4096 when the Gram
    matrix is not held. A speed choice: the certificate is computed in float64 either way.
    workers: on the screened path, solve contiguous ranges of values in that many forked
    processes (a speed choice: each value's problem and check are the same).
    """
    if int(workers) != workers or workers < 1:
        raise ValueError(f"workers={workers} violates the hypothesis workers >= 1")
    if solver not in ("pivoting", "active_set"):
        raise ValueError(f"solver={solver!r} must be 'pivoting' or 'active_set'")
    pivoting = solver == "pivoting"
    V = check_values(values, duplicates=False)  # duplicates: checked below, chunk by chunk
    n, d = V.shape
    sq = np.einsum("ij,ij->i", V, V)
    scale = float(sq.max())
    # default start: d + 8 columns up to 256; from d = 512 on, 128 (Gram pivoting: at n_V = 3000,
    # d = 1024, k0 = 128 / 192 / 256 / 384 took 9.4 / 11.2 / 13.6 / 17.2 CPU s, same rho)
    k0 = int(working_set) if working_set else min(n - 1, 128 if d >= 512 and pivoting else min(d + 8, 256))
    k0 = max(1, min(n - 1, k0))
    # the whole Gram matrix once (one GEMM) where it fits: each value's directions' Gram is then
    # read from it instead of a k x k x d product per value (well-separated rows only, below)
    # pivoting needs k <= d columns; below ~100 columns scipy's active set is as fast
    gram_path = pivoting and 96 <= k0 <= d
    held = gram_path and n * n * 8 <= gram_bytes
    if screen is None:
        screen = not held and n >= 4096
    if screen:  # the n_V^2 part in float32 (theory/fact_mlp/screen.py), certificate in float64
        if not working_set:  # rounds shrink to the support there (~0.6 d at d = 64): start near it
            k0 = max(1, min(k0, 3 * d // 4))
        separators, primal, dual, sizes = screened(V, sq, scale, k0, chunk, gram_path, int(workers))
        return _result(separators, primal, dual, sizes)
    full_gram = V @ V.T if held else None
    flat_gram = full_gram.reshape(-1) if full_gram is not None else None
    separators = np.zeros((n, d))
    primal = np.zeros(n)
    dual = np.zeros(n)
    sizes = np.zeros(n, dtype=np.int64)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        rows = np.arange(start, stop)
        c = len(rows)
        G = V[rows] @ V.T if full_gram is None else full_gram[rows]
        dist2 = _pair_dist2(V, sq, rows, scale, G)
        _raise_on_duplicates(dist2, rows, scale)
        near_a, near_b = np.nonzero(dist2 <= NEAR_TOL * scale)
        near = np.split(near_b, np.searchsorted(near_a, np.arange(1, c)))
        # rows whose every pair is far apart: the expansion of <w_ij, w_il> keeps ~13 digits
        separated = (dist2.min(axis=1) >= SEPARATED_TOL * scale) if held else None
        dist = np.sqrt(np.maximum(dist2, 0.0, out=dist2), out=dist2)
        # <v_i, w_ij>: for unit-norm values ||v_i - v_j|| / 2, so the nearest j are the hardest
        score = (sq[rows, None] - G) / dist
        score[np.arange(c), rows] = np.inf
        cols = _nearest(score, k0)
        pending = np.arange(c)
        U = np.zeros((c, d))
        P = np.zeros(c)
        low = np.zeros(c)
        while len(pending):
            for a in pending:
                i, c_ = rows[a], cols[a]
                lam = None
                if full_gram is not None and separated[a] and len(c_) <= d:
                    g, dd = G[a, c_], dist[a, c_]
                    K = flat_gram.take(c_[:, None] * n + c_[None, :])  # <v_j, v_l>
                    K -= g[:, None]
                    K -= g[None, :]
                    K += sq[i]
                    K /= np.outer(dd, dd)  # <w_ij, w_il>, expanded (separated rows only)
                    lam = _gram_weights(K)  # later rounds: last support + violators, all free
                W = None
                if lam is None:
                    W = _directions(V, i, c_)
                    lam = _ldp_min_norm(W, gram_path)
                support = np.flatnonzero(lam > 0)
                if gram_path:
                    # the next round keeps the support (first) and adds the violators to it:
                    # the old optimum stays feasible, so the norm never increases (no cycling)
                    cols[a] = c_[support]
                if full_gram is not None and separated[a]:
                    coef = lam[support] / dist[a, c_[support]]  # p = sum lam_j (v_i - v_j)/d_ij
                    p = coef.sum() * V[i] - coef @ V[c_[support]]
                elif W is not None:
                    p = lam @ W
                else:
                    p = lam[support] @ _directions(V, i, c_[support])
                P[a] = float(np.linalg.norm(p))
                U[a] = p / P[a] if P[a] > 1e-14 else 0.0
            # full check of every separator re-solved this round against every column j != i
            # (the other rows' separators did not change, nor did their check)
            vals = ((U[pending] * V[rows[pending]]).sum(axis=1)[:, None] - U[pending] @ V.T) / dist[pending]
            vals[np.arange(len(pending)), rows[pending]] = np.inf
            for r, a in enumerate(pending):  # near pairs: <u, v_i - v_j> from the difference itself
                cand = near[a]
                if len(cand):
                    vals[r, cand] = _directions(V, rows[a], cand) @ U[a]
            low[pending] = vals.min(axis=1)
            still = []
            for r, a in enumerate(pending):
                if not np.any(U[a]):
                    continue
                bad = np.flatnonzero(vals[r] < P[a] - VIOLATION_TOL)
                key = vals[r, bad]
                if len(bad) == 0:
                    continue
                mask = ~np.isin(bad, cols[a])
                bad, key = bad[mask], key[mask]
                if len(bad) == 0:
                    continue
                # pivoting: keep the working set at <= d columns where the support allows
                cap = max(1, d - len(cols[a])) if gram_path else d + 1
                worst = bad[np.argsort(key)[:cap]]
                cols[a] = np.concatenate([cols[a], worst])
                still.append(a)
            pending = np.asarray(still, dtype=np.int64)
        for a, i in enumerate(rows):
            u, lo = U[a], float(low[a])
            if lo <= 0 or not np.any(u):  # 0 in the hull (or numerically so): u = 0 attains 0
                u, lo = np.zeros(d), 0.0
            separators[i], primal[i], dual[i], sizes[i] = u, lo, P[a], len(cols[a])
    return _result(separators, primal, dual, sizes)


def _result(separators, primal, dual, sizes) -> Decodability:
    # rho_i lies in [0, 1] (u and w_ij are unit vectors); a bound rounded past 1 (1 + 2^-52 for
    # two values) is clipped to 1, so rho is inside the domain of fact_mlp.jl_code_dim (RANGE)
    primal, dual = np.clip(primal, *RANGE), np.clip(dual, *RANGE)
    gap = float(np.max(dual - primal))
    return Decodability(
        rho=float(primal.min()),
        per_value=primal,
        separators=separators,
        primal=primal,
        dual=dual,
        gap=gap,
        working_set=sizes,
    )


def coherence(values, *, normalise: bool = False) -> float:
    """mu = max_{i != j} <v_i, v_j> of unit-norm values (the coherence).

    The values must have unit norm (to 1e-8): :func:`rho_lower_bound` holds only for them, and a
    silent normalisation once gave a "bound" above rho for non-unit values.
    ``normalise=True`` returns the coherence of the directions v_i / ||v_i|| instead; that
    number does not bound rho of the un-normalised table. The result is clipped to [-1, 1]
    (COHERENCE_RANGE; rounding of a cosine can leave it by an ulp), the domain of
    :func:`rho_lower_bound`.

    >>> round(coherence([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]]), 3)
    0.8
    """
    V = check_values(values)
    norms = np.linalg.norm(V, axis=1)
    if not normalise:
        off = np.flatnonzero(np.abs(norms - 1.0) > 1e-8)
        if len(off):
            raise ValueError(
                f"values[{int(off[0])}] has norm {norms[off[0]]:.6g}: coherence (and "
                "rho_lower_bound) is defined for unit-norm values; pass "
                "normalise=True for the coherence of the directions"
            )
    U = V / norms[:, None]
    best = -np.inf
    for start in range(0, len(U), 1024):
        G = U[start : start + 1024] @ U.T
        G[np.arange(G.shape[0]), np.arange(start, start + G.shape[0])] = -np.inf
        best = max(best, float(G.max()))
    return float(np.clip(best, *COHERENCE_RANGE))


def rho_lower_bound(mu: float) -> float:
    """[derived] For unit-norm values, u = v_i gives rho >= sqrt((1 - mu)/2).

    Sketch: <v_i, v_i - v_j> / ||v_i - v_j|| = (1 - <v_i,v_j>)/sqrt(2 - 2<v_i,v_j>)
    = sqrt((1 - <v_i, v_j>)/2) >= sqrt((1 - mu)/2).
    """
    mu = float(mu)
    if not -1.0 <= mu <= 1.0:
        raise ValueError(f"coherence mu={mu} violates the hypothesis -1 <= mu <= 1 (unit-norm values)")
    return float(np.sqrt((1.0 - mu) / 2.0))


def is_feasible(values, fact_map) -> tuple[bool, list[int]]:
    """B4 [derived]: the fact set is storable by a dot-product argmax decoder iff every used value
    has rho_i > 0 (is a vertex of conv(V)). Returns (feasible, indices of used undecodable values).
    """
    res = decodability(values)
    used = np.unique(np.asarray(fact_map, dtype=np.int64))
    if used.min() < 0 or used.max() >= len(res.per_value):
        raise ValueError(f"fact_map entries must lie in [0, {len(res.per_value)})")
    bad = [int(j) for j in used if res.per_value[j] <= 1e-9]
    return (not bad), bad
