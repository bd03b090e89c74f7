"""Reference bounds R1-R4 for modern Hopfield networks, docs/hopfield.md#statements-and-proof-sketches.

Context-Gated Associative Retrieval (2605.10970) builds on the modern (continuous) Hopfield
network of Ramsauer et al. 2020, "Hopfield Networks is All You Need" (arXiv 2008.02217). The
statements below are that paper's [reference] results: the well-separation condition (R1,
Ramsauer Thm 3/4 hypothesis), the one-update retrieval bound (R2, Thm 4), the retrieval error
(R3, Thm 5) and the storage capacity with the Lambert W function (R4, Thm 3). None of them is a
constant of 2605.10970, whose equations could not be obtained.

Notation (docs/hopfield.md#setting): N memories of norm at most M, inverse temperature beta, separation
Delta_i = x_i^T x_i - max_{j != i} x_i^T x_j, r = max{||xi - x_i||, ||x_i* - x_i||}.
"""

from __future__ import annotations

import math

import sympy as sp
from scipy.special import lambertw

from theory.papers import paper
from theory.registry import Bound, register_bound
from theory.validate import require_int, require_real

SOURCE = f"Ramsauer et al. 2020 (arXiv 2008.02217), used by {paper('hopfield')}"
beta_s, N_s, M_s, Delta_s, r_s, K_s, d_s, p_s = sp.symbols("beta N M Delta r K d p", positive=True)


def _common(beta, n_patterns, norm_bound):
    b = require_real("beta", beta, 0, low_open=True)
    n = require_int("N", n_patterns, 2)
    m = require_real("M", norm_bound, 0, low_open=True)
    return b, n, m


# ---------------------------------------------------------------------------------------------
# R1
def well_separated_threshold(beta, n_patterns, norm_bound) -> float:
    """R1 [reference, Ramsauer Thm 4 hypothesis]: the separation a pattern needs.

    Delta_i >= 2/(beta N) + beta^{-1} log(2 (N-1) N beta M^2) implies that the update
    f(xi) = X softmax(beta X^T xi) is a contraction on the sphere
    S_i = {xi : ||xi - x_i|| <= 1/(beta N M)} and converges to a fixed point x_i* in S_i.
    Hypotheses: beta > 0, N >= 2, M > 0.

    Examples
    --------
    16 patterns of norm at most 1 at beta = 1 need a separation of 6.3:
    >>> round(well_separated_threshold(1, 16, 1), 4)
    6.2988
    """
    b, n, m = _common(beta, n_patterns, norm_bound)
    return 2.0 / (b * n) + math.log(2.0 * (n - 1) * n * b * m * m) / b


def well_separated_symbolic():
    """R1 as a sympy expression in beta, N, M."""
    return 2 / (beta_s * N_s) + sp.log(2 * (N_s - 1) * N_s * beta_s * M_s**2) / beta_s


def sphere_radius(beta: float, n_patterns: int, norm_bound: float) -> float:
    """R1 [reference, Ramsauer Thm 4]: the radius 1/(beta N M) of the sphere S_i around x_i.

    When x_i is well separated (Delta_i >= :func:`well_separated_threshold`), the update
    f(xi) = X softmax(beta X^T xi) maps S_i = {xi : ||xi - x_i|| <= 1/(beta N M)} into itself and
    converges to a fixed point x_i* in S_i: a query within this radius of x_i is retrieved within
    it (docs/hopfield.md#statements-and-proof-sketches). The registered bound
    ``hopfield.sphere_radius``; the retrieval tolerance of the capacity claims and of
    ``verify.testing.check_associative_memory`` (docs/testing.md).
    Hypotheses: beta > 0, N >= 2, M > 0 (a ValueError names the parameter otherwise).

    Examples
    --------
    16 patterns of norm at most 1 at beta = 1: queries within 1/16 of a pattern:
    >>> sphere_radius(1, 16, 1)
    0.0625
    >>> round(sphere_radius(1, 16, 3 * 31 ** 0.5), 6)  # the R4 setting M = 3 sqrt(d - 1), d = 32
    0.003742
    """
    b, n, m = _common(beta, n_patterns, norm_bound)
    return 1.0 / (b * n * m)


def sphere_radius_symbolic() -> sp.Expr:
    """R1's radius 1/(beta N M) [reference, Ramsauer Thm 4] as a sympy expression.

    >>> sphere_radius_symbolic()
    1/(M*N*beta)
    """
    return 1 / (beta_s * N_s * M_s)


# ---------------------------------------------------------------------------------------------
# R2 and R3
def _exponent_epsilon(beta, n_patterns, norm_bound, separation, radius):
    b, n, m = _common(beta, n_patterns, norm_bound)
    delta = require_real("Delta", separation)
    r = require_real("r", radius, 0)
    return b, n, m, (n - 1) * math.exp(-b * (delta - 2.0 * m * r))


