"""``python -m paper_figs [FIG ...] [--recompute] [--results DIR] [--out DIR]``.

python -m paper_figs docs [--write|--check]   the generated sections of README.md and docs/*.md
python -m paper_figs where                    each claim's file:line, bounds and figures
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["docs"]:
        from paper_figs.docs_cli import main as docs_main

        return docs_main(argv[1:])
    if argv[:1] == ["where"]:
        from paper_figs.docs_cli import where_text

        print(where_text())
        return 0
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from paper_figs.registry import FIGURES, load_all

    load_all()
    parser = argparse.ArgumentParser(prog="python -m paper_figs", description=__doc__)
    parser.add_argument("figs", nargs="*", metavar="FIG", help="figure ids (default: all)")
    parser.add_argument("--recompute", action="store_true", help="run the claims that feed the figures first")
    parser.add_argument("--results", default="results", help="results folder read (and written)")
    parser.add_argument("--out", default="figures", help="folder for the PNG and PDF files")
    parser.add_argument("--device", default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--list", action="store_true", help="list figures and their claims")
    args = parser.parse_args(argv)
    if args.list:
        for f in FIGURES.values():
            print(f"{f.id}: {f.title}\n    claims: {', '.join(f.claims)}")
        return 0
    unknown = [f for f in args.figs if f not in FIGURES]
    if unknown:
        print(f"error: unknown figure(s) {unknown}; --list shows them", file=sys.stderr)
        return 2
    chosen = [FIGURES[f] for f in (args.figs or FIGURES)]
    from verify.results import ResultStore

    store = ResultStore(args.results)
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
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    status = 0
    for fig_spec in chosen:
        try:
            fig = fig_spec.draw(records)
        except LookupError as exc:
            print(f"{fig_spec.id}: skipped: {exc}", file=sys.stderr)
            status = 1
            continue
        for ext in ("png", "pdf"):
            fig.savefig(out / f"{fig_spec.id}.{ext}", dpi=150, bbox_inches="tight")
        plt.close(fig)
        print(f"{fig_spec.id}: {out / (fig_spec.id + '.png')} (+ .pdf)")
    return status


if __name__ == "__main__":
    sys.exit(main())
