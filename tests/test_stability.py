"""verify stability: verdicts across base seeds, and the ledger's flips_with_seed entries."""

from __future__ import annotations

import json

import pytest

from verify.claims import CLAIMS, Claim, Context, Outcome, load_all
from verify.ledger import BY_SCALE, LEDGER, LedgerEntry
from verify.runner import is_failure, run_claim
from verify.stability import assess, criterion_verdict, parse_seeds

TOY = "geometric.toy_stability.parity"
STEADY = "geometric.toy_stability.steady"


def _toy(cid: str, check) -> Claim:
    return Claim(cid, "test", "derived", "s", {}, {}, check, kind="identity", independence="toy")


@pytest.fixture
def toys(monkeypatch):
    """Two toy claims in the registry: one passes at even base seeds only, one at every seed."""
    load_all()
    monkeypatch.setitem(CLAIMS, TOY, _toy(TOY, lambda p, ctx: Outcome(0, ctx.seed % 2, ctx.seed % 2 == 0)))
    monkeypatch.setitem(CLAIMS, STEADY, _toy(STEADY, lambda p, ctx: Outcome(0, 0, True)))
    return monkeypatch


def _stability(capsys, *args):
    from verify.cli import main

    code = main(["stability", *args])
    return code, capsys.readouterr()


def test_a_flipping_claim_is_listed_with_its_numbers_and_fails_the_command(toys, tmp_path, capsys):
    code, io = _stability(capsys, TOY, STEADY, "--seeds", "0,1,2", "--out", str(tmp_path), "--json")
    doc = json.loads(io.out)  # one strict JSON document
    rows = {r["id"]: r for r in doc["claims"]}
    assert code == 1 and doc["summary"]["flipping"] == [TOY]
    assert rows[TOY]["verdict"] == {"0": "pass", "1": "fail", "2": "pass"}
    assert rows[TOY]["numbers"]["1"] == "1" and rows[TOY]["problems"]
    assert not rows[STEADY]["flips"] and rows[STEADY]["problems"] == []
    records = [json.loads(line) for line in (tmp_path / "claims.jsonl").read_text().splitlines()]
    assert sorted((r["id"], r["seed"]) for r in records) == sorted(
        (cid, s) for cid in (TOY, STEADY) for s in (0, 1, 2)
    )


def test_a_flips_with_seed_entry_makes_the_claim_not_reproduced_at_every_seed(toys, tmp_path, capsys):
    entry = LedgerEntry(
        TOY, "0: 0 pass, 1: 1 fail", "t", "r", flips_with_seed=True, seed_verdicts={0: "pass", 1: "fail"}
    )
    toys.setitem(LEDGER, TOY, entry)
    code, io = _stability(capsys, TOY, "--seeds", "0,1", "--out", str(tmp_path))
    assert code == 0, io.out
    assert "FLIPS (ledger: flips_with_seed)" in io.out and "not reproduced (criterion pass)" in io.out
    assert "ledger now passes" not in io.out


def test_a_flips_with_seed_entry_that_no_longer_flips_is_a_problem(toys, tmp_path):
    entry = LedgerEntry(STEADY, "m", "t", "r", flips_with_seed=True, seed_verdicts={0: "pass", 1: "fail"})
    toys.setitem(LEDGER, STEADY, entry)
    records = {s: run_claim(CLAIMS[STEADY], Context(seed=s)) for s in (0, 1)}
    assert records[1]["status"] == "not reproduced" and not is_failure(records[1])
    assert (
        records[1]["criterion_verdict"] == "pass"
        and "records fail at base seed 1" in records[1]["ledger_differs"]
    )
    problems = assess(STEADY, records)["problems"]
    assert any("one verdict at every seed" in p for p in problems)
    assert any("records fail at base seed 1" in p for p in problems)


def test_a_refutation_that_passes_at_some_seeds_is_a_problem(toys):
    toys.setitem(LEDGER, TOY, LedgerEntry(TOY, "m", "t", "r"))
    records = {s: run_claim(CLAIMS[TOY], Context(seed=s)) for s in (0, 1)}
    assert [records[s]["status"] for s in (0, 1)] == ["ledger now passes", "not reproduced"]
    row = assess(TOY, records)
    assert row["flips"] and row["ledger"] == "refutation"
    assert any("no flips_with_seed entry" in p for p in row["problems"])
    assert "ledger now passes at seed 0" in row["problems"]


