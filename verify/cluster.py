"""Run claims on a Dask cluster (``python -m verify run ... --scheduler tcp://HOST:PORT``, or
:func:`verify.run_claims` with ``scheduler=``), through ``dask.distributed``.

Each claim is one task. A task runs the claim and its controls in a worker process exactly as a
local run does (:func:`verify.runner.run_claim`, one thread per BLAS pool), with a cache of shared
results kept by that worker process for the run's seed, device, dtype and scale, so that claims of
one area that land on the same worker train their shared models once (claims on other workers
train them again: the records are the same, only the time differs). Tasks are submitted area by
area, the costliest first (stored seconds, :func:`verify.progress.expected_seconds`).

This process is the one writer of the results store: it appends each record as its task ends, so
an interrupted run keeps every finished claim and the same command resumes from them (a claim with
a finished record of the same parameters, seed, device, dtype and code is not submitted again).
A task that raises, or a worker that dies, gives an error record naming the cause. A claim's own
sweeps (grids of seeds or points) run inside its task's worker.

A scheduler and its workers are started by the user, for example ``dask scheduler`` and
``dask worker tcp://HOST:8786 --nthreads 1`` (one thread per worker process, as the records
assume), or on SLURM or PBS by dask-jobqueue (docs/performance.md, "On a cluster").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

#: this worker process's caches of shared results, by (seed, device, dtype, scale)
_WORKER_CACHES: dict[tuple, dict] = {}
#: how long to wait for the scheduler to answer before the address is refused
CONNECT_TIMEOUT = "20s"


def _remote_claim(claim_id: str, seed: int, device: str, dtype: str, scale: str) -> dict:
    """Run one claim in a Dask worker process (a task's function: top level, picklable) and return
    its record as strict-JSON-ready data (what a local worker prints)."""
    import json

    from theory.cli_support import dumps
    from verify.claims import Context, load_all
    from verify.runner import run_claim

    cache = _WORKER_CACHES.setdefault((int(seed), device, dtype, scale), {})
    ctx = Context(seed=int(seed), device=device, dtype=dtype, scale=scale, cache=cache, audit=True)
    record = run_claim(load_all()[claim_id], ctx)
    return json.loads(dumps(record))  # the form a record is stored in, whichever way it ran


def _client(scheduler: Any):
    """A ``distributed.Client`` for ``scheduler`` (an address, or a Client used as it is), and
    whether this module made it (and so closes it)."""
    try:
        from distributed import Client
    except ImportError as exc:  # the optional extra
        raise ValueError(
            "--scheduler needs dask.distributed: pip install 'recall-bounds[dask]' (or dask[distributed])"
        ) from exc
    if isinstance(scheduler, Client):
        return scheduler, False
    if not isinstance(scheduler, str) or not scheduler.strip():
        raise ValueError(f"scheduler={scheduler!r} must be a Dask scheduler address such as tcp://HOST:8786")
    try:
        return Client(scheduler, timeout=CONNECT_TIMEOUT), True
    except (OSError, TimeoutError) as exc:
        raise ValueError(f"no Dask scheduler answers at {scheduler}: {exc}") from None


def submission_order(claims: Sequence, expected: dict[str, float]) -> list:
    """``claims`` ordered for submission: area by area (:attr:`verify.claims.Claim.work_group`),
    the areas with the most stored seconds first, each area in registry order (so that its
    claims meet the shared results of the ones before them on the same worker).

    >>> from types import SimpleNamespace as C
    >>> cs = [C(id="a.x", work_group="a"), C(id="b.x", work_group="b"), C(id="a.y", work_group="a")]
    >>> [c.id for c in submission_order(cs, {"b.x": 9.0, "a.x": 1.0, "a.y": 1.0})]
    ['b.x', 'a.x', 'a.y']
    """
    cost: dict[str, float] = {}
    for c in claims:
        cost[c.work_group] = cost.get(c.work_group, 0.0) + float(expected.get(c.id, 5.0))
    rank = {g: i for i, g in enumerate(sorted(cost, key=lambda g: -cost[g]))}
    return sorted(claims, key=lambda c: rank[c.work_group])


def run_claims_on_cluster(
    claims: list,
    ctx,
    store,
    scheduler: Any,
    resume: bool = True,
    on_record: Callable[[dict], None] | None = None,
    progress=None,
) -> list[dict]:
    """Run ``claims`` (:class:`verify.claims.Claim`) at ``ctx``'s seed, device, dtype and scale on
    the Dask cluster of ``scheduler`` (an address ``tcp://HOST:PORT`` or a ``distributed.Client``),
    appending each record to ``store`` (a :class:`verify.results.ResultStore`, or None) as it
    arrives; returns the records in the order of ``claims``. ``progress`` (a
    :class:`verify.progress.RunProgress`) is told each end. See the module's docstring.
    """
    from verify.progress import RunProgress
    from verify.runner import failed_claim, run_claim, split_finished

    own_progress = progress is None
    if own_progress:
        progress = RunProgress([c.id for c in claims], bar=ctx.progress)
    done, pending = split_finished(claims, ctx, store, resume, progress, on_record)
    if pending:
        from distributed import as_completed

        from verify.progress import expected_seconds
        from verify.results import reading_root

        client, own_client = _client(scheduler)
        futures = {}
        try:
            order = submission_order(pending, expected_seconds([reading_root()], ctx.scale))
            for claim in order:
                fut = client.submit(
                    _remote_claim, claim.id, ctx.seed, ctx.device, ctx.dtype, ctx.scale, pure=False
                )
                futures[fut.key] = (fut, claim)
            for fut in as_completed([f for f, _ in futures.values()]):
                claim = futures[fut.key][1]
                try:
                    record = fut.result()
                except Exception as exc:  # noqa: BLE001 - a task that raised or a worker that died
                    why = f"the Dask task of this claim failed: {type(exc).__name__}: {exc}"
                    record = run_claim(failed_claim(claim, why), ctx, controls=False)
                done[claim.id] = record
                if store is not None:
                    store.append(record)
                progress.finished(record)
                if on_record is not None:
                    on_record(record)
        except BaseException:  # Ctrl-C or an error here: nothing is left running unwatched
            for fut, _ in futures.values():
                fut.cancel()
            raise
        finally:
            if own_client:
                client.close()
    if own_progress:
        progress.close()
    records = [done[c.id] for c in claims]
    if store is not None:
        store.keep_newest(records)
    return records
