"""Minimum-norm point of a convex hull by NNLS (least-distance programming), two solvers.

Used by theory/fact_mlp/rho.py ([derived] computation, docs/fact_mlp.md#setting). For unit
rows W (k, d) the minimum-norm point of conv(rows) has convex weights lam / sum(lam), where lam
solves the NNLS min_{lam >= 0} ||E lam - e_{d+1}||, E = [W^T; 1^T] (Lawson & Hanson ch. 23).

* :func:`ldp_min_norm`: scipy's active-set NNLS on E (the reference), or
* :func:`gram_weights`: block principal pivoting on the normal equations
  (E^T E = W W^T + 1 1^T, E^T e_{d+1} = 1) from the Gram matrix alone, for k <= d columns,
  where E^T E is positive definite for directions in general position. Each round solves one
  Cholesky system and exchanges every infeasible variable, so it needs a handful of rounds
  where the active-set method adds one column per round (5-20x faster at k ~ 256).

numpy and scipy only (theory/ never imports torch).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.optimize import nnls


def bpp_nnls(A: np.ndarray, b: np.ndarray, max_iter: int) -> np.ndarray | None:
    """NNLS min_{x >= 0} x^T A x - 2 b^T x for a positive definite A (the normal equations), by
    block principal pivoting (Portugal, Judice & Vicente 1994; Kim & Park 2011): every infeasible
    variable is exchanged at once, with Murty's single-exchange backup rule, which terminates.

    Returns x satisfying the KKT conditions to rounding (x >= 0; (A x - b)_j >= -tol where
    x_j = 0), or None if A_FF is not numerically positive definite or the pivoting does not
    finish in max_iter rounds (the caller then uses scipy's active-set NNLS)."""
    k = len(b)
    free = np.ones(k, dtype=bool)
    tol = 1e-12 * max(1.0, float(np.abs(b).max()))
    best, alpha = k + 1, 3
    for _ in range(max_iter):
        x = np.zeros(k)
        if free.any():
            try:
                factor = cho_factor(A[np.ix_(free, free)], check_finite=False)
            except np.linalg.LinAlgError:
                return None
            x[free] = cho_solve(factor, b[free], check_finite=False)
        y = A @ x - b
        y[free] = 0.0
        bad = (free & (x < 0.0)) | (~free & (y < -tol))
        n_bad = int(bad.sum())
        if n_bad == 0:
            return x
        if n_bad < best:
            best, alpha = n_bad, 3
            free ^= bad
        elif alpha >= 1:
            alpha -= 1
            free ^= bad
        else:
            j = int(np.flatnonzero(bad).max())
            free[j] = not free[j]
    return None


def gram_weights(K: np.ndarray) -> np.ndarray | None:
    """Convex weights of the minimum-norm point from the Gram matrix K = W W^T of k <= d
    directions (the LDP normal equations, block pivoting); None where the pivoting fails."""
    lam = bpp_nnls(K + 1.0, np.ones(len(K)), max_iter=10 * len(K) + 50)
    if lam is None or not lam.sum() > 0:
        return None
    return lam / lam.sum()


def ldp_min_norm(W: np.ndarray, pivoting: bool = True) -> np.ndarray:
    """Convex weights lam (sum 1) of the minimum-norm point of conv(rows of W), via NNLS-LDP.

    The NNLS min_{lam >= 0} ||E lam - e_{d+1}||, E = [W^T; 1^T], is solved on its normal
    equations (E^T E = W W^T + 1 1^T, E^T e_{d+1} = 1) by block pivoting when there are at most
    d columns (E^T E is then positive definite for directions in general position); otherwise,
    or when the pivoting fails, by scipy's active-set NNLS on E itself. Both reach the same KKT
    point; the caller's full check certifies the result either way."""
    k, d = W.shape
    if pivoting and k <= d:
        lam = gram_weights(W @ W.T)
        if lam is not None:
            return lam
    E = np.empty((d + 1, k))
    E[:d] = W.T
    E[d] = 1.0
    f = np.zeros(d + 1)
    f[d] = 1.0
    lam, _ = nnls(E, f, maxiter=50 * (k + d + 1))
    total = lam.sum()
    if not total > 0:  # cannot happen: lam = e_j/1 already improves on 0
        raise ValueError("NNLS returned the zero vector; the value table is degenerate")
    return lam / total
