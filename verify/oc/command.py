"""``python -m verify oc ID|GLOB [--reps N] [--json] [--write] [--scale quick|full] [--results DIR]``:
the operating characteristic of each selected claim (:mod:`verify.oc`) from its latest stored record
(in the committed reference results/ unless ``--results`` names another folder);
claims it cannot simulate are listed with the reason. Reads the records only; writes nothing
unless ``--write`` (then only :data:`verify.oc.STORE`)."""

from __future__ import annotations

import argparse
import json
import sys
import time


def _records(scale: str, results: str | None = None) -> dict:
    """The newest record of each claim at ``scale``, read from ``results`` (None: the committed
    reference results/, whose records the stored characteristics describe)."""
    from verify.results import parse_records, reference_root, results_root

    root = results_root(results) if results else reference_root()
    path = root / ("claims.jsonl" if scale == "quick" else "full/claims.jsonl")
    if results and not path.exists():
        raise ValueError(f"no stored {scale} records: {path} does not exist")

    latest = {}
    if path.exists():
        for rec in parse_records(path, path.read_bytes()):
            latest[rec["id"]] = rec
    return latest


def run(patterns, reps: int, scale: str, results: str | None = None) -> dict:
    """{claim id: characteristic} for the claims matching ``patterns`` (empirical and must-fail
    claims; an identity has no law to simulate).

    >>> run(["hopfield.capacity.constants"], 10, "quick")["hopfield.capacity.constants"]["covered"]
    False
    """
    from verify.claims import select
    from verify.oc import characteristic

    records = _records(scale, results)
    out = {}
    for claim in select(patterns):
        if claim.kind == "identity":
            out[claim.id] = {"covered": False, "reason": f"a {claim.kind} claim (no law to simulate)"}
        elif claim.id not in records:
            out[claim.id] = {"covered": False, "reason": f"no stored {scale} record"}
        else:
            out[claim.id] = characteristic(claim.id, records[claim.id], reps)
    return out


def main(argv=None) -> int:
    """Entry point of ``python -m verify oc``; the exit status (2 on a pattern that names no claim).

    >>> main(["no.such.*", "--reps", "5"])
    2

    ``--reps`` above :data:`verify.oc.MAX_REPS` (or below 1) is a usage error, exit status 2,
    before any record is read.
    """
    from verify.oc import STORE, check_reps

    ap = argparse.ArgumentParser(prog="python -m verify oc", description=__doc__.split("\n\n")[0])
    ap.add_argument("patterns", nargs="+", help="claim ids or globs")
    ap.add_argument("--reps", type=int, default=200, help="replications per law (default 200)")
    ap.add_argument("--scale", choices=("quick", "full"), default="quick")
    ap.add_argument("--json", action="store_true", help="one JSON document")
    ap.add_argument(
        "--results",
        default=None,
        help="results folder whose records are simulated (default: the committed reference results/)",
    )
    ap.add_argument(
        "--write",
        action="store_true",
        help=f"store the results in {STORE.name} (from the committed reference records only)",
    )
    args = ap.parse_args(argv)
    try:
        check_reps(args.reps)
    except ValueError as exc:
        ap.error(f"--reps: {exc}")
    start = time.perf_counter()
    try:
        if args.write and args.results:
            from verify.results import reference_root, results_root

            if results_root(args.results) != reference_root():
                raise ValueError(
                    f"--write stores the characteristics of the committed reference records in "
                    f"{STORE.name}; --results {args.results} is not the reference {reference_root()}"
                )
        out = run(args.patterns, args.reps, args.scale, args.results)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    seconds = time.perf_counter() - start
    if args.write:
        table = json.loads(STORE.read_text()) if STORE.exists() else {}
        table.setdefault(args.scale, {}).update(out)
        STORE.write_text(json.dumps(table, indent=1, sort_keys=True, allow_nan=False) + "\n")
    if args.json:
        print(
            json.dumps(
                {"scale": args.scale, "reps": args.reps, "seconds": seconds, "claims": out}, allow_nan=False
            )
        )
        return 0
    for cid, c in out.items():
        if not c["covered"]:
            print(f"{cid}: not covered ({c['reason']})")
            continue
        alt = ", ".join(f"{n} {r['pass']:.2f}" for n, r in c["rates"].items() if n != c["theory"])
        th = c["rates"][c["theory"]]
        line = (
            f"{cid}: power {c['power']:.2f} (inconclusive {th['inconclusive']:.2f}, fail {th['fail']:.2f}); "
            f"worst {c['worst_alternative']} passes {c['worst_pass_rate']:.2f}"
            f"{'' if c['admissible'] else ' (> 0.05: a pass would mean nothing)'}; pass under: {alt}; reps {c['reps']}"
        )
        if "budget_for_power" in c:
            line += f"; power 0.8: {c['budget_for_power']}"
        if "budget_for_admissible" in c:
            line += f"; alternatives <= 0.05: {c['budget_for_admissible']}"
        print(line)
    print(
        f"{len(out)} claims, {sum(c['covered'] for c in out.values())} covered, {seconds:.1f} s",
        file=sys.stderr,
    )
    return 0
