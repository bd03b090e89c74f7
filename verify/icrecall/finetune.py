"""Claims of IC-recall on fine-tuned models (spec icrecall.md §7, second half).

The main model is P-full: a fully trained W_KQ in R^{d x d} (init 4 I) with slot embeddings in
the attention scores, the triplet MLP frozen, W_OV = (2/rho) I. Two calibrations of ours
[derived], both recorded in every claim's parameters:
- the slot embeddings enter queries and keys but not the values fed to the frozen memory
  (``slot_values=False``): with them in the values (spec §5.3 literally) a pilot at S=200,
  d=128 reached 0.92 at N_train=1024 against 0.97 without, and at lr 0.05 training collapsed to
  subject-only attention (accuracy 0.15); the memory was built on position-free inputs;
- Adam lr 0.005 for P-full (the spec's 0.05 is kept for P-struct): sign-like Adam steps of 0.05
  on all d^2 entries move x^T W x by about 0.05 * 2d/pi per step.
Quick scale shrinks sizes (D = 10 answers per relation; d = ceil(32 ln N_f), the spec's
heuristic memory dimension); the model class is unchanged. Every training claim runs 3 seeds
(seed..seed+2) with the rule in its ``seed_rule``; the runs are shared through ``ctx.shared``, so
the claims on the same runs (solves, pattern_emerges, unseen_facts) train each seed once. The
pretrained-MLP variant is in :mod:`verify.icrecall.pretrained`, the ledger in
:mod:`verify.icrecall.ledger`, N* against the number of subjects with and without slot
embeddings in :mod:`verify.icrecall.subjects`.
"""

from __future__ import annotations

import math

import numpy as np

from constructions.icrecall.model import ICAttention, TripletMemory, finetune
from constructions.icrecall.world import make_world, sample_icrecall, triplet_mlp
from theory.icrecall import SOURCE, relation_chance_ceiling
from verify.claims import Control, Outcome, claim, rng_for
from verify.measure import seeds_verdict

RHO = 1 / math.sqrt(2)
PFULL = dict(
    n_subj=200,
    n_rel=5,
    n_ans_per_rel=10,
    dim=222,
    n_pairs=8,
    n_train=128,
    n_test=1000,
    lr=0.005,
    steps=200,
    slots=True,
    slot_values=False,
    logit_scale=10.0,
    theta=1.5,
    n_seeds=3,
)
PFULL_FULL = dict(PFULL, n_ans_per_rel=20, dim=256, n_train=256)
# quick n_train=128 was chosen at seed 0 (64 gave 0.937); at the calibration seeds 100-104 the
# accuracy plateaus at 0.92-0.95 for N_train 128 and 256, d 222 and 256, 400 steps: see the ledger
STRUCT_ABLATION = dict(n_train=32, lr=0.05)
EVERY3 = "every seed of seed..seed+2 (per-seed values recorded)"
INIT = Control(
    "init", {"steps": 0}, "the model at initialisation (no fine-tuning step): attention on the query"
)


def _setup(p, seed, mode="single"):
    world = make_world(p["n_subj"], p["n_rel"], p["n_ans_per_rel"], p["dim"], RHO, rng_for(seed, 71))
    memory = TripletMemory(triplet_mlp(world, p["theta"]), p["logit_scale"])
    test = sample_icrecall(world, p["n_pairs"], p["n_test"], rng_for(seed, 72), relation_mode=mode)
    return world, memory, test


def train_run(
    p, ctx, param="full", slots=None, n_train=None, lr=None, mode="single", seed=None, record_every=None
):
    """One fine-tuning run, shared through ctx: returns a JSON-able dict of what it measured
    (with ``record_every``, also the trajectory against the step)."""
    seed = ctx.seed if seed is None else seed
    slots = p["slots"] if slots is None else slots
    n_train = p["n_train"] if n_train is None else n_train
    lr = p["lr"] if lr is None else lr
    key = ("icrecall.train", repr(sorted(p.items())), param, slots, n_train, lr, mode, seed, record_every)

    def compute():
        world, memory, test = _setup(p, seed, mode)
        train = sample_icrecall(world, p["n_pairs"], n_train, rng_for(seed, 73, n_train), relation_mode=mode)
        model = ICAttention(world, memory, param, slots=slots, slot_values=p["slot_values"])
        res = finetune(model, train, test, steps=p["steps"], lr=lr, record_every=record_every)
        init_ok, ok = res.extra["correct_init"], res.extra["correct"]
        unseen = ~np.isin(test.query, train.query)
        return {
            "acc_init": res.acc_init,
            "acc": res.acc,
            "metrics_init": res.metrics_init,
            "metrics": res.metrics,
            "final_loss": res.losses[-1] if res.losses else None,
            "acc_unseen": float(ok[unseen].mean()) if unseen.any() else None,
            "acc_seen": float(ok[~unseen].mean()) if (~unseen).any() else None,
            "acc_init_unseen": float(init_ok[unseen].mean()) if unseen.any() else None,
            "n_unseen": int(unseen.sum()),
            "n_train": n_train,
            "trajectory": res.extra.get("trajectory"),
        }

    return ctx.shared(key, compute)


