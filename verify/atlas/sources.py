"""Capacity atlas (docs/atlas.md): where each family's points come from in the STORED claim records.

A *family* is one construction or one trained model of one area. Its points are read from the
``details`` of an existing claim's stored record (no new measurement): at each size, the
information content of the stored facts (from ``theory``, with the bound's tag), the smallest
storing size per draw (parameters, and dimension where that is the area's resource) and the
number of draws. :func:`family_points` turns one record into those points; a record that lacks
the fields raises ``ValueError`` naming the claim.

Parameter counts follow the areas' own conventions:

- fact_mlp construction: P_std = 3 d H m_c and P_unique = H d + H d m_c + m_c d
  (``theory.fact_mlp.bounds.construction_params``/``_unique``) at each draw's smallest storing m_c.
- fact_mlp gradient descent: the gated MLP without biases, 3 d m (the record's params_no_bias).
- geometric block construction, one relation block (R = 1, d = d0): the construction's counts
  (selector 2d^2 + 2d + 2 d d0, subject N d, relation R d, unembedding N d0), which
  ``constructions.geometric.single_hop`` reads from the arrays; a unit test checks the formula against it.
- geometric trained model (``constructions.geometric.train``): subject and unembedding N d each, relation R d,
  MLP 2 m d + m (``constructions.geometric.train.init_params``).
- geometric k-hop construction without CoT: the record's own counts (selector, gate, subject
  embeddings, unembedding) at the built dimension R^k d0 (built, not searched). Its information
  column is the k-hop theorem summed over the N subjects, N R^k log2(N + 1 - I_k)
  (``theory.geometric.multihop.khop_table_bits``); the searched one-pass families
  ``geometric_multihop_construction`` and ``geometric_multihop_gd`` use the same column and the
  k-hop bound in dimension (:mod:`verify.atlas.multihop_setup`).
- icrecall linear memory: a d x d matrix, d^2 parameters; the stored facts are N99 pairs with
  V = N99 values, F log2 n_V bits with F = n_V = N99.
- retrieval one-step value memory: W_v, V x d (the embeddings are random and fixed); a bijection
  of V labels, log2(V!) bits; measured by ``atlas.retrieval_value_memory.within_constant``
  (:mod:`verify.atlas.retrieval`), the one family no earlier claim measures.
- hopfield (ungated) and hopfield_gated: the smallest dimension d* at which the modern Hopfield
  network stores all N memories (``hopfield.storing_dim.r4_sufficient``, N = 16..1024, 3 draws);
  P = d N, the memory matrix (the gates are the context's input, not parameters). No honest
  information bound exists (the task is auto-associative: the identity map solves it with no
  parameters), so I = N log2 N is a stated convention [derived], NOT a lower bound; their
  within_constant claims check that d*/log2 N stays within a constant. Optional records.
- hopfield_trained (optional): the same network with X TRAINED on a hetero-associative task (N cues
  -> N memories); P = d* N, I = log2(N!), an honest counting bound (:mod:`verify.hopfield.trained_dim`).
- chapters_bank and chapters_toy (optional): the routed memory layer of Mixture of Chapters trained
  alone, and the MoC toy transformer; P = all trained parameters at each draw's smallest storing C,
  I = F log2 n_V (:mod:`verify.atlas.chapters_bank`, :mod:`verify.atlas.chapters_toy`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from theory.fact_mlp import bounds as fm_theory
from theory.geometric import single_hop as geo_theory
from verify.atlas.chapters_bank_setup import FAMILY_FIELDS as CHAPTERS_BANK
from verify.atlas.chapters_bank_setup import points_of_record as chapters_points
from verify.atlas.chapters_toy_setup import FAMILY_FIELDS as CHAPTERS_TOY
from verify.atlas.chapters_toy_setup import points_of_record as toy_points
from verify.atlas.multihop_setup import CONSTRUCTION_FIELDS as MULTIHOP_CONSTRUCTION
from verify.atlas.multihop_setup import TRAINED_FIELDS as MULTIHOP_TRAINED
from verify.atlas.multihop_setup import construction_points as multihop_construction_points
from verify.atlas.multihop_setup import geometric_trained_params
from verify.atlas.multihop_setup import khop_point as multihop_point
from verify.atlas.multihop_setup import trained_points as multihop_trained_points
from verify.hopfield.storing_dim_setup import points_of_record as hopfield_points
from verify.hopfield.trained_dim_setup import FAMILY_FIELDS as HOPFIELD_TRAINED
from verify.hopfield.trained_dim_setup import points_of_record as hopfield_trained_points


@dataclass(frozen=True)
class Family:
    """One atlas family: a construction or a trained model of one area, read from one claim."""

    name: str  # "fact_mlp_construction": also the topic of atlas.<name>.within_constant
    area: str
    kind: str  # "construction" | "trained"
    claim_id: str  # the stored claim whose details hold the points
    resource: str  # "parameters" | "dimension": what the area's bound is stated in
    bound: str  # the theory function giving the information content, with its tag
    bound_tag: str
    searched: bool  # True: smallest storing size searched; False: size as built
    note: str
    extract: Callable[[dict], list[dict]]
    # True: a missing source record is reported in the atlas's "missing" list and the family left
    # out (never invented); False: a missing record is a ValueError naming the claim
    optional: bool = False
    # resource "dimension": the area's bound in dimension at a point's sizes (None for parameters)
    dim_bound: Callable[[dict], float] | None = None


def _need(details: dict, key: str, claim_id: str):
    if key not in details:
        raise ValueError(
            f"stored record of {claim_id} has no details[{key!r}]: the atlas cannot "
            f"read family points from it (re-run `python -m verify run {claim_id}`)"
        )
    return details[key]


def _point(
    sizes: dict, bits, params: list, dims: list | None = None, params_unique: list | None = None
) -> dict:
    """One size of a family: per-draw lists (``bits`` may be one number shared by every draw)."""
    if not params or any(p is None or not math.isfinite(float(p)) or p <= 0 for p in params):
        raise ValueError(f"family point {sizes} has a missing or non-positive parameter count {params}")
    bits = [float(bits)] * len(params) if not isinstance(bits, (list, tuple)) else [float(b) for b in bits]
    if len(bits) != len(params) or not all(math.isfinite(b) and b > 0 for b in bits):
        raise ValueError(f"family point {sizes}: information bits {bits} do not match the draws {params}")
    return {
        "sizes": sizes,
        "info_bits": bits,
        "params": [float(p) for p in params],
        "params_unique": None if params_unique is None else [float(p) for p in params_unique],
        "dims": None if dims is None else [float(x) for x in dims],
    }


def _fact_mlp_construction(rec: dict) -> list[dict]:
    cid, d, p = rec["id"], rec["details"], rec["params"]
    out = []
    for row in _need(d, "rows", cid):
        f, dm, nv = int(row["n_facts"]), int(p["d"]), int(p["n_values"])
        mcs = [int(m) for m in row["mc_per_draw"]]
        out.append(
            _point(
                {"F": f, "n_V": nv, "d": dm},
                fm_theory.info_bits(f, nv),
                [fm_theory.construction_params(f, dm, m) for m in mcs],
                dims=mcs,
                params_unique=[fm_theory.construction_params_unique(f, dm, m) for m in mcs],
            )
        )
    return out


def _fact_mlp_gd(rec: dict) -> list[dict]:
    cid, d, p = rec["id"], rec["details"], rec["params"]
    out = []
    for f, m, params in zip(
        _need(d, "n_facts", cid), _need(d, "hidden", cid), _need(d, "params_no_bias", cid)
    ):
        out.append(
            _point(
                {"F": int(f), "n_V": int(f), "d": int(p["d"])},
                fm_theory.info_bits(int(f), int(f)),
                [params],
                dims=[m],
            )
        )
    return out


def geometric_block_params(n_subjects: int, block_dim: int, n_relations: int = 1) -> int:
    """Parameter count of the block construction, d = R d0 (see module doc)."""
    d = n_relations * block_dim
    return 2 * d * d + 2 * d + 2 * d * block_dim + n_subjects * d + n_relations * d + n_subjects * block_dim


def _geometric_construction(rec: dict) -> list[dict]:
    cid = rec["id"]
    out = []
    for row in _need(rec["details"], "rows", cid):
        n, d0s = int(row["N"]), [int(x) for x in row["d0_star"]]
        out.append(
            _point(
                {"N": n, "R": 1},
                geo_theory.info_bits(n, 1),
                [geometric_block_params(n, x) for x in d0s],
                dims=d0s,
            )
        )
    return out


def _geometric_gd(rec: dict) -> list[dict]:
    cid, p = rec["id"], rec["params"]
    r, m = int(p["n_relations"]), int(p["mlp_width"])
    out = []
    for row in _need(rec["details"], "rows", cid):
        n, ds = int(row["N"]), [int(x) for x in row["trained_d_star"]]
        out.append(
            _point(
                {"N": n, "R": r, "mlp_width": m},
                geo_theory.info_bits(n, r),
                [geometric_trained_params(n, r, x, m) for x in ds],
                dims=ds,
            )
        )
    return out


def _geometric_multihop(rec: dict) -> list[dict]:
    cid, p = rec["id"], rec["params"]
    n, r = int(p["n_subjects"]), int(p["n_relations"])
    out = []
    for row in _need(rec["details"], "rows", cid):
        if float(row["accuracy"]) != 1.0:
            raise ValueError(
                f"{cid}: k={row['k']} does not store (accuracy {row['accuracy']}); "
                "the atlas lists only storing sizes"
            )
        total = sum(int(row[k]) for k in ("selector", "gate_embeddings", "subject_embeddings", "unembedding"))
        k = int(row["k"])
        out.append(multihop_point(_point, {"N": n, "R": r, "k": k}, [total], [row["dim"]]))
    return out


def _icrecall_linear(rec: dict) -> list[dict]:
    cid, d = rec["id"], rec["details"]
    dims = [int(x) for x in _need(d, "dims", cid)]
    per_seed = [[int(v) for v in s["n99"]] for s in _need(d, "per_seed", cid)]
    out = []
    for i, dim in enumerate(dims):
        stored = [s[i] for s in per_seed]  # the size d is fixed; the facts stored vary over draws
        out.append(
            _point(
                {"d": dim, "N99": stored, "V": "N99"},
                [fm_theory.info_bits(n, n) for n in stored],
                [dim * dim] * len(stored),
                dims=[dim] * len(stored),
            )
        )
    return out


def _retrieval_value_memory(rec: dict) -> list[dict]:
    cid = rec["id"]
    out = []
    for row in _need(rec["details"], "rows", cid):
        v, ds = int(row["V"]), [int(x) for x in row["d_star"]]
        out.append(
            _point(
                {"V": v, "L": int(rec["details"].get("seq_len", 0))},
                fm_theory.info_bits_tied(v),
                [v * x for x in ds],
                dims=ds,
            )
        )
    return out


def _hopfield(which: str) -> Callable[[dict], list[dict]]:
    """Points of the hopfield families from hopfield.storing_dim.r4_sufficient (module doc)."""
    return lambda rec: hopfield_points(rec, _point, _need, which)


HOPFIELD_BOUND = (
    "N log2 N (theory.fact_mlp.bounds.info_bits(N, N)): the index of the retrieved memory among N, "
    "a convention, NOT an information lower bound (see verify.atlas.sources)"
)

FAMILIES: tuple[Family, ...] = (
    Family(
        "fact_mlp_construction",
        "fact_mlp",
        "construction",
        "fact_mlp.capacity.linear_cost",
        "parameters",
        "theory.fact_mlp.bounds.info_bits = F log2 n_V",
        "derived",
        True,
        "smallest storing m_c per decoder draw (2^(1/4) grid), H = ceil(F/d); P_std and P_unique",
        _fact_mlp_construction,
    ),
    Family(
        "fact_mlp_gd",
        "fact_mlp",
        "trained",
        "fact_mlp.gd.gd_linear_capacity",
        "parameters",
        "theory.fact_mlp.bounds.info_bits = F log2 n_V (n_V = F)",
        "derived",
        True,
        "smallest storing hidden width m of the GD-trained gated MLP, 3 d m parameters (no biases)",
        _fact_mlp_gd,
    ),
    Family(
        "geometric_construction",
        "geometric",
        "construction",
        "geometric.single_hop.log_scaling",
        "dimension",
        "theory.geometric.single_hop.info_bits = R log2 N! (R = 1 block)",
        "derived",
        True,
        "smallest block dimension d0 whose spherical codes reach margin 0.25, one relation block",
        _geometric_construction,
        dim_bound=lambda s: geo_theory.embed_dim_lower_bound(s["N"], s["R"], 32),
    ),
    Family(
        "geometric_gd",
        "geometric",
        "trained",
        "geometric.gd.threshold_scaling",
        "dimension",
        "theory.geometric.single_hop.info_bits = R log2 N!",
        "derived",
        True,
        "smallest trained d reaching train accuracy 1 (section 5.5 model, width 32)",
        _geometric_gd,
        dim_bound=lambda s: geo_theory.embed_dim_lower_bound(s["N"], s["R"], 32),
    ),
    Family(
        "geometric_multihop",
        "geometric",
        "construction",
        "geometric.multihop.nocot_blocks",
        "dimension",
        "theory.geometric.multihop.khop_table_bits = N R^k log2(N + 1 - I_k)",
        "derived",
        False,
        "R^k-block k-hop construction without CoT at d0 = ceil(3 ln N): size AS BUILT (not searched), "
        "accuracy 1 measured; the selector grows like d^2",
        _geometric_multihop,
    ),
    Family(**MULTIHOP_CONSTRUCTION, extract=lambda rec: multihop_construction_points(rec, _point, _need)),
    Family(**MULTIHOP_TRAINED, extract=lambda rec: multihop_trained_points(rec, _point, _need)),
    Family(
        "icrecall_linear_memory",
        "icrecall",
        "construction",
        "icrecall.linear_memory.capacity",
        "parameters",
        "theory.fact_mlp.bounds.info_bits = F log2 n_V (F = n_V = N99)",
        "derived",
        True,
        "largest N recalled at accuracy >= 0.99 by the d x d linear memory, per draw (the size d is "
        "fixed, the facts stored vary)",
        _icrecall_linear,
    ),
    Family(
        "retrieval_value_memory",
        "retrieval",
        "trained",
        "atlas.retrieval_value_memory.within_constant",
        "dimension",
        "log2(V!) (theory.fact_mlp.bounds.info_bits_tied; bound F4 theory.retrieval.bounds.param_floor)",
        "derived",
        True,
        "smallest d at which the one-step value memory (N = 1e9, oracle accuracy) stores all V labels; "
        "V x d parameters of W_v (measured by the atlas claim itself)",
        _retrieval_value_memory,
    ),
    Family(
        "hopfield",
        "hopfield",
        "construction",
        "hopfield.storing_dim.r4_sufficient",
        "parameters",
        HOPFIELD_BOUND,
        "derived",
        True,
        "smallest d at which the ungated modern Hopfield network (R4 setting: sphere radius 3 sqrt(d-1), "
        "beta = 1) retrieves all N memories in one update to within 1/(beta N M); P = d N (the memory "
        "matrix X)",
        _hopfield("ungated"),
        optional=True,
    ),
    Family(
        "hopfield_gated",
        "hopfield",
        "construction",
        "hopfield.storing_dim.r4_sufficient",
        "parameters",
        HOPFIELD_BOUND,
        "derived",
        True,
        "as the hopfield family with context gates (kappa = 4, N_eff = 16 open; the gates are the "
        "context's input, not parameters); P = d N",
        _hopfield("gated"),
        optional=True,
    ),
    Family(**HOPFIELD_TRAINED, extract=lambda rec: hopfield_trained_points(rec, _point, _need)),
    Family(**CHAPTERS_BANK, extract=lambda rec: chapters_points(rec, _point, _need)),
    Family(**CHAPTERS_TOY, extract=lambda rec: toy_points(rec, _point, _need)),
)

#: Areas with no family in the atlas, and why (reported with the table); none at present.
NOT_COVERED: dict[str, str] = {}


def family(name: str) -> Family:
    for f in FAMILIES:
        if f.name == name:
            return f
    raise ValueError(f"unknown atlas family {name!r}; families: {[f.name for f in FAMILIES]}")


def family_points(fam: Family, record: dict) -> list[dict]:
    """The family's points read from its claim's stored record (see module doc)."""
    if record.get("status") == "error":
        raise ValueError(f"stored record of {fam.claim_id} is an error: {record.get('error')}")
    if "details" not in record:
        raise ValueError(f"stored record of {fam.claim_id} has no details")
    return fam.extract(record)
