"""Run claims, append each result as it finishes, resume finished ones."""

from __future__ import annotations

import contextlib
import time
import traceback
from collections import Counter

from verify.claims import Claim, Context, Outcome, as_outcome
from verify.ledger import entry_for, known_vacuous, undecided_for
from verify.previous import attached, merged
from verify.results import ResultStore, git_revision, jsonable, source_digest, versions

STATUSES = (
    "pass",
    "fail",
    "inconclusive",
    "not reproduced",
    "ledger now passes",
    "vacuous",
    "skipped",
    "error",
)


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
    known = known_vacuous(claim.id, scale)
    if controls and any(c["status"] == "passes" and c["name"] not in known for c in controls):
        return "vacuous"  # the criterion also holds where the statement must not: it tests nothing
    if entry is not None:
        if entry.flips_with_seed:
            return "not reproduced"  # a verdict that flips with the seed is not a pass
        return "ledger now passes" if outcome.passed else "not reproduced"
    if undecided_for(claim.id, scale) is not None and (outcome.passed or outcome.inconclusive is not None):
        return "inconclusive"  # pass at some base seeds, inconclusive at others: undecided at this budget
    if outcome.inconclusive is not None:
        return "inconclusive"
    if outcome.passed and controls and any(c["status"] == "inconclusive" for c in controls):
        return "inconclusive"  # a control the measurement cannot tell apart is not ruled out
    return "pass" if outcome.passed else "fail"


_UNREAD = object()


def operating_gate(claim_id: str, scale: str, oc=_UNREAD) -> str | None:
    """Why a pass of ``claim_id``'s criterion at ``scale`` may not count as one, or None.

    A pass may mean something only where every named alternative of the claim's criterion (no
    growth, the opposite sign, the nearest law on each side, the value on its threshold) passes at
    most ``verify.oc.MAX_ALTERNATIVE`` (0.05) of the time in the stored operating characteristic
    (``python -m verify oc``; README.md, "Kinds of claim, controls and verdicts over seeds"). Where
    one passes more often, the runner reports the claim inconclusive with this text; the
    criterion's own verdict and resolution stay in the record. None where the characteristic is
    not stored or not simulated (nothing to say) or is admissible.

    >>> operating_gate("no.such.claim", "quick") is None
    True

    ``oc``: the claim's :func:`verify.oc.summary` when the caller has read it already (the file
    is parsed at each read).
    """
    from verify.oc import MAX_ALTERNATIVE, summary

    if oc is _UNREAD:
        oc = summary(claim_id, scale)
    if not oc or not oc.get("covered") or oc.get("worst_pass_rate") is None:
        return None
    rate = float(oc["worst_pass_rate"])
    if rate <= MAX_ALTERNATIVE:
        return None
    budget = oc.get("budget_for_admissible") or {}
    decides = "would decide: " + (
        f"{budget['seeds']} seeds (every named alternative then passes at most {MAX_ALTERNATIVE})"
        if budget.get("reached")
        else "a rule that reads intervals, or a larger budget ("
        + (budget.get("reason") or "more seeds than were simulated")
        + ")"
    )
    return (
        f"the criterion passes the alternative '{oc.get('worst_alternative')}' {rate:.3f} of the time "
        f"({oc.get('reps')} simulated replications at this budget, python -m verify oc {claim_id}"
        f"{' --scale full' if scale == 'full' else ''}): above "
        f"{MAX_ALTERNATIVE}, so its pass here cannot tell the claim from that alternative; {decides}"
    )


def is_failure(record: dict) -> bool:
    """Statuses that make the exit status non-zero. Skips and ledgered failures do not."""
    return record["status"] in ("fail", "error", "ledger now passes", "vacuous")


