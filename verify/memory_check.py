"""One-call check of an associative memory against the modern Hopfield bounds (docs/testing.md),
re-exported by :mod:`verify.testing` as :func:`check_associative_memory`.

An associative memory here is any map from queries to retrieved states: a Python callable or a
``torch.nn.Module`` that stores N patterns x_1 ... x_N in R^d and, given a batch of queries,
returns one retrieved state per query. The theory (docs/hopfield.md#statements-and-proof-sketches)
is about the modern Hopfield update f(xi) = X softmax(beta X^T xi) [reference, Ramsauer et al.
2020] and says, for patterns of norm at most M and separations
Delta_i = x_i^T x_i - max_{j != i} x_i^T x_j:

- R1 [reference] (``hopfield.well_separated``, ``hopfield.sphere_radius``): if
  Delta_i >= 2/(beta N) + log(2 (N-1) N beta M^2)/beta, the update maps the sphere of radius
  r = 1/(beta N M) around x_i into itself: a query within r of x_i is retrieved within r of it;
- D1 [derived] (``hopfield.ungated_error``): for a query at distance r_i of x_i,
  ||f(xi) - x_i|| <= 2 M min(1, (N-1) exp(-beta (Delta_i - 2 M r_i)));
- R4 [reference] (``hopfield.capacity``): N patterns drawn uniformly on the sphere of radius
  M = K sqrt(d-1) are all well separated with probability 1 - p when
  N <= sqrt(p) c^((d-1)/4), provided c >= (2/sqrt p)^(4/(d-1)).

:func:`check_associative_memory` queries the memory once per pattern from a perturbed query at
R1's radius (or from the user's queries), measures how far each retrieved state lands from its
pattern, computes every Delta_i at once (:func:`theory.hopfield.derived.separations`), checks
every hypothesis of the three bounds on the given patterns and beta (the memory computing the
softmax update included, by comparing it with X softmax(beta X^T xi)), and compares what the
memory does with what each bound predicts. It returns an :class:`AssociativeMemoryReport`.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["AssociativeMemoryReport", "BoundCheck", "Hypothesis", "check_associative_memory"]

#: The layouts of patterns and queries: "rows" is (N, d), one pattern per row (the batch-first
#: layout of torch); "columns" is (d, N), one pattern per column (the X of docs/hopfield.md).
LAYOUTS = ("rows", "columns")

#: Query-pattern pairs the reference update X softmax(beta X^T xi) is computed for at a time (so
#: its (N, batch) softmax stays near 32 MiB of float64 whatever N).
REFERENCE_ELEMENTS = 2**22


@dataclass(frozen=True)
class Hypothesis:
    """One hypothesis of a bound, checked on the given patterns and beta: ``statement`` (what the
    bound assumes), ``holds`` and ``detail`` (the numbers it was decided on)."""

    statement: str
    holds: bool
    detail: str

    def __str__(self) -> str:
        return f"[{'holds' if self.holds else 'FAILS'}] {self.statement}: {self.detail}"


@dataclass(frozen=True)
class BoundCheck:
    """One bound of docs/hopfield.md against the memory: its ``label`` (R1, D1, R4), registered
    ``names`` (``python -m theory list``), ``provenance``, ``statement``, the ``hypotheses`` it
    needs, checked, what it ``prediction`` says about this memory, what was ``observed``, and
    ``holds``: whether the observation agrees with the prediction where the hypotheses hold
    (None where the bound predicts nothing: a hypothesis fails for every pattern, or R4's count is
    below N)."""

    label: str
    names: tuple[str, ...]
    provenance: str
    statement: str
    hypotheses: tuple[Hypothesis, ...]
    prediction: str
    observed: str
    holds: bool | None

    @property
    def applies(self) -> bool:
        """True when every hypothesis holds."""
        return all(h.holds for h in self.hypotheses)

    @property
    def failed_hypotheses(self) -> tuple[Hypothesis, ...]:
        """The hypotheses that do not hold."""
        return tuple(h for h in self.hypotheses if not h.holds)

    def __str__(self) -> str:
        verdict = {True: "holds", False: "CONTRADICTED", None: "predicts nothing here"}[self.holds]
        head = f"{self.label} [{self.provenance}] ({', '.join(self.names)}): " + (
            "applies" if self.applies else "does not apply"
        )
        lines = [f"{head}; {verdict}", f"  {self.statement}"]
        lines += [f"  {h}" for h in self.hypotheses]
        lines += [f"  predicted: {self.prediction}", f"  observed: {self.observed}"]
        return "\n".join(lines)


@dataclass(frozen=True, eq=False)
class AssociativeMemoryReport:
    """What :func:`check_associative_memory` found (module docstring).

    Sizes: ``n_patterns`` N, ``dim`` d, ``beta``, ``layout``, ``norm_bound`` M (the largest
    pattern norm), ``on_sphere`` (every norm within ``sphere_rtol`` of M). R1: ``radius`` =
    1/(beta N M) and ``threshold``, the separation R1 needs. Per pattern (float64 or bool arrays
    (N,), read-only, in pattern order): ``separations`` Delta_i, ``well_separated``
    (Delta_i >= threshold), ``query_distances`` ||xi_i - x_i||, ``errors`` ||memory(xi_i) - x_i||,
    ``retrieved`` (error <= radius + atol) and ``d1_bounds`` (D1 at the query's distance).
    ``update_deviation``: the largest ||memory(xi_i) - X softmax(beta X^T xi_i)||. ``r4_capacity``:
    R4's count sqrt(p) c^((d-1)/4) (None where R4's constant hypothesis fails or d < 2).
    ``bounds``: the :class:`BoundCheck` of R1, D1 and R4. ``problems``: one line per pattern
    group not retrieved and per bound the memory contradicts (empty when all is well). ``atol``:
    the absolute tolerance of the comparisons.
    """

    n_patterns: int
    dim: int
    beta: float
    layout: str
    norm_bound: float
    on_sphere: bool
    radius: float
    threshold: float
    separations: np.ndarray
    well_separated: np.ndarray
    query_distances: np.ndarray
    errors: np.ndarray
    retrieved: np.ndarray
    d1_bounds: np.ndarray
    update_deviation: float
    r4_capacity: float | None
    bounds: tuple[BoundCheck, ...]
    problems: tuple[str, ...]
    atol: float

    @property
    def ok(self) -> bool:
        """True when every pattern is retrieved and no bound is contradicted."""
        return not self.problems

    @property
    def n_retrieved(self) -> int:
        """The number of patterns retrieved within R1's radius."""
        return int(np.count_nonzero(self.retrieved))

    @property
    def all_retrieved(self) -> bool:
        """True when every pattern is retrieved within R1's radius."""
        return self.n_retrieved == self.n_patterns

    def bound(self, label: str) -> BoundCheck:
        """The check of one bound by its label ("R1", "D1", "R4") or registered name.

        >>> X = 2 * np.eye(4)  # four orthogonal patterns of norm 2, one per row
        >>> def memory(Q, beta=4.0):
        ...     p = np.exp(beta * Q @ X.T)
        ...     return (p / p.sum(axis=1, keepdims=True)) @ X
        >>> report = check_associative_memory(memory, X, layout="rows", beta=4.0)
        >>> report.bound("R1").holds, report.bound("hopfield.capacity").applies
        (True, False)
        >>> [h.statement for h in report.bound("R4").failed_hypotheses]
        ['c = b / W0(exp(a + ln b)) >= (2/sqrt p)^(4/(d-1))']
        """
        for b in self.bounds:
            if label in (b.label, *b.names):
                return b
        known = ", ".join(b.label for b in self.bounds)
        raise KeyError(f"no bound {label!r} in the report (labels {known})")

    def assert_retrieves(self, show: int = 3) -> None:
        """Raise AssertionError unless every pattern is retrieved within R1's radius; the message
        names the first ``show`` failing patterns (error, radius, Delta_i, D1's bound) and the
        hypotheses of the bounds that fail, which say why the theory does not guarantee them.

        >>> X = 2 * np.eye(4)
        >>> def memory(Q, beta=0.5):
        ...     p = np.exp(beta * Q @ X.T)
        ...     return (p / p.sum(axis=1, keepdims=True)) @ X
        >>> report = check_associative_memory(memory, X, layout="rows", beta=0.5, raise_on_failure=False)
        >>> report.assert_retrieves(show=1)
        Traceback (most recent call last):
        ...
        AssertionError: 4 of 4 patterns are not retrieved within R1's radius 0.25 (first: pattern 0: error 0.685589, Delta_i 4, D1 bound 2.67756; and 3 more); hypotheses that fail: every pattern well separated: ...
        """
        if self.all_retrieved:
            return
        failed = [h for b in self.bounds for h in b.failed_hypotheses]
        why = ""
        if failed:
            seen: dict[str, Hypothesis] = {h.statement: h for h in failed}
            why = "; hypotheses that fail: " + "; ".join(f"{h.statement} ({h.detail})" for h in seen.values())
        line = _not_retrieved(
            self.retrieved, self.errors, self.separations, self.d1_bounds, self.radius, show
        )
        raise AssertionError(line + why)

    def __str__(self) -> str:
        lines = [
            f"associative memory: N={self.n_patterns} patterns in d={self.dim} (layout={self.layout!r}), "
            f"beta={_fmt(self.beta)}, M={_fmt(self.norm_bound)}"
            + (" (every pattern on the sphere of radius M)" if self.on_sphere else ""),
            f"retrieved: {self.n_retrieved} of {self.n_patterns} patterns within R1's radius "
            f"{_fmt(self.radius)} (queries at distance {_range(self.query_distances)}; errors "
            f"{_range(self.errors)})",
            f"separation: Delta_i {_range(self.separations)}; R1 needs {_fmt(self.threshold)}: "
            f"{int(np.count_nonzero(self.well_separated))} of {self.n_patterns} well separated",
            f"update: memory(xi) - X softmax(beta X^T xi) at most {_fmt(self.update_deviation)} "
            f"(atol {_fmt(self.atol)})",
        ]
        lines += [str(b) for b in self.bounds]
        lines.append("problems: " + ("none" if not self.problems else "; ".join(self.problems)))
        return "\n".join(lines)


