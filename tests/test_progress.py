"""A run shows its progress (README "Main job"): on a terminal one line with the claims done, the
claims running and the time left; elsewhere a line per finished claim; the final table fits the
terminal; Ctrl-C ends with one line saying what was kept."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time

from tests.layout import ROOT
from verify.commands import table_lines
from verify.progress import RunProgress


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_a_line_per_finished_claim_with_the_time_left_from_the_stored_seconds():
    clock, out = _Clock(), io.StringIO()
    progress = RunProgress(["a", "b", "c"], {"a": 10, "b": 20, "c": 30}, lines=True, stream=out, clock=clock)
    progress.started("a")
    clock.now = 20.0  # this machine runs at half the stored pace
    progress.finished({"id": "a", "status": "pass", "seconds": 20.0})
    progress.started("b")
    first = out.getvalue().splitlines()[0]
    assert first.startswith("[1/3] pass  a  20.0 s")
    assert "(1 min 40 s left" in first  # (20 + 30) stored seconds at half pace
    progress.finished({"id": "b", "status": "fail", "resumed": True})  # resumed: no pace
    progress.finished({"id": "c", "status": "pass", "seconds": 1.0})
    assert out.getvalue().splitlines()[-1].startswith("[3/3] pass  c") and "none left" in out.getvalue()
    progress.close()


def test_before_any_claim_ends_the_stored_seconds_are_shared_by_the_workers():
    assert RunProgress(["a", "b"], {"a": 30, "b": 30}, jobs=2).seconds_left() == 30.0
    assert RunProgress(["x"], {}).seconds_left() == 5.0  # never run: 5 s assumed


def test_the_terminal_line_names_the_claims_running(monkeypatch):
    import shutil

    # a pseudo-terminal that reports 0 columns and 0 rows made tqdm hide its line: the shape the
    # bar is given comes from shutil's fallback instead
    monkeypatch.setattr(shutil, "get_terminal_size", lambda fallback=(80, 24): os.terminal_size((100, 24)))
    out = io.StringIO()
    progress = RunProgress(["a.b.c", "d.e.f"], {"a.b.c": 1, "d.e.f": 1}, bar=True, stream=out)
    progress.started("a.b.c")
    progress.finished({"id": "a.b.c", "status": "pass"})
    progress.started("d.e.f")
    progress.close()
    text = out.getvalue()
    assert "claims 1/2" in text and "running: d.e.f" in text and "left" in text


def test_the_final_table_fits_the_terminal_and_keeps_long_fields_out():
    record = {
        "id": "fact_mlp.capacity.linear_cost",
        "status": "not reproduced",
        "seconds": 12.5,
        "predicted": {"slope": 1.0, "window": [0.9, 1.1]},
        "measured": {"slope": 1.234, "per_seed": list(range(50)), "note": "x" * 900},
        "ledger": "a long reason " * 80,
    }
    rows = table_lines([record], width=90)
    assert len(rows) == 2 and all(len(row) <= 90 for row in rows)
    assert "a long reason" not in rows[1] and rows[1].startswith("fact_mlp.capacity.linear_cost")


def test_ctrl_c_keeps_the_finished_records_and_says_so_in_one_line(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "verify", "run", "geometric.*", "--out", str(out), "--jobs", "1"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # a shell's background job (``cmd &``) starts with SIGINT ignored, and Python then never
        # raises KeyboardInterrupt: give the run the default disposition a terminal's has
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    store = out / "claims.jsonl"
    while time.monotonic() < deadline and not (store.exists() and store.read_text().count("\n") >= 2):
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err[-2000:]
    assert "Traceback" not in err
    kept = [json.loads(line) for line in store.read_text().splitlines() if line.strip()]
    assert len(kept) >= 2
    last = err.strip().splitlines()[-1]
    assert last.startswith("interrupted:") and str(store) in last and "resumes" in last