@contextlib.contextmanager
def single_threaded():
    """Run a check on one torch thread and one thread in every BLAS pool, restoring the caller's
    settings afterwards: a record must not depend on the machine's core count or the number of
    workers (a threaded reduction moves the last bits of float32 trainings: chapters.leak.*,
    fact_mlp.transformer.*, icrecall.finetune.* and others differed between one worker thread and
    two). The parallel runner's workers on a 2-core machine already run so; elsewhere a check
    gives up intra-op threads for a record that is the same everywhere.

    >>> import torch
    >>> with single_threaded():
    ...     torch.get_num_threads()
    1
    """
    from constructions.device import one_thread

    with _thread_pools().limit(limits=1), one_thread():
        yield


_POOLS: list = [None, -1]  # threadpoolctl's controller, and the number of modules when it was made


def _thread_pools():
    """A ``threadpoolctl.ThreadpoolController`` of the thread pools loaded now: made again only
    when a module was imported since (a new module may load a BLAS or OpenMP library), since
    finding the pools (what ``threadpool_limits`` does at every call) walks every loaded library.

    >>> _thread_pools() is _thread_pools()
    True
    """
    import sys

    from threadpoolctl import ThreadpoolController

    if _POOLS[0] is None or _POOLS[1] != len(sys.modules):
        _POOLS[0] = ThreadpoolController()
        _POOLS[1] = len(sys.modules)  # after: making the controller may import modules
    return _POOLS[0]


def run_control(claim: Claim, control, ctx: Context, params: dict) -> dict:
    """Run the claim's check on one control's parameters. The control does its job when the
    criterion fails there ("fails as required"); "passes" means the claim cannot tell the control
    from the real setting."""
    start = time.perf_counter()
    row = {"name": control.name, "why": control.why}
    ctx.read_log = Counter()
    try:
        cparams = control.apply(params)
        row["params"] = jsonable({k: v for k, v in cparams.items() if params.get(k, object()) != v})
        with single_threaded():
            out = as_outcome(claim.check(cparams, ctx))
        row.update(
            predicted=jsonable(out.predicted),
            measured=jsonable(out.measured),
            criterion_passed=bool(out.passed),
        )
        if out.skipped:
            row["status"], row["skipped"] = "skipped", out.skipped
        elif out.inconclusive is not None:
            row["status"], row["inconclusive"] = "inconclusive", out.inconclusive
        else:
            row["status"] = "passes" if out.passed else "fails as required"
    except Exception as exc:  # noqa: BLE001 - a control that cannot run is an error
        row.update(
            status="error", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc(limit=6)
        )
    finally:
        row["_reads"] = read_rows(ctx.read_log)
        ctx.read_log = None
    row["seconds"] = round(time.perf_counter() - start, 3)
    return row


def read_rows(log: Counter | None) -> list[list]:
    """A check's read log (:attr:`verify.claims.Context.read_log`) as sorted ``[function, digest,
    count]`` rows, the form ``profile["reads"]`` stores.

    >>> read_rows(Counter({("f", "b2"): 1, ("f", "a1"): 2}))
    [['f', 'a1', 2], ['f', 'b2', 1]]
    """
    return [[fn, digest, int(n)] for (fn, digest), n in sorted((log or {}).items())]


def run_controls(claim: Claim, ctx: Context, params: dict | None = None) -> list[dict]:
    params = claim.params(ctx.scale) if params is None else dict(params)
    return [run_control(claim, c, ctx, params) for c in claim.controls]


