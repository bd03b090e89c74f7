"""Small validators shared by every theory module and the builders of constructions/.

Each raises an error naming the parameter and the violated hypothesis:

- a value that is not a number at all (text such as ``"1000"``, a truth value, None, a list) is a
  TypeError: the command lines parse their text into numbers before they call;
- a number outside the hypothesis (NaN, a non-integral size, a value below a minimum) is a
  ValueError.

Sizes (:func:`require_int`) accept Python and numpy integers and floats with an integral value
(``3.0`` is the size 3, as ``python -m theory eval N=1e3`` gives 1000); a non-integral float such
as 2.5 is rejected, never truncated.

Sizes that are valid but too large to build are refused before anything is allocated
(:func:`require_memory`): a builder estimates the bytes its arrays take and a ValueError names the
parameters and the estimate where it exceeds :data:`MEMORY_BUDGET_BYTES`.
"""

from __future__ import annotations

import math

import numpy as np

#: The memory budget of one construction (bytes): the most that the arrays a builder of
#: constructions/ allocates for one call (a relation table, a model's weights) may take, 4 GiB.
#: The largest construction of the registry's claims at full scale (the block model for N = 10^5
#: subjects, R = 16 relations, d0 = 35) takes about 2 GB; a size whose estimate is above the
#: budget is refused by :func:`require_memory` before anything is allocated, where it would
#: otherwise run for minutes and end in a MemoryError.
MEMORY_BUDGET_BYTES = 4 * 2**30


def _number(name: str, value, kind: str) -> float:
    """``value`` as a float; TypeError naming ``name`` when it is not a number at all."""
    if value is None or isinstance(value, (str, bytes, bool, np.bool_)):
        raise TypeError(f"{name}={value!r} must be {kind}, got {type(value).__name__}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name}={value!r} must be {kind}, got {type(value).__name__}") from None


def require_int(name: str, value, minimum: int | None = None) -> int:
    """``value`` as an int, checked: a non-number is a TypeError, a non-integral number (2.5, NaN,
    inf) or one below ``minimum`` a ValueError; an integral float (3.0) is accepted.

    >>> require_int("code_dim", 3.0), require_int("code_dim", 3)
    (3, 3)
    >>> require_int("code_dim", 2.5)
    Traceback (most recent call last):
    ...
    ValueError: code_dim=2.5 must be an integer
    >>> require_int("n_subjects", "1000")
    Traceback (most recent call last):
    ...
    TypeError: n_subjects='1000' must be an integer, got str
    """
    number = _number(name, value, "an integer")
    if not number.is_integer():
        raise ValueError(f"{name}={value!r} must be an integer")
    value = int(value) if not isinstance(value, float) else int(number)
    if minimum is not None and value < minimum:
        raise ValueError(f"{name}={value} violates the hypothesis {name} >= {minimum}")
    return value


def require_real(
    name: str,
    value,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """``value`` as a float within [low, high] (ends open where asked): a non-number is a
    TypeError, NaN or a value outside the range a ValueError naming the hypothesis.

    >>> require_real("rho", 0.5, 0.0, 1.0, low_open=True)
    0.5
    >>> require_real("rho", 1.5, 0.0, 1.0)
    Traceback (most recent call last):
    ...
    ValueError: rho=1.5 violates the hypothesis rho <= 1.0
    >>> require_real("rho", "0.5")
    Traceback (most recent call last):
    ...
    TypeError: rho='0.5' must be a real number, got str
    """
    value = _number(name, value, "a real number")
    if math.isnan(value):
        raise ValueError(f"{name} is NaN")
    if low is not None and (value < low or (low_open and value == low)):
        op = ">" if low_open else ">="
        raise ValueError(f"{name}={value} violates the hypothesis {name} {op} {low}")
    if high is not None and (value > high or (high_open and value == high)):
        op = "<" if high_open else "<="
        raise ValueError(f"{name}={value} violates the hypothesis {name} {op} {high}")
    return value


def format_bytes(n_bytes: float) -> str:
    """``n_bytes`` in binary units, three significant digits.

    >>> format_bytes(4 * 2**30), format_bytes(1536), format_bytes(8e12), format_bytes(1e30)
    ('4 GiB', '1.5 KiB', '7.28 TiB', '867,361,737,988 EiB')
    """
    value = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(value) < 1024:
            return f"{value:.3g} {unit}"
        value /= 1024
    return f"{value:,.3g} EiB" if abs(value) < 1000 else f"{value:,.0f} EiB"


def require_memory(what: str, n_bytes: float, budget: float | None = None) -> None:
    """Refuse a construction whose arrays would take about ``n_bytes``, above ``budget`` (default
    :data:`MEMORY_BUDGET_BYTES`): a ValueError naming ``what`` (the parameters and the arrays) and
    the estimate, raised before anything is allocated.

    >>> require_memory("a table (R, N) = (2, 4) of int64", 64)
    >>> require_memory("n_subjects=1000000, n_relations=1000000: the table (R, N) of int64", 8e12)
    Traceback (most recent call last):
    ...
    ValueError: n_subjects=1000000, n_relations=1000000: the table (R, N) of int64 would take about 7.28 TiB, above the memory budget of 4 GiB (theory.validate.MEMORY_BUDGET_BYTES)
    """
    limit = MEMORY_BUDGET_BYTES if budget is None else budget
    if n_bytes > limit:
        raise ValueError(
            f"{what} would take about {format_bytes(n_bytes)}, above the memory budget of "
            f"{format_bytes(limit)} (theory.validate.MEMORY_BUDGET_BYTES)"
        )
