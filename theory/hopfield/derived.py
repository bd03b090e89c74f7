"""Derived bounds D1-D5 for context-gated Hopfield retrieval, docs/hopfield.md#statements-and-proof-sketches.

All of these are this project's formalisation [derived] of the gate of Context-Gated Associative Retrieval
(2605.10970): the paper's equations could not be obtained, so none of these constants is the paper's. Each
docstring states the inequality and sketches why it holds. Model (docs/hopfield.md#setting): f(xi) = X
softmax(beta X^T xi), f_g(xi) = X softmax(beta X^T xi + u) with log-gates u = log g (u = -inf is a hard gate),
p the retrieval distribution.

Array functions take X of shape (d, N) (columns are memories) and work in float64 numpy.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from theory.papers import paper
from theory.registry import Bound, register_bound
from theory.validate import require_int, require_real

SOURCE = f"{paper('hopfield')}, our formalisation (docs/hopfield.md)"
beta_s, N_s, Neff_s, kappa_s = sp.symbols("beta N N_eff kappa", positive=True)


def _patterns(X) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] < 2:
        raise ValueError(f"patterns X must have shape (d, N) with N >= 2, got {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("patterns X contain NaN or inf")
    return X


def _index(i, n) -> int:
    i = require_int("i", i, 0)
    if i >= n:
        raise ValueError(f"pattern index i={i} is not below N={n}")
    return i


def pairwise_gaps(X, i) -> np.ndarray:
    """Delta_ij = x_i^T x_i - x_i^T x_j for every j (entry i is 0) [derived notation]."""
    X = _patterns(X)
    i = _index(i, X.shape[1])
    return X[:, i] @ X[:, i] - X[:, i] @ X


def separation(X, i) -> float:
    """Delta_i = x_i^T x_i - max_{j != i} x_i^T x_j (Ramsauer's separation) [reference]."""
    gaps = pairwise_gaps(X, i)
    return float(np.min(np.delete(gaps, int(i))))


#: Entries of the Gram matrix X^T X that :func:`separations` holds at a time (whole rows: about
#: 32 MiB of float64 whatever N).
GRAM_ELEMENTS = 2**22


def separations(X: np.ndarray) -> np.ndarray:
    """Delta_i = x_i^T x_i - max_{j != i} x_i^T x_j for every pattern i at once (Ramsauer's
    separation [reference], docs/hopfield.md#setting): the vectorised :func:`separation`.

    X has shape (d, N) with N >= 2 (columns are memories); returns a float64 array (N,). Computed
    from the Gram matrix X^T X, a block of rows at a time (:data:`GRAM_ELEMENTS`), so N patterns
    cost O(N^2 d) arithmetic without a Python loop over patterns.

    Examples
    --------
    Three patterns in the plane: x_0 = (2, 0) is nearest to x_2 = (1, 1) (x_0^T x_2 = 2):
    >>> X = np.array([[2.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    >>> separations(X).tolist()
    [2.0, 0.0, 0.0]
    >>> [separation(X, i) for i in range(3)]
    [2.0, 0.0, 0.0]
    """
    X = _patterns(X)
    n = X.shape[1]
    out = np.empty(n)
    step = max(1, GRAM_ELEMENTS // n)
    for start in range(0, n, step):  # blocks of rows of X^T X, not patterns one by one
        rows = np.arange(start, min(n, start + step))
        gram = X[:, rows].T @ X  # (rows, N)
        diagonal = (np.arange(len(rows)), rows)  # x_i^T x_i of each row
        own = gram[diagonal]  # advanced indexing: a copy
        gram[diagonal] = -np.inf
        out[rows] = own - gram.max(axis=1)
    return out


def norm_bound(X) -> float:
    """M = max_mu ||x_mu||."""
    return float(np.max(np.linalg.norm(_patterns(X), axis=0)))


def _log_gates(u, n) -> np.ndarray:
    u = np.asarray(u, dtype=np.float64)
    if u.shape != (n,):
        raise ValueError(f"log-gates must have shape ({n},), got {u.shape}")
    if np.any(np.isnan(u)) or np.any(u > 0):
        raise ValueError("log-gates u = log g must lie in [-inf, 0] (gates g in [0, 1]) and not be NaN")
    return u


# ---------------------------------------------------------------------------------------------
# D1, D2
def epsilon_ungated(X, xi, i, beta) -> float:
    """D1 [derived; a self-contained version of Ramsauer Thm 5].

    eps(xi) = sum_{j != i} exp(-beta (Delta_ij - 2 M r)), r = ||xi - x_i||, and
    1 - p_i <= eps(xi) and ||f(xi) - x_i|| <= 2 M min(1, eps(xi)).
    Proof sketch: f(xi) - x_i = sum_{j != i} p_j (x_j - x_i) (because sum p = 1), so its norm is at
    most 2M (1 - p_i). p_j/p_i = exp(beta (x_j - x_i)^T xi) and, writing xi = x_i + e with
    ||e|| = r, (x_j - x_i)^T xi = -Delta_ij + (x_j - x_i)^T e <= -Delta_ij + 2 M r. Hence
    1 - p_i <= sum_{j != i} p_j / p_i <= eps, and 1 - p_i <= 1 trivially.
    """
    return epsilon_gated(X, xi, i, beta, np.zeros(np.asarray(X).shape[1]))


def epsilon_gated(X, xi, i, beta, log_gates) -> float:
    """D2 [derived]: eps_g(xi) = sum_{j != i} (g_j/g_i) exp(-beta (Delta_ij - 2 M r)) and
    ||f_g(xi) - x_i|| <= 2 M min(1, eps_g).

    Proof sketch: as D1, with p_j/p_i = (g_j/g_i) exp(beta (x_j - x_i)^T xi) for the gated softmax
    softmax(beta X^T xi + log g). A hard gate (g_j = 0) contributes nothing. Hypothesis g_i > 0.
    """
    X = _patterns(X)
    b = require_real("beta", beta, 0, low_open=True)
    n = X.shape[1]
    i = _index(i, n)
    u = _log_gates(log_gates, n)
    if not np.isfinite(u[i]):
        raise ValueError(f"D2 needs the target's gate g_i > 0; got log g_{i} = {u[i]}")
    xi = np.asarray(xi, dtype=np.float64)
    if xi.shape != (X.shape[0],) or not np.all(np.isfinite(xi)):
        raise ValueError(f"query xi must be a finite vector of shape ({X.shape[0]},)")
    m = norm_bound(X)
    r = float(np.linalg.norm(xi - X[:, i]))
    gaps = pairwise_gaps(X, i)
    expo = (u - u[i]) - b * (gaps - 2.0 * m * r)
    expo = np.delete(expo, i)
    return float(np.sum(np.exp(expo[np.isfinite(expo)])))


def error_bound(eps, norm) -> float:
    """D1/D2 [derived]: the error bound 2 M min(1, eps)."""
    return 2.0 * float(norm) * min(1.0, float(eps))


def gated_separation(X, i, beta, log_gates) -> float:
    """D2 [derived]: Delta_i^g = min_{j != i, g_j > 0} [Delta_ij + beta^{-1} log(g_i/g_j)].

    Then eps_g <= (N_eff - 1) exp(-beta (Delta_i^g - 2 M r)) (each of the at most N_eff - 1
    non-zero terms of eps_g equals exp(-beta (Delta_ij + log(g_i/g_j)/beta - 2Mr))). If g_i >= g_j
    for all j, every bracket is >= Delta_ij, so Delta_i^g >= Delta_i (separation increase).
    Returns +inf when no other memory is open.
    """
    X = _patterns(X)
    b = require_real("beta", beta, 0, low_open=True)
    n = X.shape[1]
    i = _index(i, n)
    u = _log_gates(log_gates, n)
    if not np.isfinite(u[i]):
        raise ValueError(f"gated separation needs g_i > 0; got log g_{i} = {u[i]}")
    gaps = pairwise_gaps(X, i)
    open_ = np.isfinite(u)
    open_[i] = False
    if not open_.any():
        return math.inf
    return float(np.min(gaps[open_] + (u[i] - u[open_]) / b))


def gated_epsilon_scalar(beta, n_eff, separation_value, norm, radius, kappa) -> float:
    """D2 scalar form [derived]: eps_g <= (N_eff - 1) exp(-kappa) exp(-beta (Delta - 2 M r)).

    With all distractors at log-odds kappa = log(g_i/g_j), Delta_i^g = Delta_i + kappa/beta, so the
    ungated eps is multiplied by exp(-kappa): an exponential gain in gate strength.
    """
    b = require_real("beta", beta, 0, low_open=True)
    ne = require_int("N_eff", n_eff, 1)
    m = require_real("M", norm, 0, low_open=True)
    r = require_real("r", radius, 0)
    k = require_real("kappa", kappa, 0)
    delta = require_real("Delta", separation_value)
    return (ne - 1) * math.exp(-k - b * (delta - 2.0 * m * r))


def ungated_error_bound(beta, n_patterns, norm_bound, separation, radius) -> float:
    """D1 [derived]: ||f(xi) - x_i|| <= 2 M min(1, (N-1) exp(-beta (Delta - 2 M r))), the
    uniform-gap form of :func:`epsilon_ungated` (every competitor at separation Delta).

    Examples
    --------
    16 patterns, beta = 2, M = 1, separation 3, query on the pattern (r = 0):
    >>> round(ungated_error_bound(2, 16, 1, 3.0, 0), 6)
    0.074363
    """
    n = require_int("N", n_patterns, 1)  # checked under its own name (D2's reads N_eff)
    eps = gated_epsilon_scalar(beta, n, separation, norm_bound, radius, 0.0)
    return error_bound(eps, norm_bound)


def ungated_error_bounds(
    beta: float, n_patterns: int, norm_bound: float, separations: np.ndarray, radii: np.ndarray | float
) -> np.ndarray:
    """D1 [derived] for every pattern at once: 2 M min(1, (N-1) exp(-beta (Delta_i - 2 M r_i))),
    the vectorised :func:`ungated_error_bound` (registered as ``hopfield.ungated_error``).

    ``separations``: Delta_i of each pattern (:func:`separations`); ``radii``: r_i = ||xi_i - x_i||
    of each pattern's query, an array of the same shape or one number for all. Returns a float64
    array of that shape. Hypotheses as for the one-pattern bound: beta > 0, N >= 1, M > 0,
    r_i >= 0, every Delta_i and r_i finite (a ValueError names the parameter otherwise).

    Examples
    --------
    The point of the :func:`ungated_error_bound` example and a query at r = 0.1 of a pattern
    whose separation is 6:
    >>> ungated_error_bounds(2, 16, 1, np.array([3.0, 6.0]), np.array([0.0, 0.1])).round(6).tolist()
    [0.074363, 0.000275]
    """
    b = require_real("beta", beta, 0, low_open=True)
    n = require_int("N", n_patterns, 1)
    m = require_real("M", norm_bound, 0, low_open=True)
    delta = np.asarray(separations, dtype=np.float64)
    r = np.broadcast_to(np.asarray(radii, dtype=np.float64), delta.shape)
    if not np.all(np.isfinite(delta)):
        raise ValueError("separations Delta_i must be finite")
    if not np.all(np.isfinite(r)) or np.any(r < 0):
        raise ValueError("radii r_i = ||xi_i - x_i|| must be finite and >= 0")
    if n == 1:
        return np.zeros(delta.shape)
    with np.errstate(over="ignore"):
        eps = (n - 1) * np.exp(-b * (delta - 2.0 * m * r))
    return 2.0 * m * np.minimum(1.0, eps)


def gated_error_bound(beta, n_eff, norm_bound, separation, radius, kappa) -> float:
    """D2 [derived]: ||f_g(xi) - x_i|| <= 2 M min(1, (N_eff-1) exp(-kappa) exp(-beta (Delta - 2 M r))),
    :func:`gated_epsilon_scalar` through :func:`error_bound`.

    Examples
    --------
    The same point with gates at log-odds kappa = 2: the ungated bound times exp(-2):
    >>> round(gated_error_bound(2, 16, 1, 3.0, 0, 2), 6)
    0.010064
    """
    eps = gated_epsilon_scalar(beta, n_eff, separation, norm_bound, radius, kappa)
    return error_bound(eps, norm_bound)


# ---------------------------------------------------------------------------------------------
# D3
def capacity_shift(beta, n_patterns, n_eff, kappa) -> float:
    """D3 [derived]: separation saved by gating at a fixed error target,
    beta^{-1} [log((N-1)/(N_eff-1)) + kappa].

    Proof sketch: the ungated bound (N-1) exp(-beta (Delta - 2Mr)) <= eta needs
    Delta >= 2Mr + beta^{-1} log((N-1)/eta); the gated one (N_eff-1) e^{-kappa} exp(-beta (Delta-2Mr))
    <= eta needs Delta >= 2Mr + beta^{-1} [log((N_eff-1)/eta) - kappa]. The difference is the shift.
    Hypotheses: beta > 0, 2 <= N_eff <= N, kappa >= 0.

    Examples
    --------
    Gating 64 memories down to 8 at kappa = 2 and beta = 2 saves (ln 9 + 2)/2 of separation:
    >>> round(capacity_shift(2, 64, 8, 2), 4)
    2.0986
    """
    b = require_real("beta", beta, 0, low_open=True)
    n = require_int("N", n_patterns, 2)
    ne = require_int("N_eff", n_eff, 2)
    if ne > n:
        raise ValueError(f"D3 needs N_eff <= N; got N_eff={ne} > N={n}")
    k = require_real("kappa", kappa, 0)
    return (math.log((n - 1) / (ne - 1)) + k) / b


def capacity_shift_symbolic():
    """D3 as a sympy expression."""
    return (sp.log((N_s - 1) / (Neff_s - 1)) + kappa_s) / beta_s


def context_competitors(n_patterns, n_eff, kappa) -> float:
    """D3 for the context gates of docs/hopfield.md#setting [derived]: the effective number of competitors.

    With u = 0 on an active set A of N_eff memories (target included) and u = -kappa elsewhere,
    eps_g = sum_{j in A, j != i} e^{-beta (Delta_ij - 2Mr)} + e^{-kappa} sum_{j not in A} (same).
    When A is drawn independently of the memories, each term's expectation is the same, so
    E[eps_g] = C_g / (N - 1) * E[eps] with C_g = (N_eff - 1) + (N - N_eff) e^{-kappa}: the gated
    network behaves, in its bound, like an ungated one with C_g + 1 memories. C_g = N - 1 at
    kappa = 0 and C_g = N_eff - 1 at kappa = inf. Hypotheses: 1 <= N_eff <= N, kappa >= 0.
    """
    n = require_int("N", n_patterns, 1)
    ne = require_int("N_eff", n_eff, 1)
    if ne > n:
        raise ValueError(f"the context needs N_eff <= N; got N_eff={ne} > N={n}")
    k = require_real("kappa", kappa, 0)
    return (ne - 1) + (n - ne) * math.exp(-k)


def context_capacity_shift(beta, n_patterns, n_eff, kappa) -> float:
    """D3 for context gates [derived]: beta^{-1} log((N - 1) / C_g), C_g from
    :func:`context_competitors`. Same argument as :func:`capacity_shift` with (N_eff - 1) e^{-kappa}
    replaced by C_g; it equals capacity_shift's log((N-1)/(N_eff-1))/beta at kappa = inf and 0 at
    kappa = 0."""
    b = require_real("beta", beta, 0, low_open=True)
    n = require_int("N", n_patterns, 2)
    return math.log((n - 1) / context_competitors(n, n_eff, kappa)) / b


def gated_capacity_prediction(n_ungated, n_eff, kappa) -> float:
    """D3 read as a capacity [derived]: if the ungated network retrieves up to N_u memories, the
    context-gated one retrieves up to N_g with C_g(N_g) + 1 = N_u, i.e.
    N_g = N_eff + (N_u - N_eff) e^{kappa} (for N_u > N_eff; the bound's separation shift at N_g
    then equals the ungated separation lost from N_u to N_g). Heuristic step: capacity is taken to
    depend on the network only through the bound's expected competitor count."""
    nu = require_real("N_u", n_ungated, 0, low_open=True)
    ne = require_int("N_eff", n_eff, 1)
    if nu <= ne:
        raise ValueError(f"the capacity reading of D3 needs N_u > N_eff; got N_u={nu}, N_eff={ne}")
    k = require_real("kappa", kappa, 0)
    return ne + (nu - ne) * math.exp(k)


# ---------------------------------------------------------------------------------------------
# D4
def contraction_bound(lam, norm, beta=0.0, query_feedback=False) -> float:
    """D4 [derived]: ||J_G||_2 <= lambda M^2 for G(xi) = X softmax(beta X^T xi_q + log sigma(a + lambda X^T xi)).

    Proof sketch: J_G = X Sigma_p D X^T, Sigma_p = diag(p) - p p^T, D = diag(lambda (1 - g)).
    Factor J = (X Sigma_p^{1/2})(Sigma_p^{1/2} D X^T). ||X Sigma_p X^T|| = ||Cov_p(x)|| <= E_p ||x||^2
    <= M^2 and ||X D Sigma_p D X^T|| = ||Cov_p(D x)|| <= lambda^2 M^2 since 0 <= lambda (1 - g) <= lambda.
    So lambda M^2 < 1 makes G a contraction on R^d: Banach gives a unique fixed point and Picard
    iteration converges at rate lambda M^2. With the state also fed back as the query the
    Jacobian gains X Sigma_p beta X^T and the bound is (beta + lambda) M^2.

    Examples
    --------
    lambda = 0.5 with unit-norm memories contracts; feeding the state back at beta = 0.25 adds beta M^2:
    >>> contraction_bound(0.5, 1.0), contraction_bound(0.5, 1.0, beta=0.25, query_feedback=True)
    (0.5, 0.75)
    """
    lam_ = require_real("lambda", lam, 0)
    m = require_real("M", norm, 0, low_open=True)
    b = require_real("beta", beta, 0)
    return ((b if query_feedback else 0.0) + lam_) * m * m


# ---------------------------------------------------------------------------------------------
# D5
def participation_ratio(p) -> float:
    """PR(p) = 1 / sum_mu p_mu^2 (participation ratio): between 1 and the number of non-zero entries."""
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 1 or np.any(np.isnan(p)) or np.any(p < 0) or not math.isclose(p.sum(), 1.0, abs_tol=1e-9):
        raise ValueError("participation ratio needs a probability vector")
    return float(1.0 / np.sum(p * p))


def pr_bound(n_eff) -> float:
    """D5 [derived]: PR(p_g) <= N_eff whenever gates are hard (g_mu = 0 outside A).

    Proof sketch: p_g has at most N_eff non-zero entries; by Cauchy-Schwarz
    1 = (sum_{mu in A} p_mu)^2 <= N_eff sum p_mu^2, so 1/sum p_mu^2 <= N_eff.

    Examples
    --------
    With 8 memories open the participation ratio is at most 8:
    >>> pr_bound(8)
    8.0
    """
    return float(require_int("N_eff", n_eff, 1))


# ---------------------------------------------------------------------------------------------
register_bound(
    Bound(
        name="hopfield.ungated_error",
        provenance="derived",
        source=SOURCE + ", D1",
        statement="D1: ||f(xi) - x_i|| <= 2 M min(1, (N-1) exp(-beta (Delta - 2 M r))) (uniform-gap form)",
        params={
            "beta": "inverse temperature",
            "n_patterns": "N, number of patterns",
            "norm_bound": "M, max pattern norm",
            "separation": "Delta, separation",
            "radius": "r = ||xi - x_i||",
        },
        numeric=ungated_error_bound,
        aliases={"N": "n_patterns", "M": "norm_bound", "Delta": "separation", "r": "radius"},
        symbolic=lambda: (
            2
            * sp.Symbol("M")
            * sp.Min(
                1, (N_s - 1) * sp.exp(-beta_s * (sp.Symbol("Delta") - 2 * sp.Symbol("M") * sp.Symbol("r")))
            )
        ),
        label="D1",
    )
)
register_bound(
    Bound(
        name="hopfield.gated_error",
        provenance="derived",
        source=SOURCE + ", D2",
        statement="D2: ||f_g(xi) - x_i|| <= 2 M min(1, (N_eff-1) exp(-kappa) exp(-beta (Delta - 2 M r)))",
        params={
            "beta": "inverse temperature",
            "n_eff": "N_eff, open memories",
            "norm_bound": "M, max pattern norm",
            "separation": "Delta, separation",
            "radius": "r = ||xi - x_i||",
            "kappa": "distractor log-odds log(g_i/g_j)",
        },
        numeric=gated_error_bound,
        label="D2",
        aliases={"N_eff": "n_eff", "M": "norm_bound", "Delta": "separation", "r": "radius"},
    )
)
register_bound(
    Bound(
        name="hopfield.capacity_shift",
        provenance="derived",
        source=SOURCE + ", D3",
        statement="D3: gating lowers the separation needed at fixed error by (log((N-1)/(N_eff-1)) + kappa)/beta",
        params={
            "beta": "inverse temperature",
            "n_patterns": "N, number of patterns",
            "n_eff": "N_eff, open memories",
            "kappa": "distractor log-odds",
        },
        numeric=capacity_shift,
        symbolic=capacity_shift_symbolic,
        label="D3",
        aliases={"N": "n_patterns", "N_eff": "n_eff"},
    )
)
register_bound(
    Bound(
        name="hopfield.contraction",
        provenance="derived",
        source=SOURCE + ", D4",
        statement="D4: ||J_G||_2 <= lambda M^2; lambda M^2 < 1 gives a unique gated fixed point",
        params={
            "lam": "lambda, feedback gain",
            "norm": "M, max pattern norm",
            "beta": "inverse temperature, used only with query_feedback",
            "query_feedback": "1: the state is also fed back as the query, bound (beta + lambda) M^2",
        },
        numeric=contraction_bound,
        symbolic=lambda: sp.Symbol("lambda") * sp.Symbol("M") ** 2,
        label="D4",
        aliases={"lambda": "lam", "M": "norm"},
    )
)
register_bound(
    Bound(
        name="hopfield.pr_hard_gates",
        provenance="derived",
        source=SOURCE + ", D5",
        statement="D5: PR(p_g) <= N_eff when gates are hard",
        params={"n_eff": "N_eff, open memories"},
        numeric=pr_bound,
        symbolic=lambda: Neff_s,
        label="D5",
        aliases={"N_eff": "n_eff"},
    )
)
