"""Run claims, append each result as it finishes, resume finished ones."""

from __future__ import annotations

import time
import traceback

from tqdm import tqdm

from verify.claims import Claim, Context, Outcome
from verify.ledger import entry_for
from verify.results import ResultStore, git_revision, jsonable, versions

STATUSES = ("pass", "fail", "not reproduced", "ledger now passes", "vacuous", "skipped", "error")


def status_of(
    claim: Claim,
    outcome: Outcome | None,
    error: str | None,
    controls: list[dict] | None = None,
    scale: str = "quick",
) -> str:
    if error is not None:
        return "error"
    if outcome.skipped:
        return "skipped"
    if controls and any(c["status"] == "error" for c in controls):
        return "error"
    entry = entry_for(claim.id, scale)
    known = set(entry.known_vacuous) if entry is not None else set()
    if controls and any(c["status"] == "passes" and c["name"] not in known for c in controls):
        return "vacuous"  # the criterion also holds where the statement must not: it tests nothing
    if entry is not None:
        if entry.flips_with_seed:
            return "not reproduced"  # a verdict that flips with the seed is not a pass
        return "ledger now passes" if outcome.passed else "not reproduced"
    return "pass" if outcome.passed else "fail"


def is_failure(record: dict) -> bool:
    """Statuses that make the exit status non-zero. Skips and ledgered failures do not."""
    return record["status"] in ("fail", "error", "ledger now passes", "vacuous")


def run_control(claim: Claim, control, ctx: Context, params: dict) -> dict:
    """Run the claim's check on one control's parameters. The control does its job when the
    criterion fails there ("fails as required"); "passes" means the claim cannot tell the control
    from the real setting."""
    start = time.perf_counter()
    row = {"name": control.name, "why": control.why}
    try:
        cparams = control.apply(params)
        row["params"] = jsonable({k: v for k, v in cparams.items() if params.get(k, object()) != v})
        out = claim.check(cparams, ctx)
        if not isinstance(out, Outcome):
            raise TypeError(f"check of {claim.id} returned {type(out).__name__}, not Outcome")
        row.update(
            predicted=jsonable(out.predicted),
            measured=jsonable(out.measured),
            criterion_passed=bool(out.passed),
        )
        if out.skipped:
            row["status"], row["skipped"] = "skipped", out.skipped
        else:
            row["status"] = "passes" if out.passed else "fails as required"
    except Exception as exc:  # noqa: BLE001 - a control that cannot run is an error
        row.update(
            status="error", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=6)
        )
    row["seconds"] = round(time.perf_counter() - start, 3)
    return row


def run_controls(claim: Claim, ctx: Context, params: dict | None = None) -> list[dict]:
    params = claim.params(ctx.scale) if params is None else dict(params)
    return [run_control(claim, c, ctx, params) for c in claim.controls]


