"""tools/check_claim.py, the check docs/contributing.md asks for before committing a new claim: an
unknown id is refused before anything runs, the pytest command it builds names tests that exist,
its doctests hold, and its four steps pass on a fast registered claim."""

from __future__ import annotations

import doctest
import importlib.util
import subprocess
import sys
import time

import pytest

from tests.layout import ROOT
from verify.claims import load_all

TOOL = ROOT / "tools" / "check_claim.py"
FAST = "chapters.router.zloss_zero_logits"  # an identity claim: runs in milliseconds


def _load():
    spec = importlib.util.spec_from_file_location("check_claim", TOOL)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


check_claim = _load()


def test_doctests():
    result = doctest.testmod(check_claim, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 5 and result.failed == 0


def test_an_unknown_id_is_refused_before_anything_runs():
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(TOOL), "no.such.claim", "chapters.*"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "not registered: no.such.claim, chapters.*" in done.stdout
    assert "python -m verify list" in done.stdout
    assert "run " not in done.stdout  # no step ran
    assert time.perf_counter() - start < 60


def test_arguments():
    with pytest.raises(SystemExit) as exc:
        check_claim.main([])  # an id is required
    assert exc.value.code == 2


def test_the_pytest_command_names_tests_that_exist():
    """Every file exists, and the nodes of a must_fail claim with controls collect: one test per
    per-claim node, so a renamed test fails here rather than silently running the registry."""
    claim = "geometric.single_hop.pigeonhole_fail"
    shape = check_claim.shapes([claim])[claim]
    assert shape == check_claim.Shape("must_fail", True)
    cmd = check_claim.pytest_command({claim: shape})
    for arg in cmd[cmd.index("-q") + 1 :]:
        assert (ROOT / arg.split("::")[0]).is_file(), arg
    done = subprocess.run([*cmd, "--collect-only"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    collected = [line for line in done.stdout.splitlines() if "::" in line]
    assert sum(f"[{claim}]" in line for line in collected) == 4, collected
    others = {f"[{cid}]" for cid in load_all()} - {f"[{claim}]"}
    assert not [line for line in collected if any(o in line for o in others)]  # no other claim's node


def test_the_steps_pass_on_a_fast_claim(tmp_path):
    ids = [FAST]
    steps = [
        check_claim.run_step(ids, tmp_path),
        check_claim.falsify_step(ids, tmp_path),
        check_claim.oc_step(ids, tmp_path, reps=20),
        check_claim.tests_step(check_claim.shapes(ids)),
    ]
    assert [s.name for s in steps] == ["run", "falsify", "oc", "tests"]
    for step in steps:
        assert step.ok, step.line() + "\n" + step.output[-3000:]
    assert steps[0].summary == f"{FAST}: pass"
    assert steps[1].summary == f"{FAST}: no controls (identity)"
    assert "not covered (a identity claim" in steps[2].summary
    assert " passed" in steps[3].summary and "failed" not in steps[3].summary
    assert (tmp_path / "claims.jsonl").is_file()  # the run wrote the scratch folder, nowhere else


def test_a_failed_step_fails_the_check_and_shows_its_output(monkeypatch, capsys):
    """Every step runs; one failure makes the exit status 1 and prints that step's output tail."""
    Step = check_claim.Step
    monkeypatch.setattr(check_claim, "run_step", lambda ids, scratch: Step("run", True, "x: pass", 0.1))
    monkeypatch.setattr(
        check_claim, "falsify_step", lambda ids, scratch: Step("falsify", False, "x: c passes", 0.1, "why\n")
    )
    monkeypatch.setattr(
        check_claim, "oc_step", lambda ids, scratch, reps: Step("oc", True, "x: covered", 0.1)
    )
    monkeypatch.setattr(check_claim, "tests_step", lambda claims: Step("tests", True, "3 passed", 0.1))
    assert check_claim.main([FAST]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out[:5]] == ["run", "falsify", "why", "oc", "tests"]
    assert out[1].split()[1] == "FAILED" and out[-1].startswith("check_claim: 1 of 4 steps failed (falsify)")
