"""FLOP and parameter accounting of Mixture of Chapters (2603.21096), App. A.2 and Table 5.

Every count is a sympy expression in the symbols of :data:`SYMBOLS`; :func:`evaluate` substitutes
a configuration and returns an exact Python ``int`` (no floating point anywhere). The counting
rules are those of the paper's appendix FLOP table [paper] with the router-loss operation counts of
the authors' code [reference] (docs/chapters.md#statements-and-proof-sketches):

* linear layer ``2 * n_tokens * d_in * d_out``; attention matmuls ``4 * L_q * L_k * d``;
  softmax + mask + scale ``n_heads * L_q * L_k * 7``; RMSNorm ``n * (4 d + 4)``;
  RoPE ``3 L (d + d_kv)``; SwiGLU activation ``5 L d_ff``; residual ``L d``;
* forward pass only, batch 1 (training is 3x forward); embedding lookup, gather, optimiser are
  not counted.

``python -m theory flops --config paper|FILE [--json]`` prints the itemised breakdown (see
:mod:`theory.chapters.flops_table`). This module never imports torch.
"""

from __future__ import annotations

import math
from typing import Mapping

import sympy

from theory.validate import require_int, require_real

# -- symbols -----------------------------------------------------------------------------------
d, L, h, h_kv, d_h, d_ff, V = sympy.symbols("d L h h_kv d_h d_ff V", positive=True, integer=True)
N_m, C, C_sh, k, S = sympy.symbols("N_m C C_sh k S", positive=True, integer=True)
N_sel = sympy.Symbol("N_sel", positive=True, integer=True)
SYMBOLS = {
    "d": d,
    "L": L,
    "h": h,
    "h_kv": h_kv,
    "d_h": d_h,
    "d_ff": d_ff,
    "V": V,
    "N_m": N_m,
    "C": C,
    "C_sh": C_sh,
    "k": k,
    "S": S,
    "N_sel": N_sel,
}

#: The paper's configuration (Table 5 [paper]; exact values from the authors' config [reference]).
PAPER_CONFIG: dict = {
    "d_model": 768,
    "seq_len": 1024,
    "n_layers": 16,
    "n_heads": 12,
    "n_kv_heads": 4,
    "head_dim": 64,
    "d_ff": 2304,
    "vocab": 49152,
    "bank_tokens": 262208,
    "n_chapters": 4097,
    "n_shared": 1,
    "top_k": 64,
    "routed_scale": 2.5,
    "mem_layers": [2, 6, 10, 14],
    "router_batch": 1,
    "iso_flop_layers": 24,
}

#: Toy configuration [derived], docs/chapters.md; vocab = 4 special + 1024 keys + 256 values.
TOY_CONFIG: dict = {
    "d_model": 64,
    "seq_len": 3,
    "n_layers": 2,
    "n_heads": 4,
    "n_kv_heads": 2,
    "head_dim": 16,
    "d_ff": 192,
    "vocab": 4 + 1024 + 256,
    "bank_tokens": 4096,
    "n_chapters": 64,
    "n_shared": 1,
    "top_k": 4,
    "routed_scale": 2.5,
    "mem_layers": [1],
    "router_batch": 1,
}

REQUIRED = (
    "d_model",
    "seq_len",
    "n_layers",
    "n_heads",
    "n_kv_heads",
    "head_dim",
    "d_ff",
    "vocab",
    "bank_tokens",
    "n_chapters",
    "n_shared",
    "top_k",
    "mem_layers",
)


