"""The restated language-model statements and how they are judged on each model (docs/hopfield.md).

Every statement is a set of thresholds on means over prompts. The claims judge them over the
probe's draws S, S+1, ... (:func:`judge_draws`: each draw's mean is one replicate, with a 95%
Student-t interval over the draws); :func:`judge_parts`, the earlier rule, pooled the prompts of
three draws with a paired bootstrap 95% interval over prompts (the same resampled prompts for
every quantity of a statement). Either passes when every lower end clears its threshold, fails
when an upper end misses one, and is inconclusive otherwise, with the budget that would decide it
(in draws, or in prompts). The override statement is judged on every draw on margins that decide
its rates there (:func:`override_margin_judgement`). A statement about "a pretrained model" is judged on every model it runs on and passes
when it passes on all of them; a statement formed while exploring one model is judged on the
confirmation model only, and the exploration model's numbers are recorded as exploratory.

The thresholds are fixed before any run on judged seeds and are ours ("convention"): the hopfield
paper's abstract gives no number for a pretrained model. [derived] throughout.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from verify.claims import rng_for
from verify.criteria import Judgement, Threshold, all_of, seeds_to_decide

N_BOOT = 2000


@dataclass(frozen=True)
class Part:
    """One threshold of a statement: the mean over prompts of ``column`` (a per-prompt quantity
    named by its formula ``quantity``) must be ``side`` ``value``.

    >>> Part("acc1_V - accf_V", -0.15).threshold.text
    'acc1_V - accf_V >= -0.15 (convention)'
    """

    quantity: str
    value: float
    side: str = ">="

    @property
    def threshold(self) -> Threshold:
        return Threshold(self.quantity, self.value, self.side, "convention")


def bootstrap_indices(n: int, seed: int, n_boot: int = N_BOOT) -> np.ndarray:
    """(n_boot, n) prompt indices resampled with replacement, from ``rng_for(seed, 97, n)``: every
    quantity of one statement on one model reads the same rows (a paired bootstrap).

    >>> bootstrap_indices(5, 0, 3).shape
    (3, 5)
    """
    if n < 2:
        raise ValueError(f"a bootstrap interval needs at least 2 prompts, got {n}")
    gen = rng_for(int(seed), "hopfield.lm_statements.integers", int(n))
    return gen.integers(0, n, size=(int(n_boot), int(n)))


def mean_interval(values: Sequence[float], idx: np.ndarray) -> tuple[float, float, float]:
    """(mean, 2.5th, 97.5th percentile of the bootstrap means) of per-prompt values.

    >>> mean_interval([1.0, 1.0, 1.0], bootstrap_indices(3, 0, 50))
    (1.0, 1.0, 1.0)
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or len(v) != idx.shape[1]:
        raise ValueError(f"{len(v)} values against bootstrap rows of {idx.shape[1]} prompts")
    if not np.all(np.isfinite(v)):
        raise ValueError("a per-prompt value is not finite")
    boots = v[idx].mean(axis=1)
    lo, hi = np.percentile(boots, [2.5, 97.5])
    return float(v.mean()), float(lo), float(hi)


def judge_parts(parts: Mapping[Part, Sequence[float]], seed: int) -> Judgement:
    """One statement on one model: every part's mean with its paired bootstrap interval, judged
    by its threshold; combined with :func:`verify.criteria.all_of`. An inconclusive part's budget
    is the number of prompts at which its interval would clear (half-width ~ 1/sqrt(prompts)).

    >>> ok = judge_parts({Part("acc", 0.5): [1.0] * 20}, seed=0)
    >>> ok.verdict, ok.measured["acc"]["acc"], ok.measured["acc"]["mean"]
    ('pass', [1.0, 1.0], 1.0)
    >>> judge_parts({Part("acc", 0.5): [1.0, 0.0] * 10}, seed=0).verdict
    'inconclusive'
    """
    lengths = {len(v) for v in parts.values()}
    if len(lengths) != 1:
        raise ValueError(f"the parts of one statement need the same prompts, got lengths {sorted(lengths)}")
    n = lengths.pop()
    idx = bootstrap_indices(n, seed)
    judged = {}
    for part, values in parts.items():
        mean, lo, hi = mean_interval(values, idx)
        j = part.threshold.judge([lo, hi])
        j = dataclasses.replace(j, measured={part.quantity: [lo, hi], "mean": mean, "prompts": n})
        if j.verdict == "inconclusive":
            needed = abs((lo + hi) / 2 - part.value)
            budget = f"about {seeds_to_decide((hi - lo) / 2, needed, n)} prompts" if needed > 0 else "none"
            j = dataclasses.replace(j, budget=budget)
        judged[part.quantity] = j
    return all_of(**judged)


