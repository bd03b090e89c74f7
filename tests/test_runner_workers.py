"""Worker processes of ``verify run --jobs``: a dead worker's claims are recorded at once, naming
the signal; every record carries its peak memory."""

import os
import signal
import stat
import sys

from verify.claims import Context, select
from verify.parallel import exit_cause, run_claims_parallel
from verify.results import ResultStore
from verify.runner import run_claim

FAST = "hopfield.capacity.constants"
KILLED = "retrieval.gd.closed_form"


def test_exit_cause_names_the_signal():
    assert "SIGKILL" in exit_cause(-signal.SIGKILL) and "out-of-memory" in exit_cause(-9)
    assert "SIGTERM" in exit_cause(-signal.SIGTERM)
    assert exit_cause(3) == "exited with status 3"


def test_dead_worker_recorded_at_once_naming_the_signal(tmp_path, monkeypatch):
    """The worker of one area SIGKILLs itself; the other sleeps 4 s first. The killed worker's
    claim is recorded (error, 'SIGKILL') before the slow worker's claim arrives."""
    wrapper = tmp_path / "python"
    wrapper.write_text(
        f'#!/bin/sh\ncase "$*" in *{KILLED}*) kill -9 $$ ;; esac\nsleep 4\nexec {sys.executable} "$@"\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(sys, "executable", str(wrapper))
    order = []
    claims = select([FAST, KILLED])
    store = ResultStore(tmp_path / "out")
    records = run_claims_parallel(claims, Context(), store, jobs=2, on_record=lambda r: order.append(r["id"]))
    by_id = {r["id"]: r for r in records}
    assert by_id[KILLED]["status"] == "error" and "SIGKILL" in by_id[KILLED]["error"]
    assert by_id[KILLED]["peak_rss_bytes"] is None
    assert by_id[FAST]["status"] == "pass"
    assert order == [KILLED, FAST]
    assert len(store.records()) == 2


def test_records_carry_peak_memory():
    record = run_claim(select([FAST])[0], Context())
    assert record["peak_rss_bytes"] > 10 * 2**20
    assert record["peak_rss_scope"] in ("claim", "process")
    if os.path.exists("/proc/self/clear_refs"):
        assert record["peak_rss_scope"] == "claim"


def test_dry_run_reports_expected_time_per_area_and_runs_nothing(tmp_path, capsys, monkeypatch):
    """`run --dry-run` sums the newest stored record per claim at the asked scale, per area."""
    import json

    from verify.cli import main

    # the repository's own results/ (results/full holds a partial full-scale run) stay out of it
    monkeypatch.setenv("RECALL_RESULTS", str(tmp_path / "repo_results"))

    store = ResultStore(tmp_path)
    store.append(
        {
            "id": FAST,
            "scale": "full",
            "seconds": 12.5,
            "status": "pass",
            "device": "cuda",
            "peak_rss_bytes": 2**30,
        }
    )
    store.append({"id": FAST, "scale": "quick", "seconds": 99.0, "status": "pass", "device": "cpu"})
    before = len(store.records())
    assert (
        main(
            [
                "run",
                FAST,
                KILLED,
                "--scale",
                "full",
                "--dry-run",
                "--jobs",
                "1",
                "--json",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    printed = json.loads(capsys.readouterr().out)  # one document: areas and total
    rows = printed["areas"] + [printed["total"]]
    by_area = {r["area"]: r for r in rows if "area" in r}
    assert by_area["hopfield"]["expected_seconds"] == 12.5
    assert by_area["hopfield"]["measured_on"] == ["cuda"] and by_area["hopfield"]["max_peak_rss_gb"] == 1.0
    assert by_area["retrieval"]["claims_without_record"] == 1
    assert rows[-1]["serial_seconds"] == 12.5 and rows[-1]["scale"] == "full"
    assert len(store.records()) == before  # nothing ran


def test_dry_run_full_falls_back_to_quick_records_as_a_labelled_lower_bound(tmp_path, capsys, monkeypatch):
    """With no full record, `--scale full --dry-run` adds the claim's quick seconds to a separate
    lower-bound column (never to the expected seconds); a full record, when present, wins."""
    import json

    from verify.cli import main

    # the repository's own results/ (results/full holds a partial full-scale run) stay out of it
    monkeypatch.setenv("RECALL_RESULTS", str(tmp_path / "repo_results"))

    store = ResultStore(tmp_path)
    store.append({"id": FAST, "scale": "quick", "seconds": 3.0, "status": "pass", "device": "cpu"})
    store.append({"id": KILLED, "scale": "quick", "seconds": 7.0, "status": "pass", "device": "cpu"})
    store.append({"id": KILLED, "scale": "full", "seconds": 40.0, "status": "pass", "device": "cpu"})
    args = ["run", FAST, KILLED, "--scale", "full", "--dry-run", "--jobs", "1", "--out", str(tmp_path)]
    assert main(args + ["--json"]) == 0
    printed = json.loads(capsys.readouterr().out)  # one document: areas and total
    rows = printed["areas"] + [printed["total"]]
    by_area = {r["area"]: r for r in rows if "area" in r}
    assert by_area["hopfield"]["expected_seconds"] == 0.0
    assert by_area["hopfield"]["quick_lower_bound_seconds"] == 3.0
    assert by_area["hopfield"]["claims_with_quick_record_only"] == 1
    assert by_area["retrieval"]["expected_seconds"] == 40.0
    assert by_area["retrieval"]["quick_lower_bound_seconds"] == 0.0
    assert rows[-1]["serial_seconds"] == 40.0 and rows[-1]["quick_lower_bound_seconds"] == 3.0
    assert main(args) == 0
    assert "lower bound" in capsys.readouterr().out


def test_record_dtype_is_the_one_the_measurement_ran_in():
    """A check that computes in another dtype than the run's (the pretrained language model runs in
    float32 during a float64 run) says so: the record's dtype is the measurement's and
    ``context_dtype`` keeps the run's; without it the record keeps the run's dtype."""
    from verify.claims import Claim, Outcome

    def make(dtype):
        return Claim(
            id="test.dtype.record",
            source="test",
            provenance="derived",
            statement="s",
            quick={},
            full={},
            kind="identity",
            independence="test",
            check=lambda p, c: Outcome(predicted=1, measured=1, passed=True, dtype=dtype),
        )

    ran_in_float32 = run_claim(make("float32"), Context(dtype="float64"))
    assert (ran_in_float32["dtype"], ran_in_float32["context_dtype"]) == ("float32", "float64")
    plain = run_claim(make(None), Context(dtype="float64"))
    assert plain["dtype"] == "float64" and "context_dtype" not in plain
