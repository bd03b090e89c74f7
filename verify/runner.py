"""Run claims, append each result as it finishes, resume finished ones."""
from __future__ import annotations

import time
import traceback

from tqdm import tqdm

from verify.claims import Claim, Context, Outcome, jsonable
from verify.ledger import entry_for
from verify.results import ResultStore, git_revision, versions

STATUSES = ("pass", "fail", "not reproduced", "ledger now passes", "vacuous", "skipped", "error")


def status_of(claim: Claim, outcome: Outcome | None, error: str | None,
              controls: list[dict] | None = None, scale: str = "quick") -> str:
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
        row.update(predicted=jsonable(out.predicted), measured=jsonable(out.measured),
                   criterion_passed=bool(out.passed))
        if out.skipped:
            row["status"], row["skipped"] = "skipped", out.skipped
        else:
            row["status"] = "passes" if out.passed else "fails as required"
    except Exception as exc:  # noqa: BLE001 - a control that cannot run is an error
        row.update(status="error", error=f"{type(exc).__name__}: {exc}",
                   traceback=traceback.format_exc(limit=6))
    row["seconds"] = round(time.perf_counter() - start, 3)
    return row


def run_controls(claim: Claim, ctx: Context, params: dict | None = None) -> list[dict]:
    params = claim.params(ctx.scale) if params is None else dict(params)
    return [run_control(claim, c, ctx, params) for c in claim.controls]


def run_claim(claim: Claim, ctx: Context, params: dict | None = None, controls: bool = True) -> dict:
    """Run one claim and (unless ``controls`` is False) each of its controls."""
    params = claim.params(ctx.scale) if params is None else dict(params)
    start = time.perf_counter()
    outcome, error = None, None
    try:
        outcome = claim.check(params, ctx)
        if not isinstance(outcome, Outcome):
            raise TypeError(f"check of {claim.id} returned {type(outcome).__name__}, not Outcome")
        predicted, measured, details = (jsonable(outcome.predicted), jsonable(outcome.measured),
                                        jsonable(outcome.details))
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
        "id": claim.id, "scale": ctx.scale, "params": jsonable(params),
        "provenance": claim.provenance, "source": claim.source, "statement": claim.statement,
        "kind": claim.kind, "seed_rule": claim.seed_rule,
        "predicted": predicted, "measured": measured,
        "passed": bool(outcome is not None and outcome.passed and error is None
                       and not outcome.skipped and status != "not reproduced"),
        "status": status, "seed": ctx.seed, "device": ctx.device, "dtype": ctx.dtype,
        "seconds": round(seconds, 3), "git": git_revision(), "code": git_revision(),
        "versions": versions(), "details": details,
    }
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
        bad = [c for c in control_rows if c["status"] == "error"
               or (c["status"] == "passes" and c["name"] not in known)]
        if bad and error is None:
            record["error" if any(c["status"] == "error" for c in bad) else "vacuous"] = "; ".join(
                f"control {c['name']}: " + (c.get("error") or f"criterion passes (measured {c.get('measured')})")
                for c in bad)
    if outcome is not None and outcome.skipped:
        record["skipped"] = outcome.skipped
    if error:
        record["error"] = error
    if entry is not None:
        record["ledger"] = entry.reason
        if entry.flips_with_seed and outcome is not None:
            record["seed_verdict"] = bool(outcome.passed)
    return record


def run_claims(claims: list[Claim], ctx: Context, store: ResultStore | None = None,
               resume: bool = True, on_record=None) -> list[dict]:
    records = []
    bar = tqdm(claims, desc="claims", unit="claim", disable=not ctx.progress, leave=False)
    for claim in bar:
        bar.set_postfix_str(claim.id)
        params = claim.params(ctx.scale)
        record = None
        if store is not None and resume:
            record = store.find(claim.id, ctx.scale, jsonable(params), ctx.seed, ctx.device,
                                ctx.dtype, git_revision())
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


def run_claims_parallel(claims: list[Claim], ctx: Context, store: ResultStore | None, jobs: int,
                        resume: bool = True, on_record=None) -> list[dict]:
    """Run claims in ``jobs`` worker processes (``python -m verify run ... --json``), whole areas per
    worker, each with ``cpu_count // jobs`` threads. Records are appended to ``store`` by this
    process as they arrive, so an interrupted run keeps every finished claim; a worker that dies
    leaves error records for the claims it did not report."""
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
            found = store.find(claim.id, ctx.scale, jsonable(claim.params(ctx.scale)), ctx.seed,
                               ctx.device, ctx.dtype, git_revision())
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
    with tempfile.TemporaryDirectory(prefix="recall-bounds-") as tmp:
        for i, group in enumerate(groups):
            cmd = [sys.executable, "-m", "verify", "run", *[c.id for c in group], "--json", "--fresh",
                   "--jobs", "1", "--out", os.path.join(tmp, str(i)), "--seed", str(ctx.seed),
                   "--scale", ctx.scale, "--device", ctx.device, "--dtype", ctx.dtype]
            env = dict(os.environ, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    env=env)
            procs.append((proc, group))

            def pump(p=proc):
                for line in p.stdout:
                    line = line.strip()
                    if line.startswith("{"):
                        inbox.put(json.loads(line))
                inbox.put(None)

            threading.Thread(target=pump, daemon=True).start()
        bar = tqdm(total=len(pending), desc="claims", unit="claim", disable=not ctx.progress, leave=False)
        open_streams = len(procs)
        while open_streams:
            record = inbox.get()
            if record is None:
                open_streams -= 1
                continue
            done[record["id"]] = record
            if store is not None:
                store.append(record)
            if on_record is not None:
                on_record(record)
            bar.update(1)
            bar.set_postfix_str(record["id"])
        bar.close()
        for proc, group in procs:
            stderr = proc.stderr.read()
            proc.wait()
            for claim in group:
                if claim.id not in done:  # the worker died before reporting this claim
                    record = run_claim(_Crashed(claim, proc.returncode, stderr[-2000:]), ctx)
                    done[claim.id] = record
                    if store is not None:
                        store.append(record)
                    if on_record is not None:
                        on_record(record)
    return [done[c.id] for c in claims]


def _Crashed(claim: Claim, returncode: int, stderr: str) -> Claim:
    from dataclasses import replace

    def check(params, ctx):
        raise RuntimeError(f"worker process exited with status {returncode} before reporting "
                           f"this claim; its stderr ends: {stderr}")

    return replace(claim, check=check)
