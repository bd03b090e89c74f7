"""Bounds of *Geometric Factual Recall in Transformers* (2605.12426),
docs/geometric.md#statements-and-proof-sketches.

The abstract states that an embedding dimension logarithmic in N suffices and that a matching
information-theoretic lower bound exists [abstract]. The constants below are this project's own
formalisation [derived]: each docstring states the inequality, its hypotheses and a proof sketch.
None of them is a constant from the paper.
"""

from __future__ import annotations

import math

import mpmath
import sympy as sp

from theory.papers import paper
from theory.registry import Bound, register_bound
from theory.validate import require_int, require_real

SOURCE = paper("geometric")
N, R, p, t, delta, gamma, d0 = sp.symbols("N R p t delta gamma d0", positive=True)


# ---------------------------------------------------------------------------------------------
# B1: information lower bound
def info_bits(n_subjects, n_relations) -> float:
    """B1 [derived]: R random bijections of [N] carry exactly R*log2(N!) bits.

    Statement: any model that answers all N*R facts for every choice of the R bijections must be
    able to take at least (N!)^R distinct states, so it stores at least R*log2(N!) bits.
    Proof sketch: distinct tables must give distinct models (some fact differs), and there are
    (N!)^R tables. Computed as R*lgamma(N+1)/ln 2 (mpmath loggamma beyond 1e15), so no overflow.
    Hypotheses: N >= 2, R >= 1.

    Examples
    --------
    Four bijections of 1000 subjects carry about 34118 bits:
    >>> round(info_bits(1000, 4), 1)
    34117.6
    """
    n = require_int("N", n_subjects, 2)
    r = require_int("R", n_relations, 1)
    if n < 10**15:
        return r * math.lgamma(n + 1) / math.log(2)
    return float(r * mpmath.loggamma(n + 1) / mpmath.log(2))


def bits_per_fact(n_subjects, n_relations) -> float:
    """B1 per fact [derived]: log2(N!)/N bits for each of the N*R facts (about log2(N/e)).

    Examples
    --------
    At N = 1000 each fact carries about 8.53 bits (log2(1000/e) is 8.52):
    >>> round(bits_per_fact(1000, 4), 3)
    8.529
    """
    return info_bits(n_subjects, n_relations) / (int(n_subjects) * int(n_relations))


def param_lower_bound(n_subjects, n_relations, bits_per_param=32) -> float:
    """B1 in parameters [derived]: P >= R*log2(N!)/p at p bits per parameter (pigeonhole on states).

    Examples
    --------
    Storing 4 bijections of 1000 subjects at 32 bits a parameter takes at least 1067 parameters:
    >>> round(param_lower_bound(1000, 4), 1)
    1066.2
    """
    bits = require_real("p", bits_per_param, 0, low_open=True)
    return info_bits(n_subjects, n_relations) / bits


def embed_dim_lower_bound(n_subjects, n_relations, bits_per_param=32) -> float:
    """B1 in embedding dimension [derived]: d >= R*log2(N!)/(N*p), about R*log2(N/e)/p.

    Hypothesis: the MLP, relation embeddings and unembedding are fact-independent (as in the block
    construction, docs/geometric.md#setting), so every fact-dependent bit lives in the N*d coordinates of the
    subject embeddings, each holding at most p bits.

    Examples
    --------
    The same facts need subject embeddings of dimension at least 1.07, so d >= 2:
    >>> round(embed_dim_lower_bound(1000, 4), 3)
    1.066
    """
    n = require_int("N", n_subjects, 2)
    return param_lower_bound(n_subjects, n_relations, bits_per_param) / n


