"""Inputs checked where they enter: seeds are non-negative integers (command line and run_claim),
--out must be a writable folder before anything is computed (exit status 2, nothing appended),
and the Python results default follows the command line's rule from any working directory."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from verify.api import run_claim
from verify.cli import main

FAST = "chapters.router.zloss_zero_logits"


@pytest.mark.parametrize("seed, error", [("abc", TypeError), (-1, ValueError), (1.5, TypeError)])
def test_run_claim_refuses_a_bad_seed_naming_it(seed, error):
    with pytest.raises(error, match="seed="):
        run_claim(FAST, seed=seed)


@pytest.mark.parametrize("seed", ["-1", "abc", "1.5"])
def test_the_command_line_refuses_a_bad_seed(seed, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["run", FAST, "--seed", seed, "--out", str(tmp_path)])
    assert stop.value.code == 2 and "non-negative integer" in capsys.readouterr().err
    assert not (tmp_path / "claims.jsonl").exists()


def test_out_naming_a_file_is_refused_before_anything_runs(tmp_path, capsys):
    target = tmp_path / "a_file"
    target.write_text("x")
    assert main(["run", FAST, "--out", str(target)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err and target.read_text() == "x"
    with pytest.raises(ValueError, match="is a file"):
        run_claim(FAST, results=target)


def test_out_naming_a_read_only_folder_is_refused_before_anything_runs(tmp_path, capsys):
    folder = tmp_path / "ro"
    folder.mkdir()
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        folder.chmod(0o555)
    try:
        try:
            (folder / "probe").write_text("x")
            pytest.skip("this process can write into a read-only folder")
        except OSError:
            pass
        assert main(["run", FAST, "--out", str(folder)]) == 2
        assert "is not a writable folder" in capsys.readouterr().err
    finally:
        subprocess.run(["chattr", "-i", str(folder)], capture_output=True)
        folder.chmod(0o755)


def test_python_results_default_follows_the_rule_from_another_folder(tmp_path, monkeypatch):
    from paper_figs.api import stored_records
    from verify.results import RESULTS_ENV

    monkeypatch.delenv(RESULTS_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert "fact_mlp.capacity.linear_cost" in stored_records()  # the checkout's results/
    monkeypatch.setenv(RESULTS_ENV, str(tmp_path / "empty"))
    with pytest.raises(LookupError, match=str(Path(tmp_path / "empty"))):
        stored_records()
