"""One-call contract check of a fact-storing model (docs/testing.md), re-exported by
:mod:`verify.testing` as :func:`check_fact_model`.

A fact-storing model (constructions/measure.py) answers ``decode(facts)``, ``accuracy(facts)``
and ``margins(facts)``. Whatever the construction, the three answers must agree with each other
and the model's size must respect the information bound B1 (docs/fact_mlp.md). The check
recomputes what it can from the model's own answers and lists every contract that is broken:

1. ``decode`` gives one value index per fact, in [0, n_V), or -1 for a tie;
2. ``margins`` gives one finite number per fact;
3. the reported accuracy is the mean of (decode == target);
4. ties count as errors: a fact whose margin is not positive (a tie or a loss) must not decode to
   its value;
5. a fact whose margin is positive (above ``margin_atol``) decodes to its value, so a positive
   minimum margin implies accuracy 1, and accuracy 1 with a tie is impossible;
6. a model that stores every fact has at least as many parameter bits as the facts carry (B1:
   F log2 n_V bits, log2 F! for a bijection; ``theory.fact_mlp.bounds``): the report gives the
   ratio of ``n_params * bits_per_param`` to that bound, and a ratio below 1 with accuracy 1
   means the parameter count leaves out numbers the model stores.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["FactModelReport", "check_fact_model"]

#: Bits per parameter of the toolkit's models (float64 numbers), the ``b`` of B1 by default.
BITS_PER_PARAM = 64


@dataclass(frozen=True)
class FactModelReport:
    """What :func:`check_fact_model` found: the accuracy and minimum margin the model reports,
    its parameter count, the information bound in bits (B1) and ``ratio`` = n_params *
    bits_per_param / bound (None without a parameter count; inf for a bound of 0 bits), and
    ``problems``, one line per broken contract (empty when the model keeps them all)."""

    accuracy: float
    min_margin: float
    n_params: int | None
    bound: float
    ratio: float | None
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no contract is broken."""
        return not self.problems


def _param_count(model: Any) -> int | None:
    """The model's parameter count: the distinct numbers that write it down where it says so."""
    for attr in ("params_unique", "n_params", "params_standard"):
        value = getattr(model, attr, None)
        if value is not None and not callable(value):
            return int(value)
    counts = getattr(model, "param_counts", None)
    if callable(counts):
        return int(counts()["total"])
    return None


def _information_bound(facts: Any, targets: np.ndarray) -> tuple[float, int, str]:
    """(bits, n_V, name of the bound) for the facts: B1 of docs/fact_mlp.md."""
    from theory.fact_mlp.bounds import info_bits, info_bits_tied

    values = getattr(facts, "values", None)
    if values is not None and getattr(facts, "fact_map", None) is not None:
        n_values = int(np.asarray(values).shape[0])
    elif not isinstance(facts, tuple):  # a relation table: R bijections of [N]
        table = np.asarray(facts)
        n_rel, n = table.shape
        return n_rel * info_bits_tied(n), n, f"fact_mlp.info_bits_tied (R={n_rel} bijections of N={n})"
    else:
        n_values = int(targets.max()) + 1 if len(targets) else 1
    n_facts = len(targets)
    if n_values < 2:
        return 0.0, n_values, "fact_mlp.info_bits (one value: 0 bits)"
    if n_facts == n_values and np.array_equal(np.sort(targets), np.arange(n_values)):
        return info_bits_tied(n_facts), n_values, f"fact_mlp.info_bits_tied (a bijection of F={n_facts})"
    return info_bits(n_facts, n_values), n_values, f"fact_mlp.info_bits (F={n_facts}, n_V={n_values})"


def _facts(facts: Any, i: np.ndarray, show: int) -> str:
    from constructions.measure import describe_fact

    more = f" and {len(i) - show} more" if len(i) > show else ""
    return ", ".join(describe_fact(facts, int(k)) for k in i[:show]) + more


#: The methods a fact-storing model answers (constructions/measure.py, ``FactModel``).
METHODS = ("decode", "accuracy", "margins")


