"""Inputs checked where they enter: seeds are non-negative integers (command line and run_claim),
--out must be a writable folder before anything is computed (exit status 2, nothing appended),
and the Python results default follows the command line's rule from any working directory.
run_claim refuses, before anything runs, an id that is not a string, an unknown device or dtype,
and params that are not a mapping or name no parameter of the claim; params override the claim's
parameters one by one and the record stores the merge. ``verify oc --reps`` is bounded
(verify.oc.MAX_REPS), and the figures' --out folder is checked before a figure is drawn."""

from __future__ import annotations

import json
import re
import subprocess
import time
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


def _read_only_folder(tmp_path: Path) -> Path:
    """A folder this process cannot write in (chattr +i, else mode 555); skips where it can."""
    folder = tmp_path / "ro"
    folder.mkdir()
    if subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode != 0:
        folder.chmod(0o555)
    try:
        (folder / "probe").write_text("x")
    except OSError:
        return folder
    _writable_again(folder)
    pytest.skip("this process can write into a read-only folder")


def _writable_again(folder: Path) -> None:
    subprocess.run(["chattr", "-i", str(folder)], capture_output=True)
    folder.chmod(0o755)


@pytest.mark.parametrize(
    ("device", "error", "message"),
    [
        ("tpu", ValueError, "device='tpu' is not a device; expected one of ('auto', 'cpu', 'cuda')"),
        ("cuda:x", ValueError, "device='cuda:x' is not a device"),
        (0, TypeError, "device=0 must be a device name, one of ('auto', 'cpu', 'cuda'), not int"),
    ],
)
def test_run_claim_refuses_an_unknown_device_as_the_command_line_does(device, error, message, tmp_path):
    with pytest.raises(error, match=re.escape(message)):
        run_claim(FAST, device=device, results=tmp_path)
    assert not (tmp_path / "claims.jsonl").exists()  # nothing ran, nothing was recorded


def test_run_claim_refuses_an_unknown_dtype_naming_the_choices():
    with pytest.raises(ValueError, match=re.escape("dtype='float16' must be one of ('float64', 'float32')")):
        run_claim(FAST, dtype="float16")


def test_params_override_the_claims_parameters_and_the_record_stores_the_merge(tmp_path):
    from verify.claims import load_all

    own = load_all()[FAST].params("quick")
    record = run_claim(FAST, params={"batch": 2}, results=tmp_path)
    assert record["params"] == {**own, "batch": 2} and record["status"] == "pass"
    stored = json.loads((tmp_path / "claims.jsonl").read_text().splitlines()[-1])
    assert stored["params"] == {**own, "batch": 2}


def test_an_unknown_parameter_is_refused_naming_the_claims_parameters():
    message = (
        f"params: 'batches' is not a parameter of claim {FAST} (did you mean batch?); its parameters "
        "at scale quick are batch, n_chapters"
    )
    with pytest.raises(ValueError, match=re.escape(message)):
        run_claim(FAST, params={"batches": 500})
    with pytest.raises(TypeError, match="params must be a mapping of parameter names to values"):
        run_claim(FAST, params=[("batch", 2)])


@pytest.mark.parametrize("bad_id", [123, None, ["chapters.router.zloss_zero_logits"]])
def test_a_claim_id_that_is_not_a_string_is_a_type_error(bad_id):
    with pytest.raises(
        TypeError, match=r"claim_id=.* must be a claim id, a string <area>.<topic>.<property>"
    ):
        run_claim(bad_id)


def test_oc_refuses_more_replications_than_its_budget_at_once(capsys):
    from verify.oc import MAX_REPS, check_reps, rates
    from verify.oc.command import main as oc_main
    from verify.oc.simulators import Setup

    start = time.perf_counter()
    with pytest.raises(SystemExit) as stop:
        oc_main(["*", "--reps", "1000000000"])
    assert stop.value.code == 2 and time.perf_counter() - start < 1.0
    err = capsys.readouterr().err
    assert (
        f"--reps: reps=1000000000 is above the most replications per law, verify.oc.MAX_REPS = {MAX_REPS:,}"
        in err
    )
    with pytest.raises(ValueError, match="reps=0 must be a positive integer"):
        check_reps(0)
    with pytest.raises(TypeError, match="reps=2.5 must be a positive integer, not float"):
        check_reps(2.5)
    with pytest.raises(ValueError, match="MAX_REPS"):  # the library refuses it too, before a draw
        rates(Setup("t", {"t": lambda rng: pytest.fail("drew")}), reps=MAX_REPS + 1)
    assert check_reps(MAX_REPS) == MAX_REPS


def test_the_figures_folder_is_checked_before_a_figure_is_drawn(tmp_path):
    from verify.inputs import writable_folder

    def figure_folder(folder):  # as python -m paper_figs and save_figure check their --out
        return writable_folder(folder, appends=None)

    assert figure_folder(tmp_path / "new" / "figs").is_dir()  # created when missing
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    with pytest.raises(ValueError, match=rf"--out {re.escape(str(a_file))} is a file, not a folder"):
        figure_folder(a_file)
    folder = _read_only_folder(tmp_path)
    try:
        with pytest.raises(ValueError, match=rf"--out {re.escape(str(folder))} is not a writable folder: "):
            figure_folder(folder)
    finally:
        _writable_again(folder)


def test_paper_figs_refuses_an_out_it_cannot_write_before_drawing(tmp_path, capsys):
    from paper_figs.__main__ import main as figs_main

    blocker = tmp_path / "a_file"
    blocker.write_text("")
    assert figs_main(["fact_mlp.fig_capacity", "--out", str(blocker)]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "not a folder" in err and "Traceback" not in err
    assert "fact_mlp.fig_capacity" not in capsys.readouterr().out  # nothing drawn or saved
