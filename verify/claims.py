"""The claim registry: the unit of the toolkit (README.md#kinds-of-claim-controls-and-verdicts-over-seeds).

A :class:`Claim` is one checkable consequence of one theorem, construction or experiment. Its
``check(params, ctx)`` measures something and returns an :class:`Outcome`; nothing is
hard-coded. Area modules ``verify/<area>.py`` call :func:`register` at import time;
:func:`load_all` imports every area module that exists.

Claims that need the same trained model or sweep share it through :meth:`Context.shared`,
a cache keyed by its parameters and seed, so a model is trained once per run.

Every claim can fail (README.md, "Kinds of claim"). A claim has a *kind*:

- ``empirical``: a measurement against a prediction. It declares at least one :class:`Control`:
  the same check, with the same criterion, run where the statement must NOT hold (the model at
  initialisation, shuffled inputs, the hypothesis dropped, a competing law). A control whose
  criterion passes makes the claim *vacuous*.
- ``identity``: exact agreement of two computations that share no code; ``independence`` says
  why the two sides are independent.
- ``must_fail``: a guarantee breaks when a hypothesis is dropped. Its controls are the other side
  of the bracket: just across the boundary the guarantee holds, so the demonstration's criterion
  ("it breaks") must fail there.

``seed_rule`` states how a statistical verdict is reached over seeds (every seed, k of n, an
interval clearing a threshold); ``verify run --seed S`` changes the base seed of every rule.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import importlib
import inspect
import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import numpy as np

from constructions.seeding import rng_for, torch_generator  # noqa: F401  (the one place seeds become streams)
from theory.registry import AREAS, PROVENANCES, Registry  # noqa: F401  (one list for every registry)
from verify.audit import changed_entries, remember
from verify.results import jsonable  # noqa: F401  (lives with the results code; re-exported)


@dataclass(frozen=True)
class Outcome:
    """What one check found.

    predicted: what the theory says (a number, or a short string such as "acc = 1.0").
    measured: what was measured (a number, or a short string / small dict).
    passed: whether the claim's stated inequality held on this measurement.
    details: JSON-able series used by the report and the figures (lists, not arrays).
    skipped: a reason string when the claim could not run here (e.g. no weights); a skip is
      never a pass (``passed`` is then False and the runner reports "skipped").
    dtype: the dtype the measurement actually ran in, when it is not the run's (e.g. a
      pretrained language model loaded in float32 during a float64 run); the record's ``dtype``
      is then this one and ``context_dtype`` keeps the run's.
    inconclusive: when the measurement's interval straddles the criterion, why and the budget
      that would decide it (``passed`` is then False and the runner reports "inconclusive").
    resolution: what a pass rules out (:mod:`verify.criteria`): the rule, a number, whether it
      is coarse, a text.
    """

    predicted: Any
    measured: Any
    passed: bool
    details: Mapping[str, Any] = field(default_factory=dict)
    skipped: str | None = None
    dtype: str | None = None
    inconclusive: str | None = None
    resolution: Mapping[str, Any] | None = None

    def __post_init__(self):
        if self.inconclusive is not None and self.passed:
            raise ValueError("an inconclusive outcome cannot also be passed")

    @classmethod
    def judged(cls, judgement, details: Mapping[str, Any] | None = None, **extra) -> "Outcome":
        """The outcome of a criterion object's :class:`verify.criteria.Judgement`: its predicted
        text, measurement, verdict, resolution and (when inconclusive) the deciding budget.
        ``extra`` adds fields (``dtype``).

        >>> from verify.criteria import Threshold
        >>> out = Outcome.judged(Threshold("accuracy", 0.9, ">=", "convention").judge([0.85, 0.95], seeds=3))
        >>> out.passed, out.inconclusive.startswith("accuracy >= 0.9")
        (False, True)
        """
        return cls(
            predicted=dict(judgement.predicted),
            measured=dict(judgement.measured),
            passed=judgement.passed,
            details=dict(details or {}),
            inconclusive=judgement.inconclusive,
            resolution={
                **dict(judgement.resolution),
                **({"budget": judgement.budget} if judgement.budget else {}),
            },
            **extra,
        )


def as_outcome(found) -> Outcome:
    """The outcome of what a check returned: an :class:`Outcome` as it is (a check that must say
    skipped, dtype or inconclusive by hand), a :class:`verify.criteria.Judgement`, or a pair
    ``(judgement, details)`` assembled by :meth:`Outcome.judged`. Anything else is a TypeError.

    >>> from verify.criteria import Threshold
    >>> j = Threshold("accuracy", 0.9, ">=", "convention").judge([0.95, 0.97], seeds=3)
    >>> out = as_outcome((j, {"accuracy": [0.95, 0.97]}))
    >>> out.passed, out.details["accuracy"]
    (True, [0.95, 0.97])
    >>> as_outcome(0.5)
    Traceback (most recent call last):
    ...
    TypeError: a check returns an Outcome, a Judgement or (Judgement, details), not float
    """
    from verify.criteria_base import Judgement

    if isinstance(found, Outcome):
        return found
    if isinstance(found, Judgement):
        return Outcome.judged(found)
    if isinstance(found, tuple) and len(found) == 2 and isinstance(found[0], Judgement):
        return Outcome.judged(found[0], found[1])
    raise TypeError(
        f"a check returns an Outcome, a Judgement or (Judgement, details), not {type(found).__name__}"
    )


KINDS = ("empirical", "identity", "must_fail")


@dataclass(frozen=True)
class Control:
    """A setting where the claim's criterion must fail (README.md, "Kinds of claim").

    name: short id ("init", "shuffled_codes", "below_bound", "law_cuberoot", "across_boundary").
    params: overrides merged into the claim's parameters at the running scale: a mapping, or a
      callable ``params -> mapping`` when the override depends on the scale's values (e.g. one
      dimension below the bound).
    why: one sentence: what the control removes and why the criterion must fail on it.
    """

    name: str
    params: Mapping[str, Any] | Callable[[Mapping[str, Any]], Mapping[str, Any]]
    why: str

    def __post_init__(self):
        if not self.name or not self.why:
            raise ValueError("a control needs a name and a reason (why)")

    def apply(self, params: Mapping[str, Any]) -> dict:
        override = self.params(dict(params)) if callable(self.params) else self.params
        unknown = set(override) - set(params)
        if unknown:  # a control changes the claim's own parameters, nothing a check must know of
            raise ValueError(
                f"control {self.name!r} overrides unknown parameters {sorted(unknown)}; "
                f"the claim's parameters are {sorted(params)}"
            )
        return {**dict(params), **dict(override)}


def choice(params: Mapping[str, Any], key: str, allowed: tuple) -> Any:
    """``params[key]``, checked to be one of ``allowed``: the claim's own setting first, then the
    values its controls override it with. A ValueError names the parameter and the choices.

    >>> choice({"law": "F1"}, "law", ("measured", "F1"))
    'F1'
    >>> choice({"law": "F2"}, "law", ("measured", "F1"))
    Traceback (most recent call last):
    ...
    ValueError: parameter law must be one of ('measured', 'F1'), got 'F2'
    """
    value = params[key]
    if value not in allowed:
        raise ValueError(f"parameter {key} must be one of {allowed!r}, got {value!r}")
    return value


@dataclass(frozen=True)
class Claim:
    id: str
    source: str
    provenance: str
    statement: str
    quick: Mapping[str, Any]
    full: Mapping[str, Any]
    check: Callable[[Mapping[str, Any], "Context"], Outcome]
    #: True for the "must fail" claims: the claim's statement is that a guarantee is violated
    #: when a hypothesis is violated; details then hold the inner check's result.
    demonstrates_failure: bool = False
    needs: tuple[str, ...] = ()  # e.g. ("torch",), ("transformers",): informational
    kind: str = "empirical"
    controls: tuple[Control, ...] = ()
    seed_rule: str = ""  # how the verdict is reached over seeds ("" = one deterministic run)
    independence: str = ""  # identity claims: why the two computations share no code
    bounds: tuple[str, ...] = ()  # ids of the theory bounds this claim checks ("geometric.d0_suff")
    #: True when ``statement`` names its numbers as {parameter} fields, filled from the parameters
    #: at the running scale (:meth:`statement_at`), so the statement cannot drift from the check
    templated: bool = False

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: kind {self.kind!r} not in {KINDS}")
        if self.demonstrates_failure != (self.kind == "must_fail"):
            raise ValueError(
                f"claim {self.id}: demonstrates_failure must be True exactly for kind='must_fail'"
            )
        if self.kind == "identity" and not self.independence:
            raise ValueError(
                f"claim {self.id}: an identity claim must say why its two "
                "computations are independent (independence=...)"
            )
        names = [c.name for c in self.controls]
        if len(set(names)) != len(names):
            raise ValueError(f"claim {self.id}: control names repeat: {names}")
        if self.provenance not in PROVENANCES:
            raise ValueError(f"claim {self.id}: provenance {self.provenance!r} not in {PROVENANCES}")
        if self.id.count(".") != 2:
            raise ValueError(f"claim id {self.id!r} must read <area>.<topic>.<property>")
        if self.templated:
            for scale in ("quick", "full"):
                self.statement_at(scale)  # a field that names no parameter fails here, at import

    def statement_at(self, scale: str) -> str:
        """The statement with the numbers of ``scale``'s parameters (a templated statement), else
        the statement as written.

        >>> c = Claim("a.b.c", "src", "derived", "n = {n}", {"n": 3}, {"n": 30}, lambda p, ctx: None,
        ...           kind="identity", independence="x", templated=True)
        >>> c.statement_at("full")
        'n = 30'
        """
        if not self.templated:
            return self.statement
        params = self.params(scale)
        try:
            return self.statement.format_map(params)
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(
                f"claim {self.id}: statement field {exc} is not one of {sorted(params)}"
            ) from None

    @property
    def area(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def work_group(self) -> str:
        """The claims that share cached work and so run in one worker: the area, except that the
        language-model probes (``hopfield.lm.*``, which share the loaded models and nothing with
        the other hopfield claims) form their own group.

        >>> from verify.claims import load_all
        >>> c = load_all()
        >>> c["hopfield.lm.margin"].work_group, c["hopfield.capacity.gain"].work_group
        ('hopfield.lm', 'hopfield')
        """
        return "hopfield.lm" if self.id.startswith("hopfield.lm.") else self.area

    def params(self, scale: str) -> dict:
        if scale not in ("quick", "full"):
            raise ValueError(f"scale must be 'quick' or 'full', got {scale!r}")
        return dict(self.quick if scale == "quick" else self.full)


CLAIMS: Registry = Registry("claim")


def register(claim: Claim) -> Claim:
    return CLAIMS.add(claim.id, claim)


def claim(
    id: str,
    *,
    source: str,
    provenance: str,
    statement: str,
    quick: Mapping,
    full: Mapping | None = None,
    demonstrates_failure: bool = False,
    needs=(),
    kind: str | None = None,
    controls=(),
    seed_rule: str = "",
    independence: str = "",
    bounds=(),
    templated: bool = False,
):
    """Decorator form of :func:`register`: ``@claim("area.topic.prop", ...) def check(p, ctx)``.

    ``kind`` defaults to ``must_fail`` when ``demonstrates_failure`` is set, else ``empirical``.
    ``bounds`` names the theory bounds the claim checks (ids of ``python -m theory list``).
    """
    kind = kind or ("must_fail" if demonstrates_failure else "empirical")

    def wrap(fn):
        @functools.wraps(fn)
        def check(params, ctx) -> Outcome:  # the runner's outcome of what the check returned
            return as_outcome(fn(params, ctx))

        register(
            Claim(
                id=id,
                source=source,
                provenance=provenance,
                statement=statement,
                quick=dict(quick),
                full=dict(full if full is not None else quick),
                check=check,
                demonstrates_failure=kind == "must_fail",
                needs=tuple(needs),
                kind=kind,
                controls=tuple(controls),
                seed_rule=seed_rule,
                independence=independence,
                bounds=tuple(bounds),
                templated=templated,
            )
        )
        return fn

    return wrap


def load_all() -> dict[str, Claim]:
    from theory.registry import area_modules

    for name in area_modules("verify"):
        importlib.import_module(name)
    return CLAIMS


def missing_controls(claim: Claim) -> str | None:
    """Why a claim cannot show that it can fail, or None: empirical and must_fail claims need a
    control (a must_fail claim's control is the passing side of its bracket)."""
    if claim.kind in ("empirical", "must_fail") and not claim.controls:
        side = "the other side of its bracket" if claim.kind == "must_fail" else "a control"
        return f"{claim.kind} claim without {side}"
    return None


def select(patterns) -> list[Claim]:
    """Claims whose id matches any pattern (exact id or fnmatch glob), in registry order."""
    claims = load_all()
    if not patterns:
        return list(claims.values())
    chosen = []
    for pattern in patterns:
        hits = [c for cid, c in claims.items() if fnmatch.fnmatchcase(cid, pattern)]
        if not hits:
            raise ValueError(f"no claim matches {pattern!r}; `python -m verify list` shows the ids")
        chosen.extend(h for h in hits if h not in chosen)
    return chosen


@dataclass
class Context:
    """Run context handed to every check: seed, device, dtype, scale and the shared cache.

    dtype is ``float64`` on CPU (exact theory checks) and ``float32`` on CUDA, unless overridden.
    """

    seed: int = 0
    device: str = "cpu"
    dtype: str = "float64"
    scale: str = "quick"
    cache: dict = field(default_factory=dict)
    progress: bool = False
    #: fingerprint every shared result, so :meth:`mutated_shared` can name the ones a check changed
    audit: bool = False
    #: seconds spent computing shared results (:meth:`shared` cache misses, outermost calls only)
    #: since this context was made: the runner's profile splits a claim's time with it.
    shared_seconds: float = field(default=0.0, compare=False)
    _shared_depth: int = field(default=0, compare=False, repr=False)
    #: digests of the shared results computed or read since the runner last cleared it: the
    #: runner stores them per claim (``profile["shared_keys"]``), so the scheduler keeps the
    #: claims that share a result in one worker (:func:`verify.parallel.work_units`)
    touched: set = field(default_factory=set, compare=False, repr=False)
    #: when a Counter: the outermost shared results read while it is set, counted by (function,
    #: digest); the runner sets one per check (the claim's, then each control's) and stores them
    #: in ``profile["reads"]`` (tests/test_controls_differ.py reads them)
    read_log: Counter | None = field(default=None, compare=False, repr=False)
    _digests: dict = field(default_factory=dict, compare=False, repr=False)

    def rng(self, *salt: int | str) -> np.random.Generator:
        """A fresh numpy Generator from (seed, *salt) (:func:`constructions.seeding.rng_for`;
        salts named in ``constructions.seeding.SALTS`` or integers): no global state."""
        return rng_for(self.seed, *salt)

    def seeds(self, count: int) -> list[int]:
        """The K seeds of a fail-rate claim: seed, seed+1, ..., seed+K-1 (0..K-1 by default)."""
        return [int(self.seed) + i for i in range(int(count))]

    def torch_dtype(self):
        import torch

        return {"float64": torch.float64, "float32": torch.float32}[self.dtype]

    def torch_generator(self, seed: int | None = None):
        return torch_generator(int(self.seed if seed is None else seed))

    def shared(self, key: tuple, compute: Callable[[], Any]) -> Any:
        """Compute once per run: ``key`` must include every parameter and the seed."""
        full_key = (key, self.device, self.dtype)
        if full_key not in self._digests:
            self._digests[full_key] = shared_digest(key)
        self.touched.add(self._digests[full_key])
        if self.read_log is not None and self._shared_depth == 0:
            self.read_log[(str(key[0]) if key else "", self._digests[full_key])] += 1
        if full_key not in self.cache:
            start = time.perf_counter()
            self._shared_depth += 1
            try:
                self.cache[full_key] = compute()
                if self.audit:
                    remember(self.cache, full_key, self.cache[full_key])
            finally:
                self._shared_depth -= 1
                if self._shared_depth == 0:  # nested computes are inside the outer one's time
                    self.shared_seconds += time.perf_counter() - start
        return self.cache[full_key]

    def mutated_shared(self) -> list[str]:
        """Shared results whose content changed since they were computed or last asked about,
        among those computed or read since :attr:`touched` was last cleared (the runner clears it
        before each claim; an auditing context only: :mod:`verify.audit`)."""
        return changed_entries(self.cache, only=lambda key: self._digests.get(key) in self.touched)


def shared_digest(key: tuple) -> str:
    """A short digest of a shared result's key (its function, arguments and seed), the same in
    every process: how records name the shared results a claim used.

    >>> shared_digest(("f", 1, 2.0)) == shared_digest(("f", 1, 2.0)), len(shared_digest(("f",)))
    (True, 12)
    """
    import hashlib

    return hashlib.sha1(repr(key).encode()).hexdigest()[:12]


def _frozen(value, name: str):
    """A hashable, canonical form of a shared measurement's argument (plain values only)."""
    if isinstance(value, (str, bool, int, float, type(None))):
        return value
    if isinstance(value, (np.integer, np.floating, np.bool_)):
        return value.item()
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v, name) for v in value)
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _frozen(v, name)) for k, v in value.items()))
    if isinstance(value, np.ndarray):
        return ("array", value.shape, str(value.dtype), value.tobytes())
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and value.__dataclass_params__.frozen:
        fields = ((f.name, _frozen(getattr(value, f.name), name)) for f in dataclasses.fields(value))
        return (type(value).__qualname__, tuple(fields))
    raise TypeError(
        f"a shared measurement takes plain values (numbers, strings, lists, arrays, frozen dataclasses "
        f"of them); argument "
        f"{name!r} is a {type(value).__name__}"
    )