def _check_arguments(model: Any, n_params: Any, bits_per_param: Any, margin_atol: Any, show: Any) -> None:
    """The arguments of :func:`check_fact_model` other than the facts, checked before the model is
    asked anything: a model without the three methods, or an argument of the wrong type, is a
    TypeError naming it; a count, a bit width or a tolerance outside its range a ValueError.

    >>> _check_arguments(object(), None, 64, 1e-9, 3)
    Traceback (most recent call last):
    ...
    TypeError: model must be a fact-storing model with the methods decode(facts), accuracy(facts) and margins(facts) (constructions.measure.FactModel, docs/testing.md); object has none of them
    >>> class Model:
    ...     def decode(self, facts): ...
    ...     def accuracy(self, facts): ...
    ...     def margins(self, facts): ...
    >>> _check_arguments(Model(), None, float("nan"), 1e-9, 3)
    Traceback (most recent call last):
    ...
    ValueError: bits_per_param=nan must be a positive finite number (the bits b of each parameter in B1, 64 for float64)
    """
    from theory.validate import require_int

    missing = [m for m in METHODS if not callable(getattr(model, m, None))]
    if missing:
        lacks = "has none of them" if len(missing) == len(METHODS) else f"lacks {', '.join(missing)}"
        raise TypeError(
            "model must be a fact-storing model with the methods decode(facts), accuracy(facts) and "
            f"margins(facts) (constructions.measure.FactModel, docs/testing.md); "
            f"{type(model).__name__} {lacks}"
        )
    if n_params is not None:
        require_int("n_params", n_params, 0)
    for name, value, holds, need in (
        ("bits_per_param", bits_per_param, lambda v: v > 0, "a positive finite number"),
        ("margin_atol", margin_atol, lambda v: v >= 0, "a finite number >= 0"),
    ):
        why = (
            f" (the bits b of each parameter in B1, {BITS_PER_PARAM} for float64)"
            if name == "bits_per_param"
            else ""
        )
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name}={value!r} must be {need}{why}, not {type(value).__name__}")
        if not (math.isfinite(value) and holds(value)):
            raise ValueError(f"{name}={value!r} must be {need}{why}")
    require_int("show", show, 0)