def jacobian_norm_bound(beta, n_patterns, norm_bound, separation, radius) -> float:
    """R2 [reference, Ramsauer Thm 4]: ||J^m|| <= 2 beta N M^2 (N-1) exp(-beta (Delta_i - 2 M r)).

    Then ||f(xi) - x_i*|| <= ||J^m|| * ||xi - x_i*|| (one update retrieves up to this factor).
    r = max{||xi - x_i||, ||x_i* - x_i||}. Hypotheses: beta > 0, N >= 2, M > 0, r >= 0.

    Examples
    --------
    16 patterns, beta = 2, M = 1, separation 3, query on the pattern (r = 0):
    >>> round(jacobian_norm_bound(2, 16, 1, 3.0, 0), 4)
    2.3796
    """
    b, n, m, eps = _exponent_epsilon(beta, n_patterns, norm_bound, separation, radius)
    return 2.0 * b * n * m * m * eps


def retrieval_error_bound(beta, n_patterns, norm_bound, separation, radius) -> float:
    """R3 [reference, Ramsauer Thm 5]: ||f(xi) - x_i|| <= 2 eps M,
    eps = (N-1) exp(-beta (Delta_i - 2 M max{||xi - x_i||, ||x_i* - x_i||})).

    Examples
    --------
    The same point: one update lands within 0.074 of the pattern:
    >>> round(retrieval_error_bound(2, 16, 1, 3.0, 0), 6)
    0.074363
    """
    _, _, m, eps = _exponent_epsilon(beta, n_patterns, norm_bound, separation, radius)
    return 2.0 * eps * m


def retrieval_error_symbolic():
    """R3 as a sympy expression in beta, N, M, Delta, r."""
    return 2 * M_s * (N_s - 1) * sp.exp(-beta_s * (Delta_s - 2 * M_s * r_s))


# ---------------------------------------------------------------------------------------------
# R4
def capacity_constants(beta, radius_scale, dim, fail_prob) -> dict:
    """R4 [reference, Ramsauer Thm 3]: the constants a, b, c of the capacity theorem.

    Patterns uniform on the sphere of radius M = K sqrt(d-1); 0 < p <= 1 the failure probability.
    a = 2/(d-1) (1 + ln(2 beta K^2 p (d-1))), b = 2 K^2 beta / 5,
    c = b / W0(exp(a + ln b)) with W0 the principal Lambert-W branch (scipy.special.lambertw).
    Returns {"a", "b", "c", "a_plus_log_b", "threshold"} with threshold = (2/sqrt p)^{4/(d-1)}.
    """
    b_ = require_real("beta", beta, 0, low_open=True)
    k = require_real("K", radius_scale, 0, low_open=True)
    d = require_int("d", dim, 2)
    p = require_real("p", fail_prob, 0, 1, low_open=True)
    a = 2.0 / (d - 1) * (1.0 + math.log(2.0 * b_ * k * k * p * (d - 1)))
    b = 2.0 * k * k * b_ / 5.0
    w = lambertw(math.exp(a + math.log(b)), 0)
    c = b / float(w.real)
    return {
        "a": a,
        "b": b,
        "c": c,
        "a_plus_log_b": a + math.log(b),
        "threshold": (2.0 / math.sqrt(p)) ** (4.0 / (d - 1)),
    }


def capacity(beta, radius_scale, dim, fail_prob) -> float:
    """R4 [reference, Ramsauer Thm 3]: N >= sqrt(p) c^{(d-1)/4} patterns are storable w.p. 1-p.

    Hypothesis checked: c >= (2/sqrt p)^{4/(d-1)}; otherwise the theorem says nothing and a
    ValueError names the two values.

    Examples
    --------
    At beta = 1, K = 3, d = 20 and p = 0.001 at least 7.4 patterns are storable:
    >>> round(capacity(1, 3, 20, 0.001), 3)
    7.413
    """
    const = capacity_constants(beta, radius_scale, dim, fail_prob)
    d = int(dim)
    if const["c"] < const["threshold"]:
        raise ValueError(
            f"R4 hypothesis c >= (2/sqrt p)^(4/(d-1)) fails: c={const['c']:.6g} < "
            f"{const['threshold']:.6g} at beta={beta}, K={radius_scale}, d={d}, p={fail_prob}"
        )
    return math.sqrt(float(fail_prob)) * const["c"] ** ((d - 1) / 4.0)


def capacity_c(beta, radius_scale, dim, fail_prob) -> float:
    """R4's constant c = b / W0(exp(a + ln b)) alone [reference]: the "c" of :func:`capacity_constants`.

    Examples
    --------
    At beta = 1, K = 3, d = 20 and p = 0.001 (the point of the :func:`capacity` example):
    >>> round(capacity_c(1, 3, 20, 0.001), 5)
    3.15461
    """
    return capacity_constants(beta, radius_scale, dim, fail_prob)["c"]


