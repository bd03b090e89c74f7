"""Figures by id, from Python: draw one from stored results, as ``python -m paper_figs ID`` does.

A figure reads the newest stored record of each claim it names (``results/claims.jsonl``, written
by ``python -m verify`` or :func:`verify.run_claim` with ``results=``); docs/README.md lists the
figures of each area and the claims they read. The results folder follows the command line's rule:
the ``results`` argument (a relative path is relative to the working directory), else the
environment variable RECALL_RESULTS, else the checkout's git-ignored ``runs/`` when a run stored
records there, else the committed reference ``results/`` (never ``./results``).
"""

from __future__ import annotations

import difflib
import fnmatch
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Sequence

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["draw_figure", "list_figures", "save_figure", "stored_records"]


def list_figures(pattern: str = "*") -> list[str]:
    """The ids of the registered figures matching ``pattern`` (an exact id or an fnmatch glob).

    >>> list_figures("geometric.fig_t*")
    ['geometric.fig_threshold', 'geometric.fig_transfer']
    """
    from paper_figs.registry import load_all

    return [fid for fid in load_all() if fnmatch.fnmatchcase(fid, pattern)]


def stored_records(results: str | os.PathLike[str] | None = None) -> dict[str, dict[str, Any]]:
    """The newest stored record of every claim in the results folder ``results`` (read only; None:
    RECALL_RESULTS, else runs/ when it holds records, else the committed results/,
    :func:`verify.results.reading_root`).

    >>> records = stored_records()
    >>> "fact_mlp.capacity.linear_cost" in records
    True
    """
    from verify.results import RESULTS_FILE, ResultStore, reading_root

    path = reading_root(results)
    if not (path / RESULTS_FILE).is_file():
        raise LookupError(
            f"no stored results in {path}: run `python -m verify` (or verify.run_claim(..., results=...)) first"
        )
    return ResultStore(path, create=False).latest()


def draw_figure(
    figure_id: str,
    results: str | os.PathLike[str] | None = None,
    *,
    records: Mapping[str, dict[str, Any]] | None = None,
) -> Figure:
    """Draw the figure ``figure_id`` from the records stored in ``results`` (None: RECALL_RESULTS,
    else runs/ when it holds records, else the committed results/; or from ``records``, claim id ->
    record) and return the matplotlib Figure (the caller saves or closes it). A claim
    the figure needs without a stored record is a LookupError that names it; an unknown id is a
    ValueError naming the closest ids.

    >>> fig = draw_figure("fact_mlp.fig_capacity")
    >>> type(fig).__name__, len(fig.axes) > 0
    ('Figure', True)
    >>> from paper_figs.registry import pyplot
    >>> pyplot().close(fig)
    """
    from paper_figs.registry import load_all, pyplot

    pyplot()  # the non-interactive backend unless pyplot is already set up
    figures = load_all()
    entry = figures.get(figure_id)
    if entry is None:
        close = difflib.get_close_matches(figure_id, list(figures), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"unknown figure {figure_id!r}{hint} `python -m paper_figs --list` shows them")
    recs = dict(records) if records is not None else stored_records(results)
    return entry.draw(recs, results=results) if entry.files else entry.draw(recs)


def save_figure(
    figure_id: str,
    out: str | os.PathLike[str] = "figures",
    results: str | os.PathLike[str] | None = None,
    formats: Sequence[str] = ("png", "pdf"),
) -> list[Path]:
    """Draw the figure ``figure_id`` (:func:`draw_figure`; the id, not a drawn figure) and save it
    as ``out/<id>.<format>`` for each format (``out`` relative to the working directory, created
    and checked writable before anything is drawn); returns the paths written.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as out:
    ...     paths = save_figure("fact_mlp.fig_capacity", out, formats=("png",))
    ...     [p.name for p in paths]
    ['fact_mlp.fig_capacity.png']
    """
    from paper_figs.registry import pyplot
    from verify.inputs import writable_folder

    folder = writable_folder(out, "out", appends=None)  # refused before anything is drawn
    fig = draw_figure(figure_id, results)
    paths = []
    try:
        for ext in formats:
            path = folder / f"{figure_id}.{ext}"
            fig.savefig(path, dpi=150, bbox_inches="tight")
            paths.append(path)
    finally:
        pyplot().close(fig)
    return paths
