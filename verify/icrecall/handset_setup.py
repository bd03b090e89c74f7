"""What the icrecall claim modules on constructed memories and hand-set patterns share
(verify.icrecall.memories, .handset and .handset_context): the default world parameters and the
world they build, the hand-set parameters and the shared per-seed accuracies of the hand-set
patterns. Registers no claim."""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from constructions.icrecall.patterns import (
    PATTERNS,
    handset_pattern,
    mixed_input,
    pattern_accuracy,
    token_embeddings,
)
from constructions.icrecall.world import make_world, sample_icrecall, triplet_mlp
from verify.claims import Context, rng_for, shared

DEFAULTS = dict(
    n_subj=200, n_rel=5, n_ans_per_rel=20, dim=128, rho=1 / math.sqrt(2), theta=1.5, logit_scale=10.0
)


def _world(p, seed, rho=None):
    return make_world(
        p["n_subj"],
        p["n_rel"],
        p["n_ans_per_rel"],
        p["dim"],
        p["rho"] if rho is None else rho,
        rng_for(seed, "icrecall.memories.make_world"),
    )


def world_params(p: Mapping[str, Any]) -> dict:
    """The world's and the memory's parameters of ``p`` (the keys of :data:`DEFAULTS`).

    >>> world_params(dict(HANDSET, pattern="pairwise")) == DEFAULTS
    True
    """
    return {k: p[k] for k in DEFAULTS}


def _prompts(world, n_pairs: int, n_queries: int, seed: int, mode: str):
    rng = rng_for(seed, "icrecall.handset.sample_icrecall", n_pairs)
    return sample_icrecall(world, n_pairs, n_queries, rng, relation_mode=mode)


@shared
def _seed_accuracies(
    ctx, world: dict, n_pairs: int, n_queries: int, rho: float | None, mode: str, seed: int, patterns: tuple
) -> dict:
    """Per pattern, the accuracy on one seed's world, memory and prompts (built once for them all:
    the same numbers as one evaluation each)."""
    w = _world(world, seed, rho)
    prompts = _prompts(w, n_pairs, n_queries, seed, mode)
    mlp, X = triplet_mlp(w, world["theta"]), token_embeddings(w, prompts)
    omega = 2.0 / world["rho"]
    return {
        name: pattern_accuracy(mlp, prompts, handset_pattern(name, n_pairs), omega, world["logit_scale"], X=X)
        for name in patterns
    }


def handset_accuracies(
    p: Mapping[str, Any],
    ctx: Context,
    rho: float | None = None,
    mode: str = "single",
    n_pairs: int | None = None,
    patterns: tuple = PATTERNS,
) -> dict:
    """Per-seed accuracy of each hand-set pattern (omega = 2 / rho of the default rho), with the
    mean per pattern; ``rho`` overrides the world's alignment only (omega unchanged). Each seed's
    accuracies are shared through ctx (:func:`verify.claims.shared`).

    >>> p = dict(HANDSET, n_subj=30, dim=48, n_queries=100, n_seeds=2)
    >>> acc = handset_accuracies(p, Context(), patterns=("pairwise", "query_only"))
    >>> len(acc["per_seed"]["pairwise"]), acc["pairwise"] > acc["query_only"]
    (2, True)
    """
    n = p["n_pairs"] if n_pairs is None else n_pairs
    runs = [
        _seed_accuracies(ctx, world_params(p), n, p["n_queries"], rho, mode, seed, tuple(patterns))
        for seed in ctx.seeds(p["n_seeds"])
    ]
    out = {name: [r[name] for r in runs] for name in patterns}
    return {name: float(np.mean(v)) for name, v in out.items()} | {"per_seed": out}


