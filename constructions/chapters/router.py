"""Mixture of Chapters (2603.21096) in torch: the per-sequence chapter router and its auxiliary
losses (docs/chapters.md#setting) [paper + reference].

* :class:`ChapterRouter` - pool, linear, softmax, shared chapters, top-k, renormalise, chapter
  weights; the routing modes ``sequence`` / ``prefix`` / ``first`` (routing leak, docs/chapters.md).
* :func:`load_balance_loss`, :func:`z_loss`, :func:`auxiliary_losses` [reference];
  :func:`selection_frequency`, :func:`normalised_entropy` (router usage metrics).

The memory layer and the model that use the router are in :mod:`constructions.chapters.layer`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class Routing:
    """Output of :class:`ChapterRouter`: chapters (B, C_sh + k) with the shared ones first,
    weights (B, C_sh + k) summing to 1, logits and probabilities (B, C) over all chapters."""

    chapters: torch.Tensor
    weights: torch.Tensor
    logits: torch.Tensor
    probs: torch.Tensor
    n_shared: int


ROUTING_MODES = ("sequence", "prefix", "first")


class ChapterRouter(nn.Module):
    """Per-sequence chapter router (docs/chapters.md#setting) [paper + reference].

    r = mean of the block input over positions (``routing="sequence"``, the paper's mode);
    l = W_r r + b_r;
    p = softmax(l); zero p on the shared chapters and renormalise; top-k of the routed chapters;
    renormalise the top-k to p~; weights: 1 per shared chapter and s * p~_i per routed chapter,
    divided by their sum. With ``weighting=False`` every weight is 1 (plain concatenation: the
    LM loss then has no gradient path to the router).

    Routing modes (``routing=``) [derived, docs/chapters.md#statements-and-proof-sketches]:

    * ``"sequence"``: the paper's per-sequence routing; the pool includes every position, so under
      teacher-forced causal language modelling the chapter choice can carry later tokens to
      earlier positions (the routing leak).
    * ``"prefix"``: per-position causal routing. Position t is routed from the mean of the block
      input over positions 0..t (the running mean) and reads only its own chapters;
      :class:`MemoryLayer` does the per-position pooling and calls this router once per position.
      This is the causal mode to train and evaluate with.
    * ``"first"``: position 0 only. With a BOS token first, as in every toy dataset here, every
      input gets the same chapters: this is fixed-chapter memory (a learnt bank read through a
      constant selection), causal but not input-dependent.
    """

    def __init__(
        self,
        d_model,
        n_chapters,
        n_shared,
        top_k,
        routed_scale=2.5,
        weighting=True,
        routing="sequence",
        device=None,
        dtype=None,
    ):
        super().__init__()
        if routing not in ROUTING_MODES:
            raise ValueError(
                f"routing={routing!r} must be one of {ROUTING_MODES}: 'sequence' "
                "(paper), 'prefix' (per-position causal), 'first' (fixed chapters)"
            )
        if not 1 <= top_k <= n_chapters - n_shared:
            raise ValueError(
                f"top_k={top_k} must lie in [1, n_chapters - n_shared = {n_chapters - n_shared}]"
            )
        self.n_chapters, self.n_shared, self.top_k = n_chapters, n_shared, top_k
        self.routed_scale, self.weighting, self.routing = float(routed_scale), weighting, routing
        self.linear = nn.Linear(d_model, n_chapters, bias=True, device=device, dtype=dtype)

    def forward(self, hidden: torch.Tensor) -> Routing:
        pooled = hidden[:, 0] if self.routing == "first" else hidden.mean(1)
        logits = self.linear(pooled)
        probs = logits.softmax(-1)
        routed = probs[:, self.n_shared :]
        routed = routed / routed.sum(-1, keepdim=True)
        top_p, top_i = routed.topk(self.top_k, dim=-1)
        top_p = top_p / top_p.sum(-1, keepdim=True)
        batch = hidden.shape[0]
        shared_ids = torch.arange(self.n_shared, device=hidden.device).expand(batch, -1)
        chapters = torch.cat([shared_ids, top_i + self.n_shared], dim=1)
        if self.weighting:
            ones = torch.ones(batch, self.n_shared, device=hidden.device, dtype=top_p.dtype)
            raw = torch.cat([ones, self.routed_scale * top_p], dim=1)
            weights = raw / raw.sum(-1, keepdim=True)
        else:
            weights = torch.ones(chapters.shape, device=hidden.device, dtype=hidden.dtype)
        return Routing(chapters, weights, logits, probs, self.n_shared)


def selection_frequency(chapters: torch.Tensor, n_chapters: int) -> torch.Tensor:
    """f_i = batch mean of 1[i selected] over all C chapters (sum f_i = C_sh + k) [reference]."""
    counts = torch.zeros(n_chapters, dtype=torch.float64, device=chapters.device)
    counts.index_add_(
        0, chapters.reshape(-1), torch.ones(chapters.numel(), dtype=torch.float64, device=chapters.device)
    )
    return counts / chapters.shape[0]


def load_balance_loss(probs: torch.Tensor, selected: torch.Tensor) -> torch.Tensor:
    """L_lb = C * sum_i f_i P_i [reference: Switch Transformer].

    probs (B, C) router probabilities; selected (B, k) the chosen chapter ids (routed only).
    f_i = batch mean of 1[i in top-k(b)], so sum f_i = k; P_i = batch mean of p_i."""
    n_chapters = probs.shape[-1]
    one_hot = torch.zeros_like(probs).scatter_(1, selected, 1.0)
    f = one_hot.mean(0)
    return n_chapters * (f * probs.mean(0)).sum()


def z_loss(logits: torch.Tensor) -> torch.Tensor:
    """L_z = mean_b (logsumexp_i l_bi)^2 [reference: ST-MoE]."""
    return logits.logsumexp(-1).pow(2).mean()


def auxiliary_losses(routings):
    """(L_lb, L_z) averaged over memory layers [reference]; zeros without memory.
    The load balance counts the routed selections only (sum f_i = k)."""
    if not routings:
        return 0.0, 0.0
    lb = sum(load_balance_loss(r.probs, r.chapters[:, r.n_shared :]) for r in routings)
    z = sum(z_loss(r.logits) for r in routings)
    return lb / len(routings), z / len(routings)


def normalised_entropy(f: torch.Tensor | list) -> float:
    """Entropy of the distribution f / sum f, divided by log(len f) [derived metric]."""
    f = torch.as_tensor(f, dtype=torch.float64)
    p = f / f.sum()
    nz = p[p > 0]
    return float(-(nz * nz.log()).sum() / math.log(len(f)))
