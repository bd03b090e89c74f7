"""Small validators shared by every theory module and the builders of constructions/.

Each raises an error naming the parameter and the violated hypothesis:

- a value that is not a number at all (text such as ``"1000"``, a truth value, None, a list) is a
  TypeError: the command lines parse their text into numbers before they call;
- a number outside the hypothesis (NaN, a non-integral size, a value below a minimum) is a
  ValueError.

Sizes (:func:`require_int`) accept Python and numpy integers and floats with an integral value
(``3.0`` is the size 3, as ``python -m theory eval N=1e3`` gives 1000); a non-integral float such
as 2.5 is rejected, never truncated.
"""

from __future__ import annotations

import math

import numpy as np


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