@shared
def correct_preactivation(
    ctx: Context, world: dict, n_pairs: int, n_queries: int, n_seeds: int, rho: float
) -> list[float]:
    """Per seed, the mean over the prompts of the correct neuron's (s_q, r) pre-activation minus
    theta, <e_{s_q}, z> + <e_r, z> - theta, under the hand-set pairwise pattern with omega = 2 / rho
    of the default rho (``world``: :func:`world_params`), in a world whose answers carry the
    relation with alignment ``rho``: the theory's quantity of relation_signal_boundary (noise-free
    1 + rho / rho_0 - theta; the neuron fires iff rho > (theta - 1) rho_0). Same worlds and prompts
    as :func:`handset_accuracies`.

    >>> [round(v, 1) for v in correct_preactivation(Context(seed=0), DEFAULTS, 8, 200, 2, 2**-0.5)]
    [0.5, 0.5]
    """
    out = []
    for seed in ctx.seeds(n_seeds):
        w = _world(world, seed, rho)
        prompts = _prompts(w, n_pairs, n_queries, seed, "single")
        mlp = triplet_mlp(w, world["theta"])
        z = mixed_input(mlp, prompts, handset_pattern("pairwise", n_pairs), 2.0 / world["rho"])
        pre = np.einsum("kd,kd->k", z, w.subj[prompts.query]) + np.einsum(
            "kd,kd->k", z, w.rel[prompts.relation]
        )
        out.append(float(np.mean(pre)) - world["theta"])
    return out


def silence_judgement(bracket, pre: Mapping[float, list], rho_tests: list, rho_above: float, side: str):
    """rho_zero_fails' criterion (a :class:`verify.criteria.Judgement`): at each rho of ``pre`` (rho ->
    the per-seed mean pre-activation of the correct neuron minus theta, :func:`correct_preactivation`)
    the 95% Student-t interval over the seeds of its mean, read against 0 by a
    :class:`verify.criteria.Threshold` (theory: the neuron is silent where it lies wholly below 0,
    fires where it lies wholly above, undecided where it straddles 0). It breaks below when every rho
    of ``rho_tests`` is silent and holds above when ``rho_above`` fires: pass or fail as
    :meth:`verify.criteria.Bracket.judge_side` on those readings (``side`` "below": the claim,
    "above": its control, "it breaks" read at ``rho_above``), inconclusive with the seeds that would
    decide while an interval straddles 0.

    >>> from verify.criteria import Bracket
    >>> b = Bracket("rho", 0.354, 0.3, 0.4)
    >>> pre = {0.3: [-0.07, -0.08, -0.075], 0.4: [0.06, 0.07, 0.065]}
    >>> silence_judgement(b, pre, [0.3], 0.4, "below").verdict
    'pass'
    >>> silence_judgement(b, pre, [0.3], 0.4, "above").verdict
    'fail'
    >>> silence_judgement(b, {0.3: [-0.07, 0.08, -0.075], 0.4: [0.06, 0.07, 0.065]}, [0.3], 0.4, "below").verdict
    'inconclusive'
    """
    from verify.criteria import Threshold
    from verify.measure import t_interval

    if side not in ("below", "above"):
        raise ValueError(f"side must be 'below' or 'above', not {side!r}")
    values = [v for rho in [*rho_tests, rho_above] for v in pre[rho]]
    if not np.all(np.isfinite(values)):
        raise ValueError("a pre-activation of the correct neuron is NaN or infinite")
    reads = {
        rho: Threshold(
            f"mean pre-activation of the correct neuron minus theta at rho = {rho:.4g}, 95% interval",
            0.0,
            "<",
            "theory",
        ).judge(list(t_interval(pre[rho])), seeds=len(pre[rho]))
        for rho in [*rho_tests, rho_above]
    }
    below = [reads[r].verdict for r in rho_tests]  # pass: silent (breaks); fail: fires; inconclusive
    breaks_below = "fail" if "fail" in below else "pass" if set(below) == {"pass"} else "inconclusive"
    breaks_above = reads[rho_above].verdict
    if side == "below":  # breaks below and holds above
        verdict = (
            "fail"
            if "fail" == breaks_below or "pass" == breaks_above
            else "pass"
            if (breaks_below, breaks_above) == ("pass", "fail")
            else "inconclusive"
        )
    else:  # the control: "it breaks" read above
        verdict = breaks_above
    return bracket.side_read(side, verdict, breaks_below == "pass", breaks_above == "pass", reads)


HANDSET = dict(DEFAULTS, n_pairs=8, n_queries=2000, n_seeds=5)
HANDSET_FULL = dict(HANDSET, n_subj=20000, dim=512)
