"""Claims of IC-recall with hand-set attention patterns (docs/icrecall.md) [derived].

The one-layer model with a fixed pattern alpha, omega = 2/rho_0 (rho_0 = 1/sqrt 2 the design
alignment) and the triplet MLP. Each must-fail demonstration drops one hypothesis of the
construction. Where the hypothesis is a continuous parameter (the answers' relation alignment
rho) the demonstration is a :class:`verify.criteria.Bracket` around the theory's boundary, both
sides measured once and shared with the control; where it is structural (no context attended,
no answers attended, one relation per context) there is no boundary to straddle, the rule is
"it breaks on every seed" (:class:`verify.criteria.EverySeed`) and the control puts the
hypothesis back. Calibration seeds (where a bracket point was chosen) are 100..104, never the
judged seeds seed..seed+4. The shared accuracies are in :mod:`verify.icrecall.handset_setup`, the
context-length claim in :mod:`verify.icrecall.handset_context`.
"""

from __future__ import annotations

import numpy as np

from constructions.icrecall.patterns import PATTERNS
from theory.icrecall import SOURCE, pairwise_margin, relation_signal_boundary
from verify.claims import Control, claim
from verify.criteria import Bracket, EverySeed, Judgement, Threshold
from verify.icrecall.handset_setup import (
    HANDSET,
    HANDSET_FULL,
    correct_preactivation,
    handset_accuracies,
    silence_judgement,
    world_params,
)
from verify.measure import t_interval

#: thresholds of the hand-set claims: conventions (none is derived; 1/R is relation chance)
PAIRWISE_MIN = 0.98
QUERY_ONLY_SLACK = 0.05
SUBJECT_ONLY_MAX = 0.10
MIXED_MAX = 0.30
EVERY5 = "every seed of seed..seed+4 (each seed's accuracy recorded)"
#: pairwise's rule over seeds, named so that ``verify oc`` reads the spread back from the interval
PAIRWISE_SEEDS = (
    "95% Student-t interval of the mean over the 5 seeds seed..seed+4 (every per-seed value recorded)"
)


def _handset_details(acc):
    return {"patterns": list(PATTERNS), "accuracy": [acc[k] for k in PATTERNS], "per_seed": acc["per_seed"]}


@claim(
    "icrecall.handset.pairwise",
    source=SOURCE + ", pairwise attention pattern [abstract]",
    bounds=("icrecall.pairwise_margin",),
    provenance="derived",
    statement="the hand-set pairwise pattern (1/(2n) on each context token) with omega = 2/rho "
    f"and the triplet MLP solves IC-recall: the 95% Student-t interval over {{n_seeds}} seeds of the "
    f"mean accuracy lies at or above {PAIRWISE_MIN} (a convention; inconclusive when it straddles it) "
    "(n = {n_pairs}, {n_queries} prompts per seed)",
    templated=True,
    quick=dict(HANDSET, pattern="pairwise"),
    full=dict(HANDSET_FULL, pattern="pairwise"),
    seed_rule=PAIRWISE_SEEDS,
    controls=[
        Control(
            "query_only",
            {"pattern": "query_only"},
            "all attention on the query: the relation is not read from the context",
        ),
        Control(
            "answers_only",
            {"pattern": "answers_only"},
            "the same mass on the answers only: z = e_sq + 2 e_r, so every neuron "
            "(s', r) reaches 2 > theta and the other subjects' answers flood F(z)",
        ),
    ],
)
def _pairwise(p, ctx):
    """A :class:`verify.criteria.Threshold` (convention) on the 95% t-interval of the mean over
    seeds. Changed from the mean read as a point; pilot base seeds 100 and 101 (never judged) gave
    [0.993, 0.998] and [0.993, 0.997] at the same 5 seeds, so the seed count is unchanged. The
    point rule's verdict is kept in details["previous_criterion"]. The seed rule names the Student-t
    interval (it said "mean over the 5 seeds", which ``verify oc`` could not read as an interval):
    the rule and its verdicts are unchanged, and the claim is now simulated."""
    acc = handset_accuracies(p, ctx)
    margin = pairwise_margin(p["n_pairs"], p["rho"], p["theta"])
    per_seed = acc["per_seed"][p["pattern"]]
    judgement = Threshold(
        f"mean accuracy over {p['n_seeds']} seeds ({p['pattern']} pattern), 95% interval",
        PAIRWISE_MIN,
        ">=",
        "convention",
    ).judge(t_interval(per_seed), seeds=len(per_seed))
    return judgement, _handset_details(acc) | {"margin": margin, "pattern": p["pattern"]}


def _structural_fail(
    acc: dict, name: str, ceiling: float, quantity: str, seeds: list
) -> tuple[Judgement, dict]:
    """A structural must-fail: the accuracy of pattern ``name`` must stay <= ``ceiling`` on every
    seed (:class:`verify.criteria.EverySeed`); the earlier rule on the mean over the seeds is
    kept in details["previous_criterion"] (measured once and stored: verify.previous)."""
    judgement = EverySeed(quantity, ceiling, "<=", "convention").judge(acc["per_seed"][name], seeds=seeds)
    return judgement, _handset_details(acc) | {"ceiling": ceiling}