def validate_config(cfg: Mapping) -> dict:
    """Check a MoC configuration; a ValueError names the violated hypothesis [derived].

    Hypotheses: the chapter size T = N_m / C is an integer; 1 <= k <= C - C_sh (top-k chooses
    among the routed chapters only); n_heads * head_dim = d_model (memory and self-attention
    use all query heads, d_attn = d); n_heads divisible by n_kv_heads (GQA); every memory-layer
    index lies in [0, n_layers).
    """
    missing = [key for key in REQUIRED if key not in cfg]
    if missing:
        raise ValueError(f"configuration lacks the keys {missing}")
    out = dict(cfg)
    for key in REQUIRED:
        if key != "mem_layers":
            out[key] = require_int(key, cfg[key], minimum=0 if key == "n_shared" else 1)
    out["routed_scale"] = require_real("routed_scale", cfg.get("routed_scale", 2.5), low=0, low_open=True)
    out["router_batch"] = require_int("router_batch", cfg.get("router_batch", 1), minimum=1)
    if out["bank_tokens"] % out["n_chapters"]:
        raise ValueError(
            f"chapter size T = bank_tokens / n_chapters = {out['bank_tokens']}/{out['n_chapters']} "
            "is not an integer: the number of chapters must divide the bank"
        )
    n_routed = out["n_chapters"] - out["n_shared"]
    if n_routed < 1:
        raise ValueError(
            f"n_shared={out['n_shared']} leaves no routed chapter of n_chapters={out['n_chapters']}"
        )
    if out["top_k"] > n_routed:
        raise ValueError(
            f"top_k={out['top_k']} exceeds the number of routed chapters n_chapters - n_shared = {n_routed}"
        )
    if out["n_heads"] * out["head_dim"] != out["d_model"]:
        raise ValueError(
            f"n_heads*head_dim = {out['n_heads'] * out['head_dim']} must equal d_model = {out['d_model']}"
        )
    if out["n_heads"] % out["n_kv_heads"]:
        raise ValueError(
            f"n_heads={out['n_heads']} is not a multiple of "
            f"n_kv_heads={out['n_kv_heads']} (grouped-query attention)"
        )
    layers = [require_int("mem_layers[i]", i, minimum=0) for i in cfg["mem_layers"]]
    bad = [i for i in layers if i >= out["n_layers"]]
    if bad:
        raise ValueError(
            f"memory-layer indices {bad} lie outside the model's layers 0..{out['n_layers'] - 1}"
        )
    if len(set(layers)) != len(layers):
        raise ValueError(f"memory-layer indices {layers} repeat")
    out["mem_layers"] = sorted(layers)
    return out


def substitutions(cfg: Mapping) -> dict:
    """Symbol -> integer value for a validated configuration."""
    cfg = validate_config(cfg)
    T = cfg["bank_tokens"] // cfg["n_chapters"]
    return {
        d: cfg["d_model"],
        L: cfg["seq_len"],
        h: cfg["n_heads"],
        h_kv: cfg["n_kv_heads"],
        d_h: cfg["head_dim"],
        d_ff: cfg["d_ff"],
        V: cfg["vocab"],
        N_m: cfg["bank_tokens"],
        C: cfg["n_chapters"],
        C_sh: cfg["n_shared"],
        k: cfg["top_k"],
        S: cfg["router_batch"],
        N_sel: (cfg["n_shared"] + cfg["top_k"]) * T,
    }


def evaluate(expr, cfg: Mapping) -> int:
    """Exact integer value of a count ``expr`` at configuration ``cfg``."""
    value = sympy.nsimplify(sympy.sympify(expr).subs(substitutions(cfg)))
    if not value.is_Integer:
        raise ValueError(f"count {expr} is not an integer at this configuration: {value}")
    return int(value)


# -- FLOP items (the appendix FLOP table) ------------------------------------------------------
def _norm(n):
    return n * (4 * d + 4)


def standard_layer_items() -> list[tuple[str, str, object]]:
    """(group, item, count) of one standard layer, forward, B = 1 [paper, App. A.2]."""
    d_kv = h_kv * d_h
    return [
        ("self-attention", "Q projection", 2 * L * d * d),
        ("self-attention", "K projection", 2 * L * d * d_kv),
        ("self-attention", "V projection", 2 * L * d * d_kv),
        ("self-attention", "QK^T and AV matmuls", 4 * L * L * d),
        ("self-attention", "softmax + mask + scale", h * L * L * 7),
        ("self-attention", "O projection", 2 * L * d * d),
        ("rope", "RoPE on Q and K", 3 * L * (d + d_kv)),
        ("norms", "2 RMSNorms", 2 * _norm(L)),
        ("mlp", "SwiGLU gate, up, down linears", 3 * 2 * L * d * d_ff),
        ("mlp", "SwiGLU activation", 5 * L * d_ff),
        ("residuals", "2 residual adds", 2 * L * d),
    ]