def per_draw_means(values: Sequence[float], draws: Sequence[int]) -> dict[int, float]:
    """draw -> the mean of the per-prompt ``values`` of that draw (draws in increasing order).

    >>> per_draw_means([1.0, 0.0, 1.0, 1.0], [5, 5, 6, 6])
    {5: 0.5, 6: 1.0}
    """
    v, d = np.asarray(values, dtype=float), np.asarray(draws)
    if v.ndim != 1 or v.shape != d.shape:
        raise ValueError(f"{len(v)} per-prompt values against {len(d)} draw labels")
    if not np.all(np.isfinite(v)):
        raise ValueError("a per-prompt value is not finite")
    return {int(k): float(v[d == k].mean()) for k in sorted(set(d.tolist()))}


def judge_draws(parts: Mapping[Part, Sequence[float]], draws: Sequence[int]) -> Judgement:
    """One statement on one model, judged over the probe's draws (the replicates): each part's
    per-prompt values averaged within each draw, and the 95% Student-t interval of the mean of
    those per-draw means (:func:`verify.measure.t_interval`) judged by the part's threshold (pass
    when it clears, fail when it misses, inconclusive when it straddles, with the budget in
    draws); combined with :func:`verify.criteria.all_of`. The record keeps every draw's mean in
    the part's ``per_draw`` and the draws in ``draws``.

    >>> d = [0, 0, 1, 1, 2, 2]
    >>> judge_draws({Part("acc", 0.5): [1.0, 1.0, 1.0, 0.0, 1.0, 1.0]}, d).verdict
    'inconclusive'
    >>> j = judge_draws({Part("acc", 0.5): [0.0, 0.0, 0.0, 0.5, 0.0, 0.0]}, d)
    >>> j.verdict, j.measured["acc"]["per_draw"]
    ('fail', [0.0, 0.25, 0.0])
    """
    from verify.measure import t_interval

    lengths = {len(v) for v in parts.values()}
    if len(lengths) != 1 or lengths != {len(draws)}:
        raise ValueError(
            f"the parts of one statement need the same prompts, got lengths {sorted(lengths)} "
            f"for {len(draws)} draw labels"
        )
    judged = {}
    for part, values in parts.items():
        means = per_draw_means(values, draws)
        if len(means) < 2:
            raise ValueError(f"a Student-t interval over draws needs at least 2 draws, got {len(means)}")
        x = list(means.values())
        lo, hi = t_interval(x) if np.ptp(x) > 0 else (x[0], x[0])
        j = part.threshold.judge([lo, hi], seeds=len(x), unit="draws")
        measured = {part.quantity: [lo, hi], "mean": float(np.mean(x)), "per_draw": x}
        judged[part.quantity] = dataclasses.replace(j, measured={**measured, "draws": list(means)})
    return all_of(**judged)


def verdict_of(judgement: Judgement) -> dict:
    """The record of one model's judgement: verdict, numbers with intervals, resolution, budget.

    >>> verdict_of(judge_parts({Part("acc", 0.5): [1.0] * 20}, seed=0))["verdict"]
    'pass'
    """
    return {
        "verdict": judgement.verdict,
        "predicted": dict(judgement.predicted),
        "measured": dict(judgement.measured),
        "resolution": dict(judgement.resolution),
        "budget": judgement.budget,
    }


