"""The chapters area's cheaper code paths give the same numbers, bit for bit, as the computations
they replace: the head-major gather of the memory layer, RoPE by a roll, the flat Adam(W) with
its clipping, the reuse of a known step-0 evaluation, and the runtime settings of the loops."""

import gc
import math

import numpy as np
import pytest
import torch

from constructions.chapters import train as ct
from constructions.chapters.flat_adam import FlatAdam
from constructions.chapters.layer import MemoryLayer
from constructions.chapters.model import MoCModel, rope
from theory.chapters.flops import TOY_CONFIG


def _layer(seed, dtype, weighting=True, routing="sequence", chapters=16, tokens=8, d=32, heads=4):
    gen = torch.Generator().manual_seed(seed)
    layer = MemoryLayer(d, heads, chapters, 1, 3, weighting=weighting, routing=routing, dtype=dtype)
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=dtype) * 0.3)
    bank = torch.randn(chapters * tokens, d, generator=gen, dtype=dtype).requires_grad_()
    x = torch.randn(12, 5, d, generator=gen, dtype=dtype, requires_grad=True)
    return layer, bank, x


def _read_and_grads(layer, bank, x, fast):
    routing = layer.router(x)
    if fast:
        assert layer.projects_bank(bank, routing)
        k, v, w = layer.selected_heads(bank, routing)
        read = layer.attention.forward_heads(x, k, v, w)
    else:
        read = layer.attention(x, *layer.selected_keys_values(bank, routing, weighted=False))
    grads = torch.autograd.grad(
        (read * read.detach().cos()).sum(), [bank, x, *layer.parameters()], allow_unused=True
    )
    return read, grads


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("weighting", [True, False])
@pytest.mark.parametrize("seed", [0, 1])
def test_head_major_gather_is_the_same_read_and_gradients(seed, dtype, weighting):
    """MemoryLayer.selected_heads + forward_heads against gather-then-split (the layer's former
    forward): equal reads and gradients, including the bank's, with chapters repeated across rows."""
    layer, bank, x = _layer(seed, dtype, weighting)
    read_a, grads_a = _read_and_grads(layer, bank, x, fast=False)
    read_b, grads_b = _read_and_grads(layer, bank, x, fast=True)
    assert torch.equal(read_a, read_b) and read_a.abs().max() > 1e-3
    for a, b in zip(grads_a, grads_b):
        assert (a is None) == (b is None)
        if a is not None:
            assert torch.equal(a, b)
    assert layer(x, x, bank)[0].shape == read_a.shape  # forward takes the head-major path here


def test_small_batches_keep_the_gather_then_project_order():
    layer, bank, x = _layer(0, torch.float64, chapters=64, tokens=16)
    routing = layer.router(x[:1])
    assert not layer.projects_bank(bank, routing)  # 1 x 4 chapters x 16 tokens < 1024 bank rows
    read, _ = layer(x[:1], x[:1], bank)
    reference = layer.attention(x[:1], *layer.selected_keys_values(bank, routing, weighted=False))
    assert torch.equal(read, reference)


def test_rope_by_roll_is_rotate_half():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(3, 5, 4, 16, generator=gen).transpose(1, 2).requires_grad_()  # (B, h, L, d_h) view
    cos, sin, _ = ct_rope_tables(x)
    x1, x2 = x[..., :8], x[..., 8:]
    reference = x * cos + torch.cat([-x2, x1], -1) * sin
    out = rope(x)
    assert torch.equal(out, reference) and out.stride() == reference.stride()
    g = torch.randn(out.shape, generator=gen)
    assert torch.equal(torch.autograd.grad(out, x, g)[0], torch.autograd.grad(reference, x, g)[0])


def ct_rope_tables(x):
    from constructions.chapters.model import _rope_tables

    return _rope_tables(x.shape[-2], x.shape[-1], 1e5, x.device, x.dtype)


