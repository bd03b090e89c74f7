"""Claims of Mixture of Chapters (2603.21096), docs/chapters.md: FLOP and parameter accounting.
The router arithmetic is in :mod:`verify.chapters.router_arith`, the toy training claims in
:mod:`verify.chapters.toy`, the bench row in :mod:`verify.bench.chapters`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

from constructions.search import smallest_size
from theory.papers import paper
from verify.claims import claim
from verify.criteria import Agreement, Judgement, all_of

SOURCE = paper("chapters")
PAPER = {"backbone": 356_363_685_888, "iso_flop": 495_763_542_016, "moc": 459_171_802_488}
PAPER_PARAMS = {
    "backbone": 147_874_560,
    "iso_flop_dense": 202_937_088,
    "bank": 201_375_744,
    "memory_layers": 22_042_628,
    "moc": 371_292_932,
    "standard_layer": 6_882_816,
    "memory_layer_extra": 5_510_657,
    "embedding": 37_748_736,
}


def _paper_cfg(params):
    from theory.chapters.flops import PAPER_CONFIG

    return dict(PAPER_CONFIG, **params.get("overrides", {}))


#: The category subtotals printed in the paper's appendix FLOP table (App. A.2) [paper].
PAPER_SUBTOTALS = {
    "standard_layer": {"self-attention": 6_530_531_328, "mlp": 10_883_432_448},
    "memory_layer_extra": {
        "router": 7_124_491,
        "router losses": 331_859,
        "memory preprocessing": 15_991_040,
        "memory attention": 25_674_645_504,
    },
}
INDEPENDENCE_FLOPS = (
    "one side sums this toolkit's per-item sympy formulas (the appendix table's rules) at the "
    "paper's configuration; the other is the numbers printed in the paper's "
    "appendix FLOP table, computed by the authors: an error in any formula or "
    "configuration value changes one side only"
)


def agreement(
    quantity: str, tol: float, pairs: Mapping[str, tuple[float, float | None]], source: str = "convention"
) -> Judgement:
    """An identity judged by :class:`verify.criteria.Agreement` on the largest |computed - reference|
    over named ``pairs`` (name -> (reference, computed)); a computed value that is missing (None)
    counts as an infinite difference, so it fails. The judgement's predicted and measured also
    list each pair's reference and computed value under its name.

    >>> j = agreement("max |toolkit - paper| (FLOPs)", 0, {"moc": (10, 10), "iso": (4, 4)})
    >>> j.verdict, j.measured["moc"], j.resolution["text"]
    ('pass', 10, 'max |toolkit - paper| (FLOPs) = 0 <= 0 (exact): measured 0')
    >>> agreement("max |a - b|", 1e-6, {"x": (1.0, None)}).verdict
    'fail'
    """
    if not pairs:
        raise ValueError(f"{quantity}: an agreement needs at least one pair of values")
    diffs = [math.inf if got is None else abs(float(got - want)) for want, got in pairs.values()]
    nan = [n for n, d in zip(pairs, diffs) if math.isnan(d)]
    if nan:
        raise ValueError(f"{quantity}: the difference is NaN for {nan}")
    judgement = Agreement(quantity, tol, source).judge(float(max(diffs)))
    return dataclasses.replace(
        judgement,
        predicted={**judgement.predicted, **{n: want for n, (want, _) in pairs.items()}},
        measured={**judgement.measured, **{n: got for n, (_, got) in pairs.items()}},
    )


def _subtotal_rows(table, section):
    want = PAPER_SUBTOTALS[section]
    got = table["subtotals"][section]
    return [
        {"category": c, "paper": v, "toolkit": got.get(c), "equal": got.get(c) == v} for c, v in want.items()
    ]


@claim(
    "chapters.flops.standard_layer",
    source=f"{SOURCE}, App. A.2 FLOP table",
    provenance="paper",
    statement="the standard layer's self-attention (6,530,531,328) and MLP (10,883,432,448) "
    "category subtotals equal the appendix's, and 16*layer + head and 24*layer + head "
    "equal the backbone (356,363,685,888) and iso-FLOP (495,763,542,016) forward "
    "totals exactly",
    quick={"config": "paper"},
    kind="identity",
    independence=INDEPENDENCE_FLOPS,
)
def check_flops_standard(params, ctx):
    from theory.chapters.flops_table import breakdown

    table = breakdown(_paper_cfg(params))
    std, head = table["standard_layer_total"], table["head_total"]
    measured = {"backbone": 16 * std + head, "iso_flop": 24 * std + head}
    rows = _subtotal_rows(table, "standard_layer")
    pairs = {
        **{k: (PAPER[k], v) for k, v in measured.items()},
        **{r["category"]: (r["paper"], r["toolkit"]) for r in rows},
    }
    return agreement("max |toolkit - paper| over the subtotals and totals (FLOPs)", 0, pairs), {
        "subtotals": rows,
        "standard_layer": table["standard_layer"],
        "standard_layer_total": std,
        "head": table["head"],
        "head_total": head,
    }


@claim(
    "chapters.flops.memory_layer",
    source=f"{SOURCE}, App. A.2 FLOP table",
    provenance="paper",
    statement="the memory layer's router (7,124,491), router-loss (331,859), memory-"
    "preprocessing (15,991,040) and memory-attention (25,674,645,504) subtotals equal "
    "the appendix's, and 12*standard + 4*(standard + extra) + head equals the MoC "
    "total 459,171,802,488 exactly",
    quick={"config": "paper"},
    kind="identity",
    independence=INDEPENDENCE_FLOPS,
)
def check_flops_memory(params, ctx):
    from theory.chapters.flops_table import breakdown

    table = breakdown(_paper_cfg(params))
    std, extra, head = (table["standard_layer_total"], table["memory_layer_extra_total"], table["head_total"])
    moc = 12 * std + 4 * (std + extra) + head
    rows = _subtotal_rows(table, "memory_layer_extra")
    pairs = {"moc": (PAPER["moc"], moc), **{r["category"]: (r["paper"], r["toolkit"]) for r in rows}}
    # Criterion changed (the old one compared a list's sum with the same list summed through
    # sympy, a computation compared with itself): the record keeps its stored verdict
    # (details["previous_criterion"], verify.previous)
    return agreement("max |toolkit - paper| over the subtotals and the MoC total (FLOPs)", 0, pairs), {
        "subtotals": rows,
        "items": table["memory_layer_extra"],
        "memory_layer_total": std + extra,
    }


@claim(
    "chapters.flops.model_totals",
    source=f"{SOURCE}, App. A.2",
    provenance="paper",
    bounds=("chapters.moc_forward_flops",),
    statement="backbone, iso-FLOP and MoC forward totals equal the paper's exactly; "
    "MoC/iso in [0.9261, 0.9263] (0.9262 +- 1e-4); MoC/backbone in [1.288, 1.289] (1.2885 +- 5e-4)",
    quick={"config": "paper"},
    kind="identity",
    independence=INDEPENDENCE_FLOPS,
)
def check_flops_totals(params, ctx):
    from theory.chapters.flops_table import breakdown

    table = breakdown(_paper_cfg(params))
    totals = {k: table["totals"][k] for k in PAPER}
    r_iso, r_bb = table["ratios"]["moc_over_iso_flop"], table["ratios"]["moc_over_backbone"]
    judgement = all_of(
        totals=agreement(
            "max |toolkit - paper| over the three totals (FLOPs)",
            0,
            {k: (PAPER[k], totals[k]) for k in PAPER},
        ),
        moc_over_iso=agreement("|MoC/iso - 0.9262|", 1e-4, {"moc_over_iso": (0.9262, r_iso)}),
        moc_over_backbone=agreement("|MoC/backbone - 1.2885|", 5e-4, {"moc_over_backbone": (1.2885, r_bb)}),
    )
    groups = [
        {"section": s, "group": g, "flops": v}
        for s, sub in table["subtotals"].items()
        for g, v in sub.items()
    ]
    # the figure reads the totals and ratios at the top of the record's measurement
    judgement = dataclasses.replace(
        judgement,
        measured={**judgement.measured, **totals, "moc_over_iso": r_iso, "moc_over_backbone": r_bb},
    )
    return judgement, {"groups": groups, "n_layers": 16, "n_mem": 4, "iso_flop_layers": 24}


@claim(
    "chapters.flops.iso_flop_depths",
    source=f"{SOURCE}, App. A.2; this project's iso-FLOP rule",
    provenance="derived",
    statement="the paper's 24-layer 'iso-FLOP' dense model costs 1.0797 (+- 5e-5) times MoC's "
    "forward FLOPs by the paper's own printed totals, and the same ratio (to 1e-12) by this "
    "toolkit's formulas; the toolkit's rule (smallest dense depth whose FLOPs reach "
    "MoC's) gives 22 layers (FLOPs(22) >= MoC > FLOPs(21)); the toy comparison uses "
    "the rule (21 layers at the toy's L = 3), not the paper's 24-layer choice",
    quick={"config": "paper"},
    kind="identity",
    independence="the ratio 495,763,542,016 / 459,171,802,488 uses only the paper's printed "
    "totals; the other side evaluates this toolkit's per-item formulas",
)
def check_iso_depths(params, ctx):
    from constructions.chapters.train import toy_configs
    from theory.chapters.flops import flops_model, model_totals

    cfg = _paper_cfg(params)
    totals = model_totals(cfg)
    paper_ratio = PAPER["iso_flop"] / PAPER["moc"]
    ours = totals["iso_flop"] / totals["moc"]
    rule = totals["iso_flop_rule_layers"]
    bracket = flops_model(cfg, rule, 0) >= totals["moc"] > flops_model(cfg, rule - 1, 0)
    # FLOPs grow with depth, so the bracket FLOPs(rule) >= MoC > FLOPs(rule - 1) holds exactly when
    # the first depth reaching MoC's FLOPs, found by a scan (constructions.search), is the rule's
    scanned = smallest_size(
        range(1, 4 * rule + 4), lambda n: flops_model(cfg, n, 0) >= totals["moc"], strategy="scan"
    ).size
    toy_moc, toy_dense = toy_configs()
    judgement = all_of(
        ratio=agreement(
            "|paper ratio - toolkit ratio| (iso/MoC)", 1e-12, {"toolkit_iso_over_moc": (paper_ratio, ours)}
        ),
        printed=agreement("|paper ratio - 1.0797|", 5e-5, {"paper_iso_over_moc": (1.0797, paper_ratio)}),
        rule_layers=agreement("|rule depth - 22|", 0, {"rule_layers": (22, rule)}),
        rule_bracket=agreement(
            "|rule depth - smallest depth whose FLOPs reach MoC's, by scanning depths|",
            0,
            {"scanned_layers": (rule, scanned)},
        ),
    )
    return judgement, {
        "paper_layers": 24,
        "rule_bracketed": bracket,
        "rule_flops": totals["iso_flop_rule"],
        "rule_over_moc": totals["iso_flop_rule"] / totals["moc"],
        "rule_minus_one_flops": flops_model(cfg, rule - 1, 0),
        "toy_uses": "rule",
        "toy_dense_layers": toy_dense["n_layers"],
    }


@claim(
    "chapters.flops.routed_cost_scales",
    source=f"{SOURCE}; this project's accounting",
    provenance="derived",
    statement="the matrix-product FLOPs of the torch memory attention (W_Q, W_K, W_V, W_O and "
    "the two attention products), counted by torch.utils.flop_counter at the paper's "
    "d, h and L for N_sel = 4160 and 2 N_sel, equal the formula's matrix-product items "
    "exactly at both sizes, so their slope in N_sel is 4d^2 + 4Ld (the formula adds the "
    "softmax's 7hL, which torch does not count)",
    quick={"config": "paper"},
    kind="identity",
    needs=("torch",),
    independence="torch's FlopCounterMode counts the operations the torch module actually "
    "dispatches (on the meta device); the other side is the appendix's "
    "per-item sympy formulas; they share no code",
)
def check_routed_affine(params, ctx):
    import sympy

    from theory.chapters.flops import L, N_sel, d, flops_memory_attention, h, memory_layer_items

    cfg = _paper_cfg(params)
    matmul_items = [
        e for g, name, e in memory_layer_items() if g == "memory attention" and "softmax" not in name
    ]
    formula = sympy.Add(*matmul_items)
    base = (cfg["n_shared"] + cfg["top_k"]) * (cfg["bank_tokens"] // cfg["n_chapters"])
    rows = []
    for n_sel in (base, 2 * base):
        counted = _torch_memory_flops(cfg, n_sel)
        want = int(formula.subs({d: cfg["d_model"], L: cfg["seq_len"], N_sel: n_sel}))
        rows.append({"n_sel": n_sel, "torch": counted, "formula": want})
    slope = (rows[1]["torch"] - rows[0]["torch"]) // base
    full = flops_memory_attention()
    affine = sympy.simplify(full - (full.subs(N_sel, 0) + N_sel * (4 * d**2 + 4 * L * d + 7 * h * L))) == 0
    pairs = {f"N_sel = {r['n_sel']}": (r["formula"], r["torch"]) for r in rows}
    return agreement("max |torch count - formula| (matrix-product FLOPs)", 0, pairs), {
        "rows": rows,
        "torch_slope_per_token": slope,
        "formula_slope_without_softmax": 4 * cfg["d_model"] ** 2 + 4 * cfg["seq_len"] * cfg["d_model"],
        "formula_affine_in_N_sel": affine,
    }


def _torch_memory_flops(cfg, n_sel):
    """FLOPs torch dispatches for one MemoryAttention forward (B = 1, L queries, n_sel memory
    tokens) on the meta device, counted by FlopCounterMode."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from constructions.chapters.layer import MemoryAttention

    att = MemoryAttention(cfg["d_model"], cfg["n_heads"], device="meta")
    hidden = torch.empty(1, cfg["seq_len"], cfg["d_model"], device="meta")
    memory = torch.empty(1, n_sel, cfg["d_model"], device="meta")
    with FlopCounterMode(display=False) as counter:
        att(hidden, att.wk(memory), att.wv(memory))
    return int(counter.get_total_flops())