def run_claim(claim: Claim, ctx: Context, params: dict | None = None, controls: bool = True) -> dict:
    """Run one claim and (unless ``controls`` is False) each of its controls."""
    params = claim.params(ctx.scale) if params is None else dict(params)
    peak_scope = reset_peak_memory(ctx.device)
    start, cpu0, shared0 = time.perf_counter(), time.process_time(), ctx.shared_seconds
    ctx.touched.clear()
    outcome, error = None, None
    ctx.read_log = Counter()
    try:
        with single_threaded():
            outcome = as_outcome(claim.check(params, ctx))
        history = {} if outcome.skipped else attached(claim.id, ctx.scale, ctx.seed, params)
        predicted, measured, details = (
            jsonable(outcome.predicted),
            jsonable(outcome.measured),
            jsonable(merged(outcome.details, history)),  # replaced rules' verdicts, from the store
        )
    except Exception as exc:  # noqa: BLE001 - recorded, reported, exit status 1
        error = f"{type(exc).__name__}: {exc}"
        predicted = measured = None
        details = {"traceback": traceback.format_exc(limit=6)}
    check_end, shared1 = time.perf_counter(), ctx.shared_seconds
    reads = [read_rows(ctx.read_log)]  # the outermost shared results each check read
    ctx.read_log = None
    control_rows = None
    if controls and error is None and not outcome.skipped and claim.controls:
        control_rows = run_controls(claim, ctx, params)
        reads += [row.pop("_reads") for row in control_rows]
    seconds = time.perf_counter() - start
    profile = {  # where the claim's seconds went (``verify run --profile`` tabulates it)
        "check_s": round(check_end - start - (shared1 - shared0), 3),
        "controls_s": round(seconds - (check_end - start) - (ctx.shared_seconds - shared1), 3),
        "shared_s": round(ctx.shared_seconds - shared0, 3),
        "cpu_s": round(time.process_time() - cpu0, 3),  # process CPU time, every thread
        # the shared results the claim and its controls computed or read (verify.parallel.work_units)
        "shared_keys": sorted(ctx.touched),
        # per check (the claim's, then each control's): [function, digest, count] of the outermost
        # shared results it read (tests/test_controls_differ.py)
        "reads": reads,
    }
    status = status_of(claim, outcome, error, control_rows, ctx.scale)
    from verify.oc import summary as operating  # the stored operating characteristic (verify oc)

    stored_oc = operating(claim.id, ctx.scale)  # read once: it parses verify/oc/operating.json
    gated = operating_gate(claim.id, ctx.scale, stored_oc) if status == "pass" else None
    if gated is not None:  # the criterion cannot tell a named alternative from the claim here
        status = "inconclusive"
    entry = entry_for(claim.id, ctx.scale)
    undecided = undecided_for(claim.id, ctx.scale) if status == "inconclusive" and gated is None else None
    record = {
        "id": claim.id,
        "scale": ctx.scale,
        "params": jsonable(params),
        "provenance": claim.provenance,
        "source": claim.source,
        "statement": claim.statement_at(ctx.scale),
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
            and gated is None
            and undecided is None
        ),
        "status": status,
        "seed": ctx.seed,
        "device": ctx.device,
        "dtype": ctx.dtype,
        "seconds": round(seconds, 3),
        "profile": profile,
        "git": git_revision(),
        "code": git_revision(),
        # the content of the code, the criteria's data and the reference records the run read
        # (verify.results.source_digest): the test suite reuses a main-job record only when equal
        "source_digest": source_digest(),
        # whether shared results were fingerprinted (verify.audit): shared_mutated is then reliable
        "audited": bool(ctx.audit),
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
        known = known_vacuous(claim.id, ctx.scale)
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
    mutated = ctx.mutated_shared() if ctx.audit else []
    if mutated:  # the check or a control changed a shared result that other claims read
        record["shared_mutated"] = mutated
    if outcome is not None and outcome.resolution is not None:
        record["resolution"] = jsonable(outcome.resolution)
    if stored_oc is not None:
        record["operating"] = stored_oc
    if outcome is not None and outcome.inconclusive is not None:
        record["inconclusive"] = outcome.inconclusive
    if undecided is not None:
        record["inconclusive"] = undecided.text()
        record["criterion_verdict"] = "pass" if outcome.passed else "inconclusive"  # this seed's own
    if gated is not None:
        record["inconclusive"] = gated
    if (
        control_rows
        and status == "inconclusive"
        and outcome.inconclusive is None
        and gated is None
        and undecided is None  # its own text says why (pass at some base seeds, inconclusive at others)
    ):
        record["inconclusive"] = "controls not told apart at this budget: " + ", ".join(
            f"{c['name']} ({c['inconclusive']})" for c in control_rows if c["status"] == "inconclusive"
        )
    if outcome is not None and outcome.skipped:
        record["skipped"] = outcome.skipped
    if error:
        record["error"] = error
    if entry is not None:
        record["ledger"] = entry.reason
        if outcome is not None and error is None and not outcome.skipped:
            verdict = (
                "inconclusive" if outcome.inconclusive is not None else ("pass" if outcome.passed else "fail")
            )
            if verdict == "pass" and any(c["status"] == "inconclusive" for c in control_rows or []):
                verdict = "inconclusive"  # as status_of: a control not told apart is not ruled out
            record["criterion_verdict"] = verdict  # the criterion's own verdict at this seed
            if entry.flips_with_seed:
                record["seed_verdict"] = bool(outcome.passed)
                recorded = entry.seed_verdicts.get(int(ctx.seed))
                if recorded is not None and recorded != verdict:
                    record["ledger_differs"] = (
                        f"the ledger records {recorded} at base seed {ctx.seed}; this run gives {verdict}"
                    )
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