@claim(
    "icrecall.handset.query_only_fails",
    source=SOURCE + ", failure modes (docs/icrecall.md)",
    provenance="derived",
    demonstrates_failure=True,
    statement="MUST FAIL without context: query-only attention leaves the relation unidentified, "
    f"accuracy <= 1/R + {QUERY_ONLY_SLACK} (R = {{n_rel}}) on every one of {{n_seeds}} seeds. "
    "Attending to the context or not is structural (no parameter to bracket): the control "
    "attends to the context pairs. It tests a convention (the slack over chance) and cites no bound",
    templated=True,
    quick=dict(HANDSET, pattern="query_only"),
    full=dict(HANDSET_FULL, pattern="query_only"),
    seed_rule=EVERY5,
    controls=[
        Control(
            "context_attended",
            {"pattern": "pairwise"},
            "the other side: the query's attention moved to the context pairs, the "
            "relation is read and accuracy exceeds relation chance",
        )
    ],
)
def _query_only(p, ctx):
    acc = handset_accuracies(p, ctx)
    ceiling = 1.0 / p["n_rel"] + QUERY_ONLY_SLACK
    quantity = f"accuracy ({p['pattern']} pattern; 1/R + {QUERY_ONLY_SLACK})"
    return _structural_fail(acc, p["pattern"], ceiling, quantity, ctx.seeds(p["n_seeds"]))


@claim(
    "icrecall.handset.subject_only_fails",
    source=SOURCE + ", failure modes (docs/icrecall.md)",
    provenance="derived",
    demonstrates_failure=True,
    statement="MUST FAIL: attending to the context subjects only (no answers, no query) gives "
    f"accuracy <= {SUBJECT_ONLY_MAX} on every one of {{n_seeds}} seeds. Attending to the answers "
    "or not is structural (no parameter to bracket): the control moves half of the mass to them. It "
    "tests a convention (the accuracy ceiling) and cites no bound",
    templated=True,
    quick=dict(HANDSET, pattern="subjects_only"),
    full=dict(HANDSET_FULL, pattern="subjects_only"),
    seed_rule=EVERY5,
    controls=[
        Control(
            "answers_added",
            {"pattern": "pairwise"},
            "the other side: half of the mass moved to the answers, which carry the "
            "relation; accuracy rises above 0.10",
        )
    ],
)
def _subject_only(p, ctx):
    acc = handset_accuracies(p, ctx)
    quantity = f"accuracy ({p['pattern']} pattern)"
    return _structural_fail(acc, p["pattern"], SUBJECT_ONLY_MAX, quantity, ctx.seeds(p["n_seeds"]))


RHO_FAIL = dict(HANDSET, rho_tests=[0.0, 0.2, 0.3], rho_above=0.4, rho_side="below")


