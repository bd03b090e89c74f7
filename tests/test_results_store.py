"""The results store loses nothing: an append after a line cut mid-write starts on a line of its
own, a garbage line is skipped and reported with its file and line, a malformed record (not an
object, no id, not UTF-8) is an error naming the file and the line, and two processes appending
at once lose no record; the committed store is strict JSON and holds only registered claims."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from verify.results import ResultsFileError, ResultStore, non_strict_lines

ROOT = Path(__file__).resolve().parent.parent


def _reject(token):
    raise ValueError(f"not strict JSON: {token}")


def test_an_append_after_a_cut_line_loses_no_later_record(tmp_path, capsys):
    store = ResultStore(tmp_path)
    store.append({"id": "a", "v": 1})
    with store.path.open("ab") as fh:  # a crash in the middle of writing the second record
        fh.write(b'{"id": "b", "v": 2, "deta')
    store.append({"id": "c", "v": 3})
    store.append({"id": "d", "v": 4})
    assert [r["id"] for r in store.records()] == ["a", "c", "d"]
    err = capsys.readouterr().err
    assert f"{store.path}:2: line skipped" in err
    lines = store.path.read_bytes().split(b"\n")
    assert lines[1] == b'{"id": "b", "v": 2, "deta'  # the cut line is kept as it was, not glued


def test_a_line_cut_inside_a_character_is_skipped_not_an_error(tmp_path, capsys):
    store = ResultStore(tmp_path)
    store.append({"id": "a"})
    with store.path.open("ab") as fh:
        fh.write('{"id": "b", "name": "\u00e9'.encode()[:-1])  # half of a two-byte character
    assert [r["id"] for r in store.records()] == ["a"]
    assert f"{store.path}:2" in capsys.readouterr().err


def test_a_garbage_line_is_skipped_and_reported_with_file_and_line(tmp_path, capsys):
    store = ResultStore(tmp_path)
    store.path.write_text('{"id": "a"}\nthis is not json\n{"id": "b"}\n')
    assert [r["id"] for r in store.records()] == ["a", "b"]
    err = capsys.readouterr().err
    assert f"{store.path}:2: line skipped: not JSON" in err


@pytest.mark.parametrize(
    "line, words",
    [
        (b"[1, 2, 3]", "a record must be a JSON object, not list"),
        (b'"text"', "a record must be a JSON object, not str"),
        (b'{"status": "pass"}', "a record must have a string 'id'"),
        (b'{"id": 7}', "a record must have a string 'id'"),
    ],
)
def test_a_malformed_record_names_the_file_and_the_line(tmp_path, line, words):
    store = ResultStore(tmp_path)
    store.path.write_bytes(b'{"id": "a"}\n' + line + b"\n")
    with pytest.raises(ResultsFileError, match=words) as info:
        store.records()
    assert str(info.value).startswith(f"{store.path}:2: ")
    assert isinstance(info.value, ValueError)  # the command line's "error: ..." and exit status 2


def test_a_binary_file_is_an_error_naming_the_file_and_the_line(tmp_path):
    store = ResultStore(tmp_path)
    store.path.write_bytes(bytes(range(255, -1, -1)) * 4)  # starts with 0xff: never UTF-8
    with pytest.raises(ResultsFileError, match="not UTF-8") as info:
        store.records()
    assert str(info.value).startswith(f"{store.path}:1: ")


def test_the_command_line_reports_a_malformed_store_without_a_traceback(tmp_path):
    import subprocess
    import sys

    (tmp_path / "claims.jsonl").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")
    done = subprocess.run(
        [sys.executable, "-m", "verify", "atlas", "--results", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{tmp_path / 'claims.jsonl'}:" in done.stderr and "not UTF-8" in done.stderr


def test_append_refuses_what_is_not_a_record(tmp_path):
    store = ResultStore(tmp_path)
    with pytest.raises(TypeError, match="string 'id'"):
        store.append({"status": "pass"})
    with pytest.raises(TypeError, match="string 'id'"):
        store.append(["id", "a"])
    assert not store.path.exists()


def _writer(folder: str, tag: str, n: int, start) -> None:
    store = ResultStore(folder)
    start.wait()
    for i in range(n):
        store.append({"id": f"{tag}.{i}", "payload": "x" * (1000 + 37 * i)})


def test_two_processes_appending_at_once_lose_nothing(tmp_path):
    ctx = multiprocessing.get_context("spawn")
    start = ctx.Event()
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), tag, 200, start)) for tag in ("p", "q")]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    records = ResultStore(tmp_path).records()
    assert len(records) == 400
    assert {r["id"] for r in records} == {f"{t}.{i}" for t in ("p", "q") for i in range(200)}
    assert all(r["payload"] == "x" * (1000 + 37 * int(r["id"].split(".")[1])) for r in records)


def test_infinity_is_stored_as_strict_json(tmp_path):
    store = ResultStore(tmp_path)
    store.append({"id": "a", "n": float("inf"), "rows": [{"m": float("-inf")}]})
    text = store.path.read_text()
    assert "Infinity" in text and non_strict_lines(store.path) == []
    json.loads(text, parse_constant=_reject)


def test_prune_removes_unregistered_claims_and_rewrites_bare_infinity(tmp_path):
    store = ResultStore(tmp_path)
    store.path.write_text(
        '{"id": "keep", "n": Infinity}\n{"id": "gone", "v": 1}\nnot json\n{"id": "keep", "v": 2}\n'
    )
    assert store.prune({"keep"}, dry_run=True) == {"gone": 1}
    assert non_strict_lines(store.path) == [1]  # a dry run writes nothing
    assert store.prune({"keep"}) == {"gone": 1}
    lines = store.path.read_text().splitlines()
    assert lines == [
        '{"id": "keep", "n": null, "n_nonfinite": "Infinity"}',
        "not json",
        '{"id": "keep", "v": 2}',
    ]


def test_the_committed_store_is_strict_json_of_registered_claims():
    from verify.claims import load_all

    path = ROOT / "results" / "claims.jsonl"
    assert non_strict_lines(path) == []
    ids = {r["id"] for r in ResultStore(path.parent, create=False).records()}
    assert ids - set(load_all()) == set()


def test_records_of_two_machines_are_compared_by_verdict_and_each_claims_tolerance():
    from verify.results import verdict_differences

    base = {"id": "x", "scale": "quick", "seed": 0, "device": "cpu", "dtype": "float64", "params": {"n": 1}}
    emp = {**base, "kind": "empirical", "status": "pass", "measured": {"acc": 0.97}}
    assert verdict_differences(emp, {**emp, "measured": {"acc": 0.95}}) == []  # numbers: the verdict's
    assert verdict_differences(emp, {**emp, "status": "inconclusive"}) == [
        "x: status inconclusive, the reference has pass"
    ]
    ident = {**base, "kind": "identity", "status": "pass", "measured": {"err": 0.0, "sum": 3.0}}
    assert verdict_differences(ident, {**ident, "measured": {"err": 2e-16, "sum": 3.0 + 1e-12}}) == []
    assert verdict_differences(ident, {**ident, "measured": {"err": 1e-6, "sum": 3.0}})  # beyond tolerance
    assert "not comparable" in verdict_differences(emp, {**emp, "params": {"n": 2}})[0]
    assert verdict_differences(emp, {**emp, "status": "skipped"}) == []
