"""Answer tokens for every tokenizer family: a SentencePiece-style tokenizer
(Llama-2 layout: prepend "▁", spaces to "▁", no pre-tokenizer) and a byte-level BPE, both
trained locally with the ``tokenizers`` library; the facts file shipped with the package."""

import pytest

pytest.importorskip("transformers", reason="transformers (extra 'lm') is not installed")

from constructions.lm.text import TextEncoder, facts_path, read_facts  # noqa: E402

CAPITALS = [
    ("France", "Paris"),
    ("Italy", "Rome"),
    ("Spain", "Madrid"),
    ("Peru", "Lima"),
    ("Chad", "Paramaribo"),
]
TEMPLATE = "The capital of {s} is"
CORPUS = [f"The capital of {s} is {a}" for s, a in CAPITALS] * 20


def sentencepiece_style():
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.train_from_iterator(CORPUS, trainers.BpeTrainer(vocab_size=150, special_tokens=["<unk>", "<s>"]))
    # then the Llama-2 layout: the normaliser adds the dummy prefix, no pre-tokeniser
    tok.pre_tokenizer = None
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Metaspace()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="<unk>", bos_token="<s>", add_bos_token=True
    )


def byte_level():
    from tokenizers import ByteLevelBPETokenizer
    from transformers import PreTrainedTokenizerFast

    bl = ByteLevelBPETokenizer()
    bl.train_from_iterator(CORPUS, vocab_size=300, min_frequency=1, special_tokens=["<unk>"])
    return PreTrainedTokenizerFast(tokenizer_object=bl._tokenizer, unk_token="<unk>")


def test_sentencepiece_bare_prefix_is_the_old_bug_and_the_position_rule_fixes_it():
    tok = sentencepiece_style()
    first = {tok(" " + a, add_special_tokens=False)["input_ids"][0] for _, a in CAPITALS}
    assert len(first) == 1 and tok.convert_ids_to_tokens(list(first)) == ["▁"]  # the old rule: 1 candidate
    enc = TextEncoder(tok, TEMPLATE)
    kept, report = enc.prepare(CAPITALS[:4])
    assert report["dropped_not_prefix"] == 0 and report["dropped_collisions"] == 0 and len(kept) == 4
    names = tok.convert_ids_to_tokens([enc.candidate(a) for _, a in kept])
    assert names == ["▁Paris", "▁Rome", "▁Madrid", "▁Lima"]


def test_byte_level_position_rule_and_collisions_dropped_with_a_count():
    tok = byte_level()
    enc = TextEncoder(tok, TEMPLATE)
    # Paris and Paramaribo start with the same byte-level token: both dropped, counted, not merged
    assert (
        enc.answer_token(TEMPLATE.format(s="France"), "Paris")[0]
        == enc.answer_token(TEMPLATE.format(s="Chad"), "Paramaribo")[0]
    )
    kept, report = enc.prepare(CAPITALS)
    assert report["dropped_collisions"] == 2 and report["colliding_answers"] == [["Paramaribo", "Paris"]]
    assert [a for _, a in kept] == ["Rome", "Madrid", "Lima"]
    ids = tok(TEMPLATE.format(s="Italy") + " Rome")["input_ids"]
    assert enc.candidate("Rome") == ids[len(tok(TEMPLATE.format(s="Italy"))["input_ids"])]
    with pytest.raises(ValueError, match="prepare"):
        enc.candidate("Paris")


def test_prompts_follow_the_template():
    tok = byte_level()
    enc = TextEncoder(tok, TEMPLATE)
    demos = [("France", "Paris")]
    text = tok.decode(enc.full(demos, "Italy"))
    assert text == "The capital of France is Paris\nThe capital of Italy is"
    assert tok.decode(enc.context_only(demos)).endswith("The capital of ? is")
    with pytest.raises(ValueError, match="subject slot"):
        TextEncoder(tok, "no slot")


def test_shipped_facts_file():
    relations, templates = read_facts(facts_path())
    assert sum(len(p) for p in relations.values()) >= 300 and len(relations) >= 6
    assert all("{s}" in t for t in templates.values())
    assert ("France", "Paris") in relations["capital"] and ("Gold", "Au") in relations["symbol"]
    for rel, pairs in relations.items():
        assert len(set(pairs)) == len(pairs), rel


def test_facts_file_errors(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("@template\tno slot\tcapital\nFrance\tParis\tcapital\nItaly\tRome\tcapital\n")
    with pytest.raises(ValueError, match="subject slot"):
        read_facts(str(bad))
    ok = tmp_path / "ok.tsv"
    ok.write_text("France\tParis\tcapital\nItaly\tRome\tcapital\n")
    relations, templates = read_facts(str(ok))
    assert templates == {"capital": "{s} ->"} and len(relations["capital"]) == 2