def memory_layer_items(dense_bank: bool = False) -> list[tuple[str, str, object]]:
    """(group, item, count) of the EXTRA cost of a memory layer over a standard layer
    [paper, App. A.2; router-loss counts: reference]. ``dense_bank`` replaces N_sel by N_m in
    the memory-attention terms (attending to the whole bank) [derived]."""
    n = N_m if dense_bank else N_sel
    return [
        ("router", "pool over positions", L * d),
        ("router", "router linear", 2 * d * C),
        ("router", "softmax", 5 * C),
        ("router", "top-k", C * sympy.ceiling(sympy.log(k, 2))),
        ("router losses", "f (selection frequency)", S * C * (k - 1) + C * (S - 1) + C),
        ("router losses", "P (mean probability)", C * (S - 1) + C),
        ("router losses", "load balance C*sum f*P", C + (C - 1) + 1),
        ("router losses", "p squared", S * C + C * (S - 1) + C),
        ("router losses", "mse", 2 * C + (C - 1) + 1),
        ("router losses", "z logsumexp", 5 * S * C),
        ("router losses", "z reduction", S + (S - 1) + 1),
        ("router losses", "entropy", 4 * S * C),
        ("memory preprocessing", "chapter weighting", N_sel * d),
        ("memory preprocessing", "RMSNorm of selected tokens", _norm(N_sel)),
        ("memory attention", "Q projection", 2 * L * d * d),
        ("memory attention", "K projection", 2 * n * d * d),
        ("memory attention", "V projection", 2 * n * d * d),
        ("memory attention", "QK^T and AV matmuls", 4 * L * n * d),
        ("memory attention", "softmax + scale", h * L * n * 7),
        ("memory attention", "O projection", 2 * L * d * d),
        ("memory norm", "pre-memory RMSNorm", _norm(L)),
        ("memory residual", "residual add", L * d),
    ]


def head_items() -> list[tuple[str, str, object]]:
    """(group, item, count) of the model head [paper, App. A.2]."""
    return [
        ("head", "final RMSNorm", _norm(L)),
        ("head", "LM head", 2 * L * d * V),
        ("head", "cross-entropy", 5 * (L - 1) * V),
    ]


def _total(items):
    return sympy.Add(*[expr for _, _, expr in items])


def flops_standard_layer(cfg: Mapping | None = None):
    """Forward FLOPs of one standard layer [paper]: symbolic, or an exact int given ``cfg``."""
    expr = _total(standard_layer_items())
    return expr if cfg is None else evaluate(expr, cfg)


def flops_memory_layer_extra(cfg: Mapping | None = None, dense_bank: bool = False):
    """Extra forward FLOPs of one memory layer over a standard one [paper + reference]."""
    expr = _total(memory_layer_items(dense_bank))
    return expr if cfg is None else evaluate(expr, cfg)


def flops_memory_attention(cfg: Mapping | None = None, dense_bank: bool = False):
    """Forward FLOPs of the memory cross-attention alone (Q, K, V, O, matmuls, softmax) [paper]."""
    expr = _total([it for it in memory_layer_items(dense_bank) if it[0] == "memory attention"])
    return expr if cfg is None else evaluate(expr, cfg)


def flops_head(cfg: Mapping | None = None):
    expr = _total(head_items())
    return expr if cfg is None else evaluate(expr, cfg)


def flops_model(cfg: Mapping | None, n_std: int, n_mem: int):
    """Forward FLOPs of a model with ``n_std`` standard and ``n_mem`` memory layers plus the head:
    n_std*std + n_mem*(std + extra) + head [paper, App. A.2]."""
    n_std = require_int("n_std", n_std, minimum=0)
    n_mem = require_int("n_mem", n_mem, minimum=0)
    expr = (n_std + n_mem) * flops_standard_layer() + n_mem * flops_memory_layer_extra() + flops_head()
    return expr if cfg is None else evaluate(expr, cfg)


