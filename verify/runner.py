"""Run claims, append each result as it finishes, resume finished ones."""
from __future__ import annotations

import time
import traceback

from tqdm import tqdm

from verify.claims import Claim, Context, Outcome, jsonable
from verify.ledger import LEDGER
from verify.results import ResultStore, git_revision, versions

STATUSES = ("pass", "fail", "not reproduced", "ledger now passes", "skipped", "error")


def status_of(claim: Claim, outcome: Outcome | None, error: str | None) -> str:
    if error is not None:
        return "error"
    if outcome.skipped:
        return "skipped"
    if claim.id in LEDGER:
        return "ledger now passes" if outcome.passed else "not reproduced"
    return "pass" if outcome.passed else "fail"


def is_failure(record: dict) -> bool:
    """Statuses that make the exit status non-zero. Skips and ledgered failures do not."""
    return record["status"] in ("fail", "error", "ledger now passes")


def run_claim(claim: Claim, ctx: Context, params: dict | None = None) -> dict:
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
    seconds = time.perf_counter() - start
    status = status_of(claim, outcome, error)
    record = {
        "id": claim.id, "scale": ctx.scale, "params": jsonable(params),
        "provenance": claim.provenance, "source": claim.source, "statement": claim.statement,
        "predicted": predicted, "measured": measured,
        "passed": bool(outcome is not None and outcome.passed and error is None
                       and not outcome.skipped),
        "status": status, "seed": ctx.seed, "device": ctx.device, "dtype": ctx.dtype,
        "seconds": round(seconds, 3), "git": git_revision(), "code": git_revision(),
        "versions": versions(), "details": details,
    }
    if claim.demonstrates_failure:
        record["demonstrates_failure"] = True
    if outcome is not None and outcome.skipped:
        record["skipped"] = outcome.skipped
    if error:
        record["error"] = error
    if claim.id in LEDGER:
        record["ledger"] = LEDGER[claim.id].reason
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
