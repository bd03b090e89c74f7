"""Tests of the fact-MLP Transformer and the editing methods (docs/fact_mlp.md#experimental-settings)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from constructions.fact_mlp.edit import (
    attention_unchanged,
    edit_fact_map,
    edit_metrics,
    edit_score,
    finetune_edit,
    rank_one_edit,
    swap_edit,
)
from constructions.fact_mlp.encoder import build_encoder_decoder
from constructions.fact_mlp.transformer import (
    N_JUNK,
    OneLayerRecallTransformer,
    RecallTask,
    evaluation_contexts,
    recall,
    recall_sequences,
    recall_task,
    swap_mlp,
    train_attention,
)


def _setup(seed=0, F=24, d=16):
    task = recall_task(F, d, np.random.default_rng([seed, 1]))
    model = OneLayerRecallTransformer(task, torch.Generator().manual_seed(seed))
    mlp = build_encoder_decoder(task.facts(), 24, np.random.default_rng([seed, 2]), n_gates=6)
    return task, model, mlp


@given(seed=st.integers(0, 10_000), L=st.integers(2, 16))
def test_sequences_shape_and_content(seed, L):
    task = recall_task(10, 8, np.random.default_rng(seed))
    keys = np.arange(10)
    tok = recall_sequences(task, keys, L, np.random.default_rng(seed + 1))
    assert tok.shape == (10, L)
    assert (tok[:, -1] == task.query_token).all()
    body = tok[:, :-1]
    is_key = body < task.n_facts
    assert (is_key.sum(axis=1) == 1).all()
    assert (body[is_key] == keys).all()
    assert ((body[~is_key] >= task.n_facts) & (body[~is_key] < task.n_facts + N_JUNK)).all()


def test_rmsnorm_passes_unit_keys_and_mlp_alone_recalls():
    task, model, mlp = _setup()
    swap_mlp(model, mlp)
    K = torch.as_tensor(task.embedding[: task.n_facts])
    n = model.norm_gain * K / torch.sqrt(K.pow(2).mean(-1, keepdim=True) + model.eps)
    torch.testing.assert_close(n, K)
    assert mlp.decode()[0] == 1.0


def test_swap_refuses_mlp_for_another_table():
    task, model, _ = _setup()
    other = recall_task(task.n_facts, task.d_model, np.random.default_rng(99))
    foreign = build_encoder_decoder(
        RecallTask(other.embedding, task.fact_map, task.n_facts).facts(),
        24,
        np.random.default_rng(3),
        n_gates=6,
    )
    with pytest.raises(ValueError, match="different embedding table"):
        swap_mlp(model, foreign)
    small = recall_task(task.n_facts - 1, task.d_model, np.random.default_rng(5))
    wrong_shape = build_encoder_decoder(small.facts(), 24, np.random.default_rng(3), n_gates=6)
    with pytest.raises(ValueError, match="built for keys"):
        swap_mlp(model, wrong_shape)


def test_training_touches_only_attention_and_recalls():
    task, model, mlp = _setup(F=24, d=16)
    swap_mlp(model, mlp)
    mlp_before = {k: v.clone() for k, v in model.mlp.state_dict().items()}
    E_before = model.embedding.clone()
    train_attention(model, "value", np.random.default_rng(4), steps=400, lr=1e-2, batch=64)
    for k, v in model.mlp.state_dict().items():
        assert torch.equal(v, mlp_before[k])
    assert torch.equal(model.embedding, E_before)
    tok, keys = evaluation_contexts(task, 4, 6, np.random.default_rng(6))
    assert recall(model, tok, keys)[0] >= 0.8


def test_edits_leave_attention_bit_identical():
    task, model, mlp = _setup()
    swap_mlp(model, mlp)
    train_attention(model, "value", np.random.default_rng(4), steps=100, lr=1e-2, batch=32)
    new_map, edited = edit_fact_map(task.fact_map, 4, np.random.default_rng(7))
    assert (new_map[edited] != task.fact_map[edited]).all()
    ctx = evaluation_contexts(task, 2, 6, np.random.default_rng(8))
    para = evaluation_contexts(task, 2, 6, np.random.default_rng(9))
    edited_models = [
        swap_edit(
            model, new_map, lambda f: build_encoder_decoder(f, 24, np.random.default_rng(3), n_gates=6)
        ),
        rank_one_edit(model, new_map, edited),
        finetune_edit(model, new_map, edited, ctx, steps=20)[0],
    ]
    for out in edited_models:
        assert attention_unchanged(model, out)
        for name, p in out.attention_parameters().items():
            assert torch.equal(p, model.attention_parameters()[name])
        m = edit_metrics(out, new_map, edited, ctx, para)
        assert 0.0 <= m["score"] <= 1.0
    # the swap stores the edited map exactly standalone
    assert edited_models[0].mlp_facts.fact_map.tolist() == new_map.tolist()


def test_rank_one_edit_hits_the_edited_key_exactly():
    task, model, mlp = _setup()
    swap_mlp(model, mlp)
    new_map, edited = edit_fact_map(task.fact_map, 1, np.random.default_rng(7))
    out = rank_one_edit(model, new_map, edited)
    i = int(edited[0])
    src = int(np.flatnonzero(task.fact_map == new_map[i])[0])
    K = torch.as_tensor(task.embedding[: task.n_facts])
    with torch.no_grad():
        torch.testing.assert_close(out.mlp(K[i : i + 1])[0], model.mlp(K[src : src + 1])[0])


def test_edit_score_and_bad_input():
    assert edit_score(1.0, 1.0, 0.5) == 0.75
    assert edit_score(0.0, 1.0, 1.0) == 0.0
    with pytest.raises(ValueError, match="specificity"):
        edit_score(1.0, 1.0, 1.5)
    with pytest.raises(ValueError, match="n_edits"):
        edit_fact_map(np.arange(5), 6, np.random.default_rng(0))
    with pytest.raises(ValueError, match="L >= 2"):
        recall_sequences(recall_task(4, 4, np.random.default_rng(0)), [0], 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="Generator"):
        recall_task(4, 4, 0)


def test_value_training_needs_a_differentiable_mlp():
    from constructions.fact_mlp.baselines import hebbian_readout

    task, model, _ = _setup()
    with pytest.raises(ValueError, match="needs an inserted fact MLP"):
        train_attention(model, "value", np.random.default_rng(0), steps=1)
    swap_mlp(model, hebbian_readout(task.facts(), 32, np.random.default_rng(0), whitened=True))
    with pytest.raises(ValueError, match="no differentiable form"):
        train_attention(model, "value", np.random.default_rng(0), steps=1)


def test_spec_scale_dimension_is_the_hypothesis_one():
    """recall_spec_scale runs at the smallest d where Cover's count makes >= 99% of the splits
    separable (decided before its pilot), not at the first-written d = 32 (5%)."""
    from theory.fact_mlp.bounds import separable_fraction
    from verify.claims import load_all
    from verify.fact_mlp.transformer_spec import MIN_SEPARABLE, hypothesis_dim

    p = load_all()["fact_mlp.transformer.recall_spec_scale"].params("quick")
    assert p["d_model"] == hypothesis_dim(p["n_facts"]) == 50
    assert separable_fraction(p["n_facts"] + N_JUNK + 1, p["d_model"] - 1) < MIN_SEPARABLE
    assert p["lr"] == 3e-3 and p["seeds"] >= 3


def test_attention_boundary_fit_is_reproduced_from_its_pilot_data():
    """The stored boundary is fit_boundary of the stored pilot means, the means are those of the
    stored per-seed accuracies, the pilot seeds are never judged (>= 100) and the bracket straddles
    the boundary within a factor of 2."""
    from verify.claims import load_all
    from verify.fact_mlp.transformer_fails import boundary_fit, fit_boundary

    fit = boundary_fit()
    assert min(fit["pilot_seeds"]) >= 100
    means = [float(np.mean(fit["per_seed"][str(d)])) for d in fit["grid"]]
    np.testing.assert_allclose(means, fit["mean_copy_accuracy"], atol=1e-6)
    assert fit_boundary(fit["grid"], means) == pytest.approx(fit["boundary"], abs=1e-3)
    assert fit["below"] in fit["grid"] and fit["above"] in fit["grid"]
    assert fit["below"] < fit["boundary"] < fit["above"]
    assert max(fit["boundary"] / fit["below"], fit["above"] / fit["boundary"]) <= 2
    p = load_all()["fact_mlp.transformer.attention_boundary"].params("quick")
    assert (p["below"], p["above"], p["seeds"]) == (fit["below"], fit["above"], fit["seeds"])


def test_rules_over_seeds_need_two_seeds_and_read_the_interval():
    from verify.claims import Context
    from verify.fact_mlp.transformer import log_ratio
    from verify.fact_mlp.transformer_setup import at_seeds, mean_rule

    with pytest.raises(ValueError, match="seeds >= 2"):
        at_seeds(Context(), 1)
    assert mean_rule("x", [0.5, 0.6, 0.7], "<", 0.95, "convention").verdict == "pass"
    assert mean_rule("x", [0.5, 0.99, 1.0], "<", 0.95, "convention").verdict == "inconclusive"
    assert mean_rule("x", [0.99, 0.99, 1.0], "<", 0.95, "convention").verdict == "fail"
    with pytest.raises(ValueError, match="NaN"):
        mean_rule("x", [0.5, float("nan")], "<", 0.95, "convention")
    censored = log_ratio(
        {"inside_params": None, "grid_max_params": 100}, {"inside_params": 50, "grid_max_params": 80}
    )
    assert censored == 2.0


def test_rank_one_close_refuses_k_above_a_quarter_of_the_facts():
    from verify.claims import Context, load_all

    claim = load_all()["fact_mlp.edit.rank_one_close"]
    p = {**claim.params("quick"), "ks": [1, claim.params("quick")["n_facts"] // 2]}
    with pytest.raises(ValueError, match="k <= F/4"):
        claim.check(p, Context())
