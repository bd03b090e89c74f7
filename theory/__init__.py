"""recall-bounds theory: symbolic (sympy) and numeric bounds, one module per area.

This package never imports torch (``tests/test_light_import.py`` proves it in a subprocess),
so bounds and plots stay usable without a deep-learning stack.

Every bound is registered in :mod:`theory.registry` with its statement and provenance:
``abstract``/``paper`` (the paper says it), ``reference`` (standard literature) or
``derived`` (this project's own formalisation, with a proof sketch in the docstring).

The stable names (``__all__``): ``BOUNDS`` (the registry, name -> :class:`Bound`), ``Bound``,
``get_bound``, ``load_all``; ``list_bounds``, ``evaluate`` and ``expression`` (bounds by name, as
``python -m theory list`` and ``python -m theory eval`` use them); ``decodability`` and
``Decodability`` (the exact decodability rho of a value table, docs/fact_mlp.md), loaded on
first use.

>>> import theory
>>> round(theory.evaluate("geometric.d0_nec", N=1000, gamma=0.5), 3)
6.288
"""

from __future__ import annotations

import importlib
from typing import Any

from theory.api import evaluate, expression, list_bounds
from theory.registry import BOUNDS, Bound, get_bound, load_all

#: names loaded on first access: name -> module
_LAZY = {
    "decodability": "theory.fact_mlp.rho",
    "Decodability": "theory.fact_mlp.rho",
}

__all__ = [
    "BOUNDS",
    "Bound",
    "Decodability",
    "decodability",
    "evaluate",
    "expression",
    "get_bound",
    "list_bounds",
    "load_all",
]


def __getattr__(name: str) -> Any:
    """``decodability`` and ``Decodability``, imported from theory.fact_mlp.rho on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
