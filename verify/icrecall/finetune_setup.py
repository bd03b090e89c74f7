"""What the icrecall fine-tuning claim modules share (verify.icrecall.finetune, .pretrained, .sample
and .subjects): the P-full parameters, the training run, and the one pairwise-pattern rule.
Registers no claim."""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from constructions.icrecall.model import ICAttention, TripletMemory
from constructions.icrecall.train import evaluate, finetune
from constructions.icrecall.world import make_world, sample_icrecall, triplet_mlp
from verify.claims import Context, Control, rng_for, shared
from verify.criteria import EverySeed, Judgement, all_of

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


#: what the world, the frozen memory and the test set of a run depend on (:func:`_setup`)
WORLD_KEYS = ("n_subj", "n_rel", "n_ans_per_rel", "dim", "theta", "logit_scale", "n_pairs", "n_test")


def _setup(p, seed, mode="single"):
    world = make_world(
        p["n_subj"],
        p["n_rel"],
        p["n_ans_per_rel"],
        p["dim"],
        RHO,
        rng_for(seed, "icrecall.finetune.make_world"),
    )
    memory = TripletMemory(triplet_mlp(world, p["theta"]), p["logit_scale"])
    test = sample_icrecall(
        world,
        p["n_pairs"],
        p["n_test"],
        rng_for(seed, "icrecall.finetune.setup.sample_icrecall"),
        relation_mode=mode,
    )
    return world, memory, test


@shared
def _bench(ctx, world: dict, seed: int, mode: str):
    """(world, memory, test) of :func:`_setup`, built once per run of the registry and shared by
    every fine-tuning run on them (the grid points of a sample-need scan, the claims and controls
    on the same seed): they are drawn from their own streams, whatever the run trains."""
    return _setup(world, seed, mode)


def _init_model(ctx, world: dict, seed: int, mode: str, param: str, slots: bool, slot_values: bool):
    """(a fresh model at initialisation, the embedded test set): the init model depends on the
    world and the parametrisation only, not on the training set, the learning rate or the number
    of steps. The embedded test set (tens of MB at quick scale) is held for the latest model only,
    so that a scan's runs embed it once while memory stays bounded; it is the same tensors whoever
    embeds it."""
    w, memory, test = _bench(ctx, world, seed, mode)
    model = ICAttention(w, memory, param, slots=slots, slot_values=slot_values)
    key = (tuple(sorted(world.items())), seed, mode, param, slots, slot_values)
    # one slot, the latest embedded test set: a memo refilled on purpose, so it is kept in the cache
    # directly, not as a shared result (those must not change: verify.audit)
    held = ctx.cache.setdefault((("icrecall.embedded_test",), ctx.device, ctx.dtype), {})
    if held.get("key") != key:
        held.clear()
        held.update(key=key, embedded=model.embed_prompts(test))
    return model, held["embedded"]


@shared
def _init_evaluation(ctx, world: dict, seed: int, mode: str, param: str, slots: bool, slot_values: bool):
    """The evaluation of :func:`_init_model`'s model on the test set, shared by every run from that
    model (each run trains its own fresh copy)."""
    return evaluate(*_init_model(ctx, world, seed, mode, param, slots, slot_values))


@shared
def _train(
    ctx,
    world: dict,
    slot_values: bool,
    steps: int,
    param: str,
    slots: bool,
    n_train: int,
    lr: float,
    mode: str,
    seed: int,
    record_every: int | None,
) -> dict:
    """One fine-tuning run of :func:`train_run` (its arguments resolved)."""
    model, test = _init_model(ctx, world, seed, mode, param, slots, slot_values)
    init = _init_evaluation(ctx, world, seed, mode, param, slots, slot_values)
    w = _bench(ctx, world, seed, mode)[0]
    train = sample_icrecall(
        w,
        world["n_pairs"],
        n_train,
        rng_for(seed, "icrecall.finetune.train_run.sample_icrecall", n_train),
        relation_mode=mode,
    )
    res = finetune(model, train, test, steps=steps, lr=lr, record_every=record_every, init=init)
    init_ok, ok = res.extra["correct_init"], res.extra["correct"]
    unseen = ~np.isin(test.prompts.query, train.query)
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


def train_run(
    p: Mapping[str, Any],
    ctx: Context,
    param: str = "full",
    slots: bool | None = None,
    n_train: int | None = None,
    lr: float | None = None,
    mode: str = "single",
    seed: int | None = None,
    record_every: int | None = None,
) -> dict:
    """One fine-tuning run, shared through ctx (:func:`verify.claims.shared`): a JSON-able dict of
    what it measured (with ``record_every``, also the trajectory against the step). It reads the
    world keys (:data:`WORLD_KEYS`), ``slot_values`` and ``steps`` of ``p``; ``slots``, ``n_train``
    and ``lr`` default to p's, ``seed`` to the run's. The world, the test set and the init
    evaluation are shared by every run on them (the same numbers as built per run).

    >>> p = dict(PFULL, n_subj=8, n_rel=3, n_ans_per_rel=4, dim=40, n_pairs=3, n_test=50, steps=3)
    >>> ctx = Context()
    >>> run = train_run(p, ctx, n_train=4, seed=1)
    >>> run is train_run(dict(p, n_seeds=1), ctx, n_train=4, seed=1), run["n_train"]
    (True, 4)
    """
    return _train(
        ctx,
        {k: p[k] for k in WORLD_KEYS},
        p["slot_values"],
        p["steps"],
        param,
        p["slots"] if slots is None else slots,
        p["n_train"] if n_train is None else n_train,
        p["lr"] if lr is None else lr,
        mode,
        ctx.seed if seed is None else seed,
        record_every,
    )


