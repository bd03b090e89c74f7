"""``python -m paper_figs [FIG ...] [--recompute] [--results DIR] [--out DIR]``.

python -m paper_figs --list [PATTERN ...]     the figures (those a PATTERN selects) and their claims
python -m paper_figs docs [--write|--check]   the generated sections of docs/*.md
python -m paper_figs where                    each claim's file:line, bounds and figures
python -m paper_figs apidocs [--out DIR]      the API reference (HTML, pdoc), default build/api/

The figures are drawn from the stored results in --results DIR, else the environment variable
RECALL_RESULTS, else the checkout's git-ignored runs/ when a run has stored records there, else the
committed reference results/ (found from the package, whatever the working directory); --recompute
writes to --results DIR, else RECALL_RESULTS, else runs/. A missing record names the file looked in
and the command that writes it.
"""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["docs"]:
        from paper_figs.docs_cli import main as docs_main

        return docs_main(argv[1:])
    if argv[:1] == ["apidocs"]:
        from paper_figs.apidocs import main as apidocs_main

        return apidocs_main(argv[1:])
    if argv[:1] == ["where"]:
        from paper_figs.docs_cli import where_text

        print(where_text())
        return 0
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from paper_figs.registry import FIGURES, load_all
    from verify.inputs import seed_arg

    load_all()
    parser = argparse.ArgumentParser(prog="python -m paper_figs", description=__doc__)
    parser.add_argument(
        "figs", nargs="*", metavar="FIG", help="figure ids (default: all); with --list, patterns"
    )
    parser.add_argument("--recompute", action="store_true", help="run the claims that feed the figures first")
    parser.add_argument(
        "--results",
        default=None,
        help="results folder read (written with --recompute); default RECALL_RESULTS, else runs/ "
        "when it holds records (always with --recompute), else the committed results/",
    )
    parser.add_argument("--out", default="figures", help="folder for the PNG and PDF files")
    parser.add_argument("--device", default=None)
    parser.add_argument(
        "--seed",
        type=seed_arg,
        default=0,
        help="seed of the claims run with --recompute (a non-negative integer)",
    )
    parser.add_argument(
        "--list", action="store_true", help="list figures (FIG: filter patterns) and their claims"
    )
    args = parser.parse_args(argv)
    if args.list:
        from theory.cli_support import filter_names

        ids = filter_names(FIGURES, args.figs)
        if not ids:
            print(
                f"no figure matches {' '.join(args.figs)!r}; `python -m paper_figs --list` shows them",
                file=sys.stderr,
            )
        for fid in ids:
            f = FIGURES[fid]
            print(f"{f.id}: {f.title}\n    claims: {', '.join(f.claims) or '-'}")
            if f.files:
                print(f"    files: {', '.join(f.files)}")
        return 0
    unknown = [f for f in args.figs if f not in FIGURES]
    if unknown:
        print(f"error: unknown figure(s) {unknown}; --list shows them", file=sys.stderr)
        return 2
    chosen = [FIGURES[f] for f in (args.figs or FIGURES)]
    from verify.inputs import writable_folder
    from verify.results import ResultStore, missing_results, reading_root, results_root

    try:
        out = writable_folder(args.out, appends=None)  # refused before anything runs or is drawn
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    # --recompute writes (the named folder, else RECALL_RESULTS, else runs/); a plain draw reads
    # the named folder, else RECALL_RESULTS, else runs/ when it holds records, else the reference
    results = results_root(args.results) if args.recompute else reading_root(args.results)
    store = ResultStore(results, create=args.recompute)
    if not args.recompute and not store.path.is_file():
        for fig_spec in chosen:
            again = f"`python -m paper_figs {fig_spec.id} --recompute --results {results}`"
            print(
                f"{fig_spec.id}: skipped: {missing_results(store.path, fig_spec.claims, again)}",
                file=sys.stderr,
            )
        return 1
    if args.recompute:
        from constructions.device import default_dtype, resolve_device
        from verify.claims import Context, select
        from verify.runner import run_claims

        ids = sorted({c for f in chosen for c in f.claims})
        device = resolve_device(args.device)
        ctx = Context(
            seed=args.seed, device=device, dtype=default_dtype(device), progress=sys.stderr.isatty()
        )
        run_claims(select(ids), ctx, store=store, resume=True)
    records = store.latest()
    status = 0
    for fig_spec in chosen:
        try:
            fig = fig_spec.draw(records, results=results) if fig_spec.files else fig_spec.draw(records)
        except LookupError as exc:
            where = f"records read from {store.path}; `python -m verify run` --out {results} writes there"
            print(f"{fig_spec.id}: skipped: {exc} ({where})", file=sys.stderr)
            status = 1
            continue
        for ext in ("png", "pdf"):
            fig.savefig(out / f"{fig_spec.id}.{ext}", dpi=150, bbox_inches="tight")
        plt.close(fig)
        print(f"{fig_spec.id}: {out / (fig_spec.id + '.png')} (+ .pdf)")
    return status


if __name__ == "__main__":
    from theory.cli_support import run_main

    sys.exit(run_main(main))
