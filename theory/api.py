"""Bounds by name, from Python: what ``python -m theory list`` and ``python -m theory eval`` do.

Every bound is registered in :mod:`theory.registry` under ``<area>.<name>`` with its statement,
provenance tag and parameters; docs/README.md maps each to its paper label and to the claims that
check it. This module never imports torch.
"""

from __future__ import annotations

from typing import Any

from theory.registry import get_bound, load_all

__all__ = ["evaluate", "expression", "list_bounds"]


def list_bounds(area: str | None = None) -> list[str]:
    """The names of the registered bounds (all areas, or one), in registry order.

    >>> names = list_bounds("geometric")
    >>> "geometric.d0_suff" in names and all(n.startswith("geometric.") for n in names)
    True
    """
    names = list(load_all())
    if area is None:
        return names
    return [n for n in names if n.split(".", 1)[0] == area]


def evaluate(name: str, **params: Any) -> Any:
    """The bound ``name`` at ``params`` (the names ``python -m theory list`` prints, or their paper
    symbols): :meth:`theory.registry.Bound.evaluate`.

    Scalars give a number. A list, tuple, range or 1-D numpy array is one axis of a grid, and
    several axes give every combination (the lengths may differ): a float array with one
    dimension per axis, in the bound's parameter order, the values ``python -m theory eval``
    prints for the same lists. Every point is validated: a point outside a bound's hypotheses,
    or a value that is not a number (a string such as ``"1000"``), raises an error naming the
    parameter. A grid of more than :data:`theory.registry.MAX_GRID_POINTS` points is a ValueError
    naming its axes, raised before any point is evaluated; a ``name`` that is not a string is a
    TypeError.

    >>> round(evaluate("geometric.d0_suff", N=1000, t=0.5, delta=0.01), 2)
    152.91
    >>> evaluate("geometric.d0_suff", N=[10, 100, 1000], t=0.5, delta=0.01).round(1).tolist()
    [79.2, 116.1, 152.9]
    >>> evaluate("geometric.d0_nec", N=[100, 10000], gamma=[0.25, 0.5, 1.0]).round(2).tolist()
    [[3.43, 4.19, 5.22], [6.86, 8.38, 10.45]]
    """
    return get_bound(name).evaluate(**params)


def expression(name: str) -> Any:
    """The bound's symbolic form (a sympy expression), or None where it has none.

    >>> print(expression("geometric.pigeonhole_dim"))
    log(N)/log(2)
    """
    return get_bound(name).expression()