#: the pairwise-pattern thresholds of :func:`pattern_verdict` (conventions, not derived)
QUERY_SHARE_MAX, QUERY_DROP_MIN, IMBALANCE_MAX = 0.35, 0.3, 0.4


def pattern_verdict(metrics_init: dict, metrics: dict) -> dict:
    """The one pairwise-pattern rule of this area (fine-tuned P-full and the pretrained-MLP variant):
    the query share falls to <= 0.35 and by >= 0.3 from its init value, and the within-pair
    imbalance is <= 0.4. Pair uniformity H_p is recorded but not judged: it is 0.98-0.99 at init
    already (a criterion the untrained model meets tests nothing)."""
    drop = metrics_init["query_share"] - metrics["query_share"]
    checks = {
        "query_share": metrics["query_share"] <= QUERY_SHARE_MAX,
        "query_drop": drop >= QUERY_DROP_MIN,
        "imbalance": metrics["imbalance"] <= IMBALANCE_MAX,
    }
    return {"passed": all(checks.values()), "checks": checks, "query_drop": drop}


def pattern_judgement(metrics_init: list[dict], metrics: list[dict], seeds: list) -> Judgement:
    """The rule of :func:`pattern_verdict` on every seed, as criterion objects: three
    :class:`verify.criteria.EverySeed` parts (query share <= 0.35, its drop from init >= 0.3,
    within-pair imbalance <= 0.4; conventions) joined by :func:`verify.criteria.all_of`. It
    passes exactly when :func:`pattern_verdict` passes on every seed.

    >>> init = {"query_share": 0.99, "imbalance": 0.3, "pair_uniformity": 0.99}
    >>> good = {"query_share": 0.2, "imbalance": 0.1, "pair_uniformity": 0.99}
    >>> pattern_judgement([init, init], [good, good], [0, 1]).verdict
    'pass'
    >>> pattern_judgement([init, init], [good, dict(good, imbalance=0.7)], [0, 1]).verdict
    'fail'
    """
    if not len(metrics_init) == len(metrics) == len(seeds):
        raise ValueError(
            f"{len(metrics_init)} init and {len(metrics)} final metrics for {len(seeds)} seeds: one each per seed"
        )
    share = [m["query_share"] for m in metrics]
    drop = [a["query_share"] - m["query_share"] for a, m in zip(metrics_init, metrics)]
    imbalance = [m["imbalance"] for m in metrics]
    return all_of(
        query_share=EverySeed("query share", QUERY_SHARE_MAX, "<=", "convention").judge(share, seeds),
        query_drop=EverySeed("query-share drop from init", QUERY_DROP_MIN, ">=", "convention").judge(
            drop, seeds
        ),
        imbalance=EverySeed("within-pair imbalance", IMBALANCE_MAX, "<=", "convention").judge(
            imbalance, seeds
        ),
    )


def pattern_outcome(runs: list[dict], seeds: list, keys: tuple) -> tuple[Judgement, dict]:
    """The rule of :func:`pattern_judgement` on runs (dicts with ``metrics_init`` and ``metrics``,
    one per seed), with the details both pattern claims record: the first run's metrics and, per
    seed, the ``keys`` of its metrics at init and after, and its :func:`pattern_verdict`.

    >>> init = {"query_share": 0.99, "imbalance": 0.3, "pair_uniformity": 0.99}
    >>> good = {"query_share": 0.2, "imbalance": 0.1, "pair_uniformity": 0.99}
    >>> judgement, details = pattern_outcome([{"metrics_init": init, "metrics": good}], [7], ("imbalance",))
    >>> judgement.verdict, details["per_seed"][0]["after"], details["per_seed"][0]["passed"]
    ('pass', {'imbalance': 0.1}, True)
    """
    inits, finals = [r["metrics_init"] for r in runs], [r["metrics"] for r in runs]
    return pattern_judgement(inits, finals, seeds), {
        "metrics_init": inits[0],
        "metrics": finals[0],
        "per_seed": [
            {
                "seed": s,
                "init": {k: a[k] for k in keys},
                "after": {k: m[k] for k in keys},
                **pattern_verdict(a, m),
            }
            for s, a, m in zip(seeds, inits, finals)
        ],
    }


PATTERN_STATEMENT = (
    "query share <= 0.35 and lowered by >= 0.3 from init, within-pair imbalance "
    "<= 0.4 (H_p recorded, not judged: 0.98-0.99 at init)"
)
