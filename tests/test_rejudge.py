"""verify rejudge: stored records judged by today's criteria, without re-running."""

from __future__ import annotations

import json

import pytest

from verify.claims import CLAIMS, Claim, Context, Outcome, load_all
from verify.criteria import Threshold
from verify.ledger import LEDGER, LedgerEntry
from verify.rejudge import BEGIN, END, REPLACED, rejudge, rejudge_record
from verify.results import ResultStore, reference_root
from verify.runner import run_claim

TOY = "geometric.toy_rejudge.level"


def _check(params, ctx):
    return Outcome.judged(Threshold("level", params["threshold"], ">=", "convention").judge(0.8))


def _toy(threshold: float = 0.5, statement: str = "level >= 0.5") -> Claim:
    return Claim(
        TOY, "test", "derived", statement, {"threshold": threshold}, {"threshold": threshold}, _check
    )


@pytest.fixture
def toy(monkeypatch):
    load_all()
    monkeypatch.setitem(CLAIMS, TOY, _toy())
    return monkeypatch


def test_a_record_under_the_current_criterion_keeps_its_verdict_with_todays_ledger(toy):
    record = run_claim(CLAIMS[TOY], Context(scale="full"))
    assert record["status"] == "pass" and record["resolution"]
    row = rejudge_record(record, CLAIMS, "full")
    assert (row["basis"], row["status"]) == ("current criterion", "pass")
    toy.setitem(LEDGER, TOY, LedgerEntry(TOY, "m", "t", "r"))  # ledgered since the record was made
    assert rejudge_record(record, CLAIMS, "full")["status"] == "ledger now passes"


def test_a_record_of_a_replaced_criterion_is_never_a_pass(toy):
    record = run_claim(CLAIMS[TOY], Context(scale="full"))
    toy.setitem(CLAIMS, TOY, _toy(0.9, "level >= 0.9"))  # the criterion changed since
    row = rejudge_record(record, CLAIMS, "full")
    assert row["status"] == REPLACED and row["stored_status"] == "pass"
    assert "its statement differs from the current one" in row["reasons"]
    no_resolution = {k: v for k, v in record.items() if k != "resolution"}
    toy.setitem(CLAIMS, TOY, _toy())
    assert rejudge_record(no_resolution, CLAIMS, "full")["status"] == REPLACED


def test_a_judge_hook_rejudges_the_stored_measurement(toy):
    record = run_claim(CLAIMS[TOY], Context(scale="full"))

    def check(params, ctx):
        return _check(params, ctx)

    check.judge = lambda params, rec: Threshold("level", 0.9, ">=", "convention").judge(
        rec["measured"]["level"]
    )
    toy.setitem(CLAIMS, TOY, Claim(TOY, "test", "derived", "level >= 0.9", {}, {}, check))
    row = rejudge_record(record, CLAIMS, "full")
    assert (row["basis"], row["status"]) == ("rejudged", "fail") and row["resolution"]["text"]


def test_rejudge_writes_only_the_readme_section(toy, tmp_path, capsys):
    from verify.cli import main

    store = ResultStore(tmp_path)
    store.append(run_claim(CLAIMS[TOY], Context(scale="full")))
    store.append({**run_claim(CLAIMS[TOY], Context(scale="full")), "id": "gone.toy.claim"})
    before = (tmp_path / "claims.jsonl").read_text()
    (tmp_path / "README.md").write_text("# full\n\nintro\n")
    for _ in range(2):  # a second write replaces the section
        assert main(["rejudge", "--results", str(tmp_path), "--write", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out.splitlines()[0])
    assert {r["id"]: r["status"] for r in doc["records"]} == {TOY: "pass", "gone.toy.claim": "claim removed"}
    text = (tmp_path / "README.md").read_text()
    assert text.startswith("# full\n\nintro\n") and text.count(BEGIN) == 1 and text.count(END) == 1
    assert (tmp_path / "claims.jsonl").read_text() == before
    with pytest.raises(SystemExit):
        main(["rejudge", "--scale", "huge"])


def test_missing_results_are_an_error(tmp_path, capsys):
    from verify.cli import main

    assert main(["rejudge", "--results", str(tmp_path / "none")]) == 2
    assert "no stored results" in capsys.readouterr().err


def test_no_stored_full_record_passes_under_a_replaced_criterion():
    path = reference_root() / "full" / "claims.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is not in this checkout")
    rows = rejudge(ResultStore(path.parent, create=False).records(), "full")
    passes = [r for r in rows if r["status"] == "pass"]
    assert all(r["basis"] in ("current criterion", "rejudged") for r in passes)
    assert all(r["basis"] == REPLACED for r in rows if r["status"] == REPLACED)


def test_a_record_older_than_a_stored_rule_replacement_is_judged_by_the_replaced_rule(toy):
    import subprocess

    from verify import rejudge as module
    from verify.results import REPO

    head, parent = (
        subprocess.run(["git", "rev-parse", rev], cwd=REPO, capture_output=True, text=True).stdout.strip()
        for rev in ("HEAD", "HEAD~1")
    )
    if not head or not parent:
        pytest.skip("no git history in this checkout")
    record = {**run_claim(CLAIMS[TOY], Context(scale="full")), "code": parent}
    toy.setattr(module, "replaced_rules", lambda cid: [{"revision": head, "rule": "the point rule"}])
    row = rejudge_record(record, CLAIMS, "full")
    assert row["status"] == REPLACED and "the point rule" in row["reasons"][0]
    assert rejudge_record({**record, "code": head}, CLAIMS, "full")["status"] == "pass"


def test_a_pass_the_operating_gate_refuses_is_listed_with_its_reason(toy):
    import verify.runner
    from verify.rejudge import summary_markdown

    record = run_claim(CLAIMS[TOY], Context(scale="full"))
    assert rejudge_record(record, CLAIMS, "full").get("gate") is None  # nothing stored: no gate
    toy.setattr(verify.runner, "operating_gate", lambda cid, scale: "an alternative passes 0.2")
    row = rejudge_record(record, CLAIMS, "full")
    assert (row["verdict"], row["status"], row["gate"]) == (
        "pass",
        "inconclusive",
        "an alternative passes 0.2",
    )
    text = summary_markdown([row], "full", "claims.jsonl")
    assert f"- `{TOY}` (derived): an alternative passes 0.2" in text
    assert "No record is judged by a replaced criterion." in text
