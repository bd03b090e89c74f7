"""The trainer of constructions.geometric.train in chunks of facts: the chunked loss, gradient, records,
accuracy and predictions agree with the one-chunk (unchunked) path on small float64 instances."""

import numpy as np
import pytest
import torch

from constructions.geometric.train import (
    _loss_and_accuracy,
    fact_chunk_rows,
    init_params,
    loss_backward,
    train_accuracy,
    train_model,
)
from constructions.tasks import make_bijections, single_hop_dataset
from tests.strategies import rng_from


def _gen(seed):
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def _grads(perms, rows, seed=0):
    n_rel, n = perms.shape
    p = init_params(n, n_rel, 6, 16, _gen(seed))
    for v in p.values():
        v.requires_grad_(True)
    subj, rel, target = (torch.as_tensor(a) for a in single_hop_dataset(perms))
    loss = loss_backward(p, subj, rel, target, rows)
    return loss, {k: v.grad.clone() for k, v in p.items()}


@pytest.mark.parametrize("rows", [1, 7, 50, 95])
def test_chunked_gradient_equals_the_unchunked_one_in_float64(rows):
    perms = make_bijections(32, 3, rng_from(4))
    loss1, g1 = _grads(perms, rows=10**9)
    loss2, g2 = _grads(perms, rows=rows)
    torch.testing.assert_close(loss2, loss1, rtol=1e-13, atol=0)
    for k in g1:
        torch.testing.assert_close(g2[k], g1[k], rtol=1e-11, atol=1e-15, msg=k)
        assert float(g1[k].abs().max()) > 0, k  # every parameter receives a gradient


def test_chunked_training_follows_the_unchunked_run():
    perms = make_bijections(24, 2, rng_from(6))
    a = train_model(perms, 6, 16, steps=40, lr=2e-2, generator=_gen(2), record_every=10)
    b = train_model(perms, 6, 16, steps=40, lr=2e-2, generator=_gen(2), record_every=10, chunk_entries=24 * 5)
    for k in a.params:
        torch.testing.assert_close(b.params[k], a.params[k], rtol=1e-9, atol=1e-12, msg=k)
    np.testing.assert_allclose(b.history["loss"], a.history["loss"], rtol=1e-11)
    assert b.history["accuracy"] == a.history["accuracy"]


def test_chunked_records_accuracy_and_predictions(monkeypatch):
    import constructions.geometric.train as T

    perms = make_bijections(40, 3, rng_from(8))
    model = train_model(perms, 5, 12, steps=30, lr=3e-2, generator=_gen(3))
    subj, rel, target = single_hop_dataset(perms)
    p = model.params
    full = _loss_and_accuracy(p, *(torch.as_tensor(a) for a in (subj, rel, target)), rows=10**9)
    part = _loss_and_accuracy(p, *(torch.as_tensor(a) for a in (subj, rel, target)), rows=13)
    assert part[1] == full[1]
    np.testing.assert_allclose(part[0], full[0], rtol=1e-13)
    acc, pred = train_accuracy(model), model.predict(subj, rel)
    monkeypatch.setattr(T, "LOGIT_CHUNK_ENTRIES", 40 * 7)  # 7 facts per chunk
    assert T.fact_chunk_rows(len(subj), 40) == 7
    assert train_accuracy(model) == acc
    np.testing.assert_array_equal(model.predict(subj, rel), pred)
    assert 0 < acc < 1  # a partly trained model: the comparison is not between two trivial values


def test_chunk_rows_bad_input():
    assert fact_chunk_rows(80000, 10000) == (1 << 24) // 10000
    assert fact_chunk_rows(2048, 512) == 2048  # the quick setting is one chunk (the unchunked path)
    with pytest.raises(ValueError, match="max_entries"):
        fact_chunk_rows(10, 10, 0)
