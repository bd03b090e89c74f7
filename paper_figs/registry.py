"""Figure registry: ``@figure(id, claims=(...))`` registers a drawing function.

A drawing function takes ``records`` (claim id -> the newest stored result record, with its
``details``) and returns a matplotlib Figure. ``python -m paper_figs`` reads the records from the
results file; with ``--recompute`` it first runs the claims the figure is fed by. A figure fed by
other stored files of the results folder (``files``, e.g. ``lm_geometry.json``) also takes the
keyword ``results`` (the folder; None: the folder commands read, :func:`verify.results.reading_root`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from theory.registry import Registry


@dataclass(frozen=True)
class Figure:
    id: str
    claims: tuple[str, ...]
    title: str
    draw: Callable
    files: tuple[str, ...] = ()


FIGURES: Registry = Registry("figure")


def figure(id: str, *, claims: tuple[str, ...], title: str, files: tuple[str, ...] = ()):
    def wrap(fn):
        FIGURES.add(id, Figure(id=id, claims=tuple(claims), title=title, draw=fn, files=tuple(files)))
        return fn

    return wrap


def load_all() -> dict[str, Figure]:
    from theory.registry import area_modules

    for name in area_modules("paper_figs"):
        importlib.import_module(name)
    return FIGURES


def pyplot():
    """matplotlib.pyplot, set up once for every figure module: the non-interactive Agg backend
    (PNG and PDF, no display needed) unless pyplot was already imported with another backend."""
    import sys

    import matplotlib

    if "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def footer(fig, rec: dict) -> None:
    """Stamp a figure with where its data came from: scale, seed and git revision of the record."""
    fig.text(
        0.01,
        0.005,
        f"recall-bounds, {rec['scale']} scale, seed {rec['seed']}, git {str(rec.get('git'))[:10]}",
        fontsize=6,
        color="grey",
    )


def verdict_title(hypothesis: str, record: dict | None) -> str:
    """A figure title that states ``hypothesis`` with the verdict of the stored ``record`` it is
    drawn from: the record's status, scale and seed, or "no stored record" when ``record`` is None.
    A title never states the hypothesis alone. A record without a status is a ValueError.

    >>> verdict_title("log scaling of d0 with N", {"status": "pass", "scale": "quick", "seed": 0})
    'log scaling of d0 with N — pass (quick, seed 0)'
    >>> verdict_title("log scaling of d0 with N", {"status": "not reproduced", "scale": "full", "seed": 3})
    'log scaling of d0 with N — not reproduced (full, seed 3)'
    >>> verdict_title("log scaling of d0 with N", None)
    'log scaling of d0 with N — no stored record'
    """
    if not isinstance(hypothesis, str) or not hypothesis.strip():
        raise ValueError(f"a figure title needs its hypothesis as text, not {hypothesis!r}")
    if record is None:
        return f"{hypothesis} — no stored record"
    status = record.get("status")
    if not isinstance(status, str) or not status:
        raise ValueError(
            f"the record of {record.get('id', '?')} has no status, so the title of {hypothesis!r} "
            "cannot state a verdict"
        )
    where = [str(record["scale"])] if record.get("scale") is not None else []
    if record.get("seed") is not None:
        where.append(f"seed {record['seed']}")
    return f"{hypothesis} — {status}" + (f" ({', '.join(where)})" if where else "")


def need(records: dict, claim_id: str) -> dict:
    """The stored record of ``claim_id``; a clear error when it is missing or errored."""
    rec = records.get(claim_id)
    if rec is None:
        raise LookupError(
            f"no stored result for {claim_id}; run `python -m verify run {claim_id}` or pass --recompute"
        )
    if rec.get("status") == "error":
        raise LookupError(f"stored result for {claim_id} is an error: {rec.get('error')}")
    return rec
