"""The verify command line: JSON records, resumable results, exit status, report; paper_figs."""

import json
import subprocess
import sys

import pytest

from verify.claims import CLAIMS, Claim, Context, Outcome, load_all, select
from verify.results import ResultStore
from verify.runner import is_failure, run_claim, run_claims

FAST = "geometric.single_hop.rotation_variant"


def run(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, cwd=cwd)


def cli(capsys, *args):
    """``python -m verify ARGS`` in this process (no interpreter start): (exit status, stdout, stderr)."""
    from verify.cli import main

    try:
        code = main(list(args))
    except SystemExit as stop:  # argparse's own errors
        code = stop.code
    out, err = capsys.readouterr()
    return code, out, err


def test_run_json_and_resume(tmp_path):
    out = run(
        "verify", "run", FAST, "geometric.single_hop.construct_transfer", "--json", "--out", str(tmp_path)
    )
    assert out.returncode == 0, out.stderr
    records = json.loads(out.stdout)  # one JSON document: the list of records
    assert [r["id"] for r in records] == [FAST, "geometric.single_hop.construct_transfer"]
    for r in records:
        for field in (
            "id",
            "passed",
            "predicted",
            "measured",
            "provenance",
            "seconds",
            "seed",
            "device",
            "dtype",
            "versions",
            "git",
        ):
            assert field in r
        assert r["passed"] is True and r["device"] == "cpu" and r["dtype"] == "float64"
        assert r["versions"]["cpu"]  # the processor: float32 sums may differ between processors
    assert (tmp_path / "report.md").read_text().count("| `geometric.") == 2
    again = run("verify", "run", FAST, "--jsonl", "--out", str(tmp_path))
    assert json.loads(again.stdout)["resumed"] is True  # one record per line: here one line
    assert len(ResultStore(tmp_path).records()) == 2  # nothing recomputed, nothing appended


def test_unknown_claim_and_device_fail_loudly(tmp_path, capsys):
    code, _, err = cli(capsys, "run", "nope.*", "--out", str(tmp_path))
    assert code == 2 and "no claim matches" in err
    code, _, err = cli(capsys, "run", FAST, "--device", "tpu", "--out", str(tmp_path))
    assert code == 2 and "not a device" in err


def test_list_markdown(capsys):
    code, out, _ = cli(capsys, "list", "--markdown")
    assert code == 0 and "| `geometric.single_hop.selector_exact` | empirical | derived |" in out


def _fake(check, cid="geometric.fake.claim"):
    return Claim(id=cid, source="test", provenance="derived", statement="s", quick={}, full={}, check=check)


def test_failing_and_nan_and_error_claims_are_reported():
    ctx = Context()
    fail = run_claim(_fake(lambda p, c: Outcome(1.0, 0.5, False)), ctx)
    assert fail["status"] == "fail" and is_failure(fail)
    nan = run_claim(_fake(lambda p, c: Outcome(1.0, float("nan"), True)), ctx)
    assert nan["status"] == "error" and "NaN" in nan["error"] and not nan["passed"]
    boom = run_claim(_fake(lambda p, c: 1 / 0), ctx)
    assert boom["status"] == "error" and "ZeroDivisionError" in boom["error"]
    skip = run_claim(_fake(lambda p, c: Outcome(None, None, False, skipped="no weights")), ctx)
    assert skip["status"] == "skipped" and not skip["passed"] and not is_failure(skip)


