"""One executor interface for parameter sweeps (README.md#command-line, "Sweeps").

A sweep is a grid of parameter dicts times a list of seeds. Every point ``(params, seed)`` is
handed to a top-level (picklable) function ``fn(params, seed) -> JSON-able result``. Points run

- in this process (``workers=1``), or
- on local worker processes (``concurrent.futures.ProcessPoolExecutor``, ``workers > 1``, each on
  one thread: :func:`one_thread`), or
- on a Dask cluster through ``dask.distributed`` when a scheduler address (``tcp://HOST:PORT``)
  or a ``distributed.Client`` is given (``scheduler=``; on a command line ``--scheduler``).

Each finished point is appended to a JSON-lines file at once (flushed and fsynced), so an
interrupted sweep resumes where it stopped: a re-run skips every point whose key (function,
parameters, seed) already has a successful line. A point whose function raised is recorded with
its error and traceback and run again on the next call. A tqdm bar shows points done and the
time left; it is quiet when stderr is not a terminal.

Example::

    from verify.sweep import expand_grid, run_grid
    records = run_grid(my_point, expand_grid(n_subjects=[64, 128], dim=[8, 16]), seeds=range(3),
                       out_path="/tmp/sweep.jsonl", workers=2)

Command line (any top-level function ``module:function``)::

    python -m verify.sweep constructions.foo:point --grid '{"n_subjects": [64, 128]}' \\
        --seeds 0 1 2 --out /tmp/sweep.jsonl [--workers 2] [--scheduler tcp://HOST:PORT]
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import importlib
import itertools
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from tqdm import tqdm

from verify.progress import bar_shape

__all__ = [
    "SweepError",
    "expand_grid",
    "point_key",
    "run_grid",
    "one_thread",
    "pool_threads",
    "load_records",
    "results_by_point",
    "add_sweep_arguments",
    "main",
]


class SweepError(RuntimeError):
    """Raised after a sweep finished when some points raised (their errors are in the file)."""


def expand_grid(**axes: Iterable) -> list[dict]:
    """Cartesian product of named axes, in the order given (the last axis varies fastest)."""
    names = list(axes)
    values = [list(v) for v in axes.values()]
    for name, vals in zip(names, values):
        if not vals:
            raise ValueError(f"grid axis {name!r} is empty: a sweep needs at least one value per axis")
    return [dict(zip(names, combo)) for combo in itertools.product(*values)]


def _fn_name(fn: Callable) -> str:
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if module is None or qualname is None or "<locals>" in qualname or "<lambda>" in qualname:
        raise ValueError(f"sweep function {fn!r} must be a top-level function (picklable by name)")
    return f"{module}:{qualname}"


def _canonical(value: Any) -> Any:
    """JSON form of parameters and results (numpy scalars/arrays become Python; NaN is an error)."""
    from verify.results import jsonable

    return jsonable(value)


def point_key(fn_name: str, params: Mapping, seed: int) -> str:
    """Stable identity of one point: hash of (function, sorted parameters, seed)."""
    text = json.dumps({"fn": fn_name, "params": _canonical(dict(params)), "seed": int(seed)}, sort_keys=True)
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def _run_point(fn: Callable, params: dict, seed: int) -> dict:
    """Run one point and time it; exceptions become an ``error`` field (never lost)."""
    start = time.perf_counter()
    try:
        result, error, tb = _canonical(fn(dict(params), int(seed))), None, None
    except Exception as exc:  # noqa: BLE001 - recorded in the file, raised after the sweep
        result, error, tb = None, f"{type(exc).__name__}: {exc}", traceback.format_exc(limit=8)
    out = {"result": result, "seconds": round(time.perf_counter() - start, 4)}
    if error is not None:
        out["error"], out["traceback"] = error, tb
    return out


def load_records(out_path: str | os.PathLike) -> list[dict]:
    """Every complete line of a sweep file (a line cut by an interrupted write is ignored)."""
    path = Path(out_path)
    if not path.exists():
        return []
    rows = []
    with path.open() as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows


def _end_cut_line(path: Path) -> None:
    """If an interrupted write left a line without its newline, end it, so the next record
    starts on a line of its own (the cut line is then ignored by :func:`load_records`)."""
    if path.exists() and path.stat().st_size > 0:
        with path.open("rb") as fh:
            fh.seek(-1, os.SEEK_END)
            last = fh.read(1)
        if last != b"\n":
            with path.open("a") as fh:
                fh.write("\n")


def _append(path: Path, record: dict) -> None:
    with path.open("a") as fh:
        fh.write(json.dumps(record) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _normalise_grid(grid) -> list[dict]:
    if isinstance(grid, Mapping):
        return expand_grid(**grid)
    points = [dict(p) for p in grid]
    for p in points:
        if not isinstance(p, dict):
            raise ValueError(f"grid entries must be parameter dicts, got {p!r}")
    return points


def _progress_enabled(progress) -> bool:
    if progress is None:
        return bool(getattr(sys.stderr, "isatty", lambda: False)())
    return bool(progress)


def one_thread() -> None:
    """Initializer of a local worker process: one thread for torch's pool and every BLAS pool.

    ``workers`` processes already occupy the cores; a worker left with the machine's default (a
    thread per core in each pool, or the parent's pools inherited through fork) oversubscribes
    them. Measured on the 2-core AMD EPYC, 8 points of 20 float64 600 x 600 products each in numpy
    and in torch, 2 workers, 3 runs: 3.1-5.4 s wall and 5.9-10.5 worker CPU-s with the default
    threads, 1.9 s and 3.4-3.5 CPU-s with one.

    >>> import concurrent.futures as cf
    >>> with cf.ProcessPoolExecutor(1, initializer=one_thread) as pool:
    ...     pool.submit(pool_threads).result()
    [1]
    """
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = "1"  # pools loaded later
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def pool_threads(params: dict | None = None, seed: int | None = None) -> list[int]:
    """The distinct thread counts of this process's torch pool and loaded BLAS/OpenMP pools (a
    sweep point function too: ``fn(params, seed)``).

    >>> all(n >= 1 for n in pool_threads())
    True
    """
    import torch
    from threadpoolctl import threadpool_info

    return sorted({info["num_threads"] for info in threadpool_info()} | {torch.get_num_threads()})


def _local_iter(fn, todo, workers, mp_context):
    if workers == 1:
        for point in todo:
            yield point, _run_point(fn, point["params"], point["seed"])
        return
    with cf.ProcessPoolExecutor(max_workers=workers, mp_context=mp_context, initializer=one_thread) as pool:
        futures = {pool.submit(_run_point, fn, p["params"], p["seed"]): p for p in todo}
        for fut in cf.as_completed(futures):
            yield futures[fut], fut.result()


def _dask_iter(fn, todo, scheduler):
    from distributed import Client, as_completed

    own = not isinstance(scheduler, Client)
    client = Client(scheduler) if own else scheduler
    try:
        futures = [
            client.submit(
                _run_point,
                fn,
                p["params"],
                p["seed"],
                pure=False,
                key=f"sweep-{p['key']}-{time.monotonic_ns()}",
            )
            for p in todo
        ]
        by_key = {f.key: p for f, p in zip(futures, todo)}
        for fut in as_completed(futures):
            yield by_key[fut.key], fut.result()
    finally:
        if own:
            client.close()


def run_grid(
    fn: Callable[[dict, int], Any],
    grid,
    seeds: Iterable[int] = (0,),
    out_path: str | os.PathLike | None = None,
    *,
    workers: int | None = None,
    scheduler=None,
    progress: bool | None = None,
    resume: bool = True,
    raise_errors: bool = True,
    mp_context=None,
    desc: str | None = None,
) -> list[dict]:
    """Run ``fn(params, seed)`` on every grid point times every seed; return records in grid order.

    grid: a list of parameter dicts, or a dict of axes (expanded by :func:`expand_grid`).
    seeds: the seeds (each point runs once per seed).
    out_path: JSON-lines file; each finished point is appended at once. With ``resume`` (default)
      points already recorded without error are not run again. ``None`` keeps results in memory.
    workers: local worker processes (default: ``os.cpu_count()``; 1 runs in this process).
    scheduler: a Dask scheduler address (``"tcp://HOST:PORT"``) or a ``distributed.Client``;
      when given, the points run on that cluster and ``workers`` is ignored.
    progress: tqdm bar with time left; ``None`` shows it only when stderr is a terminal.
    raise_errors: raise :class:`SweepError` after the sweep if any point raised (the finished
      points are in the file either way).

    Each record: ``{"key", "fn", "params", "seed", "result", "seconds"}`` (+ ``"error"``,
    ``"traceback"`` when the point raised). Results do not depend on the executor: ``fn`` gets
    only its parameters and seed, and must draw randomness from them (README.md, "Seeds").
    """
    name = _fn_name(fn)
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("a sweep needs at least one seed")
    if workers is not None and int(workers) < 1:
        raise ValueError(f"workers={workers} must be >= 1")
    points = []
    for params in _normalise_grid(grid):
        params = _canonical(params)
        for seed in seeds:
            points.append({"key": point_key(name, params, seed), "params": params, "seed": seed})
    path = Path(out_path) if out_path is not None else None
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        _end_cut_line(path)
    done: dict[str, dict] = {}
    if path is not None and resume:
        for row in load_records(path):
            if row.get("fn") == name and "error" not in row:
                done[row.get("key")] = row
    unique, seen = [], set()  # a grid may name the same point twice: run it once
    for p in points:
        if p["key"] not in seen:
            seen.add(p["key"])
            unique.append(p)
    todo = [p for p in unique if p["key"] not in done]
    errors = []
    bar = tqdm(
        total=len(unique),
        initial=len(unique) - len(todo),
        desc=desc or name.split(":")[-1],
        unit="pt",
        disable=not _progress_enabled(progress),
        leave=False,
        **bar_shape(),
    )
    if todo:
        if scheduler is not None:
            stream = _dask_iter(fn, todo, scheduler)
        else:
            n_workers = int(workers) if workers is not None else (os.cpu_count() or 1)
            stream = _local_iter(fn, todo, max(1, min(n_workers, len(todo))), mp_context)
        for point, outcome in stream:
            record = {
                "key": point["key"],
                "fn": name,
                "params": point["params"],
                "seed": point["seed"],
                **outcome,
            }
            if path is not None:
                _append(path, record)
            if "error" in record:
                errors.append(record)
            else:
                done[point["key"]] = record
            bar.update(1)
    bar.close()
    if errors and raise_errors:
        first = errors[0]
        raise SweepError(
            f"{len(errors)} of {len(todo)} sweep points raised; first "
            f"{first['params']} seed {first['seed']}: {first['error']}"
        )
    return [done[p["key"]] for p in points if p["key"] in done]


def results_by_point(records: Sequence[dict]) -> dict[tuple, list]:
    """Group records' results by parameters: ``{sorted param items: [result per seed]}``."""
    out: dict[tuple, list] = {}
    for row in records:
        out.setdefault(tuple(sorted(row["params"].items())), []).append(row["result"])
    return out


