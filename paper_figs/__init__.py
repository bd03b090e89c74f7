"""One function per figure, drawn from verify's stored results (PNG and PDF, no LaTeX needed).

The stable names (``__all__``), loaded on first use so that ``import paper_figs`` imports neither
matplotlib nor torch: ``draw_figure`` (one figure by id -> a matplotlib Figure), ``save_figure``
(and write it as PNG/PDF), ``list_figures`` and ``stored_records`` (the newest stored record of
every claim). docs/README.md lists the figures of each area.

>>> import paper_figs
>>> "geometric.fig_margin" in paper_figs.list_figures("geometric.*")
True
"""

from __future__ import annotations

import importlib
from typing import Any

#: name -> the module that defines it (imported on first access)
_EXPORTS = {
    "draw_figure": "paper_figs.api",
    "list_figures": "paper_figs.api",
    "save_figure": "paper_figs.api",
    "stored_records": "paper_figs.api",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """The public names, imported from paper_figs.api on first access (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
