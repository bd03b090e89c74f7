"""Float32-screened decodability for large tables ([derived], docs/fact_mlp.md#setting).

Called by :func:`theory.fact_mlp.rho.decodability` when ``screen`` is on (by default
n_V >= 4096 without a held Gram matrix). Same problem, same certificate, cheaper n_V^2 part:

* two passes over the n_V^2 pairs per value chunk, both float32 and both in column blocks of
  BLOCK (a block's arrays stay in cache; only the distances go to memory, kept for the second
  pass): one GEMM for the distances, the scores and a *pool* of each value's most likely active
  columns (the smallest scores, below a threshold read from a strided sample of columns), and
  one GEMM for the final check of the separator against every column;
* the column generation runs inside the pool: each round solves its working set exactly in
  float64, screens the pool's check values in float32 (the pool's rows and distances are
  gathered once per value) and re-checks exactly in float64 every pool column within
  SCREEN_MARGIN of ||p||, so the rounds never touch n_V;
* the final check screens all columns in float32 and re-checks in float64 every column whose
  float32 check value lies below ||p|| + SCREEN_MARGIN (plus the near pairs), as before; a
  violator outside the pool (or one the pool's screen missed) is added to the working set and
  only that value is re-solved and re-checked. The primal value is the exact float64 minimum
  over the re-checked columns (the others lie above ||p|| + SCREEN_MARGIN - rounding).

Every screen only selects columns: the working sets are solved, and the certificate computed,
in float64, so any pool, threshold or block size gives the same result to rounding (measured:
n_V = 10^5, d = 64 gives rho 0.50922 either way; tests compare against the exact path).
Rounding bounds (SCREEN_EXACT, SCREEN_MARGIN) are those of decodability.py. numpy and scipy only.
"""

from __future__ import annotations

import numpy as np

from theory.fact_mlp.nnls import ldp_min_norm

#: The tolerances of the exact decodability check (theory.fact_mlp.rho) and of its float32
#: screening, shared by both paths.
#: Duplicate detection: two values whose difference has norm at most DUPLICATE_TOL times the
#: largest value norm are the same value (scale invariant; the distance is computed directly
#: from the difference vector, not by expanding norms).
DUPLICATE_TOL = 1e-10
#: Pairs whose expanded squared distance is below NEAR_TOL * max ||v||^2 get their distance
#: recomputed from the difference vector (the expansion loses all digits there).
NEAR_TOL = 1e-6
#: Float32 screening (large tables without a held Gram matrix): the n_V^2 distances and checks
#: run in float32 on the table scaled to largest norm 1; pairs with float32 squared distance
#: below SCREEN_EXACT get it recomputed from the difference vector, and every column whose
#: float32 check value lies below ||p|| + SCREEN_MARGIN is re-checked exactly in float64.
#: Float32 rounding moves a check value by at most ~(d + 4) * 6e-8 / sqrt(SCREEN_EXACT) (< 1e-4
#: for d <= 256; 2e-4 at d = 1024), so every column that could violate is among those re-checked.
SCREEN_EXACT = 0.05
SCREEN_MARGIN = 1e-3
#: A column counts as violating when <u, w_ij> < ||p|| - VIOLATION_TOL.
VIOLATION_TOL = 1e-12


def _raise_on_duplicates(dist2, rows, scale, name="values"):
    hit = np.argwhere(dist2 <= DUPLICATE_TOL**2 * scale)
    if len(hit):
        a, b = rows[hit[0][0]], hit[0][1]
        raise ValueError(
            f"{name}[{a}] and {name}[{b}] are duplicate values (distance <= "
            f"{DUPLICATE_TOL:g} x the largest norm): a value repeated in the table "
            "cannot be decoded (rho = 0)"
        )


#: Pool size per value: the columns with the smallest scores, min(n_V - 1, max(POOL_FACTOR *
#: working set, POOL_MIN)); any choice is exact (the final check covers every column), a larger
#: pool only trades final-check rounds for pool rounds.
POOL_FACTOR = 4
POOL_MIN = 1024
#: Pool rounds keep only the support (the old optimum stays feasible, so ||p|| never increases:
#: each solve stays near the support size, ~0.6 d at d = 64) for at most this many rounds, then
#: keep every column (the working set then only grows, so the loop ends).
SHRINK_ROUNDS = 50
#: Columns per block of the passes over the n_V columns: a chunk's (chunk x BLOCK) float32 arrays
#: stay in cache, so each elementwise step costs no memory traffic.
BLOCK = 512
#: Strided sample columns for the pool threshold.
SAMPLE = 2048
#: The threshold aims at OVERSAMPLE x k columns per row (the k smallest are kept).
OVERSAMPLE = 1.25


