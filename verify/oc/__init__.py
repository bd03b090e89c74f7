"""The operating characteristic of a claim's criterion (README.md, "Kinds of claim, controls and
verdicts over seeds"): how often the claim's own criterion passes, is inconclusive or fails when
its measurement is drawn from the theory's law and from each named alternative, with the noise
measured in the claim's stored record and at the claim's budget (seeds, grid).

``python -m verify oc ID|GLOB [--reps N] [--json] [--write]``. The simulators
(:mod:`verify.oc.simulators`) draw measurements only: no training. A claim's *power* is its pass
rate under the theory; a pass may mean something only where every named alternative passes at
most :data:`MAX_ALTERNATIVE` of the time. Where the power is below :data:`TARGET_POWER`, the same
simulation at more seeds names the budget that reaches it. ``--write`` stores the
characteristics in :data:`STORE` (the only file the command writes); :func:`stored` reads them.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Mapping
from pathlib import Path

from constructions.seeding import rng_for
from verify.oc.generic import over_seeds
from verify.oc.simulators import SIMULATORS, NotCovered, Setup

STORE = Path(__file__).with_name("operating.json")
#: the largest pass rate a named alternative may have where a pass is to mean anything
MAX_ALTERNATIVE = 0.05
#: the power a budget should reach
TARGET_POWER = 0.8
DEFAULT_REPS = 200
#: The most replications per law (``--reps``): a rate's binomial standard error is at most
#: 0.5 / sqrt(reps), 0.0016 at 100,000, below the two decimals the rates are printed with, while
#: the draws take minutes per claim at 100,000 (hopfield.capacity.d3: 3.5 s at 2,000, so about
#: 3 minutes). More is a ValueError naming ``reps`` before anything is drawn.
MAX_REPS = 100_000


def check_reps(reps: object) -> int:
    """``reps`` as an int when it is an integer in [1, :data:`MAX_REPS`]: a TypeError (not an
    integer) or ValueError (outside the range) naming it otherwise.

    >>> check_reps(200)
    200
    >>> check_reps(10**9)
    Traceback (most recent call last):
    ...
    ValueError: reps=1000000000 is above the most replications per law, verify.oc.MAX_REPS = 100,000 (there a rate's standard error is below 0.0016, finer than the rates are printed, and a claim's draws take minutes; 1000000000 would take about 10,000 times as long)
    """
    import numbers

    if isinstance(reps, bool) or not isinstance(reps, numbers.Integral):
        raise TypeError(f"reps={reps!r} must be a positive integer, not {type(reps).__name__}")
    if reps < 1:
        raise ValueError(f"reps={reps} must be a positive integer")
    if reps > MAX_REPS:
        raise ValueError(
            f"reps={reps} is above the most replications per law, verify.oc.MAX_REPS = {MAX_REPS:,} "
            "(there a rate's standard error is below 0.0016, finer than the rates are printed, and a "
            f"claim's draws take minutes; {reps} would take about {reps // MAX_REPS:,} times as long)"
        )
    return int(reps)


def rates(setup: Setup, reps: int = DEFAULT_REPS, seed: int = 0) -> dict:
    """P(pass), P(inconclusive), P(fail) under each law of ``setup``, over ``reps`` draws each.

    >>> from verify.criteria import Threshold
    >>> s = Setup("t", {"t": lambda rng: Threshold("x", 0.0).judge(float(rng.normal(3, 1)))})
    >>> rates(s, reps=50)["t"]["pass"] > 0.9
    True
    """
    reps = check_reps(reps)
    out = {}
    for k, (name, draw) in enumerate(setup.laws.items()):
        rng = rng_for(seed, k)
        counts = {"pass": 0, "inconclusive": 0, "fail": 0}
        for _ in range(reps):
            counts[draw(rng).verdict] += 1
        out[name] = {v: c / reps for v, c in counts.items()}
    return out


def simulator_for(claim_id: str):
    """The simulator of a claim id (:data:`verify.oc.simulators.SIMULATORS`), else the generic
    one of claims judged by rebuilt criterion objects (:func:`verify.oc.generic.over_seeds`).

    >>> simulator_for("atlas.hopfield.within_constant").__name__
    'atlas'
    """
    for pattern, sim in SIMULATORS.items():
        if fnmatch.fnmatchcase(claim_id, pattern):
            return sim
    return over_seeds


def characteristic(claim_id: str, record: Mapping, reps: int = DEFAULT_REPS, budget: bool = True) -> dict:
    """The operating characteristic of one claim from its stored ``record``: the rates under
    each law, the power, the worst alternative and its pass rate, the noise and budget used,
    and (``budget``; power below :data:`TARGET_POWER`) the seeds that reach it, (an alternative
    above :data:`MAX_ALTERNATIVE`) the seeds at which none passes that often, or a dict with
    ``covered`` False and the reason.

    >>> from verify.oc.command import _records
    >>> c = characteristic("hopfield.capacity.d3", _records("quick")["hopfield.capacity.d3"], reps=20, budget=False)
    >>> c["worst_pass_rate"] <= MAX_ALTERNATIVE, c["reps"]
    (True, 20)
    """
    sim = simulator_for(claim_id)
    try:
        setup = sim(record)
    except NotCovered as exc:
        return {"covered": False, "reason": str(exc)}
    table = rates(setup, reps)
    worst = max(setup.alternatives, key=lambda n: table[n]["pass"])
    power = table[setup.theory]["pass"]
    out = {
        "covered": True,
        "simulator": sim.__name__,
        "theory": setup.theory,
        "rates": table,
        "power": power,
        "worst_alternative": worst,
        "worst_pass_rate": table[worst]["pass"],
        "reps": reps,
        "noise": dict(setup.noise),
        "budget": dict(setup.budget),
        "admissible": table[worst]["pass"] <= MAX_ALTERNATIVE,
    }
    if budget and power < TARGET_POWER and ("seeds" in setup.budget or "draws" in setup.budget):
        out["budget_for_power"] = _budget(sim, record, setup, reps)
    if budget and not out["admissible"] and ("seeds" in setup.budget or "draws" in setup.budget):
        out["budget_for_admissible"] = _admissible_budget(sim, record, setup, reps)
    return out


def _doubled(sim, record, setup: Setup):
    """The claim's simulation at doubling seed counts from its budget up to 64: (seeds, trial), or
    (seeds, the NotCovered that stopped it) as the last pair."""
    seeds = int(setup.budget.get("seeds", setup.budget.get("draws", 2)))
    while seeds < 64:
        seeds = min(64, seeds * 2)
        try:
            trial = sim(record, seeds)
        except NotCovered as exc:
            yield seeds, exc
            return
        yield seeds, trial


def _admissible_budget(sim, record, setup: Setup, reps: int) -> dict:
    """The smallest seed count (doubling, up to 64) at which every named alternative passes at
    most MAX_ALTERNATIVE of the time, or why none does (a rule whose boundary pass rate does not
    fall with seeds, such as a mean read as a point, is not mended by more of them)."""
    seeds, worst, table = None, None, {}
    for seeds, trial in _doubled(sim, record, setup):
        if isinstance(trial, NotCovered):
            return {"reached": False, "reason": str(trial)}
        table = rates(trial, max(reps // 2, 20))
        worst = max(trial.alternatives, key=lambda n: table[n]["pass"])
        if table[worst]["pass"] <= MAX_ALTERNATIVE:
            return {"reached": True, "seeds": seeds, "worst_pass_rate": table[worst]["pass"]}
    return {
        "reached": False,
        "seeds_tried": seeds,
        "worst_alternative": worst,
        "worst_pass_rate": table[worst]["pass"] if worst is not None else None,
        "reason": "an alternative still passes more than 5% at 64 seeds: more seeds do not mend the rule",
    }


def _budget(sim, record, setup: Setup, reps: int) -> dict:
    """The smallest seed count (doubling, up to 64) at which the power reaches TARGET_POWER."""
    seeds = int(setup.budget.get("seeds", setup.budget.get("draws", 2)))
    for seeds, trial in _doubled(sim, record, setup):
        if isinstance(trial, NotCovered):
            return {"reached": False, "reason": str(trial)}
        power = rates(Setup(trial.theory, {trial.theory: trial.laws[trial.theory]}), max(reps // 2, 20))[
            trial.theory
        ]["pass"]
        if power >= TARGET_POWER:
            return {"reached": True, "seeds": seeds, "power": power}
    return {"reached": False, "seeds_tried": seeds, "reason": "more than 64 seeds, or a larger grid"}


def stored(claim_id: str, scale: str = "quick") -> dict | None:
    """The stored operating characteristic of a claim at ``scale`` (:data:`STORE`), or None.

    >>> stored("no.such.claim") is None
    True
    """
    if not STORE.exists():
        return None
    return json.loads(STORE.read_text()).get(scale, {}).get(claim_id)


def summary(claim_id: str, scale: str = "quick") -> dict | None:
    """What a record and ``verify list`` carry as ``operating``: the stored characteristic's power,
    worst alternative and its pass rate, the replications and (power below 0.8) the budget that
    reaches it, (an alternative above 0.05) the budget at which none is; or ``covered`` False with the reason; None when nothing is stored.

    >>> summary("hopfield.capacity.gain")["worst_alternative"]
    'N_u e^kappa (c = 1)'
    """
    entry = stored(claim_id, scale)
    if entry is None:
        return None
    if not entry["covered"]:
        return {"covered": False, "reason": entry["reason"]}
    keys = (
        "power",
        "worst_alternative",
        "worst_pass_rate",
        "reps",
        "admissible",
        "budget_for_power",
        "budget_for_admissible",
    )
    return {"covered": True, **{k: entry[k] for k in keys if k in entry}}


__all__ = [
    "MAX_ALTERNATIVE",
    "STORE",
    "TARGET_POWER",
    "NotCovered",
    "Setup",
    "characteristic",
    "rates",
    "stored",
]
