"""Multi-hop bounds of *Geometric Factual Recall in Transformers* (2605.12426): B5,
docs/geometric.md#statements-and-proof-sketches.

The abstract states that there are constructions with and without chain of thought (CoT), a
capacity-depth tradeoff, and a matching information-theoretic lower bound [abstract]. The
dimensions and the lower bound below are this project's formalisation [derived]; none of their
constants is the paper's.

Setting. Entities [N] are both subjects and attributes (A = S); R bijections pi_1..pi_R of [N];
a k-hop query is a start x and a chain rho = (r_1..r_k) in [R]^k with answer
pi_rho(x) = pi_{r_k} o ... o pi_{r_1}(x). I_k = sum_{j=0}^{k-1} R^j counts the internal nodes
(root included) of the depth-k chain tree rooted at x.
"""

from __future__ import annotations

import math

import sympy as sp

from theory.papers import paper
from theory.registry import Bound, register_bound
from theory.validate import require_int, require_real

SOURCE = paper("geometric")
N, R, k, p, d, d0 = sp.symbols("N R k p d d0", positive=True)


def internal_nodes(n_relations, n_hops) -> int:
    """I_k = sum_{j=0}^{k-1} R^j: nodes of depth < k of the chain tree (root included) [derived]."""
    r = require_int("R", n_relations, 1)
    kk = require_int("k", n_hops, 1)
    return kk if r == 1 else (r**kk - 1) // (r - 1)


# ---------------------------------------------------------------------------------------------
# B5: dimensions of the two constructions and the depth a single pass supports
def dim_nocot(n_relations, n_hops, block_dim) -> int:
    """B5 [derived]: the no-CoT construction treats each chain in [R]^k as a composite
    relation and uses R^k blocks: d_noCoT(k) = R^k * d0 (selector width 2 R^k d0).

    Examples
    --------
    Two hops over 3 relations with blocks of 16: 3^2 * 16 dimensions:
    >>> dim_nocot(3, 2, 16)
    144
    """
    r = require_int("R", n_relations, 1)
    kk = require_int("k", n_hops, 1)
    return r**kk * require_int("d0", block_dim, 1)


def dim_cot(n_relations, block_dim) -> int:
    """B5 [derived]: CoT reuses the single-hop model, d_CoT = R * d0 for every k.

    Examples
    --------
    With CoT the same 3 relations take 3 * 16 dimensions at any depth:
    >>> dim_cot(3, 16)
    48
    """
    return require_int("R", n_relations, 1) * require_int("d0", block_dim, 1)


def k_max(dim, block_dim, n_relations) -> int:
    """B5 [derived]: the largest k with R^k d0 <= d, i.e. floor(log_R(d / d0)), in exact integers.

    Hypotheses: R >= 2 (with R = 1 every depth fits), d >= d0 >= 1 (else not even k = 1 fits: 0).

    Examples
    --------
    d = 512 holds chains of up to 3 hops over 3 relations at d0 = 16 (3^3 * 16 = 432 <= 512):
    >>> k_max(512, 16, 3)
    3
    """
    dd = require_int("d", dim, 1)
    b = require_int("d0", block_dim, 1)
    r = require_int("R", n_relations, 2)
    kk = 0
    while r ** (kk + 1) * b <= dd:
        kk += 1
    return kk


