"""The generated pages of the docs: which file holds which generated section (split from
``paper_figs.docs``, which builds the tables).

Every page here has hand-written prose above the markers and its generated tables between them:
docs/README.md (area map), docs/<area>.md (bounds, claims, figures, ledger of one paper),
docs/claims.md, docs/figures.md, docs/ledger.md and docs/lm_geometry.md. :func:`stale` names the
pages whose generated section differs from the registries and the stored results; :func:`write`
rewrites them.

Examples
--------
>>> sorted(p.name for p in targets())[:4]
['README.md', 'atlas.md', 'chapters.md', 'claims.md']
"""

from __future__ import annotations

from pathlib import Path

from paper_figs.docs import (
    BEGIN,
    END,
    ROOT,
    Index,
    claim_table,
    figure_map,
    index_sections,
    ledger_table,
    page_sections,
    replace_in,
)
from paper_figs.docs_atlas import undecided_table
from paper_figs.docs_lm import lm_geometry_table

DOCS = ROOT / "docs"


def _wrap(*parts: str) -> str:
    return "\n".join([BEGIN, "", *parts, END])


def _claims_page(ix: Index) -> str:
    """The generated section of docs/claims.md: every claim, then the stored quick run's
    inconclusive claims."""
    return _wrap(
        "## Claims",
        "",
        claim_table(ix),
        "",
        "## Inconclusive: this budget cannot decide",
        "",
        undecided_table(),
        "",
    )


def _figures_page(ix: Index) -> str:
    """The generated section of docs/figures.md: each figure, its command and the claims it reads."""
    return _wrap(
        "## Figure map",
        "",
        "Figures are drawn from the stored results in `results/` (PNG and PDF in `figures/`); add "
        "`--recompute` to rerun the claims first.",
        "",
        figure_map(ix),
        "",
    )


def _ledger_page(ix: Index) -> str:
    """The generated section of docs/ledger.md: every ledger entry."""
    return _wrap("## Ledger: claims not reproduced", "", ledger_table(ix), "")


def _lm_geometry_page() -> str:
    """The generated section of docs/lm_geometry.md: the stored answer-table geometry."""
    return _wrap("## Language models: answer-table geometry", "", lm_geometry_table(), "")


def targets(ix: Index | None = None) -> dict[Path, str]:
    """Every generated page and the section it must hold."""
    ix = ix or Index()
    out = {
        DOCS / "README.md": index_sections(ix),
        DOCS / "claims.md": _claims_page(ix),
        DOCS / "figures.md": _figures_page(ix),
        DOCS / "ledger.md": _ledger_page(ix),
        DOCS / "lm_geometry.md": _lm_geometry_page(),
    }
    for area in ix.areas:
        out[DOCS / f"{area}.md"] = page_sections(area, ix)
    return out


def stale(ix: Index | None = None) -> list[str]:
    """Pages whose generated sections differ from the registries (empty when all are current).

    >>> stale()  # the committed pages are current
    []
    """
    bad = []
    for path, sections in targets(ix).items():
        if not path.exists() or sections not in path.read_text():
            bad.append(path.relative_to(ROOT).as_posix())
    return bad


def write(ix: Index | None = None) -> list[str]:
    """Rewrite the generated section of every page that is stale; the names of those rewritten.

    >>> write()  # nothing to rewrite when every page is current
    []
    """
    changed = []
    for path, sections in targets(ix).items():
        if not path.exists():
            raise ValueError(f"{path} does not exist: write its prose and the markers first")
        text = path.read_text()
        new = replace_in(text, sections, path.name)
        if new != text:
            path.write_text(new)
            changed.append(path.relative_to(ROOT).as_posix())
    return changed
