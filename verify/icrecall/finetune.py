"""Claims of IC-recall on fine-tuned models (docs/icrecall.md#the-fine-tuned-model).

The main model is P-full: a fully trained W_KQ in R^{d x d} (init 4 I) with slot embeddings in
the attention scores, the triplet MLP frozen, W_OV = (2/rho) I. Two calibrations of ours
[derived], both recorded in every claim's parameters:
- the slot embeddings enter queries and keys but not the values fed to the frozen memory
  (``slot_values=False``): with them in the values (the formalisation read literally) a pilot at S=200,
  d=128 reached 0.92 at N_train=1024 against 0.97 without, and at lr 0.05 training collapsed to
  subject-only attention (accuracy 0.15); the memory was built on position-free inputs;
- Adam lr 0.005 for P-full (the formalisation's 0.05 is kept for P-struct): sign-like Adam steps of 0.05
  on all d^2 entries move x^T W x by about 0.05 * 2d/pi per step.
Quick scale shrinks sizes (D = 10 answers per relation; d = ceil(32 ln N_f), the heuristic memory dimension of
docs/icrecall.md); the model class is unchanged. Every training claim runs 3 seeds (seed..seed+2) with the
rule in its ``seed_rule``; the runs are shared (:func:`verify.claims.shared`), so the claims on the
same runs (solves, pattern_emerges, unseen_facts) train each seed once. The pretrained-MLP variant is
in :mod:`verify.icrecall.pretrained`, the ledger in :mod:`verify.icrecall.ledger`, N* against the
number of subjects with and without slot embeddings in :mod:`verify.icrecall.subjects`.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from theory.icrecall import SOURCE, relation_chance_ceiling
from verify.claims import Context, Control, claim
from verify.criteria import EverySeed, Sequential, all_of, run_staged
from verify.icrecall.finetune_setup import (
    EVERY3,
    INIT,
    PATTERN_STATEMENT,
    PFULL,
    PFULL_FULL,
    STRUCT_ABLATION,
    pattern_outcome,
    train_run,
)

TRAJECTORY_EVERY = 40


def seed_runs(p: Mapping[str, Any], ctx: Context, **kw) -> list[dict]:
    """One :func:`train_run` per seed of seed..seed+n_seeds-1, recording the trajectory every
    TRAJECTORY_EVERY steps (the dynamics, not only the endpoints).

    >>> p = dict(PFULL, n_subj=8, n_rel=3, n_ans_per_rel=4, dim=40, n_pairs=3, n_test=50, steps=3)
    >>> [len(r["trajectory"]) for r in seed_runs(dict(p, n_seeds=2), Context(), n_train=4)]
    [2, 2]
    """
    kw.setdefault("record_every", TRAJECTORY_EVERY)
    return [train_run(p, ctx, seed=s, **kw) for s in ctx.seeds(p["n_seeds"])]


@claim(
    "icrecall.finetune.solves",
    source=SOURCE + ", fine-tuning solves IC-recall [abstract]",
    provenance="derived",
    statement="fine-tuning W_KQ (P-full, slot embeddings, MLP frozen) from the query-heavy init "
    "solves IC-recall: held-out accuracy <= 0.5 at init and >= 0.95 after training "
    "(N_train = {n_train}, {steps} steps), in every one of {n_seeds} seeds",
    templated=True,
    quick=PFULL,
    full=PFULL_FULL,
    seed_rule=EVERY3,
    controls=[INIT],
)
def _solves(p, ctx):
    runs = seed_runs(p, ctx)
    struct = (
        seed_runs(p, ctx, param="struct", slots=False, record_every=None, **STRUCT_ABLATION)
        if p["steps"]
        else []
    )
    seeds = ctx.seeds(p["n_seeds"])
    judgement = all_of(
        init=EverySeed("held-out accuracy at init", 0.5, "<=", "convention").judge(
            [r["acc_init"] for r in runs], seeds
        ),
        after=EverySeed("held-out accuracy after fine-tuning", 0.95, ">=", "convention").judge(
            [r["acc"] for r in runs], seeds
        ),
    )
    return judgement, {
        "seeds": seeds,
        "acc_per_seed": [r["acc"] for r in runs],
        "acc_init_per_seed": [r["acc_init"] for r in runs],
        "p_full": runs[0],
        "trajectory_per_seed": [r["trajectory"] for r in runs],
        "p_struct_ablation_acc": [r["acc"] for r in struct],
        "p_struct_ablation": struct[0] if struct else None,
    }


@claim(
    "icrecall.finetune.pattern_emerges",
    source=SOURCE + ", pairwise attention pattern [abstract]",
    provenance="derived",
    statement="after fine-tuning (as finetune.solves) the attention moves off the query onto "
    "balanced (subject, answer) pairs: " + PATTERN_STATEMENT + ", every one of {n_seeds} seeds",
    templated=True,
    quick=PFULL,
    full=PFULL_FULL,
    seed_rule=EVERY3,
    controls=[INIT],
)
def _pattern(p, ctx):
    keys = ("pair_uniformity", "query_share", "imbalance")
    return pattern_outcome(seed_runs(p, ctx), ctx.seeds(p["n_seeds"]), keys)


@claim(
    "icrecall.finetune.unseen_facts",
    source=SOURCE,
    provenance="derived",
    statement="with N_train < S (N_train = {n_train}, S = {n_subj}), held-out accuracy on queries "
    "whose subject never was a training query is within 0.05 of the accuracy on seen query "
    "subjects, in every one of {n_seeds} seeds",
    templated=True,
    quick=PFULL,
    # PFULL_FULL has N_train = 256 >= S = 200, which leaves no unseen query subject (the full run of
    # 2026-12-01 stopped on that ValueError); the full setting keeps N_train = 128 < S
    full=dict(PFULL_FULL, n_train=128),
    seed_rule=EVERY3,
    controls=[
        Control(
            "no_slots",
            {"slots": False, "n_seeds": 1},
            "P-full without slot embeddings learns per query subject (our "
            "pilot): unseen query subjects stay near their init accuracy",
        )
    ],
)
def _unseen(p, ctx):
    if p["n_train"] >= p["n_subj"]:
        raise ValueError(
            f"n_train={p['n_train']} must be < n_subj={p['n_subj']} so that unseen query subjects exist"
        )
    runs = seed_runs(p, ctx)
    gaps = [abs(r["acc_unseen"] - r["acc_seen"]) for r in runs]
    judgement = EverySeed("|acc_unseen - acc_seen|", 0.05, "<=", "convention").judge(
        gaps, ctx.seeds(p["n_seeds"])
    )
    return judgement, {
        "gap_per_seed": gaps,
        "slots": p["slots"],
        "per_seed": [{k: r[k] for k in ("acc_unseen", "acc_seen", "n_unseen", "acc")} for r in runs],
    }


#: the staged looks of unseen_facts_staged (verify.criteria.Sequential; see UNSEEN_PILOT)
UNSEEN_LOOKS = (3, 6, 12)
#: the pilot that fixed UNSEEN_LOOKS: the signed gap acc_unseen - acc_seen of P-full at quick scale,
#: seeds 100-111 (never judged; revision 51028dc): mean 0.013, sd 0.027. Simulated with
#: gap_judgement on normal draws at that spread (1000 runs each): looks (3, 6) pass 0.79, (3, 6, 12)
#: 0.98 (7.4 seeds on average), (3, 6, 12, 24) 1.00; a mean on +0.05 or -0.05 passes 0.03-0.05 at
#: every choice. (3, 6, 12) is taken
UNSEEN_PILOT = {
    "seeds": list(range(100, 112)),
    "revision": "51028dc",
    "gaps": [0.0367, 0.036, 0.0257, 0.0369, 0.0033, -0.0093, -0.0031, 0.008, -0.054, 0.0273, 0.0163, 0.0343],
    "power": {"3,6": 0.79, "3,6,12": 0.98, "3,6,12,24": 1.0},
}
#: the two-sided tolerance on the unseen - seen gap (a convention, unseen_facts' 0.05)
UNSEEN_TOL = 0.05


def gap_judgement(gaps: list[float], seeds: list, looks: tuple[int, ...] = UNSEEN_LOOKS):
    """unseen_facts_staged's criterion: the mean over seeds of the signed gap acc_unseen - acc_seen
    within +-0.05, two :class:`verify.criteria.Sequential` parts joined by
    :func:`verify.criteria.all_of` (``gap_low``: >= -0.05, ``gap_high``: <= 0.05; conventions),
    each judged in stages at ``looks`` by one-sided Student-t bounds (error 0.05 per direction over
    the looks); inconclusive while a bound straddles its side of the band.

    >>> gap_judgement([0.01, -0.02, 0.0], [0, 1, 2]).verdict
    'pass'
    >>> gap_judgement([-0.44, -0.45, -0.43], [0, 1, 2]).verdict
    'fail'
    """
    q = "mean gap acc_unseen - acc_seen"
    return all_of(
        gap_low=Sequential(q, -UNSEEN_TOL, ">=", "convention", looks).judge(gaps, seeds=seeds),
        gap_high=Sequential(q, UNSEEN_TOL, "<=", "convention", looks).judge(gaps, seeds=seeds),
    )


@claim(
    "icrecall.finetune.unseen_facts_staged",
    source=SOURCE,
    provenance="derived",
    statement="with N_train < S (N_train = {n_train}, S = {n_subj}), held-out accuracy on queries "
    "whose subject never was a training query is within 0.05 of the accuracy on seen query "
    "subjects on average over seeds: the mean over seeds of acc_unseen - acc_seen lies in "
    "[-0.05, 0.05], judged in stages at {looks} seeds by one-sided Student-t bounds (error 0.05 per "
    "direction over the looks; inconclusive when the last look does not decide). The 0.05 is a "
    "convention (unseen_facts' tolerance)",
    templated=True,
    quick=dict(PFULL, looks=list(UNSEEN_LOOKS)),
    full=dict(PFULL_FULL, n_train=128, looks=list(UNSEEN_LOOKS)),
    seed_rule="sequential looks over the seeds seed..seed+n-1 of the per-seed signed gap (a "
    "one-sided Student-t bound per look; per-seed values recorded)",
    controls=[
        Control(
            "no_slots",
            {"slots": False},
            "P-full without slot embeddings learns per query subject (our pilot): unseen query "
            "subjects stay near their init accuracy, far below the seen ones",
        )
    ],
)
def _unseen_staged(p, ctx):
    """The successor of unseen_facts, whose rule "|gap| <= 0.05 on every one of 3 seeds" flipped
    with the base seed (per-seed gaps 0.002-0.058 around the 0.05 tolerance; ledger, quick base seed
    11 and full base seed 0 fail). That claim stays, with its ledger entries, as history. Here the
    signed gap's mean over seeds is judged in stages (:func:`gap_judgement`): a mean well inside
    the band passes at 3 or 6 seeds, one on a bound stays inconclusive. The seeds seed..seed+2
    are finetune.solves' runs (shared). The looks (3, 6, 12) were fixed by simulation at the
    spread of pilot seeds 100-111 (never judged), recorded in :data:`UNSEEN_PILOT`."""
    if p["n_train"] >= p["n_subj"]:
        raise ValueError(
            f"n_train={p['n_train']} must be < n_subj={p['n_subj']} so that unseen query subjects exist"
        )
    looks = tuple(int(n) for n in p["looks"])
    seeds = ctx.seeds(looks[-1])

    def measure(s):
        return train_run(p, ctx, seed=s, record_every=TRAJECTORY_EVERY)

    def judge(runs):
        return gap_judgement([r["acc_unseen"] - r["acc_seen"] for r in runs], seeds[: len(runs)], looks)

    judgement, runs = run_staged(looks, seeds, measure, judge)
    return judgement, {
        "gap_per_seed": [r["acc_unseen"] - r["acc_seen"] for r in runs],
        "seeds": seeds[: len(runs)],
        "slots": p["slots"],
        "per_seed": [{k: r[k] for k in ("acc_unseen", "acc_seen", "n_unseen", "acc")} for r in runs],
    }


#: the seen-subject accuracy must exceed this (strictly; a convention), and the unseen-subject
#: accuracy must stay this close to its init value (a convention)
SEEN_ABOVE, UNSEEN_WITHIN = 0.8, 0.2
#: training sequences per subject, N_train = PER_SUBJECT * S. The statement's hypothesis is that a
#: seen query subject has been learned from its own training queries; at N_train <= S (the earlier
#: setting: 64 sequences for S = 200 at quick scale, 256 for S = 2000 at full) a seen subject was a
#: training query about once and the seen-subject accuracy sat at the 0.8 bar (quick base seed 0:
#: 0.830; another base seed 0.786; full 0.755). At k sequences per subject a seen subject was a
#: query about k / (1 - e^-k) times, and a fraction e^-k of the subjects never was. Pilot base seeds
#: 100-102 (never judged; S = 200, d = 128): seen 0.829 / 0.805 / 0.819 at k = 1 (unseen - init
#: 0.08 / 0.07 / 0.05), 0.872 / 0.891 / 0.861 at k = 2 (unseen - init 0.03 / 0.02 / 0.02); k = 2
#: keeps 14% of the subjects unseen (about 130 of the 1000 test prompts). Seeds: ``verify oc`` on a
#: run at pilot base seed 100 gave power 0.95 at 3 seeds; the reference run at base seed 0 spread
#: more at S = 50 (seen 0.79-0.98 as an interval: inconclusive, power 0.49) and oc named 6 seeds for
#: power 0.8 (1.00 there): 6 (raised after that judged inconclusive). Now the seeds are spent in
#: stages (verify.criteria.Sequential at NOSLOT_LOOKS), looks fixed by simulation at the spread of
#: pilot base seed 100 (NOSLOT_PILOT); the control runs the first look at the smallest S (it misses
#: the bar by 0.4 and more)
PER_SUBJECT = 2
#: the staged looks of no_slots_per_subject (see NOSLOT_PILOT)
NOSLOT_LOOKS = (3, 6, 12)
#: the pilot that fixed NOSLOT_LOOKS: the claim at quick scale with 6 seeds (its former rule), base
#: seed 100 (seeds 100-105, never judged), revision 51028dc; per part the per-seed mean and sd, and
#: the staged rule's rates at that spread (verify.criteria_seeds.staged_rates, 4000 runs): looks
#: (3, 6, 12) pass every part with probability 1.00 (seen_rises_S50, the closest, after 5.0 seeds
#: on average) and a mean on a bar passes 0.038-0.046; looks (3, 6) gave 0.988 on seen_rises_S50
NOSLOT_PILOT = {
    "base_seed": 100,
    "seeds": [100, 101, 102, 103, 104, 105],
    "revision": "51028dc",
    "unseen_distance": {"S50": (0.055, 0.035), "S200": (0.054, 0.036)},
    "acc_seen": {"S50": (0.870, 0.032), "S200": (0.879, 0.013)},
    "power_at_looks_3_6_12": 1.00,
    "pass_at_a_bar": [0.038, 0.046],
}
NOSLOT = dict(
    {k: v for k, v in PFULL.items() if k != "n_train"},
    n_ans_per_rel=20,
    dim=128,
    slots=False,
    per_subject=PER_SUBJECT,
    subjects=[50, 200],
    looks=list(NOSLOT_LOOKS),
)
#: full scale: S = 2000 puts N_f = 10^4 facts in the memory, so d is the memory heuristic
#: ceil(32 ln N_f) = 295 of docs/icrecall.md (d = 128 left the memory itself short of recall)
NOSLOT_FULL = dict(NOSLOT, subjects=[200, 2000], dim=math.ceil(32 * math.log(2000 * 5)))


@claim(
    "icrecall.finetune.no_slots_per_subject",
    source=SOURCE + ", our pilot finding (docs/icrecall.md)",
    provenance="derived",
    demonstrates_failure=True,
    statement="MUST FAIL to generalise: P-full without slot embeddings learns per query subject. "
    "At N_train = {per_subject} S training sequences for every S of {subjects} (a seen query subject "
    "was a training query about 2.3 times, 14% of the subjects never were), the mean over seeds of "
    "the unseen-subject accuracy's distance from its init value lies at or below 0.2 while that of "
    "the seen-subject accuracy lies above 0.8, each judged in stages at {looks} seeds by one-sided "
    "Student-t bounds (error 0.05 per direction over the looks; inconclusive when the last look "
    "does not decide). The accuracy at every S is recorded (drop from the smallest S "
    "to the largest), not judged. Slot embeddings or not is structural (no parameter to bracket): "
    "the control adds them. It tests a convention (the 0.2 and 0.8 accuracy thresholds) and cites "
    "no bound",
    templated=True,
    quick=NOSLOT,
    full=NOSLOT_FULL,
    seed_rule="sequential looks over the seeds seed..seed+n-1, one part per S and quantity (a "
    "one-sided Student-t bound per look; per-seed values recorded)",
    controls=[
        Control(
            "with_slots",
            lambda p: {"slots": True, "subjects": list(p["subjects"][:1])},
            "the other side: with slot embeddings the learned attention is shared by "
            "all subjects and unseen query subjects are recalled (at the smallest S: it misses "
            "the 0.2 bar by 0.4 and more at the first look, and saves the largest S's runs)",
        )
    ],
)
def _noslot(p, ctx):
    """One :class:`verify.criteria.Sequential` per S and quantity, joined by
    :func:`verify.criteria.all_of`: ``unseen_stays_S<S>`` (mean over seeds of |acc_unseen -
    acc_init_unseen| <= 0.2) and ``seen_rises_S<S>`` (mean acc_seen > 0.8), every S measured on
    each seed, the seeds spent in stages (:func:`verify.criteria.run_staged`). Was
    judged on the means over seeds read as points, at N_train = 64 (quick) and 256 (full) whatever
    S (the full setting then failed on the seen accuracy, ledger), then on the 95% Student-t
    interval over 3 and, after a judged inconclusive, 6 seeds (at base seed 0: pass at 6 seeds)."""
    if p["per_subject"] <= 0:
        raise ValueError(f"per_subject={p['per_subject']} must be > 0 (N_train = per_subject * S)")
    looks = tuple(int(n) for n in p["looks"])
    seeds = ctx.seeds(looks[-1])

    def measure(seed):
        out = []
        for S in p["subjects"]:
            n_train = int(round(p["per_subject"] * S))
            r = train_run(dict(p, n_subj=S), ctx, n_train=n_train, seed=seed)
            if r["acc_unseen"] is None or r["acc_seen"] is None:
                raise ValueError(
                    f"S={S}, N_train={n_train}: seed {seed}'s test set holds no unseen (or no seen) query "
                    "subject; the claim needs both (lower per_subject or raise n_test)"
                )
            out.append(r)
        return out

    def judge(per_seed):
        done, parts = seeds[: len(per_seed)], {}
        for i, S in enumerate(p["subjects"]):
            runs = [row[i] for row in per_seed]
            parts[f"unseen_stays_S{S}"] = Sequential(
                f"|acc_unseen - acc_init_unseen| at S = {S}, mean over seeds",
                UNSEEN_WITHIN,
                "<=",
                "convention",
                looks,
            ).judge([abs(r["acc_unseen"] - r["acc_init_unseen"]) for r in runs], seeds=done)
            parts[f"seen_rises_S{S}"] = Sequential(
                f"acc_seen at S = {S}, mean over seeds", SEEN_ABOVE, ">", "convention", looks
            ).judge([r["acc_seen"] for r in runs], seeds=done)
        return all_of(**parts)

    judgement, per_seed = run_staged(looks, seeds, measure, judge)
    rows = []
    for i, S in enumerate(p["subjects"]):
        runs = [row[i] for row in per_seed]
        rows.append(
            {
                "n_subj": S,
                "n_train": int(round(p["per_subject"] * S)),
                **{
                    k: float(np.mean([r[k] for r in runs]))
                    for k in ("acc_init_unseen", "acc_unseen", "acc_seen", "acc", "acc_init")
                },
                "acc_per_seed": [r["acc"] for r in runs],
                "acc_unseen_per_seed": [r["acc_unseen"] for r in runs],
                "acc_init_unseen_per_seed": [r["acc_init_unseen"] for r in runs],
                "acc_seen_per_seed": [r["acc_seen"] for r in runs],
                "unseen_distance_per_seed": [abs(r["acc_unseen"] - r["acc_init_unseen"]) for r in runs],
                "n_unseen_per_seed": [r["n_unseen"] for r in runs],
            }
        )
    drop = rows[0]["acc"] - rows[-1]["acc"]
    return judgement, {
        "rows": rows,
        "seeds": seeds[: len(per_seed)],
        "drop": drop,
        "drop_note": "accuracy at the smallest S minus at the largest, both at N_train = per_subject "
        "* S; recorded, not judged",
    }


@claim(
    "icrecall.finetune.mixed_context_uninformative",
    source=SOURCE + ", relation chance (docs/icrecall.md)",
    bounds=("icrecall.relation_chance",),
    provenance="derived",
    demonstrates_failure=True,
    statement="MUST FAIL: when each context pair carries a relation drawn independently of the "
    "target relation, fine-tuning P-full (train and test mixed, N_train as "
    "finetune.solves) stays at relation chance: test accuracy <= 1/R + "
    "3 sqrt((1/R)(1-1/R)/K) + 0.01 (R = {n_rel}, K = {n_test}) in every one of {n_seeds} seeds. "
    "Mixed or single-relation contexts is structural (no parameter to bracket): the control "
    "generates every pair from the target relation",
    templated=True,
    # quick n_seeds 6: at 3 seeds an accuracy at the ceiling passed 0.11 of the time (python -m
    # verify oc, from the stored spread); 6 is the budget it named for <= 0.05. The control keeps
    # 3 seeds, the single-relation runs of finetune.solves
    quick=dict(PFULL, mode="mixed", n_seeds=6),
    full=dict(PFULL_FULL, mode="mixed"),
    seed_rule="every seed of seed..seed+n_seeds-1 (per-seed values recorded)",
    controls=[
        Control(
            "one_relation",
            {"mode": "single", "n_seeds": 3},
            "the other side: contexts generated by the target relation carry it, and "
            "the same fine-tuning beats relation chance",
        )
    ],
)
def _mixed_train(p, ctx):
    runs = seed_runs(p, ctx, mode=p["mode"], record_every=None if p["mode"] != "single" else TRAJECTORY_EVERY)
    ceiling = relation_chance_ceiling(p["n_rel"], p["n_test"])
    accs = [r["acc"] for r in runs]
    # 1/R is the theory's relation chance, 3 binomial sd of K test sequences its sampling
    # tolerance; the extra 0.01 slack is a convention
    judgement = EverySeed("test accuracy (relation chance + tolerance)", ceiling, "<=", "theory").judge(
        accs, ctx.seeds(p["n_seeds"])
    )
    return judgement, {
        "acc_per_seed": accs,
        "acc_init_per_seed": [r["acc_init"] for r in runs],
        "ceiling": ceiling,
        "final_loss": [r["final_loss"] for r in runs],
    }