# ---------------------------------------------------------------------------------------------
# The k-hop lower bound
def khop_bits(n_subjects, n_relations, n_hops) -> float:
    """Lower bound on the subject-embedding bits for one-pass k-hop recall [derived theorem].

    Theorem [derived]. Let a one-layer model answer a k-hop query (x, rho) as
    argmax_a z_a(e_x, rho), where the MLP, relation (chain-token) embeddings and unembedding are the
    same for every fact set (a universal selector, as the transfer result exhibits), so that the
    subject embedding e_x in R^d, stored at p bits per coordinate, is the only fact-dependent input.
    If the model answers every k-hop chain from every start for every table of R bijections of
    [N], then for every x

        d * p  >=  log2 |T_k|  >=  R^k * log2(N + 1 - I_k)  >=  R^k * log2(N - R^k),

    where T_k is the set of answer tuples (pi_rho(x))_{rho in [R]^k} a single subject can have over
    all tables, and I_k = sum_{j<k} R^j (hypothesis N >= I_k; the last form needs N > R^k, R >= 2).
    With CoT each step is a single-hop query, k = 1: R * log2 N bits (>= R log2(N - R)) whatever k.
    This function returns the middle expression R^k log2(N + 1 - I_k); for R = 1 it returns the
    exact log2 |T_k| = log2 N (one chain; pi^k(x) can be any entity).

    Proof sketch.
    (1) Counting: the decoder e -> (argmax_a z_a(e, rho))_rho is fixed, so it realises at most
        2^{d p} tuples; each tuple in T_k occurs for some table, so |T_k| <= 2^{d p}.
    (2) |T_k| >= (N + 1 - I_k)^{R^k}: label the I_k internal nodes of the chain tree (words w of
        length < k; the root is x) with distinct entities, and set pi_r(label(w)) = label(wr) for
        |w| < k - 1: partial injections, since the labels are distinct. Fill the R^k leaves wr
        (|w| = k - 1) one by one with the value pi_r(label(w)); pi_r stays injective iff the value
        avoids the labels already in pi_r's image: label(ur) for |u| <= k - 2 (I_k - R^{k-1}
        nodes) and the other leaves ending in r (R^{k-1} - 1). So at least N - (I_k - 1) values
        remain for each leaf; a partial injection extends to a bijection of [N], and different
        choices give different tuples.
    (3) For R >= 2, I_k = (R^k - 1)/(R - 1) <= R^k - 1, so N + 1 - I_k >= N + 2 - R^k.
    Monotone in N always; in k and R wherever N >= 2 R^{k+1} (then M = N + 1 - I_{k+1} >= R^k and
    M^R >= M + R^k, i.e. R^{k+1} log M >= R^k log(M + R^k)).

    Examples
    --------
    Two hops over 3 relations among 1000 entities: I_2 = 4, so 9 log2(997) bits per subject:
    >>> round(khop_bits(1000, 3, 2), 2)
    89.65
    """
    n = require_int("N", n_subjects, 2)
    r = require_int("R", n_relations, 1)
    kk = require_int("k", n_hops, 1)
    if r == 1:
        return math.log2(n)
    inner = internal_nodes(r, kk)
    if n < inner:
        raise ValueError(
            f"N={n} violates the hypothesis N >= I_k = {inner} (internal nodes of the "
            f"depth-{kk} chain tree for R={r}); the bound R^k log2(N+1-I_k) needs it"
        )
    return r**kk * math.log2(n + 1 - inner)


def khop_dim_lower_bound(n_subjects, n_relations, n_hops, bits_per_param=32) -> float:
    """The theorem of :func:`khop_bits` in dimension [derived]: d >= R^k log2(N + 1 - I_k) / p.

    Examples
    --------
    The same at 32 bits per coordinate: the subject embedding needs d >= 2.8:
    >>> round(khop_dim_lower_bound(1000, 3, 2), 3)
    2.802
    """
    bits = require_real("p", bits_per_param, 0, low_open=True)
    return khop_bits(n_subjects, n_relations, n_hops) / bits


def khop_table_bits(n_subjects, n_relations, n_hops) -> float:
    """N * R^k log2(N + 1 - I_k): the :func:`khop_bits` theorem summed over the N subjects [derived].

    Under the hypotheses of :func:`khop_bits` (one pass; MLP, chain-token embeddings and unembedding
    the same for every fact set) each subject embedding needs log2 |T_k| bits on its own, since the
    fixed decoder reads subject x's whole answer tuple from e_x alone; the N embeddings (N d p bits)
    therefore hold at least N log2 |T_k| >= N R^k log2(N + 1 - I_k) bits. This is what the capacity
    atlas sets against parameter counts of the one-pass k-hop families, in the same units as
    R log2 N! for single hop (the k = 1 value N R log2 N is that count's per-subject form, up to the
    e of Stirling). It is NOT the information content of the fact table, which the R bijections fix
    and which is at most R log2 N!: for k >= 2 the bound exceeds it, because a fact-independent
    one-pass decoder cannot compose bijections and each subject must carry its composite answers.
    A model whose decoder is trained on the facts (the trained one-pass family) does not satisfy the
    hypothesis, so for it the number is a reference scale, not a lower bound.

    Examples
    --------
    Summed over the 1000 subjects:
    >>> round(khop_table_bits(1000, 3, 2), 1)
    89653.0
    """
    n = require_int("N", n_subjects, 2)
    return n * khop_bits(n, n_relations, n_hops)


def khop_table_entropy(n_subjects, n_relations, n_hops) -> tuple[float, float]:
    """(lower, upper) bits of the k-hop fact table itself [derived]: (R - 1) log2 N! <= H <= R log2 N!.

    The table is T_k = (pi_rho)_{rho in [R]^k} for R independent uniform bijections of [N], the
    answers of all N R^k one-pass queries. Upper: T_k is a function of (pi_1..pi_R), whose entropy
    is R log2 N!. Lower: H(T_k) >= H(T_k | pi_1) = (R - 1) log2 N!, because given pi_1 the entries
    rho = (r, 1, ..., 1) equal pi_1^(k-1) o pi_r and so determine every pi_r. For k = 1 the table is
    the bijections, H = R log2 N!. Whatever k, the facts hold at most R log2 N! bits: depth adds
    queries, not information; what a one-pass model pays for depth (:func:`khop_table_bits`) is
    the cost of answering composites without composing.
    """
    n = require_int("N", n_subjects, 2)
    r = require_int("R", n_relations, 1)
    kk = require_int("k", n_hops, 1)
    per = math.lgamma(n + 1) / math.log(2)
    return (r * per if kk == 1 else (r - 1) * per), r * per


