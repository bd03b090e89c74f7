"""Capacity atlas (docs/atlas.md): the two searched geometric multi-hop families, their parameter counts,
the construction's threshold search and how their points are read from stored records. Registers
no claim (the construction's claim is :mod:`verify.atlas.multihop`; the trained family's
within-constant claim is one of :mod:`verify.atlas.claims`).

Both families answer every k-hop query (x, r_1..r_k) of R bijections of [N] in ONE pass, no chain
of thought, at hops k = 1, 2, 3, ... (the sizes of the family). Their resource is the embedding
dimension d, and their bound is the k-hop theorem of ``theory.geometric.multihop.khop_bits`` in
dimension, d >= R^k log2(N + 1 - I_k)/32 (``khop_dim_lower_bound``, [derived]). The information
column is that theorem summed over the N subjects (``khop_table_bits`` = N R^k log2(N + 1 - I_k),
[derived]): the bits a fact-independent one-pass decoder needs in the subject embeddings, in the
same units as R log2 N! for single hop; it is not the table's entropy, which lies between
(R - 1) log2 N! and R log2 N! whatever k (``khop_table_entropy``): each point also carries that
bracket (``table_bits``), against which the real storage rate is at most R log2 N!/P.

- ``geometric_multihop_construction``: the R^k-block construction of B5 (docs/geometric.md) with
  spherical codes; d = R^k d0*, where d0* is the block dimension at which the codes reach margin 0.25
  (the single-hop family's storing rule), found by the bisection of
  ``verify.geometric.scaling.threshold_bisect`` and confirmed on the built one-pass model (decoded
  margin >= 0.25 and accuracy 1 on all N R^k queries at d0*, margin < 0.25 at d0* - 1). Its
  parameters (:func:`nocot_params`): selector W1, W2 (2 d^2 + 2 d d0), chain-token gate embeddings
  (k R 2d), subject embeddings (N d) and unembedding (N d0). The construction meets the bound's
  hypothesis (its selector, gates and codes are the same for every fact set).
- ``geometric_multihop_gd``: the section 5.5 model with one learned token per chain, trained by
  full-batch Adam (``geometric.multihop.trained_depth``); d* = the smallest d reaching train
  accuracy 1; P = 2 N d + R^k d + 2 m d + m (``geometric_trained_params`` with R^k chain tokens).
  Its MLP and unembedding are trained on the facts, so the bound's hypothesis does NOT hold: the
  bound is its reference scale, not a limit it must respect.
"""

from __future__ import annotations

from theory.geometric import multihop as mh_theory

CONSTRUCTION_CLAIM = "atlas.geometric_multihop_construction.within_constant"
TRAINED_CLAIM = "geometric.multihop.trained_depth"
BOUND = (
    "theory.geometric.multihop.khop_table_bits = N R^k log2(N + 1 - I_k) (the k-hop theorem summed "
    "over subjects; in dimension khop_dim_lower_bound, d >= R^k log2(N + 1 - I_k)/32)"
)


def geometric_trained_params(n_subjects: int, n_relations: int, dim: int, mlp_width: int) -> int:
    """Parameter count of the trained geometric model, 2 N d + R d + 2 m d + m
    (``constructions.geometric.train.init_params``; with R^k chain tokens for k hops).

    >>> geometric_trained_params(30, 2, 5, 8)
    398
    """
    return 2 * n_subjects * dim + n_relations * dim + 2 * mlp_width * dim + mlp_width


def khop_dim_bound(sizes: dict) -> float:
    """The families' bound at one point, in dimension: khop_dim_lower_bound(N, R, k, 32)."""
    return mh_theory.khop_dim_lower_bound(int(sizes["N"]), int(sizes["R"]), int(sizes["k"]), 32)


def nocot_params(n_subjects: int, n_relations: int, n_hops: int, block_dim: int) -> int:
    """Parameters of the B5 one-pass model at d = R^k d0 (module doc), the count
    ``constructions.geometric.multihop.NoCoTModel.param_counts`` reads from the arrays."""
    d = n_relations**n_hops * block_dim
    return (
        2 * d * d + 2 * d * block_dim + n_hops * n_relations * 2 * d + n_subjects * d + n_subjects * block_dim
    )


#: what the two one-pass families share: area, resource, bound and its dimension form
_SHARED = dict(
    area="geometric",
    resource="dimension",
    bound=BOUND,
    bound_tag="derived",
    searched=True,
    dim_bound=khop_dim_bound,
)

CONSTRUCTION_FIELDS = dict(
    _SHARED,
    name="geometric_multihop_construction",
    kind="construction",
    claim_id=CONSTRUCTION_CLAIM,
    note="one-pass R^k-block k-hop construction (B5, spherical codes): d = R^k d0*, d0* the "
    "block dimension reaching margin 0.25, confirmed on the built model (measured by the atlas claim "
    "itself)",
)

TRAINED_FIELDS = dict(
    _SHARED,
    name="geometric_multihop_gd",
    kind="trained",
    claim_id=TRAINED_CLAIM,
    note="smallest trained d reaching train accuracy 1 on all N R^k k-hop queries in one pass "
    "(section 5.5 model, one learned token per chain; the bound's fact-independent-decoder "
    "hypothesis does not hold for it)",
)


def khop_point(point, sizes: dict, params: list, dims: list) -> dict:
    """One point of a one-pass family: information khop_table_bits and the table's entropy bracket."""
    n, r, k = int(sizes["N"]), int(sizes["R"]), int(sizes["k"])
    pt = point(sizes, mh_theory.khop_table_bits(n, r, k), params, dims=dims)
    return {**pt, "table_bits": list(mh_theory.khop_table_entropy(n, r, k))}


def construction_points(rec: dict, point, need) -> list[dict]:
    """Points of the construction's own record: per k, d = R^k d0* per draw."""
    cid, p = rec["id"], rec["params"]
    n, r = int(p["n_subjects"]), int(p["n_relations"])
    out = []
    for row in need(rec["details"], "rows", cid):
        k, d0s = int(row["k"]), [int(x) for x in row["d0_star"]]
        out.append(
            khop_point(
                point,
                {"N": n, "R": r, "k": k},
                [nocot_params(n, r, k, x) for x in d0s],
                [r**k * x for x in d0s],
            )
        )
    return out


def trained_points(rec: dict, point, need) -> list[dict]:
    """Points of a geometric.multihop.trained_depth record: per k, the trained d* of every seed."""

    cid, p = rec["id"], rec["params"]
    # a control's setting (untrained weights, or 1-hop facts at every k) is no family point; a
    # record written before these parameters existed is the claim's own (trained, k-hop)
    setting = {"weights": p.get("weights", "trained"), "facts": p.get("facts", "k-hop")}
    if setting != {"weights": "trained", "facts": "k-hop"}:
        raise ValueError(f"{cid}: a record of a control ({setting}) is no family point")
    n, r, m = int(p["n_subjects"]), int(p["n_relations"]), int(p["mlp_width"])
    rows = need(rec["details"], "rows", cid)
    out = []
    for j, k in enumerate(int(x) for x in p["hops"]):
        ds = [row["per_k"][j]["d_star"] for row in rows]
        if any(d is None for d in ds):
            raise ValueError(
                f"{cid}: k={k} has a seed that reaches train accuracy 1 at no d <= d_max (d* = {ds}); "
                "the atlas lists only storing sizes"
            )
        ds = [int(d) for d in ds]
        out.append(
            khop_point(
                point,
                {"N": n, "R": r, "k": k, "mlp_width": m},
                [geometric_trained_params(n, r**k, d, m) for d in ds],
                ds,
            )
        )
    return out
