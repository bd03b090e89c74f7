"""Routed memory with a sparse bank gradient (constructions.chapters.layer.gather_chapters):
the same numbers as the dense-gradient version, written only for the selected chapters."""

import pytest
import torch

from constructions.chapters.layer import MemoryLayer
from constructions.chapters.memory import gather_chapters


def _layer_bank_hidden(seed, n_chapters=32, tokens=8, d=16, batch=2, dtype=torch.float64):
    gen = torch.Generator().manual_seed(seed)
    layer = MemoryLayer(d, 2, n_chapters, 1, 3, dtype=dtype)
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=dtype) * 0.3)
    bank = torch.randn(n_chapters * tokens, d, generator=gen, dtype=dtype).requires_grad_()
    hidden = torch.randn(batch, 5, d, generator=gen, dtype=dtype)
    return layer, bank, hidden


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_sparse_bank_gradient_equals_dense(seed, dtype):
    grads, reads = {}, {}
    for sparse in (False, True):
        layer, bank, hidden = _layer_bank_hidden(seed, dtype=dtype)
        layer.sparse_bank_grad = sparse
        read, routing = layer(hidden, hidden, bank)
        (read**2).sum().backward()
        reads[sparse] = read.detach()
        grads[sparse] = bank.grad
        if sparse:
            assert bank.grad.is_sparse
            touched = set(bank.grad.coalesce().indices()[0].tolist())
            tokens = bank.shape[0] // layer.n_chapters
            chosen = {int(c) * tokens + t for c in routing.chapters.reshape(-1) for t in range(tokens)}
            assert touched == chosen  # rows of the selected chapters only
        else:
            assert not bank.grad.is_sparse
    torch.testing.assert_close(reads[True], reads[False], rtol=0, atol=0)
    torch.testing.assert_close(grads[True].to_dense(), grads[False])  # dtype-aware tolerance
    assert torch.count_nonzero(grads[False]).item() > 0


def test_gather_matches_indexing_with_repeated_chapters():
    gen = torch.Generator().manual_seed(0)
    bank = torch.randn(6 * 4, 3, generator=gen, dtype=torch.float64).requires_grad_()
    idx = torch.tensor([[0, 5, 5], [2, 0, 1]])
    w = torch.randn(2, 3, 4, 3, generator=gen, dtype=torch.float64)
    dense = gather_chapters(bank, idx, 6)
    (dense * w).sum().backward()
    g_dense, bank.grad = bank.grad.clone(), None
    sparse = gather_chapters(bank, idx, 6, sparse_grad=True)
    assert torch.equal(sparse, dense)
    (sparse * w).sum().backward()
    torch.testing.assert_close(bank.grad.to_dense(), g_dense, rtol=0, atol=1e-15)