def _unit_rows(V: np.ndarray, i: int, cols: np.ndarray) -> np.ndarray:
    diff = V[i] - V[cols]
    return diff / np.linalg.norm(diff, axis=1)[:, None]


class _Buffers:
    """Reused float32 / bool buffers of one column block (c x BLOCK, contiguous per shape)."""

    def __init__(self, c: int, width: int):
        self.f = np.empty((2, c * width), dtype=np.float32)
        self.mask = np.empty(c * width, dtype=bool)

    def get(self, c: int, width: int):
        size = c * width
        g, s = (self.f[k, :size].reshape(c, width) for k in range(2))
        return g, s, self.mask[:size].reshape(c, width)


def _diagonal(rows: np.ndarray, b0: int, b1: int):
    """(row positions, block columns) of the pairs (i, i) inside the column block b0 .. b1 - 1."""
    a = np.flatnonzero((rows >= b0) & (rows < b1))
    return a, rows[a] - b0


def _pool_threshold(V32, sq32, rows, k: int):
    """Per row, a float32 score below which about OVERSAMPLE x k of its n columns lie, read from
    about SAMPLE evenly strided columns (the pool is then the k smallest below it; any pool is
    exact), and the sample's smallest-score column (the pool of a row with no column below)."""
    n = len(V32)
    step = max(1, n // SAMPLE)
    idx = np.arange(0, n, step)
    m = len(idx)
    g = V32[rows] @ V32[idx].T
    s = sq32[rows, None] - g
    dd = sq32[None, idx] - g
    dd += s
    np.maximum(dd, np.float32(1e-30), out=dd)  # near-duplicate pairs: only a quantile is read
    s /= np.sqrt(dd, out=dd)
    a = np.flatnonzero(rows % step == 0)
    s[a, rows[a] // step] = np.inf
    q = min(m - 1, int(np.ceil(OVERSAMPLE * k * m / n)))
    thr = np.minimum(np.partition(s, q, axis=1)[:, q], np.finfo(np.float32).max)
    return thr, idx[np.argmin(s, axis=1)]


def _pool_pass(Vb, V32, sq32, rows, dist, k: int, bufs: _Buffers):
    """One pass over the columns in blocks of BLOCK (every array of a block stays in cache):
    the float32 distances into ``dist`` (near pairs recomputed from the differences, duplicates
    raise), and per row its pool (columns, float32 scores), at most the k columns of smallest
    score <v_i, w_ij>, plus its near pairs (squared distance <= NEAR_TOL)."""
    n = len(V32)
    c = len(rows)
    Vr, sqr = V32[rows], sq32[rows, None]
    thr, fallback = _pool_threshold(V32, sq32, rows, k)
    thr = thr[:, None]
    near = [[] for _ in range(c)]
    hit_a, hit_b, hit_s = [], [], []
    for b0 in range(0, n, BLOCK):
        b1 = min(n, b0 + BLOCK)
        g, s, mask = bufs.get(c, b1 - b0)
        dd = dist[:, b0:b1]
        np.matmul(Vr, V32[b0:b1].T, out=g)
        np.subtract(sqr, g, out=s)  # sq_i - <v_i, v_j>
        np.subtract(sq32[None, b0:b1], g, out=dd)
        dd += s  # ||v_i - v_j||^2 expanded (table scaled to largest norm 1)
        da, db = _diagonal(rows, b0, b1)
        dd[da, db] = np.inf
        if dd.min() <= SCREEN_EXACT:  # recompute from the differences
            close_a, close_b = np.nonzero(dd <= SCREEN_EXACT)
            for a in np.unique(close_a):
                b = close_b[close_a == a]
                diff = Vb[rows[a]] - Vb[b + b0]
                exact = np.einsum("ij,ij->i", diff, diff)
                dd[a, b] = exact
                full = np.full((1, n), np.inf)
                full[0, b + b0] = exact
                _raise_on_duplicates(full, rows[a : a + 1], 1.0)
                near[a].append(b[exact <= NEAR_TOL] + b0)
        np.sqrt(dd, out=dd)
        s /= dd  # <v_i, w_ij> (scaled): the nearest j are the hardest
        s[da, db] = np.inf
        np.less_equal(s, thr, out=mask)
        flat = np.flatnonzero(mask)  # 2-d np.nonzero costs ~30x more per element
        if len(flat):
            a, b = np.divmod(flat, b1 - b0)
            hit_a.append(a)
            hit_b.append(b + b0)
            hit_s.append(s.reshape(-1)[flat])
    a, b, sc = (
        np.concatenate(x) if x else np.zeros(0, dtype=t)
        for x, t in zip((hit_a, hit_b, hit_s), (np.int64, np.int64, np.float32))
    )
    order = np.argsort(a, kind="stable")
    edges = np.searchsorted(a[order], np.arange(1, c))
    pools = []
    for r, (cols, score) in enumerate(zip(np.split(b[order], edges), np.split(sc[order], edges))):
        if not len(cols):
            cols, score = fallback[r : r + 1], np.zeros(1, dtype=np.float32)
        elif len(cols) > k:  # ties or a low threshold estimate: the k smallest
            keep = np.argpartition(score, k - 1)[:k]
            cols, score = cols[keep], score[keep]
        pools.append((cols, score))
    near = [np.concatenate(x) if x else np.zeros(0, dtype=np.int64) for x in near]
    return pools, near


def _pool_rounds(V, V32, dist_row, i: int, pool, k0: int, gram_path: bool):
    """Column generation for value i inside its pool (columns, float32 scores). Each round
    solves the working set exactly in float64, screens the pool's check values in float32 (the
    pool's rows and distances are gathered once) and re-checks exactly every pool column within
    SCREEN_MARGIN of ||p||; a violator this misses is found by the final check. Returns
    (working set, ||p||, u)."""
    d = V.shape[1]
    cols, score = pool
    Vp, dp = V32[cols], dist_row[cols]
    ws = np.argpartition(score, k0 - 1)[:k0] if len(cols) > k0 else np.arange(len(cols))
    ws = ws[np.argsort(score[ws], kind="stable")]  # positions in the pool, easiest last
    W = _unit_rows(V, i, cols[ws])
    rounds = 0
    while True:
        lam = ldp_min_norm(W, gram_path)
        p = lam @ W
        rounds += 1
        if gram_path or rounds <= SHRINK_ROUNDS:  # keep the support first
            keep = lam > 0
            ws, W = ws[keep], W[keep]
        norm = float(np.linalg.norm(p))
        if norm <= 1e-14:
            break
        u = p / norm
        u32 = u.astype(np.float32)
        vals = (np.float32(V32[i] @ u32) - Vp @ u32) / dp  # float32 check values of the pool
        close = vals < np.float32(norm + SCREEN_MARGIN)
        close[ws] = False
        cand = np.flatnonzero(close)
        if not len(cand):
            break
        Wc = _unit_rows(V, i, cols[cand])
        ex = Wc @ u
        hit = ex < norm - VIOLATION_TOL
        if not hit.any():
            break
        cap = max(1, d - len(ws)) if gram_path else d + 1
        add = np.flatnonzero(hit)[np.argsort(ex[hit], kind="stable")[:cap]]
        ws = np.concatenate([ws, cand[add]])
        W = np.concatenate([W, Wc[add]])
    return cols[ws], norm, (u if norm > 1e-14 else np.zeros(d))


def _check_pass(Ur, uv, thr, V32, dist, rows, bufs: _Buffers) -> list[np.ndarray]:
    """Per row, the columns whose float32 check value (<u, v_i> - <u, v_j>) / ||v_i - v_j|| lies
    below ``thr``, computed block by block against every column."""
    n = len(V32)
    c = len(rows)
    hit_a, hit_b = [], []
    thr = thr[:, None]
    for b0 in range(0, n, BLOCK):
        b1 = min(n, b0 + BLOCK)
        h, _, mask = bufs.get(c, b1 - b0)
        np.matmul(Ur, V32[b0:b1].T, out=h)
        np.subtract(uv[:, None], h, out=h)
        h /= dist[:, b0:b1]
        da, db = _diagonal(rows, b0, b1)
        h[da, db] = np.inf
        np.less(h, thr, out=mask)
        flat = np.flatnonzero(mask)
        if len(flat):
            a, b = np.divmod(flat, b1 - b0)
            hit_a.append(a)
            hit_b.append(b + b0)
    a = np.concatenate(hit_a) if hit_a else np.zeros(0, dtype=np.int64)
    b = np.concatenate(hit_b) if hit_b else np.zeros(0, dtype=np.int64)
    order = np.argsort(a, kind="stable")
    return np.split(b[order], np.searchsorted(a[order], np.arange(1, c)))


def _final_check(V, Vb, V32, rows, dist, U, P, cols, near, gram_path: bool, bufs: _Buffers):
    """Screens every separator against every column in float32 and re-checks in float64 every
    column whose check value lies below ||p|| + SCREEN_MARGIN (and the near pairs); a violator
    from outside the working set is added and that value re-solved and re-checked. Returns the
    exact float64 minimum check value per row (the primal value); updates U, P and cols."""
    d = V.shape[1]
    c = len(rows)
    low = np.zeros(c)
    pending = np.flatnonzero(P > 1e-14)
    while len(pending):
        Dp = dist if len(pending) == c else dist[pending]
        uv = (U[pending] * Vb[rows[pending]]).sum(axis=1).astype(np.float32)
        thr = (P[pending] + SCREEN_MARGIN).astype(np.float32)
        split = _check_pass(U[pending].astype(np.float32), uv, thr, V32, Dp, rows[pending], bufs)
        still = []
        for r, a in enumerate(pending):
            i = rows[a]
            cand = np.union1d(split[r], near[a]) if len(near[a]) else split[r]
            if not len(cand):  # every check value lies above the margin: its smallest column
                h = (uv[r] - V32 @ U[a].astype(np.float32)) / Dp[r]
                h[i] = np.inf
                cand = np.array([int(np.argmin(h))])
            ex = _unit_rows(V, i, cand) @ U[a]
            low[a] = float(ex.min())
            hit = ex < P[a] - VIOLATION_TOL
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
    return low


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
        with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_one_blas_thread) as pool:
            parts = list(pool.map(_range, *zip(*[(args, lo, hi) for lo, hi in zip(edges, edges[1:])])))
        return tuple(np.concatenate([part[k] for part in parts]) for k in range(4))
    return _range((V, sq, scale, k0, chunk, gram_path), 0, n)


def _one_blas_thread() -> None:
    """Worker initializer: one BLAS thread per forked worker. A forked worker inherits the parent's
    BLAS thread pool; with ``workers`` processes each running the machine's default, the threads
    oversubscribe the cores (measured on the idle 2-core machine, n_V = 10^5, d = 64, 2 workers:
    776 worker CPU-s and 390 s wall with inherited threads, 148 CPU-s and 74 s wall with one)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)


def _range(args, lo: int, hi: int):
    """:func:`screened` for the values lo .. hi - 1 (arrays of length hi - lo)."""
    V, sq, scale, k0, chunk, gram_path = args
    n, d = V.shape
    Vb = V / np.sqrt(scale)
    V32 = np.ascontiguousarray(Vb, dtype=np.float32)
    sq32 = (sq / scale).astype(np.float32)
    m_pool = int(min(n - 1, max(POOL_FACTOR * k0, POOL_MIN)))
    separators = np.zeros((hi - lo, d))
    primal = np.zeros(hi - lo)
    dual = np.zeros(hi - lo)
    sizes = np.zeros(hi - lo, dtype=np.int64)
    c_max = min(chunk, n)
    D = np.empty((c_max, n), dtype=np.float32)  # distances, kept for the final check
    bufs = _Buffers(c_max, min(BLOCK, n))
    for start in range(lo, hi, chunk):
        rows = np.arange(start, min(hi, start + chunk))
        c = len(rows)
        dist = D[:c]
        pools, near = _pool_pass(Vb, V32, sq32, rows, dist, m_pool, bufs)
        U = np.zeros((c, d))
        P = np.zeros(c)
        cols = []
        for a in range(c):
            ws, P[a], U[a] = _pool_rounds(V, V32, dist[a], rows[a], pools[a], k0, gram_path)
            cols.append(ws)
        low = _final_check(V, Vb, V32, rows, dist, U, P, cols, near, gram_path, bufs)
        for a, i in enumerate(rows):
            u, low_a = U[a], float(low[a])
            if low_a <= 0 or not np.any(u):  # 0 in the hull (or numerically so): u = 0 attains 0
                u, low_a = np.zeros(d), 0.0
            separators[i - lo], primal[i - lo], dual[i - lo], sizes[i - lo] = u, low_a, P[a], len(cols[a])
    return separators, primal, dual, sizes
