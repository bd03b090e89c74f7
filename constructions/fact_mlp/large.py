"""A bucketed (sparse-gated) fact-storing MLP built exactly in O(F d^2) time, for the large fact
sets of the full-scale claims. [derived]: the construction below is ours.

Decoder as in the joint encoder-decoder (:mod:`constructions.fact_mlp.encoder`): target code
c_j = Rp u*_j for the exact separators u*_j of :func:`theory.fact_mlp.rho.decodability`
(Rp = I_d and m_c = d when ``code_dim`` is None, so outputs are the separators and each fact is
decoded with margin rho_{f(i)} ||v_{f(i)} - v_j||), output M(x) = Rp^T code(x).

Encoder: one shared gate direction g (a random unit vector) and J buckets ("slabs") of the keys
sorted by t = g . k. Unit j is gated by a trapezoid of t,

    code(x) = sum_j tau_j(g . x) A_j^T x,     A_j in R^{d x m_c},

with tau_j = 1 on slab j's interval of t, 0 outside it and its two ramps, and linear on the
ramps. Each ramp lies strictly inside the gap between the last key of one slab and the first key
of the next (the middle half of the gap), so on every key exactly one tau_j equals 1 and all the
others are 0: the buckets are disjoint, and each A_j is the minimum-norm exact solution of
k^T A_j = c_{f(k)} for the s_j <= d keys of slab j (an s_j x s_j Cholesky solve). No key is
dropped: slabs tile the sorted order. Slab sizes s_j lie in [min_bucket, bucket] and each split
is placed at the widest gap of t in that window. A query between slabs mixes two neighbours.

As a standard gated MLP: tau_j(t) = [ReLU(t - a_j) - ReLU(t - b_j)]/(b_j - a_j) -
[ReLU(t - c_j) - ReLU(t - e_j)]/(e_j - c_j), i.e. ReLU gates on the one direction g with biases
at the ramp ends; after telescoping, two ReLU gate biases per slab boundary. Unique parameters:
g (d), 2 (J - 1) ramp ends, J d m_c encoder entries and m_c d decoder entries, against the joint
construction's H d + H d m_c + m_c d with H = ceil(F / d): a ratio near d / mean(s_j).

Exactness hypothesis: the keys of each slab are linearly independent (generic keys; a repeated
key or a repeated projection t raises ValueError naming it). ``allow_overfull=True`` with
``bucket > d`` builds slabs of more than d keys by least squares: too few gates per bucket, not
exact (the control of the exactness claim).

Randomness: one ``numpy.random.Generator`` seeded by ``seed`` (direction and decoder).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from constructions.fact_mlp.facts import check_fact_set
from constructions.seeding import rng_for
from constructions.tasks import require_size
from theory.validate import require_int

if TYPE_CHECKING:
    from theory.fact_mlp.rho import Decodability

#: Rows evaluated per block in :meth:`LargeFactMLP.code` (bounds working memory).
_ROW_CHUNK = 1 << 16


@dataclass
class LargeFactMLP:
    """The built bucketed MLP: direction (d,), ramps (J - 1, 2) = [start, end] of each ramp in t,
    encoder (J, d, m_c), projection Rp (m_c, d)."""

    direction: np.ndarray
    ramps: np.ndarray
    encoder: np.ndarray
    projection: np.ndarray
    info: dict = field(default_factory=dict)

    @property
    def n_buckets(self) -> int:
        return len(self.encoder)

    @property
    def code_dim(self) -> int:
        return self.projection.shape[0]

    @property
    def n_params(self) -> int:
        """Unique parameters: direction d, ramp ends 2 (J - 1), encoder J d m_c, decoder m_c d."""
        J, d, m_c = self.encoder.shape
        return d + 2 * (J - 1) + J * d * m_c + m_c * d

    @property
    def n_params_relu(self) -> int:
        """Parameters of the equivalent standard ReLU-gated MLP (:meth:`gated`): hidden width
        m = m_c (2 J - 1), W_gate and W_up (m, d), b_gate (m,), W_down (d, m): 3 d m + m."""
        J, d, m_c = self.encoder.shape
        m = m_c * (2 * J - 1)
        return 3 * d * m + m

    def gated(self) -> dict:
        """The same map as a standard gated MLP y = W_down[(W_up x) * ReLU(W_gate x + b_gate)]
        (module docstring): code(x) = A_0^T x + sum_k ramp_k(g . x) (A_{k+1} - A_k)^T x with
        ramp_k(t) = [ReLU(t - lo_k) - ReLU(t - hi_k)] / (hi_k - lo_k); the A_0 unit has a zero
        gate row and bias 1. Keys of (d, m) = W_down etc. as :func:`constructions.fact_mlp.facts.gated_forward`."""
        J, d, m_c = self.encoder.shape
        ups = [self.encoder[0]]
        rows = [np.zeros(d)]
        bias = [1.0]
        for k in range(J - 1):
            lo, hi = self.ramps[k]
            delta = (self.encoder[k + 1] - self.encoder[k]) / (hi - lo)
            ups += [delta, -delta]
            rows += [self.direction, self.direction]
            bias += [-lo, -hi]
        W_up = np.concatenate([u.T for u in ups])  # (m, d), unit (gate, r)
        return {
            "W_gate": np.repeat(np.asarray(rows), m_c, axis=0),
            "b_gate": np.repeat(np.asarray(bias), m_c),
            "W_up": W_up,
            "W_down": np.tile(self.projection.T, (1, len(ups))),
        }

    def gate_weights(self, t: np.ndarray):
        """(slab, weight) of the open trapezoids at projections t: two per row (weight 0 unused)."""
        t = np.asarray(t, dtype=np.float64)
        if len(self.ramps) == 0:  # one slab: its gate is always 1
            zero = np.zeros(len(t), dtype=np.int64)
            return np.stack([zero, zero], 1), np.stack([np.zeros(len(t)), np.ones(len(t))], 1)
        lo, hi = self.ramps[:, 0], self.ramps[:, 1]
        j = np.searchsorted(lo, t, side="left")  # lo[j-1] < t <= lo[j]
        prev = np.maximum(j - 1, 0)
        in_ramp = (j > 0) & (t < hi[prev])
        w_prev = np.where(in_ramp, (hi[prev] - t) / (hi[prev] - lo[prev]), 0.0)
        return np.stack([prev, j], 1), np.stack([w_prev, 1.0 - w_prev], 1)

    def code(self, X) -> np.ndarray:
        """code(x) = sum_j tau_j(g . x) A_j^T x for the rows of X (numpy float64), per slab."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != len(self.direction):
            raise ValueError(f"inputs must be (n, {len(self.direction)}), got {X.shape}")
        if np.isnan(X).any():
            raise ValueError("NaN in the inputs")
        out = np.zeros((len(X), self.code_dim))
        for s in range(0, len(X), _ROW_CHUNK):
            Xc = X[s : s + _ROW_CHUNK]
            slab, w = self.gate_weights(Xc @ self.direction)
            keep = w > 0
            rows = np.nonzero(keep)[0]
            slab, w = slab[keep], w[keep]
            order = np.argsort(slab, kind="stable")
            rows, slab, w = rows[order], slab[order], w[order]
            cuts = np.flatnonzero(np.diff(slab)) + 1
            for r, sl, ww in zip(np.split(rows, cuts), np.split(slab, cuts), np.split(w, cuts)):
                if len(r):
                    out[s + r] += ww[:, None] * (Xc[r] @ self.encoder[sl[0]])
        return out

    def forward(self, x):
        """Outputs in value space, M(x) = Rp^T code(x): torch (n, d) in, float64 tensor out (a
        numpy array in, a numpy array out)."""
        if isinstance(x, np.ndarray):
            return self.code(x) @ self.projection
        import torch

        X = x.detach().to("cpu", torch.float64).numpy()
        return torch.from_numpy(self.code(X) @ self.projection)


