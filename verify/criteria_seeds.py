"""Rules over seeds and the identity tolerance as criterion objects (part of :mod:`verify.criteria`,
which re-exports them; README.md#kinds-of-claim-controls-and-verdicts-over-seeds):
:class:`EverySeed` (every seed, draw or point clears a threshold), :class:`KOfN` (at least k do;
:func:`binomial_k` gives k from a per-seed failure rate) and :class:`Agreement` (two independent
computations agree to a tolerance). Each is pass or fail: a rule over seeds has no interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from verify.criteria_base import SOURCES, Judgement, _check_side, _clears, unit_of


def _per_seed(values, seeds) -> tuple[list[float], list]:
    vals = [float(v) for v in values]
    if not vals:
        raise ValueError("a rule over seeds needs at least one seed's value")
    if any(math.isnan(v) for v in vals):
        raise ValueError("a criterion was given NaN as a seed's measurement")
    labels = list(seeds) if seeds is not None else list(range(len(vals)))
    if len(labels) != len(vals):
        raise ValueError(f"{len(vals)} values but {len(labels)} seed labels")
    return vals, labels


@dataclass(frozen=True)
class EverySeed:
    """``quantity`` must clear ``value`` (``side`` ">=", "<=", ">" or "<") on every seed (or
    every draw, point, configuration: ``unit`` names what the values are over); ``source`` says
    where the threshold comes from. A rule over seeds, not an interval: one seed that misses is
    a fail (a verdict that flips with the seed is not a pass), so there is no inconclusive
    verdict. The resolution is the worst seed's clearance (0 for an exact rule such as
    "accuracy = 1", written ``>= 1``).

    >>> rule = EverySeed("accuracy", 0.98, ">=", "convention")
    >>> j = rule.judge([1.0, 0.99, 0.985], seeds=[0, 1, 2])
    >>> j.verdict, round(j.resolution["value"], 3), j.resolution["worst_seed"]
    ('pass', 0.005, 2)
    >>> rule.judge([1.0, 0.97]).verdict
    'fail'
    >>> EverySeed("gap", 0.0, ">", "theory", unit="draws").judge([0.1, 0.0]).resolution["text"]
    'gap > 0 on every draw (theory): worst 0 (draw 1) over 2 draws; missed on draws [1]'
    """

    quantity: str
    value: float
    side: str = ">="
    source: str = "theory"
    unit: str = "seeds"

    def __post_init__(self):
        _check_side(self.side)
        if self.source not in SOURCES:
            raise ValueError(f"source {self.source!r} is not one of {SOURCES}")

    @property
    def one(self) -> str:
        return self.unit[:-1] if self.unit.endswith("s") else self.unit

    @property
    def text(self) -> str:
        return f"{self.quantity} {self.side} {self.value:.4g} on every {self.one} ({self.source})"

    def judge(self, per_seed: Sequence[float], seeds: Sequence | None = None) -> Judgement:
        vals, labels = _per_seed(per_seed, seeds)
        sign = 1.0 if self.side in (">=", ">") else -1.0
        margins = [sign * (v - self.value) for v in vals]
        worst = int(np.argmin(margins))
        missed = [labels[i] for i, v in enumerate(vals) if not _clears(v, self.value, self.side)]
        verdict = "pass" if not missed else "fail"
        text = (
            f"{self.text}: worst {vals[worst]:.4g} ({self.one} {labels[worst]}) over {len(vals)} {self.unit}"
        )
        if missed:
            text += f"; missed on {self.unit} {missed}"
        return Judgement(
            verdict,
            {
                self.quantity: f"{self.side} {self.value:.4g} on every {self.one}",
                "threshold_source": self.source,
            },
            {self.quantity: vals, self.unit: labels},
            {
                "rule": "every_seed",
                "value": margins[worst],
                "kind": "worst_clearance",
                "unit": unit_of(self.quantity),
                "coarse": False,
                "text": text,
                "worst_seed": labels[worst],
                "missed": missed,
            },
        )


@dataclass(frozen=True)
class KOfN:
    """At least ``k`` of the seeds (``unit``: or draws, points) must clear ``value`` (``side``
    ">=", "<=", ">" or "<"); a binomial rule over seeds (:func:`binomial_k` gives k from a per-seed failure rate). Pass or fail; the
    resolution is the number of seeds to spare (clearing seeds minus k).

    >>> rule = KOfN("margin", 0.5, ">=", k=18, source="theory")
    >>> j = rule.judge([0.6] * 19 + [0.4])
    >>> j.verdict, j.resolution["value"]
    ('pass', 1)
    >>> rule.judge([0.6] * 17 + [0.4] * 3).verdict
    'fail'
    """

    quantity: str
    value: float
    side: str = ">="
    k: int = 1
    source: str = "theory"
    unit: str = "seeds"

    def __post_init__(self):
        _check_side(self.side)
        if self.source not in SOURCES:
            raise ValueError(f"source {self.source!r} is not one of {SOURCES}")
        if self.k < 1:
            raise ValueError(f"k must be at least 1, not {self.k}")

    def judge(self, per_seed: Sequence[float], seeds: Sequence | None = None) -> Judgement:
        vals, labels = _per_seed(per_seed, seeds)
        if self.k > len(vals):
            raise ValueError(f"k = {self.k} seeds must clear but only {len(vals)} were measured")
        missed = [labels[i] for i, v in enumerate(vals) if not _clears(v, self.value, self.side)]
        cleared = len(vals) - len(missed)
        verdict = "pass" if cleared >= self.k else "fail"
        rule = f"{self.quantity} {self.side} {self.value:.4g} on at least {self.k} of {len(vals)} {self.unit}"
        return Judgement(
            verdict,
            {
                self.quantity: f"{self.side} {self.value:.4g} on at least {self.k} of {len(vals)} {self.unit}",
                "threshold_source": self.source,
            },
            {self.quantity: vals, self.unit: labels, "cleared": cleared},
            {
                "rule": "k_of_n",
                "value": cleared - self.k,
                "kind": "seeds_to_spare",
                "unit": self.unit,
                "coarse": False,
                "text": f"{rule} ({self.source}): {cleared} cleared"
                + (f"; missed on {self.unit} {missed}" if missed else ""),
                "missed": missed,
            },
        )


def binomial_k(n: int, rate: float, level: float = 0.99) -> int:
    """The k of a :class:`KOfN` rule that allows as many failing seeds as the ``level`` quantile
    of Binomial(n, rate) (:func:`verify.measure.binomial_tolerance`): the rule of a guarantee
    that holds with probability at least 1 - rate per seed.

    >>> binomial_k(20, 0.01), binomial_k(100, 0.01)
    (18, 96)
    """
    from verify.measure import binomial_tolerance

    return int(n) - binomial_tolerance(n, rate, level)


@dataclass(frozen=True)
class Agreement:
    """An identity: two computations that share no code agree to ``tol`` (the largest absolute
    difference; ``source`` says where the tolerance comes from, usually float64 round-off, a
    convention; ``strict`` asks for a difference strictly below ``tol``). Pass or fail; the
    resolution is the measured difference and the tolerance.

    >>> Agreement("max |formula - count|", 1e-9).judge(2e-16).verdict
    'pass'
    >>> Agreement("max |formula - count|", 0.0).judge(1.0).resolution["text"]
    'max |formula - count| = 1 <= 0 (exact): measured 1'
    >>> Agreement("max error", 1e-6, strict=True).judge(1e-6).verdict
    'fail'
    """

    quantity: str
    tol: float
    source: str = "convention"
    strict: bool = False

    def __post_init__(self):
        if self.source not in SOURCES:
            raise ValueError(f"source {self.source!r} is not one of {SOURCES}")
        if self.tol < 0 or (self.strict and self.tol == 0):
            raise ValueError(f"{self.quantity}: a tolerance must be >= 0 (> 0 when strict), not {self.tol}")

    def judge(self, difference: float) -> Judgement:
        diff = float(difference)
        if math.isnan(diff):
            raise ValueError(f"{self.quantity}: the measured difference is NaN")
        verdict = "pass" if _clears(abs(diff), self.tol, "<" if self.strict else "<=") else "fail"
        bound = "exact" if self.tol == 0 else self.source
        op = "<" if self.strict else "<="
        return Judgement(
            verdict,
            {self.quantity: f"{op} {self.tol:.3g}", "tolerance_source": bound},
            {self.quantity: diff},
            {
                "rule": "agreement",
                "value": abs(diff),
                "kind": "absolute_difference",
                "unit": unit_of(self.quantity),
                "coarse": False,
                "text": f"{self.quantity} = {abs(diff):.3g} {op} {self.tol:.3g} ({bound}): measured {diff:.3g}",
            },
        )
