"""The restated language-model statements and how they are judged on each model (docs/hopfield.md).

Every statement is a set of thresholds on means over prompts (pooled over the draws S, S+1, S+2),
each mean with a paired bootstrap 95% interval over prompts (the same resampled prompts for every
quantity of a statement). A statement passes when every lower end clears its threshold, fails when
an upper end misses one, and is inconclusive otherwise; the budget that would decide it is given
in prompts. A statement about "a pretrained model" is judged on every model it runs on and passes
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