def shared(fn: Callable) -> Callable:
    """Memoise a measurement ``fn(ctx, ...)`` for the run: computed once per qualified name, bound
    arguments (defaults applied), seed, device and dtype (:meth:`Context.shared`). The key is made
    from the code, so it cannot miss a parameter; the arguments must be plain values or frozen
    dataclasses of them (a model's settings passed as one argument).

    >>> calls = []
    >>> @shared
    ... def square(ctx, x, power=2):
    ...     calls.append(x)
    ...     return x ** power
    >>> ctx = Context()
    >>> square(ctx, 3), square(ctx, x=3), square(ctx, 3, power=2), square(Context(seed=1), 3)
    (9, 9, 9, 9)
    >>> calls
    [3, 3]
    """
    signature = inspect.signature(fn)
    name = f"{fn.__module__}.{fn.__qualname__}"

    @functools.wraps(fn)
    def cached(ctx, *args, **kwargs):
        bound = signature.bind(ctx, *args, **kwargs)
        bound.apply_defaults()
        key = tuple((k, _frozen(v, k)) for k, v in list(bound.arguments.items())[1:])
        return ctx.shared((name, key, ctx.seed), lambda: fn(ctx, *args, **kwargs))

    return cached


def check_json(value) -> None:
    json.dumps(jsonable(value))
