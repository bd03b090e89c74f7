"""The commands of ``python -m verify`` (run, falsify, run --dry-run, prune); verify/cli.py parses
the arguments and calls these. Each ``--json`` prints one strict JSON document; ``run --jsonl``
prints one record per line as each claim finishes."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def _dumps(value, **kwargs) -> str:
    from theory.cli_support import dumps

    return dumps(value, **kwargs)


def cmd_falsify(args) -> int:
    """Run the controls of the selected claims (not the claims themselves)."""
    from constructions.device import default_dtype, resolve_device
    from verify.claims import Context, missing_controls, select
    from verify.ledger import known_vacuous
    from verify.results import latest_records, reading_root
    from verify.runner import run_controls

    claims = select(args.ids)
    device = resolve_device(args.device)
    ctx = Context(
        seed=args.seed,
        device=device,
        dtype=args.dtype or default_dtype(device),
        scale=args.scale,
        progress=sys.stderr.isatty(),
    )
    bad, known_defects, coarse = 0, 0, 0
    stream = sys.stderr if args.json else sys.stdout
    json_rows = []
    stored = latest_records(ctx.scale, [str(reading_root())])
    for c in claims:
        missing = missing_controls(c)
        rows = [] if missing else run_controls(c, ctx)
        known = known_vacuous(c.id, ctx.scale)
        for r in rows:
            if r["status"] == "passes" and r["name"] in known:
                r["known"] = "ledgered: the criterion is known to pass on this control"
                known_defects += 1
        rows_judged = [r for r in rows if "known" not in r]
        problems = ([missing] if missing else []) + [
            f"control {r['name']} "
            + (
                "errors: " + r["error"]
                if r["status"] == "error"
                else f"passes the criterion (measured {_short(r.get('measured'))})"
            )
            for r in rows_judged
            if r["status"] in ("passes", "error")
        ]
        bad += bool(problems)
        resolution = resolution_of(c, stored.get(c.id))
        undecided = [r["name"] for r in rows if r["status"] == "inconclusive"]
        if undecided:
            resolution = {
                **resolution,
                "coarse": True,
                "text": resolution.get("text", "") + "; controls not told apart: " + ", ".join(undecided),
            }
        coarse += bool(resolution.get("coarse"))
        if args.json:
            json_rows.append(
                {
                    "id": c.id,
                    "kind": c.kind,
                    "ok": not problems,
                    "problems": problems,
                    "resolution": resolution,
                    "controls": rows,
                    "seed": ctx.seed,
                    "scale": ctx.scale,
                    "device": ctx.device,
                    "dtype": ctx.dtype,
                }
            )
        verdict = "ok" if not problems else "VACUOUS" if rows else "NO CONTROL"
        names = ", ".join(f"{r['name']}: {r['status']}" for r in rows) or ("-" if not missing else "")
        print(f"{c.id:<60} {c.kind:<10} {verdict:<10} {names}", file=stream)
        for p in problems:
            print(f"    {p}", file=stream)
        if resolution.get("coarse"):
            print(f"    coarse: {resolution.get('text', '')}", file=stream)
        for r in rows:
            if "known" in r:
                print(
                    f"    control {r['name']} passes the criterion: a known defect, in the ledger",
                    file=stream,
                )
    print(
        f"\n{len(claims)} claims, {bad} without a failing control, {coarse} coarse (resolution below the rule's)"
        + (f"; {known_defects} control(s) known to pass, recorded in the ledger" if known_defects else ""),
        file=stream,
    )
    if args.json:
        summary = {"claims": len(claims), "without_failing_control": bad, "coarse": coarse}
        print(_dumps({"claims": json_rows, "summary": dict(summary, known_defects=known_defects)}))
    return 1 if bad else 0


def resolution_of(claim, record: dict | None) -> dict:
    """A claim's resolution: from its newest stored record when that record has one (the
    criterion objects of verify.criteria write it); a stored record made before its claim's
    criterion was an object gets a coarse resolution that says so.

    >>> resolution_of(None, {"resolution": {"rule": "bracket", "value": 1.5, "coarse": False}})["rule"]
    'bracket'
    >>> resolution_of(None, None)["rule"]
    'not computed'
    """
    if record is not None and record.get("resolution"):
        return {**record["resolution"], "from": "stored record"}
    if record is not None:
        text = "the stored record predates the claim's criterion object: rerun the claim to compute its resolution"
    else:
        text = "no stored record at this scale: run the claim to compute its resolution"
    return {"rule": "not computed", "value": None, "coarse": True, "text": text}


def _progress(claims, args, jobs: int):
    """The run's progress (:class:`verify.progress.RunProgress`): a terminal line on a terminal,
    else a line per finished claim on stderr (none in a worker process of a parallel run, whose
    parent reports); the time left from the stored seconds of each claim."""
    from verify.progress import RunProgress, expected_seconds
    from verify.results import reading_root

    ids = [c.id for c in claims]
    if os.environ.get("RECALL_WORKER"):
        return RunProgress(ids)
    expected = expected_seconds([reading_root(), args.out], args.scale)
    tty = sys.stderr.isatty()
    return RunProgress(ids, expected, jobs=jobs, bar=tty, lines=not tty)


def table_lines(records, width: int | None = None) -> list[str]:
    """The run's table, one row per claim cut to ``width`` columns (default: the terminal's, else
    100): id, status, seconds, then predicted and measured in short form; the long fields (ledger
    reasons, resolutions, details) are in report.md and ``--json``.

    >>> rows = table_lines([{"id": "a.b.c", "status": "pass", "seconds": 1.0,
    ...                      "predicted": 2.0, "measured": {"x": 1.23456789, "y": [1, 2]}}], 60)
    >>> print("\\n".join(rows))
    claim  status          seconds  predicted -> measured
    a.b.c  pass                1.0  2 -> x=1.235, y=[1, 2]
    """
    import shutil

    from verify.results import _fmt

    width = width or shutil.get_terminal_size((100, 24)).columns
    idw = max((len(r["id"]) for r in records), default=5)
    rows = [f"{'claim':<{idw}}  {'status':<15} {'seconds':>7}  predicted -> measured"]
    for r in records:
        row = (
            f"{r['id']:<{idw}}  {r['status']:<15} {float(r.get('seconds') or 0):>7.1f}  "
            f"{_fmt(r.get('predicted'))} -> {_fmt(r.get('measured'))}"
        )
        rows.append(row if len(row) <= width else row[: width - 3] + "...")
    return rows


def _print_table(records, stream=sys.stdout):
    for line in table_lines(records):
        print(line, file=stream)


def _short(value, limit=60) -> str:
    text = _dumps(value) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[: limit - 3] + "..."


def expected_seconds(claims, scale: str, folders, quick_folders=()) -> dict[str, dict]:
    """Per area: claims, the seconds of the newest stored record of each claim at ``scale`` (any
    seed or device) found in ``folders``, the claims with no such record, and their peak memory.

    When ``scale`` is "full", a claim with no full record but a quick one in ``quick_folders`` adds
    its quick seconds to ``quick_seconds`` (and its id to ``quick_only``): a lower bound on its
    full-scale time in so far as its full parameters are larger, never mixed into ``seconds``."""
    from verify.results import latest_records

    latest = latest_records(scale, folders)
    quick = latest_records("quick", quick_folders) if scale == "full" else {}
    areas: dict[str, dict] = {}
    for c in claims:
        a = areas.setdefault(
            c.area,
            {
                "claims": 0,
                "seconds": 0.0,
                "unknown": [],
                "peak_rss_bytes": 0,
                "devices": set(),
                "quick_seconds": 0.0,
                "quick_only": [],
            },
        )
        a["claims"] += 1
        row = latest.get(c.id)
        if row is None:
            a["unknown"].append(c.id)
            if c.id in quick:
                a["quick_seconds"] += float(quick[c.id].get("seconds", 0.0))
                a["quick_only"].append(c.id)
            continue
        a["seconds"] += float(row.get("seconds", 0.0))
        a["peak_rss_bytes"] = max(a["peak_rss_bytes"], int(row.get("peak_rss_bytes") or 0))
        a["devices"].add(row.get("device", "?"))
    return areas


def cmd_dry_run(args, claims, jobs: int) -> int:
    """``run --dry-run``: the expected time per area (from stored records), nothing is run."""
    from verify.results import reading_root

    root = str(reading_root())
    folders = list(dict.fromkeys([root, args.out] if args.scale == "quick" else [args.out]))
    folders += [str(Path(root) / "full")] if args.scale == "full" else []
    quick_folders = list(dict.fromkeys([root, args.out])) if args.scale == "full" else []
    areas = expected_seconds(claims, args.scale, folders, quick_folders)
    rows = []
    for area, a in areas.items():
        rows.append(
            {
                "area": area,
                "claims": a["claims"],
                "expected_seconds": round(a["seconds"], 1),
                "claims_without_record": len(a["unknown"]),
                "quick_lower_bound_seconds": round(a["quick_seconds"], 1),
                "claims_with_quick_record_only": len(a["quick_only"]),
                "max_peak_rss_gb": round(a["peak_rss_bytes"] / 2**30, 2),
                "measured_on": sorted(a["devices"]),
            }
        )
    from verify.parallel import partition, stored_sharing

    keys, seconds = stored_sharing(args.scale, folders)
    known = {c.id: seconds[c.id] for c in claims if c.id in seconds}  # no record: not counted
    loads = [
        sum(known.get(c.id, 0.0) for c in g)
        for g in partition(claims, jobs, keys, {**{c.id: 0.0 for c in claims}, **known})
    ] or [0.0]
    total = {
        "scale": args.scale,
        "serial_seconds": round(sum(r["expected_seconds"] for r in rows), 1),
        "jobs": jobs,
        "wall_seconds_with_jobs": round(max(loads), 1),
        "claims_without_record": sum(r["claims_without_record"] for r in rows),
        "quick_lower_bound_seconds": round(sum(r["quick_lower_bound_seconds"] for r in rows), 1),
        "claims_with_quick_record_only": sum(r["claims_with_quick_record_only"] for r in rows),
        "from": folders,
        "quick_from": quick_folders,
    }
    if args.json:
        print(_dumps({"areas": rows, "total": total}))
        return 0
    lower = args.scale == "full"
    head = f"{'area':<12} {'claims':>6} {'expected s':>11} {'no record':>9}"
    head += f" {'quick s (lower bound)':>22}" if lower else ""
    print(head + f" {'peak GB':>8}  measured on")
    for r in rows:
        line = (
            f"{r['area']:<12} {r['claims']:>6} {r['expected_seconds']:>11.1f} {r['claims_without_record']:>9}"
        )
        if lower:
            quick_cell = f"{r['quick_lower_bound_seconds']:.1f} ({r['claims_with_quick_record_only']})"
            line += f" {quick_cell:>22}"
        print(line + f" {r['max_peak_rss_gb']:>8.2f}  {', '.join(r['measured_on']) or '-'}")
    print(
        f"\n{args.scale} scale: {total['serial_seconds']:.0f} s in one process, about "
        f"{total['wall_seconds_with_jobs']:.0f} s with --jobs {jobs} (claims that share a computed result in "
        "one worker); "
        f"{total['claims_without_record']} claims have no stored record at this scale (not "
        f"counted). Records from {', '.join(folders)}; times are those of the machine that "
        "stored them."
    )
    if lower:
        print(
            f"Quick-scale lower bound for the {total['claims_with_quick_record_only']} claims with no full "
            f"record but a quick one (from {', '.join(quick_folders)}; in brackets per area): "
            f"{total['quick_lower_bound_seconds']:.0f} s. This is the time of their quick parameters, "
            "not an estimate of full scale (full parameters are larger)."
        )
    return 0


def cmd_run(args, patterns) -> int:
    """``run``: run the selected claims, append their records to ``--out``/claims.jsonl, and rebuild
    ``report.md`` there from the newest record of every registered claim (:func:`rebuild_report`),
    so that a run of a few claims never drops the others from the report."""
    from constructions.device import default_dtype, resolve_device
    from verify.claims import Context, select
    from verify.inputs import writable_folder
    from verify.parallel import run_claims_parallel
    from verify.results import ResultStore, results_root
    from verify.runner import is_failure, run_claims

    args.out = str(results_root(args.out))
    claims = select(patterns)
    device = resolve_device(args.device)
    dtype = args.dtype or default_dtype(device)
    # the run's own progress (verify.progress) replaces the bars of the sweeps inside a claim
    # audit: every record says whether a check changed a shared result (verify.audit)
    ctx = Context(seed=args.seed, device=device, dtype=dtype, scale=args.scale, progress=False, audit=True)
    jobs = args.jobs if args.jobs is not None else min(os.cpu_count() or 1, len(claims))
    if jobs < 1:
        raise ValueError(f"--jobs={jobs} must be >= 1")
    if getattr(args, "dry_run", False):
        return cmd_dry_run(args, claims, jobs)
    writable_folder(args.out)  # before anything is computed
    store = ResultStore(args.out)
    lines = getattr(args, "jsonl", False)

    kept = []  # the records this run appended (a resumed record was stored before)

    def emit(record):
        if not record.get("resumed"):
            kept.append(record["id"])
        if lines:
            print(_dumps(record), flush=True)

    parallel = jobs > 1 and len(claims) > 1
    scheduler = getattr(args, "scheduler", None)
    progress = _progress(claims, args, jobs if parallel else 1)
    try:
        if scheduler:
            from verify.cluster import run_claims_on_cluster

            records = run_claims_on_cluster(
                claims, ctx, store, scheduler, resume=not args.fresh, on_record=emit, progress=progress
            )
        elif parallel:
            records = run_claims_parallel(
                claims, ctx, store, jobs, resume=not args.fresh, on_record=emit, progress=progress
            )
        else:
            records = run_claims(
                claims, ctx, store=store, resume=not args.fresh, on_record=emit, progress=progress
            )
    except KeyboardInterrupt:
        progress.close()
        print(
            f"\ninterrupted: {len(kept)} record(s) finished by this run are kept in {store.path}; the same "
            "command resumes from them",
            file=sys.stderr,
        )
        return 130
    progress.close()
    report = rebuild_report(store)
    quiet = args.json or lines
    stream = sys.stderr if quiet else sys.stdout
    if args.json:
        print(_dumps(records))
    if not quiet:
        _print_table(records, stream)
    failures = [r for r in records if is_failure(r)]
    counts = {}
    for r in records:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    summary = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    print(f"\n{len(records)} claims: {summary} (results {store.path}, report {report})", file=stream)
    if getattr(args, "profile", False):
        from verify.bench.profile import profile_text

        print("\n" + profile_text(records), file=stream)
    return 1 if failures else 0


def report_records(store) -> list[dict]:
    """The newest record of every registered claim in ``store`` (a
    :class:`verify.results.ResultStore`), in registry order: what ``report.md`` shows.

    >>> import tempfile
    >>> from verify.results import ResultStore
    >>> store = ResultStore(tempfile.mkdtemp())
    >>> store.append({"id": "chapters.router.zloss_zero_logits", "status": "fail"})
    >>> store.append({"id": "no.such.claim", "status": "pass"})
    >>> store.append({"id": "chapters.router.zloss_zero_logits", "status": "pass"})
    >>> [(r["id"], r["status"]) for r in report_records(store)]
    [('chapters.router.zloss_zero_logits', 'pass')]
    """
    from verify.claims import load_all

    latest = store.latest()
    return [latest[cid] for cid in load_all() if cid in latest]


def rebuild_report(store) -> Path:
    """Write ``report.md`` beside ``store``'s claims.jsonl from :func:`report_records`; returns
    its path. The report is a function of the stored records alone, whichever claims ran last.

    >>> import tempfile
    >>> from verify.results import ResultStore
    >>> store = ResultStore(tempfile.mkdtemp())
    >>> rebuild_report(store).read_text().splitlines()[2]
    '## Start here'
    """
    from verify.results import REPORT_FILE, write_report

    records = report_records(store)
    return write_report(records, store.dir / REPORT_FILE, report_summary(records, store.dir))


def _doc_link(page: str, folder: Path) -> str:
    """A Markdown link from a report in ``folder`` to the checkout's ``docs/<page>`` (a relative
    link; an absolute one where ``folder`` is on another drive)."""
    from verify.results import REPO

    target = REPO / "docs" / page
    try:
        rel = os.path.relpath(target, Path(folder).resolve())
    except ValueError:
        rel = str(target)
    return f"[docs/{page}]({Path(rel).as_posix()})"


def report_summary(records: list[dict], folder) -> list[str]:
    """The opening of report.md, what a reader acts on first: the counts, the papers' statements
    by the scorecards' rule (:func:`verify.statements.paper_verdicts`), then the claims that
    failed or errored, the claims not reproduced (the ledger's reason) and the inconclusive ones
    (what would decide them), with links to docs/ledger.md and docs/claims.md.

    >>> rows = [{"id": "geometric.gd.fit", "status": "inconclusive", "inconclusive": "6 seeds would decide"}]
    >>> text = "\\n".join(report_summary(rows, "/tmp"))
    >>> "geometric.gd.fit`: 6 seeds would decide" in text
    True
    """
    from collections import Counter

    from verify.statements import HOLDS, REFUTED, UNDECIDED, paper_verdicts

    folder = Path(folder)
    counts = Counter(r["status"] for r in records)
    first = records[0] if records else {}
    out = [
        "## Start here",
        "",
        f"{len(records)} claims at {first.get('scale', '?')} scale (seed {first.get('seed', '?')}, "
        f"{first.get('device', '?')}, {first.get('dtype', '?')}): "
        + (", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "none run")
        + ". What the words mean: "
        + _doc_link("verdicts.md", folder)
        + ".",
        "",
        "The papers' statements, by the scorecards' rule (each claim has a role for a statement; "
        "the statement's verdict comes from the claims that test it in a setting it permits: it "
        "holds when all of them pass, is refuted when one fails, and is undecided otherwise; our own "
        "formalisations and the must-fail boundaries are shown apart on each paper's page, which "
        "opens with its scorecard; " + _doc_link("verdicts.md", folder) + "):",
        "",
        "| paper | statements | hold | refuted | undecided | page |",
        "|---|---|---|---|---|---|",
    ]
    by_id = {r["id"]: r for r in records}
    for area, n in paper_verdicts(by_id).items():
        out.append(
            f"| {area} | {n['statements']} | {n[HOLDS]} | {n[REFUTED]} | {n[UNDECIDED]} | "
            f"{_doc_link(area + '.md', folder)} |"
        )
    broken = [r for r in records if r["status"] in ("fail", "error", "vacuous")]
    if broken:
        out += ["", "**Failed, errored or vacuous** (the run's exit status is 1):", ""]
        for r in broken:
            why = r.get("error") or r.get("vacuous") or "the measurement contradicts the prediction"
            out.append(f"- `{r['id']}`: {r['status']}: {_one_line(why)}")
    lists = (
        (
            "not reproduced",
            "Not reproduced",
            "in the ledger, with the numbers and what was tried",
            "ledger.md",
        ),
        (
            "inconclusive",
            "Inconclusive",
            "this budget cannot decide, and the record says what would",
            "claims.md",
        ),
    )
    for status, title, what, page in lists:  # each record carries its reason in the field of its status
        field = "ledger" if status == "not reproduced" else status
        rows = [r for r in records if r["status"] == status]
        if rows:
            out += ["", f"**{title}** ({len(rows)}; {what}: {_doc_link(page, folder)}):", ""]
            out += [f"- `{r['id']}`: {_one_line(r.get(field) or '')}" for r in rows]
    return out


def _one_line(text: str, limit: int = 240) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def cmd_prune(args) -> int:
    """``prune [--results DIR] [--dry-run]``: remove from DIR/claims.jsonl the records of claims
    that are no longer registered (and rewrite any bare NaN/Infinity as strict JSON), say what
    was removed, and rebuild DIR/report.md, where there is one, when the file changed."""
    from verify.claims import load_all
    from verify.inputs import writable_folder
    from verify.results import (
        REPORT_FILE,
        RESULTS_FILE,
        ResultStore,
        missing_results,
        non_strict_lines,
        results_root,
    )

    folder = results_root(args.results)
    store = ResultStore(folder, create=False)
    if not store.path.is_file():
        raise ValueError(missing_results(store.path))
    if not args.dry_run:
        writable_folder(folder, "--results")
    before = store.path.read_bytes()
    loose = non_strict_lines(store.path)
    removed = store.prune(set(load_all()), dry_run=args.dry_run)
    verb = "would remove" if args.dry_run else "removed"
    if loose:
        print(
            f"{'would rewrite' if args.dry_run else 'rewrote'} {len(loose)} line(s) holding a bare "
            f"NaN/Infinity as strict JSON (lines {', '.join(map(str, loose))}; unregistered ones removed)"
        )
    for cid, n in sorted(removed.items()):
        print(f"{verb} {n} record(s) of {cid} (no longer registered)")
    total = sum(removed.values())
    print(f"{folder / RESULTS_FILE}: {verb} {total} record(s) of {len(removed)} unregistered claim(s)")
    if not args.dry_run and store.path.read_bytes() != before and (folder / REPORT_FILE).is_file():
        print(f"rebuilt {rebuild_report(store)}")
    return 0


def bench_command(args) -> int:
    """``python -m verify bench``: run the named benches of :mod:`verify.bench` (default: all but
    ``EXPLICIT_ONLY``) and print their rows: a text block per row, or with ``--json`` one JSON
    document, the list of the rows (strict JSON: a non-finite number is null with a
    ``*_nonfinite`` note, theory/cli_support.py), printed once every row is done.

    >>> import argparse
    >>> from verify.bench import BENCHES
    >>> _ = BENCHES.add("doc_example", lambda device: {"name": "doc_example", "seconds": 0.5})
    >>> bench_command(argparse.Namespace(names=["doc_example"], json=True, device="cpu"))
    [{"name": "doc_example", "seconds": 0.5}]
    0
    >>> _ = BENCHES.pop("doc_example")
    """
    from constructions.device import resolve_device
    from verify.bench import EXPLICIT_ONLY, load_benches

    benches = load_benches()  # every bench module registers its rows

    device = resolve_device(getattr(args, "device", None))
    names = args.names or [n for n in benches if n not in EXPLICIT_ONLY]
    unknown = [n for n in names if n not in benches]
    if unknown:
        raise ValueError(f"unknown bench {unknown}; available: {list(benches)}")
    rows = []
    for name in names:
        row = benches[name](device=device)
        rows.append(row)
        if not args.json:
            print(f"[{name}]")
            for key, value in row.items():
                if key == "name":
                    continue
                text = f"{value:.4g}" if isinstance(value, float) else str(value)
                print(f"  {key:<26} {text}")
            sys.stdout.flush()
    if args.json:
        from theory.cli_support import dumps

        print(dumps(rows), flush=True)
    return 0