# ---------------------------------------------------------------------------------------------
# B2: sufficient block dimension for random codes
def d0_sufficient(n_subjects, threshold, fail_prob) -> float:
    """B2 [derived; Hoeffding + union bound]: d0 >= 2 ln(2 N^2 / delta) / t^2 suffices.

    Statement: for N Rademacher codes (entries +-1/sqrt(d0)) with d0 at least this value, with
    probability >= 1 - delta every cross inner product satisfies |<u_a, u_b>| < t, so the decoding
    margin of the block construction, 1 - max_{a != b} <u_a, u_b>, exceeds 1 - t.
    Proof sketch: <u_a, u_b> is a sum of d0 independent terms, each +-1/d0 with mean 0; Hoeffding gives P(|<u_a,u_b>| >= t) <= 2 exp(-d0 t^2 / 2);
    a union bound over fewer than N^2 ordered pairs gives failure probability <= 2 N^2 exp(-d0 t^2/2),
    which is <= delta exactly when d0 >= 2 ln(2 N^2/delta)/t^2.
    Hypotheses: N >= 2, 0 < t <= 1, 0 < delta < 1.

    Examples
    --------
    d0 >= 153 keeps every cross inner product of 1000 codes below 0.5 with probability >= 0.99:
    >>> round(d0_sufficient(1000, 0.5, 0.01), 2)
    152.91
    """
    n = require_int("N", n_subjects, 2)
    tt = require_real("t", threshold, 0, 1, low_open=True)
    dd = require_real("delta", fail_prob, 0, 1, low_open=True, high_open=True)
    return 2.0 * math.log(2.0 * n * n / dd) / (tt * tt)


def require_sufficient_block_dim(
    block_dim: int, n_subjects: int, threshold: float = 1.0, fail_prob: float = 0.01
) -> None:
    """Raise ValueError when block_dim is below B2's sufficient dimension (the caller asked for the
    guarantee); a block_dim that is not an integer is an error naming it.

    >>> require_sufficient_block_dim(200, 100)
    >>> require_sufficient_block_dim(20, 100)
    Traceback (most recent call last):
    ...
    ValueError: dim=20 is below the sufficient dimension 29.0 for N=100, t=1.0, delta=0.01 (bound B2)
    >>> require_sufficient_block_dim(200.5, 100)
    Traceback (most recent call last):
    ...
    ValueError: block_dim=200.5 must be an integer
    """
    block_dim = require_int("block_dim", block_dim, 1)
    need = d0_sufficient(n_subjects, threshold, fail_prob)
    if block_dim < need:
        raise ValueError(
            f"dim={block_dim} is below the sufficient dimension {need:.1f} for "
            f"N={n_subjects}, t={threshold}, delta={fail_prob} (bound B2)"
        )


# ---------------------------------------------------------------------------------------------
# B3: necessary dimension for a margin
def d0_necessary(n_subjects, margin) -> float:
    """B3 [derived; volumetric packing]: margin gamma needs d0 >= ln N / ln(1 + sqrt(2/gamma)).

    Statement: N unit vectors in R^{d0} with pairwise inner products <= 1 - gamma exist only if
    N <= (1 + sqrt(2/gamma))^{d0}.
    Proof sketch: pairwise distances are >= sqrt(2 gamma); balls of radius r = sqrt(2 gamma)/2
    around the points are disjoint and lie in the ball of radius 1 + r; comparing volumes,
    N r^{d0} <= (1 + r)^{d0}, i.e. N <= (1 + 1/r)^{d0} = (1 + sqrt(2/gamma))^{d0}.
    Hypotheses: N >= 2, 0 < gamma <= 2.

    Examples
    --------
    Margin 0.5 for 1000 codes needs d0 >= 6.29, i.e. at least 7 coordinates:
    >>> round(d0_necessary(1000, 0.5), 3)
    6.288
    """
    n = require_int("N", n_subjects, 2)
    g = require_real("gamma", margin, 0, 2, low_open=True)
    return math.log(n) / math.log(1.0 + math.sqrt(2.0 / g))


