"""Tests of the covariance-aware edits (ROME, MEMIT) and the full-map fine-tuning."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from constructions.fact_mlp.edit import attention_unchanged, edit_fact_map, edit_targets, finetune_edit
from constructions.fact_mlp.edit_cov import context_hidden, key_covariance, key_hidden, memit_edit, rome_edit
from constructions.fact_mlp.encoder import build_encoder_decoder
from constructions.fact_mlp.transformer import (
    OneLayerRecallTransformer,
    evaluation_contexts,
    recall,
    recall_task,
    swap_mlp,
)


def _model(seed=0, F=24, d=16):
    task = recall_task(F, d, np.random.default_rng([seed, 1]))
    model = OneLayerRecallTransformer(task, torch.Generator().manual_seed(seed))
    swap_mlp(model, build_encoder_decoder(task.facts(), 24, np.random.default_rng([seed, 2]), n_gates=6))
    tok, keys = evaluation_contexts(task, 3, 6, np.random.default_rng([seed, 3]))
    H = context_hidden(model, tok)
    return task, model, tok, keys, H


def test_covariance_is_symmetric_positive_definite_with_the_ridge():
    _, model, tok, keys, H = _model()
    C = key_covariance(H)
    torch.testing.assert_close(C, C.T)
    assert float(torch.linalg.eigvalsh(C).min()) > 0.0  # m = 144 > 72 samples: ridge
    # the ridge scales with the trace, so the unnormalised covariance is N times the normalised
    torch.testing.assert_close(key_covariance(H, normalise=False), H.shape[0] * C)
    with pytest.raises(ValueError, match="ridge"):
        key_covariance(H, ridge=0.0)
    with pytest.raises(ValueError, match="zero"):
        key_covariance(torch.zeros_like(H))


def test_key_hidden_is_the_mean_over_each_keys_contexts():
    task, _, _, keys, H = _model()
    K = key_hidden(H, keys, task.n_facts)
    i = 5
    torch.testing.assert_close(K[i], H[torch.as_tensor(np.flatnonzero(keys == i))].mean(0))
    with pytest.raises(ValueError, match="no context"):
        key_hidden(H[:3], keys[:3], task.n_facts)


@pytest.mark.parametrize("k", [1, 3])
def test_rome_and_memit_hit_their_targets_at_kstar(k):
    task, model, tok, keys, H = _model()
    C, kstar = key_covariance(H), key_hidden(H, keys, task.n_facts)
    new_map, edited = edit_fact_map(task.fact_map, k, np.random.default_rng(7))
    targets = edit_targets(model, model.mlp, new_map, edited)
    rome = rome_edit(model, new_map, edited, C, kstar)
    memit = memit_edit(
        model, new_map, edited, key_covariance(H[~np.isin(keys, edited)], normalise=False), kstar
    )
    with torch.no_grad():
        if k == 1:  # one rank-one edit moves the output at k* exactly onto v*
            torch.testing.assert_close(rome.mlp.down(kstar[edited[0]]), targets[0])
        # MEMIT's least squares pulls every edited output towards v* (regularised: not exactly)
        before = (model.mlp.down(kstar[edited]) - targets).norm()
        after = (memit.mlp.down(kstar[edited]) - targets).norm()
    assert float(after) < 0.5 * float(before)
    for out in (rome, memit):
        assert attention_unchanged(model, out)
        assert out.mlp_facts.fact_map.tolist() == new_map.tolist()
        # only W_down changes
        assert torch.equal(out.mlp.up.weight, model.mlp.up.weight)
        assert torch.equal(out.mlp.gate.weight, model.mlp.gate.weight)


def test_edits_refuse_a_covariance_of_the_wrong_shape():
    task, model, _, keys, H = _model()
    new_map, edited = edit_fact_map(task.fact_map, 2, np.random.default_rng(7))
    kstar = key_hidden(H, keys, task.n_facts)
    with pytest.raises(ValueError, match="shape"):
        rome_edit(model, new_map, edited, torch.eye(3, dtype=H.dtype), kstar)
    with pytest.raises(ValueError, match="lam"):
        memit_edit(model, new_map, edited, key_covariance(H), kstar, lam=0.0)


def test_finetune_on_the_full_map_sees_every_prompt():
    task, model, tok, keys, _ = _model()
    new_map, edited = edit_fact_map(task.fact_map, 4, np.random.default_rng(7))
    out, steps = finetune_edit(model, new_map, edited, (tok, keys), steps=400, lr=1e-2, full_map=True)
    assert attention_unchanged(model, out)
    # trained on every prompt with the whole edited map: all of them decode to the new map
    assert recall(out, tok, keys, new_map)[0] == 1.0
    assert 0 <= steps <= 400
