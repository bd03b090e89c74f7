"""Inputs checked where they enter (the command line and :func:`verify.run_claim`): a seed is a
non-negative integer, and a folder that results will be written to is a writable folder before
anything is computed. Each check raises a ValueError or TypeError naming the input; the command
line turns it into ``error: ...`` and exit status 2 (README "Command line")."""

from __future__ import annotations

import argparse
import numbers
import os
import tempfile
from pathlib import Path

__all__ = ["seed_arg", "seed_value", "writable_folder"]


def seed_value(seed: object, name: str = "seed") -> int:
    """``seed`` as an int, when it is a non-negative integer (a Python or numpy integer, not a
    bool, a float or a string): a TypeError otherwise, a ValueError when it is negative.

    >>> seed_value(3)
    3
    >>> seed_value(-1)
    Traceback (most recent call last):
    ...
    ValueError: seed=-1 must be a non-negative integer
    >>> seed_value("abc")
    Traceback (most recent call last):
    ...
    TypeError: seed='abc' must be a non-negative integer, not str
    """
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"{name}={seed!r} must be a non-negative integer, not {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"{name}={seed!r} must be a non-negative integer")
    return int(seed)


def seed_arg(text: str) -> int:
    """The argparse ``type`` of ``--seed``: a non-negative integer in decimal digits.

    >>> seed_arg("7")
    7
    >>> seed_arg("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: '-1' is not a non-negative integer
    """
    stripped = text.strip()
    if not stripped.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a non-negative integer")
    return int(stripped)


def writable_folder(
    folder: str | os.PathLike[str], flag: str = "--out", appends: str | None = "claims.jsonl"
) -> Path:
    """Make sure ``folder`` is (or can be made) a folder this process can write files in: it is
    created when missing, a file in it is created and removed, and its file ``appends`` (the
    records, ``claims.jsonl``; None: no such file), when present, must open for appending. A
    ValueError naming ``flag`` and the folder otherwise. Returns the folder as a Path.

    >>> import tempfile
    >>> writable_folder(tempfile.mkdtemp()).is_dir()
    True
    >>> with tempfile.NamedTemporaryFile() as fh:
    ...     writable_folder(fh.name)
    Traceback (most recent call last):
    ...
    ValueError: --out ... is a file, not a folder
    """
    path = Path(folder)
    stored = path / appends if appends is not None else None
    if path.exists() and not path.is_dir():
        raise ValueError(f"{flag} {path} is a file, not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
        if stored is not None and stored.exists():
            with stored.open("ab"):
                pass
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        named = Path(exc.filename) if exc.filename else None
        shown = named is not None and named != path and (named.parent != path or named == stored)
        where = f" ({exc.filename})" if shown else ""  # not the probe's random name
        raise ValueError(f"{flag} {path} is not a writable folder: {why}{where}") from None
    return path