def add_sweep_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``--workers``, ``--scheduler`` and ``--no-progress`` to any area's command line."""
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="local worker processes (default: all cores; 1 = in process)",
    )
    parser.add_argument(
        "--scheduler",
        default=None,
        metavar="tcp://HOST:PORT",
        help="run the grid on this Dask scheduler through dask.distributed",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def _load_function(spec: str) -> Callable:
    module, sep, attr = spec.partition(":")
    if not sep or not attr:
        raise ValueError(f"function {spec!r} must read module:function")
    fn = importlib.import_module(module)
    for part in attr.split("."):
        fn = getattr(fn, part)
    return fn


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m verify.sweep", description="Run fn(params, seed) over a grid times seeds."
    )
    parser.add_argument("function", help="module:function, a top-level function (params, seed)")
    parser.add_argument(
        "--grid", required=True, help='JSON: a dict of axes {"n": [1, 2]} or a list of parameter dicts'
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--out", required=True, help="JSON-lines results file (resumed if present)")
    parser.add_argument("--fresh", action="store_true", help="do not reuse finished points")
    add_sweep_arguments(parser)
    args = parser.parse_args(argv)
    fn = _load_function(args.function)
    records = run_grid(
        fn,
        json.loads(args.grid),
        args.seeds,
        args.out,
        workers=args.workers,
        scheduler=args.scheduler,
        progress=False if args.no_progress else None,
        resume=not args.fresh,
    )
    print(f"{len(records)} points finished in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