def test_elementwise_kernels_do_not_depend_on_where_an_element_sits():
    """The ground of FlatAdam: Adam's element-wise kernels give each element the same result in a
    long buffer as in short tensors starting anywhere (vector body and scalar tail alike)."""
    gen = torch.Generator().manual_seed(0)
    n = 20011
    a, b = torch.randn(n, generator=gen), torch.randn(n, generator=gen)
    c = torch.rand(n, generator=gen) + 0.1
    ops = [
        lambda s: a[s].clone().mul_(1 - 3e-4 * 0.1),
        lambda s: a[s].clone().lerp_(b[s], 0.1),
        lambda s: c[s].clone().mul_(0.95).addcmul_(b[s], b[s], value=0.05),
        lambda s: (c[s].sqrt() / 0.987).add_(1e-8),
        lambda s: a[s].clone().addcdiv_(b[s], c[s], value=-0.0123),
        lambda s: b[s] * torch.tensor(0.37),
    ]
    cuts = [0, 1, 4, 11, 27, 60, 61, 200, 1003, 5000, n]
    for op in ops:
        whole = op(slice(0, n))
        parts = torch.cat([op(slice(i, j)) for i, j in zip(cuts, cuts[1:])])
        assert torch.equal(whole, parts)


def _dense_toy(seed):
    cfg = dict(TOY_CONFIG, vocab=40, n_layers=3, mem_layers=[])
    return MoCModel(cfg, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("decoupled", [True, False])
def test_flat_adam_is_torch_adam_with_clipping(decoupled):
    """Five steps of AdamW (wd 0.1, two groups at different rates) or Adam, with clipping, on a
    small model: FlatAdam leaves every parameter equal to torch's, bit for bit."""
    data = torch.Generator().manual_seed(1)
    batches = [torch.randint(4, 40, (8, 3), generator=data) for _ in range(5)]
    results = []
    for flat in (False, True):
        model = _dense_toy(0)
        params = list(model.parameters())
        groups = [{"params": params[:7], "lr": 3e-3}, {"params": params[7:], "lr": 6e-3}]
        kw = dict(betas=(0.9, 0.95), weight_decay=0.1) if decoupled else {}
        if flat:
            opt = FlatAdam(groups, **kw)
        else:
            opt = (torch.optim.AdamW if decoupled else torch.optim.Adam)(groups, **kw)
        norms = []
        for step, x in enumerate(batches):
            for g in opt.param_groups:
                g["lr"] = g["lr"] * (0.9 if step else 1.0)
            logits, _ = model(x[:, :-1])
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 40), x[:, 1:].reshape(-1)) * 50
            opt.zero_grad()
            loss.backward()
            if flat:
                norms.append(opt.clip_grad_norm_(model.parameters(), 1.0))
            else:
                norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0))
            opt.step()
        results.append(([p.detach().clone() for p in model.parameters()], torch.stack(norms)))
    (p_torch, n_torch), (p_flat, n_flat) = results
    assert torch.equal(n_torch, n_flat) and n_torch.max() > 1.0  # the clip was active
    assert all(torch.equal(a, b) for a, b in zip(p_torch, p_flat))


def test_flat_adam_refuses_a_replaced_gradient_and_a_partial_clip():
    model = _dense_toy(0)
    params = list(model.parameters())
    opt = FlatAdam([{"params": params, "lr": 1e-3}])
    assert all(p.grad is not None and not p.grad.any() for p in params)
    with pytest.raises(ValueError, match="exactly the gradients"):
        opt.clip_grad_norm_(params[:2], 1.0)
    params[0].grad = None
    with pytest.raises(RuntimeError, match="no longer its view"):
        opt.step()


def _facts():
    rng = np.random.default_rng(0)
    facts = ct.make_fact_dataset(32, 8, rng, value_start=4 + 32)
    cfg = dict(TOY_CONFIG, vocab=4 + 32 + 8, bank_tokens=64, n_chapters=16)
    return facts, cfg


def test_a_known_step_zero_evaluation_gives_the_same_history():
    facts, cfg = _facts()
    hists = []
    for known in (None, [ct.evaluate(ct.build(cfg, 3), facts)]):
        model = ct.build(cfg, 3)
        batches = ct.make_mixed_batches([facts], 8, np.random.default_rng(1))
        hists.append(ct.train(model, batches, 6, eval_sets=[facts], eval_every=3, initial_eval=known))
    a, b = hists
    assert a["acc"] == b["acc"] and a["eval_loss"] == b["eval_loss"] and a["loss"] == b["loss"]
    assert np.array_equal(a["f"], b["f"])
    with pytest.raises(ValueError, match="initial_eval"):
        ct.train(ct.build(cfg, 3), batches, 1, eval_sets=[facts], initial_eval=[])


