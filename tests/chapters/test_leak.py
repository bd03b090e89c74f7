"""Unit test of the leak experiment's variant table (verify.chapters.leak.variant_table)."""

import math

import pytest

from verify.chapters.leak import LEAK, variant_table

TINY = dict(LEAK, steps=2, batch=4, eval_size=16, eval_every=1, half=3, n_symbols=4)


def test_variant_table_rows_and_causal_prefix_variant():
    rows = variant_table([0], ["selection_only", "prefix"], TINY)
    assert [(r["seed"], r["variant"]) for r in rows] == [(0, "selection_only"), (0, "prefix")]
    assert all(math.isfinite(r["full_sequence"]) and math.isfinite(r["prefix_only"]) for r in rows)
    # the causal router sees only the prefix in training's view too: both evaluations agree
    prefix = rows[1]
    assert prefix["full_sequence"] == pytest.approx(prefix["prefix_only"], rel=1e-5)


def test_vectorised_prefix_routing_matches_the_gathered_reference():
    """MemoryLayer.forward_prefix (attention over the whole bank, unselected chapters masked) gives
    the same MemRead, routing and gradients as the per-position gather it replaced (float64)."""
    import torch

    from constructions.chapters.layer import MemoryLayer

    gen = torch.Generator().manual_seed(3)
    for weighting in (True, False):
        layer = MemoryLayer(16, 4, 9, 1, 3, weighting=weighting, routing="prefix", dtype=torch.float64)
        with torch.no_grad():
            for param in layer.parameters():
                param.copy_(torch.randn(param.shape, generator=gen, dtype=torch.float64) * 0.3)
        bank = torch.randn(9 * 5, 16, generator=gen, dtype=torch.float64, requires_grad=True)
        block_input = torch.randn(3, 7, 16, generator=gen, dtype=torch.float64, requires_grad=True)
        hidden = torch.randn(3, 7, 16, generator=gen, dtype=torch.float64, requires_grad=True)
        results = []
        for forward in (layer.forward_prefix, layer.forward_prefix_gathered):
            layer.zero_grad()
            read, routing = forward(block_input, hidden, bank)
            grads = torch.autograd.grad(
                read.pow(2).sum(), [bank, block_input, hidden, *layer.parameters()], allow_unused=True
            )
            results.append((read, routing.chapters, routing.weights, grads))
        (r1, c1, w1, g1), (r2, c2, w2, g2) = results
        assert torch.equal(c1, c2)
        torch.testing.assert_close(w1, w2, rtol=0, atol=0)
        torch.testing.assert_close(r1, r2, rtol=1e-12, atol=1e-13)
        assert r1.abs().max() > 1e-3  # a non-trivial read (W_O is not zero here)
        # with constant weights the router (and the block input) get no gradient on either path
        assert [g is None for g in g1] == [g is None for g in g2]
        assert (g1[1] is None) == (not weighting)
        for a, b in zip(g1, g2):
            if a is not None:
                torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)


def test_a_stopped_run_equals_the_full_runs_curve_at_that_step():
    """loss_at_stop may read a variant off its full-length run's curve (sequence-routed) or train
    to the stop (prefix-routed): both give the same number, since the stopped run sees the same
    batches and learning rates and evaluation draws nothing from the training stream."""
    from verify.chapters.leak import leak_run, loss_at_stop
    from verify.claims import Context

    p = dict(TINY, steps=4, eval_every=2, stop=2)
    for variant in ("sequence", "prefix"):
        ctx = Context(seed=0, device="cpu", dtype="float32")
        stopped = leak_run(dict(p, eval_every=2), ctx, 0, variant)["full_sequence"]
        full = leak_run({k: v for k, v in p.items() if k != "stop"}, ctx, 0, variant)
        assert full["eval_steps"] == [0, 2, 4]
        assert stopped == full["first_half"][1]
        assert loss_at_stop(p, ctx, 0, variant)[0] == stopped
    with pytest.raises(ValueError, match="not an evaluation step"):
        loss_at_stop(dict(p, stop=3), Context(seed=0, device="cpu", dtype="float32"), 0, "sequence")


def test_prefix_read_in_row_chunks_without_gradients_is_the_same_read():
    """Without gradients the prefix-routed read runs in chunks of prefix_eval_rows rows (bounded
    memory at evaluation); each row's read depends on that row only, so chunking changes nothing."""
    import torch

    from constructions.chapters.layer import MemoryLayer

    gen = torch.Generator().manual_seed(4)
    layer = MemoryLayer(16, 4, 9, 1, 3, routing="prefix", dtype=torch.float64)
    with torch.no_grad():
        for param in layer.parameters():
            param.copy_(torch.randn(param.shape, generator=gen, dtype=torch.float64) * 0.3)
        bank = torch.randn(9 * 5, 16, generator=gen, dtype=torch.float64)
        x = torch.randn(3, 7, 16, generator=gen, dtype=torch.float64)
        whole, _ = layer(x, x, bank)
        layer.prefix_eval_rows = 4  # 21 rows: chunks of 4, the last one short
        chunked, _ = layer(x, x, bank)
    torch.testing.assert_close(chunked, whole, rtol=1e-12, atol=1e-14)
    assert whole.abs().max() > 1e-3
