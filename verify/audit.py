"""Fingerprints of shared results: a check must never change what another claim reads from the
run's cache (README.md, "Kinds of claim, controls and verdicts over seeds").

``Context(audit=True)`` fingerprints every result :meth:`verify.claims.Context.shared` computes,
and :meth:`verify.claims.Context.mutated_shared` names the cache entries whose content has changed
since (the runner records them in ``record["shared_mutated"]``; the test suite's registry run
requires none). A fingerprint covers numbers, strings, numpy arrays, torch tensors, and the
containers and dataclasses holding them; a torch module (a whole model, read through its own
code) and any other object count by their type only.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np

#: the exact types whose ``repr`` is their whole content: a list or tuple of nothing else (a row of
#: a probe's results: thousands of numbers) is hashed through one ``repr`` of it, not item by item
_PLAIN = frozenset({float, int, str, bool, type(None)})


def fingerprint(value: Any) -> str:
    """A hex digest of ``value``'s content (see the module docstring for what it covers).

    >>> rows = [{"n": 3, "acc": [0.5, 1.0]}]
    >>> before = fingerprint(rows)
    >>> before == fingerprint([{"acc": [0.5, 1.0], "n": 3}])
    True
    >>> rows[0]["factor"] = 2.0
    >>> fingerprint(rows) == before
    False
    """
    h = hashlib.blake2b(digest_size=16)
    _feed(h, value, 0)
    return h.hexdigest()


def _feed(h, v: Any, depth: int) -> None:
    if depth > 50:
        raise ValueError("fingerprint: containers nested more than 50 deep")
    kind = type(v)
    h.update(kind.__name__.encode())
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes, np.generic)):
        h.update(repr(v).encode())
    elif isinstance(v, np.ndarray):
        h.update(f"{v.dtype}{v.shape}".encode())
        h.update(np.ascontiguousarray(v).tobytes() if v.dtype != object else repr(v.tolist()).encode())
    elif kind.__module__.startswith("torch") and kind.__name__ in ("Tensor", "Parameter"):
        t = v.detach().cpu().contiguous().reshape(-1)
        h.update(f"{t.dtype}{tuple(v.shape)}".encode())
        h.update(t.view(-1).view(__import__("torch").uint8).numpy().tobytes())
    elif isinstance(v, dict):
        for key in sorted(v, key=repr):
            _feed(h, key, depth + 1)
            _feed(h, v[key], depth + 1)
    elif isinstance(v, (list, tuple)):
        h.update(str(len(v)).encode())
        if all(type(item) in _PLAIN for item in v):  # a series of plain values: one repr, exact
            h.update(b"plain" + repr(v).encode())
            return
        for item in v:
            _feed(h, item, depth + 1)
    elif isinstance(v, (set, frozenset)):
        h.update(repr(sorted(map(repr, v))).encode())
    elif dataclasses.is_dataclass(v) and not isinstance(v, type):
        for f in dataclasses.fields(v):
            h.update(f.name.encode())
            _feed(h, getattr(v, f.name), depth + 1)


#: the reserved cache key under which an auditing context keeps its fingerprints
PRINTS = ("verify.audit", "fingerprints")


def remember(cache: dict, key: Any, value: Any) -> None:
    """Keep ``value``'s fingerprint for the cache entry ``key``."""
    cache.setdefault(PRINTS, {})[key] = fingerprint(value)


def changed_entries(cache: dict, only: Callable[[Any], bool] | None = None) -> list[str]:
    """The remembered cache entries whose content differs from their fingerprint, by key; each
    is then remembered as it is now, so a later call names only later changes. ``only`` limits
    the comparison to the keys it accepts (the entries a claim computed or read: an entry no
    check touched cannot have been changed by it, and fingerprinting the whole cache after every
    claim grows with the cache).

    >>> cache = {"k": [1, 2], "j": [0]}
    >>> remember(cache, "k", cache["k"]); remember(cache, "j", cache["j"])
    >>> cache["k"].append(3); cache["j"].append(1)
    >>> changed_entries(cache, only=lambda key: key == "k"), changed_entries(cache)
    (["'k'"], ["'j'"])
    """
    prints = cache.get(PRINTS, {})
    changed = []
    for key, before in prints.items():
        if only is not None and not only(key):
            continue
        now = fingerprint(cache[key])
        if now != before:
            changed.append(repr(key))
            prints[key] = now
    return changed
