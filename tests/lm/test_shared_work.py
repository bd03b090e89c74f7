"""The lm claims' shared and hoisted work gives the numbers of the plain computation, bit for bit
(docs/hopfield.md): the ridge fits of every layer on one set of features, the random-weights
control drawn in place, one tokenisation of a relation shared by the claims and controls, and
the pipeline claim's two tiny-model runs shared with its control."""

import numpy as np
import pytest

from constructions.lm import probes as P


def _old_ridge_cv_r2(features, targets, folds, alpha_scale=1.0):
    """ridge_cv_r2 as it was: everything recomputed for one target."""
    F, Y = np.asarray(features, float), np.asarray(targets, float)
    sse = sst = 0.0
    for test in folds:
        train = np.setdiff1d(np.arange(F.shape[0]), test)
        fm, ym = F[train].mean(0), Y[train].mean(0)
        Ft, Yt = F[train] - fm, Y[train] - ym
        K = Ft @ Ft.T
        alpha = alpha_scale * np.trace(K) / len(train)
        coef = np.linalg.solve(K + alpha * np.eye(len(train)), Yt)
        pred = ((F[test] - fm) @ Ft.T) @ coef
        sse += float(np.sum((Y[test] - ym - pred) ** 2))
        sst += float(np.sum((Y[test] - ym) ** 2))
    return 1.0 - sse / sst


def test_ridge_of_many_targets_equals_one_fit_each():
    gen = np.random.default_rng(4)
    F = gen.normal(size=(54, 96))
    states = gen.normal(size=(54, 7, 24)) + (F @ gen.normal(size=(96, 24)))[:, None, :] * 0.1
    folds = P.kfolds(54, 5, gen)
    many = P.ridge_cv_r2_many(F, [states[:, layer] for layer in range(7)], folds)
    assert many == [_old_ridge_cv_r2(F, states[:, layer], folds) for layer in range(7)]
    assert P.ridge_cv_r2(F, states[:, 3], folds, 0.5) == _old_ridge_cv_r2(F, states[:, 3], folds, 0.5)
    with pytest.raises(ValueError, match="no variance"):
        P.ridge_cv_r2_many(F, [np.ones((54, 2))], folds)


def test_random_like_drawn_in_place_equals_the_copied_draw():
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers", reason="transformers (extra 'lm') is not installed")
    from transformers import LlamaConfig, LlamaForCausalLM

    from constructions.lm.load import random_like

    config = LlamaConfig(
        vocab_size=64,
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        tie_word_embeddings=True,
    )
    with torch.random.fork_rng(devices=[]):
        base = LlamaForCausalLM(config)
        old = LlamaForCausalLM(config)
    gen = torch.Generator().manual_seed(11)
    with torch.no_grad():  # the draw as it was: a fresh normal tensor, times 0.02, copied in
        for name, param in sorted(old.named_parameters()):
            if "norm" in name:
                param.fill_(1.0)
            else:
                param.copy_(torch.randn(param.shape, generator=gen, dtype=torch.float32) * 0.02)
    new = random_like(base, 11)
    a, b = new.state_dict(), old.state_dict()
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_prepared_encoder_is_shared_and_equals_a_fresh_one(monkeypatch):
    pytest.importorskip("transformers", reason="transformers (extra 'lm') is not installed")
    from constructions.lm.text import TextEncoder
    from tests.lm.test_tokenisation import CAPITALS, TEMPLATE, byte_level
    from verify.claims import Context
    from verify.hopfield import lm_setup

    tok = byte_level()  # the model "m" of this test: only its tokenizer is read
    monkeypatch.setattr(lm_setup, "load_lm", lambda ctx, spec, random_seed=None: (None, tok, {}))
    ctx = Context(seed=0)
    enc, kept, report = lm_setup.prepared_encoder(ctx, "m", TEMPLATE, CAPITALS)
    again = lm_setup.prepared_encoder(ctx, "m", TEMPLATE, list(CAPITALS))
    assert again[0] is enc  # one tokenisation per run
    fresh = TextEncoder(tok, TEMPLATE)
    assert (kept, report) == fresh.prepare(CAPITALS) and enc.tokens == fresh.tokens
    assert lm_setup.prepared_encoder(Context(seed=0), "m", TEMPLATE, CAPITALS)[1:] == (kept, report)


def test_pipeline_control_reuses_the_claims_tiny_runs(monkeypatch):
    pytest.importorskip("transformers", reason="transformers (extra 'lm') is not installed")
    import constructions.hopfield.lm as L
    from verify.claims import Context, as_outcome
    from verify.hopfield import lm_pipeline

    calls = []
    real = L.tiny_llama
    monkeypatch.setattr(L, "tiny_llama", lambda *a, **k: calls.append(a) or real(*a, **k))
    ctx = Context(seed=0)
    params = {"n_pairs": 6, "k_demo": 2, "interaction": 0.0}
    main = as_outcome(lm_pipeline.lm_probe_pipeline(params, ctx))
    control = as_outcome(lm_pipeline.lm_probe_pipeline(dict(params, interaction=1.0), ctx))
    assert len(calls) == 2  # the claim's two runs; the control changes only the stub
    assert main.passed and not control.passed and main.measured["deterministic"]
