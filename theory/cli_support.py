"""Pieces shared by the three command lines (``python -m theory``, ``python -m verify``,
``python -m paper_figs``): strict JSON, name filters, ``key=value`` parsing and a quiet exit on a
closed pipe. It lives in theory, the lowest stage, so every stage may use it; the command lines
are described in the README's "Command line" section and in docs/README.md.
"""

from __future__ import annotations

import fnmatch
import json
import math
import os
import sys
from typing import Any, Callable, Iterable, Sequence

#: suffix of the sibling key that carries a non-finite number's value in strict JSON
NONFINITE_SUFFIX = "_nonfinite"


def _nonfinite_text(value: float) -> str:
    return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")


def _as_float(value: Any) -> float | None:
    """``value`` as a Python float when it is a real non-bool number (numpy scalars included)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float):
        return value
    if type(value).__module__ == "numpy" and hasattr(value, "dtype") and getattr(value, "ndim", 1) == 0:
        kind = value.dtype.kind
        if kind == "f":
            return float(value)
    return None


def strict_json(value: Any) -> Any:
    """A copy of ``value`` that ``json.dumps(..., allow_nan=False)`` accepts.

    A non-finite float that is a dict value becomes ``None`` with a sibling key
    ``<key>_nonfinite`` holding ``"Infinity"``, ``"-Infinity"`` or ``"NaN"`` (the reason); one inside
    a list becomes that string itself (Python's ``float()`` and JavaScript's ``Number()`` read it
    back). numpy scalars and arrays become Python numbers and lists, tuples and sets become lists,
    and any other object its ``str``.

    >>> strict_json({"value": float("inf"), "n": 3})
    {'value': None, 'value_nonfinite': 'Infinity', 'n': 3}
    >>> strict_json([1.5, float("-inf"), (2, float("nan"))])
    [1.5, '-Infinity', [2, 'NaN']]
    """
    if isinstance(value, dict):
        out: dict = {}
        for key, item in value.items():
            key = str(key)
            number = _as_float(item)
            if number is not None and not math.isfinite(number):
                out[key] = None
                out[key + NONFINITE_SUFFIX] = _nonfinite_text(number)
            else:
                out[key] = strict_json(item)
        return out
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_list_item(v) for v in value]
    if value is None or isinstance(value, (str, bool, int)):
        return value
    number = _as_float(value)
    if number is not None:
        return number if math.isfinite(number) else _nonfinite_text(number)
    if hasattr(value, "tolist"):  # numpy arrays and scalars, torch tensors
        return strict_json(value.tolist())
    if hasattr(value, "item"):
        try:
            return strict_json(value.item())
        except (TypeError, ValueError):
            pass
    return str(value)


def _list_item(value: Any) -> Any:
    number = _as_float(value)
    if number is not None and not math.isfinite(number):
        return _nonfinite_text(number)
    return strict_json(value)


def dumps(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` of :func:`strict_json` ``(value)`` with ``allow_nan=False``: always valid JSON.

    >>> dumps({"value": float("nan")})
    '{"value": null, "value_nonfinite": "NaN"}'
    >>> dumps([1, 2.5])
    '[1, 2.5]'
    """
    kwargs.pop("default", None)
    return json.dumps(strict_json(value), allow_nan=False, **kwargs)


def has_glob(pattern: str) -> bool:
    """Whether ``pattern`` holds a glob character (``*``, ``?`` or ``[``).

    >>> has_glob("hopfield.*"), has_glob("hopfield")
    (True, False)
    """
    return any(ch in pattern for ch in "*?[")


def name_matches(name: str, pattern: str, *others: str) -> bool:
    """Whether ``pattern`` selects ``name`` (or one of ``others``, e.g. a paper label) in a ``list``
    filter: a glob (``fnmatch``, case-sensitive) over the whole name, else the name itself, a
    dotted prefix of it (``hopfield`` selects ``hopfield.capacity``) or, for ``others``, equality
    ignoring case.

    >>> name_matches("hopfield.capacity", "hopfield"), name_matches("hopfield.capacity", "hop")
    (True, False)
    >>> name_matches("fact_mlp.jl_code_dim", "*code*"), name_matches("fact_mlp.jl_code_dim", "b2", "B2")
    (True, True)
    """
    if has_glob(pattern):
        return fnmatch.fnmatchcase(name, pattern) or any(fnmatch.fnmatchcase(o, pattern) for o in others)
    if name == pattern or name.startswith(pattern + "."):
        return True
    return any(o.lower() == pattern.lower() for o in others)


def filter_names(names: Iterable[str], patterns: Sequence[str]) -> list[str]:
    """The names any of ``patterns`` selects (:func:`name_matches`), in their order; all of them
    when no pattern is given.

    >>> filter_names(["a.x", "a.y", "b.x"], ["a"]), filter_names(["a.x", "b.x"], ["*.x"])
    (['a.x', 'a.y'], ['a.x', 'b.x'])
    >>> filter_names(["a.x"], ["zzz*"])
    []
    """
    names = list(names)
    if not patterns:
        return names
    return [n for n in names if any(name_matches(n, p) for p in patterns)]


def parse_assignments(items: Sequence[str]) -> dict[str, str]:
    """``["key=value", ...]`` as an ordered dict of strings; a missing ``=``, an empty key or a key
    given twice is a ValueError naming it.

    >>> parse_assignments(["N=10", "rho=0.3"])
    {'N': '10', 'rho': '0.3'}
    >>> parse_assignments(["N=1", "N=2"])
    Traceback (most recent call last):
    ...
    ValueError: parameter 'N' given twice (N=1 and N=2)
    """
    out: dict[str, str] = {}
    for item in items:
        if "=" not in item:
            raise ValueError(f"expected key=value, got {item!r}")
        key, value = item.split("=", 1)
        key = key.strip()
        if not key:
            raise ValueError(f"expected key=value, got {item!r} (no key)")
        if key in out:
            raise ValueError(f"parameter {key!r} given twice ({key}={out[key]} and {key}={value})")
        out[key] = value
    return out


def parse_number(text: str, name: str = "value") -> int | float:
    """``text`` as an int, else a float (``inf`` included); a ValueError naming ``name`` otherwise.

    >>> parse_number("10"), parse_number("0.3"), parse_number("1e3")
    (10, 0.3, 1000.0)
    >>> parse_number("ten", "n_values")
    Traceback (most recent call last):
    ...
    ValueError: parameter n_values: 'ten' is not a number
    """
    text = text.strip()
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    raise ValueError(f"parameter {name}: {text!r} is not a number")


def run_main(main: Callable[[list[str] | None], int | None], argv: Sequence[str] | None = None) -> int:
    """Run a command line's ``main(argv)`` and flush stdout; when the reader of stdout has gone
    (``python -m theory list | head -1``) return 141 (128 + SIGPIPE, as a shell reports it) quietly
    instead of a BrokenPipeError traceback; on Ctrl-C print one line and return 130.

    >>> run_main(lambda argv: 0, [])
    0
    """
    try:
        status = main(None if argv is None else list(argv))
        sys.stdout.flush()
        return int(status or 0)
    except KeyboardInterrupt:  # Ctrl-C: one line, no traceback (130 = 128 + SIGINT, as a shell says)
        print("\ninterrupted (Ctrl-C): what finished before it is kept", file=sys.stderr)
        return 130
    except BrokenPipeError:
        try:  # later writes (and the interpreter's final flush) go nowhere
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 141
