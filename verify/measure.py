"""Accuracy and decoding margin over F queries and V candidates, computed in chunks.

The kernel (``decode``, ``decode_naive``, ``Decoding``, ``chunk_rows``) lives in
:mod:`constructions.decode`, the lowest torch layer, and is re-exported here; this module adds
the statistics of the claims (fits, intervals, verdicts over seeds).
"""

from __future__ import annotations

import numpy as np
import torch

from constructions.decode import (  # noqa: F401  (the one decode kernel, re-exported)
    DEFAULT_CHUNK_BYTES,
    TIE_ULPS,
    Decoding,
    _as_tensor,
    chunk_rows,
    decode,
    decode_naive,
)
from verify.claims import rng_for


def min_pairwise_gap(codes) -> float:
    """1 - max_{a != b} <u_a, u_b> for unit rows, in chunks: the margin of a self-decoding."""
    U = _as_tensor(codes)
    res = decode(U, U, torch.arange(U.shape[0], device=U.device))
    return res.min_margin


def binomial_tolerance(n_trials: int, fail_prob: float, level: float = 0.99) -> int:
    """Largest number of failures a claim "fails with probability <= q" tolerates over K seeds:
    the ``level`` quantile of Binomial(K, q) (for q = 0.01, K = 20 it is 2: P(at most 1) = 0.983)."""
    from scipy.stats import binom

    if not 0 < fail_prob < 1:
        raise ValueError(f"fail_prob={fail_prob} violates 0 < q < 1")
    return int(binom.ppf(level, int(n_trials), float(fail_prob)))


def linear_fit(x, y) -> dict:
    """Least-squares line y = a x + b with R^2 (used for threshold-vs-ln N fits)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.size < 2:
        raise ValueError("a linear fit needs two equal-length series of at least 2 points")
    a, b = np.polyfit(x, y, 1)
    resid = y - (a * x + b)
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    r2 = 1.0 - float(np.sum(resid**2)) / ss_tot if ss_tot > 0 else 1.0
    return {"slope": float(a), "intercept": float(b), "r2": r2}


def bootstrap_interval(
    values, level: float = 0.95, n_boot: int = 4000, seed: int = 0, stat=np.mean
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``stat`` over per-seed values (seeded, no global RNG)."""
    x = np.asarray(values, dtype=np.float64)
    if x.size < 2 or not np.all(np.isfinite(x)):
        raise ValueError("a bootstrap interval needs at least 2 finite values")
    rng = rng_for(int(seed), "measure.rng")
    boots = np.array([stat(x[rng.integers(0, x.size, x.size)]) for _ in range(int(n_boot))])
    lo, hi = np.quantile(boots, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def binomial_interval(successes: int, trials: int, level: float = 0.95) -> tuple[float, float]:
    """Clopper-Pearson (exact) interval of a success rate."""
    from scipy.stats import binomtest

    if trials < 1 or not 0 <= successes <= trials:
        raise ValueError(
            f"binomial interval needs 0 <= successes={successes} <= trials={trials}, trials >= 1"
        )
    ci = binomtest(int(successes), int(trials)).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)


def t_interval(values, level: float = 0.95) -> tuple[float, float]:
    """Student-t interval of the mean of per-seed values."""
    from scipy import stats

    x = np.asarray(values, dtype=np.float64)
    if x.size < 2 or not np.all(np.isfinite(x)):
        raise ValueError("a t interval needs at least 2 finite values")
    half = stats.t.ppf((1 + level) / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size)
    return float(x.mean() - half), float(x.mean() + half)
