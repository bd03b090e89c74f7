"""Run claims in worker processes (``python -m verify run ... --jobs N``): claims, not whole areas,
are split between the workers by expected seconds, keeping the claims that share a computed
result in one worker (:func:`work_units`, from the shared-result digests the records store).

Split from :mod:`verify.runner`, which runs claims in this process; a worker is itself a
``python -m verify run ... --jsonl`` process, and a worker that dies has its unreported claims
recorded as errors at once, naming the exit status or the signal."""

from __future__ import annotations

from collections.abc import Mapping

from verify.claims import Claim, Context
from verify.results import ResultStore
from verify.runner import failed_claim, run_claim, split_finished


def work_units(claims: list[Claim], shared_keys: Mapping[str, list[str]]) -> list[list[Claim]]:
    """The claims as units of work that share nothing: two claims are in one unit when they
    computed or read one shared result (``shared_keys``: claim id -> the digests its stored record
    lists, ``profile["shared_keys"]``), so the models they share are computed once, in one worker.
    A work group (:attr:`verify.claims.Claim.work_group`) with a claim whose sharing is not known
    (no stored record lists it) stays one unit. Units keep registry order.

    >>> from verify.claims import load_all
    >>> c = load_all()
    >>> a, b, d = c["hopfield.capacity.gain"], c["hopfield.capacity.d3"], c["retrieval.gd.closed_form"]
    >>> [[x.id for x in u] for u in work_units([a, b, d], {a.id: ["k1"], b.id: ["k2"], d.id: []})]
    [['hopfield.capacity.gain'], ['hopfield.capacity.d3'], ['retrieval.gd.closed_form']]
    >>> len(work_units([a, b, d], {a.id: ["k1"], b.id: ["k1"], d.id: []}))
    2
    >>> len(work_units([a, b, d], {a.id: ["k1"], d.id: []}))  # d3 unknown: hopfield stays whole
    2
    """
    parent = {c.id: c.id for c in claims}

    def root(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def join(x: str, y: str) -> None:
        parent[root(x)] = root(y)

    first: dict[str, str] = {}  # a digest or a whole work group -> the first claim seen with it
    unknown = {c.work_group for c in claims if shared_keys.get(c.id) is None}
    for c in claims:
        marks = [f"group {c.work_group}"] if c.work_group in unknown else []
        for mark in [*marks, *(shared_keys.get(c.id) or [])]:
            if mark in first:
                join(c.id, first[mark])
            else:
                first[mark] = c.id
    units: dict[str, list[Claim]] = {}
    for c in claims:
        units.setdefault(root(c.id), []).append(c)
    return list(units.values())


def stored_sharing(scale: str, folders) -> tuple[dict[str, list[str]], dict[str, float]]:
    """(claim id -> the shared-result digests of its newest record, claim id -> its seconds) from
    the records at ``scale`` in ``folders`` (later folders win: the reference, then the run's own
    results); a record made before the runner stored digests names none (None).

    >>> stored_sharing("quick", ["/nonexistent"])
    ({}, {})
    """
    from verify.results import latest_records

    keys, seconds = {}, {}
    for cid, r in latest_records(scale, folders).items():
        prof = r.get("profile") if isinstance(r.get("profile"), Mapping) else {}
        if isinstance(prof.get("shared_keys"), list):
            keys[cid] = prof["shared_keys"]
        if r.get("seconds"):
            seconds[cid] = float(r["seconds"])
    return keys, seconds


#: the expected seconds of a claim with no stored record
UNKNOWN_SECONDS = 5.0


def partition(
    claims: list[Claim], jobs: int, shared_keys: Mapping[str, list[str]], seconds: Mapping[str, float]
) -> list[list[Claim]]:
    """Split claims into at most ``jobs`` groups of whole :func:`work_units`, balancing expected
    seconds (``seconds``: claim id -> stored seconds, :data:`UNKNOWN_SECONDS` when unknown)
    greedily, costliest unit first; each group keeps registry order.

    >>> from verify.claims import load_all
    >>> c = load_all()
    >>> ids = ["hopfield.capacity.gain", "hopfield.capacity.d3", "retrieval.gd.closed_form"]
    >>> groups = partition([c[i] for i in ids], 2, {i: [i] for i in ids}, {ids[0]: 9.0, ids[1]: 5.0, ids[2]: 4.0})
    >>> [[x.id for x in g] for g in groups]
    [['hopfield.capacity.gain'], ['hopfield.capacity.d3', 'retrieval.gd.closed_form']]
    """
    units = work_units(claims, shared_keys)

    def cost(unit):
        return sum(seconds.get(c.id, UNKNOWN_SECONDS) for c in unit)

    bins: list[tuple[float, set[str]]] = [(0.0, set()) for _ in range(max(1, int(jobs)))]
    for unit in sorted(units, key=cost, reverse=True):
        i = min(range(len(bins)), key=lambda k: bins[k][0])
        bins[i] = (bins[i][0] + cost(unit), bins[i][1] | {c.id for c in unit})
    return [[c for c in claims if c.id in ids] for _, ids in bins if ids]


def run_claims_parallel(
    claims: list[Claim],
    ctx: Context,
    store: ResultStore | None,
    jobs: int,
    resume: bool = True,
    on_record=None,
    progress=None,
) -> list[dict]:
    """Run claims in ``jobs`` worker processes (``python -m verify run ... --jsonl``), split by
    :func:`partition` (expected seconds and shared results from the reference records, then
    ``store``'s), each with ``cpu_count // jobs`` threads. Records are appended to ``store`` by this
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
    from verify.results import reference_root

    # the reference's records first (a fresh clone's runs/ is empty), then the run's own
    folders = [reference_root(), reference_root() / "full", *([store.dir] if store is not None else [])]
    keys, seconds = stored_sharing(ctx.scale, folders)
    groups = partition(pending, jobs, keys, seconds)
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