def run_claim(claim: Claim, ctx: Context, params: dict | None = None, controls: bool = True) -> dict:
    """Run one claim and (unless ``controls`` is False) each of its controls."""
    params = claim.params(ctx.scale) if params is None else dict(params)
    peak_scope = reset_peak_memory(ctx.device)
    start = time.perf_counter()
    outcome, error = None, None
    try:
        outcome = claim.check(params, ctx)
        if not isinstance(outcome, Outcome):
            raise TypeError(f"check of {claim.id} returned {type(outcome).__name__}, not Outcome")
        predicted, measured, details = (
            jsonable(outcome.predicted),
            jsonable(outcome.measured),
            jsonable(outcome.details),
        )
    except Exception as exc:  # noqa: BLE001 - recorded, reported, exit status 1
        error = f"{type(exc).__name__}: {exc}"
        predicted = measured = None
        details = {"traceback": traceback.format_exc(limit=6)}
    control_rows = None
    if controls and error is None and not outcome.skipped and claim.controls:
        control_rows = run_controls(claim, ctx, params)
    seconds = time.perf_counter() - start
    status = status_of(claim, outcome, error, control_rows, ctx.scale)
    entry = entry_for(claim.id, ctx.scale)
    record = {
        "id": claim.id,
        "scale": ctx.scale,
        "params": jsonable(params),
        "provenance": claim.provenance,
        "source": claim.source,
        "statement": claim.statement,
        "kind": claim.kind,
        "seed_rule": claim.seed_rule,
        "predicted": predicted,
        "measured": measured,
        "passed": bool(
            outcome is not None
            and outcome.passed
            and error is None
            and not outcome.skipped
            and status != "not reproduced"
        ),
        "status": status,
        "seed": ctx.seed,
        "device": ctx.device,
        "dtype": ctx.dtype,
        "seconds": round(seconds, 3),
        "git": git_revision(),
        "code": git_revision(),
        "versions": versions(),
        "details": details,
        **peak_memory(ctx.device, peak_scope),
    }
    if outcome is not None and outcome.dtype and outcome.dtype != ctx.dtype:
        record["dtype"], record["context_dtype"] = outcome.dtype, ctx.dtype
    if claim.demonstrates_failure:
        record["demonstrates_failure"] = True
    if claim.independence:
        record["independence"] = claim.independence
    if control_rows is not None:
        record["controls"] = control_rows
        known = set(entry.known_vacuous) if entry is not None else set()
        for c in control_rows:
            if c["status"] == "passes" and c["name"] in known:
                c["known"] = "ledgered: the criterion is known to pass on this control"
        bad = [
            c
            for c in control_rows
            if c["status"] == "error" or (c["status"] == "passes" and c["name"] not in known)
        ]
        if bad and error is None:
            record["error" if any(c["status"] == "error" for c in bad) else "vacuous"] = "; ".join(
                f"control {c['name']}: "
                + (c.get("error") or f"criterion passes (measured {c.get('measured')})")
                for c in bad
            )
    if outcome is not None and outcome.skipped:
        record["skipped"] = outcome.skipped
    if error:
        record["error"] = error
    if entry is not None:
        record["ledger"] = entry.reason
        if entry.flips_with_seed and outcome is not None:
            record["seed_verdict"] = bool(outcome.passed)
    return record


def reset_peak_memory(device: str = "cpu") -> str:
    """Reset the peak-memory counters before a claim; returns the scope the next
    :func:`peak_memory` reading covers: "claim" where the resident-set peak can be reset
    (Linux /proc/self/clear_refs), else "process" (the peak since the process started)."""
    import sys

    if str(device).startswith("cuda") and "torch" in sys.modules:
        import torch

        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")  # resets VmHWM to the current resident set
        return "claim"
    except OSError:
        return "process"


def peak_memory(device: str = "cpu", scope: str = "process") -> dict:
    """Peak memory fields of a claim record: ``peak_rss_bytes`` (VmHWM of this process, or
    ru_maxrss where /proc is absent), its ``peak_rss_scope`` ("claim" when it was reset before
    the claim, else "process"), and on cuda ``peak_cuda_bytes`` (torch.cuda.max_memory_allocated)."""
    import sys

    out: dict = {}
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    out["peak_rss_bytes"] = int(line.split()[1]) * 1024
    except OSError:
        pass
    if "peak_rss_bytes" not in out:
        import resource

        out["peak_rss_bytes"] = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024
        scope = "process"
    out["peak_rss_scope"] = scope
    if str(device).startswith("cuda") and "torch" in sys.modules:
        import torch

        if torch.cuda.is_available():
            out["peak_cuda_bytes"] = int(torch.cuda.max_memory_allocated())
    return out


def run_claims(
    claims: list[Claim], ctx: Context, store: ResultStore | None = None, resume: bool = True, on_record=None
) -> list[dict]:
    records = []
    bar = tqdm(claims, desc="claims", unit="claim", disable=not ctx.progress, leave=False)
    for claim in bar:
        bar.set_postfix_str(claim.id)
        params = claim.params(ctx.scale)
        record = None
        if store is not None and resume:
            record = store.find(
                claim.id, ctx.scale, jsonable(params), ctx.seed, ctx.device, ctx.dtype, git_revision()
            )
            if record is not None:
                record = dict(record, resumed=True)
        if record is None:
            record = run_claim(claim, ctx, params)
            if store is not None:
                store.append(record)
        records.append(record)
        if on_record is not None:
            on_record(record)
    return records