def failed_claim(claim: Claim, why: str) -> Claim:
    """``claim`` with a check that raises ``why``: what a runner records, through
    :func:`run_claim`, for a claim whose worker died or whose task failed before it reported.

    >>> from verify.claims import load_all
    >>> gone = failed_claim(load_all()["chapters.router.zloss_zero_logits"], "the worker died")
    >>> run_claim(gone, Context(), controls=False)["error"]
    'RuntimeError: the worker died'
    """
    import dataclasses

    def check(params, ctx):
        raise RuntimeError(why)

    return dataclasses.replace(claim, check=check)


def split_finished(
    claims: list[Claim], ctx: Context, store: ResultStore | None, resume: bool, progress, on_record
):
    """(records of the claims that have a finished record in ``store`` for ``ctx``'s scale, seed,
    device, dtype and this code, by claim id, marked ``resumed``; the claims still to run). Each
    finished record is reported to ``progress`` and ``on_record`` at once. The parallel and the
    cluster runners start with it."""
    done: dict[str, dict] = {}
    pending = []
    for claim in claims:
        found = None
        if store is not None and resume:
            found = store.find(
                claim.id, ctx.scale, jsonable(claim.params(ctx.scale)), ctx.seed, ctx.device, ctx.dtype,
                git_revision(),
            )  # fmt: skip
        if found is None:
            pending.append(claim)
            continue
        done[claim.id] = dict(found, resumed=True)
        progress.finished(done[claim.id])
        if on_record is not None:
            on_record(done[claim.id])
    return done, pending


def run_claims(
    claims: list[Claim],
    ctx: Context,
    store: ResultStore | None = None,
    resume: bool = True,
    on_record=None,
    progress=None,
) -> list[dict]:
    """Run ``claims`` one after another in this process, appending each record to ``store`` as it
    ends (a record of the same claim, parameters, seed, device, dtype and code is reused when
    ``resume``). ``progress`` (a :class:`verify.progress.RunProgress`) is told each start and end;
    without one, a terminal line is shown when ``ctx.progress``."""
    from verify.progress import RunProgress

    own = progress is None
    if own:
        progress = RunProgress([c.id for c in claims], bar=ctx.progress)
    try:
        return _run_each(claims, ctx, store, resume, on_record, progress)
    finally:
        if own:
            progress.close()


def _run_each(claims, ctx, store, resume, on_record, progress) -> list[dict]:
    records = []
    for claim in claims:
        progress.started(claim.id)
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
        progress.finished(record)
        if on_record is not None:
            on_record(record)
    if store is not None:
        store.keep_newest(records)  # the newest stored record of each claim is the one it reported
    return records
