"""The command line of the generated docs (split from ``paper_figs.docs``): ``python -m paper_figs
docs [--write | --check]`` (without a flag: the generated pages, each with "current" or "stale") and ``python -m paper_figs where`` (each claim with its file:line, bounds
and figures)."""

from __future__ import annotations

from paper_figs import docs
from paper_figs.docs import Index
from paper_figs.docs_pages import ROOT, stale, targets, write


def where_text(ix: Index | None = None) -> str:
    """``python -m paper_figs where``: claim, file:line, bounds (labels), figures."""
    ix = ix or Index()
    width = max(len(c) for c in ix.claims)
    lines = []
    for cid, c in ix.claims.items():
        bounds = (
            ", ".join(b + (f" ({ix.bounds[b].label})" if ix.bounds[b].label else "") for b in c.bounds) or "-"
        )
        lines.append(
            f"{cid:<{width}}  {ix.claim_at[cid]}  bounds: {bounds}  figures: "
            + (", ".join(ix.figures_of[cid]) or "-")
        )
    return "\n".join(lines)


def main(argv) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m paper_figs docs",
        description=docs.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--write", action="store_true", help="rewrite the generated sections of docs/*.md")
    parser.add_argument(
        "--check", action="store_true", help="exit 1 and name the files whose generated sections are stale"
    )
    args = parser.parse_args(argv)
    ix = Index()
    if args.write:
        for name in write(ix):
            print(f"rewrote the generated sections of {name}")
        return 0
    if args.check:
        bad = stale(ix)
        for name in bad:
            print(f"stale: {name} (run `python -m paper_figs docs --write`)")
        return 1 if bad else 0
    bad = set(stale(ix))
    for path in targets(ix):
        name = path.relative_to(ROOT).as_posix()
        print(f"{name}: {'stale' if name in bad else 'current'}")
    return 0