def cot_step_bits(n_subjects, n_relations) -> float:
    """With CoT every step is a single-hop query [derived]: R log2 N bits per subject, for any k."""
    return khop_bits(n_subjects, n_relations, 1)


def construction_to_bound_ratio(n_subjects, n_relations, n_hops, block_dim, bits_per_param=32) -> float:
    """d_noCoT / (khop_bits / p) = d0 p / log2(N + 1 - I_k) [derived].

    Both dimensions scale as R^k; their ratio depends on k only through log2(N + 1 - I_k), so it stays
    bounded (about d0 p / log2 N, i.e. 3 p ln 2 at d0 = 3 ln N) while N >> R^k: the bound matches the
    construction up to a factor independent of k.
    """
    return dim_nocot(n_relations, n_hops, block_dim) / khop_dim_lower_bound(
        n_subjects, n_relations, n_hops, bits_per_param
    )


def _sym_internal():
    return (R**k - 1) / (R - 1)


for _bound in (
    Bound(
        "geometric.khop_bits",
        "a one-pass model with a fact-independent MLP, relation embeddings "
        "and unembedding answering every k-hop chain needs d*p >= R^k log2(N + 1 - I_k) >= "
        "R^k log2(N - R^k) bits of subject embedding, I_k = (R^k-1)/(R-1); CoT needs R log2 N per step",
        "derived",
        SOURCE,
        {"n_subjects": "N, subjects (= attributes)", "n_relations": "R, relations", "n_hops": "k, hops"},
        khop_bits,
        lambda: R**k * sp.log(N + 1 - _sym_internal(), 2),
        aliases={"N": "n_subjects", "R": "n_relations", "k": "n_hops"},
    ),
    Bound(
        "geometric.khop_table_bits",
        "summed over the N subjects: the subject embeddings of a one-pass model with a "
        "fact-independent decoder hold >= N R^k log2(N + 1 - I_k) bits (not the table's entropy, "
        "which is <= R log2 N!)",
        "derived",
        SOURCE,
        {"n_subjects": "N, subjects (= attributes)", "n_relations": "R, relations", "n_hops": "k, hops"},
        khop_table_bits,
        lambda: N * R**k * sp.log(N + 1 - _sym_internal(), 2),
        aliases={"N": "n_subjects", "R": "n_relations", "k": "n_hops"},
    ),
    Bound(
        "geometric.khop_dim_bound",
        "in dimension: d >= R^k log2(N + 1 - I_k) / p (one pass, fact-independent selector)",
        "derived",
        SOURCE,
        {
            "n_subjects": "N, subjects",
            "n_relations": "R, relations",
            "n_hops": "k, hops",
            "bits_per_param": "p, bits per coordinate",
        },
        khop_dim_lower_bound,
        lambda: R**k * sp.log(N + 1 - _sym_internal(), 2) / p,
        aliases={"N": "n_subjects", "R": "n_relations", "k": "n_hops", "p": "bits_per_param"},
    ),
    Bound(
        "geometric.d_nocot",
        "no-CoT construction dimension d = R^k d0 (B5)",
        "derived",
        SOURCE,
        {"n_relations": "R, relations", "n_hops": "k, hops", "block_dim": "d0, block dimension"},
        dim_nocot,
        lambda: R**k * d0,
        label="B5",
        aliases={"R": "n_relations", "k": "n_hops", "d0": "block_dim"},
    ),
    Bound(
        "geometric.d_cot",
        "CoT construction dimension d = R d0, independent of k (B5)",
        "derived",
        SOURCE,
        {"n_relations": "R, relations", "block_dim": "d0, block dimension"},
        dim_cot,
        lambda: R * d0,
        label="B5",
        aliases={"R": "n_relations", "d0": "block_dim"},
    ),
    Bound(
        "geometric.k_max",
        "largest depth one pass supports at dimension d: floor(log_R(d/d0)) (B5)",
        "derived",
        SOURCE,
        {"dim": "d, dimension", "block_dim": "d0, block dimension", "n_relations": "R, relations"},
        k_max,
        lambda: sp.floor(sp.log(d / d0, R)),
        label="B5",
        aliases={"d": "dim", "d0": "block_dim", "R": "n_relations"},
    ),
):
    register_bound(_bound)