def build_large(
    keys: np.ndarray,
    values: np.ndarray,
    assignment: np.ndarray,
    *,
    seed: int = 0,
    code_dim: int | None = None,
    bucket: int | None = None,
    min_bucket: int | None = None,
    allow_overfull: bool = False,
    decodability: Decodability | None = None,
) -> LargeFactMLP:
    """Bucketed exact fact MLP (module docstring). keys (F, d), values (n_V, d), assignment (F,)
    value indices. ``code_dim``: None -> m_c = d with Rp = I; else a Gaussian N(0, 1/m_c) decoder
    as in the joint construction. ``bucket``: largest slab (default d); ``min_bucket``: smallest
    (default bucket - bucket // 8). ``decodability``: a precomputed result for ``values``.
    ``info`` holds the stage timings, slab sizes, the maximum fit error on the keys and the target
    code of every value (``value_codes``, (n_V, m_c)).
    """
    import time

    from theory.fact_mlp.rho import decodability as compute_rho

    K = np.ascontiguousarray(keys, dtype=np.float64)
    V = np.asarray(values, dtype=np.float64)
    f = np.asarray(assignment)
    check_fact_set(K, V, f)
    F, d = K.shape
    seed = require_int("seed", seed, 0)
    if code_dim is not None:
        code_dim = require_size("code_dim", code_dim, 1, "m_c")
    s_max = d if bucket is None else require_int("bucket", bucket)
    if s_max < 1 or (s_max > d and not allow_overfull):
        raise ValueError(
            f"bucket={s_max} violates the hypothesis 1 <= bucket <= d = {d}: a bucket "
            "of more than d keys has no exact fit (too few gates per bucket)"
        )
    s_min = s_max - s_max // 8 if min_bucket is None else require_int("min_bucket", min_bucket)
    if not 1 <= s_min <= s_max:
        raise ValueError(f"min_bucket={s_min} violates 1 <= min_bucket <= bucket = {s_max}")
    rng = rng_for(seed)
    t0 = time.perf_counter()
    rho = compute_rho(V) if decodability is None else decodability
    used = np.unique(f)
    bad = used[rho.per_value[used] <= 1e-9]
    if len(bad):
        raise ValueError(
            f"values[{int(bad[0])}] lies in the convex hull of the other values "
            f"(rho = {rho.per_value[bad[0]]:.2e}): no argmax decoder outputs it (B4)"
        )
    if code_dim is None:
        Rp = np.eye(d)
    else:
        Rp = rng.standard_normal((code_dim, d)) / math.sqrt(code_dim)
    codes = rho.separators @ Rp.T  # (n_V, m_c)
    t1 = time.perf_counter()
    g = rng.standard_normal(d)
    g /= np.linalg.norm(g)
    t = K @ g
    order = np.argsort(t, kind="stable")
    ts = t[order]
    starts = _split(ts, s_min, s_max)
    ends = np.append(starts[1:], F)
    gaps_lo, gaps_hi = ts[ends[:-1] - 1], ts[ends[:-1]]
    if len(gaps_lo) and np.any(gaps_hi - gaps_lo <= 1e-12 * max(1.0, float(np.abs(ts).max()))):
        j = int(np.argmin(gaps_hi - gaps_lo))
        raise ValueError(
            f"keys {int(order[ends[j] - 1])} and {int(order[ends[j]])} have the same "
            "projection on the gate direction (repeated keys?): no slab boundary "
            "separates them"
        )
    width = gaps_hi - gaps_lo
    ramps = np.stack([gaps_lo + width / 4, gaps_hi - width / 4], 1)
    t2 = time.perf_counter()
    m_c = codes.shape[1]
    A = np.empty((len(starts), d, m_c))
    worst = 0.0
    for j, (a, e) in enumerate(zip(starts, ends)):
        idx = order[a:e]
        A[j], err = _solve_slab(K[idx], codes[f[idx]], j, idx, allow_overfull)
        worst = max(worst, err)
    t3 = time.perf_counter()
    sizes = ends - starts
    info = {
        "decodability_s": t1 - t0,
        "bucketing_s": t2 - t1,
        "fit_s": t3 - t2,
        "rho": rho.rho,
        "max_fit_error": worst,
        "bucket_min": int(sizes.min()),
        "bucket_max": int(sizes.max()),
        "bucket_mean": float(sizes.mean()),
        "min_ramp_gap": float(width.min()) if len(width) else None,
        "n_facts": F,
        "value_codes": codes,
    }
    return LargeFactMLP(g, ramps, A, Rp, info)