def across_models(per_model: Mapping[str, Judgement], judged_on: Sequence[str]) -> Judgement:
    """The statement's judgement: :func:`verify.criteria.all_of` over the models it is judged on
    (the others' numbers are recorded beside it, not judged).

    >>> a = judge_parts({Part("acc", 0.5): [1.0] * 20}, seed=0)
    >>> b = judge_parts({Part("acc", 0.5): [0.0] * 20}, seed=0)
    >>> across_models({"m1": a, "m2": b}, ["m1"]).verdict, across_models({"m1": a, "m2": b}, ["m1", "m2"]).verdict
    ('pass', 'fail')
    """
    chosen = {m: per_model[m] for m in judged_on if m in per_model}
    if not chosen:
        raise ValueError(f"none of the judged models {list(judged_on)} ran (ran: {sorted(per_model)})")
    return all_of(**chosen)


# ---------------------------------------------------------------------------------------------
# the statements: per-prompt columns -> parts (rows of constructions.hopfield.lm.probe, pooled)
def first_order_parts(rows: Mapping[str, Sequence[float]], acc1_key: str = "acc1_V") -> dict:
    """Restated first order: the gated first-order prediction recalls the answer nearly as well as
    the full prompt (acc1_V >= accf_V - 0.15) and better than the query alone (acc1_V >= acc0_V +
    0.1). ``acc1_key`` names the column of the first-order prediction (a control swaps it).

    >>> parts = first_order_parts({"acc1_V": [1.0, 1.0], "accf_V": [1.0, 0.0], "acc0_V": [0.0, 0.0]})
    >>> [p.quantity for p in parts]
    ['acc1_V - accf_V', 'acc1_V - acc0_V']
    """
    a1, af, a0 = (np.asarray(rows[k], float) for k in (acc1_key, "accf_V", "acc0_V"))
    return {Part("acc1_V - accf_V", -0.15): a1 - af, Part("acc1_V - acc0_V", 0.1): a1 - a0}


def zero_shot_parts(rows: Mapping[str, Sequence[float]], acc0c_key: str = "acc0_C") -> dict:
    """Restated zero-shot discrimination: on a model that recalls (accf_V >= 0.5), the zero-shot
    query ranks the answer within C far above chance (acc0_C >= 3/|C|, both means over prompts)
    and nearly as well as the full prompt recalls it over V (acc0_C - accf_V >= -0.1).

    >>> [p.quantity for p in zero_shot_parts({"acc0_C": [1.0], "accf_V": [1.0], "chance3": [0.1]})]
    ['accf_V', 'acc0_C - 3/|C|', 'acc0_C - accf_V']
    """
    c0, af, ch = (np.asarray(rows[k], float) for k in (acc0c_key, "accf_V", "chance3"))
    return {
        Part("accf_V", 0.5): af,
        Part("acc0_C - 3/|C|", 0.0): c0 - ch,
        Part("acc0_C - accf_V", -0.1): c0 - af,
    }


def margin_parts(rows: Mapping[str, Sequence[float]]) -> dict:
    """The margin statement: the full prompt raises the answer's margin over the other candidates
    (margin_full > margin_0) in at least 70% of prompts and the candidate mass m_C (mass_full >
    mass_0) in at least 80%: per-prompt 0/1 indicators whose means are those rates.

    >>> parts = margin_parts({"margin0": [0.0, 1.0], "marginf": [1.0, 0.5], "mass0": [0.1, 0.2],
    ...                       "massf": [0.5, 0.6]})
    >>> {p.quantity: v.tolist() for p, v in parts.items()}
    {'margin_up_rate': [1.0, 0.0], 'mass_up_rate': [1.0, 1.0]}
    """
    m0, mf, s0, sf = (np.asarray(rows[k], float) for k in ("margin0", "marginf", "mass0", "massf"))
    return {
        Part("margin_up_rate", 0.7): (mf > m0).astype(float),
        Part("mass_up_rate", 0.8): (sf > s0).astype(float),
    }