def capacity_c_symbolic():
    """R4 constant c = b / W0(exp(a + ln b)) as a sympy expression (sympy.LambertW)."""
    a = 2 / (d_s - 1) * (1 + sp.log(2 * beta_s * K_s**2 * p_s * (d_s - 1)))
    b = 2 * K_s**2 * beta_s / 5
    return b / sp.LambertW(sp.exp(a + sp.log(b)))


def capacity_symbolic():
    """R4 as a sympy expression with sympy.LambertW: sqrt(p) * (b / W0(exp(a + log b)))^((d-1)/4)."""
    return sp.sqrt(p_s) * capacity_c_symbolic() ** ((d_s - 1) / 4)


# ---------------------------------------------------------------------------------------------
_R1_PARAMS = {
    "beta": "inverse temperature",
    "n_patterns": "N, number of patterns",
    "norm_bound": "M, max pattern norm",
}
_R1_ALIASES = {"N": "n_patterns", "M": "norm_bound"}
_R23_PARAMS = {
    **_R1_PARAMS,
    "separation": "Delta, separation of the pattern",
    "radius": "r = max{||xi-x_i||, ||x_i*-x_i||}",
}
_R23_ALIASES = {**_R1_ALIASES, "Delta": "separation", "r": "radius"}

register_bound(
    Bound(
        name="hopfield.well_separated",
        provenance="reference",
        source=SOURCE + ", Thm 4",
        statement="R1: Delta_i >= 2/(beta N) + log(2 (N-1) N beta M^2)/beta implies convergence into "
        "the sphere of radius 1/(beta N M) around x_i (value: the required separation)",
        params=_R1_PARAMS,
        numeric=well_separated_threshold,
        symbolic=well_separated_symbolic,
        label="R1",
        aliases=_R1_ALIASES,
    )
)
register_bound(
    Bound(
        name="hopfield.sphere_radius",
        provenance="reference",
        source=SOURCE + ", Thm 4",
        statement="R1: the sphere S_i = {xi : ||xi - x_i|| <= 1/(beta N M)} that a well-separated "
        "pattern's update maps into itself and where its fixed point lies (value: the radius)",
        params=_R1_PARAMS,
        numeric=sphere_radius,
        symbolic=sphere_radius_symbolic,
        label="R1",
        aliases=_R1_ALIASES,
    )
)
register_bound(
    Bound(
        name="hopfield.jacobian_norm",
        provenance="reference",
        source=SOURCE + ", Thm 4",
        statement="R2: ||J^m|| <= 2 beta N M^2 (N-1) exp(-beta (Delta - 2 M r))",
        params=_R23_PARAMS,
        numeric=jacobian_norm_bound,
        symbolic=lambda: 2 * beta_s * N_s * M_s**2 * (N_s - 1) * sp.exp(-beta_s * (Delta_s - 2 * M_s * r_s)),
        label="R2",
        aliases=_R23_ALIASES,
    )
)
register_bound(
    Bound(
        name="hopfield.retrieval_error",
        provenance="reference",
        source=SOURCE + ", Thm 5",
        statement="R3: ||f(xi) - x_i|| <= 2 M (N-1) exp(-beta (Delta - 2 M r))",
        params=_R23_PARAMS,
        numeric=retrieval_error_bound,
        symbolic=retrieval_error_symbolic,
        label="R3",
        aliases=_R23_ALIASES,
    )
)
register_bound(
    Bound(
        name="hopfield.capacity",
        provenance="reference",
        source=SOURCE + ", Thm 3",
        statement="R4: with probability 1-p, N >= sqrt(p) c^((d-1)/4) sphere patterns of radius "
        "K sqrt(d-1) are storable, c = b / W0(exp(a + ln b)), if c >= (2/sqrt p)^(4/(d-1))",
        params={
            "beta": "inverse temperature",
            "radius_scale": "K, radius scale, M = K sqrt(d-1)",
            "dim": "d, dimension",
            "fail_prob": "p, failure probability",
        },
        numeric=capacity,
        symbolic=capacity_symbolic,
        label="R4",
        aliases={"K": "radius_scale", "d": "dim", "p": "fail_prob"},
    )
)
register_bound(
    Bound(
        name="hopfield.capacity_c",
        provenance="reference",
        source=SOURCE + ", Thm 3",
        statement="R4 constant c = b / W0(exp(a + ln b)) (worked values 3.15461 at beta=1,K=3,d=20,"
        "p=0.001 and 1.37188 at beta=1,K=1,d=75,p=0.001)",
        params={
            "beta": "inverse temperature",
            "radius_scale": "K, radius scale",
            "dim": "d, dimension",
            "fail_prob": "p, failure probability",
        },
        numeric=capacity_c,
        symbolic=capacity_c_symbolic,
        label="R4",
        aliases={"K": "radius_scale", "d": "dim", "p": "fail_prob"},
    )
)
