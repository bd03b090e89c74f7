"""The claim profile (verify.bench.profile): a record's seconds split into the check, its controls and
the shared work they triggered, with process CPU time; ``run --profile`` prints the table."""

import time

import pytest

from verify.bench.profile import profile_summary, profile_text
from verify.claims import Claim, Context, Control, Outcome
from verify.runner import run_claim

CLOCK = [0.0]  # a fake wall clock: work advances it by exact amounts, whatever the machine's load


def _spin(seconds: float) -> None:
    CLOCK[0] += seconds


@pytest.fixture
def fake_clock(monkeypatch):
    import types

    import verify.claims
    import verify.runner

    CLOCK[0] = 0.0
    for module in (verify.claims, verify.runner):
        fake = types.SimpleNamespace(**{k: getattr(time, k) for k in dir(time) if not k.startswith("_")})
        fake.perf_counter = lambda: CLOCK[0]
        monkeypatch.setattr(module, "time", fake)


def _claim(check, controls=()):
    return Claim(
        id="geometric.fake.profiled",
        source="test",
        provenance="derived",
        statement="x > 0.5",
        quick={"x": 1.0},
        full={"x": 1.0},
        check=check,
        controls=tuple(controls),
    )


def _check(p, ctx):
    def inner():
        _spin(0.05)
        return 1

    def outer():  # a shared result that asks for another one: counted once
        _spin(0.1)
        return ctx.shared(("inner",), inner)

    ctx.shared(("outer",), outer)
    _spin(0.02)
    return Outcome(0.5, p["x"], p["x"] > 0.5)


def test_profile_splits_check_controls_and_shared_work(fake_clock):
    ctx = Context()
    rec = run_claim(_claim(_check, [Control("low", {"x": 0.1}, "x below 0.5")]), ctx)
    prof = rec["profile"]
    assert prof["shared_s"] == pytest.approx(0.15)  # outer (with inner) once, not 0.2
    assert prof["check_s"] == pytest.approx(0.02)
    assert prof["controls_s"] == pytest.approx(0.02)  # the control hits the cache
    total = prof["check_s"] + prof["controls_s"] + prof["shared_s"]
    assert total == pytest.approx(rec["seconds"], abs=0.002)
    assert prof["cpu_s"] >= 0.0
    again = run_claim(_claim(_check), ctx)  # everything shared is cached now
    assert again["profile"]["shared_s"] == 0.0


def test_a_failing_shared_compute_is_not_cached_and_the_depth_recovers():
    ctx = Context()

    def boom():
        raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        ctx.shared(("k",), boom)
    assert ctx.shared(("k",), lambda: 3) == 3 and ctx._shared_depth == 0


def test_summary_and_table_leave_out_resumed_records():
    recs = [
        {"id": "a.t.x", "seconds": 2.0, "profile": {"check_s": 2.0}, "status": "pass"},
        {"id": "a.t.y", "seconds": 9.0, "resumed": True},
    ]
    assert profile_summary(recs)["total"]["seconds"] == 2.0
    text = profile_text(recs, processor="cpu X")
    assert "cpu X" in text and "a.t.x" in text and "a.t.y" not in text


def test_run_profile_flag_prints_the_table(tmp_path, capsys):
    from verify.cli import main

    code = main(["run", "hopfield.capacity.constants", "--out", str(tmp_path), "--profile", "--jobs", "1"])
    out = capsys.readouterr().out
    assert code == 0 and "claim-seconds on" in out and "| hopfield " in out