def override_parts(
    rows: Sequence[Mapping], follows_key: str = "follows", predicted_key: str = "predicted"
) -> dict:
    """The override needs the query to meet the context: at the largest repetition count the
    model answers the counterfactual for at least half of the facts it knows (override >= 0.5),
    while the first-order prediction from the same context with a placeholder subject predicts
    the counterfactual for at most a quarter (predicted <= 0.25). The control swaps in the rows
    of the counterfactual context told about another subject (``follows_key``, ``predicted_key``).

    >>> rows = [{"n": 4, "follows": True, "predicted": False}] * 3
    >>> [p.quantity for p in override_parts(rows)]
    ['override rate', 'first-order predicted rate']
    """
    top = max(r["n"] for r in rows)
    at = [r for r in rows if r["n"] == top and follows_key in r]
    if len(at) < 2:
        raise ValueError(
            f"the override statement needs rows with {follows_key!r} at n = {top}; found {len(at)}"
        )
    return {
        Part("override rate", 0.5): np.array([float(r[follows_key]) for r in at]),
        Part("first-order predicted rate", 0.25, "<="): np.array([float(r[predicted_key]) for r in at]),
    }


def kth_largest(values: Sequence[float], k: int) -> float:
    """The ``k``-th largest of ``values`` (1-based).

    >>> kth_largest([0.5, -1.0, 2.0, 0.0], 2)
    0.5
    """
    v = np.sort(np.asarray(values, dtype=float))[::-1]
    if not 1 <= k <= len(v):
        raise ValueError(f"the {k}-th largest of {len(v)} values does not exist")
    if not np.all(np.isfinite(v)):
        raise ValueError("a margin is not finite")
    return float(v[k - 1])


#: the quantities of the override statement judged on every draw (override_margin_judgement)
OVERRIDE_MARGIN = "margin of Y at the ceil(n/2)-th largest fact"
PREDICTED_MARGIN = "first-order margin of Y at the (floor(n/4)+1)-th largest fact"


def override_margin_judgement(
    rows: Sequence[Mapping], follows_key: str = "follows", predicted_key: str = "predicted"
):
    """The override statement judged on every draw (the rows' ``seed``) at the largest repetition
    count, on margins instead of rates, which decide the same thing on each draw: of the n facts
    of a draw, at least half are overridden (override rate >= 0.5) exactly when the ceil(n/2)-th
    largest margin of Y over the best other capital (``<follows_key>_margin``) is > 0, and at
    most a quarter are predicted by the first-order prediction (rate <= 0.25) exactly when the
    (floor(n/4)+1)-th largest first-order margin (``<predicted_key>_margin``) is <= 0 (ties
    aside). :class:`verify.criteria.EverySeed` over the draws: every draw must clear both; the
    record keeps every draw's margin (continuous, so ``verify oc`` draws from their spread).

    >>> rows = [{"n": 4, "seed": d, "follows_margin": m, "predicted_margin": -1.0}
    ...         for d, m in [(0, 2.0), (0, -1.0), (1, 3.0), (1, 1.0)]]
    >>> j = override_margin_judgement(rows)
    >>> j.verdict, j.measured["override"][OVERRIDE_MARGIN]
    ('pass', [2.0, 3.0])
    """
    from verify.criteria import EverySeed

    top = max(r["n"] for r in rows)
    fk, pk = f"{follows_key}_margin", f"{predicted_key}_margin"
    at = [r for r in rows if r["n"] == top and fk in r]
    draws = sorted({int(r["seed"]) for r in at})
    if not draws:
        raise ValueError(f"the override statement needs rows with {fk!r} at n = {top}; found none")
    over, pred = [], []
    for d in draws:
        mine = [r for r in at if int(r["seed"]) == d]
        n = len(mine)
        over.append(kth_largest([r[fk] for r in mine], -(-n // 2)))
        pred.append(kth_largest([r[pk] for r in mine], n // 4 + 1))
    return all_of(
        override=EverySeed(OVERRIDE_MARGIN, 0.0, ">", "convention", unit="draws").judge(over, seeds=draws),
        first_order=EverySeed(PREDICTED_MARGIN, 0.0, "<=", "convention", unit="draws").judge(
            pred, seeds=draws
        ),
    )