def _area_costs(claims: list[Claim], store: ResultStore | None) -> dict[str, float]:
    """Expected seconds per area, from the latest stored run of each claim (5 s when unknown)."""
    latest = store.latest() if store is not None else {}
    costs: dict[str, float] = {}
    for claim in claims:
        seconds = latest.get(claim.id, {}).get("seconds", 5.0)
        costs[claim.area] = costs.get(claim.area, 0.0) + float(seconds)
    return costs


def partition_by_area(claims: list[Claim], jobs: int, store: ResultStore | None = None) -> list[list[Claim]]:
    """Split claims into at most ``jobs`` groups of whole areas (claims of one area share trained
    models through the cache), balancing expected seconds greedily (longest area first)."""
    costs = _area_costs(claims, store)
    bins: list[tuple[float, list[str]]] = [(0.0, []) for _ in range(max(1, int(jobs)))]
    for area in sorted(costs, key=costs.get, reverse=True):
        i = min(range(len(bins)), key=lambda k: bins[k][0])
        bins[i] = (bins[i][0] + costs[area], bins[i][1] + [area])
    return [[c for c in claims if c.area in areas] for _, areas in bins if areas]


def run_claims_parallel(
    claims: list[Claim],
    ctx: Context,
    store: ResultStore | None,
    jobs: int,
    resume: bool = True,
    on_record=None,
) -> list[dict]:
    """Run claims in ``jobs`` worker processes (``python -m verify run ... --json``), whole areas per
    worker, each with ``cpu_count // jobs`` threads. Records are appended to ``store`` by this
    process as they arrive, so an interrupted run keeps every finished claim; a worker that dies
    leaves error records for the claims it did not report as soon as its output closes (while the
    other workers go on), naming its exit status or the signal that killed it."""
    import collections
    import json
    import os
    import queue
    import subprocess
    import sys
    import tempfile
    import threading

    done: dict[str, dict] = {}
    pending = []
    for claim in claims:
        found = None
        if store is not None and resume:
            found = store.find(
                claim.id,
                ctx.scale,
                jsonable(claim.params(ctx.scale)),
                ctx.seed,
                ctx.device,
                ctx.dtype,
                git_revision(),
            )
        if found is not None:
            done[claim.id] = dict(found, resumed=True)
            if on_record is not None:
                on_record(done[claim.id])
        else:
            pending.append(claim)
    groups = partition_by_area(pending, jobs, store)
    threads = str(max(1, (os.cpu_count() or 1) // max(1, len(groups))))
    inbox: queue.Queue = queue.Queue()
    procs = []

    def deliver(record):
        done[record["id"]] = record
        if store is not None:
            store.append(record)
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
                "--json",
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
            env = dict(os.environ, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            tail: collections.deque = collections.deque(maxlen=200)
            procs.append((proc, group, tail))

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
        bar = tqdm(total=len(pending), desc="claims", unit="claim", disable=not ctx.progress, leave=False)
        open_streams = len(procs)
        while open_streams:
            record = inbox.get()
            if isinstance(record, int):  # a worker ended: record its missing claims at once
                open_streams -= 1
                proc, group, tail = procs[record]
                proc.wait()
                for claim in group:
                    if claim.id not in done:
                        rec = run_claim(
                            _Crashed(claim, proc.returncode, "".join(tail)[-2000:]), ctx, controls=False
                        )
                        rec.pop("peak_cuda_bytes", None)  # this process's peak, not the worker's
                        rec.update(peak_rss_bytes=None, peak_rss_scope="unknown: the worker died")
                        deliver(rec)
                        bar.update(1)
                continue
            deliver(record)
            bar.update(1)
            bar.set_postfix_str(record["id"])
        bar.close()
    return [done[c.id] for c in claims]


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


def _Crashed(claim: Claim, returncode: int, stderr: str) -> Claim:
    from dataclasses import replace

    def check(params, ctx):
        raise RuntimeError(
            f"worker process {exit_cause(returncode)} before reporting this claim; its stderr ends: {stderr}"
        )

    return replace(claim, check=check)
