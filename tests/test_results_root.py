"""Where results go and where they are read (README "Command line"): a run writes --out, else
RECALL_RESULTS, else the checkout's git-ignored runs/ (found from the package, not the working
directory), never the committed reference results/ unless named; a reader reads --results, else
RECALL_RESULTS, else runs/ when it holds the file, else the reference; a missing file names the path
looked for and the command that writes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from verify.results import (
    RESULTS_ENV,
    default_results_root,
    missing_results,
    reading_root,
    reference_root,
    results_root,
)

ROOT = Path(__file__).resolve().parent.parent


def _reject(token):
    raise AssertionError(f"not strict JSON: {token}")


def _env(**extra):
    env = {k: v for k, v in os.environ.items() if k != RESULTS_ENV}
    env.update(extra)
    return env


def _run(args, cwd, env, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_precedence_flag_then_environment_then_checkout(monkeypatch, tmp_path):
    monkeypatch.delenv(RESULTS_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert default_results_root() == ROOT / "runs"  # a user's runs: git-ignored, never the reference
    assert results_root() == ROOT / "runs"  # not ./runs of the working directory
    assert reference_root() == ROOT / "results"
    monkeypatch.setenv(RESULTS_ENV, str(tmp_path / "env"))
    assert results_root() == tmp_path / "env" == reading_root()
    assert results_root("given") == tmp_path / "given"  # a flag wins, relative to the working directory
    assert reading_root("given") == tmp_path / "given"
    assert "writes it" in missing_results(tmp_path / "x" / "claims.jsonl", ["a.b.c"])


def test_readers_take_the_users_runs_once_they_hold_the_file_else_the_reference(monkeypatch, tmp_path):
    import verify.results as results

    monkeypatch.delenv(RESULTS_ENV, raising=False)
    monkeypatch.setattr(results, "REPO", tmp_path)
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "verify").mkdir()
    assert results.reading_root() == tmp_path / "results"  # a fresh clone: the committed reference
    (tmp_path / "runs").mkdir()
    assert results.reading_root() == tmp_path / "results"  # an empty runs/ is not a store
    (tmp_path / "runs" / "claims.jsonl").write_text("")
    assert results.reading_root() == tmp_path / "runs"
    assert results.reading_root(name="lm_geometry.json") == tmp_path / "results"  # file by file


def test_the_users_runs_folder_is_ignored_by_git():
    import subprocess

    done = subprocess.run(
        ["git", "check-ignore", "-q", "runs/claims.jsonl"], cwd=ROOT, capture_output=True, timeout=30
    )
    if done.returncode == 128:
        pytest.skip("not a git checkout")
    assert done.returncode == 0, "runs/ (a user's own results) must be ignored by git"


def test_paper_figs_atlas_from_outside_the_checkout(tmp_path):
    """`cd /tmp && python -m paper_figs atlas --out /tmp/OUT` draws from the checkout's results/."""
    work = tmp_path / "elsewhere"
    work.mkdir()
    out = tmp_path / "OUT"
    done = _run(["paper_figs", "atlas", "--out", str(out)], cwd=work, env=_env())
    assert done.returncode == 0, done.stderr[-2000:]
    assert (out / "atlas.png").stat().st_size > 10_000 and (out / "atlas.pdf").exists()
    assert not (work / "results").exists()  # nothing read or made relative to the working directory


def test_a_missing_results_file_names_the_path_and_the_command(tmp_path):
    nowhere = tmp_path / "nowhere"
    done = _run(
        ["paper_figs", "geometric.fig_threshold", "--results", str(nowhere), "--out", str(tmp_path / "figs")],
        cwd=tmp_path,
        env=_env(),
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert str(nowhere / "claims.jsonl") in done.stderr
    assert (
        "python -m verify run geometric.single_hop.log_scaling" in done.stderr
        and "--recompute" in done.stderr
    )
    assert not nowhere.exists()  # a reader does not create the folder
    atlas = _run(["verify", "atlas"], cwd=tmp_path, env=_env(**{RESULTS_ENV: str(nowhere)}))
    assert atlas.returncode == 2 and str(nowhere / "claims.jsonl") in atlas.stderr
    assert "python -m verify run" in atlas.stderr and "Traceback" not in atlas.stderr


def test_verify_atlas_reads_the_environment_folder_and_writes_strict_json(tmp_path):
    from tests.atlas.test_atlas import fake_records

    res = tmp_path / "res"
    res.mkdir()
    (res / "claims.jsonl").write_text("\n".join(json.dumps(r) for r in fake_records()) + "\n")
    work = tmp_path / "cwd"
    work.mkdir()
    done = _run(["verify", "atlas", "--json", "--write"], cwd=work, env=_env(**{RESULTS_ENV: str(res)}))
    assert done.returncode == 0, done.stderr[-2000:]
    printed = json.loads(done.stdout, parse_constant=_reject)
    stored = json.loads((res / "atlas.json").read_text(), parse_constant=_reject)
    assert printed == stored and stored["rows"]


def test_paper_figs_results_flag_beats_the_environment(tmp_path):
    res = tmp_path / "res"
    done = _run(
        ["paper_figs", "geometric.fig_threshold", "--results", str(res), "--out", str(tmp_path / "figs")],
        cwd=tmp_path,
        env=_env(**{RESULTS_ENV: str(ROOT / "results")}),
    )
    assert done.returncode == 1 and str(res / "claims.jsonl") in done.stderr


def test_oc_takes_results_and_writes_only_from_the_reference(tmp_path, capsys):
    from verify.oc.command import main as oc_main

    assert oc_main(["geometric.gd.fit", "--reps", "5", "--results", str(tmp_path)]) == 2
    assert str(tmp_path / "claims.jsonl") in capsys.readouterr().err
    (tmp_path / "claims.jsonl").write_text("")
    assert oc_main(["geometric.gd.fit", "--reps", "5", "--results", str(tmp_path), "--write"]) == 2
    assert "is not the reference" in capsys.readouterr().err


def test_verify_help_lists_every_command():
    done = _run(["verify", "--help"], cwd=ROOT, env=_env())
    assert done.returncode == 0
    for command in ("list", "run", "falsify", "stability", "oc", "rejudge", "atlas", "prune"):
        assert f"python -m verify {command}" in done.stdout, command
    assert "--reference" in done.stdout and "runs/" in done.stdout


def test_reference_names_the_quick_or_the_full_store(monkeypatch):
    import verify.commands as commands
    from verify.cli import main

    seen = {}
    monkeypatch.setattr(commands, "cmd_run", lambda args, ids: seen.setdefault("out", args.out) and 0)
    main(["run", "chapters.router.zloss_zero_logits", "--reference"])
    assert seen.pop("out") == str(reference_root())
    main(["run", "chapters.router.zloss_zero_logits", "--reference", "--scale", "full"])
    assert seen.pop("out") == str(reference_root() / "full")