def test_lean_runtime_is_reentrant_and_restores_the_collector():
    assert gc.get_freeze_count() == 0
    with ct.lean_runtime():
        inner_frozen = gc.get_freeze_count()
        assert inner_frozen > 0
        # Frozen objects may still be freed (by this or another thread), so the count can only
        # fall inside the block; a second freeze would add these new tracked objects to it.
        fresh = [[] for _ in range(1000)]
        with ct.lean_runtime():
            assert gc.get_freeze_count() <= inner_frozen
        assert gc.get_freeze_count() <= inner_frozen and len(fresh) == 1000
        big = torch.ones(3 << 20)  # a block glibc would otherwise mmap
        assert math.isclose(float(big.sum()), 3 << 20)
    assert gc.get_freeze_count() == 0 and gc.isenabled()


def test_prefix_read_matches_its_reference_in_values_and_gradients():
    """The prefix-routed read (each row's weighted probabilities scattered onto zeros over the
    whole bank): the same read and gradients, bit for bit, as the reference written out here."""
    layer = _layer(2, torch.float32, routing="prefix")[0]
    gen = torch.Generator().manual_seed(5)
    heads, rows, d_h, tokens = 4, 6, 8, 8
    n = layer.n_chapters * tokens
    q = torch.randn(heads, rows, d_h, generator=gen).requires_grad_()
    keys = torch.randn(heads, d_h, n, generator=gen).requires_grad_()
    values = torch.randn(heads, n, d_h, generator=gen).requires_grad_()
    chapters = torch.stack([torch.randperm(layer.n_chapters, generator=gen)[:3] for _ in range(rows)])
    weights = torch.rand(rows, 3, generator=gen).requires_grad_()
    grad_out = torch.randn(heads, rows, d_h, generator=gen)

    def reference():
        scores = (q @ keys).view(heads, rows, layer.n_chapters, tokens)
        index = chapters[None, :, :, None].expand(heads, rows, 3, tokens)
        w = weights[None, :, :, None]
        selected = scores.gather(2, index) * (w / math.sqrt(d_h))
        probs = selected.reshape(heads, rows, -1).softmax(-1).view(heads, rows, 3, tokens) * w
        dense = torch.zeros_like(scores).scatter(2, index, probs)
        return dense.view(heads, rows, -1) @ values

    results = []
    for read in (reference, lambda: layer._prefix_read(q, keys, values, chapters, weights, tokens)):
        out = read()
        grads = torch.autograd.grad(out, (q, keys, values, weights), grad_out)
        results.append((out, *grads))
    for a, b in zip(*results):
        assert torch.equal(a, b)


@pytest.mark.parametrize("variant", ["prefix", "first", "none"])
def test_a_causal_copy_model_evaluates_the_first_half_on_its_prefix(variant):
    """copy_eval runs a causal model on tokens 0..n only: the same first-half loss, bit for bit,
    as on the whole sequence (a sequence-routed model is not causal and runs on all of it)."""
    from constructions.chapters.copy_task import (
        copy_config,
        copy_eval,
        first_half_loss,
        is_causal,
        make_copy_batch,
        train_copy,
    )

    routing = {"none": "sequence"}.get(variant, variant)
    cfg = dict(copy_config(8, routing, memory=variant != "none"), bank_tokens=64, n_chapters=16)
    assert is_causal(cfg) and not is_causal(copy_config(8))
    model = ct.build(cfg, 1)
    seqs = make_copy_batch(8, 5, 64, np.random.default_rng(2))
    train_copy(model, 8, 5, 6, 16, np.random.default_rng(3), seqs[:4], eval_every=100)
    with torch.no_grad():
        whole = first_half_loss(model(seqs)[0], seqs, 5)
    assert copy_eval(model, seqs, 5) == whole


def test_a_shorter_unevaluated_run_is_the_start_of_the_evaluated_one():
    """chapters.toy.topk_sweep reads the training losses of a run stopped early without
    evaluation, or (when another claim trained it) the same seed's full evaluated run: the losses
    and routing frequencies of the shared steps are the same numbers."""
    facts, cfg = _facts()
    hists = []
    for steps, evals in ((9, [facts]), (6, [])):
        batches = ct.make_mixed_batches([facts], 8, np.random.default_rng(1))
        hists.append(
            ct.train(ct.build(cfg, 3), batches, steps, eval_sets=evals, eval_every=3, schedule_steps=9)
        )
    full, short = hists
    assert full["loss"][:6] == short["loss"] and np.array_equal(full["f"][:6], short["f"])
