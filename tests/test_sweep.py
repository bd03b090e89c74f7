"""The shared sweep runner: same results in process, on local workers and on a Dask cluster;
every finished point is on disk at once, and a re-run resumes."""

import json

import numpy as np
import pytest

from verify.sweep import SweepError, expand_grid, load_records, main, point_key, run_grid


def draw_point(params, seed):
    """A seeded computation: depends only on (params, seed)."""
    rng = np.random.default_rng([seed, params["n"]])
    x = rng.standard_normal((params["n"], params["dim"]))
    return {"norm": float(np.linalg.norm(x)), "n": params["n"]}


def failing_point(params, seed):
    if params["n"] == 3:
        raise RuntimeError("boom at n=3")
    return {"n": params["n"], "seed": seed}


GRID = expand_grid(n=[2, 3, 5], dim=[1, 4])


def _results(records):
    return sorted((json.dumps(r["params"], sort_keys=True), r["seed"], r["result"]["norm"]) for r in records)


def test_expand_grid_order_and_empty_axis():
    assert expand_grid(a=[1, 2], b=["x"]) == [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}]
    with pytest.raises(ValueError, match="grid axis 'b' is empty"):
        expand_grid(a=[1], b=[])


def test_in_process_and_worker_processes_agree(tmp_path):
    one = run_grid(draw_point, GRID, seeds=[0, 1], out_path=tmp_path / "a.jsonl", workers=1)
    two = run_grid(draw_point, GRID, seeds=[0, 1], out_path=tmp_path / "b.jsonl", workers=2)
    assert len(one) == len(two) == 12
    assert _results(one) == _results(two)
    # records come back in grid order whatever order the workers finished in
    assert [(r["params"], r["seed"]) for r in two] == [(p, s) for p in GRID for s in (0, 1)]
    assert len(load_records(tmp_path / "b.jsonl")) == 12


def test_dask_local_cluster_matches_local_run(tmp_path):
    distributed = pytest.importorskip("distributed")
    local = run_grid(draw_point, GRID, seeds=[0, 1], out_path=tmp_path / "local.jsonl", workers=1)
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        remote = run_grid(
            draw_point,
            GRID,
            seeds=[0, 1],
            out_path=tmp_path / "dask.jsonl",
            scheduler=cluster.scheduler_address,
        )
    assert _results(remote) == _results(local)
    assert len(load_records(tmp_path / "dask.jsonl")) == 12


def test_resume_runs_only_missing_points_and_ignores_a_cut_line(tmp_path):
    path = tmp_path / "sweep.jsonl"
    first = run_grid(draw_point, GRID[:2], seeds=[0], out_path=path, workers=1)
    before = path.read_text()
    with path.open("a") as fh:  # an interrupted write leaves half a line behind
        fh.write('{"key": "abc", "fn": "tests.te')
    full = run_grid(draw_point, GRID, seeds=[0], out_path=path, workers=1)
    assert len(full) == len(GRID)
    assert path.read_text().startswith(before)
    rows = load_records(path)
    assert len(rows) == len(GRID)  # the two finished points were not run again
    assert full[:2] == first
    again = run_grid(draw_point, GRID, seeds=[0], out_path=path, workers=1)
    assert again == full and len(load_records(path)) == len(GRID)


def test_errors_are_recorded_raised_after_the_sweep_and_rerun(tmp_path):
    path = tmp_path / "err.jsonl"
    grid = expand_grid(n=[1, 3, 4])
    with pytest.raises(SweepError, match="1 of 3 sweep points raised.*boom at n=3"):
        run_grid(failing_point, grid, seeds=[7], out_path=path, workers=1)
    rows = load_records(path)
    assert len(rows) == 3 and sum("error" in r for r in rows) == 1
    ok = run_grid(failing_point, grid, seeds=[7], out_path=path, workers=1, raise_errors=False)
    assert [r["params"]["n"] for r in ok] == [1, 4]
    assert len(load_records(path)) == 4  # only the failed point ran again


def test_bad_input():
    with pytest.raises(ValueError, match="top-level function"):
        run_grid(lambda p, s: 0, GRID, seeds=[0], workers=1)
    with pytest.raises(ValueError, match="at least one seed"):
        run_grid(draw_point, GRID, seeds=[], workers=1)
    with pytest.raises(ValueError, match="workers=0"):
        run_grid(draw_point, GRID, seeds=[0], workers=0)


def test_key_depends_on_function_params_and_seed():
    k = point_key("m:f", {"a": 1, "b": 2}, 0)
    assert k == point_key("m:f", {"b": 2, "a": 1}, 0)
    assert (
        len(
            {
                k,
                point_key("m:g", {"a": 1, "b": 2}, 0),
                point_key("m:f", {"a": 1, "b": 3}, 0),
                point_key("m:f", {"a": 1, "b": 2}, 1),
            }
        )
        == 4
    )


def test_command_line(tmp_path, capsys):
    out = tmp_path / "cli.jsonl"
    assert (
        main(
            [
                "tests.test_sweep:draw_point",
                "--grid",
                '{"n": [2, 3], "dim": [2]}',
                "--seeds",
                "0",
                "1",
                "--out",
                str(out),
                "--workers",
                "1",
                "--no-progress",
            ]
        )
        == 0
    )
    assert "4 points finished" in capsys.readouterr().out
    assert len(load_records(out)) == 4


def test_local_workers_run_one_thread_whatever_the_environment(tmp_path, monkeypatch):
    """A local worker limits torch's pool and every BLAS pool to one thread, even where the
    environment asks for four (spawned workers start from the environment, not from this process)."""
    import multiprocessing

    from verify.sweep import pool_threads

    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    records = run_grid(
        pool_threads,
        [{}],
        seeds=[0, 1],
        out_path=None,
        workers=2,
        mp_context=multiprocessing.get_context("spawn"),
    )
    assert [r["result"] for r in records] == [[1], [1]]