TRAJECTORY_EVERY = 40


def seed_runs(p, ctx, **kw):
    """One :func:`train_run` per seed of seed..seed+n_seeds-1, recording the trajectory every
    TRAJECTORY_EVERY steps (issue 13 item 16: the dynamics, not only the endpoints)."""
    kw.setdefault("record_every", TRAJECTORY_EVERY)
    return [train_run(p, ctx, seed=s, **kw) for s in ctx.seeds(p["n_seeds"])]


@claim(
    "icrecall.finetune.solves",
    source=SOURCE + ", fine-tuning solves IC-recall [abstract]",
    provenance="derived",
    statement="fine-tuning W_KQ (P-full, slot embeddings, MLP frozen) from the query-heavy init "
    "solves IC-recall: held-out accuracy <= 0.5 at init and >= 0.95 after training, "
    "in every one of 3 seeds",
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
    ok = seeds_verdict([r["acc_init"] <= 0.5 and r["acc"] >= 0.95 for r in runs], "every")
    return Outcome(
        predicted="init <= 0.5, after >= 0.95 (every seed)",
        measured={"init": [r["acc_init"] for r in runs], "after": [r["acc"] for r in runs]},
        passed=ok,
        details={
            "seeds": ctx.seeds(p["n_seeds"]),
            "acc_per_seed": [r["acc"] for r in runs],
            "acc_init_per_seed": [r["acc_init"] for r in runs],
            "p_full": runs[0],
            "trajectory_per_seed": [r["trajectory"] for r in runs],
            "p_struct_ablation_acc": [r["acc"] for r in struct],
            "p_struct_ablation": struct[0] if struct else None,
        },
    )


def pattern_verdict(metrics_init: dict, metrics: dict) -> dict:
    """The one pairwise-pattern rule of this area (fine-tuned P-full and the pretrained-MLP variant):
    the query share falls to <= 0.35 and by >= 0.3 from its init value, and the within-pair
    imbalance is <= 0.4. Pair uniformity H_p is recorded but not judged: it is 0.98-0.99 at init
    already (a criterion the untrained model meets tests nothing)."""
    drop = metrics_init["query_share"] - metrics["query_share"]
    checks = {
        "query_share": metrics["query_share"] <= 0.35,
        "query_drop": drop >= 0.3,
        "imbalance": metrics["imbalance"] <= 0.4,
    }
    previous = (
        metrics["pair_uniformity"] >= 0.95 and metrics["query_share"] <= 0.35 and metrics["imbalance"] <= 0.4
    )
    return {
        "passed": all(checks.values()),
        "checks": checks,
        "query_drop": drop,
        "previous_passed": bool(previous),
    }


PATTERN_STATEMENT = (
    "query share <= 0.35 and lowered by >= 0.3 from init, within-pair imbalance "
    "<= 0.4 (H_p recorded, not judged: 0.98-0.99 at init)"
)
PREVIOUS_PATTERN = "H_p >= 0.95 and query share <= 0.35 and imbalance <= 0.4 (H_p holds at init)"


@claim(
    "icrecall.finetune.pattern_emerges",
    source=SOURCE + ", pairwise attention pattern [abstract]",
    provenance="derived",
    statement="after fine-tuning (as finetune.solves) the attention moves off the query onto "
    "balanced (subject, answer) pairs: " + PATTERN_STATEMENT + ", every one of 3 seeds",
    quick=PFULL,
    full=PFULL_FULL,
    seed_rule=EVERY3,
    controls=[INIT],
)
def _pattern(p, ctx):
    runs = seed_runs(p, ctx)
    verdicts = [pattern_verdict(r["metrics_init"], r["metrics"]) for r in runs]
    keys = ("pair_uniformity", "query_share", "imbalance")
    return Outcome(
        predicted=PATTERN_STATEMENT,
        measured={k: [r["metrics"][k] for r in runs] for k in keys},
        passed=seeds_verdict([v["passed"] for v in verdicts], "every"),
        details={
            "metrics_init": runs[0]["metrics_init"],
            "metrics": runs[0]["metrics"],
            "per_seed": [
                {
                    "seed": s,
                    "init": {k: r["metrics_init"][k] for k in keys},
                    "after": {k: r["metrics"][k] for k in keys},
                    **v,
                }
                for s, r, v in zip(ctx.seeds(p["n_seeds"]), runs, verdicts)
            ],
            "previous_criterion": {
                "rule": PREVIOUS_PATTERN + ", seed 0 only",
                "passed": verdicts[0]["previous_passed"],
            },
        },
    )


@claim(
    "icrecall.finetune.unseen_facts",
    source=SOURCE,
    provenance="derived",
    statement="with N_train < S, held-out accuracy on queries whose subject never was a "
    "training query is within 0.05 of the accuracy on seen query subjects, in every "
    "one of 3 seeds",
    quick=PFULL,
    full=PFULL_FULL,
    seed_rule=EVERY3,
    controls=[
        Control(
            "no_slots",
            {"slots": False, "n_seeds": 1},
            "P-full without slot embeddings learns per query subject (spec §5.3 "
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
    return Outcome(
        predicted="|acc_unseen - acc_seen| <= 0.05 (every seed)",
        measured=max(gaps),
        passed=seeds_verdict([g <= 0.05 for g in gaps], "every"),
        details={
            "gap_per_seed": gaps,
            "slots": p["slots"],
            "per_seed": [{k: r[k] for k in ("acc_unseen", "acc_seen", "n_unseen", "acc")} for r in runs],
        },
    )


NOSLOT = dict(PFULL, n_ans_per_rel=20, dim=128, slots=False, n_train=64, subjects=[50, 200])


@claim(
    "icrecall.finetune.no_slots_per_subject",
    source=SOURCE + ", spec §5.3 pilot finding",
    provenance="derived",
    demonstrates_failure=True,
    statement="MUST FAIL to generalise: P-full without slot embeddings learns per query subject. "
    "At N_train = 64 <= S = 200 the accuracy on unseen query subjects stays within 0.2 "
    "of its init value while the seen-subject accuracy rises above 0.8 (means over 3 "
    "seeds). The accuracy at S = 50 is recorded beside S = 200 (drop), not judged: at "
    "this fixed d the slotted model's accuracy also falls with S",
    quick=NOSLOT,
    full=dict(NOSLOT, n_train=256, subjects=[200, 2000]),
    seed_rule="means over the 3 seeds seed..seed+2 (per-seed values recorded)",
    controls=[
        Control(
            "with_slots",
            {"slots": True, "n_seeds": 1},
            "the other side: with slot embeddings the learned attention is shared by "
            "all subjects, unseen query subjects are recalled and S does not matter",
        )
    ],
)
def _noslot(p, ctx):
    rows = []
    for S in p["subjects"]:
        q = dict(p, n_subj=S)
        runs = [train_run(q, ctx, seed=s) for s in ctx.seeds(p["n_seeds"])]
        row = {
            k: (
                float(np.mean([r[k] for r in runs if r[k] is not None]))
                if any(r[k] is not None for r in runs)
                else None
            )
            for k in ("acc_init_unseen", "acc_unseen", "acc_seen", "acc", "acc_init")
        }
        rows.append(
            row
            | {
                "n_subj": S,
                "acc_per_seed": [r["acc"] for r in runs],
                "acc_unseen_per_seed": [r["acc_unseen"] for r in runs],
                "acc_seen_per_seed": [r["acc_seen"] for r in runs],
            }
        )
    local = all(
        abs(r["acc_unseen"] - r["acc_init_unseen"]) <= 0.2 and r["acc_seen"] > 0.8
        for r in rows
        if p["n_train"] <= r["n_subj"]
    )
    drop = rows[0]["acc"] - rows[-1]["acc"]
    return Outcome(
        predicted="|acc_unseen - acc_init| <= 0.2, acc_seen > 0.8 at N_train <= S",
        measured={
            "drop": drop,
            **{str(r["n_subj"]): {"unseen": r["acc_unseen"], "seen": r["acc_seen"]} for r in rows},
        },
        passed=local,
        details={
            "rows": rows,
            "drop": drop,
            "drop_note": "accuracy at the smallest S minus at the largest, same "
            "N_train; recorded, not judged (with slots it falls too)",
        },
    )


@claim(
    "icrecall.finetune.mixed_context_uninformative",
    source=SOURCE + ", spec §6",
    bounds=("icrecall.relation_chance",),
    provenance="derived",
    demonstrates_failure=True,
    statement="MUST FAIL: when each context pair carries a relation drawn independently of the "
    "target relation, fine-tuning P-full (train and test mixed, N_train as "
    "finetune.solves) stays at relation chance: test accuracy <= 1/R + "
    "3 sqrt((1/R)(1-1/R)/K) + 0.01 in every one of 3 seeds",
    quick=dict(PFULL, mode="mixed"),
    full=dict(PFULL_FULL, mode="mixed"),
    seed_rule=EVERY3,
    controls=[
        Control(
            "one_relation",
            {"mode": "single"},
            "the other side: contexts generated by the target relation carry it, and "
            "the same fine-tuning beats relation chance",
        )
    ],
)
def _mixed_train(p, ctx):
    runs = seed_runs(
        {k: v for k, v in p.items() if k != "mode"},
        ctx,
        mode=p["mode"],
        record_every=None if p["mode"] != "single" else TRAJECTORY_EVERY,
    )
    ceiling = relation_chance_ceiling(p["n_rel"], p["n_test"])
    accs = [r["acc"] for r in runs]
    return Outcome(
        predicted=f"acc <= {ceiling:.3f} (every seed)",
        measured=max(accs),
        passed=seeds_verdict([a <= ceiling for a in accs], "every"),
        details={
            "acc_per_seed": accs,
            "acc_init_per_seed": [r["acc_init"] for r in runs],
            "ceiling": ceiling,
            "final_loss": [r["final_loss"] for r in runs],
        },
    )
