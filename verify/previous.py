"""Verdicts of replaced criteria, stored once (README.md, "Kinds of claim, controls and
verdicts over seeds").

When a claim's criterion was replaced, its record keeps the old criterion's verdict and numbers
(``details["previous_criterion"]``) so a reader sees what changed. Where the old criterion needed
its own sweep, that sweep is not re-run for history at every run: its result was measured once,
with the old criterion's code, and is stored in ``verify/previous_criteria.json`` by claim, scale,
base seed and parameters, with the revision that measured it. A run at another seed or with other
parameters says that nothing is stored for it.

The same file keeps the history of replaced rules (:func:`replaced_rules`): per claim, each
replaced rule's text, the rule that replaced it, why (the operating characteristic's numbers,
``python -m verify oc``) and the revision of the change.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

STORE = Path(__file__).with_name("previous_criteria.json")


@lru_cache(maxsize=1)
def _table() -> dict:
    return json.loads(STORE.read_text())


def stored_previous(
    claim_id: str, scale: str, seed: int, params: Mapping[str, Any], added_since: tuple[str, ...] = ()
) -> dict:
    """The stored result of a claim's replaced criterion for this run, with ``stored`` naming the
    revision that measured it; without a stored run for this scale, seed and parameters, a dict that
    says so (``stored`` None). ``added_since``: parameters the claim gained after the run was stored
    (at their claim's own value), left out of the match.

    >>> from verify.claims import load_all
    >>> c = load_all()["hopfield.capacity.r4_tightness"]
    >>> stored = stored_previous(c.id, "quick", 0, c.params("quick"))
    >>> stored["missed"], stored["earlier"]["missed"]
    ([19, 16, 14], [0, 3, 6])
    >>> stored_previous(c.id, "quick", 7, c.params("quick"))["stored"] is None
    True
    """
    from verify.results import jsonable

    runs = _table().get(claim_id)
    if runs is None or not runs["runs"]:
        raise ValueError(f"no replaced criterion is stored for {claim_id!r} (see {STORE.name})")
    wanted = jsonable({k: v for k, v in params.items() if k not in added_since})
    for run in runs["runs"]:
        if run["scale"] == scale and int(run["seed"]) == int(seed) and run["params"] == wanted:
            return {
                **run["previous_criterion"],
                "stored": f"measured once with the replaced criterion's code at revision "
                f"{run['revision'][:10]} ({scale} scale, base seed {seed}); not recomputed",
            }
    rule = runs["runs"][0]["previous_criterion"].get("rule")
    return {
        "rule": rule,
        "stored": None,
        "note": "the replaced criterion was measured once, at the stored scales, base seeds and "
        f"parameters of {STORE.name}; none matches this run",
    }


def replaced_rules(claim_id: str) -> list[dict]:
    """The replaced rules of a claim, oldest first: ``rule`` (its text), ``replaced_by``, ``why``
    (the simulation's numbers that decided it), ``simulation`` (the rates) and ``revision``; an
    empty list when none is stored.

    >>> [r["replaced_by"][:25] for r in replaced_rules("hopfield.capacity.gain")]
    ['the same interval test wi']
    >>> replaced_rules("no.such.claim")
    []
    """
    return list((_table().get(claim_id) or {}).get("replaced", []))


def attached(claim_id: str, scale: str, seed: int, params: Mapping[str, Any]) -> dict:
    """The history a claim's record carries, read from the store (the runner adds it to the
    details of a claim's own run, never a control's): ``previous_criterion`` from the stored sweep
    of a replaced criterion (:func:`stored_previous`, with the entry's ``added_since``), and the
    replaced rules' verdicts and numbers stored once by details key (``records``: per scale, base
    seed, or ``"every"`` seed for a deterministic claim, and parameters, with the revision that
    measured them; a key ``"a/b/c"`` is ``details["a"]["b"]["c"]``, placed by :func:`merged`). A run nothing is stored for gets, under each stored key, the rule and a note
    that says so. An empty dict for a claim with no stored history.

    >>> attached("hopfield.capacity.r4_tightness", "quick", 0, {})["previous_criterion"]["stored"] is None
    True
    >>> attached("no.such.claim", "quick", 0, {})
    {}
    """
    from verify.results import jsonable

    entry = _table().get(claim_id) or {}
    found: dict = {}
    if entry.get("runs"):
        found["previous_criterion"] = stored_previous(
            claim_id, scale, seed, params, tuple(entry.get("added_since", ()))
        )
    records = entry.get("records") or []
    if records:
        wanted = jsonable(dict(params))
        hit = next(
            (
                r
                for r in records
                if r["scale"] == scale and r["seed"] in ("every", int(seed)) and r["params"] == wanted
            ),
            None,
        )
        if hit is not None:
            found.update(hit["details"])
        else:
            stored = {k: v for r in reversed(records) for k, v in r["details"].items()}
            for key, value in stored.items():
                rule = value.get("rule") if isinstance(value, Mapping) else None
                found[key] = {
                    "rule": rule,
                    "stored": None,
                    "note": "the replaced rule's verdict was measured once, at the stored scales, "
                    f"base seeds and parameters of {STORE.name}; none matches this run",
                }
    return found


def merged(details: Mapping[str, Any], history: Mapping[str, Any]) -> dict:
    """``details`` with the stored ``history`` placed in it: a key ``"a/b"`` goes to
    ``details["a"]["b"]``, a numeric part indexes a list (``"rows/0/passed"``); the inner dicts and
    lists are copied, never changed in place. A key whose place the details lack (a model that
    was not loaded in this run) is left out.

    >>> merged({"x": 1, "per_model": {"m": {"acc": 0.9}}}, {"per_model/m/previous_criterion": {"passed": True}})
    {'x': 1, 'per_model': {'m': {'acc': 0.9, 'previous_criterion': {'passed': True}}}}
    >>> merged({"rows": [{"n": 1}, {"n": 2}]}, {"rows/1/previous_passed": False})["rows"]
    [{'n': 1}, {'n': 2, 'previous_passed': False}]
    >>> merged({"per_model": {}}, {"per_model/m/previous_criterion": {}})
    {'per_model': {}}
    """
    out = dict(details)
    for key, value in history.items():
        *path, last = key.split("/")
        node = out
        for part in path:
            index = int(part) if isinstance(node, list) else part
            inner = (
                node[index]
                if isinstance(node, list) and index < len(node)
                else (node.get(index) if isinstance(node, Mapping) else None)
            )
            if not isinstance(inner, (Mapping, list)):
                break
            node[index] = list(inner) if isinstance(inner, list) else dict(inner)
            node = node[index]
        else:
            node[last] = value
    return out
