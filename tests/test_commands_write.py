"""Commands write only what they say: `verify run` on a few claims rebuilds report.md from the
newest record of every registered claim (it never shrinks), `verify atlas` writes atlas.json only
with --write, `verify prune` removes the records of unregistered claims and says so; the committed
atlas.json and report.md are what the commands compute from the committed records."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from theory.cli_support import dumps
from verify.results import REPORT_FILE, RESULTS_ENV, ResultStore, write_report

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"
FAST = "chapters.router.zloss_zero_logits"


def _main(capsys, *args):
    from verify.cli import main

    try:
        code = main(list(args))
    except SystemExit as stop:
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


def test_the_committed_report_is_the_newest_record_of_every_registered_claim(tmp_path):
    from verify.commands import report_records, report_summary

    records = report_records(ResultStore(RESULTS, create=False))
    assert len(records) > 100
    computed = write_report(records, tmp_path / REPORT_FILE, report_summary(records, RESULTS)).read_text()
    stored = (RESULTS / REPORT_FILE).read_text()
    assert computed == stored, "results/report.md is stale: `python -m verify prune` or a run rebuilds it"


def test_the_committed_atlas_is_what_verify_atlas_computes_from_the_committed_records():
    from verify.atlas.core import atlas_from_results

    computed = dumps(atlas_from_results(RESULTS), indent=1) + "\n"
    stored = (RESULTS / "atlas.json").read_text()
    assert computed == stored, "results/atlas.json is stale: `python -m verify atlas --write` rewrites it"


def test_run_of_one_claim_keeps_every_other_claim_in_the_report(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv(RESULTS_ENV, raising=False)
    shutil.copy(RESULTS / "claims.jsonl", tmp_path / "claims.jsonl")
    shutil.copy(RESULTS / REPORT_FILE, tmp_path / REPORT_FILE)
    before = (tmp_path / REPORT_FILE).read_text()
    code, _, err = _main(capsys, "run", FAST, "--out", str(tmp_path), "--jobs", "1")
    assert code == 0, err
    after = (tmp_path / REPORT_FILE).read_text()
    assert len(after.splitlines()) == len(before.splitlines()) > 150

    def ids(text):
        return [line.split("|")[1].strip() for line in text.splitlines() if line.startswith("| `")]

    assert ids(after) == ids(before) and f"`{FAST}`" in ids(after)


def test_a_resumed_record_becomes_the_newest_so_the_report_shows_what_the_run_reported(tmp_path, capsys):
    code, _, err = _main(capsys, "run", FAST, "--out", str(tmp_path), "--jobs", "1")
    assert code == 0, err
    store = ResultStore(tmp_path)
    first = store.records()[0]
    store.append(dict(first, status="error", error="a later crash"))
    code, _, err = _main(capsys, "run", FAST, "--out", str(tmp_path), "--jobs", "1")
    assert code == 0, err
    records = store.records()
    assert len(records) == 3 and records[-1] == first  # resumed, appended again as the newest
    report = (tmp_path / REPORT_FILE).read_text()
    assert "a later crash" not in report and f"| `{FAST}` |" in report


def test_atlas_reads_unless_given_write(tmp_path, capsys):
    from tests.atlas.test_atlas import fake_records

    (tmp_path / "claims.jsonl").write_text("\n".join(json.dumps(r) for r in fake_records()) + "\n")
    code, out, err = _main(capsys, "atlas", "--results", str(tmp_path))
    assert code == 0, err
    assert not (tmp_path / "atlas.json").exists() and "--write" in out
    code, out, err = _main(capsys, "atlas", "--json", "--results", str(tmp_path))
    assert code == 0 and not (tmp_path / "atlas.json").exists()
    code, out, err = _main(capsys, "atlas", "--json", "--write", "--results", str(tmp_path))
    assert code == 0, err
    assert json.loads(out) == json.loads((tmp_path / "atlas.json").read_text())


def test_prune_says_what_it_removed(tmp_path, capsys):
    store = ResultStore(tmp_path)
    store.append({"id": FAST, "status": "pass"})
    store.append({"id": "chapters.memory.zero_init_negative", "status": "pass"})
    code, out, _ = _main(capsys, "prune", "--results", str(tmp_path), "--dry-run")
    assert code == 0 and "would remove 1 record(s) of chapters.memory.zero_init_negative" in out
    assert len(store.records()) == 2
    code, out, _ = _main(capsys, "prune", "--results", str(tmp_path))
    assert code == 0 and "removed 1 record(s) of chapters.memory.zero_init_negative" in out
    assert [r["id"] for r in store.records()] == [FAST]
    assert not (tmp_path / REPORT_FILE).exists()  # no report was there: none is made


def test_the_report_opens_with_what_a_reader_acts_on(tmp_path):
    from verify.commands import rebuild_report

    store = ResultStore(tmp_path)
    base = {"scale": "quick", "seed": 0, "device": "cpu", "dtype": "float64", "provenance": "derived"}
    store.append({**base, "id": "geometric.gd.fit", "status": "pass"})
    store.append({**base, "id": "geometric.gd.intervention", "status": "not reproduced", "ledger": "why"})
    store.append(
        {**base, "id": "geometric.gd.superposition", "status": "inconclusive", "inconclusive": "6 seeds"}
    )
    store.append({**base, "id": "geometric.gd.relation_selective", "status": "fail"})
    text = rebuild_report(store).read_text()
    head = text.split("## Every claim")[0]
    assert "## Start here" in head and "1 fail, 1 inconclusive, 1 not reproduced, 1 pass" in head
    assert "| geometric | 9 |" in head  # the papers' statements by the scorecards' rule
    assert "- `geometric.gd.intervention`: why" in head and "docs/ledger.md" in head
    assert "- `geometric.gd.superposition`: 6 seeds" in head and "docs/claims.md" in head
    assert "- `geometric.gd.relation_selective`: fail" in head
