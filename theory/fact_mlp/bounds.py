"""Bounds B1-B5 of *Constructing Efficient Fact-Storing MLPs for Transformers* (2512.00207).

docs/fact_mlp.md#statements-and-proof-sketches. Each bound is registered with a sympy expression and a
validated numeric evaluation; ``python -m theory eval fact_mlp.info_bits n_facts=1000 n_values=1000``.
Decodability rho (docs/fact_mlp.md#setting) lives in :mod:`theory.fact_mlp.rho`.
"""

from __future__ import annotations

import math

from theory.papers import paper
from theory.registry import Bound, register_bound
from theory.validate import require_int, require_real

SOURCE = paper("fact_mlp")


def info_bits(n_facts: int, n_values: int) -> float:
    """B1 [derived/standard]: F facts with values in [n_V] carry F * log2(n_V) bits.

    Examples
    --------
    1000 facts with 1000 possible values carry 1000 log2(1000) bits:
    >>> round(info_bits(1000, 1000), 1)
    9965.8
    """
    n_facts = require_int("n_facts", n_facts, 1)
    n_values = require_int("n_values", n_values, 2)
    return n_facts * math.log2(n_values)


def info_bits_tied(n_facts: int) -> float:
    """B1, tied bijections [derived/standard]: a permutation of F items carries log2(F!) bits
    (computed with lgamma).

    Examples
    --------
    A permutation of 1000 items carries about 8529 bits:
    >>> round(info_bits_tied(1000), 1)
    8529.4
    """
    n_facts = require_int("n_facts", n_facts, 2)
    return math.lgamma(n_facts + 1) / math.log(2)


def min_params(n_facts: int, n_values: int, bits_per_param: float) -> float:
    """B1 [derived/standard]: any MLP storing the facts with b bits per parameter needs
    P >= F log2(n_V) / b parameters (counting: the weights must index one of n_V^F maps).

    Examples
    --------
    At 32 bits a parameter those 1000 facts need at least 312 parameters:
    >>> round(min_params(1000, 1000, 32), 1)
    311.4
    """
    b = require_real("bits_per_param", bits_per_param, 0.0, low_open=True)
    return info_bits(n_facts, n_values) / b


def jl_code_dim(n_values: int, rho: float) -> float:
    """B2 [derived, proved below]: m_c >= 8 ln(n_V) / rho^2 suffices for the random-projection
    decoder, with failure probability at most 1 / (2 n_V^2) over the draw of Rp.

    Our first sketch (Gaussian JL at distortion rho/2, tail 2 exp(-m_c eps^2/8)) does
    not support the constant 8: it needs about 64 ln n_V / rho^2. The constant 8 holds by a
    sharper, direct argument (:func:`pair_failure_bound`): decoding value i fails against j
    only if <Rp u*_i, Rp w_ij> <= 0, where <u*_i, w_ij> = c >= rho; that event has probability
    at most (1/2)(1 - c^2)^(m_c/2) <= (1/2) exp(-m_c rho^2 / 2). A union bound over the
    n_V (n_V - 1) ordered pairs gives failure <= (n_V^2 / 2) exp(-m_c rho^2 / 2), which is
    <= 1/(2 n_V^2) at m_c = 8 ln n_V / rho^2 (and < 1/2 already at 4 ln n_V / rho^2;
    :func:`jl_code_dim_delta` gives the m_c for any failure probability delta).

    Examples
    --------
    512 values at decodability rho = 0.663 need a code dimension of at most 114:
    >>> round(jl_code_dim(512, 0.663), 1)
    113.5
    """
    n_values = require_int("n_values", n_values, 2)
    rho = require_real("rho", rho, 0.0, 1.0, low_open=True)
    return 8.0 * math.log(n_values) / rho**2