def _fmt(x: float) -> str:
    return f"{float(x):.6g}"


def _range(values: np.ndarray) -> str:
    lo, hi = float(np.min(values)), float(np.max(values))
    return _fmt(lo) if lo == hi else f"{_fmt(lo)} to {_fmt(hi)}"


def _not_retrieved(
    retrieved: np.ndarray,
    errors: np.ndarray,
    separations: np.ndarray,
    d1_bounds: np.ndarray,
    radius: float,
    show: int,
) -> str:
    """The line that names the patterns not retrieved (the first ``show`` of them)."""
    missed = np.flatnonzero(~retrieved)
    first = "; ".join(
        f"pattern {i}: error {_fmt(errors[i])}, Delta_i {_fmt(separations[i])}, D1 bound {_fmt(d1_bounds[i])}"
        for i in missed[:show]
    )
    more = f"; and {len(missed) - show} more" if len(missed) > show else ""
    return (
        f"{len(missed)} of {len(retrieved)} patterns are not retrieved within R1's radius "
        f"{_fmt(radius)} (first: {first}{more})"
    )


# --- arguments -------------------------------------------------------------------------------
def _torch() -> Any:
    """The torch module where it is imported already (a torch memory implies it is), else None."""
    return sys.modules.get("torch")


def _is_tensor(x: Any) -> bool:
    torch = _torch()
    return torch is not None and isinstance(x, torch.Tensor)


