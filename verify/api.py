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
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from verify.claims import Claim

__all__ = ["list_claims", "run_claim"]

#: The dtypes a claim runs in (``--dtype``).
DTYPES = ("float64", "float32")


def list_claims(pattern: str = "*") -> list[str]:
    """The ids of the registered claims matching ``pattern`` (an exact id or an fnmatch glob),
    in registry order (the order of ``python -m verify list``).

    >>> "chapters.router.zloss_zero_logits" in list_claims("chapters.router.*")
    True
    """
    from verify.claims import load_all

    return [cid for cid in load_all() if fnmatch.fnmatchcase(cid, pattern)]


def _run_settings(seed: Any, scale: Any, device: Any, dtype: Any) -> tuple[int, str, str]:
    """(seed, device, dtype) of a run, each checked as ``--seed``, ``--scale``, ``--device`` and
    ``--dtype`` are (a clear error naming the argument), the dtype defaulting to the device's."""
    from constructions.device import default_dtype, resolve_device
    from verify.inputs import seed_value

    seed = seed_value(seed)
    if scale not in ("quick", "full"):
        raise ValueError(f"scale={scale!r} must be 'quick' or 'full'")
    device = resolve_device(device, "device")
    if dtype is not None and dtype not in DTYPES:
        raise ValueError(f"dtype={dtype!r} must be one of {DTYPES} (or None: the device's default)")
    return seed, device, dtype or default_dtype(device)


def run_claim(
    claim_id: str,
    *,
    seed: int = 0,
    scale: str = "quick",
    controls: bool = True,
    device: str = "cpu",
    dtype: str | None = None,
    params: Mapping[str, Any] | None = None,
    results: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """Run the claim ``claim_id`` (with its controls unless ``controls`` is False) and return its
    record. ``params`` overrides some of the parameters of ``scale`` ("quick" or "full"): they are
    merged over the claim's own, and the record stores the merged parameters; ``device`` is
    "cpu", "cuda", "cuda:N" or "auto" (as ``--device``: RECALL_DEVICE, else cuda where available);
    ``dtype`` ("float64" or "float32") defaults to float64 on the CPU and float32 on a GPU;
    ``results``, a folder, appends the record to its ``claims.jsonl`` (what the figures read;
    checked for writing before anything runs).

    Every input is checked before anything runs, each error naming it: an id that is not a
    string, or a seed that is not a non-negative integer, is a TypeError (a negative seed a
    ValueError); an unknown id a ValueError naming the closest ids; an unknown device, dtype or
    scale a ValueError naming the choices; ``params`` that is not a mapping a TypeError, and a
    name in it that is not one of the claim's parameters a ValueError listing them.

    >>> record = run_claim("chapters.router.zloss_zero_logits")
    >>> record["status"], record["passed"], record["kind"]
    ('pass', True, 'identity')
    >>> run_claim("chapters.router.zloss_zero_logits", params={"batch": 2})["params"]
    {'n_chapters': 4097, 'batch': 2}
    >>> run_claim("chapters.router.zloss_zero_logits", device="tpu")
    Traceback (most recent call last):
    ...
    ValueError: device='tpu' is not a device; expected one of ('auto', 'cpu', 'cuda')
    """
    from verify.claims import Context, load_all
    from verify.inputs import writable_folder
    from verify.runner import run_claim as run_one

    if not isinstance(claim_id, str):
        raise TypeError(
            f"claim_id={claim_id!r} must be a claim id, a string <area>.<topic>.<property> "
            f"(`python -m verify list` shows the ids), not {type(claim_id).__name__}"
        )
    seed, device, dtype = _run_settings(seed, scale, device, dtype)
    if results is not None:
        writable_folder(results, "results=")
    claims = load_all()
    claim = claims.get(claim_id)
    if claim is None:
        close = difflib.get_close_matches(claim_id, list(claims), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"unknown claim {claim_id!r}{hint} `python -m verify list` shows the ids")
    merged = claim_params(claim, scale, params)
    ctx = Context(seed=seed, device=device, dtype=dtype, scale=scale)
    record = run_one(claim, ctx, merged, controls=controls)
    if results is not None:
        from verify.results import ResultStore

        ResultStore(results).append(record)
    return record


def run_claims(
    patterns: str | Sequence[str] = "*",
    *,
    seed: int = 0,
    scale: str = "quick",
    device: str = "cpu",
    dtype: str | None = None,
    results: str | os.PathLike[str] | None = None,
    scheduler: Any = None,
) -> list[dict[str, Any]]:
    """Run the claims that ``patterns`` select (ids or globs, as ``python -m verify run``) with
    their controls and return their records; ``results``, a folder, receives each record as it
    ends (and resumes: a finished record of the same claim, parameters, seed, device, dtype and
    code is reused). ``scheduler`` (a Dask scheduler address ``tcp://HOST:PORT`` or a
    ``distributed.Client``) runs each claim as a task on that cluster's workers, this process
    writing the records (:mod:`verify.cluster`); without one the claims run here, one after
    another. Inputs are checked as :func:`run_claim` checks them.

    >>> [r["status"] for r in run_claims(["chapters.router.zloss_zero_logits"])]
    ['pass']
    """
    from verify.claims import Context, select
    from verify.inputs import writable_folder
    from verify.results import ResultStore
    from verify.runner import run_claims as run_here

    if isinstance(patterns, str):
        patterns = [patterns]
    if not all(isinstance(p, str) for p in patterns):
        raise TypeError(f"patterns={patterns!r} must be claim ids or globs (strings)")
    seed, device, dtype = _run_settings(seed, scale, device, dtype)
    claims = select(list(patterns))
    if results is not None:
        writable_folder(results, "results=")
    store = ResultStore(results) if results is not None else None
    ctx = Context(seed=seed, device=device, dtype=dtype, scale=scale)
    if scheduler is not None:
        from verify.cluster import run_claims_on_cluster

        return run_claims_on_cluster(claims, ctx, store, scheduler)
    return run_here(claims, ctx, store=store)


def claim_params(claim: Claim, scale: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The parameters of ``claim`` at ``scale`` with ``params`` merged over them (what
    :func:`run_claim` runs and records): ``params`` must be a mapping (a TypeError otherwise)
    whose names are the claim's parameters (a ValueError listing them otherwise).

    >>> from verify.claims import load_all
    >>> claim = load_all()["chapters.router.zloss_zero_logits"]
    >>> claim_params(claim, "quick", {"batch": 2})
    {'n_chapters': 4097, 'batch': 2}
    >>> claim_params(claim, "quick", {"n_subject": 500})
    Traceback (most recent call last):
    ...
    ValueError: params: 'n_subject' is not a parameter of claim chapters.router.zloss_zero_logits; its parameters at scale quick are batch, n_chapters
    """
    base = claim.params(scale)
    if params is None:
        return base
    if not isinstance(params, Mapping):
        raise TypeError(
            f"params must be a mapping of parameter names to values (a dict), not {type(params).__name__}"
        )
    unknown = [k for k in params if k not in base]
    if unknown:
        close = [m for k in unknown for m in difflib.get_close_matches(str(k), list(base), n=1, cutoff=0.6)]
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        names = ", ".join(repr(k) for k in unknown)
        raise ValueError(
            f"params: {names} {'is' if len(unknown) == 1 else 'are'} not "
            f"{'a parameter' if len(unknown) == 1 else 'parameters'} of claim {claim.id}{hint}; its "
            f"parameters at scale {scale} are {', '.join(sorted(base))}"
        )
    return {**base, **dict(params)}
