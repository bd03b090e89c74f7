"""The ledger is data: verify/<area>/ledger.toml files loaded by verify.ledger (docs/ledger.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from theory.registry import AREAS
from verify.claims import load_all
from verify.ledger import BY_SCALE, load, restated_as

VERIFY = Path(__file__).resolve().parents[1] / "verify"


def test_every_entry_names_a_registered_claim_and_sits_in_its_area():
    claims = load_all()
    for path in sorted(VERIFY.glob("*/ledger.toml")):
        assert path.parent.name in AREAS, f"{path}: not an area folder"
        for entry in load(path):
            assert entry.claim_id in claims, f"{path}: {entry.claim_id} is not a registered claim"
            assert entry.claim_id.split(".")[0] == path.parent.name, f"{path}: {entry.claim_id}"


def test_a_restated_claim_names_a_live_registered_successor_in_its_text():
    claims = load_all()
    restated = {e.claim_id: e for e in BY_SCALE.values() if e.restated_as}
    assert restated, "no entry names a restatement"
    for cid, entry in restated.items():
        successor = entry.restated_as
        assert successor in claims, f"{cid}: restated_as {successor} is not a registered claim"
        short = successor.split(".", 1)[1]
        text = " ".join((entry.tried + entry.reason + entry.measured).split())
        assert short in text, f"{cid}: the entry's text never names its successor {successor}"
        seen = {cid}
        while restated_as(successor):  # a chain ends at a live claim, never in a loop
            assert successor not in seen, f"{cid}: restatements loop through {successor}"
            seen.add(successor)
            successor = restated_as(successor)


def test_loaded_entries_are_those_of_the_files():
    from_files = {(e.claim_id, s): e for p in VERIFY.glob("*/ledger.toml") for e in load(p) for s in e.scales}
    assert from_files == BY_SCALE


def test_no_entry_is_recorded_in_python():
    # the entries live in the data files only: a record(LedgerEntry(...)) in a module would be a
    # second place for them
    offenders = [
        str(p) for p in VERIFY.rglob("*.py") if p.name != "ledger.py" and "LedgerEntry(" in p.read_text()
    ]
    assert offenders == []


@pytest.mark.parametrize(
    "text, message",
    [
        ("[[entry]]\nclaim_id = 'a.b'\n", "claim_id, measured, reason, tried required"),
        ("[[entry]]\nclaim_id = 'a.b'\nmeasured = 'm'\ntried = 't'\nreason = 'r'\nnote = 'x'\n", "allowed"),
        ("[other]\nx = 1\n", "only [[entry]] tables"),
        ("[[entry]]\nclaim_id = \n", "not valid TOML"),
        (
            "[[entry]]\nclaim_id = 'a.b'\nmeasured = 'm'\ntried = 't'\nreason = 'r'\nflips_with_seed = true\n"
            "seed_verdicts = { x = 'pass', 1 = 'fail' }\n",
            "keys must be base seeds",
        ),
        (
            "[[entry]]\nclaim_id = 'a.b'\nmeasured = 'm'\ntried = 't'\nreason = 'r'\nscales = ['huge']\n",
            "must be a non-empty subset",
        ),
    ],
)
def test_a_malformed_file_names_itself(tmp_path, text, message):
    path = tmp_path / "ledger.toml"
    path.write_text(text)
    with pytest.raises(ValueError, match="ledger") as info:
        load(path)
    assert message in str(info.value)
    assert str(path) in str(info.value)


def test_an_undecided_entry_makes_a_pass_inconclusive_and_leaves_a_fail_a_fail(monkeypatch):
    """A verdict that is pass at some base seeds and inconclusive at others is not a refutation
    (no ledger entry) and not a pass: inconclusive at every seed, with the budget that decides."""
    import dataclasses

    import verify.ledger as ledger
    from verify.claims import Context
    from verify.runner import run_claim

    claim = load_all()["chapters.router.zloss_zero_logits"]
    entry = ledger.UndecidedEntry(claim.id, "pass at 0, inconclusive at 1", "straddles", "about 6 seeds")
    monkeypatch.setitem(ledger.UNDECIDED, (claim.id, "quick"), entry)
    record = run_claim(claim, Context(), controls=False)
    assert record["status"] == "inconclusive" and record["criterion_verdict"] == "pass"
    assert record["inconclusive"].endswith("would decide: about 6 seeds") and not record["passed"]

    def fails(params, ctx):
        from verify.claims import Outcome

        return Outcome(predicted=0, measured=1, passed=False)

    record = run_claim(dataclasses.replace(claim, check=fails), Context(), controls=False)
    assert record["status"] == "fail"  # a fail is news: the entry said never fail


def test_an_undecided_entry_has_no_fail_and_its_files_are_read():
    from verify.ledger import UNDECIDED, UndecidedEntry, load_undecided

    with pytest.raises(ValueError, match="never fail"):
        UndecidedEntry("a.b", "m", "r", "6 seeds", seed_verdicts={0: "pass", 1: "fail"})
    from_files = {
        (e.claim_id, s): e
        for p in VERIFY.glob("*/undecided.toml")
        for e in load_undecided(p)
        for s in e.scales
    }
    assert from_files == UNDECIDED
    claims = load_all()
    assert all(cid in claims for cid, _ in UNDECIDED)


def test_every_ledger_entry_names_whose_statement_it_refutes():
    from verify.ledger import CAUSES

    for path in sorted(VERIFY.glob("*/ledger.toml")):
        for entry in load(path):
            assert entry.cause in CAUSES, f"{path}: {entry.claim_id} at {entry.scales}: cause {entry.cause!r}"


def test_no_ledger_entry_is_only_pass_and_inconclusive():
    """A verdict that is pass at some base seeds and inconclusive at others, never fail, is no
    refutation: such an entry belongs in undecided.toml (which takes known_vacuous controls too)."""
    for path in sorted(VERIFY.glob("*/ledger.toml")):
        for entry in load(path):
            verdicts = set(entry.seed_verdicts.values())
            assert not verdicts or not verdicts <= {"pass", "inconclusive"}, (
                f"{path}: {entry.claim_id} {dict(entry.seed_verdicts)} holds no fail"
            )


def test_an_undecided_claim_can_name_a_control_known_to_pass(monkeypatch):
    import verify.ledger as ledger

    entry = ledger.UndecidedEntry("a.b.c", "m", "r", "6 seeds", known_vacuous=("same",))
    monkeypatch.setitem(ledger.UNDECIDED, ("a.b.c", "quick"), entry)
    assert ledger.known_vacuous("a.b.c", "quick") == {"same"}
    assert ledger.known_vacuous("a.b.c", "full") == set()


def test_every_undecided_entry_names_a_claim_of_its_area_and_what_would_decide():
    from verify.ledger import load_undecided

    claims = load_all()
    files = sorted(VERIFY.glob("*/undecided.toml"))
    assert files
    for path in files:
        assert path.parent.name in AREAS, f"{path}: not an area folder"
        for entry in load_undecided(path):
            assert entry.claim_id in claims, f"{path}: {entry.claim_id} is not a registered claim"
            assert entry.claim_id.split(".")[0] == path.parent.name, f"{path}: {entry.claim_id}"
            assert entry.would_decide.strip() and entry.reason.strip() and entry.measured.strip()
            assert not set(entry.seed_verdicts.values()) - {"pass", "inconclusive"}


def test_stability_expects_an_undecided_claim_to_differ_between_pass_and_inconclusive(monkeypatch):
    """verify stability treats an undecided entry as it treats a flips_with_seed ledger entry: a
    claim that is pass at some seeds and inconclusive at others is in order; a fail at a seed, or
    one verdict at every seed where the entry records two, is a problem."""
    import verify.ledger as ledger
    from verify.stability import assess, criterion_verdict

    cid = "chapters.router.zloss_zero_logits"  # no ledger entry
    entry = ledger.UndecidedEntry(
        cid, "m", "straddles", "about 6 seeds", seed_verdicts={0: "pass", 1: "inconclusive"}
    )
    monkeypatch.setitem(ledger.UNDECIDED, (cid, "quick"), entry)

    def rec(verdict):
        status = "fail" if verdict == "fail" else "inconclusive"
        return {"id": cid, "status": status, "criterion_verdict": verdict, "measured": 0}

    assert criterion_verdict(rec("pass")) == "pass"
    row = assess(cid, {0: rec("pass"), 1: rec("inconclusive"), 2: rec("pass")})
    assert row["flips"] and row["ledger"] == "undecided" and row["problems"] == []
    row = assess(cid, {0: rec("pass"), 1: rec("fail")})
    assert row["problems"] == [
        "the verdict differs between seeds (pass at 0; fail at 1) and its undecided entry says never fail",
        "fail at seed 1",
    ]
    row = assess(cid, {0: rec("pass"), 1: rec("pass")})
    assert not row["flips"] and any("one verdict at every seed run" in p for p in row["problems"])
    monkeypatch.delitem(ledger.UNDECIDED, (cid, "quick"))
    row = assess(cid, {0: rec("pass"), 1: rec("inconclusive")})  # without the entry: a flip to list
    assert row["ledger"] == "none" and any("differs between seeds" in p for p in row["problems"])
