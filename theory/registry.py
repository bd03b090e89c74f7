"""Registry of bounds: each a sympy expression plus a fast numeric evaluation.

A :class:`Bound` names its parameters, states the inequality it stands for and carries its
provenance tag. ``python -m theory list`` and ``python -m theory eval`` read this registry.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
from dataclasses import dataclass, field
from typing import Callable, Mapping

PROVENANCES = ("abstract", "paper", "reference", "derived")

#: Areas, in the order of DESIGN.md. A module ``theory.<area>`` registers its bounds on import.
#: "atlas" (issue 19) spans the six areas: it has no theory module, only verify/ and paper_figs/.
AREAS = ("geometric", "fact_mlp", "icrecall", "hopfield", "chapters", "retrieval", "atlas")


@dataclass(frozen=True)
class Bound:
    """One bound of one paper.

    name: ``<area>.<name>``; statement: the inequality in one sentence; provenance: one of
    PROVENANCES; params: parameter name -> short description; symbolic: () -> sympy.Expr in
    sympy symbols named like the params; numeric: (**params) -> float, validated; label: the
    paper's (or spec's) label of the statement where there is one ("B2", "D3", "F1", "R4"), else None.
    """

    name: str
    statement: str
    provenance: str
    source: str
    params: Mapping[str, str]
    numeric: Callable[..., float]
    symbolic: Callable[[], object] | None = None
    extra: Mapping[str, str] = field(default_factory=dict)
    label: str | None = None

    def __post_init__(self):
        if self.provenance not in PROVENANCES:
            raise ValueError(f"bound {self.name}: provenance {self.provenance!r} not in {PROVENANCES}")

    def evaluate(self, **values) -> float:
        import inspect

        sig = inspect.signature(self.numeric).parameters
        missing = [
            p
            for p in self.params
            if p not in values and (p not in sig or sig[p].default is inspect.Parameter.empty)
        ]
        unknown = [p for p in values if p not in self.params]
        if missing or unknown:
            raise ValueError(
                f"bound {self.name} takes parameters {list(self.params)}; "
                f"missing {missing}, unknown {unknown}"
            )
        value = self.numeric(**values)
        if isinstance(value, (int, float)) and math.isnan(value):
            raise ValueError(f"bound {self.name} evaluated to NaN at {values}")
        return value

    def expression(self):
        return None if self.symbolic is None else self.symbolic()

    def latex(self) -> str | None:
        expr = self.expression()
        if expr is None:
            return None
        import sympy

        return sympy.latex(expr)


class Registry(dict):
    """name -> item, in registration order; registering a name twice is an error.

    The one registry class of the toolkit: bounds (here), claims (verify.claims), figures
    (paper_figs.registry) and bench rows (verify.bench). It lives in theory, the lowest stage, so
    every stage may use it.
    """

    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind

    def add(self, name: str, item):
        if name in self:
            raise ValueError(f"{self.kind} {name} registered twice")
        self[name] = item
        return item


BOUNDS: Registry = Registry("bound")


def register_bound(bound: Bound) -> Bound:
    return BOUNDS.add(bound.name, bound)


def area_modules(package: str) -> list[str]:
    """Module names of the areas' code in ``package``, area by area (the order of AREAS).

    An area lives in ``<package>/<area>/`` (a subpackage: the package first, then every module
    inside it, listed with pkgutil without importing, sorted by name) or in a single module ``<package>/<area>.py``;
    modules ``<package>/<area>_<concept>.py`` (the flat layout before issue 18's move) are found too.
    Used by the theory, verify and paper_figs registries, so an area may add a module without
    touching a shared list.
    """
    import os
    import pkgutil

    def walk(paths, prefix):  # like pkgutil.walk_packages, without importing the packages
        out = []
        for info in sorted(pkgutil.iter_modules(paths), key=lambda i: i.name):
            out.append(prefix + info.name)
            if info.ispkg:
                out += walk([os.path.join(p, info.name) for p in paths], f"{prefix}{info.name}.")
        return out

    pkg = importlib.import_module(package)
    present = {m.name: m.ispkg for m in pkgutil.iter_modules(pkg.__path__)}
    names = []
    for area in AREAS:
        for m in sorted(present):
            if m == area or m.startswith(area + "_"):
                names.append(f"{package}.{m}")
                if present[m]:
                    names += walk([os.path.join(p, m) for p in pkg.__path__], f"{package}.{m}.")
    return names


def load_all() -> dict[str, Bound]:
    """Import every area module that exists, so its bounds register."""
    for name in area_modules("theory"):
        importlib.import_module(name)
    return BOUNDS


def get_bound(name: str) -> Bound:
    load_all()
    try:
        return BOUNDS[name]
    except KeyError:
        raise ValueError(f"unknown bound {name!r}; `python -m theory list` shows them") from None
