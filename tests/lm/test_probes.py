"""The two cross-paper probes' computations (constructions/lm/probes.py) on synthetic data and on
the tiny random Llama; the real-model claims run in tests/test_claims_quick.py."""

import numpy as np
import pytest

from constructions.lm import probes as P


def test_ridge_recovers_a_linear_map_and_not_noise():
    gen = np.random.default_rng(0)
    F = gen.normal(size=(60, 8))
    Y = F @ gen.normal(size=(8, 5)) + 0.1 * gen.normal(size=(60, 5))
    folds = P.kfolds(60, 5, gen)
    assert sorted(np.concatenate(folds).tolist()) == list(range(60))
    assert P.ridge_cv_r2(F, Y, folds, alpha_scale=0.01) > 0.95
    assert P.ridge_cv_r2(F, gen.normal(size=(60, 5)), folds) < 0.05
    with pytest.raises(ValueError, match="same number"):
        P.ridge_cv_r2(F[:3], Y[:3], [np.arange(1)])


def test_attribute_r2_sees_attributes_and_shuffling_removes_them():
    gen = np.random.default_rng(1)
    U = gen.normal(size=(40, 16))
    rels = ("a", "b")
    table = [(f"s{i}", {"a": f"x{i % 7}", "b": f"y{i % 5}"}) for i in range(70)]
    token_of = {"a": {f"x{k}": k for k in range(7)}, "b": {f"y{k}": 10 + k for k in range(5)}}
    clean = np.stack([sum(U[token_of[r][attrs[r]]] for r in rels) for _, attrs in table])
    states = np.stack([clean, clean + 0.1 * gen.normal(size=clean.shape)], axis=1)
    r2 = P.attribute_r2(U, states, table, token_of, np.random.default_rng(2))
    shuffled = P.attribute_r2(U, states, table, token_of, np.random.default_rng(2), shuffle=True)
    assert min(r2) > 0.8 and max(shuffled) < 0.2


def test_override_summary_counts():
    rows = [
        {"n": n, "follows": n > 0, "keeps_fact": n == 0, "predicted": n > 1, "predicted_other": False}
        for n in (0, 1, 2)
        for _ in range(2)
    ]
    s = P.override_summary(rows)
    assert s["reps"] == [0, 1, 2] and s["override_rate"] == [0.0, 1.0, 1.0]
    assert s["predicted_rate"] == [0.0, 0.0, 1.0] and s["agreement_with_context"] == 0.5
    assert P.override_summary(rows, "other")["agreement_with_context"] == 0.0


def test_override_probe_and_states_on_tiny_model():
    pytest.importorskip("transformers", reason="transformers (extra 'lm') is not installed")
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from constructions.hopfield.lm import TextEncoder, tiny_llama

    words = [
        "<unk>",
        "the",
        "capital",
        "of",
        "is",
        "in",
        "this",
        "story",
        ",",
        ".",
        "?",
        "facts",
        "about",
        "france",
        "italy",
        "spain",
        "paris",
        "rome",
        "madrid",
    ]
    tok = Tokenizer(models.WordLevel(vocab={w: k for k, w in enumerate(words)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>")
    model = tiny_llama(0, "float32")
    enc = TextEncoder(fast, "the capital of {s} is")
    pairs, report = enc.prepare([("france", "paris"), ("italy", "rome"), ("spain", "madrid")])
    assert report["kept"] == 3
    rows = P.override_probe(model, enc, pairs, [a for _, a in pairs], [0, 1, 2], np.random.default_rng(0), 3)
    assert len(rows) == 9 and all(r["counterfactual"] != r["answer"] for r in rows)
    # n = 0: no context, b = 0, so the prediction is the model's own zero-shot choice
    assert all(r["predicted"] == r["follows"] for r in rows if r["n"] == 0)
    # each boolean's margin beside it: > 0 exactly where the counterfactual is the argmax
    for r in rows:
        assert (r["follows_margin"] > 0) == r["follows"] and (r["predicted_margin"] > 0) == r["predicted"]
        if "follows_other_context" in r:
            assert (r["follows_other_context_margin"] > 0) == r["follows_other_context"]
            assert (r["predicted_other_context_margin"] > 0) == r["predicted_other_context"]
    states = P.subject_states(model, fast, ["france", "italy"])
    assert states.shape == (2, 3, 64) and np.all(np.isfinite(states))
    found, tried = P.known_facts(model, enc, pairs, np.random.default_rng(0), 2)
    assert tried <= 3 and len(found) <= 2


def test_probe_figures_draw_from_records():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from paper_figs.registry import load_all

    figs = load_all()
    sup = {
        "status": "not reproduced",
        "params": {"threshold": 0.1},
        "details": {
            "model": {"model": "m"},
            "r2_by_layer": [0.0, 0.05, 0.09],
            "middle_layer": 1,
            "subjects": 50,
        },
        "controls": [{"name": "shuffled_attributes", "measured": {"r2_middle": -0.05, "layer": 1}}],
    }
    ovr = {
        "status": "not reproduced",
        "details": {
            "model": {"model": "m"},
            "known_facts": 8,
            "summary": {
                "reps": [0, 1, 2],
                "override_rate": [0, 0.5, 1],
                "keeps_fact_rate": [1, 0.5, 0],
                "predicted_rate": [0, 0, 0],
                "agreement_with_context": 0.25,
            },
        },
        "controls": [{"name": "random_weights", "measured": {"override_at_max": 0.0, "agreement": 1.0}}],
    }
    records = {"hopfield.lm.superposition_ridge": sup, "hopfield.lm.context_override": ovr}
    for fid in ("hopfield_lm.fig_superposition", "hopfield_lm.fig_override"):
        fig = figs[fid].draw(records)
        assert fig.axes and all(ax.get_xlabel() and ax.get_ylabel() for ax in fig.axes)
        plt.close(fig)