def pair_failure_bound(cosine: float, code_dim: int) -> float:
    """B2's one-pair tail [derived]: for unit u, w with <u, w> = c in (0, 1] and Rp (m x d) with
    i.i.d. N(0, 1/m) entries, P(<Rp u, Rp w> <= 0) <= (1/2)(1 - c^2)^(m/2).

    Proof: write w = c u + s u' with u' a unit vector orthogonal to u, s = sqrt(1 - c^2). With
    a_r = sqrt(m) (Rp u)_r and b_r = sqrt(m) (Rp u')_r, all i.i.d. N(0, 1), m <Rp u, Rp w> =
    c A + s sum_r a_r b_r with A = sum_r a_r^2 ~ chi^2_m, and given a the sum is N(0, A).
    So P = E[Phi(-(c/s) sqrt(A))] <= (1/2) E[exp(-c^2 A / (2 s^2))] (Phi(-x) <= exp(-x^2/2)/2
    for x >= 0) = (1/2)(1 + c^2/s^2)^(-m/2) = (1/2)(1 - c^2)^(m/2) (chi^2 moment generating
    function). At c = 1 the probability is 0.
    """
    c = require_real("cosine", cosine, 0.0, 1.0, low_open=True)
    m = require_int("code_dim", code_dim, 1)
    return 0.5 * (1.0 - c * c) ** (m / 2.0)


