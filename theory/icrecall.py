"""Bounds and formulas of in-context factual recall (docs/icrecall.md#statements-and-proof-sketches).

Source: Huang, Nichani, Lee, Ge, *Fine-Tuning Dynamics of In-Context Factual Recall in
Transformers* (arXiv 2605.27774). The abstract states qualitatively that fine-tuning finds a
pairwise attention pattern and needs polylog(#triplets) samples [abstract]. The incoherence and
linear-memory statements are standard [reference: Nichani, Lee & Bietti 2024, arXiv 2412.06538].
Every constant below is this project's own formalisation [derived]; none is the paper's.
No torch here (a test proves it).
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from theory.papers import paper
from theory.registry import Bound, register_bound
from theory.validate import require_int, require_real

SOURCE = paper("icrecall")
REF = "Nichani, Lee & Bietti 2024 (arXiv 2412.06538)"
V, d, S, R, n, rho, theta, K, c = sp.symbols("V d S R n rho theta K c", positive=True)


def incoherence_bound(n_vectors, dim) -> float:
    """[reference] For V independent unit Gaussian directions in R^d, with high probability
    max_{t != t'} |<e_t, e_t'>| <= 2 sqrt(2 ln V / d).

    Sketch: <e_t, e_t'> is sub-Gaussian with variance proxy about 1/d; a union bound over V^2
    pairs gives the max below sqrt(2 ln(V^2) / d) times a constant; the factor 2 absorbs the
    normalisation and the constant. Hypotheses: V >= 2, d >= 1.

    Examples
    --------
    1000 directions in R^256 have pairwise inner products below about 0.46:
    >>> round(incoherence_bound(1000, 256), 4)
    0.4646
    """
    v = require_int("V", n_vectors, 2)
    dd = require_int("d", dim, 1)
    return 2.0 * math.sqrt(2.0 * math.log(v) / dd)


def mlp_sufficient_dim(n_subjects, n_relations) -> float:
    """[derived, heuristic] The triplet MLP (docs/icrecall.md#setting, theta = 1.5) recalls every fact once
    d >= 32 ln(S R).

    Sketch: on z = e_s + e_r the correct neuron's pre-activation is 2 + 2<e_s, e_r>; recall needs
    it above theta = 1.5, i.e. the noise 2<e_s, e_r> ~ N(0, 4/d) above -1/2 for all m = S R facts.
    The Gaussian maximum of m such variables is about sqrt(2 (4/d) ln m), below 1/2 when
    d >= 32 ln m. The neurons sharing only s or r sit at 1 + (sum of <= 3 inner products,
    variance <= 3/d) and need to stay below 1.5, which the same d gives for the (S + R) m
    pairs up to the constant. This is a Gaussian-maximum approximation, not a union-bound
    guarantee (at small S R its failure probability is of order one); the rigorous
    version is :func:`mlp_guarantee_dim`. Hypotheses: S >= 2, R >= 1.

    Examples
    --------
    50 subjects and 4 relations (200 facts) call for d >= 32 ln 200:
    >>> round(mlp_sufficient_dim(50, 4), 2)
    169.55
    """
    s = require_int("S", n_subjects, 2)
    r = require_int("R", n_relations, 1)
    return 32.0 * math.log(s * r) if s * r > 1 else 0.0


def mlp_guarantee_dim(n_subjects, n_relations, fail_prob) -> float:
    """[derived, rigorous] With d >= 72 ln((S + R)^2 / delta), the triplet MLP at theta = 1.5
    recalls every one of the S R facts from e_s + e_r with probability >= 1 - delta.

    Proof sketch: suppose every pair among the S + R vectors {e_s} and {e_r} has
    |<.,.>| <= t = 1/6. On z = e_s + e_r the correct neuron sits at 2 + 2<e_s, e_r> >= 5/3 > 1.5;
    a neuron sharing s or r sits at 1 + (three inner products) <= 1.5, one sharing neither at
    <= 4/6; so only the correct neuron is active, F(z) = h u_{a*} with h > 0, and u_{a*} wins the
    argmax because <u_a, u_{a*}> < 1 for a != a* (almost surely). For independent uniform unit
    vectors P(|<e, e'>| > t) <= 2 exp(-d t^2 / 2); a union bound over fewer than (S + R)^2 / 2
    pairs gives failure probability <= (S + R)^2 exp(-d / 72) <= delta.
    Hypotheses: S >= 2, R >= 1, 0 < delta < 1.

    Examples
    --------
    The guarantee for those 200 facts with probability >= 0.99 needs d >= 906:
    >>> round(mlp_guarantee_dim(50, 4, 0.01), 1)
    906.0
    """
    s = require_int("S", n_subjects, 2)
    r = require_int("R", n_relations, 1)
    dl = require_real("delta", fail_prob, 0, 1, low_open=True, high_open=True)
    return 72.0 * math.log((s + r) ** 2 / dl)


def mlp_params(n_subjects, n_relations, dim) -> int:
    """[derived] The triplet MLP has m = S R neurons and 2 m d + m parameters (m x d first layer,
    m biases, d x m second layer).

    Examples
    --------
    200 neurons on d = 64:
    >>> mlp_params(50, 4, 64)
    25800
    """
    m = require_int("S", n_subjects, 2) * require_int("R", n_relations, 1)
    return 2 * m * require_int("d", dim, 1) + m


def linear_capacity(dim, n_outputs, const) -> float:
    """[reference] A linear memory W = sum_i u_{y_i} e_{x_i}^T stores N <= c d^2 / ln V pairs
    (V outputs); the constant c is not known and is a parameter here. Hypotheses: d >= 1,
    V >= 2, c > 0.

    Examples
    --------
    With c = 1, a 64-dimensional linear memory over 1000 outputs stores about 593 pairs:
    >>> round(linear_capacity(64, 1000, 1.0), 1)
    593.0
    """
    dd = require_int("d", dim, 1)
    v = require_int("V", n_outputs, 2)
    cc = require_real("c", const, 0, low_open=True)
    return cc * dd * dd / math.log(v)


def pairwise_preactivations(n_pairs, rho) -> dict:
    """[derived] Pre-activations of the triplet MLP on z = e_{s_q} + omega sum_j alpha_j x_j with the
    hand-set pairwise pattern (alpha = 1/(2n) on each context token, 0 on the query) and
    omega = 2/rho, up to O(sqrt(log(N_f)/d)) noise.

    Sketch: the answers contribute omega (1/(2n)) n rho e_r = e_r; each context subject
    contributes omega/(2n) e_{s_i} = e_{s_i}/(n rho); the query contributes e_{s_q}. So
    (s_q, r): 2; (s_q, r'): 1; (s_i, r): 1 + 1/(n rho); (s', r): 1.
    Hypotheses: n >= 1, 0 < rho <= 1.
    """
    nn = require_int("n", n_pairs, 1)
    rr = require_real("rho", rho, 0, 1, low_open=True)
    return {
        "correct": 2.0,
        "query_other_relation": 1.0,
        "context_subject": 1.0 + 1.0 / (nn * rr),
        "other_subject": 1.0,
    }


def pairwise_margin(n_pairs, rho, theta=1.5) -> float:
    """[derived] min(2 - theta, theta - 1 - 1/(n rho)): the noise-free margin of the pairwise
    pattern to the threshold theta (omega = 2/rho).

    Positive iff, noise-free, the correct neuron (s_q, r) is the only active neuron. That is
    sufficient for recall, not necessary: for 1/rho < n < 1/(rho (theta - 1)) the context-subject
    neurons (s_i, r) fire too, but at 1 + 1/(n rho) - theta, below the correct neuron's
    2 - theta, so the argmax stays correct unless several context subjects share one wrong answer
    (:func:`min_recall_pairs`). At theta = 1.5, rho = 1/sqrt 2 the margin is 1/2 - 1/(n rho):
    negative at n = 2 (-0.21) although the pattern recalls there. Hypotheses: n >= 1,
    0 < rho <= 1, 1 < theta < 2.

    Examples
    --------
    At rho = 1/sqrt 2 the margin is positive at n = 4 and negative at n = 2:
    >>> round(pairwise_margin(4, 2**-0.5), 4), round(pairwise_margin(2, 2**-0.5), 4)
    (0.1464, -0.2071)
    """
    th = require_real("theta", theta, 1, 2, low_open=True, high_open=True)
    pre = pairwise_preactivations(n_pairs, rho)
    return min(pre["correct"] - th, th - pre["context_subject"])


def min_context_pairs(rho, theta=1.5) -> int:
    """[derived] The least n with pairwise_margin(n, rho, theta) > 0, i.e. n > 1/(rho (theta-1)):
    floor(1/(rho (theta-1))) + 1. From this n on no wrong neuron fires (noise-free).

    Examples
    --------
    At rho = 1/sqrt 2 and theta = 1.5 no wrong neuron fires from 3 context pairs on:
    >>> min_context_pairs(2**-0.5)
    3
    """
    rr = require_real("rho", rho, 0, 1, low_open=True)
    th = require_real("theta", theta, 1, 2, low_open=True, high_open=True)
    return int(math.floor(1.0 / (rr * (th - 1.0)))) + 1


def min_recall_pairs(rho) -> int:
    """[derived] The least n at which, noise-free, the pairwise pattern's correct neuron out-activates
    every single context-subject neuron: 2 - theta > 1 + 1/(n rho) - theta iff n > 1/rho, so
    floor(1/rho) + 1 (2 at rho = 1/sqrt 2). Below it (n = 1 at rho = 1/sqrt 2) the context
    subject's own fact a*(s_1, r) wins. Sketch: both neurons carry the relation coefficient 1; the
    query contributes 1 to (s_q, r), the subject s_i contributes omega/(2n) = 1/(n rho) to
    (s_i, r). Hypothesis: 0 < rho <= 1.

    Examples
    --------
    At rho = 1/sqrt 2 the pattern recalls from 2 context pairs on:
    >>> min_recall_pairs(2**-0.5)
    2
    """
    rr = require_real("rho", rho, 0, 1, low_open=True)
    return int(math.floor(1.0 / rr)) + 1


def relation_signal_boundary(rho_design, theta=1.5) -> float:
    """[derived] With omega fixed at 2/rho_design and the pairwise pattern, a world whose answers
    carry the relation with alignment rho puts rho/rho_design on e_r; the correct neuron
    1 + rho/rho_design passes theta iff rho > (theta - 1) rho_design (0.354 at the defaults).
    Hypotheses: 0 < rho_design <= 1, 1 < theta < 2.

    Examples
    --------
    At the defaults (rho_design = 1/sqrt 2, theta = 1.5) the boundary is 0.354:
    >>> round(relation_signal_boundary(2**-0.5), 3)
    0.354
    """
    rr = require_real("rho", rho_design, 0, 1, low_open=True)
    th = require_real("theta", theta, 1, 2, low_open=True, high_open=True)
    return (th - 1.0) * rr


def relation_chance_ceiling(n_relations, n_test, sigmas=3.0, slack=0.01) -> float:
    """[derived] Upper acceptance bound for an accuracy at relation chance 1/R measured on K test
    sequences: 1/R + sigmas sqrt((1/R)(1 - 1/R)/K) + slack (binomial tolerance).

    Rationale: if the context holds no information about the target relation r (mixed contexts),
    any predictor of a*(s_q, r) is right with probability at most 1/R (it can at best guess r
    and know a*(s_q, r') for all r'); the count of successes over K independent test sequences is
    then dominated by Binomial(K, 1/R). Hypotheses: R >= 1, K >= 1, sigmas >= 0.

    Examples
    --------
    At chance 1/4 on 200 test sequences an accuracy up to 0.352 counts as chance:
    >>> round(relation_chance_ceiling(4, 200), 4)
    0.3519
    """
    r = require_int("R", n_relations, 1)
    k = require_int("K", n_test, 1)
    sg = require_real("sigmas", sigmas, 0)
    p = 1.0 / r
    return p + sg * math.sqrt(p * (1.0 - p) / k) + float(slack)


def fit_sample_complexity(n_facts, n_star) -> dict:
    """[derived] Two 2-parameter fits of the sample need N* against N_f, least squares in log N*:
    power law  log N* = log a + k log N_f,  polylog  log N* = log b + p log log N_f.

    Returns the exponents k and p, the coefficients, and the residual sums of squares (sse_power,
    sse_polylog). Our decision rule [derived]: polylog wins when sse_polylog <= sse_power and the
    power-law exponent k < 0.5. Hypotheses: at least 2 points, N_f > e (log log defined and
    positive), N* > 0 everywhere, at least two distinct N_f.
    """
    x = np.asarray(n_facts, float)
    y = np.asarray(n_star, float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise ValueError("fit needs two equally long 1-d sequences of at least 2 points")
    if np.any(x <= math.e) or np.any(y <= 0):
        raise ValueError("fit needs N_f > e and N* > 0 (hypothesis of the log-log fits)")
    if np.unique(x).size < 2:
        raise ValueError("fit needs at least two distinct N_f")
    ly = np.log(y)
    out = {}
    for name, feat in (("power", np.log(x)), ("polylog", np.log(np.log(x)))):
        A = np.stack([np.ones_like(feat), feat], axis=1)
        coef, *_ = np.linalg.lstsq(A, ly, rcond=None)
        resid = ly - A @ coef
        out[f"{name}_exponent"] = float(coef[1])
        out[f"{name}_coef"] = float(math.exp(coef[0]))
        out[f"sse_{name}"] = float(resid @ resid)
    out["polylog_better"] = bool(out["sse_polylog"] <= out["sse_power"] + 1e-12)
    return out


for _bound in (
    Bound(
        "icrecall.incoherence",
        "max |<e_t, e_t'>| <= 2 sqrt(2 ln V / d) w.h.p. for V random unit directions",
        "reference",
        REF,
        {"n_vectors": "V, number of vectors", "dim": "d, dimension"},
        incoherence_bound,
        lambda: 2 * sp.sqrt(2 * sp.log(V) / d),
        aliases={"V": "n_vectors", "d": "dim"},
    ),
    Bound(
        "icrecall.mlp_sufficient_dim",
        "the triplet MLP recalls every fact when d >= 32 ln(S R) (Gaussian-maximum heuristic)",
        "derived",
        SOURCE,
        {"n_subjects": "S, subjects", "n_relations": "R, relations"},
        mlp_sufficient_dim,
        lambda: 32 * sp.log(S * R),
        aliases={"S": "n_subjects", "R": "n_relations"},
    ),
    Bound(
        "icrecall.mlp_guarantee_dim",
        "the triplet MLP recalls every fact with probability "
        ">= 1 - delta when d >= 72 ln((S + R)^2 / delta) (union bound)",
        "derived",
        SOURCE,
        {
            "n_subjects": "S, subjects",
            "n_relations": "R, relations",
            "fail_prob": "delta, failure probability",
        },
        mlp_guarantee_dim,
        lambda: 72 * sp.log((S + R) ** 2 / sp.Symbol("delta", positive=True)),
        aliases={"S": "n_subjects", "R": "n_relations", "delta": "fail_prob"},
    ),
    Bound(
        "icrecall.mlp_params",
        "the triplet MLP has 2 m d + m parameters, m = S R",
        "derived",
        SOURCE,
        {"n_subjects": "S, subjects", "n_relations": "R, relations", "dim": "d, dimension"},
        mlp_params,
        lambda: 2 * S * R * d + S * R,
        aliases={"S": "n_subjects", "R": "n_relations", "d": "dim"},
    ),
    Bound(
        "icrecall.linear_capacity",
        "a linear memory stores N <= c d^2 / ln V pairs",
        "reference",
        REF,
        {"dim": "d, dimension", "n_outputs": "V, outputs", "const": "c, unknown constant"},
        linear_capacity,
        lambda: c * d**2 / sp.log(V),
        aliases={"d": "dim", "V": "n_outputs", "c": "const"},
    ),
    Bound(
        "icrecall.pairwise_margin",
        "pairwise pattern margin to theta: min(2 - theta, "
        "theta - 1 - 1/(n rho)) > 0 iff only the correct neuron fires (sufficient, not "
        "necessary, for recall)",
        "derived",
        SOURCE,
        {"n_pairs": "n, context pairs", "rho": "answer-relation alignment", "theta": "MLP threshold"},
        pairwise_margin,
        lambda: sp.Min(2 - theta, theta - 1 - 1 / (n * rho)),
        aliases={"n": "n_pairs"},
    ),
    Bound(
        "icrecall.min_context_pairs",
        "no wrong neuron fires under the pairwise pattern once n > 1/(rho (theta - 1))",
        "derived",
        SOURCE,
        {"rho": "answer-relation alignment", "theta": "MLP threshold"},
        min_context_pairs,
        lambda: sp.floor(1 / (rho * (theta - 1))) + 1,
    ),
    Bound(
        "icrecall.min_recall_pairs",
        "noise-free, the pairwise pattern recalls (the correct "
        "neuron beats each context-subject neuron) iff n > 1/rho",
        "derived",
        SOURCE,
        {"rho": "answer-relation alignment"},
        min_recall_pairs,
        lambda: sp.floor(1 / rho) + 1,
    ),
    Bound(
        "icrecall.relation_signal_boundary",
        "with omega = 2/rho_0 the pairwise pattern "
        "recalls iff the answers' alignment rho > (theta - 1) rho_0",
        "derived",
        SOURCE,
        {"rho_design": "rho_0, design alignment", "theta": "MLP threshold"},
        relation_signal_boundary,
        lambda: (theta - 1) * rho,
        aliases={"rho_0": "rho_design", "rho": "rho_design"},
    ),
    Bound(
        "icrecall.relation_chance",
        "with an uninformative context, accuracy <= 1/R + 3 sqrt((1/R)(1-1/R)/K) + 0.01 on K test sequences",
        "derived",
        SOURCE,
        {
            "n_relations": "R, relations",
            "n_test": "K, test sequences",
            "sigmas": "binomial tolerance in standard deviations (3 in the statement)",
            "slack": "added slack (0.01 in the statement)",
        },
        relation_chance_ceiling,
        lambda: 1 / R + 3 * sp.sqrt((1 / R) * (1 - 1 / R) / K) + sp.Rational(1, 100),
        aliases={"R": "n_relations", "K": "n_test"},
    ),
):
    register_bound(_bound)
