"""Criteria as objects: a claim's rule written once (README.md#kinds-of-claim-controls-and-verdicts-over-seeds).

A criterion takes the claim's parameters at the running scale and its measurement, and gives a
:class:`Judgement`: the statement's numbers (``predicted``), what was measured, one of three
verdicts and the claim's *resolution*, i.e. what the pass rules out:

* ``pass``: the theory's value is inside what was measured and every named alternative is
  outside it;
* ``fail``: the measurement excludes the theory's value (or misses the threshold entirely);
* ``inconclusive``: the measurement's interval straddles the criterion; the judgement then says
  which budget (seeds, from the interval's width) would decide it.

The criteria here:

* :class:`Threshold` - an interval (or a point) against a threshold whose source is stated
  (theory, pilot seeds or convention);
* :class:`IntervalTest` - an interval that must contain the theory's value and exclude named
  alternatives on each side (the scaling-law rule: a fitted exponent against the theory's
  exponent and the nearest competing laws);
* :class:`Bracket` - a must-fail demonstration at two points that straddle the theory's
  boundary; its resolution is the larger of boundary/below and above/boundary, coarse above 2;
* :class:`EverySeed` and :class:`KOfN` - rules over seeds (every seed clears a threshold; at
  least k of n do, k from :func:`binomial_k`), pass or fail;
* :class:`Sequential` - the mean over seeds against a threshold, judged at looks (e.g. 3, 6, 12
  seeds) and stopped at the first that decides; its error rates, stopping included, are at most
  its ``alpha`` per direction (Bonferroni over the looks) and simulated by ``verify oc``;
* :class:`Agreement` - an identity: two independent computations agree to a tolerance.

Each produces its text from the numbers it is given, so the statement cannot drift from what is
checked. The core objects are written in :mod:`verify.criteria_base`; Bracket, the rules over
seeds and the growth-law fits in :mod:`verify.criteria_bracket`, :mod:`verify.criteria_seeds` and
:mod:`verify.criteria_growth`, each importing only the core; this module is their one
interface. :func:`growth_exponent` fits a growth law y = a + b g(x) over seeds, g in one of two
families (x^p with ln x at p = 0, and (ln x)^q): the measurement behind the scaling-law claims.
"""

from __future__ import annotations

from verify.criteria_base import (
    SIDES,
    SOURCES,
    VERDICTS,
    IntervalTest,
    Judgement,
    Threshold,
    all_of,
    seeds_to_decide,
    unit_of,
)
from verify.criteria_bracket import Bracket
from verify.criteria_growth import (
    FAMILIES,
    LOG_COMPETITORS,
    boxcox,
    fit_growth,
    growth_exponent,
    growth_law_judgement,
    log_power,
    slope_interval,
)
from verify.criteria_seeds import Agreement, EverySeed, KOfN, Sequential, binomial_k, run_staged

__all__ = [
    "FAMILIES",
    "LOG_COMPETITORS",
    "SIDES",
    "SOURCES",
    "VERDICTS",
    "Agreement",
    "Bracket",
    "EverySeed",
    "IntervalTest",
    "Judgement",
    "KOfN",
    "Sequential",
    "Threshold",
    "all_of",
    "binomial_k",
    "boxcox",
    "fit_growth",
    "growth_exponent",
    "growth_law_judgement",
    "log_power",
    "run_staged",
    "seeds_to_decide",
    "slope_interval",
    "unit_of",
]
