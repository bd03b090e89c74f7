"""Retrieval-gate feedback, the joint fixed point and its approximations (D4,
docs/hopfield.md#statements-and-proof-sketches).

All [derived]: this project's formalisation of the coupled gate/retrieval system of
Context-Gated Associative Retrieval (2605.10970), whose equations could not be obtained.

For a fixed query xi_q, context logits a and feedback gain lambda >= 0, the gate reads the
current retrieval, g(xi) = sigma(a + lambda X^T xi), and the self-consistent retrieval state is
the fixed point of G(xi) = X softmax(beta X^T xi_q + log sigma(a + lambda X^T xi)).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import expit, log_expit, softmax

from constructions.hopfield.networks import check_beta, check_patterns, check_state
from theory.validate import require_int, require_real


def _check(X, xi_q, beta, logits, lam):
    X = check_patterns(X)
    xi_q = check_state(X, xi_q, "xi_q")
    b = check_beta(beta)
    a = np.asarray(logits, dtype=np.float64)
    if a.shape != (X.shape[1],) or np.any(np.isnan(a)):
        raise ValueError(f"context logits a must be a non-NaN vector of shape ({X.shape[1]},)")
    lam_ = require_real("lambda", lam, 0)
    return X, xi_q, b, a, lam_


def gates(X, xi, logits, lam) -> np.ndarray:
    """g(xi) = sigma(a + lambda X^T xi) [derived]."""
    return expit(np.asarray(logits) + lam * (X.T @ xi))


def feedback_map(X, xi, xi_q, beta, logits, lam) -> np.ndarray:
    """G(xi) = X softmax(beta X^T xi_q + log sigma(a + lambda X^T xi)) [derived]."""
    X, xi_q, b, a, lam_ = _check(X, xi_q, beta, logits, lam)
    xi = check_state(X, xi)
    z = b * (X.T @ xi_q) + log_expit(a + lam_ * (X.T @ xi))
    return X @ softmax(z)


def feedback_jacobian(X, xi, xi_q, beta, logits, lam) -> np.ndarray:
    """J_G = X Sigma_p D X^T, Sigma_p = diag(p) - p p^T, D = diag(lambda (1 - g)) [derived].

    Its spectral norm is at most lambda M^2 (D4, theory.hopfield.derived.contraction_bound).
    """
    X, xi_q, b, a, lam_ = _check(X, xi_q, beta, logits, lam)
    xi = check_state(X, xi)
    s = a + lam_ * (X.T @ xi)
    p = softmax(b * (X.T @ xi_q) + log_expit(s))
    sigma = np.diag(p) - np.outer(p, p)
    D = lam_ * (1.0 - expit(s))
    return X @ (sigma * D[None, :]) @ X.T


@dataclass
class PicardResult:
    """Outcome of Picard iteration: the state, whether it converged, and diagnostics.

    residuals[t] = ||xi_{t+1} - xi_t||; contraction_rate = max of residuals[t+1]/residuals[t]
    over steps whose residual is above ``rate_floor`` (below it round-off dominates the ratio).
    """

    xi: np.ndarray
    converged: bool
    steps: int
    residuals: list = field(default_factory=list)
    contraction_rate: float = 0.0


def picard(
    X, xi_q, beta, logits, lam, start=None, tol=1e-12, max_steps=10_000, rate_floor=1e-9
) -> PicardResult:
    """Solve xi = G(xi) by Picard iteration from ``start`` (default 0) [derived].

    Stops when ||xi_{t+1} - xi_t|| <= tol or after max_steps. D4 says the iteration converges at
    rate lambda M^2 when that is below 1; otherwise it may stall or converge to one of several
    fixed points (multistability).
    """
    X, xi_q, b, a, lam_ = _check(X, xi_q, beta, logits, lam)
    require_real("tol", tol, 0, low_open=True)
    max_steps = require_int("max_steps", max_steps, 1)
    xi = np.zeros(X.shape[0]) if start is None else check_state(X, start, "start").copy()
    zq = b * (X.T @ xi_q)
    residuals = []
    converged = False
    for _ in range(max_steps):
        new = X @ softmax(zq + log_expit(a + lam_ * (X.T @ xi)))
        res = float(np.linalg.norm(new - xi))
        residuals.append(res)
        xi = new
        if res <= tol:
            converged = True
            break
    rates = [
        residuals[t + 1] / residuals[t]
        for t in range(len(residuals) - 1)
        if residuals[t] > rate_floor and residuals[t + 1] > 0
    ]
    return PicardResult(
        xi=xi,
        converged=converged,
        steps=len(residuals),
        residuals=residuals,
        contraction_rate=float(max(rates)) if rates else 0.0,
    )


def picard_many(X, xi_q, beta, logits, lam, starts, tol=1e-12, max_steps=10_000):
    """Picard iteration of G from many starts at once (columns of ``starts``, shape (d, S)).

    Each column stops moving once its step is <= tol. Returns (states (d, S), converged (S,) bool,
    steps (S,) int): the batched form of :func:`picard`, used to count distinct fixed points.
    """
    X, xi_q, b, a, lam_ = _check(X, xi_q, beta, logits, lam)
    S = np.asarray(starts, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != X.shape[0] or not np.all(np.isfinite(S)):
        raise ValueError(f"starts must be a finite array of shape ({X.shape[0]}, S)")
    max_steps = require_int("max_steps", max_steps, 1)
    zq = (b * (X.T @ xi_q))[:, None]
    S = S.copy()
    active = np.ones(S.shape[1], dtype=bool)
    steps = np.zeros(S.shape[1], dtype=int)
    for _ in range(max_steps):
        cols = np.flatnonzero(active)
        if cols.size == 0:
            break
        Z = zq + log_expit(a[:, None] + lam_ * (X.T @ S[:, cols]))
        new = X @ softmax(Z, axis=0)
        res = np.linalg.norm(new - S[:, cols], axis=0)
        S[:, cols] = new
        steps[cols] += 1
        active[cols[res <= tol]] = False
    return S, ~active, steps


def fixed_point_probabilities(X, xi_star, xi_q, beta, logits, lam) -> np.ndarray:
    """p* = softmax(beta X^T xi_q + log sigma(a + lambda X^T xi*))."""
    X, xi_q, b, a, lam_ = _check(X, xi_q, beta, logits, lam)
    return softmax(b * (X.T @ xi_q) + log_expit(a + lam_ * (X.T @ xi_star)))


def approximations(X, xi_q, beta, logits, lam) -> dict:
    """Zero-shot, first- and second-order approximations of xi* [derived].

    p0 = softmax(z0), z0 = beta X^T xi_q (zero-shot);
    p1 = softmax(z0 + u0), u0 = log sigma(a), xi1 = X p1 (direct contextual bias, first order);
    xi2 = X softmax(z0 + u0 + lambda (1 - g0) * X^T xi1), g0 = sigma(a) (one pass of the
    retrieval -> gate -> retrieval loop, second order).
    Claim shape: ||xi* - xi1|| = O(lambda), ||xi* - xi2|| = O(lambda^2) (Taylor expansion of
    log sigma(a + lambda s) = log sigma(a) + lambda (1 - sigma(a)) s + O(lambda^2), and xi* = xi1 + O(lambda)).
    """
    X, xi_q, b, a, lam_ = _check(X, xi_q, beta, logits, lam)
    z0 = b * (X.T @ xi_q)
    u0 = log_expit(a)
    g0 = expit(a)
    p0 = softmax(z0)
    p1 = softmax(z0 + u0)
    xi1 = X @ p1
    p2 = softmax(z0 + u0 + lam_ * (1.0 - g0) * (X.T @ xi1))
    return {"p0": p0, "xi0": X @ p0, "p1": p1, "xi1": xi1, "p2": p2, "xi2": X @ p2}


def effective_rank(matrix) -> float:
    """exp of the spectral entropy of a PSD matrix (eigenvalues normalised to sum 1) [derived]."""
    w = np.linalg.eigvalsh(np.asarray(matrix, dtype=np.float64))
    w = np.clip(w, 0.0, None)
    if w.sum() <= 0:
        raise ValueError("effective rank of a zero matrix is undefined")
    q = w / w.sum()
    q = q[q > 0]
    return float(np.exp(-np.sum(q * np.log(q))))
