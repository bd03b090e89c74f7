"""Float32-screened decodability for large tables (issue 17.4; fact_mlp spec §5.1, [derived]).

Called by :func:`theory.fact_mlp.rho.decodability` when ``screen`` is on (by default
n_V >= 4096 without a held Gram matrix). Same problem, same certificate, cheaper n_V^2 part:

* two passes over the n_V^2 pairs per value chunk, both float32 into reused buffers (no
  per-chunk allocation of n_V-long rows): one GEMM for the distances, the scores and a *pool*
  of each value's most likely active columns (the ``pool`` smallest scores), and one GEMM for
  the final check of the separator against every column;
* the column generation runs inside the pool, exactly in float64 (the pool's unit directions
  are computed once per value and reused by every round), so the rounds never touch n_V;
* the final check screens all columns in float32 and re-checks in float64 every column whose
  float32 check value lies below ||p|| + SCREEN_MARGIN (plus the near pairs), as before; a
  violator outside the pool is added to the working set and only that value is re-solved and
  re-checked. The primal value is the exact float64 minimum over the re-checked columns (the
  others lie above ||p|| + SCREEN_MARGIN - rounding).

Rounding bounds (SCREEN_EXACT, SCREEN_MARGIN) are those of decodability.py. numpy and scipy only.
"""

from __future__ import annotations

import numpy as np

from theory.fact_mlp.nnls import ldp_min_norm

#: Pool size per value: the columns with the smallest scores, min(n_V - 1, max(POOL_FACTOR *
#: working set, POOL_MIN)); any choice is exact (the final check covers every column), a larger
#: pool only trades final-check rounds for pool rounds.
POOL_FACTOR = 4
POOL_MIN = 256
#: Pool rounds keep only the support (the old optimum stays feasible, so ||p|| never increases:
#: each solve stays near the support size, ~0.6 d at d = 64) for at most this many rounds, then
#: keep every column (the working set then only grows, so the loop ends).
SHRINK_ROUNDS = 50


def _unit_rows(V: np.ndarray, i: int, cols: np.ndarray) -> np.ndarray:
    diff = V[i] - V[cols]
    return diff / np.linalg.norm(diff, axis=1)[:, None]


def screened(
    V: np.ndarray, sq: np.ndarray, scale: float, k0: int, chunk: int, gram_path: bool, workers: int = 1
):
    """Per-value (separator, primal, dual, working-set size) for the whole table; see the module
    docstring. V float64 (n, d), sq its squared norms, scale = max sq. ``workers`` > 1 splits the
    values into that many contiguous ranges solved in forked processes (the per-value problems
    are independent; every value is still checked against every column)."""
    n = len(V)
    if workers > 1 and n >= 2 * chunk:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        edges = [chunk * round(k * n / (workers * chunk)) for k in range(workers)] + [n]
        args = (V, sq, scale, k0, chunk, gram_path)
        ctx = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(workers, mp_context=ctx) as pool:
            parts = list(pool.map(_range, *zip(*[(args, lo, hi) for lo, hi in zip(edges, edges[1:])])))
        return tuple(np.concatenate([part[k] for part in parts]) for k in range(4))
    return _range((V, sq, scale, k0, chunk, gram_path), 0, n)