@claim(
    "chapters.params.counts",
    source=f"{SOURCE}, Table 5 (re-derived)",
    provenance="paper",
    statement="the torch model instantiated on the meta device at the paper's configuration has "
    "exactly the parameter counts of Table 5 (backbone 147,874,560; 24-layer "
    "dense 202,937,088; bank 201,375,744; memory layers 22,042,628; "
    "MoC 371,292,932; and the standard layer 6,882,816, the memory layer's extra 5,510,657, the "
    "embedding 37,748,736), as does the analytic count",
    quick={"config": "paper"},
    needs=("torch",),
    kind="identity",
    independence="the torch modules' named parameters (instantiated on the meta device), "
    "the closed-form count of theory.chapters.flops.parameter_counts and the "
    "paper's printed counts: three computations sharing no code",
)
def check_params(params, ctx):
    from constructions.chapters.model import MoCModel
    from theory.chapters.flops import parameter_counts

    cfg = _paper_cfg(params)
    analytic = parameter_counts(cfg)

    def count(model, pred=lambda n: True):
        return sum(p.numel() for n, p in model.named_parameters() if pred(n))

    moc = MoCModel(cfg, device="meta")
    backbone = MoCModel(dict(cfg, mem_layers=[]), device="meta")
    dense = MoCModel(dict(cfg, mem_layers=[], n_layers=24), device="meta")
    measured = {
        "backbone": count(backbone),
        "iso_flop_dense": count(dense),
        "bank": count(moc, lambda n: n == "bank"),
        "memory_layers": count(moc, lambda n: ".memory." in n),
        "moc": count(moc),
        "standard_layer": count(backbone.blocks[0]),
        "memory_layer_extra": count(moc.blocks[2].memory),
        "embedding": count(backbone, lambda n: n.startswith("embedding")),
    }
    if set(measured) != set(PAPER_PARAMS):
        raise ValueError(f"counted {sorted(measured)}, but Table 5 prints {sorted(PAPER_PARAMS)}")
    judgement = all_of(
        torch=agreement(
            "max |torch count - Table 5|", 0, {k: (v, measured[k]) for k, v in PAPER_PARAMS.items()}
        ),
        analytic=agreement(
            "max |analytic count - Table 5|", 0, {k: (v, analytic.get(k)) for k, v in PAPER_PARAMS.items()}
        ),
    )
    return judgement, {"analytic": analytic}
