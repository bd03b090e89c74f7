"""Minimum-norm point solvers (theory/fact_mlp/nnls.py): block pivoting against scipy's NNLS."""

import numpy as np
import pytest

from theory.fact_mlp.nnls import bpp_nnls, gram_weights, ldp_min_norm


def test_bpp_nnls_satisfies_kkt():
    rng = np.random.default_rng(0)
    M = rng.standard_normal((30, 12))
    b = rng.standard_normal(12)
    A = M.T @ M
    x = bpp_nnls(A, b, max_iter=200)
    y = A @ x - b
    assert np.all(x >= 0) and np.any(x == 0) and np.any(x > 0)
    assert np.all(y[x == 0] >= -1e-10) and np.allclose(y[x > 0], 0, atol=1e-10)


@pytest.mark.parametrize("k, d, seed", [(5, 8, 0), (40, 64, 1), (100, 128, 2), (64, 64, 3)])
def test_gram_weights_match_scipy_active_set(k, d, seed):
    """Same convex weights (same minimum-norm point) from the Gram matrix alone."""
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((k, d)) + 0.5  # shifted: 0 outside the hull, a sparse optimum
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    ref = ldp_min_norm(W, pivoting=False)
    lam = gram_weights(W @ W.T)
    assert lam is not None and abs(lam.sum() - 1) < 1e-12 and np.all(lam >= 0)
    np.testing.assert_allclose(lam @ W, ref @ W, atol=1e-10)


def test_singular_gram_falls_back():
    """More columns than dimensions: E^T E is singular, pivoting may give up (None) and
    ldp_min_norm then uses scipy's NNLS; the result is the reference either way."""
    rng = np.random.default_rng(4)
    W = rng.standard_normal((30, 4)) + 1.0
    W /= np.linalg.norm(W, axis=1, keepdims=True)
    np.testing.assert_allclose(ldp_min_norm(W) @ W, ldp_min_norm(W, pivoting=False) @ W, atol=1e-12)
