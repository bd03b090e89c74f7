"""The written-out attention training step of constructions.fact_mlp.transformer against autograd
and torch.optim.AdamW (bitwise), and the fact-set sharing of the fact_mlp claims."""

import copy

import numpy as np
import pytest
import torch

from constructions.fact_mlp.baselines import train_gated_mlp
from constructions.fact_mlp.encoder import build_encoder_decoder
from constructions.fact_mlp.transformer import (
    OneLayerRecallTransformer,
    recall_task,
    swap_mlp,
    train_attention,
)
from tests.strategies import rng_from


def _model(F, d, mlp=None, seed=0):
    task = recall_task(F, d, rng_from(seed))
    model = OneLayerRecallTransformer(task, torch.Generator().manual_seed(seed + 7))
    if mlp == "encoder":
        swap_mlp(model, build_encoder_decoder(task.facts(), 12, rng_from(seed + 1)))
    elif mlp == "gd":
        swap_mlp(model, train_gated_mlp(task.facts(), 6, seed, epochs=200))
    return model


@pytest.mark.parametrize(
    "F, d, mlp, target, kw",
    [
        (12, 16, None, "key", dict(steps=120, lr=1e-2, eval_every=20)),
        (12, 16, "encoder", "value", dict(steps=80, lr=1e-2, eval_every=10, seq_len=6)),
        (10, 12, "gd", "value", dict(steps=60, lr=3e-3, eval_every=15, batch=32)),
        (8, 8, None, "key", dict(steps=40, lr=1e-2, weight_decay=0.1, eval_every=7)),
    ],
)
def test_manual_attention_step_is_bitwise_the_autograd_step(F, d, mlp, target, kw):
    base = _model(F, d, mlp)
    runs = []
    for manual in (False, True):
        model = copy.deepcopy(base)
        hist = train_attention(model, target, rng_from(3), manual_gradient=manual, **kw)
        runs.append((model, hist))
    (a, ha), (b, hb) = runs
    assert ha == hb  # steps, losses and batch accuracies, exactly
    assert torch.equal(a.query.weight, b.query.weight) and torch.equal(a.key.weight, b.key.weight)
    assert not torch.equal(a.query.weight, base.query.weight)  # it trained


def test_manual_attention_step_stops_like_autograd():
    base = _model(8, 16)
    hists = [
        train_attention(copy.deepcopy(base), "key", rng_from(4), steps=2000, lr=1e-2, manual_gradient=m)
        for m in (False, True)
    ]
    assert hists[0] == hists[1] and hists[0]["steps"][-1] < 2000


def test_shared_encoder_facts_continue_the_stream():
    """shared_encoder draws the fact set once and builds each (m_c, H) from the stream where the
    draw left it: the same MLPs as one generator used end to end."""
    from constructions.fact_mlp.encoder import encoder_decoder_family
    from constructions.fact_mlp.facts import fact_set
    from theory.fact_mlp.rho import decodability
    from verify.claims import Context
    from verify.fact_mlp.capacity import shared_encoder

    ctx = Context(seed=5)
    for gates in (None, 3):
        facts, res, (mlp,) = shared_encoder(ctx, 40, 16, 8, [6], n_gates=gates)
        rng = ctx.rng(11, 40, 16, 8, 0)
        ref_facts = fact_set(40, 16, 8, rng)
        (ref,) = encoder_decoder_family(ref_facts, [6], rng, gates, decodability(ref_facts.values))
        np.testing.assert_array_equal(facts.keys, ref_facts.keys)
        for k in ref.gated:
            np.testing.assert_array_equal(mlp.gated[k], ref.gated[k])


@pytest.mark.parametrize("mlp, full_map", [("encoder", False), ("gd", False), ("gd", True)])
def test_manual_finetune_edit_is_bitwise_the_autograd_one(mlp, full_map):
    from constructions.fact_mlp.edit import edit_fact_map, finetune_edit
    from constructions.fact_mlp.transformer import evaluation_contexts

    model = _model(12, 16, mlp)
    new_map, edited = edit_fact_map(model.mlp_facts.fact_map, 4, rng_from(5))
    contexts = evaluation_contexts(model.task, 2, 8, rng_from(6))
    runs = [
        finetune_edit(model, new_map, edited, contexts, steps=40, full_map=full_map, manual_gradient=m)
        for m in (False, True)
    ]
    (a, steps_a), (b, steps_b) = runs
    assert steps_a == steps_b > 0
    for (name, x), (_, y) in zip(a.mlp.named_parameters(), b.mlp.named_parameters()):
        assert torch.equal(x, y), name
        assert not x.requires_grad and not y.requires_grad
    np.testing.assert_array_equal(a.mlp_facts.fact_map, b.mlp_facts.fact_map)
