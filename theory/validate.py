"""Small validators shared by every theory module: each raises ValueError naming the hypothesis."""

from __future__ import annotations

import math


def require_int(name: str, value, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not float(value).is_integer():
        raise ValueError(f"{name}={value!r} must be an integer")
    value = int(value)
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
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} is NaN")
    if low is not None and (value < low or (low_open and value == low)):
        op = ">" if low_open else ">="
        raise ValueError(f"{name}={value} violates the hypothesis {name} {op} {low}")
    if high is not None and (value > high or (high_open and value == high)):
        op = "<" if high_open else "<="
        raise ValueError(f"{name}={value} violates the hypothesis {name} {op} {high}")
    return value
