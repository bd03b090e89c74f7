"""Rules over seeds and the identity tolerance as criterion objects (part of :mod:`verify.criteria`,
which re-exports them; README.md#kinds-of-claim-controls-and-verdicts-over-seeds):
:class:`EverySeed` (every seed, draw or point clears a threshold), :class:`KOfN` (at least k do;
:func:`binomial_k` gives k from a per-seed failure rate), :class:`Agreement` (two independent
computations agree to a tolerance) and :class:`Sequential` (the mean over seeds judged in stages,
stopping at the first look that decides). The first three are pass or fail: a rule over seeds has
no interval; a sequential rule is inconclusive when its last look does not decide.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from verify.criteria_base import SOURCES, Judgement, _check_side, _clears, seeds_to_decide, unit_of


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


@functools.lru_cache(maxsize=1024)
def _t_quantile(p: float, df: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(p, df))


#: what a look decides when neither bound settles the rule
CONTINUE = "continue"


@dataclass(frozen=True)
class Sequential:
    """The mean of per-seed values against a threshold, judged in stages: after ``looks[0]``
    seeds, then after each later look (e.g. 3, 6, 12), stopping at the first look that decides.
    ``quantity`` must be at least (``side=">="``), at most (``"<="``), strictly above or below
    ``value``; ``source`` says where the threshold comes from.

    At a look over n seeds the rule reads the one-sided Student-t bounds of the mean at level
    1 - ``alpha``/K each (K = the number of looks): pass when the near bound clears the threshold,
    fail when the far bound misses it, otherwise continue to the next look; after the last look
    (the cap) an undecided rule is inconclusive, with the budget that would decide it. Since a
    pass at any look needs its own bound to clear, the chance that a mean sitting on the
    threshold passes at some look is at most the sum over looks, ``alpha`` (Bonferroni over the
    looks, optional stopping included); likewise for a fail. ``verify oc`` simulates the whole
    procedure (the rates are in docs/verdicts.md). A rule over seeds of one random experiment
    (``unit``: seeds, draws, paired draws or instances).

    :meth:`run` measures the seeds one at a time and stops at the deciding look; :meth:`judge`
    reads values already measured (only the looks they reach count; values past the deciding
    look are ignored).

    >>> rule = Sequential("accuracy", 0.9, ">=", "convention", looks=(3, 6, 12))
    >>> j = rule.judge([0.97, 0.98, 0.96])
    >>> j.verdict, j.resolution["stopped_at"], len(j.measured["accuracy"])
    ('pass', 3, 3)
    >>> seen = []
    >>> j = rule.run(lambda s: seen.append(s) or [0.95, 0.85, 0.93, 0.88, 0.97, 0.86][s % 6], range(12))
    >>> j.verdict, seen == list(range(12)), j.budget is not None
    ('inconclusive', True, True)
    >>> rule.judge([0.5, 0.52, 0.49]).verdict
    'fail'
    """

    quantity: str
    value: float
    side: str = ">="
    source: str = "theory"
    looks: tuple[int, ...] = (3, 6, 12)
    alpha: float = 0.05
    unit: str = "seeds"

    def __post_init__(self):
        _check_side(self.side)
        if self.source not in SOURCES:
            raise ValueError(f"source {self.source!r} is not one of {SOURCES}")
        looks = tuple(int(n) for n in self.looks)
        if not looks or looks[0] < 2 or any(b <= a for a, b in zip(looks, looks[1:])):
            raise ValueError(f"looks must be increasing seed counts from at least 2, not {self.looks!r}")
        object.__setattr__(self, "looks", looks)
        if not 0 < self.alpha < 0.5:
            raise ValueError(f"alpha must lie in (0, 0.5), not {self.alpha}")
        if math.isnan(float(self.value)):
            raise ValueError("a sequential rule's threshold is NaN")

    @property
    def cap(self) -> int:
        """The most seeds the rule measures (its last look)."""
        return self.looks[-1]

    @property
    def per_look(self) -> float:
        """The one-sided error spent at each look, ``alpha`` / K."""
        return self.alpha / len(self.looks)

    @property
    def rule_text(self) -> str:
        """The rule without its quantity: side, threshold, looks and error."""
        looks = ", ".join(str(n) for n in self.looks)
        return (
            f"{self.side} {self.value:.4g} (mean over {self.unit}, looks at {looks}; "
            f"error {self.alpha:g} per direction over the looks)"
        )

    @property
    def text(self) -> str:
        return f"{self.quantity} {self.rule_text}"

    def with_cap(self, n: int) -> Sequential:
        """The same rule with its looks continued (doubling) up to a cap of ``n`` seeds: the
        budget ``verify oc`` tries when the power at the cap is low.

        >>> Sequential("x", 0.0, looks=(3, 6, 12)).with_cap(40).looks
        (3, 6, 12, 24, 40)
        >>> Sequential("x", 0.0, looks=(3, 6, 12)).with_cap(5).looks
        (3, 5)
        """
        n = int(n)
        if n < self.looks[0]:
            raise ValueError(f"a cap of {n} is below the first look, {self.looks[0]}")
        looks = [k for k in self.looks if k < n]
        while looks and looks[-1] * 2 < n:
            looks.append(looks[-1] * 2)
        return Sequential(
            self.quantity, self.value, self.side, self.source, (*looks, n), self.alpha, self.unit
        )

    def bounds(self, values: Sequence[float]) -> tuple[float, float]:
        """The one-sided (1 - alpha/K) lower and upper Student-t bounds of the mean of ``values``.

        >>> lo, hi = Sequential("x", 0.0, looks=(2, 4)).bounds([1.0, 1.0, 1.0])
        >>> lo == hi == 1.0
        True
        """
        x = np.asarray(values, dtype=np.float64)
        half = _t_quantile(1 - self.per_look, x.size - 1) * float(x.std(ddof=1)) / math.sqrt(x.size)
        return float(x.mean()) - half, float(x.mean()) + half

    def decide(self, values: Sequence[float]) -> str:
        """What one look at ``values`` decides: "pass", "fail" or :data:`CONTINUE`.

        >>> Sequential("x", 0.0, ">", looks=(3,)).decide([1.0, 1.1, 0.9])
        'pass'
        """
        lo, hi = self.bounds(values)
        near, far = (lo, hi) if self.side in (">=", ">") else (hi, lo)
        if _clears(near, self.value, self.side):
            return "pass"
        if not _clears(far, self.value, self.side):
            return "fail"
        return CONTINUE

    def judge(self, per_seed: Sequence[float], seeds: Sequence | None = None) -> Judgement:
        vals, labels = _per_seed(per_seed, seeds)
        if len(vals) < self.looks[0]:
            raise ValueError(f"{len(vals)} values, but the first look needs {self.looks[0]}")
        history, decision, n = [], CONTINUE, self.looks[0]
        for n in (k for k in self.looks if k <= len(vals)):
            decision = self.decide(vals[:n])
            lo, hi = self.bounds(vals[:n])
            history.append({"n": n, "bounds": [lo, hi], "decision": decision})
            if decision != CONTINUE:
                break
        lo, hi = history[-1]["bounds"]
        near = lo if self.side in (">=", ">") else hi
        clearance = abs(near - self.value) if decision == "pass" else 0.0
        verdict = "inconclusive" if decision == CONTINUE else decision
        text = (
            f"{self.text}: at {n} {self.unit} the one-sided {1 - self.per_look:.4g} bounds of the mean "
            f"are [{lo:.4g}, {hi:.4g}]"
        )
        budget = None
        if verdict == "inconclusive":
            nxt = next((k for k in self.looks if k > n), None)
            if nxt is not None:
                text += f"; stopped before the look at {nxt}"
                budget = f"the next look, at {nxt} {self.unit}"
            else:
                half = (hi - lo) / 2
                need = max(abs((lo + hi) / 2 - self.value), 1e-12)
                budget = (
                    f"a cap of about {seeds_to_decide(half, need, n)} {self.unit} "
                    f"(the bounds' half-width {half:.3g} against a distance {need:.3g} to the threshold)"
                )
                text += f"; undecided at the cap of {n} {self.unit}"
        return Judgement(
            verdict,
            {self.quantity: self.rule_text, "threshold_source": self.source},
            {self.quantity: vals[:n], self.unit: labels[:n], "looks": history},
            {
                "rule": "sequential",
                "value": clearance,
                "kind": "distance_to_threshold",
                "unit": unit_of(self.quantity),
                "coarse": False,
                "text": text,
                "looks": list(self.looks),
                "alpha": self.alpha,
                "over": self.unit,
                "stopped_at": n,
            },
            budget,
        )

    def run(self, measure, seeds: Sequence) -> Judgement:
        """Measure ``measure(seed)`` for the seeds in order, one look at a time, and stop at the
        first look that decides; ``seeds`` must hold at least :attr:`cap` seeds. The judgement's
        measurement holds only the seeds measured.

        >>> Sequential("x", 0.5, looks=(3, 6)).run(lambda s: 1.0 + 0.01 * s, range(6)).measured["x"]
        [1.0, 1.01, 1.02]
        """
        seeds = list(seeds)
        if len(seeds) < self.cap:
            raise ValueError(f"{len(seeds)} seeds given, but the rule's cap is {self.cap}")
        vals: list[float] = []
        for look in self.looks:
            while len(vals) < look:
                v = float(measure(seeds[len(vals)]))
                if math.isnan(v):
                    raise ValueError(f"{self.quantity}: seed {seeds[len(vals)]} measured NaN")
                vals.append(v)
            j = self.judge(vals, seeds[: len(vals)])
            if j.verdict != "inconclusive":
                return j
        return j


def staged_rates(rule: Sequential, mean: float, sd: float, reps: int = 2000, seed: int = 0) -> dict:
    """P(pass), P(inconclusive), P(fail) and the mean number of seeds measured when ``rule`` is run
    on per-seed values drawn from a normal with ``mean`` and ``sd``, over ``reps`` runs: the
    error rates of the whole staged procedure, optional stopping included (the numbers of
    docs/verdicts.md; ``verify oc`` does the same from a claim's record).

    >>> r = staged_rates(Sequential("x", 0.0, looks=(3, 6, 12)), 0.0, 1.0, reps=400)
    >>> r["pass"] <= 0.08 and r["fail"] <= 0.08
    True
    """
    if reps < 1:
        raise ValueError(f"reps must be a positive integer, not {reps}")
    if not (math.isfinite(mean) and math.isfinite(sd)) or sd < 0:
        raise ValueError(f"mean and sd must be finite and sd >= 0, not {mean}, {sd}")
    from constructions.seeding import rng_for

    rng = rng_for(seed, "criteria_seeds.staged_rates")
    counts = {"pass": 0, "inconclusive": 0, "fail": 0}
    seeds = 0
    for _ in range(reps):
        j = rule.judge(list(mean + sd * rng.standard_normal(rule.cap)))
        counts[j.verdict] += 1
        seeds += j.resolution["stopped_at"]
    return {**{k: v / reps for k, v in counts.items()}, "mean_seeds": seeds / reps}


def run_staged(
    looks: Sequence[int],
    seeds: Sequence[int],
    measure: Callable[[int], Any],
    judge: Callable[[list], Judgement],
) -> tuple[Judgement, list]:
    """A staged rule over seeds (the parts of ``judge`` are :class:`verify.criteria.Sequential`
    rules at ``looks``): ``measure`` each seed of the next stage only while the judgement of what
    is measured is inconclusive, stopping at the first look that decides. Returns the judgement and
    the per-seed measurements (one per seed measured, in order).

    >>> rule = Sequential("x", 0.0, ">", "convention", looks=(3, 6))
    >>> j, rows = run_staged((3, 6), range(10, 16), lambda s: 1.0 + 0.01 * s, lambda r: rule.judge(r))
    >>> j.verdict, len(rows)
    ('pass', 3)
    """
    looks, seeds = [int(n) for n in looks], list(seeds)
    if len(seeds) < looks[-1]:
        raise ValueError(f"{len(seeds)} seeds for a last look at {looks[-1]}")
    rows: list = []
    judgement = None
    for look in looks:
        rows += [measure(s) for s in seeds[len(rows) : look]]
        judgement = judge(rows)
        if judgement.verdict != "inconclusive":
            break
    return judgement, rows
