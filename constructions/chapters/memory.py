"""Routed gather of memory chapters with an opt-in sparse bank gradient (Mixture of Chapters,
2603.21096). Used by :class:`constructions.chapters.layer.MemoryLayer`."""

from __future__ import annotations

import torch


class _GatherRows(torch.autograd.Function):
    """bank[rows] whose backward returns a sparse COO gradient holding only the gathered rows."""

    @staticmethod
    def forward(ctx, bank, rows):
        ctx.save_for_backward(rows)
        ctx.bank_shape = bank.shape
        return bank.index_select(0, rows)

    @staticmethod
    def backward(ctx, grad):
        (rows,) = ctx.saved_tensors
        # the indices are the rows just gathered, valid by construction: no invariant check (the
        # default, said explicitly so torch does not warn)
        g = torch.sparse_coo_tensor(
            rows[None],
            grad.reshape(len(rows), -1),
            ctx.bank_shape,
            dtype=grad.dtype,
            device=grad.device,
            check_invariants=False,
        )
        return g, None


def gather_chapters(
    bank: torch.Tensor, chapters: torch.Tensor, n_chapters: int, sparse_grad: bool = False
) -> torch.Tensor:
    """The selected chapters' tokens, (B, n_sel, T, d), of a bank (C T, d) and chapter ids (B, n_sel).

    ``sparse_grad=False``: plain advanced indexing; its backward writes a dense bank-sized
    gradient (zeros except the selected rows). ``sparse_grad=True`` [derived]:
    the backward returns a sparse COO gradient with one row per gathered token (duplicates summed
    on coalescing), so a backward costs what the routed forward computes, not the bank size.
    The same numbers: ``bank.grad.to_dense()`` equals the dense gradient (sums of the same terms;
    tests/chapters/test_sparse_grad.py). The optimiser must accept sparse gradients (SGD,
    Adagrad, SparseAdam) or densify them; the default stays dense for the training loops."""
    tokens, dim = bank.shape[0] // n_chapters, bank.shape[-1]
    if not sparse_grad:
        return bank.view(n_chapters, tokens, dim)[chapters]
    rows = (chapters[..., None] * tokens + torch.arange(tokens, device=chapters.device)).reshape(-1)
    return _GatherRows.apply(bank, rows).view(*chapters.shape, tokens, dim)