def check_fact_model(
    model: Any,
    facts: Any = None,
    *,
    n_params: int | None = None,
    bits_per_param: float = BITS_PER_PARAM,
    margin_atol: float = 1e-9,
    raise_on_failure: bool = True,
    show: int = 3,
) -> FactModelReport:
    """Check the contracts of a fact-storing model on ``facts`` (default: the model's own) and
    return a :class:`FactModelReport`; with ``raise_on_failure`` (the default) an AssertionError
    lists every broken contract (module docstring). ``facts``: a
    :class:`~constructions.fact_mlp.facts.FactSet`, a relation table (R, N) or a triple
    (constructions/measure.py). ``n_params``: the parameter count when the model does not carry
    one (``params_unique``, ``n_params``, ``params_standard`` or ``param_counts()["total"]``).
    ``bits_per_param``: the b of B1 (64: float64 numbers). ``margin_atol``: a margin above it
    counts as positive (the decode kernel treats smaller ones as rounding, constructions/decode.py).
    A model without the three methods, ``facts`` of another form, or an argument outside its
    range (``bits_per_param`` a positive finite number, ``margin_atol`` a finite number >= 0,
    ``n_params`` and ``show`` non-negative integers) is a TypeError or ValueError naming it, raised
    before the model is asked anything.

    >>> import numpy as np
    >>> from constructions.fact_mlp import build_encoder_decoder, fact_set
    >>> facts = fact_set(40, 8, 16, np.random.default_rng(0))
    >>> mlp = build_encoder_decoder(facts, 16, np.random.default_rng(1))
    >>> report = check_fact_model(mlp, facts)
    >>> report.accuracy, report.problems, report.n_params, round(report.bound, 1)
    (1.0, [], 1072, 120.0)
    >>> round(report.ratio, 1)  # 1072 float64 parameters for 40 log2(8) = 120 bits of facts
    571.7
    >>> class Cheat:  # decodes every fact to its value, ties included
    ...     def decode(self, f): return f.fact_map.copy()
    ...     def accuracy(self, f): return 1.0
    ...     def margins(self, f): return np.zeros(f.n_facts)
    >>> check_fact_model(Cheat(), facts, n_params=1072)
    Traceback (most recent call last):
    ...
    AssertionError: the fact model breaks 2 contracts: ties count as errors: 40 facts have a margin <= 0 but decode to their value (fact 0 (keys[0]), fact 1 (keys[1]), fact 2 (keys[2]) and 37 more); accuracy 1 with a tie is impossible: the minimum margin is 0
    """
    from constructions.measure import fact_targets

    _check_arguments(model, n_params, bits_per_param, margin_atol, show)
    if facts is None:
        facts = getattr(model, "facts", None)
        if facts is None:
            facts = getattr(model, "perms", None)
        if facts is None:
            raise ValueError(f"give the facts to check: {type(model).__name__} has no facts of its own")
    targets = fact_targets(facts)
    bound, n_values, bound_name = _information_bound(facts, targets)
    problems: list[str] = []
    F = len(targets)

    decoded = np.asarray(model.decode(facts))
    if decoded.shape != (F,) or (F and not np.issubdtype(decoded.dtype, np.integer)):
        problems.append(
            f"decode must give one integer per fact, shape ({F},); got {decoded.dtype} {decoded.shape}"
        )
        decoded = None
    elif F and (decoded.min() < -1 or decoded.max() >= n_values):
        problems.append(f"decode gives indices outside [-1, {n_values}) (n_V = {n_values}; -1 is a tie)")
    margins = np.asarray(model.margins(facts), dtype=np.float64)
    if margins.shape != (F,):
        problems.append(f"margins must give one number per fact, shape ({F},); got {margins.shape}")
        margins = None
    elif not np.isfinite(margins).all():
        problems.append(
            f"margins are not finite for {_facts(facts, np.flatnonzero(~np.isfinite(margins)), show)}"
        )
    accuracy = float(model.accuracy(facts))
    min_margin = float(np.min(margins)) if margins is not None and F else math.inf

    if decoded is not None:
        correct = decoded == targets
        mean = float(correct.mean()) if F else 1.0
        if not math.isclose(accuracy, mean, rel_tol=0.0, abs_tol=1e-12):
            problems.append(
                f"accuracy reports {accuracy:.6g} but the mean of (decode == target) is {mean:.6g}"
            )
        if margins is not None:
            tie_correct = np.flatnonzero(correct & ~(margins > 0))
            if len(tie_correct):
                problems.append(
                    f"ties count as errors: {len(tie_correct)} facts have a margin <= 0 but decode to "
                    f"their value ({_facts(facts, tie_correct, show)})"
                )
            wrong_positive = np.flatnonzero(~correct & (margins > margin_atol))
            if len(wrong_positive):
                problems.append(
                    f"a positive margin means a stored fact: {len(wrong_positive)} facts have a margin "
                    f"> {margin_atol:g} but do not decode to their value ({_facts(facts, wrong_positive, show)})"
                )
    if margins is not None and F:
        if min_margin > margin_atol and accuracy < 1.0:
            problems.append(
                f"a positive minimum margin ({min_margin:.6g}) implies accuracy 1, not {accuracy:.6g}"
            )
        if accuracy == 1.0 and not min_margin > 0:
            problems.append(f"accuracy 1 with a tie is impossible: the minimum margin is {min_margin:.6g}")

    count = _param_count(model) if n_params is None else int(n_params)
    ratio = None
    if count is None:
        problems.append("no parameter count: give n_params= (or a params_unique / n_params attribute)")
    else:
        bits = count * float(bits_per_param)
        ratio = bits / bound if bound > 0 else math.inf
        if ratio < 1.0 and accuracy == 1.0:
            problems.append(
                f"the model stores all {F} facts with {count} parameters x {bits_per_param:g} bits = "
                f"{bits:.6g} bits, below the {bound:.6g} bits the facts carry ({bound_name}, B1 of "
                f"docs/fact_mlp.md; ratio {ratio:.3g}): the parameter count leaves out stored numbers"
            )
    report = FactModelReport(accuracy, min_margin, count, bound, ratio, problems)
    if problems and raise_on_failure:
        n = len(problems)
        raise AssertionError(f"the fact model breaks {n} contract{'s' * (n != 1)}: " + "; ".join(problems))
    return report
