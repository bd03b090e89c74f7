"""Run claims in worker processes, whole areas per worker (``python -m verify run ... --jobs N``).

Split from :mod:`verify.runner`, which runs claims in this process; a worker is itself a
``python -m verify run ... --jsonl`` process, and a worker that dies has its unreported claims
recorded as errors at once, naming the exit status or the signal."""

from __future__ import annotations

from verify.claims import Claim, Context
from verify.results import ResultStore
from verify.runner import failed_claim, run_claim, split_finished


def _area_costs(claims: list[Claim], store: ResultStore | None) -> dict[str, float]:
    """Expected seconds per work group (:attr:`verify.claims.Claim.work_group`), from the latest
    stored run of each claim (5 s when unknown)."""
    latest = store.latest() if store is not None else {}
    costs: dict[str, float] = {}
    for claim in claims:
        seconds = latest.get(claim.id, {}).get("seconds", 5.0)
        costs[claim.work_group] = costs.get(claim.work_group, 0.0) + float(seconds)
    return costs


def partition_by_area(claims: list[Claim], jobs: int, store: ResultStore | None = None) -> list[list[Claim]]:
    """Split claims into at most ``jobs`` groups of whole areas (claims of one area share trained
    models through the cache; the language-model probes are a group of their own,
    :attr:`verify.claims.Claim.work_group`), balancing expected seconds greedily (longest first)."""
    costs = _area_costs(claims, store)
    bins: list[tuple[float, list[str]]] = [(0.0, []) for _ in range(max(1, int(jobs)))]
    for area in sorted(costs, key=costs.get, reverse=True):
        i = min(range(len(bins)), key=lambda k: bins[k][0])
        bins[i] = (bins[i][0] + costs[area], bins[i][1] + [area])
    return [[c for c in claims if c.work_group in areas] for _, areas in bins if areas]


def run_claims_parallel(
    claims: list[Claim],
    ctx: Context,
    store: ResultStore | None,
    jobs: int,
    resume: bool = True,
    on_record=None,
    progress=None,
) -> list[dict]:
    """Run claims in ``jobs`` worker processes (``python -m verify run ... --jsonl``), whole areas per
    worker, each with ``cpu_count // jobs`` threads. Records are appended to ``store`` by this
    process as they arrive, so an interrupted run keeps every finished claim; a worker that dies
    leaves error records for the claims it did not report as soon as its output closes (while the
    other workers go on), naming its exit status or the signal that killed it. ``progress`` (a
    :class:`verify.progress.RunProgress`) is told each claim's end and which claim each worker runs
    (the first of its group not yet reported); without one, a terminal line is shown when
    ``ctx.progress``."""
    from verify.progress import RunProgress

    own = progress is None
    if own:
        progress = RunProgress([c.id for c in claims], bar=ctx.progress, jobs=jobs)
    try:
        return _run_workers(claims, ctx, store, jobs, resume, on_record, progress)
    finally:
        if own:
            progress.close()


def _run_workers(claims, ctx, store, jobs, resume, on_record, progress) -> list[dict]:
    import collections
    import json
    import os
    import queue
    import subprocess
    import sys
    import tempfile
    import threading

    done, pending = split_finished(claims, ctx, store, resume, progress, on_record)
    groups = partition_by_area(pending, jobs, store)
    threads = str(max(1, (os.cpu_count() or 1) // max(1, len(groups))))
    inbox: queue.Queue = queue.Queue()
    procs = []

    def deliver(record):
        done[record["id"]] = record
        if store is not None:
            store.append(record)
        progress.finished(record)
        group = next((g for g in groups if any(c.id == record["id"] for c in g)), [])
        following = next((c for c in group if c.id not in done), None)
        if following is not None:
            progress.started(following.id)  # a worker runs its group in order
        if on_record is not None:
            on_record(record)

    with tempfile.TemporaryDirectory(prefix="recall-bounds-") as tmp:
        for i, group in enumerate(groups):
            cmd = [
                sys.executable,
                "-m",
                "verify",
                "run",
                *[c.id for c in group],
                "--jsonl",
                "--fresh",
                "--jobs",
                "1",
                "--out",
                os.path.join(tmp, str(i)),
                "--seed",
                str(ctx.seed),
                "--scale",
                ctx.scale,
                "--device",
                ctx.device,
                "--dtype",
                ctx.dtype,
            ]
            env = dict(os.environ, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads, RECALL_WORKER="1")
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            tail: collections.deque = collections.deque(maxlen=200)
            procs.append((proc, group, tail))
            progress.started(group[0].id)

            def pump(p=proc, k=i):
                for line in p.stdout:
                    line = line.strip()
                    if line.startswith("{"):
                        inbox.put(json.loads(line))
                inbox.put(k)  # this worker's stdout closed: it finished or died

            def drain(p=proc, t=tail):  # read stderr as it comes, so a chatty worker never blocks
                for line in p.stderr:
                    t.append(line)

            threading.Thread(target=pump, daemon=True).start()
            threading.Thread(target=drain, daemon=True).start()
        open_streams = len(procs)
        try:
            while open_streams:
                record = inbox.get()
                if isinstance(record, int):  # a worker ended: record its missing claims at once
                    open_streams -= 1
                    proc, group, tail = procs[record]
                    proc.wait()
                    for claim in group:
                        if claim.id not in done:
                            rec = run_claim(
                                failed_claim(
                                    claim,
                                    f"worker process {exit_cause(proc.returncode)} before reporting this "
                                    f"claim; its stderr ends: {''.join(tail)[-2000:]}",
                                ),
                                ctx,
                                controls=False,
                            )
                            rec.pop("peak_cuda_bytes", None)  # this process's peak, not the worker's
                            rec.update(peak_rss_bytes=None, peak_rss_scope="unknown: the worker died")
                            deliver(rec)
                    continue
                deliver(record)
        except BaseException:  # Ctrl-C or an error here: the workers must not run on unwatched
            for proc, _, _ in procs:
                if proc.poll() is None:
                    proc.terminate()
            for proc, _, _ in procs:
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
            raise
    records = [done[c.id] for c in claims]
    if store is not None:
        store.keep_newest(records)
    return records


def exit_cause(returncode: int | None) -> str:
    """Words for a worker's exit status: a negative status is the signal that killed it."""
    import signal

    if returncode is None:
        return "no exit status"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        hint = (
            " (SIGKILL is what the out-of-memory killer sends; see the kernel log)"
            if -returncode == signal.SIGKILL
            else ""
        )
        return f"killed by {name}{hint}"
    return f"exited with status {returncode}"
