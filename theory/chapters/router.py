"""Mixture of Chapters (2603.21096): closed-form quantities of the chapter router, registered as
bounds (``python -m theory list``). The FLOP and parameter accounting is in
:mod:`theory.chapters.flops`. This module never imports torch.
"""

from __future__ import annotations

import math

import sympy

from theory.chapters.flops import leak_capacity_bits
from theory.papers import paper
from theory.registry import Bound, register_bound
from theory.validate import require_int, require_real

SOURCE = paper("chapters")


def shared_weight(n_shared: int, routed_scale: float) -> float:
    """Total weight of the shared chapters after chapter weighting, C_sh / (C_sh + s) [reference].

    Shared chapters get weight 1 each and routed chapter i gets s * p~_i with sum_i p~_i = 1, so
    after dividing by the sum (C_sh + s) the shared total is C_sh / (C_sh + s).

    Examples
    --------
    One shared chapter against a routed scale of 2 keeps a third of the weight:
    >>> round(shared_weight(1, 2.0), 4)
    0.3333
    """
    n_shared = require_int("n_shared", n_shared, minimum=1)
    routed_scale = require_real("routed_scale", routed_scale, low=0, low_open=True)
    return n_shared / (n_shared + routed_scale)


def load_balance_uniform(top_k: int) -> float:
    """L_lb = C * sum_i f_i P_i at uniform router probabilities [reference: Switch Transformer].

    With P_i = 1/C' over the C' chapters that can be chosen and sum_i f_i = k (each sequence picks k
    chapters), L_lb = C' * k / C' = k; for top-1 this is the Switch value 1.

    Examples
    --------
    Top-2 routing at uniform probabilities:
    >>> load_balance_uniform(2)
    2.0
    """
    return float(require_int("top_k", top_k, minimum=1))


def zloss_zero_logits(n_chapters: int) -> float:
    """ST-MoE z-loss mean_b (logsumexp_i l_bi)^2 at zero logits: (log C)^2 [reference].

    Examples
    --------
    16 chapters at zero logits: (ln 16)^2:
    >>> round(zloss_zero_logits(16), 4)
    7.6872
    """
    return math.log(require_int("n_chapters", n_chapters, minimum=1)) ** 2


register_bound(
    Bound(
        name="chapters.shared_weight",
        statement="after chapter weighting the shared chapters carry total weight C_sh/(C_sh+s)",
        provenance="reference",
        source=f"{SOURCE}, authors' code (chapter weighting)",
        params={"n_shared": "shared chapters C_sh >= 1", "routed_scale": "routed scale s > 0"},
        numeric=shared_weight,
        aliases={"C_sh": "n_shared", "s": "routed_scale"},
        symbolic=lambda: (lambda c, s: c / (c + s))(*sympy.symbols("n_shared routed_scale", positive=True)),
    )
)

register_bound(
    Bound(
        name="chapters.load_balance_uniform",
        statement="L_lb = C sum_i f_i P_i equals k under uniform router probabilities",
        provenance="reference",
        source=f"{SOURCE}; Switch Transformer load-balance loss",
        params={"top_k": "chapters selected per sequence k >= 1"},
        numeric=load_balance_uniform,
        aliases={"k": "top_k"},
        symbolic=lambda: sympy.Symbol("top_k", positive=True),
    )
)

register_bound(
    Bound(
        name="chapters.zloss_zero_logits",
        statement="the router z-loss equals (log C)^2 at zero logits",
        provenance="reference",
        source=f"{SOURCE}; ST-MoE router z-loss",
        params={"n_chapters": "chapters C >= 1"},
        numeric=zloss_zero_logits,
        aliases={"C": "n_chapters"},
        symbolic=lambda: sympy.log(sympy.Symbol("n_chapters", positive=True)) ** 2,
    )
)

register_bound(
    Bound(
        name="chapters.leak_capacity_bits",
        statement="a per-sequence top-k selection carries at most log2 C(C - C_sh, k) bits",
        provenance="derived",
        source=f"{SOURCE}; this project's analysis of the routing leak (docs/chapters.md)",
        params={"n_chapters": "chapters C", "n_shared": "shared chapters C_sh", "top_k": "k"},
        numeric=leak_capacity_bits,
        aliases={"C": "n_chapters", "C_sh": "n_shared", "k": "top_k"},
        symbolic=lambda: (lambda c, s, kk: sympy.log(sympy.binomial(c - s, kk), 2))(
            *sympy.symbols("n_chapters n_shared top_k", positive=True, integer=True)
        ),
    )
)


def moc_forward_flops(seq_len: int, top_k: int) -> float:
    """MoC forward FLOPs (batch 1) at the paper's configuration with sequence length ``seq_len``
    and ``top_k`` routed chapters [paper, App. A.2 FLOP table]; see docs/chapters.md.

    Examples
    --------
    About 3.7e11 FLOPs at L = 1024 with two routed chapters, more than with one:
    >>> f"{moc_forward_flops(1024, 2):.4e}"
    '3.7037e+11'
    >>> moc_forward_flops(1024, 2) > moc_forward_flops(1024, 1)
    True
    """
    from theory.chapters.flops import PAPER_CONFIG, flops_model

    merged = dict(PAPER_CONFIG)
    merged.update(seq_len=seq_len, top_k=top_k)
    n_mem = len(merged["mem_layers"])
    return float(flops_model(merged, merged["n_layers"] - n_mem, n_mem))


register_bound(
    Bound(
        name="chapters.moc_forward_flops",
        statement="MoC forward FLOPs (B = 1) at the paper's configuration with the given L and k",
        provenance="paper",
        source=f"{SOURCE}, App. A.2 FLOP table",
        params={"seq_len": "sequence length L", "top_k": "routed chapters k"},
        numeric=moc_forward_flops,
        aliases={"L": "seq_len", "k": "top_k"},
    )
)
