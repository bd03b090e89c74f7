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

#: Areas, in the order of the area table of README.md. A module ``theory.<area>`` registers its bounds on
#: import.
#: "atlas" (the capacity atlas, docs/atlas.md) spans the six areas: it has no theory module, only verify/ and
#: paper_figs/.
AREAS = ("geometric", "fact_mlp", "icrecall", "hopfield", "chapters", "retrieval", "atlas")

#: The most points one grid may have (:meth:`Bound.evaluate`, :meth:`Bound.grid`, ``python -m
#: theory eval``): each point is a row of about :data:`GRID_POINT_BYTES` in memory (its
#: parameters, defaults and value; more as ``--json`` text), and is evaluated in about 40
#: microseconds, so 100,000 points take about 200 MB and 4 s. A larger grid is a ValueError
#: naming its axes and the estimate, raised before any point is listed or evaluated.
MAX_GRID_POINTS = 100_000
#: Bytes of memory per grid row (measured: 2,000,000 points took 4.3 GB).
GRID_POINT_BYTES = 2200


@dataclass(frozen=True)
class Bound:
    """One bound of one paper.

    name: ``<area>.<name>``; statement: the inequality in one sentence; provenance: one of
    PROVENANCES; params: parameter name -> short description, the names being those of the Python
    function ``numeric`` (spelled out, e.g. ``n_subjects``); numeric: (**params) -> float,
    validated; symbolic: () -> sympy.Expr in sympy symbols named like the params or their paper
    symbols; label: the paper's label of the statement where there is one ("B2", "D3", "F1",
    "R4"), else None; aliases: paper symbol -> parameter name (``{"N": "n_subjects"}``), accepted
    wherever a parameter name is (``evaluate``, ``python -m theory eval``). Defaults are those of
    ``numeric``'s signature (:meth:`defaults`). See docs/README.md for the areas and their labels.
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
    aliases: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if self.provenance not in PROVENANCES:
            raise ValueError(f"bound {self.name}: provenance {self.provenance!r} not in {PROVENANCES}")
        for alias, target in self.aliases.items():
            if target not in self.params:
                raise ValueError(f"bound {self.name}: alias {alias!r} names {target!r}, not a parameter")
            if alias in self.params and alias != target:
                raise ValueError(f"bound {self.name}: alias {alias!r} is another parameter's name")
        sig = _signature(self.numeric)
        if sig is not None and not any(p.kind is p.VAR_KEYWORD for p in sig.values()):
            named = [p for p, v in sig.items() if v.kind not in (v.VAR_POSITIONAL, v.VAR_KEYWORD)]
            if set(named) != set(self.params):
                raise ValueError(
                    f"bound {self.name}: params {list(self.params)} are not the parameters "
                    f"{named} of its function {getattr(self.numeric, '__name__', self.numeric)!r}: "
                    "one name per parameter"
                )

    @property
    def area(self) -> str:
        """The area, the part of the name before the first dot.

        >>> from theory.registry import bounds_labelled, get_bound
        >>> get_bound("fact_mlp.jl_code_dim").area
        'fact_mlp'
        """
        return self.name.split(".", 1)[0]

    @property
    def area_label(self) -> str | None:
        """``AREA.LABEL`` (what ``python -m theory eval`` accepts for the bound), None without label.

        >>> from theory.registry import bounds_labelled, get_bound
        >>> get_bound("fact_mlp.jl_code_dim").area_label
        'fact_mlp.B2'
        """
        return None if self.label is None else f"{self.area}.{self.label}"

    def defaults(self) -> dict[str, object]:
        """The parameters that may be left out, with the value ``numeric`` then uses.

        >>> from theory.registry import bounds_labelled, get_bound
        >>> get_bound("geometric.khop_dim_bound").defaults()
        {'bits_per_param': 32}
        """
        import inspect

        sig = _signature(self.numeric) or {}
        return {
            p: sig[p].default
            for p in self.params
            if p in sig and sig[p].default is not inspect.Parameter.empty
        }

    def symbols(self) -> dict[str, str]:
        """Parameter name -> its paper symbols (the aliases), comma-separated; "" without one.

        >>> from theory.registry import bounds_labelled, get_bound
        >>> get_bound("geometric.khop_dim_bound").symbols()["n_subjects"]
        'N'
        """
        out = {p: [] for p in self.params}
        for alias, target in self.aliases.items():
            out[target].append(alias)
        return {p: ", ".join(a) for p, a in out.items()}

    def named(self, param: str) -> str:
        """``param`` with its paper symbols, as messages name it.

        >>> from theory.registry import get_bound
        >>> get_bound("geometric.d0_suff").named("n_subjects")
        'n_subjects (N)'
        """
        symbols = self.symbols().get(param)
        return f"{param} ({symbols})" if symbols else param

    def canonical(self, values: Mapping[str, object]) -> dict[str, object]:
        """``values`` keyed by parameter names (aliases replaced), checked: an unknown name, a
        parameter given twice (as itself and as an alias) or a missing parameter without default is
        a ValueError naming it.

        >>> from theory.registry import bounds_labelled, get_bound
        >>> get_bound("geometric.khop_dim_bound").canonical({"N": 1000, "R": 3, "k": 2})
        {'n_subjects': 1000, 'n_relations': 3, 'n_hops': 2}
        """
        out: dict[str, object] = {}
        given_as: dict[str, str] = {}
        unknown = []
        for key, value in values.items():
            target = key if key in self.params else self.aliases.get(key)
            if target is None:
                unknown.append(key)
                continue
            if target in out:
                raise ValueError(
                    f"bound {self.name}: parameter {target} given twice (as {given_as[target]} and as {key})"
                )
            out[target] = value
            given_as[target] = key
        defaults = self.defaults()
        missing = [p for p in self.params if p not in out and p not in defaults]
        if missing or unknown:
            raise ValueError(
                f"bound {self.name} takes parameters {self.signature_text()}; "
                f"missing {missing}, unknown {unknown}"
            )
        return {p: out[p] for p in self.params if p in out}

    def signature_text(self) -> str:
        """The parameters with their paper symbols and defaults, as ``list`` prints them.

        >>> from theory.registry import bounds_labelled, get_bound
        >>> get_bound("geometric.khop_dim_bound").signature_text()
        'n_subjects (N), n_relations (R), n_hops (k), bits_per_param (p) = 32 (default)'
        """
        symbols, defaults = self.symbols(), self.defaults()
        parts = []
        for p in self.params:
            text = p + (f" ({symbols[p]})" if symbols[p] else "")
            if p in defaults:
                text += f" = {defaults[p]!r} (default)"
            parts.append(text)
        return ", ".join(parts)

    def evaluate(self, **values):
        """The bound at ``values`` (parameter names or their paper symbols).

        Scalars give a number. A list, tuple, range or 1-D numpy array is one axis of a grid, and
        several axes give every combination (their Cartesian product; the lengths may differ): a
        float array of shape ``(len(axis), ...)``, one dimension per axis in parameter order, whose
        flattened values are the ``value`` of :meth:`grid`'s rows in order (``python -m theory
        eval`` prints the same). A nested list or a multi-dimensional array is a ValueError (an
        axis is flat), and so is an empty one. A point that violates a hypothesis raises
        ValueError naming the bound and the point.

        >>> from theory.registry import bounds_labelled, get_bound
        >>> round(get_bound("fact_mlp.B2").evaluate(n_values=512, rho=0.663), 1)
        113.5
        >>> get_bound("fact_mlp.B2").evaluate(n_values=[10, 100, 1000], rho=0.3).round(1).tolist()
        [204.7, 409.3, 614.0]
        >>> get_bound("fact_mlp.B2").evaluate(n_values=[10, 100, 1000], rho=[0.3, 0.6]).shape
        (3, 2)
        """
        values = self.canonical(values)
        check_grid_size(self.name, {self.named(k): len(v) for k, v in values.items() if _is_array(v)})
        axes = {k: _axis(self.name, k, v) for k, v in values.items() if _is_array(v)}
        if not axes:
            return self._evaluate_point(values)
        import numpy as np

        rows = self._rows({**values, **axes})
        return np.array([float(r["value"]) for r in rows], dtype=float).reshape(
            [len(a) for a in axes.values()]
        )

    def grid(self, **values) -> list[dict]:
        """Every combination of the given values (an array-like is an axis of several values, a
        scalar one value; see :meth:`evaluate`), in parameter order, the last parameter varying
        fastest: one row per point, ``{"params": ..., "defaults": ..., "value": ...}``, where
        ``params`` holds every parameter of the point keyed by its name (the defaults filled in)
        and ``defaults`` the parameters left at their defaults (the records of ``python -m
        theory eval --json``).

        >>> from theory.registry import bounds_labelled, get_bound
        >>> [round(r["value"], 1) for r in get_bound("fact_mlp.B2").grid(n_values=[10, 100], rho=0.3)]
        [204.7, 409.3]
        >>> get_bound("geometric.param_bound").grid(N=[8, 16], R=[1, 2, 3])[1]["params"]
        {'n_subjects': 8, 'n_relations': 2, 'bits_per_param': 32}
        """
        values = self.canonical(values)
        check_grid_size(self.name, {self.named(k): len(v) for k, v in values.items() if _is_array(v)})
        return self._rows({k: _axis(self.name, k, v) if _is_array(v) else v for k, v in values.items()})

    def _rows(self, values: Mapping[str, object]) -> list[dict]:
        """The rows of :meth:`grid` for canonical ``values`` whose axes are lists."""
        import itertools

        keys = list(values)
        axes = [values[k] if isinstance(values[k], list) else [values[k]] for k in keys]
        defaults = {k: v for k, v in self.defaults().items() if k not in values}
        rows = []
        for combo in itertools.product(*axes):
            given = dict(zip(keys, combo))
            params = {
                p: given[p] if p in given else defaults[p] for p in self.params if p in given or p in defaults
            }
            rows.append({"params": params, "defaults": dict(defaults), "value": self._evaluate_point(given)})
        return rows

    def _evaluate_point(self, values: Mapping[str, object]):
        point = ", ".join(f"{k}={v!r}" for k, v in values.items())
        try:
            value = self.numeric(**values)
        except ValueError as exc:
            raise ValueError(f"bound {self.name} at {point}: {exc}") from None
        except TypeError as exc:
            raise TypeError(f"bound {self.name} at {point}: {exc}") from None
        if isinstance(value, (int, float)) and math.isnan(value):
            raise ValueError(f"bound {self.name} evaluated to NaN at {point}")
        return value

    def expression(self):
        return None if self.symbolic is None else self.symbolic()

    def latex(self) -> str | None:
        expr = self.expression()
        if expr is None:
            return None
        import sympy

        return sympy.latex(expr)


def _signature(fn):
    import inspect

    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None


def _is_array(value) -> bool:
    if isinstance(value, (str, bytes)):
        return False
    if isinstance(value, (list, tuple, range)):
        return True
    return getattr(value, "ndim", 0) > 0


def check_grid_size(bound: str, lengths: Mapping[str, int]) -> int:
    """The number of points of a grid whose axes (parameter -> number of values) are ``lengths``;
    a ValueError naming the bound, the axes and the memory the rows would take where it is above
    :data:`MAX_GRID_POINTS`.

    >>> check_grid_size("geometric.d0_suff", {"n_subjects": 3, "delta": 4})
    12
    >>> check_grid_size("geometric.d0_suff", {"n_subjects": 1000, "delta": 2000})
    Traceback (most recent call last):
    ...
    ValueError: bound geometric.d0_suff: a grid of 2,000,000 points (n_subjects: 1,000 values x delta: 2,000 values) is above the budget of 100,000 points (theory.registry.MAX_GRID_POINTS; its rows would take about 4.1 GiB); evaluate fewer points, or split the grid
    """
    from theory.validate import format_bytes

    points = math.prod(lengths.values())
    if points > MAX_GRID_POINTS:
        axes = " x ".join(f"{k}: {n:,} values" for k, n in lengths.items())
        raise ValueError(
            f"bound {bound}: a grid of {points:,} points ({axes}) is above the budget of "
            f"{MAX_GRID_POINTS:,} points (theory.registry.MAX_GRID_POINTS; its rows would take about "
            f"{format_bytes(points * GRID_POINT_BYTES)}); evaluate fewer points, or split the grid"
        )
    return points


def _axis(bound: str, name: str, value) -> list:
    """The values of a grid axis as a flat, non-empty list (ValueError naming the parameter)."""
    items = value.tolist() if hasattr(value, "tolist") else list(value)
    if not items:
        raise ValueError(f"bound {bound}: parameter {name} is an empty grid axis (give at least one value)")
    if any(_is_array(x) for x in items):
        raise ValueError(
            f"bound {bound}: parameter {name} is a nested list or a multi-dimensional array; a grid "
            "axis is one flat list of values (several axes give every combination)"
        )
    return items


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
    modules ``<package>/<area>_<concept>.py`` (the former flat layout) are found too.
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
    """The bound called ``name``, or labelled so: ``AREA.LABEL`` (``fact_mlp.B2``) or a bare label
    (``D3``) where one bound carries it. An unknown name, or a label several bounds share, is a
    ValueError that lists the candidates (for a bare label, the areas that use it); a name that is
    not a string is a TypeError.

    >>> from theory.registry import bounds_labelled, get_bound
    >>> get_bound("fact_mlp.B2").name, get_bound("D3").name
    ('fact_mlp.jl_code_dim', 'hopfield.capacity_shift')
    >>> get_bound("B2")
    Traceback (most recent call last):
    ...
    ValueError: label B2 is used in several areas (geometric, fact_mlp): write geometric.B2 (geometric.d0_suff) or fact_mlp.B2 (fact_mlp.jl_code_dim)
    """
    if not isinstance(name, str):
        raise TypeError(
            f"name={name!r} must be a string, a bound's name, AREA.LABEL or a label "
            f"(`python -m theory list` shows them), not {type(name).__name__}"
        )
    bounds = load_all()
    if name in bounds:
        return bounds[name]
    area, _, label = name.rpartition(".")
    if area and area not in AREAS:
        raise ValueError(_unknown(name, bounds))
    hits = bounds_labelled(label, area or None)
    if not hits:
        raise ValueError(_unknown(name, bounds))
    if len(hits) == 1:
        return hits[0]
    areas = sorted({b.area for b in hits}, key=lambda a: AREAS.index(a) if a in AREAS else len(AREAS))
    if len(areas) > 1:
        per_area = [
            f"{a}.{hits[0].label} (" + ", ".join(b.name for b in hits if b.area == a) + ")" for a in areas
        ]
        raise ValueError(
            f"label {label} is used in several areas ({', '.join(areas)}): write " + " or ".join(per_area)
        )
    raise ValueError(
        f"{areas[0]}.{hits[0].label} is the label of {len(hits)} bounds: "
        + ", ".join(b.name for b in hits)
        + "; name one of them"
    )


def bounds_labelled(label: str, area: str | None = None) -> list[Bound]:
    """The bounds whose paper label is ``label`` (case ignored), in one area or in all.

    >>> from theory.registry import bounds_labelled, get_bound
    >>> [b.name for b in bounds_labelled("B5", "fact_mlp")]
    ['fact_mlp.baseline_ratio']
    """
    return [
        b
        for b in load_all().values()
        if b.label is not None and b.label.lower() == label.lower() and (area is None or b.area == area)
    ]


def _unknown(name: str, bounds) -> str:
    import difflib

    candidates = list(bounds) + sorted({b.area_label for b in bounds.values() if b.label})
    close = difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
    hint = f" (did you mean {', '.join(close)}?)" if close else ""
    return f"unknown bound {name!r}{hint}; `python -m theory list` shows the names and labels"
