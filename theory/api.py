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


def _is_array(value: Any) -> bool:
    if isinstance(value, (str, bytes)):
        return False
    return isinstance(value, (list, tuple, range)) or getattr(value, "ndim", 0) > 0


def evaluate(name: str, **params: Any) -> Any:
    """The bound ``name`` at ``params`` (the names ``python -m theory list`` prints).

    Scalars give a float. Array-likes (numpy arrays, lists) are broadcast against each other as
    numpy broadcasts and give a float array of the broadcast shape, one evaluation per point (so
    every point is validated: a point outside a bound's hypotheses raises ValueError).

    >>> round(evaluate("geometric.d0_suff", N=1000, t=0.5, delta=0.01), 2)
    152.91
    >>> import numpy as np
    >>> evaluate("geometric.d0_suff", N=np.array([10, 100, 1000]), t=0.5, delta=0.01).round(1).tolist()
    [79.2, 116.1, 152.9]
    """
    bound = get_bound(name)
    arrays = {k: v for k, v in params.items() if _is_array(v)}
    if not arrays:
        return bound.evaluate(**params)
    import numpy as np

    arrays = {k: np.asarray(v) for k, v in arrays.items()}
    shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
    wide = {k: np.broadcast_to(a, shape) for k, a in arrays.items()}
    out = np.empty(shape, dtype=np.float64)
    for idx in np.ndindex(*shape):
        point = {k: (wide[k][idx].item() if k in wide else v) for k, v in params.items()}
        out[idx] = float(bound.evaluate(**point))
    return out


def expression(name: str) -> Any:
    """The bound's symbolic form (a sympy expression), or None where it has none.

    >>> print(expression("geometric.pigeonhole_dim"))
    log(N)/log(2)
    """
    return get_bound(name).expression()