def _to_numpy(x: Any, name: str) -> np.ndarray:
    if _is_tensor(x):
        x = x.detach().to("cpu").double().numpy()
    try:
        return np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{name} must be an array of numbers (numpy or torch), got {type(x).__name__}"
        ) from exc


def _as_columns(array: np.ndarray, layout: str, name: str) -> np.ndarray:
    """``array`` in the given layout as (d, N) columns; a ValueError naming the layout when it is
    not 2-D."""
    if array.ndim != 2:
        shape = "(N, d), one per row" if layout == "rows" else "(d, N), one per column"
        raise ValueError(f"{name} must be a 2-D array {shape} (layout={layout!r}); got shape {array.shape}")
    return array.T if layout == "rows" else array


def _from_columns(columns: np.ndarray, layout: str) -> np.ndarray:
    return np.ascontiguousarray(columns.T if layout == "rows" else columns)


def _beta_of(memory: Any, beta: Any) -> float:
    from theory.validate import require_real

    if beta is None:
        beta = getattr(memory, "beta", None)
        if beta is None:
            raise TypeError(
                "beta= is required: the memory's inverse temperature (the beta of the theory's update "
                f"X softmax(beta X^T xi)); {type(memory).__name__} has no beta attribute to read it from"
            )
        if _is_tensor(beta):
            beta = float(beta.detach().cpu())
    b = require_real("beta", beta, 0, low_open=True)
    if not math.isfinite(b):
        raise ValueError(f"beta={beta!r} must be finite (hypothesis beta > 0 of R1, D1 and R4)")
    return b


