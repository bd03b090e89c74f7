"""Mixture of Chapters (2603.21096) in torch: the chapter-routed memory layer.

* :func:`rms_normalise`, :class:`RMSNorm` - RMS normalisation (eps 1e-6) [reference].
* :class:`ChapterRouter` and the auxiliary losses live in :mod:`constructions.chapters.router`
  (re-exported here).
* :class:`MemoryAttention` - memory cross-attention, zero-initialised W_O [paper] (docs/chapters.md#setting).
* :class:`MemoryLayer` - router + selected-memory preprocessing + memory attention.

The decoder-only model that places these layers (:class:`Block`, :class:`MoCModel`, rotary
embeddings) is in :mod:`constructions.chapters.model`.

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
        keys_t = self.gather_rows(keys_t, rows).view(b, heads, head_dim, n_sel_chapters * tokens)
        rows = (lanes[None, :heads, None] * n_chapters + chapters[:, None, :]).reshape(-1)
        values = self.gather_rows(values, rows).view(b, heads, n_sel_chapters * tokens, head_dim)
        return keys_t, values, routing.weights.repeat_interleave(tokens, dim=1)

    @staticmethod
    def gather_rows(table, rows):
        """The rows ``rows`` of ``table`` (``index_select`` along dim 0), the two gathers of
        :meth:`selected_heads`; the seed-batched trainer (constructions.chapters.seed_batch)
        replaces it by ``F.embedding``, which vmap batches as one gather of rows.

        >>> import torch
        >>> MemoryLayer.gather_rows(torch.arange(6.0).view(3, 2), torch.tensor([2, 0])).tolist()
        [[4.0, 5.0], [0.0, 1.0]]
        """
        return table.index_select(0, rows)

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
        # 0 on unselected chapters. Out of place: an in-place scatter_ saves one (H, R, N) copy
        # per read on CPU (about 0.2-0.6 CPU-s a claim) but has no batching rule under vmap, where
        # the seed-batched training (constructions/chapters/seed_batch.py, on CUDA) falls back to
        # a slow per-sample loop
        dense = torch.zeros_like(scores).scatter(2, index, probs)
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
