"""The criterion objects' core (docs/verdicts.md): :class:`Judgement`, :class:`Threshold`,
:class:`IntervalTest`, :func:`all_of` and their helpers. The rules over seeds, the growth-law fits
and the bracket build on it (:mod:`verify.criteria_seeds`, :mod:`verify.criteria_growth`,
:mod:`verify.criteria_bracket`); :mod:`verify.criteria` is the one interface to all of them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

VERDICTS = ("pass", "fail", "inconclusive")
SIDES = (">=", "<=", ">", "<")
SOURCES = ("theory", "pilot", "convention")


@dataclass(frozen=True)
class Judgement:
    """What a criterion concluded from one measurement.

    verdict: "pass", "fail" or "inconclusive".
    predicted: the statement's numbers (the theory's value, thresholds, alternatives).
    measured: the measurement the verdict was read from (interval, point, per-seed values).
    resolution: what the verdict rules out: ``rule`` (which criterion), ``value`` (a number: the
      nearest rejected alternative's distance, the bracket's factor), ``kind`` and ``unit`` (what
      ``value`` is and in which unit), ``coarse`` (True when the resolution misses the rule's
      requirement) and ``text``. The kinds the criteria objects give:

      - ``distance_to_threshold`` (:class:`Threshold`): how far the interval's near end clears the
        threshold (0 when it does not), in the quantity's unit;
      - ``distance_to_nearest_rejected`` (:class:`IntervalTest`): the distance from the theory's
        value to the nearest alternative the interval excludes, in the quantity's unit
        ("dimensionless" for an exponent);
      - ``bracket_factor`` (:class:`Bracket`): max(boundary/below, above/boundary), a ratio;
      - ``worst_clearance`` (:class:`EverySeed`): the worst seed's margin over the threshold, in
        the quantity's unit;
      - ``seeds_to_spare`` (:class:`KOfN`): clearing seeds minus k, counted in the rule's unit;
      - ``absolute_difference`` (:class:`Agreement`): the two computations' difference;
      - ``parts`` (:func:`all_of`): no value of its own (``value`` None, unit "none"); each part
        carries its own.
    budget: for an inconclusive verdict, what would decide it (e.g. "about 12 seeds").

    >>> Judgement("pass", {}, {}, {"rule": "x", "value": 1.0, "coarse": False, "text": ""}).passed
    True
    >>> Threshold("accuracy", 0.9, ">=", "convention").judge(0.95).resolution["kind"]
    'distance_to_threshold'
    """

    verdict: str
    predicted: Mapping
    measured: Mapping
    resolution: Mapping = field(default_factory=dict)
    budget: str | None = None

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {VERDICTS}")

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    @property
    def inconclusive(self) -> str | None:
        """The reason and the deciding budget when the verdict is inconclusive, else None."""
        if self.verdict != "inconclusive":
            return None
        return self.resolution.get("text", "") + (f"; would decide: {self.budget}" if self.budget else "")


def _check_side(side: str) -> None:
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, not {side!r}")


def _clears(value: float, threshold: float, side: str) -> bool:
    """Whether ``value`` clears ``threshold`` on ``side`` (">" and "<" are strict)."""
    if side == ">=":
        return value >= threshold
    if side == "<=":
        return value <= threshold
    return value > threshold if side == ">" else value < threshold


def _interval(measured) -> tuple[float, float]:
    if isinstance(measured, (int, float, np.floating, np.integer)):
        value = float(measured)
        lo = hi = value
    else:
        lo, hi = (float(v) for v in measured)
    if math.isnan(lo) or math.isnan(hi):
        raise ValueError("a criterion was given NaN as its measurement")
    if lo > hi:
        raise ValueError(f"interval [{lo}, {hi}] has its lower end above its upper end")
    return lo, hi


def seeds_to_decide(half_width: float, needed: float, seeds: int) -> int:
    """Seeds at which an interval of half-width ``half_width`` over ``seeds`` seeds shrinks to
    ``needed`` (half-width ~ 1/sqrt(seeds)).

    >>> seeds_to_decide(0.2, 0.1, 3)
    12
    """
    if needed <= 0:
        raise ValueError("the half-width that would decide must be positive")
    return max(seeds + 1, math.ceil(seeds * (half_width / needed) ** 2))


@dataclass(frozen=True)
class Threshold:
    """``quantity`` must be at least (``side=">="``), at most (``"<="``), strictly above (``">"``)
    or strictly below (``"<"``) ``value``; ``source`` says where the threshold comes from
    (theory, pilot or convention).

    Judged on an interval: pass when the whole interval clears, fail when none of it does,
    inconclusive in between. On a point (a deterministic measurement) the verdict is pass or fail.

    >>> t = Threshold("accuracy", 0.9, ">=", "convention")
    >>> t.judge([0.93, 0.97]).verdict, t.judge([0.85, 0.95]).verdict, t.judge(0.5).verdict
    ('pass', 'inconclusive', 'fail')
    >>> Threshold("rho", 0.0, ">", "theory").judge(0.0).verdict
    'fail'
    """

    quantity: str
    value: float
    side: str = ">="
    source: str = "theory"
    #: the quantity's unit, for the resolution (default: "unit of <quantity>")
    quantity_unit: str = ""

    def __post_init__(self):
        _check_side(self.side)
        if self.source not in SOURCES:
            raise ValueError(f"source {self.source!r} is not one of {SOURCES}")

    @property
    def text(self) -> str:
        return f"{self.quantity} {self.side} {self.value:.4g} ({self.source})"

    def judge(self, measured, seeds: int | None = None, unit: str = "seeds") -> Judgement:
        """``seeds``: how many values the interval is over (``unit``: seeds, draws), for the budget."""
        lo, hi = _interval(measured)
        near, far = (lo, hi) if self.side in (">=", ">") else (hi, lo)
        ok_near = _clears(near, self.value, self.side)
        ok_far = _clears(far, self.value, self.side)
        verdict = "pass" if ok_near else "fail" if not ok_far else "inconclusive"
        half = (hi - lo) / 2
        clearance = abs(near - self.value) if ok_near else 0.0
        budget = None
        if verdict == "inconclusive" and seeds:
            needed = abs((lo + hi) / 2 - self.value)
            budget = (
                f"about {seeds_to_decide(half, needed, seeds)} {unit}" if needed > 0 else "a larger scale"
            )
        return Judgement(
            verdict,
            {self.quantity: f"{self.side} {self.value:.4g}", "threshold_source": self.source},
            {self.quantity: lo if lo == hi else [lo, hi]},
            {
                "rule": "threshold",
                "value": clearance,
                "kind": "distance_to_threshold",
                "unit": unit_of(self.quantity, self.quantity_unit),
                "coarse": verdict == "pass" and lo != hi and clearance <= half,
                "text": f"{self.text}: measured {_fmt(lo, hi)}",
            },
            budget,
        )


@dataclass(frozen=True)
class IntervalTest:
    """An interval of ``quantity`` that must contain the theory's value ``theory`` and exclude
    every alternative in ``alternatives`` (name -> the value that alternative predicts).

    An end of the interval within ``tol`` of a value counts as holding it (float round-off: exactly
    proportional data fit an exponent of 1.0000000000000002 with a zero-width interval, which must
    hold 1). Pass: theory inside, every alternative outside. Fail: theory outside. Inconclusive: theory
    inside and some alternative inside too (the data cannot tell them apart); the budget is the
    seed count at which the interval would be narrow enough to separate the theory from the
    nearest alternative it still contains. The resolution names the nearest rejected alternative
    on each side of the theory.

    >>> law = IntervalTest("exponent p", 0.0, {"N^(1/4)": 0.25, "N^(1/8)": 0.125, "(ln N)^(1/2)": -0.5})
    >>> law.judge([-0.05, 0.1], seeds=5).verdict
    'pass'
    >>> law.judge([-0.05, 0.2], seeds=5).verdict, law.judge([0.15, 0.3]).verdict
    ('inconclusive', 'fail')
    >>> IntervalTest("exponent", 1.0, {"0.8": 0.8}).judge([1.0000000000000002] * 2).verdict
    'pass'
    """

    quantity: str
    theory: float
    alternatives: Mapping[str, float]
    theory_name: str = "theory"
    #: the quantity's unit, for the resolution (default: "unit of <quantity>")
    unit: str = ""
    #: an interval end within tol of a value holds it (absolute; round-off of exact data)
    tol: float = 1e-9

    def __post_init__(self):
        if not self.tol >= 0:
            raise ValueError(f"{self.quantity}: the tolerance must be >= 0, not {self.tol}")

    def judge(self, measured, seeds: int | None = None) -> Judgement:
        lo, hi = _interval(measured)
        inside = {n: v for n, v in self.alternatives.items() if lo - self.tol <= v <= hi + self.tol}
        outside = {n: v for n, v in self.alternatives.items() if n not in inside}
        theory_in = lo - self.tol <= self.theory <= hi + self.tol
        verdict = "fail" if not theory_in else "pass" if not inside else "inconclusive"
        below = {n: v for n, v in outside.items() if v < self.theory}
        above = {n: v for n, v in outside.items() if v > self.theory}
        nearest = [
            max(below.items(), key=lambda kv: kv[1]) if below else None,
            min(above.items(), key=lambda kv: kv[1]) if above else None,
        ]
        rejected = [f"{n} ({v:.3g})" for n, v in (x for x in nearest if x is not None)]
        text = f"{self.quantity} {_fmt(lo, hi)} against {self.theory_name} {self.theory:.3g}"
        if verdict == "fail":
            text += f": excludes {self.theory_name}"
        elif inside:
            text += ": cannot tell it from " + ", ".join(f"{n} ({v:.3g})" for n, v in inside.items())
        if rejected:
            text += "; nearest rejected: " + ", ".join(rejected)
        budget = None
        if verdict == "inconclusive" and seeds:
            gap = min(abs(v - self.theory) for v in inside.values())
            budget = f"about {seeds_to_decide((hi - lo) / 2, gap / 2, seeds)} seeds" if gap > 0 else "none"
        missing_side = (not below and any(v < self.theory for v in self.alternatives.values())) or (
            not above and any(v > self.theory for v in self.alternatives.values())
        )
        return Judgement(
            verdict,
            {
                self.quantity: f"interval contains {self.theory:.4g} ({self.theory_name})",
                "alternatives": dict(self.alternatives),
            },
            {self.quantity: [lo, hi]},
            {
                "rule": "interval_test",
                "value": min((abs(v - self.theory) for v in outside.values()), default=None),
                "kind": "distance_to_nearest_rejected",
                "unit": unit_of(self.quantity, self.unit),
                "coarse": verdict != "pass" or missing_side,
                "text": text,
                "rejected": [n for n, _ in (x for x in nearest if x is not None)],
                "not_rejected": sorted(inside),
            },
            budget,
        )


def unit_of(quantity: str, unit: str = "") -> str:
    """The unit a resolution's value is in: ``unit`` when given, else "unit of <quantity>".

    >>> unit_of("accuracy"), unit_of("exponent", "dimensionless")
    ('unit of accuracy', 'dimensionless')
    """
    return unit or f"unit of {quantity}"


def _fmt(lo: float, hi: float) -> str:
    return f"{lo:.4g}" if lo == hi else f"[{lo:.4g}, {hi:.4g}]"


def all_of(**judgements: Judgement) -> Judgement:
    """One judgement from several parts that must all pass: fail if any part fails,
    inconclusive if any part is inconclusive (and none fails), else pass. The parts' numbers are
    kept under their names; the resolution lists each part's, coarse if any part is.

    >>> a = Threshold("x", 1.0).judge(2.0)
    >>> b = Threshold("y", 1.0).judge([0.5, 1.5], seeds=4)
    >>> all_of(x=a, y=b).verdict, all_of(x=a, y=a).verdict
    ('inconclusive', 'pass')
    """
    if not judgements:
        raise ValueError("all_of needs at least one judgement")
    verdicts = [j.verdict for j in judgements.values()]
    verdict = "fail" if "fail" in verdicts else "inconclusive" if "inconclusive" in verdicts else "pass"
    undecided = {n: j for n, j in judgements.items() if j.verdict == verdict and verdict != "pass"}
    budgets = [f"{n}: {j.budget}" for n, j in undecided.items() if j.budget]
    return Judgement(
        verdict,
        {n: dict(j.predicted) for n, j in judgements.items()},
        {n: dict(j.measured) for n, j in judgements.items()},
        {
            "rule": "all_of",
            "kind": "parts",
            "unit": "none",
            "parts": {n: dict(j.resolution) for n, j in judgements.items()},
            "coarse": any(j.resolution.get("coarse", False) for j in judgements.values()),
            "text": "; ".join(f"{n}: {j.resolution.get('text', j.verdict)}" for n, j in undecided.items())
            or "; ".join(f"{n}: {j.resolution.get('text', '')}" for n, j in judgements.items()),
        },
        "; ".join(budgets) or None,
    )