def _tensor_kind(memory: Any, patterns: Any) -> tuple[Any, Any] | None:
    """(dtype, device) of the torch tensors the memory gets, or None for numpy arrays: a tensor
    of ``patterns`` gives its own; a torch module its first parameter's or buffer's (the default
    dtype on the cpu without any)."""
    torch = _torch()
    if torch is None:
        return None
    if isinstance(patterns, torch.Tensor):
        dtype = patterns.dtype if patterns.is_floating_point() else torch.get_default_dtype()
        return dtype, patterns.device
    if isinstance(memory, torch.nn.Module):
        for t in (*memory.parameters(), *memory.buffers()):
            if t.is_floating_point():
                return t.dtype, t.device
        return torch.get_default_dtype(), torch.device("cpu")
    return None


def _call_memory(
    memory: Any, queries: np.ndarray, kind: tuple[Any, Any] | None, layout: str
) -> tuple[np.ndarray, float]:
    """The memory's states for ``queries`` (already in ``layout``) as float64, and the machine
    epsilon of what it returned."""
    torch = _torch()
    other = "columns" if layout == "rows" else "rows"
    if kind is not None:
        q = torch.as_tensor(queries).to(dtype=kind[0], device=kind[1])
        with torch.no_grad():
            out = _guarded(memory, q, layout, other)
    else:
        out = _guarded(memory, queries, layout, other)
    if isinstance(out, (tuple, list)) and not isinstance(out, np.ndarray):
        raise TypeError(
            f"memory must return the retrieved states as one array (shape {queries.shape}), got a "
            f"{type(out).__name__}; wrap it to return the states alone"
        )
    if _is_tensor(out):
        eps = (
            float(torch.finfo(out.dtype).eps) if out.is_floating_point() else float(np.finfo(np.float64).eps)
        )
    else:
        dtype = np.asarray(out).dtype
        eps = (
            float(np.finfo(dtype).eps)
            if np.issubdtype(dtype, np.floating)
            else float(np.finfo(np.float64).eps)
        )
    states = _to_numpy(out, "the memory's output")
    if states.shape != queries.shape:
        hint = ""
        if states.shape == queries.shape[::-1]:
            hint = f"; it returned the transpose: if the memory works on {other}, pass layout={other!r}"
        raise ValueError(
            f"memory returned shape {states.shape} for queries of shape {queries.shape} "
            f"(layout={layout!r}: one retrieved state per query, in the queries' layout){hint}"
        )
    if not np.all(np.isfinite(states)):
        raise ValueError("memory returned NaN or inf for some queries")
    return states, eps


def _guarded(memory: Any, queries: Any, layout: str, other: str) -> Any:
    """memory(queries), with a failure inside it (shapes that cannot be multiplied, an argument of
    another type) re-raised naming the layout and the query shape."""
    shape = tuple(queries.shape)
    try:
        return memory(queries)
    except TypeError as exc:
        raise TypeError(
            f"memory failed on queries of type {type(queries).__name__} and shape {shape} "
            f"(layout={layout!r}): {exc}. A torch module gets torch tensors, any other callable numpy "
            "arrays unless the patterns are a torch tensor"
        ) from exc
    except (RuntimeError, ValueError, IndexError) as exc:
        raise ValueError(
            f"memory failed on queries of shape {shape} (layout={layout!r}: "
            + ("(N, d), one query per row" if layout == "rows" else "(d, N), one query per column")
            + f"): {exc}. If the memory works on {other}, pass layout={other!r}"
        ) from exc