def _split(ts, s_min, s_max) -> np.ndarray:
    """Start index of every slab of the sorted projections ts: each slab holds s_min..s_max keys
    (the last one possibly fewer) and ends at the widest gap of its window."""
    F = len(ts)
    starts = [0]
    p = 0
    while F - p > s_max:
        lo, hi = p + s_min, min(p + s_max, F - 1)  # the slab is ts[p:q], q in [lo, hi]
        q = lo + int(np.argmax(ts[lo : hi + 1] - ts[lo - 1 : hi]))
        starts.append(q)
        p = q
    return np.asarray(starts, dtype=np.int64)


def _solve_slab(Kb, T, j, idx, allow_overfull):
    """Minimum-norm A (d, m_c) with Kb A = T (least squares when the slab is overfull)."""
    s, d = Kb.shape
    if s > d:
        A = np.linalg.lstsq(Kb, T, rcond=None)[0]
        return A, float(np.max(np.abs(Kb @ A - T)))
    gram = Kb @ Kb.T
    try:
        L = np.linalg.cholesky(gram)
    except np.linalg.LinAlgError:
        L = None
    if L is None or np.min(np.diag(L)) ** 2 < 1e-13 * np.max(np.diag(gram)):
        raise ValueError(
            f"slab {j}: keys {idx[:5].tolist()} are (numerically) linearly dependent "
            "(keys not in general position): no exact fit"
        )
    A = Kb.T @ _chol_solve(L, T)
    A += Kb.T @ _chol_solve(L, T - Kb @ A)  # one step of iterative refinement
    return A, float(np.max(np.abs(Kb @ A - T)))


def _chol_solve(L, B):
    from scipy.linalg import solve_triangular

    return solve_triangular(L.T, solve_triangular(L, B, lower=True), lower=False)
