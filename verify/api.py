"""Claims by id, from Python: run one and get its record, as ``python -m verify run ID`` does.

A claim is one checkable consequence of a paper (docs/README.md lists them by area, with the
bounds they check). :func:`run_claim` runs its check and its controls in a fresh context and
returns the record that ``python -m verify`` appends to ``results/claims.jsonl``: ``status``
("pass", "fail", "not reproduced", ...), ``passed``, ``predicted``, ``measured``, the controls
and the run's provenance (seed, device, dtype, git revision).
"""

from __future__ import annotations

import difflib
import fnmatch
import os
from typing import Any

__all__ = ["list_claims", "run_claim"]


def list_claims(pattern: str = "*") -> list[str]:
    """The ids of the registered claims matching ``pattern`` (an exact id or an fnmatch glob),
    in registry order (the order of ``python -m verify list``).

    >>> "chapters.router.zloss_zero_logits" in list_claims("chapters.router.*")
    True
    """
    from verify.claims import load_all

    return [cid for cid in load_all() if fnmatch.fnmatchcase(cid, pattern)]


def run_claim(
    claim_id: str,
    *,
    seed: int = 0,
    scale: str = "quick",
    controls: bool = True,
    device: str = "cpu",
    dtype: str | None = None,
    params: dict[str, Any] | None = None,
    results: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Run the claim ``claim_id`` (with its controls unless ``controls`` is False) and return its
    record. ``params`` overrides the scale's parameters; ``dtype`` defaults to float64 on the CPU
    and float32 on a GPU; ``results``, a folder, appends the record to its ``claims.jsonl`` (what
    the figures read; checked for writing before anything runs). An unknown id is a ValueError
    naming the closest ids; a seed that is not a non-negative integer is a TypeError (a string, a
    float) or a ValueError (negative) naming it.

    >>> record = run_claim("chapters.router.zloss_zero_logits")
    >>> record["status"], record["passed"], record["kind"]
    ('pass', True, 'identity')
    """
    from constructions.device import default_dtype
    from verify.claims import Context, load_all
    from verify.inputs import seed_value, writable_folder
    from verify.runner import run_claim as run_one

    seed = seed_value(seed)
    if results is not None:
        writable_folder(results, "results=")
    claims = load_all()
    claim = claims.get(claim_id)
    if claim is None:
        close = difflib.get_close_matches(claim_id, list(claims), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"unknown claim {claim_id!r}{hint} `python -m verify list` shows the ids")
    ctx = Context(seed=seed, device=device, dtype=dtype or default_dtype(device), scale=scale)
    record = run_one(claim, ctx, params, controls=controls)
    if results is not None:
        from verify.results import ResultStore

        ResultStore(results).append(record)
    return record