@claim(
    "icrecall.handset.rho_zero_fails",
    source=SOURCE + ", failure modes (docs/icrecall.md)",
    bounds=("icrecall.relation_signal_boundary",),
    provenance="derived",
    demonstrates_failure=True,
    statement="MUST FAIL when answers carry too little relation signal: with omega kept at "
    "2/rho_0 = 2 sqrt 2 the correct neuron (s_q, r) of the pairwise pattern sits at 1 + rho/rho_0 "
    "(noise-free) and fires iff rho > (theta - 1) rho_0 = 0.354 (relation_signal_boundary); at "
    "every rho in {rho_tests} its pre-activation minus theta, averaged over the prompts, has a 95% "
    "Student-t interval over {n_seeds} seeds of its mean below 0 (the neuron is silent), and across "
    "the boundary (rho = {rho_above}) one above 0 (inconclusive while an interval straddles 0). Bracket around 0.354 at the largest rho of rho_tests and at rho_above, both sides "
    "measured, judged by that pre-activation (the theory's quantity); resolution max(0.354/0.3, "
    "0.4/0.354) = 1.18. The accuracy is recorded (it stays above 0.1 inside the noise band below "
    "the boundary)",
    templated=True,
    quick=RHO_FAIL,
    full=dict(HANDSET_FULL, rho_tests=[0.0, 0.2, 0.3], rho_above=0.4, rho_side="below"),
    seed_rule="95% Student-t interval of the mean over the 5 seeds seed..seed+4, at each rho (every "
    "per-seed value recorded)",
    controls=[
        Control(
            "rho_0.4",
            {"rho_side": "above"},
            "the other side of the bracket: rho = 0.4 = 1.13 x the boundary, the correct neuron sits "
            "at 1 + 0.4 sqrt 2 = 1.57 > theta (noise-free), so its mean pre-activation exceeds theta",
        ),
    ],
)
def _rho_zero(p, ctx):
    """A :class:`verify.criteria.Bracket` around relation_signal_boundary: it breaks (the correct
    neuron's mean pre-activation <= theta) at every rho of rho_tests, the largest being the
    bracket's below point, and holds at rho_above; both sides are measured (shared through ctx),
    the claim reads the below side and its control ``rho_side="above"`` the above side.

    Was judged by "mean accuracy <= 0.10" (a convention) at rho 0.2 | 0.5: the accuracy does not
    break where the theory puts the boundary (0.29-0.36 at rho = 0.3 < 0.354, the former control
    rho_0.3), so the bracket sat at 1.77x; the old rule's verdict at the old points is kept in
    details["previous_criterion"].

    Each side is read on the 95% Student-t interval over the seeds of the mean pre-activation
    (:func:`verify.icrecall.handset_setup.silence_judgement`; silent where it lies below 0,
    inconclusive where it straddles 0). Until then the mean over the seeds was read as a point
    (silent iff mean <= 0), which kept no spread for ``verify oc`` (not covered: "a bracket of two
    verdicts") and would pass half of the time with a mean on 0. At base seed 0 both rules pass
    (rho = 0.3: mean -0.076, per-seed sd 0.0085; rho = 0.4: +0.065); the points and the seed count
    are unchanged. ``verify oc`` simulates it (verify.oc.simulators.rho_bracket)."""
    if p["rho_side"] not in ("below", "above"):
        raise ValueError(f"rho_side={p['rho_side']!r} must be 'below' or 'above'")
    boundary = relation_signal_boundary(p["rho"], p["theta"])
    bracket = Bracket("rho", boundary, max(p["rho_tests"]), p["rho_above"])

    def mean_acc(rho):
        return handset_accuracies(p, ctx, rho=rho, patterns=("pairwise",))

    world = world_params(p)
    pre = {
        rho: correct_preactivation(ctx, world, p["n_pairs"], p["n_queries"], p["n_seeds"], rho)
        for rho in [*p["rho_tests"], p["rho_above"]]
    }
    judgement = silence_judgement(bracket, pre, list(p["rho_tests"]), p["rho_above"], p["rho_side"])
    rows = [mean_acc(r) for r in p["rho_tests"]]
    accs = [r["pairwise"] for r in rows]
    above = mean_acc(p["rho_above"])
    return judgement, {
        "bracket": {
            "bound": "icrecall.relation_signal_boundary",
            "quantity": "rho",
            "boundary": boundary,
            "below": bracket.below,
            "above": bracket.above,
            "factor": bracket.factor,
            "breaks_by": "mean pre-activation of the correct neuron (s_q, r) minus theta <= 0",
        },
        "rho_tests": list(p["rho_tests"]),
        "correct_preactivation_minus_theta": {str(r): float(np.mean(v)) for r, v in pre.items()},
        "correct_preactivation_per_seed": {str(r): v for r, v in pre.items()},
        "noise_free_preactivation_minus_theta": {
            str(r): 1 + r / p["rho"] - p["theta"] for r in [*p["rho_tests"], p["rho_above"]]
        },
        "accuracy": accs[0],
        "accuracy_per_rho": accs,
        "accuracy_above": above["pairwise"],
        "rho_above": p["rho_above"],
        "boundary": boundary,
        "per_seed": [r["per_seed"]["pairwise"] for r in rows],
        "per_seed_above": above["per_seed"]["pairwise"],
    }


@claim(
    "icrecall.handset.mixed_relations_fail",
    source=SOURCE + ", failure modes (docs/icrecall.md)",
    provenance="derived",
    demonstrates_failure=True,
    statement="MUST FAIL when each context pair draws its own relation: the hand-set pairwise "
    f"pattern gives accuracy <= {MIXED_MAX} on every one of {{n_seeds}} seeds. One relation per "
    "context or not is structural (no parameter to bracket): the control generates every pair "
    "from the target relation. It tests a convention (the accuracy ceiling) and cites no bound",
    templated=True,
    quick=dict(HANDSET, mode="mixed"),
    full=dict(HANDSET_FULL, mode="mixed"),
    seed_rule=EVERY5,
    controls=[
        Control(
            "one_relation",
            {"mode": "single"},
            "the other side: every pair generated by the target relation, the "
            "relation coefficient is back to 1 and accuracy exceeds 0.30",
        )
    ],
)
def _mixed(p, ctx):
    acc = handset_accuracies(p, ctx, mode=p["mode"], patterns=("pairwise",))
    judgement = EverySeed(
        f"accuracy (pairwise pattern, {p['mode']} relations)", MIXED_MAX, "<=", "convention"
    ).judge(acc["per_seed"]["pairwise"], seeds=ctx.seeds(p["n_seeds"]))
    return judgement, {"accuracy": acc["pairwise"], "per_seed": acc["per_seed"]}