def test_interrupted_run_keeps_finished_records(tmp_path):
    calls = []

    def ok(p, c):
        calls.append(1)
        return Outcome(1, 1, True)

    def interrupt(p, c):
        raise KeyboardInterrupt

    store = ResultStore(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        run_claims([_fake(ok, "geometric.fake.a"), _fake(interrupt, "geometric.fake.b")], Context(), store)
    assert [r["id"] for r in store.records()] == ["geometric.fake.a"]
    run_claims([_fake(ok, "geometric.fake.a")], Context(), store)
    assert len(calls) == 1  # resumed, not recomputed


def test_every_claim_is_well_formed():
    claims = load_all()
    assert claims
    for cid, c in claims.items():
        assert c.statement and c.source and c.quick is not None, cid
    assert select(["geometric.single_hop.*"])


@pytest.mark.claims_of("geometric")
def test_paper_figs_from_stored_results(tmp_path, quick_record):
    """paper_figs draws from a results folder it is given (here the record of this session's
    registry run, not a second run of the claim) and names the command when the folder is empty."""
    res, figs = tmp_path / "res", tmp_path / "figs"
    ResultStore(res).append(quick_record("geometric.single_hop.log_scaling"))
    draw = run("paper_figs", "geometric.fig_threshold", "--results", str(res), "--out", str(figs))
    assert draw.returncode == 0, draw.stderr
    assert (figs / "geometric.fig_threshold.png").stat().st_size > 10_000
    assert (figs / "geometric.fig_threshold.pdf").exists()
    missing = run(
        "paper_figs", "geometric.fig_threshold", "--results", str(tmp_path / "empty"), "--out", str(figs)
    )
    assert missing.returncode == 1 and "--recompute" in missing.stderr


@pytest.mark.gpu
def test_claims_on_cuda_float32(claim_cache):
    """Every geometric single-hop claim on cuda in float32 (tolerances stated in each check)."""
    ctx = Context(device="cuda", dtype="float32", cache={})
    for claim in select(["geometric.single_hop.*"]):
        record = run_claim(claim, ctx)
        assert record["status"] == "pass", (claim.id, record.get("error"), record["measured"])


def test_claim_ids_unique_and_three_part():
    assert all(cid.count(".") == 2 for cid in CLAIMS)


def test_parallel_run_matches_serial(tmp_path):
    from verify.parallel import partition, run_claims_parallel

    claims = select(
        [
            "geometric.single_hop.rotation_variant",
            "geometric.single_hop.construct_transfer",
            "hopfield.capacity.constants",
        ]
    )
    # without stored sharing, an area stays whole in one worker
    groups = partition(claims, 2, {}, {})
    assert sorted(len(g) for g in groups) == [1, 2] and all(len({c.area for c in g}) == 1 for g in groups)
    # with it, claims that share nothing are split by expected seconds, even within an area
    keys = {c.id: [] for c in claims}
    seconds = dict(zip([c.id for c in claims], [10.0, 9.0, 1.0]))
    split = partition(claims, 2, keys, seconds)
    assert [[c.id for c in g] for g in split] == [[claims[0].id], [claims[1].id, claims[2].id]]
    store = ResultStore(tmp_path)
    par = run_claims_parallel(claims, Context(), store, jobs=2)
    ser = run_claims(claims, Context(), None)
    assert [r["id"] for r in par] == [c.id for c in claims]
    assert [(r["status"], r["measured"]) for r in par] == [(r["status"], r["measured"]) for r in ser]
    assert len(store.records()) == 3
    again = run_claims_parallel(claims, Context(), store, jobs=2)  # everything resumes
    assert all(r.get("resumed") for r in again) and len(store.records()) == 3


def _with_controls(check, controls, cid="geometric.fake.ctl", kind="empirical"):
    return Claim(
        id=cid,
        source="test",
        provenance="derived",
        statement="x > 0.5",
        quick={"x": 1.0},
        full={"x": 1.0},
        check=check,
        kind=kind,
        controls=tuple(controls),
        demonstrates_failure=kind == "must_fail",
    )


def _threshold(p, c):
    return Outcome(0.5, p["x"], p["x"] > 0.5)


def test_controls_are_run_and_a_passing_control_makes_the_claim_vacuous():
    from verify.claims import Control

    good = run_claim(_with_controls(_threshold, [Control("low", {"x": 0.1}, "x below 0.5")]), Context())
    assert good["status"] == "pass" and good["controls"][0]["status"] == "fails as required"
    assert good["controls"][0]["params"] == {"x": 0.1} and good["kind"] == "empirical"
    vac = run_claim(
        _with_controls(_threshold, [Control("same", lambda p: {"x": p["x"] * 0.9}, "10% less")]), Context()
    )
    assert vac["status"] == "vacuous" and is_failure(vac) and "control same" in vac["vacuous"]
    err = run_claim(_with_controls(_threshold, [Control("typo", {"y": 0}, "unknown key")]), Context())
    assert err["status"] == "error" and "unknown parameters" in err["error"]


def test_claim_kinds_are_validated():
    from verify.claims import Control, missing_controls

    with pytest.raises(ValueError, match="kind"):
        _with_controls(_threshold, [], kind="theorem")
    with pytest.raises(ValueError, match="independent"):
        _with_controls(_threshold, [], kind="identity")
    bare = _with_controls(_threshold, [])
    assert "without a control" in missing_controls(bare)
    mf = _with_controls(_threshold, [Control("across", {"x": 0.0}, "other side")], kind="must_fail")
    assert mf.demonstrates_failure and missing_controls(mf) is None
    with pytest.raises(ValueError, match="repeat"):
        _with_controls(_threshold, [Control("a", {}, "w"), Control("a", {}, "w")])


def test_falsify_reports_claims_without_controls(tmp_path, capsys):
    code, out, _ = cli(capsys, "falsify", "geometric.single_hop.selector_exact", "--json")
    row = json.loads(out)["claims"][0]
    assert row["id"] == "geometric.single_hop.selector_exact"
    assert code == (0 if row["ok"] else 1)
    if not row["ok"]:
        assert row["problems"]


def test_a_seed_dependent_ledger_entry_is_not_reproduced_at_every_seed(monkeypatch):
    from verify.ledger import LEDGER, LedgerEntry

    cid = "geometric.fake.flaky"
    monkeypatch.setitem(LEDGER, cid, LedgerEntry(cid, "m", "t", "r", flips_with_seed=True))
    for verdict in (True, False):
        rec = run_claim(_fake(lambda p, c, v=verdict: Outcome(1, 1, v), cid), Context())
        assert rec["status"] == "not reproduced" and rec["passed"] is False
        assert rec["seed_verdict"] is verdict and not is_failure(rec)
    monkeypatch.setitem(LEDGER, cid, LedgerEntry(cid, "m", "t", "r"))
    assert run_claim(_fake(lambda p, c: Outcome(1, 1, True), cid), Context())["status"] == "ledger now passes"


def test_a_full_scale_ledger_entry_leaves_the_quick_scale_judged(monkeypatch):
    from verify import ledger

    cid = "geometric.fake.fullonly"
    entry = ledger.LedgerEntry(cid, "m", "t", "r", scales=("full",))
    monkeypatch.setitem(ledger.BY_SCALE, (cid, "full"), entry)
    monkeypatch.setitem(ledger.LEDGER, cid, entry)
    failing = _fake(lambda p, c: Outcome(1, 0, False), cid)
    assert run_claim(failing, Context(scale="quick"))["status"] == "fail"
    assert run_claim(failing, Context(scale="full"))["status"] == "not reproduced"
    with pytest.raises(ValueError, match="scales"):
        ledger.LedgerEntry(cid, "m", "t", "r", scales=("huge",))


def test_a_control_known_to_pass_is_kept_and_marked_only_for_a_ledgered_claim(monkeypatch):
    from verify.claims import Control
    from verify.ledger import LEDGER, LedgerEntry

    claim_ = _with_controls(_threshold, [Control("same", {"x": 0.9}, "passes too")], cid="geometric.fake.kv")
    assert run_claim(claim_, Context())["status"] == "vacuous"
    monkeypatch.setitem(LEDGER, claim_.id, LedgerEntry(claim_.id, "m", "t", "r", known_vacuous=("same",)))
    rec = run_claim(claim_, Context())
    assert rec["status"] == "ledger now passes"  # the ledger still judges the claim itself
    assert rec["controls"][0]["status"] == "passes" and "known" in rec["controls"][0]
