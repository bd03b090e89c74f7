"""Every command's --json output is one strict JSON document (README.md, "--json prints one strict
JSON document"): the commands run in process (their ``main``), stdout is parsed once with
``json.loads`` rejecting NaN and Infinity, so two documents, a stray line of text or a bare NaN
each fail. The claims run are the cheap ``fact_mlp.decodability`` ones (under a second at quick
scale, ``python -m verify run --dry-run``), written to a scratch results folder that the
commands reading stored records (dry run, rejudge, oc) are pointed at. ``atlas --json`` needs the
records of every atlas family (a full quick run) and ``probe-lm``/``lm-geometry`` a language
model: they are not run here; paper_figs has no --json output."""

from __future__ import annotations

import json

import pytest

from theory.__main__ import main as theory_main
from verify.cli import main as verify_main

CLAIMS = "fact_mlp.decodability.*"
EMPIRICAL = "fact_mlp.decodability.rho_range"


def _reject(token: str):
    raise ValueError(f"{token} is not JSON (a non-finite number must be null with a *_nonfinite note)")


def one_document(text: str):
    """The single strict JSON document ``text`` holds (json.loads fails on a second document)."""
    assert text.strip(), "nothing on stdout"
    return json.loads(text, parse_constant=_reject)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A results folder holding the quick records of CLAIMS (written by ``run --json``), and that
    run's stdout."""
    import contextlib
    import io

    root = tmp_path_factory.mktemp("results")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert verify_main(["run", CLAIMS, "--out", str(root), "--json"]) == 0
    return root, out.getvalue()


def test_run_json_is_one_list_of_records(results):
    _, text = results
    records = one_document(text)
    assert isinstance(records, list) and len(records) == 4
    assert {r["id"] for r in records} == {
        "fact_mlp.decodability.rho_solver",
        "fact_mlp.decodability.rho_range",
        "fact_mlp.decodability.rho_interior",
        "fact_mlp.decodability.rho_anisotropy",
    }


COMMANDS = {
    "verify list --json": (verify_main, ["list", "--json"], list),
    "verify list PATTERN --json --where": (verify_main, ["list", CLAIMS, "--json", "--where"], list),
    "verify list NOTHING --json": (verify_main, ["list", "no.such.claim", "--json"], list),
    "verify run --dry-run --json": (verify_main, ["run", CLAIMS, "--dry-run", "--json"], dict),
    "verify falsify --json": (verify_main, ["falsify", "fact_mlp.decodability.rho_interior", "--json"], dict),
    "verify rejudge --json": (verify_main, ["rejudge", "--scale", "quick", "--json"], dict),
    "verify oc --json": (verify_main, ["oc", EMPIRICAL, "--reps", "5", "--json"], dict),
    "verify stability --json": (verify_main, ["stability", "fact_mlp.decodability.rho_solver", "--seeds", "0,1", "--out", "{root}/stability", "--json"], dict),
    "theory list --json": (theory_main, ["list", "fact_mlp", "--json"], list),
    "theory eval --json": (theory_main, ["eval", "fact_mlp.info_bits", "n_facts=1000", "n_values=1000", "--json"], dict),
    "theory eval grid --json": (theory_main, ["eval", "fact_mlp.info_bits", "n_facts=10,100", "n_values=2,4", "--json"], list),
}  # fmt: skip


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_json_output_is_one_strict_document(command, results, capsys, monkeypatch):
    root, _ = results
    monkeypatch.setenv("RECALL_RESULTS", str(root))  # the records written above, not the checkout's
    main, argv, kind = COMMANDS[command]
    argv = [a.replace("{root}", str(root)) for a in argv]
    capsys.readouterr()
    assert main(argv) == 0
    document = one_document(capsys.readouterr().out)
    assert isinstance(document, kind), f"{command}: a {type(document).__name__}, not a {kind.__name__}"


def test_the_scratch_records_are_the_ones_read(results, capsys, monkeypatch):
    root, _ = results
    monkeypatch.setenv("RECALL_RESULTS", str(root))
    assert verify_main(["rejudge", "--scale", "quick", "--json"]) == 0
    document = one_document(capsys.readouterr().out)
    assert document["results"] == str(root / "claims.jsonl") and len(document["records"]) == 4
    assert verify_main(["oc", EMPIRICAL, "--reps", "5", "--json"]) == 0
    assert EMPIRICAL in one_document(capsys.readouterr().out)["claims"]


def test_bench_json_is_one_list_of_rows(capsys, monkeypatch):
    """``verify bench --json`` prints the list of its rows once (it printed one document per row),
    with a non-finite value as null and its note (the benches themselves take minutes: two rows
    stand in for them)."""
    from theory.registry import Registry
    from verify import bench

    bench.load_benches()  # the bench modules register their rows in the real registry, before the patch
    rows = Registry("bench")
    rows.add("fast", lambda device: {"name": "fast", "seconds": 0.25, "device": device})
    rows.add("broken", lambda device: {"name": "broken", "seconds": float("nan"), "ratio": float("inf")})
    monkeypatch.setattr(bench, "BENCHES", rows)
    monkeypatch.setattr(bench, "EXPLICIT_ONLY", ())
    assert verify_main(["bench", "--json", "--device", "cpu"]) == 0
    document = one_document(capsys.readouterr().out)
    assert [row["name"] for row in document] == ["fast", "broken"]
    assert document[1]["seconds"] is None and document[1]["seconds_nonfinite"] == "NaN"
    assert document[1]["ratio"] is None and document[1]["ratio_nonfinite"] == "Infinity"


def test_the_parser_rejects_what_it_must():
    with pytest.raises(json.JSONDecodeError):
        one_document('[{"a": 1}]\n[{"b": 2}]')  # two documents
    with pytest.raises(ValueError, match="NaN is not JSON"):
        one_document('{"a": NaN}')
    with pytest.raises(ValueError, match="Infinity is not JSON"):
        one_document("[-Infinity]")