def _reference_update(X: np.ndarray, Q: np.ndarray, beta: float) -> np.ndarray:
    """X softmax(beta X^T xi) for every column xi of Q (d, B), in float64, a block of queries at a
    time (:data:`REFERENCE_ELEMENTS`)."""
    from scipy.special import softmax

    n, b = X.shape[1], Q.shape[1]
    out = np.empty_like(Q)
    step = max(1, REFERENCE_ELEMENTS // n)
    for start in range(0, b, step):
        block = slice(start, min(b, start + step))
        out[:, block] = X @ softmax(beta * (X.T @ Q[:, block]), axis=0)
    return out


def _read_only(*arrays: np.ndarray) -> None:
    for a in arrays:
        a.setflags(write=False)


#: What an R4 contradiction may also mean (its hypothesis that the check cannot test).
_R4_CAVEAT = (
    " (R4 holds with probability 1 - p for patterns drawn uniformly on the sphere, which the check "
    "cannot see: the patterns may not be such a draw)"
)


# --- the bounds ------------------------------------------------------------------------------
def _r1(
    update: Hypothesis,
    in_radius: Hypothesis,
    separated: Hypothesis,
    applicable: np.ndarray,
    retrieved: np.ndarray,
    radius: float,
) -> BoundCheck:
    """R1 [reference]: a well-separated pattern's query within the radius is retrieved within it;
    judged on the patterns where Delta_i and the query distance meet R1's hypotheses."""
    k = int(applicable.sum())
    got = int(retrieved[applicable].sum())
    holds = None if not update.holds or k == 0 else got == k
    return BoundCheck(
        label="R1",
        names=("hopfield.well_separated", "hopfield.sphere_radius"),
        provenance="reference",
        statement="Delta_i >= 2/(beta N) + log(2 (N-1) N beta M^2)/beta: the update maps the sphere "
        "of radius 1/(beta N M) around x_i into itself (Ramsauer Thm 4)",
        hypotheses=(update, in_radius, separated),
        prediction=f"the {k} well-separated patterns whose query lies within {_fmt(radius)} are "
        f"retrieved within {_fmt(radius)}",
        observed=f"{got} of those {k} retrieved; {int(retrieved.sum())} of all {len(retrieved)}",
        holds=holds,
    )


def _d1(update: Hypothesis, errors: np.ndarray, d1: np.ndarray, radius: float, tol: float) -> BoundCheck:
    """D1 [derived]: every error within 2 M min(1, (N-1) exp(-beta (Delta_i - 2 M r_i)))."""
    n = len(errors)
    within = errors <= d1 + tol
    guaranteed = int(np.count_nonzero(d1 <= radius))
    observed = f"{int(within.sum())} of {n} errors within their bound (+ atol); errors {_range(errors)}"
    if not within.all():
        worst = int(np.argmax(errors - d1))
        observed += (
            f"; largest excess at pattern {worst}: error {_fmt(errors[worst])} > bound {_fmt(d1[worst])}"
        )
    return BoundCheck(
        label="D1",
        names=("hopfield.ungated_error",),
        provenance="derived",
        statement="||f(xi) - x_i|| <= 2 M min(1, (N-1) exp(-beta (Delta_i - 2 M r))), r = ||xi - x_i|| "
        "(uniform-gap form)",
        hypotheses=(update,),
        prediction=f"errors at most their bound, bounds {_range(d1)}; {guaranteed} of {n} bounds within "
        f"R1's radius {_fmt(radius)} (retrieval guaranteed)",
        observed=observed,
        holds=None if not update.holds else bool(within.all()),
    )


def _r4(
    update: Hypothesis,
    in_radius: Hypothesis,
    norms: np.ndarray,
    on_sphere: bool,
    dim: int,
    beta: float,
    fail_prob: float,
    sphere_rtol: float,
    retrieved: np.ndarray,
    well: np.ndarray,
) -> tuple[BoundCheck, float | None]:
    """R4 [reference]: with probability 1 - p, N <= sqrt(p) c^((d-1)/4) patterns on the sphere of
    radius K sqrt(d-1) are all well separated (so retrieved, by R1). (the check, R4's count or
    None where its constant hypothesis fails or d < 2)."""
    from theory.hopfield.reference import capacity, capacity_constants

    n, m = len(norms), float(norms.max())
    hyps = [
        update,
        in_radius,
        Hypothesis(
            "patterns on a sphere of radius M = K sqrt(d-1) (their uniform draw is assumed, not checked)",
            on_sphere,
            f"norms {_range(norms)}, relative tolerance {_fmt(sphere_rtol)}",
        ),
        Hypothesis("dimension d >= 2", dim >= 2, f"d = {dim}"),
    ]
    count = None
    if dim >= 2:
        k = m / math.sqrt(dim - 1)
        const = capacity_constants(beta, k, dim, fail_prob)
        c_ok = bool(const["c"] >= const["threshold"])
        hyps.append(
            Hypothesis(
                "c = b / W0(exp(a + ln b)) >= (2/sqrt p)^(4/(d-1))",
                c_ok,
                f"c = {_fmt(const['c'])}, needed {_fmt(const['threshold'])} at beta={_fmt(beta)}, "
                f"K = M/sqrt(d-1) = {_fmt(k)}, d={dim}, p={_fmt(fail_prob)}",
            )
        )
        if c_ok:
            count = capacity(beta, k, dim, fail_prob)
    got, n_well = int(retrieved.sum()), int(well.sum())
    observed = f"{got} of {n} retrieved, {n_well} of {n} well separated"
    if count is None:
        prediction = "nothing (c is below R4's threshold, or d < 2)"
    elif n <= count:
        prediction = (
            f"N = {n} <= sqrt(p) c^((d-1)/4) = {_fmt(count)}: with probability >= 1 - p = "
            f"{_fmt(1 - fail_prob)} every pattern is well separated and retrieved"
        )
    else:
        prediction = f"R4 guarantees {_fmt(count)} patterns, fewer than N = {n}: nothing about these N"
    if count is not None:
        observed += f"; N / R4's count = {_fmt(n / count)}"
    applies = all(h.holds for h in hyps)
    holds = None if count is None or not applies or n > count else got == n and n_well == n
    check = BoundCheck(
        label="R4",
        names=("hopfield.capacity",),
        provenance="reference",
        statement="with probability 1 - p, N >= sqrt(p) c^((d-1)/4) patterns uniform on the sphere of "
        "radius K sqrt(d-1) are storable (Ramsauer Thm 3)",
        hypotheses=tuple(hyps),
        prediction=prediction,
        observed=observed,
        holds=holds,
    )
    return check, count


# --- the check -------------------------------------------------------------------------------
def check_associative_memory(
    memory: Callable[[Any], Any],
    patterns: Any,
    *,
    layout: str,
    beta: float | None = None,
    queries: Any = None,
    query_radius: float | None = None,
    seed: int = 0,
    fail_prob: float = 0.001,
    atol: float | None = None,
    sphere_rtol: float = 1e-6,
    batch_size: int | None = None,
    raise_on_failure: bool = True,
    show: int = 3,
) -> AssociativeMemoryReport:
    """Check an associative memory against R1, D1 and R4 of docs/hopfield.md in one call
    (docs/testing.md) and return an :class:`AssociativeMemoryReport`.

    ``memory``: a callable or ``torch.nn.Module`` mapping a batch of queries to retrieved states of
    the same shape. ``patterns``: the N stored patterns, a numpy array or torch tensor; ``layout``
    (no default: an (N, N) array reads both ways) says how patterns, queries and states are laid
    out: "rows" (N, d), one per row, or "columns" (d, N), one per column. A torch module, or any
    callable when ``patterns`` is a tensor, gets torch tensors (the patterns' dtype and device, or
    the module's); another callable gets float64 numpy arrays. ``beta``: the memory's inverse
    temperature (default: its ``beta`` attribute).

    Queries: ``queries`` (one per pattern, in ``layout``), or by default x_i + r u_i with u_i a
    uniform unit direction drawn from ``numpy.random.Generator`` of ``seed``
    (:func:`constructions.seeding.rng_for`) and r = ``query_radius``, by default R1's radius
    1/(beta N M) [reference, ``hopfield.sphere_radius``]. The memory is called once on all of
    them, or ``batch_size`` at a time. A pattern is retrieved when its state lands within R1's
    radius (+ ``atol``) of it.

    The bounds (module docstring), each with its hypotheses checked on the patterns and beta:
    the memory computes X softmax(beta X^T xi) (within ``atol``; the hypothesis of all three),
    queries within R1's radius (R1, R4), Delta_i >= R1's threshold for each pattern
    (:func:`theory.hopfield.derived.separations`, all patterns at once), patterns on a sphere
    (norms within ``sphere_rtol`` of M, R4; their uniform draw is assumed, not checked), d >= 2 and
    R4's c >= (2/sqrt p)^(4/(d-1)) at p = ``fail_prob``. ``atol`` defaults to 16 sqrt(d) eps M with
    eps the machine epsilon of the memory's output dtype.

    A problem is a pattern not retrieved, or a bound whose hypotheses hold and whose prediction
    the memory contradicts. With ``raise_on_failure`` (the default) an AssertionError lists them;
    otherwise the report holds them (``report.problems``; ``report.assert_retrieves()`` raises
    later). An argument of the wrong type is a TypeError, a value outside its hypothesis (beta <= 0,
    shapes that disagree with ``layout``, fewer than 2 patterns) a ValueError naming it, raised
    before or as the memory is first called.

    >>> import numpy as np
    >>> from constructions.hopfield.networks import sphere_patterns
    >>> from constructions.seeding import rng_for
    >>> X = sphere_patterns(16, 32, 3 * 31**0.5, rng_for(0)).T  # (N, d): M = 3 sqrt(d - 1)
    >>> def memory(Q, beta=1.0):  # modern Hopfield retrieval, one query per row
    ...     logits = beta * Q @ X.T
    ...     p = np.exp(logits - logits.max(axis=1, keepdims=True))
    ...     return (p / p.sum(axis=1, keepdims=True)) @ X
    >>> report = check_associative_memory(memory, X, layout="rows", beta=1.0)
    >>> report.n_retrieved, report.bound("R1").applies, report.bound("R4").holds
    (16, True, True)
    >>> round(report.radius, 6), round(report.r4_capacity, 1)
    (0.003742, 205.5)
    >>> check_associative_memory(memory, X.T, layout="rows", beta=1.0)
    Traceback (most recent call last):
    ...
    ValueError: memory failed on queries of shape (32, 16) (layout='rows': (N, d), one query per row): ... If the memory works on columns, pass layout='columns'
    """
    from constructions.seeding import rng_for
    from theory.hopfield.derived import separations as all_separations
    from theory.hopfield.derived import ungated_error_bounds
    from theory.hopfield.reference import sphere_radius, well_separated_threshold
    from theory.validate import require_int, require_real

    if not callable(memory):
        raise TypeError(
            "memory must be a callable or a torch.nn.Module mapping a batch of queries to retrieved "
            f"states (docs/testing.md); got {type(memory).__name__}"
        )
    if not isinstance(layout, str) or layout not in LAYOUTS:
        raise ValueError(
            f"layout={layout!r} must be 'rows' (patterns and queries (N, d), one per row) or "
            "'columns' ((d, N), one per column)"
        )
    b = _beta_of(memory, beta)
    seed = require_int("seed", seed, 0)
    p = require_real("fail_prob", fail_prob, 0, 1, low_open=True)
    sphere_rtol = require_real("sphere_rtol", sphere_rtol, 0)
    show = require_int("show", show, 0)
    if batch_size is not None:
        batch_size = require_int("batch_size", batch_size, 1)
    if atol is not None:
        atol = require_real("atol", atol, 0)
        if not math.isfinite(atol):
            raise ValueError(f"atol={atol!r} must be finite")

    given = _to_numpy(patterns, "patterns")
    X = _as_columns(given, layout, "patterns")
    d, n = X.shape
    if n < 2 or d < 1:
        raise ValueError(
            f"patterns of shape {given.shape} hold N={n} patterns in d={d} "
            f"(layout={layout!r}); the bounds need N >= 2 and d >= 1"
        )
    if not np.all(np.isfinite(X)):
        raise ValueError("patterns contain NaN or inf")
    norms = np.linalg.norm(X, axis=0)
    m = float(norms.max())
    if m == 0.0:
        raise ValueError("every pattern is zero: the bounds need M = max ||x_i|| > 0")
    radius = sphere_radius(b, n, m)
    threshold = well_separated_threshold(b, n, m)

    # the queries, in the memory's layout and precision
    if queries is None:
        r = radius if query_radius is None else require_real("query_radius", query_radius, 0)
        if not math.isfinite(r):
            raise ValueError(f"query_radius={query_radius!r} must be finite")
        z = rng_for(seed).standard_normal((n, d))
        Q = X + r * (z / np.linalg.norm(z, axis=1, keepdims=True)).T
    else:
        if query_radius is not None:
            raise ValueError("give queries= or query_radius=, not both (query_radius sets the drawn queries)")
        q = _to_numpy(queries, "queries")
        if q.shape != given.shape:
            raise ValueError(
                f"queries have shape {q.shape} but the patterns {given.shape} "
                f"(layout={layout!r}): one query per pattern, in the patterns' layout"
            )
        Q = _as_columns(q, layout, "queries")
        if not np.all(np.isfinite(Q)):
            raise ValueError("queries contain NaN or inf")
    kind = _tensor_kind(memory, patterns)
    Q_in = _from_columns(Q, layout)
    states, eps = [], 0.0
    step = n if batch_size is None else batch_size
    for start in range(0, n, step):
        block = Q_in[start : start + step] if layout == "rows" else Q_in[:, start : start + step]
        s, eps = _call_memory(memory, block, kind, layout)
        states.append(s)
    Y = _as_columns(np.concatenate(states, axis=0 if layout == "rows" else 1), layout, "states")
    if kind is not None:  # the queries as the memory saw them (rounded to its dtype)
        torch = _torch()
        Q = _as_columns(_to_numpy(torch.as_tensor(Q_in).to(dtype=kind[0]), "queries"), layout, "queries")
    tol = 16.0 * math.sqrt(d) * eps * m if atol is None else atol

    # per pattern: the theory's numbers and what the memory did
    delta = all_separations(X)
    well = delta >= threshold
    dist = np.linalg.norm(Q - X, axis=0)
    errors = np.linalg.norm(Y - X, axis=0)
    retrieved = errors <= radius + tol
    d1 = ungated_error_bounds(b, n, m, delta, dist)
    deviation = float(np.max(np.linalg.norm(Y - _reference_update(X, Q, b), axis=0)))
    within = dist <= radius + tol  # a query rounded to the memory's dtype may move by that much
    _read_only(delta, well, dist, errors, retrieved, d1)

    update = Hypothesis(
        "the memory computes the modern Hopfield update X softmax(beta X^T xi)",
        deviation <= tol,
        f"largest ||memory(xi) - X softmax(beta X^T xi)|| = {_fmt(deviation)}, atol {_fmt(tol)}",
    )
    in_radius = Hypothesis(
        "every query within R1's radius 1/(beta N M) of its pattern",
        bool(within.all()),
        f"{int(within.sum())} of {n} queries at distance <= {_fmt(radius)} + atol (largest {_fmt(dist.max())})",
    )
    n_well = int(well.sum())
    separated = Hypothesis(
        "every pattern well separated: Delta_i >= 2/(beta N) + log(2 (N-1) N beta M^2)/beta",
        n_well == n,
        f"{n_well} of {n} patterns; Delta_i {_range(delta)}, needed {_fmt(threshold)} at beta={_fmt(b)}",
    )

    on_sphere = bool(norms.min() >= m * (1 - sphere_rtol))
    r4, r4_capacity = _r4(update, in_radius, norms, on_sphere, d, b, p, sphere_rtol, retrieved, well)
    bounds = (
        _r1(update, in_radius, separated, well & within, retrieved, radius),
        _d1(update, errors, d1, radius, tol),
        r4,
    )
    problems = []
    if not retrieved.all():
        problems.append(_not_retrieved(retrieved, errors, delta, d1, radius, show))
    for bc in bounds:
        if bc.holds is False:
            problems.append(
                f"{bc.label} [{bc.provenance}] is contradicted: predicted {bc.prediction}; observed "
                f"{bc.observed}" + (_R4_CAVEAT if bc.label == "R4" else "")
            )
    report = AssociativeMemoryReport(
        n_patterns=n,
        dim=d,
        beta=b,
        layout=layout,
        norm_bound=m,
        on_sphere=on_sphere,
        radius=radius,
        threshold=threshold,
        separations=delta,
        well_separated=well,
        query_distances=dist,
        errors=errors,
        retrieved=retrieved,
        d1_bounds=d1,
        update_deviation=deviation,
        r4_capacity=r4_capacity,
        bounds=bounds,
        problems=tuple(problems),
        atol=tol,
    )
    if problems and raise_on_failure:
        k = len(problems)
        raise AssertionError(
            f"the associative memory fails {k} check{'s' * (k != 1)}: " + "; ".join(problems)
        )
    return report