def _range(args, lo: int, hi: int):
    """:func:`screened` for the values lo .. hi - 1 (arrays of length hi - lo)."""
    V, sq, scale, k0, chunk, gram_path = args
    from theory.fact_mlp import rho as dec

    n, d = V.shape
    Vb = V / np.sqrt(scale)
    V32 = np.ascontiguousarray(Vb, dtype=np.float32)
    V32t = V32.T
    sq32 = (sq / scale).astype(np.float32)
    m_pool = int(min(n - 1, max(POOL_FACTOR * k0, POOL_MIN)))
    separators = np.zeros((hi - lo, d))
    primal = np.zeros(hi - lo)
    dual = np.zeros(hi - lo)
    sizes = np.zeros(hi - lo, dtype=np.int64)
    c_max = min(chunk, n)
    G = np.empty((c_max, n), dtype=np.float32)  # GEMM output, then the check values
    S = np.empty((c_max, n), dtype=np.float32)  # scores
    D = np.empty((c_max, n), dtype=np.float32)  # distances (kept for the final check)
    for start in range(lo, hi, chunk):
        rows = np.arange(start, min(hi, start + chunk))
        c = len(rows)
        ar = np.arange(c)
        g, s, dist = G[:c], S[:c], D[:c]
        np.matmul(V32[rows], V32t, out=g)
        np.subtract(sq32[rows, None], g, out=s)  # sq_i - <v_i, v_j>
        np.subtract(sq32[None, :], g, out=dist)
        dist += s  # ||v_i - v_j||^2 expanded (table scaled to largest norm 1)
        dist[ar, rows] = np.inf
        near = [np.zeros(0, dtype=np.int64)] * c
        for a in np.flatnonzero(dist.min(axis=1) <= dec.SCREEN_EXACT):  # recompute from differences
            b = np.flatnonzero(dist[a] <= dec.SCREEN_EXACT)
            diff = Vb[rows[a]] - Vb[b]
            exact = np.einsum("ij,ij->i", diff, diff)
            dist[a, b] = exact
            full = np.full((1, n), np.inf)
            full[0, b] = exact
            dec._raise_on_duplicates(full, rows[a : a + 1], 1.0)
            near[a] = b[exact <= dec.NEAR_TOL]
        np.sqrt(dist, out=dist)
        s /= dist  # <v_i, w_ij> (scaled): the nearest j are the hardest
        s[ar, rows] = np.inf
        pools = dec._nearest(s, m_pool)
        U = np.zeros((c, d))
        P = np.zeros(c)
        cols = []
        for a in range(c):
            i = rows[a]
            pool = pools[a]
            pool = pool[np.argsort(s[a, pool], kind="stable")]
            Wp = _unit_rows(V, i, pool)  # computed once, read by every round
            ws = np.arange(min(k0, len(pool)))  # positions in the pool
            rounds = 0
            while True:  # column generation inside the pool, exact in float64
                W = Wp[ws]
                lam = ldp_min_norm(W, gram_path)
                p = lam @ W
                rounds += 1
                if gram_path or rounds <= SHRINK_ROUNDS:  # keep the support first
                    ws = ws[lam > 0]
                P[a] = float(np.linalg.norm(p))
                if P[a] <= 1e-14:
                    break
                vals = Wp @ (p / P[a])
                viol = vals < P[a] - dec.VIOLATION_TOL
                viol[ws] = False
                bad = np.flatnonzero(viol)
                if not len(bad):
                    break
                cap = max(1, d - len(ws)) if gram_path else d + 1
                ws = np.concatenate([ws, bad[np.argsort(vals[bad])[:cap]]])
            U[a] = p / P[a] if P[a] > 1e-14 else 0.0
            cols.append(pool[ws])
        low = np.zeros(c)
        pending = np.flatnonzero(P > 1e-14)
        while len(pending):  # the final check against every column, float32 screened
            h = G[: len(pending)]
            np.matmul(U[pending].astype(np.float32), V32t, out=h)
            uv = (U[pending] * Vb[rows[pending]]).sum(axis=1).astype(np.float32)
            np.subtract(uv[:, None], h, out=h)
            h /= dist[pending]
            h[np.arange(len(pending)), rows[pending]] = np.inf
            a_, b_ = np.nonzero(h < (P[pending] + dec.SCREEN_MARGIN).astype(np.float32)[:, None])
            split = np.split(b_, np.searchsorted(a_, np.arange(1, len(pending))))
            still = []
            for r, a in enumerate(pending):
                i = rows[a]
                cand = np.union1d(split[r], near[a]) if len(near[a]) else split[r]
                if not len(cand):
                    cand = np.array([int(np.argmin(h[r]))])
                ex = _unit_rows(V, i, cand) @ U[a]
                low[a] = float(ex.min())
                hit = ex < P[a] - dec.VIOLATION_TOL
                bad, key = cand[hit], ex[hit]
                mask = ~np.isin(bad, cols[a])
                bad, key = bad[mask], key[mask]
                if not len(bad):
                    continue
                cap = max(1, d - len(cols[a])) if gram_path else d + 1
                ws = np.concatenate([cols[a], bad[np.argsort(key)[:cap]]])
                W = _unit_rows(V, i, ws)
                lam = ldp_min_norm(W, gram_path)
                p = lam @ W
                if gram_path:
                    ws = ws[lam > 0]
                cols[a] = ws
                P[a] = float(np.linalg.norm(p))
                U[a] = p / P[a] if P[a] > 1e-14 else 0.0
                if P[a] > 1e-14:
                    still.append(a)
            pending = np.asarray(still, dtype=np.int64)
        for a, i in enumerate(rows):
            u, low_a = U[a], float(low[a])
            if low_a <= 0 or not np.any(u):  # 0 in the hull (or numerically so): u = 0 attains 0
                u, low_a = np.zeros(d), 0.0
            separators[i - lo], primal[i - lo], dual[i - lo], sizes[i - lo] = u, low_a, P[a], len(cols[a])
    return separators, primal, dual, sizes
