"""Mixture of Chapters (2603.21096) in torch: the chapter-routed memory layer and a small
decoder-only model that places memory layers at given indices and shares one bank.

* :func:`rms_normalise`, :class:`RMSNorm` - RMS normalisation (eps 1e-6) [reference].
* :class:`ChapterRouter` and the auxiliary losses live in :mod:`constructions.chapters.router`
  (re-exported here).
* :class:`MemoryAttention` - memory cross-attention, zero-initialised W_O [paper] (docs/chapters.md#setting).
* :class:`MemoryLayer` - router + selected-memory preprocessing + memory attention.
* :class:`Block` (Variant A) and :class:`MoCModel` [paper].

All randomness comes from an explicit ``torch.Generator``; the device is passed in.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from constructions.chapters.memory import gather_chapters
from constructions.chapters.router import (  # noqa: F401 - re-exported: layer was one module before
    ROUTING_MODES,
    ChapterRouter,
    Routing,
    auxiliary_losses,
    load_balance_loss,
    normalised_entropy,
    selection_frequency,
    z_loss,
)
from theory.chapters.flops import validate_config

EPS = 1e-6


def rms_normalise(x: torch.Tensor, eps: float = EPS) -> torch.Tensor:
    """x / sqrt(mean(x^2 over the last axis) + eps), no learnable scale [reference]."""
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


class RMSNorm(nn.Module):
    """RMSNorm with d learnable weights (init 1) [reference]."""

    def __init__(self, dim: int, device=None, dtype=None):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim, device=device, dtype=dtype))

    def forward(self, x):
        return rms_normalise(x) * self.weight


class MemoryAttention(nn.Module):
    """MemRead = softmax(Q K^T / sqrt(d_h)) V W_O with Q = RMSNorm(H) W_Q, K = M~ W_K, V = M~ W_V
    (docs/chapters.md#setting) [paper]; no mask over memory; no biases; W_O zero-initialised [reference]."""

    def __init__(self, d_model, n_heads, device=None, dtype=None):
        super().__init__()
        self.n_heads, self.head_dim = n_heads, d_model // n_heads
        kw = dict(bias=False, device=device, dtype=dtype)
        self.norm = RMSNorm(d_model, device=device, dtype=dtype)
        self.wq, self.wk = nn.Linear(d_model, d_model, **kw), nn.Linear(d_model, d_model, **kw)
        self.wv, self.wo = nn.Linear(d_model, d_model, **kw), nn.Linear(d_model, d_model, **kw)

    def heads(self, x):
        b, n, _ = x.shape
        return x.view(b, n, self.n_heads, self.head_dim).transpose(1, 2)

    def forward(self, hidden, keys, values, token_weights=None):
        """hidden (B, L, d); keys, values (B, N_sel, d) projected from the selected tokens.

        With ``token_weights`` (B, N_sel), keys and values are those of the normalised, UNweighted
        tokens and the chapter weights are applied inside the attention: q.(w k) = w (q.k) and
        sum_t p_t (w_t v_t) = sum_t (p_t w_t) v_t, the same MemRead as projecting w * M_S
        [derived, exact up to rounding] at a fraction of the element-wise work."""
        q = self.heads(self.wq(self.norm(hidden)))
        k, v = self.heads(keys), self.heads(values)
        if token_weights is None:
            out = F.scaled_dot_product_attention(q, k, v)
        else:
            w = token_weights[:, None, None, :]
            scores = (q @ k.transpose(-1, -2)) * (w / math.sqrt(self.head_dim))
            out = (scores.softmax(-1) * w) @ v
        b, _, n, _ = out.shape
        return self.wo(out.transpose(1, 2).reshape(b, n, -1))

    def forward_heads(self, hidden, keys_t, values, token_weights):
        """:meth:`forward` with ``token_weights`` on keys and values already split into heads:
        ``keys_t`` (B, H, d_h, N_sel) and ``values`` (B, H, N_sel, d_h), both contiguous (as
        :meth:`MemoryLayer.selected_heads` returns them). These are the operands :meth:`forward`'s
        matmuls copy its head views into, so every product, softmax and weight is the same
        computation on the same values in the same layout: the same numbers, bit for bit, without
        the copies."""
        q = self.heads(self.wq(self.norm(hidden)))
        w = token_weights[:, None, None, :]
        scores = (q @ keys_t) * (w / math.sqrt(self.head_dim))
        out = (scores.softmax(-1) * w) @ values
        b, _, n, _ = out.shape
        return self.wo(out.transpose(1, 2).reshape(b, n, -1))


class MemoryLayer(nn.Module):
    """Router + selected-memory preprocessing + memory attention of one memory layer
    [paper + reference]. The bank is passed in (one bank shared by all memory layers).

    Preprocessing: gather the chapters, RMS-normalise every selected token (no scale), multiply by
    its chapter weight. Because W_K, W_V are linear, (w m^) W = w (m^ W): when the batch selects
    more tokens than the bank holds it is cheaper to project the normalised bank once and gather
    the projections; both orders give the same K, V, and the weight is applied inside the
    attention (see :meth:`MemoryAttention.forward`) [derived, exact up to rounding].

    ``sparse_bank_grad`` (class default False; set it on an instance): the routed gather's
    backward writes a sparse gradient holding only the selected chapters (:func:`constructions.chapters.memory.gather_chapters`).
    """

    sparse_bank_grad = False
    #: rows (batch x position) per chunk of the prefix-routed read without gradients (evaluation):
    #: bounds the (heads, rows, bank) score matrix; each row's read does not depend on the others
    prefix_eval_rows = 1024

    def __init__(
        self,
        d_model,
        n_heads,
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
        self.router = ChapterRouter(
            d_model, n_chapters, n_shared, top_k, routed_scale, weighting, routing, device=device, dtype=dtype
        )
        self.attention = MemoryAttention(d_model, n_heads, device=device, dtype=dtype)
        self.n_chapters = n_chapters

    def selected_keys_values(self, bank, routing: Routing, weighted=True):
        """K, V of the selected memory M~ = w * RMS(M_S), each (B, N_sel, d); with
        ``weighted=False`` also the per-token weights (B, N_sel) and K, V of RMS(M_S) alone."""
        chapters = bank.view(self.n_chapters, -1, bank.shape[-1])  # (C, T, d)
        b, n_sel_chapters = routing.chapters.shape
        tokens, dim = chapters.shape[1], bank.shape[-1]
        att = self.attention
        if self.projects_bank(bank, routing):
            normed = rms_normalise(chapters)
            keys, values = att.wk(normed)[routing.chapters], att.wv(normed)[routing.chapters]
        else:
            selected = rms_normalise(
                gather_chapters(bank, routing.chapters, self.n_chapters, self.sparse_bank_grad)
            )  # (B, C_sh+k, T, d)
            keys, values = att.wk(selected), att.wv(selected)
        keys, values = keys.reshape(b, -1, dim), values.reshape(b, -1, dim)
        token_weights = routing.weights.repeat_interleave(tokens, dim=1)  # (B, N_sel)
        if weighted:
            return keys * token_weights[..., None], values * token_weights[..., None]
        return keys, values, token_weights

    def projects_bank(self, bank, routing: Routing) -> bool:
        """Whether the batch selects more tokens than the bank holds: K, V are then projected from
        the whole normalised bank and gathered (module doc), else gathered and projected."""
        b, n_sel_chapters = routing.chapters.shape
        return b * n_sel_chapters * (bank.shape[0] // self.n_chapters) > bank.shape[0]

    def selected_heads(self, bank, routing: Routing):
        """K^T (B, H, d_h, N_sel), V (B, H, N_sel, d_h), both contiguous, and the per-token
        weights (B, N_sel) of the selected memory when :meth:`projects_bank` holds.

        The same values as :meth:`selected_keys_values` (``weighted=False``) split into heads: the
        bank is normalised and projected as there, the projections are laid out head-major once
        ((H d_h C, T) for K^T, (H C, T d_h) for V: C T d elements each) and every row's chapters
        are gathered by ``index_select`` straight into the layout of the attention's matmul
        operands. Data movement only: no arithmetic differs, and the backward's ``index_add``
        sums each bank row's contributions in the same order (batch row ascending) as the
        indexing it replaces, so the gradients are the same numbers too
        (tests/chapters/test_fast_paths.py). It saves the gather of (B, C_sh + k, T, d) blocks and
        the two copies that made them contiguous per head, in the forward and the backward."""
        att = self.attention
        n_chapters, heads, head_dim = self.n_chapters, att.n_heads, att.head_dim
        tokens, dim = bank.shape[0] // n_chapters, bank.shape[-1]
        chapters = routing.chapters
        b, n_sel_chapters = chapters.shape
        normed = rms_normalise(bank.view(n_chapters, tokens, dim))
        per_head = att.wk(normed).view(n_chapters, tokens, heads, head_dim)
        keys_t = per_head.permute(2, 3, 0, 1).reshape(heads * head_dim * n_chapters, tokens)
        per_head = att.wv(normed).view(n_chapters, tokens, heads, head_dim)
        values = per_head.permute(2, 0, 1, 3).reshape(heads * n_chapters, tokens * head_dim)
        lanes = torch.arange(heads * head_dim, device=chapters.device)
        rows = (lanes[None, :, None] * n_chapters + chapters[:, None, :]).reshape(-1)
        keys_t = keys_t.index_select(0, rows).view(b, heads, head_dim, n_sel_chapters * tokens)
        rows = (lanes[None, :heads, None] * n_chapters + chapters[:, None, :]).reshape(-1)
        values = values.index_select(0, rows).view(b, heads, n_sel_chapters * tokens, head_dim)
        return keys_t, values, routing.weights.repeat_interleave(tokens, dim=1)

    def forward(self, block_input, hidden, bank):
        if self.router.routing == "prefix":
            return self.forward_prefix(block_input, hidden, bank)
        routing = self.router(block_input)
        if bank.device.type == "cpu" and self.projects_bank(bank, routing):
            # CPU only: there the gather's backward sums in a fixed order (tested); on a GPU
            # index_add accumulates atomically, the indexing it would replace does not
            keys_t, values, token_weights = self.selected_heads(bank, routing)
            return self.attention.forward_heads(hidden, keys_t, values, token_weights), routing
        keys, values, token_weights = self.selected_keys_values(bank, routing, weighted=False)
        return self.attention(hidden, keys, values, token_weights), routing

    def forward_prefix(self, block_input, hidden, bank):
        """Per-position causal routing [derived]: position t is routed from the running mean of the
        block input over 0..t and attends to its own selected memory. The routing's rows are
        (batch, position) pairs in row-major order (B * L rows).

        Computed as attention over the whole projected bank with each row's unselected chapters
        masked out and its chapter weights applied inside the attention: the same MemRead as
        gathering each row's selected tokens (:meth:`forward_prefix_gathered`, exact up to
        rounding; a test compares both), without materialising B * L copies of the selection."""
        b, n, dim = hidden.shape
        counts = torch.arange(1, n + 1, device=hidden.device, dtype=block_input.dtype)
        running = block_input.cumsum(1) / counts[None, :, None]
        routing = self.router(running.reshape(b * n, 1, dim))
        att = self.attention
        rows, n_tokens, heads, head_dim = b * n, bank.shape[0], att.n_heads, att.head_dim
        tokens = n_tokens // self.n_chapters
        normed = rms_normalise(bank)
        keys = att.wk(normed).view(n_tokens, heads, head_dim).permute(1, 2, 0)  # (H, d_h, N)
        values = att.wv(normed).view(n_tokens, heads, head_dim).transpose(0, 1)  # (H, N, d_h)
        q = att.wq(att.norm(hidden.reshape(rows, dim))).view(rows, heads, head_dim).transpose(0, 1)
        chunk = rows if torch.is_grad_enabled() else self.prefix_eval_rows  # bounded memory at eval
        out = torch.cat(
            [
                self._prefix_read(
                    q[:, i : i + chunk],
                    keys,
                    values,
                    routing.chapters[i : i + chunk],
                    routing.weights[i : i + chunk],
                    tokens,
                )
                for i in range(0, rows, chunk)
            ],
            dim=1,
        ).transpose(0, 1)  # (rows, H, d_h)
        return att.wo(out.reshape(b, n, dim)), routing

    def _prefix_read(self, q, keys, values, chapters, weights, tokens):
        """Memory read of rows q (H, R, d_h) against the whole bank (keys (H, d_h, N), values
        (H, N, d_h)), each row restricted to its chapters (R, C_sh + k) with their weights."""
        heads, rows, head_dim = q.shape
        scores = (q @ keys).view(heads, rows, self.n_chapters, tokens)  # every bank token
        n_sel = chapters.shape[1]
        index = chapters[None, :, :, None].expand(heads, rows, n_sel, tokens)
        w = weights[None, :, :, None]  # (1, R, C_sh + k, 1)
        selected = scores.gather(2, index) * (w / math.sqrt(head_dim))
        probs = selected.reshape(heads, rows, -1).softmax(-1).view(heads, rows, n_sel, tokens) * w
        dense = torch.zeros_like(scores).scatter(2, index, probs)  # 0 on unselected chapters
        return dense.view(heads, rows, -1) @ values  # (H, R, d_h)

    def forward_prefix_gathered(self, block_input, hidden, bank):
        """Reference implementation of :meth:`forward_prefix`: every position treated as a
        length-1 sequence that gathers its own selected tokens (B * L rows)."""
        b, n, dim = hidden.shape
        counts = torch.arange(1, n + 1, device=hidden.device, dtype=block_input.dtype)
        running = block_input.cumsum(1) / counts[None, :, None]
        routing = self.router(running.reshape(b * n, 1, dim))
        keys, values, token_weights = self.selected_keys_values(bank, routing, weighted=False)
        read = self.attention(hidden.reshape(b * n, 1, dim), keys, values, token_weights)
        return read.reshape(b, n, dim), routing


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