def jl_code_dim_delta(n_values: int, rho: float, delta: float) -> float:
    """B2 with failure probability delta [derived]: m_c >= 2 ln(n_V (n_V - 1) / (2 delta)) /
    ln(1 / (1 - rho^2)) makes the random-projection decoder decode every value with probability
    >= 1 - delta (union of :func:`pair_failure_bound` over the n_V (n_V - 1) ordered pairs).
    Since ln(1/(1 - rho^2)) >= rho^2 this is <= (4 ln n_V + 2 ln(1/(2 delta))) / rho^2."""
    n_values = require_int("n_values", n_values, 2)
    rho = require_real("rho", rho, 0.0, 1.0, low_open=True, high_open=True)
    delta = require_real("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    return 2.0 * math.log(n_values * (n_values - 1) / (2.0 * delta)) / -math.log1p(-rho * rho)


def n_gates(n_facts: int, d_model: int) -> int:
    """Gate count of the [derived] encoder: H = ceil(F / d), so H d >= F (the last gate covers
    the keys no other gate opens; see constructions.fact_mlp.encoder.covering_gates)."""
    n_facts = require_int("n_facts", n_facts, 1)
    d_model = require_int("d_model", d_model, 1)
    return math.ceil(n_facts / d_model)


def construction_params(n_facts: int, d_model: int, code_dim: int) -> float:
    """B3 [derived]: P_std = 3 d H m_c with H = ceil(F/d), so facts per parameter -> 1/(3 m_c) =
    Theta(rho^2/log n_V).

    Examples
    --------
    200 facts at d = 32 take H = 7 gates; with m_c = 32, 3 * 32 * 7 * 32 parameters:
    >>> construction_params(200, 32, 32)
    21504.0
    """
    h = n_gates(n_facts, d_model)  # validates n_facts and d_model first
    code_dim = require_int("code_dim", code_dim, 1)
    return 3.0 * require_int("d_model", d_model) * h * code_dim


def construction_params_unique(n_facts: int, d_model: int, code_dim: int) -> float:
    """B3, unique parameters [derived]: H d (gates) + H d m_c (encoder A) + m_c d (decoder).

    Examples
    --------
    The same construction has 7*32 + 7*32*32 + 32*32 distinct parameters:
    >>> construction_params_unique(200, 32, 32)
    8416.0
    """
    h = n_gates(n_facts, d_model)  # validates n_facts and d_model first
    code_dim = require_int("code_dim", code_dim, 1)
    d_model = require_int("d_model", d_model)
    return float(h * d_model + h * d_model * code_dim + code_dim * d_model)


def gated_mlp_params(d_model: int, hidden: int, biases: bool = True) -> int:
    """Gated MLP y = W_down[(W_up x + b_up) * ReLU(W_gate x + b_gate)] + b_down [reference]:
    3 d m + 2 m + d parameters with biases, 3 d m without.

    Examples
    --------
    A gated MLP of width 64 on d = 32, with and without biases:
    >>> gated_mlp_params(32, 64), gated_mlp_params(32, 64, biases=False)
    (6304, 6144)
    """
    d_model = require_int("d_model", d_model, 1)
    hidden = require_int("hidden", hidden, 1)
    return 3 * d_model * hidden + ((2 * hidden + d_model) if biases else 0)


def baseline_ratio(params_baseline: float, params_ours: float) -> float:
    """B5 [derived]: improvement = P_baseline(F) / P_ours(F), each at its smallest size with
    accuracy 1.

    Examples
    --------
    A baseline that needs 12000 parameters where ours needs 3000 is 4 times larger:
    >>> baseline_ratio(12000, 3000)
    4.0
    """
    a = require_real("params_baseline", params_baseline, 0.0, low_open=True)
    b = require_real("params_ours", params_ours, 0.0, low_open=True)
    return a / b


def separable_fraction(n_points: int, dim: int) -> float:
    """Cover's function counting [derived/standard]: of the 2^n dichotomies of n points in general
    position in R^d, C(n, d + 1) = 2 sum_{k <= d} C(n - 1, k) are affinely separable, a fraction
    P(Bin(n - 1, 1/2) <= d). The attention of the fact_mlp transformer ranks every key above every
    other token only if its one query direction separates the two sets of embeddings.

    Examples
    --------
    81 tokens (64 keys, 16 junk, the query) in d = 32: about 5% of the splits are separable:
    >>> round(separable_fraction(81, 32), 3)
    0.046
    """
    n = require_int("n_points", n_points, 1)
    d = require_int("dim", dim, 1)
    return min(1.0, sum(math.comb(n - 1, k) for k in range(min(d, n - 1) + 1)) / 2 ** (n - 1))


def separability_dim(n_points: int) -> float:
    """The dimension (n - 1)/2 at which half of the dichotomies of n points in general position are
    affinely separable (:func:`separable_fraction`): Cover's capacity of a linear threshold unit,
    2 d points per dimension [derived/standard].

    Examples
    --------
    >>> separability_dim(81), round(separable_fraction(81, 40), 3)
    (40.0, 0.544)
    """
    n = require_int("n_points", n_points, 2)
    return (n - 1) / 2.0


def _sym(*names):
    import sympy

    return sympy.symbols(" ".join(names), positive=True)


def _sym_info():
    F, nV = _sym("n_facts", "n_values")
    import sympy

    return F * sympy.log(nV, 2)


def _sym_tied():
    import sympy

    F = _sym("n_facts")
    return sympy.log(sympy.factorial(F), 2)


def _sym_min_params():
    import sympy

    F, nV, b = _sym("n_facts", "n_values", "bits_per_param")
    return F * sympy.log(nV, 2) / b


def _sym_jl():
    import sympy

    nV, rho = _sym("n_values", "rho")
    return 8 * sympy.log(nV) / rho**2


def _sym_construction():
    import sympy

    F, d, mc = _sym("n_facts", "d_model", "code_dim")
    return 3 * d * sympy.ceiling(F / d) * mc


def _sym_unique():
    import sympy

    F, d, mc = _sym("n_facts", "d_model", "code_dim")
    h = sympy.ceiling(F / d)
    return h * d + h * d * mc + mc * d


def _sym_gated():
    d, m = _sym("d_model", "hidden")
    return 3 * d * m + 2 * m + d


def _sym_ratio():
    a, b = _sym("params_baseline", "params_ours")
    return a / b


register_bound(
    Bound(
        name="fact_mlp.info_bits",
        provenance="derived",
        source=SOURCE + ", B1",
        statement="F facts with values in [n_V] carry F*log2(n_V) bits",
        params={"n_facts": "F, facts", "n_values": "n_V, values"},
        numeric=info_bits,
        symbolic=_sym_info,
        label="B1",
        aliases={"F": "n_facts", "n_V": "n_values"},
    )
)
register_bound(
    Bound(
        name="fact_mlp.info_bits_tied",
        provenance="derived",
        source=SOURCE + ", B1 (tied)",
        statement="a bijection of F items carries log2(F!) bits",
        params={"n_facts": "F, facts"},
        numeric=info_bits_tied,
        symbolic=_sym_tied,
        label="B1",
        aliases={"F": "n_facts"},
    )
)
register_bound(
    Bound(
        name="fact_mlp.min_params",
        provenance="derived",
        source=SOURCE + ", B1",
        statement="P >= F*log2(n_V)/b parameters at b bits per parameter",
        params={"n_facts": "F, facts", "n_values": "n_V, values", "bits_per_param": "b, bits per parameter"},
        numeric=min_params,
        symbolic=_sym_min_params,
        label="B1",
        aliases={"F": "n_facts", "n_V": "n_values", "b": "bits_per_param"},
    )
)
register_bound(
    Bound(
        name="fact_mlp.jl_code_dim",
        provenance="derived",
        source=SOURCE + ", B2",
        statement="m_c >= 8 ln(n_V)/rho^2 suffices for the random-projection decoder (failure "
        "probability <= 1/(2 n_V^2); proof in jl_code_dim)",
        params={"n_values": "n_V, values", "rho": "decodability rho in (0, 1]"},
        numeric=jl_code_dim,
        symbolic=_sym_jl,
        label="B2",
        aliases={"n_V": "n_values"},
    )
)
register_bound(
    Bound(
        name="fact_mlp.construction_params",
        provenance="derived",
        source=SOURCE + ", B3",
        statement="P_std = 3 d ceil(F/d) m_c: linear in F",
        params={"n_facts": "F, facts", "d_model": "d, model width", "code_dim": "m_c, code dimension"},
        numeric=construction_params,
        symbolic=_sym_construction,
        label="B3",
        aliases={"F": "n_facts", "d": "d_model", "m_c": "code_dim"},
    )
)
register_bound(
    Bound(
        name="fact_mlp.construction_params_unique",
        provenance="derived",
        source=SOURCE + ", B3",
        statement="P_unique = H d + H d m_c + m_c d",
        params={"n_facts": "F, facts", "d_model": "d, model width", "code_dim": "m_c, code dimension"},
        numeric=construction_params_unique,
        symbolic=_sym_unique,
        label="B3",
        aliases={"F": "n_facts", "d": "d_model", "m_c": "code_dim"},
    )
)
register_bound(
    Bound(
        name="fact_mlp.gated_mlp_params",
        provenance="reference",
        source=SOURCE + ", gated MLP baseline",
        statement="a gated MLP of width m has 3dm + 2m + d parameters (with biases)",
        params={
            "d_model": "d, model width",
            "hidden": "m, hidden width",
            "biases": "count the biases (the statement's 2m + d): 1 or 0",
        },
        numeric=gated_mlp_params,
        symbolic=_sym_gated,
        aliases={"d": "d_model", "m": "hidden"},
    )
)
register_bound(
    Bound(
        name="fact_mlp.baseline_ratio",
        provenance="derived",
        source=SOURCE + ", B5",
        statement="improvement = P_baseline/P_ours at the smallest sizes with accuracy 1",
        params={"params_baseline": "P_baseline", "params_ours": "P_ours"},
        numeric=baseline_ratio,
        symbolic=_sym_ratio,
        label="B5",
        aliases={"P_baseline": "params_baseline", "P_ours": "params_ours"},
    )
)

# The documented entry point for rho (docs/fact_mlp.md#setting). It lives in its own module.
from theory.fact_mlp.rho import Decodability, decodability  # noqa: E402,F401
