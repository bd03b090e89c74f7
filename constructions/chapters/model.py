"""Mixture of Chapters (2603.21096) in torch: a small decoder-only model that places memory layers
(:mod:`constructions.chapters.layer`) at given indices and shares one bank.

* :func:`rope` - rotary position embeddings [reference]; causal masks built once per length.
* :class:`Block` (Variant A) and :class:`MoCModel` [paper] (docs/chapters.md#setting).

All randomness comes from an explicit ``torch.Generator``; the device is passed in.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from constructions.chapters.layer import MemoryLayer, RMSNorm
from theory.chapters.flops import validate_config

_ROPE_CACHE: dict = {}
_CAUSAL_MASKS: dict = {}


def _rope_tables(length, dim, theta, device, dtype):
    """(cos, sin, signed sin) tables (L, d_h); the signed one is sin with its first half negated,
    the factor of the rolled input in :func:`rope`."""
    key = (length, dim, theta, str(device), dtype)
    if key not in _ROPE_CACHE:
        inv = theta ** (-torch.arange(0, dim, 2, device=device, dtype=torch.float64) / dim)
        ang = torch.arange(length, device=device, dtype=torch.float64)[:, None] * inv[None]
        _ROPE_CACHE[key] = (
            torch.cat([ang.cos()] * 2, -1).to(dtype),
            torch.cat([ang.sin()] * 2, -1).to(dtype),
            torch.cat([-ang.sin(), ang.sin()], -1).to(dtype),
        )
    return _ROPE_CACHE[key]


def rope(x, theta=1e5):
    """Rotary position embedding on (B, heads, L, d_h), rotate-half convention [reference]:
    x cos + rotate_half(x) sin with rotate_half(x) = [-x2, x1].

    Computed as x cos + roll(x, d_h / 2) s with s = [-sin_1, sin_2]: x2 (-sin) and (-x2) sin are
    the same float (a product's rounding does not depend on the signs), so the values are those
    of the rotate-half form, in one roll instead of two slices, a negation and a concatenation
    (forward and backward)."""
    length, dim = x.shape[-2], x.shape[-1]
    cos, _, signed_sin = _rope_tables(length, dim, theta, x.device, x.dtype)
    return x * cos + x.roll(dim // 2, -1) * signed_sin


def _causal_mask(n: int, device) -> torch.Tensor:
    """The (n, n) boolean mask of the positions after each query (True above the diagonal),
    built once per length and device."""
    key = (n, str(device))
    if key not in _CAUSAL_MASKS:
        _CAUSAL_MASKS[key] = torch.ones(n, n, dtype=torch.bool, device=device).triu(1)
    return _CAUSAL_MASKS[key]


class Block(nn.Module):
    """Variant A block [paper]: x += SelfAttn(RMSNorm(x)); on a memory layer
    x += MemRead(RMSNorm(x), M~); x += SwiGLU(RMSNorm(x)). Causal GQA self-attention with RoPE."""

    def __init__(self, cfg, memory: bool, device=None, dtype=None):
        super().__init__()
        d, self.h, self.h_kv, self.d_h = (cfg["d_model"], cfg["n_heads"], cfg["n_kv_heads"], cfg["head_dim"])
        kw = dict(bias=False, device=device, dtype=dtype)
        self.norm1, self.norm2 = RMSNorm(d, device, dtype), RMSNorm(d, device, dtype)
        self.wq, self.wo = nn.Linear(d, d, **kw), nn.Linear(d, d, **kw)
        self.wk = nn.Linear(d, self.h_kv * self.d_h, **kw)
        self.wv = nn.Linear(d, self.h_kv * self.d_h, **kw)
        self.w_gate = nn.Linear(d, cfg["d_ff"], **kw)
        self.w_up = nn.Linear(d, cfg["d_ff"], **kw)
        self.w_down = nn.Linear(cfg["d_ff"], d, **kw)
        self.memory = (
            MemoryLayer(
                d,
                cfg["n_heads"],
                cfg["n_chapters"],
                cfg["n_shared"],
                cfg["top_k"],
                cfg.get("routed_scale", 2.5),
                cfg.get("weighting", True),
                cfg.get("routing", "sequence"),
                device=device,
                dtype=dtype,
            )
            if memory
            else None
        )

    def self_attention(self, x):
        b, n, _ = x.shape
        q = rope(self.wq(x).view(b, n, self.h, self.d_h).transpose(1, 2))
        k = rope(self.wk(x).view(b, n, self.h_kv, self.d_h).transpose(1, 2))
        v = self.wv(x).view(b, n, self.h_kv, self.d_h).transpose(1, 2)
        if n <= 16:  # short toy sequences: plain matmuls launch fewer, cheaper kernels on CPU
            rep = self.h // self.h_kv
            q = q.reshape(b, self.h_kv, rep * n, self.d_h)  # query heads grouped by KV head
            scores = (q @ k.transpose(-1, -2)).view(b, self.h_kv, rep, n, n) / math.sqrt(self.d_h)
            probs = scores.masked_fill(_causal_mask(n, x.device), float("-inf")).softmax(-1)
            out = (probs.view(b, self.h_kv, rep * n, n) @ v).view(b, self.h, n, self.d_h)
        else:
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.h != self.h_kv)
        return self.wo(out.transpose(1, 2).reshape(b, n, -1))

    def forward(self, x, bank=None):
        block_input = x
        x = x + self.self_attention(self.norm1(x))
        routing = None
        if self.memory is not None:
            read, routing = self.memory(block_input, x, bank)
            x = x + read
        y = self.norm2(x)
        x = x + self.w_down(F.silu(self.w_gate(y)) * self.w_up(y))
        return x, routing


class MoCModel(nn.Module):
    """Decoder-only model with memory layers at ``cfg["mem_layers"]`` sharing one bank [paper].

    Config keys: those of ``theory.chapters.flops.PAPER_CONFIG`` (``mem_layers`` may be empty for a
    dense model), plus ``weighting`` (default True), ``routing`` ("sequence"), ``wo_init``
    ("zero", the paper's, or "normal": N(0, 0.02^2)). Weights, embeddings and the bank are
    N(0, 0.02^2), the router bias 0, norms 1; embeddings are tied. ``generator`` is required
    except on the meta device (parameter counting only).
    """

    def __init__(self, cfg, generator=None, device="cpu", dtype=torch.float32):
        super().__init__()
        cfg = dict(cfg)
        cfg.setdefault("seq_len", 1)
        if cfg["mem_layers"]:
            cfg.update({key: value for key, value in validate_config(cfg).items() if key in ("mem_layers",)})
        else:
            checks = {**cfg, "bank_tokens": 1, "n_chapters": 1, "n_shared": 0, "top_k": 1}
            validate_config(checks)
        self.cfg = cfg
        d = cfg["d_model"]
        self.embedding = nn.Embedding(cfg["vocab"], d, device=device, dtype=dtype)
        mem = set(cfg["mem_layers"])
        self.blocks = nn.ModuleList(Block(cfg, i in mem, device, dtype) for i in range(cfg["n_layers"]))
        self.final_norm = RMSNorm(d, device, dtype)
        self.bank = (
            nn.Parameter(torch.empty(cfg["bank_tokens"], d, device=device, dtype=dtype)) if mem else None
        )
        if str(device) != "meta":
            if generator is None:
                raise ValueError("MoCModel needs an explicit torch.Generator for its initialisation")
            self.initialise(generator, cfg.get("wo_init", "zero"))

    @torch.no_grad()
    def initialise(self, gen, wo_init="zero"):
        if wo_init not in ("zero", "normal"):
            raise ValueError(f"wo_init={wo_init!r} must be 'zero' (paper) or 'normal'")

        def normal(t):
            t.copy_(torch.randn(t.shape, generator=gen, dtype=t.dtype).to(t.device) * 0.02)

        for name, p in self.named_parameters():
            if name.endswith("norm.weight") or "norm1" in name or "norm2" in name:
                p.fill_(1.0)
            elif name.endswith("router.linear.bias"):
                p.zero_()
            elif name.endswith("memory.attention.wo.weight") and wo_init == "zero":
                p.zero_()
            else:
                normal(p)

    def memory_parameters(self):
        """Bank and memory layers (they get their own learning rate, docs/chapters.md)."""
        return [p for n, p in self.named_parameters() if n == "bank" or ".memory." in n]

    def forward(self, tokens, last_only=False):
        """logits (B, L, V) (or (B, V) at the last position) and the routings per memory layer."""
        x = self.embedding(tokens)
        routings = []
        for block in self.blocks:
            x, routing = block(x, self.bank)
            if routing is not None:
                routings.append(routing)
        if last_only:
            x = x[:, -1]
        return self.final_norm(x) @ self.embedding.weight.t(), routings