def model_totals(cfg: Mapping) -> dict:
    """Backbone (n_layers standard), MoC (n_layers with memory layers) and iso-FLOP dense totals.

    The iso-FLOP depth is cfg["iso_flop_layers"] when given (paper: 24), else the one
    :func:`iso_flop_depth` finds; the rule's depth and FLOPs are always reported too
    (``iso_flop_rule_layers``, ``iso_flop_rule``: 22 layers at the paper's configuration, where
    the paper's 24-layer comparator costs 1.0797 times MoC's forward FLOPs)."""
    cfg = validate_config(cfg)
    n_mem = len(cfg["mem_layers"])
    n_std = cfg["n_layers"] - n_mem
    moc = flops_model(cfg, n_std, n_mem)
    rule = iso_flop_depth(cfg)
    depth = cfg.get("iso_flop_layers") or rule
    return {
        "backbone": flops_model(cfg, cfg["n_layers"], 0),
        "iso_flop": flops_model(cfg, depth, 0),
        "moc": moc,
        "iso_flop_layers": int(depth),
        "iso_flop_rule_layers": int(rule),
        "iso_flop_rule": flops_model(cfg, rule, 0),
    }


def iso_flop_depth(cfg: Mapping, minimum: int = 2) -> int:
    """The smallest integer depth n >= ``minimum`` whose dense forward FLOPs n*std + head are
    >= the MoC model's [derived: a plain search on exact integers]."""
    cfg = validate_config(cfg)
    n_mem = len(cfg["mem_layers"])
    target = flops_model(cfg, cfg["n_layers"] - n_mem, n_mem)
    std, head = flops_standard_layer(cfg), flops_head(cfg)
    return max(int(minimum), -(-(target - head) // std))


# -- parameters (the configuration of Table 5) ------------------------------------------------
def parameter_counts(cfg: Mapping) -> dict:
    """Parameter counts [paper, re-derived]: no biases except the router's; RMSNorm has d weights;
    tied embeddings. Memory-layer extras: W_Q, W_K, W_V, W_O (4 d^2), router (d C + C), pre-norm d."""
    cfg = validate_config(cfg)
    dm, dkv = cfg["d_model"], cfg["n_kv_heads"] * cfg["head_dim"]
    layer = 2 * dm * dm + 2 * dm * dkv + 3 * dm * cfg["d_ff"] + 2 * dm
    embedding = cfg["vocab"] * dm
    backbone = cfg["n_layers"] * layer + embedding + dm
    mem_extra = 4 * dm * dm + dm * cfg["n_chapters"] + cfg["n_chapters"] + dm
    bank = cfg["bank_tokens"] * dm
    n_mem = len(cfg["mem_layers"])
    out = {
        "standard_layer": layer,
        "embedding": embedding,
        "final_norm": dm,
        "backbone": backbone,
        "bank": bank,
        "memory_layer_extra": mem_extra,
        "memory_layers": n_mem * mem_extra,
        "moc": backbone + bank + n_mem * mem_extra,
    }
    if cfg.get("iso_flop_layers"):
        out["iso_flop_dense"] = cfg["iso_flop_layers"] * layer + embedding + dm
    return out


def leak_capacity_bits(n_chapters: int, n_shared: int, top_k: int) -> float:
    """log2 C(C - C_sh, k): the bits one top-k selection can carry per sequence (routing leak)
    [derived]: the router picks one of C(C - C_sh, k) subsets, so it transmits at most its log.

    Examples
    --------
    Top-2 among the 15 routed chapters of 16 (one shared) carries at most log2 105 bits:
    >>> round(leak_capacity_bits(16, 1, 2), 3)
    6.714
    """
    n_routed = require_int("n_chapters", n_chapters, 1) - require_int("n_shared", n_shared, 0)
    top_k = require_int("top_k", top_k, 1)
    if top_k > n_routed:
        raise ValueError(f"top_k={top_k} exceeds routed chapters {n_routed}")
    return math.log2(math.comb(n_routed, top_k))
