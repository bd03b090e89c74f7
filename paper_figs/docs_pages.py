"""The generated pages of the docs: which file holds which generated section (split from
``paper_figs.docs``, which builds the tables).

Every page here has hand-written prose above the markers and its generated tables between them:
docs/README.md (area map), docs/<area>.md (bounds, claims, figures, ledger of one paper),
docs/claims.md, docs/figures.md, docs/ledger.md and docs/lm_geometry.md. Each paper's page also
opens with a second generated block, its scorecard (``paper_figs.scorecards``: one row per
statement of the paper, its claims' verdicts at quick and full scale and their operating
characteristics), between the scorecard markers under its first paragraph. :func:`stale` names the
pages whose generated sections differ from the registries and the stored results; :func:`write`
rewrites them, :func:`write_scorecards` only the scorecards.

Examples
--------
>>> sorted(p.name for p in targets())[:4]
['README.md', 'atlas.md', 'chapters.md', 'claims.md']
"""

from __future__ import annotations

from pathlib import Path

from paper_figs import scorecards
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
    seed_undecided_table,
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
    return _wrap(
        "## Ledger: claims not reproduced",
        "",
        ledger_table(ix),
        "",
        "## Undecided at this budget (not refutations)",
        "",
        "Pass at some base seeds, inconclusive at others, never fail (`verify/<area>/undecided.toml`): "
        "each run reports them inconclusive with the budget that would decide them.",
        "",
        seed_undecided_table(ix),
        "",
    )


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


def scorecard_targets(ix: Index | None = None, results: Path | None = None) -> dict[Path, str]:
    """The page of every area with a statement list (:mod:`verify.statements`) and the scorecard
    block it must hold, from the stored records in ``results`` (default: the checkout's results/).

    >>> sorted(p.name for p in scorecard_targets(results=Path("/nonexistent")))[:2]
    ['chapters.md', 'fact_mlp.md']
    """
    from verify.statements import STATEMENTS

    ix = ix or Index()
    verdicts = scorecards.Verdicts(results, ix.claims)
    return {DOCS / f"{a}.md": scorecards.section(a, verdicts) for a in ix.areas if a in STATEMENTS}


def stale(ix: Index | None = None, results: Path | None = None) -> list[str]:
    """Pages whose generated sections (the scorecard included) differ from the registries and the
    stored records in ``results`` (empty when all are current).

    >>> stale()  # the committed pages are current
    []
    """
    ix = ix or Index()
    bad = []
    for path, sections in [*targets(ix).items(), *scorecard_targets(ix, results).items()]:
        name = path.relative_to(ROOT).as_posix()
        if (not path.exists() or sections not in path.read_text()) and name not in bad:
            bad.append(name)
    return bad


def _rewrite(path: Path, new_text) -> bool:
    if not path.exists():
        raise ValueError(f"{path} does not exist: write its prose and the markers first")
    text = path.read_text()
    new = new_text(text)
    if new != text:
        path.write_text(new)
    return new != text


def write_scorecards(ix: Index | None = None, results: Path | None = None) -> list[str]:
    """Rewrite the scorecard block of every paper's page that is stale (nothing else); the names of
    those rewritten. A page without the scorecard markers is a ValueError.

    >>> import inspect
    >>> list(inspect.signature(write_scorecards).parameters)
    ['ix', 'results']
    """
    changed = []
    for path, block in scorecard_targets(ix, results).items():
        if _rewrite(path, lambda text, b=block, n=path.name: scorecards.replace_in(text, b, n)):
            changed.append(path.relative_to(ROOT).as_posix())
    return changed


def write(ix: Index | None = None, results: Path | None = None) -> list[str]:
    """Rewrite the generated sections of every page that is stale, scorecards included; the names
    of those rewritten.

    >>> import inspect
    >>> list(inspect.signature(write).parameters)
    ['ix', 'results']
    """
    ix = ix or Index()
    changed = []
    for path, sections in targets(ix).items():
        if _rewrite(path, lambda text, s=sections, n=path.name: replace_in(text, s, n)):
            changed.append(path.relative_to(ROOT).as_posix())
    for name in write_scorecards(ix, results):
        if name not in changed:
            changed.append(name)
    return changed
