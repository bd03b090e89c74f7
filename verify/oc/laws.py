"""Synthetic data from competing laws: the one helper the operating characteristic
(:mod:`verify.oc`) draws its measurements with (README.md, "Kinds of claim, controls and verdicts over seeds").

A *law* is a curve g over the sizes; :func:`through` places it through two anchor values (the
theory's curve at the smallest and the largest size), so every law grows (or falls) by the same
total amount and only its shape differs: what a scaling criterion must tell apart.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

#: named growth laws of a size N (N > e): the theory's ln N and its nearest competitors
GROWTH_LAWS: dict[str, Callable[[float], float]] = {
    "ln N": math.log,
    "N^(1/8)": lambda n: n ** (1 / 8),
    "N^(1/5)": lambda n: n**0.2,
    "N^(1/4)": lambda n: n**0.25,
    "N^(1/3)": lambda n: n ** (1 / 3),
    "(ln N)^(3/2)": lambda n: math.log(n) ** 1.5,
    "ln N ln ln N": lambda n: math.log(n) * math.log(math.log(n)),
    "(ln N)^2": lambda n: math.log(n) ** 2,
}


def through(ns: Sequence[float], law: str, first: float, last: float) -> np.ndarray:
    """The curve a + b g(N) of ``law`` (a name of :data:`GROWTH_LAWS`, or "no growth", the mean of
    the anchors at every N, or "falling ln N", ln N's curve turned over) with value ``first`` at the
    smallest N and ``last`` at the largest.

    >>> [round(float(v), 3) for v in through([10.0, 100.0, 1000.0], "ln N", 1.0, 3.0)]
    [1.0, 2.0, 3.0]
    >>> [round(float(v), 3) for v in through([10.0, 100.0, 1000.0], "falling ln N", 1.0, 3.0)]
    [3.0, 2.0, 1.0]
    """
    x = np.asarray(ns, dtype=float)
    if x.ndim != 1 or len(x) < 2 or np.any(x <= math.e):
        raise ValueError(f"a law needs >= 2 sizes above e, got {ns!r}")
    if law == "no growth":
        return np.full(len(x), (first + last) / 2)
    if law == "falling ln N":
        return through(ns, "ln N", last, first)
    if law not in GROWTH_LAWS:
        raise ValueError(f"law {law!r} is not 'no growth', 'falling ln N' or one of {sorted(GROWTH_LAWS)}")
    g = np.array([GROWTH_LAWS[law](float(n)) for n in x])
    return first + (last - first) * (g - g[0]) / (g[-1] - g[0])


def power_through(
    bounds: Sequence[float], exponent: float, anchor_bound: float, anchor_size: float
) -> np.ndarray:
    """Sizes growing like bound^exponent through (anchor_bound, anchor_size): the atlas's laws
    (exponent 1 is size proportional to the bound; 0 is no growth; -1 the opposite sign).

    >>> power_through([1.0, 2.0, 4.0], 1.0, 2.0, 10.0).tolist()
    [5.0, 10.0, 20.0]
    """
    b = np.asarray(bounds, dtype=float)
    if np.any(b <= 0) or anchor_bound <= 0 or anchor_size <= 0:
        raise ValueError("a power law needs positive bounds and a positive anchor")
    return anchor_size * (b / anchor_bound) ** exponent