def test_ledger_entries_check_their_seed_verdicts():
    with pytest.raises(ValueError, match="two seeds with different verdicts"):
        LedgerEntry("a.b.c", "m", "t", "r", flips_with_seed=True, seed_verdicts={0: "pass", 1: "pass"})
    with pytest.raises(ValueError, match="belong to a flips_with_seed entry"):
        LedgerEntry("a.b.c", "m", "t", "r", seed_verdicts={0: "pass", 1: "fail"})
    with pytest.raises(ValueError, match="must map int base seeds"):
        LedgerEntry("a.b.c", "m", "t", "r", flips_with_seed=True, seed_verdicts={0: "passed", 1: "fail"})


def test_every_flips_with_seed_entry_gives_its_numbers_at_each_recorded_seed():
    import re

    load_all()
    entries = {id(e): e for e in BY_SCALE.values() if e.seed_verdicts}
    assert entries, "no flips_with_seed entry records its seeds"
    for entry in entries.values():
        named = {int(n) for n in re.findall(r"\b(\d+)\b", entry.measured)}
        missing = set(entry.seed_verdicts) - named
        assert not missing, f"{entry.claim_id}: measured names no numbers at seeds {sorted(missing)}"
        assert "base seed" in entry.measured, entry.claim_id


def test_seed_lists_and_verdicts_are_checked():
    with pytest.raises(ValueError, match="at least two seeds"):
        parse_seeds("3")
    with pytest.raises(ValueError, match="integers"):
        parse_seeds("0,x")
    assert criterion_verdict({"status": "not reproduced", "seed_verdict": False}) == "fail"
    with pytest.raises(ValueError, match="unknown status"):
        criterion_verdict({"status": "weird"})


def test_the_default_folder_is_never_the_committed_results(toys, monkeypatch, tmp_path, capsys):
    from verify import stability
    from verify.results import default_results_root

    monkeypatch.setattr(stability.tempfile, "gettempdir", lambda: str(tmp_path))
    assert stability.default_out().resolve() != default_results_root().resolve()
    code, _ = _stability(capsys, STEADY, "--seeds", "0,1")
    assert code == 0 and (tmp_path / "recall-bounds-stability" / "claims.jsonl").is_file()


def test_a_restated_claim_flips_as_history_apart_from_the_live_claims(toys, tmp_path, capsys):
    entry = LedgerEntry(
        TOY,
        "0: 0 pass, 1: 1 fail",
        "restated as the steady toy",
        "r",
        flips_with_seed=True,
        seed_verdicts={0: "pass", 1: "fail"},
        restated_as=STEADY,
    )
    toys.setitem(LEDGER, TOY, entry)
    code, io = _stability(capsys, TOY, STEADY, "--seeds", "0,1", "--out", str(tmp_path), "--json")
    doc = json.loads(io.out)
    assert code == 0
    assert doc["summary"]["flipping"] == [] and doc["summary"]["pass_and_fail"] == []
    assert doc["summary"]["history_flipping"] == [TOY]
    rows = {r["id"]: r for r in doc["claims"]}
    assert rows[TOY]["pass_and_fail"] and rows[TOY]["restated_as"] == STEADY


def test_a_live_claim_that_mixes_pass_and_fail_is_named(toys, tmp_path, capsys):
    entry = LedgerEntry(
        TOY, "0: 0 pass, 1: 1 fail", "t", "r", flips_with_seed=True, seed_verdicts={0: "pass", 1: "fail"}
    )
    toys.setitem(LEDGER, TOY, entry)
    code, io = _stability(capsys, TOY, "--seeds", "0,1", "--out", str(tmp_path), "--json")
    summary = json.loads(io.out)["summary"]
    assert code == 0 and summary["pass_and_fail"] == [TOY] and summary["history_flipping"] == []


@pytest.mark.parametrize("bad", ["x", TOY])
def test_restated_as_must_name_another_claim_id(bad):
    with pytest.raises(ValueError, match="restated_as"):
        LedgerEntry(TOY, "m", "t", "r", restated_as=bad)