# ---------------------------------------------------------------------------------------------
# B4: pigeonhole for binary codes
def pigeonhole_dim(n_subjects) -> float:
    """B4 [derived]: Rademacher codes in dimension d0 take at most 2^{d0} values, so d0 < log2 N
    forces two attributes to share a code: their logits tie and accuracy is < 1 (ties are errors).

    Examples
    --------
    200 attributes tie below d0 = 7.64, so distinct codes need d0 >= 8:
    >>> round(pigeonhole_dim(200), 3)
    7.644
    """
    n = require_int("N", n_subjects, 2)
    return math.log2(n)


for _bound in (
    Bound(
        "geometric.info_bits",
        "R random bijections of [N] carry R*log2(N!) bits; any model "
        "storing all of them has at least that many bits (B1)",
        "derived",
        SOURCE,
        {"n_subjects": "N, subjects", "n_relations": "R, relations"},
        info_bits,
        lambda: R * sp.log(sp.factorial(N)) / sp.log(2),
        label="B1",
        aliases={"N": "n_subjects", "R": "n_relations"},
    ),
    Bound(
        "geometric.bits_per_fact",
        "B1 per fact: log2(N!)/N bits per stored fact",
        "derived",
        SOURCE,
        {"n_subjects": "N, subjects", "n_relations": "R, relations"},
        bits_per_fact,
        lambda: sp.log(sp.factorial(N)) / (N * sp.log(2)),
        label="B1",
        aliases={"N": "n_subjects", "R": "n_relations"},
    ),
    Bound(
        "geometric.param_bound",
        "parameters P >= R*log2(N!)/p at p bits per parameter (B1)",
        "derived",
        SOURCE,
        {
            "n_subjects": "N, subjects",
            "n_relations": "R, relations",
            "bits_per_param": "p, bits per parameter",
        },
        param_lower_bound,
        lambda: R * sp.log(sp.factorial(N)) / (sp.log(2) * p),
        label="B1",
        aliases={"N": "n_subjects", "R": "n_relations", "p": "bits_per_param"},
    ),
    Bound(
        "geometric.embed_dim_bound",
        "with a fact-independent MLP, the subject embedding dimension d >= R*log2(N!)/(N*p) (B1)",
        "derived",
        SOURCE,
        {
            "n_subjects": "N, subjects",
            "n_relations": "R, relations",
            "bits_per_param": "p, bits per parameter",
        },
        embed_dim_lower_bound,
        lambda: R * sp.log(sp.factorial(N)) / (sp.log(2) * N * p),
        label="B1",
        aliases={"N": "n_subjects", "R": "n_relations", "p": "bits_per_param"},
    ),
    Bound(
        "geometric.d0_suff",
        "block dimension d0 >= 2 ln(2N^2/delta)/t^2 gives max cross inner "
        "product < t (margin > 1 - t) with probability >= 1 - delta for Rademacher codes (B2)",
        "derived",
        SOURCE,
        {
            "n_subjects": "N, subjects",
            "threshold": "t, coherence threshold",
            "fail_prob": "delta, failure probability",
        },
        d0_sufficient,
        lambda: 2 * sp.log(2 * N**2 / delta) / t**2,
        label="B2",
        aliases={"N": "n_subjects", "t": "threshold", "delta": "fail_prob"},
    ),
    Bound(
        "geometric.d0_nec",
        "margin gamma for N unit codes needs d0 >= ln N / ln(1 + sqrt(2/gamma)) (B3)",
        "derived",
        SOURCE,
        {"n_subjects": "N, subjects", "margin": "gamma, decoding margin"},
        d0_necessary,
        lambda: sp.log(N) / sp.log(1 + sp.sqrt(2 / gamma)),
        label="B3",
        aliases={"N": "n_subjects", "gamma": "margin"},
    ),
    Bound(
        "geometric.pigeonhole_dim",
        "Rademacher codes with d0 < log2 N force a tie (B4)",
        "derived",
        SOURCE,
        {"n_subjects": "N, subjects"},
        pigeonhole_dim,
        lambda: sp.log(N, 2),
        label="B4",
        aliases={"N": "n_subjects"},
    ),
):
    register_bound(_bound)
