"""Answer-table geometry (constructions/lm/geometry.py), the ``python -m verify lm-geometry`` command,
its figure and its README table, on a tiny saved Llama with a word-level tokenizer."""

import json
import math

import numpy as np
import pytest

from constructions.lm.geometry import random_table, table_geometry, unit_rows

WORDS = ["<unk>", "<s>", "</s>", "capital", "of", "is", "france", "italy", "spain", "peru"]
WORDS += ["paris", "rome", "madrid", "lima"]
FACTS = (
    "@template\tcapital of {s} is\tcapital\n"
    "france\tparis\tcapital\nitaly\trome\tcapital\nspain\tmadrid\tcapital\nperu\tlima\tcapital\n"
    # two answers outside the vocabulary: both first tokens are <unk>, so they collide
    "@template\t{s} is\todd\nfrance\tzzz\todd\nitaly\tyyy\todd\nspain\tparis\todd\nperu\trome\todd\n"
)


def _strict(text):
    def bad(name):
        raise AssertionError(f"non-strict JSON constant {name}")

    return json.loads(text, parse_constant=bad)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    pytest.importorskip("transformers", reason="transformers (extra 'lm') is not installed")
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from constructions.hopfield.lm import tiny_llama

    folder = tmp_path_factory.mktemp("tiny_geom")
    tok = Tokenizer(models.WordLevel(vocab={w: k for k, w in enumerate(WORDS)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>").save_pretrained(folder)
    tiny_llama(0, "float32").save_pretrained(folder)
    facts = folder / "facts.tsv"
    facts.write_text(FACTS)
    return folder, facts


def test_answer_table_shape_unit_norms_and_collisions(tiny):
    from constructions.lm.geometry import answer_tables
    from constructions.lm.load import load_model

    folder, facts = tiny
    model, tok, _ = load_model(str(folder))
    tables = answer_tables(model, tok, str(facts))
    cap = tables["capital"]
    assert cap.answers == ["lima", "madrid", "paris", "rome"]
    assert cap.rows.shape == (4, model.config.hidden_size)
    assert np.allclose(np.linalg.norm(cap.rows, axis=1), 1.0, atol=1e-12)
    W = model.get_output_embeddings().weight.detach().double().numpy()
    ids = [cap.report["answer_tokens"][a] for a in cap.answers]
    assert ids == [WORDS.index(a) for a in cap.answers]
    assert np.allclose(cap.rows, W[ids] / np.linalg.norm(W[ids], axis=1, keepdims=True))
    odd = tables["odd"]  # zzz and yyy share <unk>: dropped and counted, not merged
    assert odd.answers == ["paris", "rome"] and odd.rows.shape[0] == 2
    assert odd.report["dropped_collisions"] == 2 and odd.report["colliding_answers"] == [["yyy", "zzz"]]


def test_geometry_numbers_against_theory():
    g = table_geometry(np.eye(5))
    assert math.isclose(g.rho, math.sqrt(0.5 + 0.5 / 4), rel_tol=1e-9)
    assert g.certificate_holds and 0 <= g.certificate_gap <= 1e-9
    assert math.isclose(g.b2_code_dim, 8 * math.log(5) / g.rho**2)
    assert g.b2_suffices is False and (g.width, g.n_values) == (5, 5)
    # the most extreme cosine is negative: coherence (absolute) and the signed one differ,
    # and the margin is 1 - the signed maximum
    rows = unit_rows([[1.0, 0.0, 0.0], [-0.9, math.sqrt(1 - 0.81), 0.0], [0.5, 0.0, math.sqrt(0.75)]])
    g = table_geometry(rows)
    assert math.isclose(g.coherence, 0.9) and math.isclose(g.coherence_signed, 0.5)
    assert math.isclose(g.min_margin, 0.5)
    assert g.rho >= g.rho_lower_bound - 1e-12
    # scaling rows changes nothing: the geometry is that of the directions
    assert table_geometry(rows * np.array([[2.0], [0.5], [7.0]])).rho == pytest.approx(g.rho, abs=1e-12)


def test_identical_directions_are_refused_as_the_theory_decides():
    from theory.fact_mlp.rho import decodability

    rows = np.array([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 1.0]])
    with pytest.raises(ValueError, match="duplicate"):
        decodability(unit_rows(rows))  # the theory module's decision ...
    with pytest.raises(ValueError, match="duplicate"):
        table_geometry(rows)  # ... is ours
    with pytest.raises(ValueError, match="n_values >= 2"):
        table_geometry(np.ones((1, 3)))
    with pytest.raises(ValueError, match="zero"):
        unit_rows(np.zeros((2, 3)))


def test_random_control_reproducible_from_its_seed():
    a, b = random_table(30, 64, seed=7), random_table(30, 64, seed=7)
    assert np.array_equal(a, b) and not np.array_equal(a, random_table(30, 64, seed=8))
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0)
    ref = np.random.default_rng(7).standard_normal((30, 64))
    assert np.allclose(a, ref / np.linalg.norm(ref, axis=1, keepdims=True))
    assert table_geometry(a) == table_geometry(b)
    with pytest.raises(ValueError):
        random_table(0, 3, seed=0)


def test_command_writes_strict_json_and_reproduces(tiny, tmp_path, capsys):
    from verify.cli import main

    folder, facts = tiny
    out = tmp_path / "res"
    rc = main(
        [
            "lm-geometry",
            "--model",
            str(folder),
            "--pairs",
            str(facts),
            "--seed",
            "3",
            "--out",
            str(out),
            "--json",
        ]
    )
    assert rc == 0
    printed = _strict(capsys.readouterr().out)
    stored = _strict((out / "lm_geometry.json").read_text())
    assert printed == stored
    assert stored["seed"] == 3 and stored["versions"]["numpy"] == np.__version__
    (m,) = stored["models"]
    assert m["spec"] == str(folder) and m["dtype"] == "float32" and m["device"] == "cpu"
    assert set(m["relations"]) == {"capital", "odd"} and m["seconds"]["load"] >= 0
    cap = m["relations"]["capital"]
    real, rand = cap["real"], cap["random"]
    assert real["n_values"] == 4 and real["width"] == 64 and 0 < real["rho"] <= 1
    assert real["certificate_holds"] and real["min_margin"] == pytest.approx(1 - real["coherence_signed"])
    again = table_geometry(random_table(4, 64, rand["seed"])).as_dict()
    assert rand == dict(again, seed=3)
    assert m["relations"]["odd"]["tokenisation"]["dropped_collisions"] == 2


def test_command_exit_2_on_unknown_model(tmp_path, capsys):
    pytest.importorskip("transformers", reason="transformers (extra 'lm') is not installed")
    from verify.cli import main

    rc = main(["lm-geometry", "--model", str(tmp_path / "no-such-model"), "--out", str(tmp_path)])
    assert rc == 2
    assert "not found" in capsys.readouterr().err
    assert not (tmp_path / "lm_geometry.json").exists()


def test_figure_and_readme_table_from_the_stored_file(tmp_path):
    from paper_figs.docs_lm import lm_geometry_table
    from paper_figs.registry import load_all, pyplot

    plt = pyplot()
    spec = load_all()["lm.fig_answer_geometry"]
    assert spec.files == ("lm_geometry.json",)
    with pytest.raises(LookupError, match="lm-geometry"):
        spec.draw({}, results=tmp_path)
    g = table_geometry(np.eye(3)).as_dict()
    r = table_geometry(random_table(3, 3, 0)).as_dict()
    record = {
        "seed": 0,
        "git": "abc",
        "models": [
            {"spec": "/x/m.gguf", "relations": {"capital": {"real": g, "random": dict(r, seed=0)}}},
        ],
    }
    (tmp_path / "lm_geometry.json").write_text(json.dumps(record))
    fig = spec.draw({}, results=tmp_path)
    assert len(fig.axes) == 3 and all(ax.get_ylabel() and ax.get_title() for ax in fig.axes)
    assert "m (d = 3)" in fig.axes[0].get_title() and fig.axes[2].get_yscale() == "log"
    plt.close(fig)
    table = lm_geometry_table(tmp_path / "lm_geometry.json")
    row = [line for line in table.splitlines() if line.startswith("| m | capital |")]
    assert row and f"| {g['rho']:.3f} |" in row[0] and f"| {r['rho']:.3f} |" in row[0]
