"""Ungated and gated modern Hopfield networks: generators, energies, updates (docs/hopfield.md#setting).

Memories X have shape (d, N): column mu is x_mu. Everything is float64 numpy; the sizes of the
claims are small enough that no accelerator is needed. Gates are passed as log-gates
u = log g in [-inf, 0] (u = -inf is a hard gate, g = 0), or as gates g in (0, 1] through
:func:`log_gates_from_gates`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp, softmax

from theory.validate import require_int, require_real


# ---------------------------------------------------------------------------------------------
# validation
def check_patterns(X) -> np.ndarray:
    """X as a finite float64 (d, N) array with N >= 1; ValueError otherwise."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"patterns X must have shape (d, N), got {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("patterns X contain NaN or inf")
    return X


def check_state(X, xi, name="xi") -> np.ndarray:
    xi = np.asarray(xi, dtype=np.float64)
    if xi.shape != (X.shape[0],):
        raise ValueError(f"{name} has shape {xi.shape}, but the patterns live in dimension {X.shape[0]}")
    if not np.all(np.isfinite(xi)):
        raise ValueError(f"{name} contains NaN or inf")
    return xi


def check_beta(beta) -> float:
    return require_real("beta", beta, 0, low_open=True)


def check_log_gates(u, n) -> np.ndarray:
    """Log-gates u = log g: shape (N,), values in [-inf, 0], at least one open memory."""
    u = np.asarray(u, dtype=np.float64)
    if u.shape != (n,):
        raise ValueError(f"log-gates have shape {u.shape}, expected ({n},) (one per memory)")
    if np.any(np.isnan(u)) or np.any(u > 0):
        raise ValueError("log-gates u = log g must lie in [-inf, 0], i.e. gates g in [0, 1]")
    if not np.any(np.isfinite(u)):
        raise ValueError("every gate is closed (g = 0): no memory can be retrieved")
    return u


def log_gates_from_gates(g) -> np.ndarray:
    """u = log g for gates g in (0, 1] [derived]; a gate outside (0, 1] is a ValueError."""
    g = np.asarray(g, dtype=np.float64)
    if g.ndim != 1 or np.any(np.isnan(g)) or np.any(g <= 0) or np.any(g > 1):
        raise ValueError("gates g must be a vector with every entry in (0, 1]")
    return np.log(g)


# ---------------------------------------------------------------------------------------------
# generators
def sphere_patterns(n_patterns, dim, radius, gen: np.random.Generator) -> np.ndarray:
    """N columns uniform on the sphere of the given radius in R^d (normalised Gaussians)."""
    n = require_int("N", n_patterns, 1)
    d = require_int("d", dim, 1)
    r = require_real("radius", radius, 0, low_open=True)
    Z = gen.standard_normal((d, n))
    return r * Z / np.linalg.norm(Z, axis=0, keepdims=True)


def gaussian_patterns(n_patterns, dim, gen: np.random.Generator) -> np.ndarray:
    """Entries N(0, 1/d)."""
    n = require_int("N", n_patterns, 1)
    d = require_int("d", dim, 1)
    return gen.standard_normal((d, n)) / math.sqrt(d)


def noisy_query(X, i, radius, gen: np.random.Generator) -> np.ndarray:
    """x_i + r * (unit random direction)."""
    X = check_patterns(X)
    i = require_int("i", i, 0)
    if i >= X.shape[1]:
        raise ValueError(f"pattern index i={i} is not below N={X.shape[1]}")
    r = require_real("r", radius, 0)
    z = gen.standard_normal(X.shape[0])
    return X[:, i] + r * z / np.linalg.norm(z)


def context_gates(n_patterns, target, n_active, kappa, gen: np.random.Generator):
    """Log-gates of a context: u = 0 on the active set, -kappa elsewhere.

    The active set has n_active members, always contains ``target``, the rest drawn at random.
    kappa = log(g_i/g_j) is the distractor log-odds; kappa = inf gives hard gates.
    Returns (u, active_indices).
    """
    n = require_int("N", n_patterns, 1)
    t = require_int("target", target, 0)
    k = require_int("N_eff", n_active, 1)
    if t >= n or k > n:
        raise ValueError(f"need target < N and N_eff <= N; got target={t}, N_eff={k}, N={n}")
    kap = float(kappa)
    if math.isnan(kap) or kap < 0:
        raise ValueError(f"kappa={kappa} must be >= 0 (or inf for hard gates)")
    others = np.delete(np.arange(n), t)
    active = np.concatenate([[t], gen.choice(others, size=k - 1, replace=False)]).astype(int)
    u = np.full(n, -kap)
    u[active] = 0.0
    return u, np.sort(active)


def logits_from_log_gates(u) -> np.ndarray:
    """a = logit(exp(u)) with exp(u) clipped to [1e-12, 1 - 1e-12] (feedback model)."""
    g = np.clip(np.exp(np.asarray(u, dtype=np.float64)), 1e-12, 1 - 1e-12)
    return np.log(g) - np.log1p(-g)


# ---------------------------------------------------------------------------------------------
# models: ungated [reference], gated [derived]
def energy(X, xi, beta) -> float:
    """Ungated modern Hopfield energy [reference, Ramsauer eq. (2)]:
    E(xi) = -beta^{-1} lse(beta X^T xi) + xi^T xi / 2 + beta^{-1} log N + M^2 / 2.
    """
    X = check_patterns(X)
    xi = check_state(X, xi)
    b = check_beta(beta)
    m = float(np.max(np.linalg.norm(X, axis=0)))
    return float(-logsumexp(b * (X.T @ xi)) / b + 0.5 * xi @ xi + math.log(X.shape[1]) / b + 0.5 * m * m)


def update(X, xi, beta) -> np.ndarray:
    """Ungated update [reference, Ramsauer eq. (3)]: f(xi) = X softmax(beta X^T xi) (CCCP step)."""
    return X_softmax(X, xi, beta, None)[0]


def retrieval_distribution(X, xi, beta, log_gates=None) -> np.ndarray:
    """p = softmax(beta X^T xi + u) (u = 0 when ungated) [reference / derived]."""
    return X_softmax(X, xi, beta, log_gates)[1]


def X_softmax(X, xi, beta, log_gates):
    X = check_patterns(X)
    xi = check_state(X, xi)
    b = check_beta(beta)
    z = b * (X.T @ xi)
    if log_gates is not None:
        z = z + check_log_gates(log_gates, X.shape[1])
    p = softmax(z)
    return X @ p, p


def gated_energy(X, xi, beta, log_gates) -> float:
    """Gated energy [derived]: E_g(xi; u) = -beta^{-1} lse(beta X^T xi + u) + xi^T xi / 2.

    E_g is the sum of a convex quadratic and a concave -lse of an affine map, so the CCCP step
    xi <- grad lse = f_g(xi) never increases it (same argument as Ramsauer's Thm 1).
    """
    X = check_patterns(X)
    xi = check_state(X, xi)
    b = check_beta(beta)
    u = check_log_gates(log_gates, X.shape[1])
    return float(-logsumexp(b * (X.T @ xi) + u) / b + 0.5 * xi @ xi)


def gated_update(X, xi, beta, log_gates) -> np.ndarray:
    """Gated update [derived]: f_g(xi) = X softmax(beta X^T xi + u)."""
    return X_softmax(X, xi, beta, log_gates)[0]


def retrieval_error(X, xi, i, beta, log_gates=None) -> float:
    """||f_g(xi) - x_i|| evaluated as ||sum_{j != i} p_j (x_j - x_i)|| (exact since sum p = 1).

    This form avoids the cancellation of X p - x_i, so errors far below machine epsilon relative to
    ||x_i|| are still measured (they are compared with bounds like exp(-50)).
    """
    X = check_patterns(X)
    p = retrieval_distribution(X, xi, beta, log_gates)
    diff = X - X[:, [int(i)]]
    return float(np.linalg.norm(diff @ p))


def retrieval_errors_batch(X, targets, beta, log_gates=None) -> np.ndarray:
    """One-update error ||f_g(x_i) - x_i|| for each target i queried with x_i itself.

    log_gates: None, or an array (len(targets), N) of per-target log-gates. Uses the same
    cancellation-free form as :func:`retrieval_error`.
    """
    X = check_patterns(X)
    b = check_beta(beta)
    targets = np.asarray(targets, dtype=int)
    Z = b * (X[:, targets].T @ X)  # (T, N)
    if log_gates is not None:
        U = np.asarray(log_gates, dtype=np.float64)
        if U.shape != Z.shape or np.any(np.isnan(U)) or np.any(U > 0):
            raise ValueError(f"log-gates must have shape {Z.shape} with values in [-inf, 0]")
        Z = Z + U
    P = softmax(Z, axis=1)
    errs = np.empty(len(targets))
    for k, i in enumerate(targets):  # x_i subtracted before weighting: no cancellation
        errs[k] = np.linalg.norm((X - X[:, [i]]) @ P[k])
    return errs


def gated_errors_over_kappas(X, targets, beta, open_sets, kappas) -> np.ndarray:
    """One-update errors ||f_g(x_i) - x_i|| of each target i queried with x_i, for each log-odds
    kappa of ``kappas``: gates u = 0 on the memories of row t of ``open_sets`` (shape
    (len(targets), N_eff), distinct indices per row) and -kappa elsewhere, so kappa = 0 is the
    ungated network. Returns shape (len(kappas), len(targets)).

    Computed as ||X p - x_i|| with every target at once, from one exponential of the (T, N) logits
    for all kappas: the weighted sums over all memories and over the open ones are formed once, and
    the closed ones (all minus open) are scaled by e^(-kappa) for each kappa. The cancellation of
    X p - x_i costs about 1e-16 ||x_i||, far below the 1e-3 error targets of the capacity sweeps
    that read it (:func:`retrieval_errors_batch` keeps the cancellation-free form). Logits are
    shifted by each row's maximum, so nothing overflows.

    >>> gen = np.random.default_rng(0)
    >>> X = sphere_patterns(40, 8, 1.0, gen)
    >>> u, active = context_gates(40, 3, 5, 2.0, gen)
    >>> errs = gated_errors_over_kappas(X, [3], 4.0, active[None, :], [0.0, 2.0])
    >>> bool(np.allclose(errs[0], retrieval_errors_batch(X, [3], 4.0)))
    True
    >>> bool(np.allclose(errs[1], retrieval_errors_batch(X, [3], 4.0, u[None, :])))
    True
    """
    X = check_patterns(X)
    b = check_beta(beta)
    targets = np.asarray(targets, dtype=int)
    open_sets = np.asarray(open_sets, dtype=int)
    if open_sets.ndim != 2 or open_sets.shape[0] != len(targets):
        raise ValueError(
            f"open_sets must have shape (len(targets)={len(targets)}, N_eff), got {open_sets.shape}"
        )
    if open_sets.size and (open_sets.min() < 0 or open_sets.max() >= X.shape[1]):
        raise ValueError(f"open_sets must index memories 0..{X.shape[1] - 1}")
    ks = [require_real("kappa", k, 0) for k in kappas]
    XT = X[:, targets].T
    Z = b * (XT @ X)
    W = np.exp(Z - Z.max(axis=1, keepdims=True))
    W_open = np.take_along_axis(W, open_sets, axis=1)  # (T, N_eff)
    sum_all, mass_all = W @ X.T, W.sum(axis=1)
    sum_open = np.einsum("tk,dtk->td", W_open, X[:, open_sets])
    mass_open = W_open.sum(axis=1)
    out = np.empty((len(ks), len(targets)))
    for row, k in enumerate(ks):
        s = math.exp(-k)
        mean = (sum_open + s * (sum_all - sum_open)) / (mass_open + s * (mass_all - mass_open))[:, None]
        out[row] = np.linalg.norm(mean - XT, axis=1)
    return out


def clustered_patterns(n_patterns, dim, radius, spread, gen: np.random.Generator) -> np.ndarray:
    """N columns of norm ``radius`` clustered around one random direction: radius * normalise(mu + spread w),
    mu and w_k unit random directions. Not uniform on the sphere: a control that drops the
    uniform-pattern hypothesis of Ramsauer's capacity theorem (R4)."""
    n = require_int("N", n_patterns, 1)
    d = require_int("d", dim, 1)
    r = require_real("radius", radius, 0, low_open=True)
    s = require_real("spread", spread, 0)
    mu = gen.standard_normal((d, 1))
    W = gen.standard_normal((d, n))
    Z = mu / np.linalg.norm(mu) + s * W / np.linalg.norm(W, axis=0, keepdims=True)
    return r * Z / np.linalg.norm(Z, axis=0, keepdims=True)
