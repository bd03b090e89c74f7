"""The routing-leak experiment of Mixture of Chapters (2603.21096) [derived], docs/chapters.md: per-sequence
routing pools every position, so under teacher-forced causal language modelling the chapter choice
can carry later tokens to earlier positions. On the copy task [BOS, x_1..x_n, x_1..x_n] the first
half x_2..x_n is unpredictable to any causal model (loss floor ln v); a model that beats the floor
is reading the future through its router.

Variants: ``sequence`` (the paper's routing), ``prefix`` (per-position causal routing from the
running mean of the prefix), ``first`` (position 0 only: fixed-chapter memory), ``none`` (no memory
layer) and ``selection_only`` (paper routing with constant chapter weights: the router gets no LM
gradient, so only the selection itself can leak). Training runs in float32 on ``ctx.device``;
runs are shared between claims (:func:`leak_run`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from theory.papers import paper
from verify.chapters.toy_setup import _waiting, batch_seeds, in_cache, stored
from verify.claims import Control, claim, rng_for, shared
from verify.criteria import Threshold, all_of
from verify.measure import t_interval

SOURCE = paper("chapters")
#: Quick scale: the task of docs/chapters.md (v = 16, n = 6) at batch 32, on a 150-step schedule and
#: 3 seeds, so that every leak claim is judged on a 95% Student-t interval over seeds (the claims
#: used to judge one seed of a 300-step schedule: a point that ``verify oc`` could not simulate and
#: the full-scale gate found inadmissible). The 150-step schedule, the 3 seeds and the thresholds
#: were fixed on pilot seeds 100-102, never judged (2026-12-07, the code of this revision, a loaded
#: 2-core machine; first-half loss at step 150 with the whole sequence visible / prefix-only; ln v =
#: 2.7726):
#:   seed  sequence (paper)  selection-only   first           none            prefix (causal)
#:   100   2.519 / 3.037     2.423 / 2.945    2.777 / 2.777   2.776 / 2.776   2.777 / 2.777
#:   101   2.583 / 2.938     2.495 / 2.960    2.776 / 2.776   2.778 / 2.778   2.776 / 2.776
#:   102   2.559 / 3.092     2.475 / 2.980    2.778 / 2.778   2.779 / 2.779   2.778 / 2.778
#: CPU-seconds per run there: sequence, first and selection-only 4.8-5.4, none 1.8-2.1, prefix
#: 14.1-14.6. At the 300-step schedule the leaking variants go lower (the table below), but a seed
#: would cost twice as much. Full scale: batch 64, 300 steps, 3 seeds, and every variant.
LEAK = {
    "n_symbols": 16,
    "half": 6,
    "steps": 150,
    "batch": 32,
    "seeds": 3,
    "eval_size": 512,
    "eval_every": 50,
    "routing": "sequence",
    "memory": True,
    "variants": [],
}
LEAK_FULL = dict(LEAK, steps=300, batch=64, seeds=3, variants=["prefix", "first", "none", "selection_only"])
#: The earlier quick setting (300 steps, batch 32, one seed) and its variants, run outside CI on
#: seeds 0-2 (2026-12-01, `variant_table(range(3), ["sequence", "selection_only", "prefix"])` at
#: steps=300, before the prefix path was vectorised). First-half loss with the whole sequence
#: visible / evaluated prefix-only:
#:   seed  sequence (paper)   selection-only     prefix (causal)
#:   0     2.3936 / 3.0880    2.3572 / 3.0741    2.7739 / 2.7739
#:   1     2.4580 / 3.0982    2.3853 / 3.1410    2.7787 / 2.7787
#:   2     2.3305 / 3.1748    2.3622 / 3.1226    2.7762 / 2.7762
#: The selection alone (constant chapter weights, no LM gradient into the router) leaks as much
#: as the paper's weighted routing at this scale (mean 2.368 vs 2.394); every leaking model is
#: worse than chance when evaluated prefix-only; the causal prefix router stays at the floor.
RUN_KEYS = ("n_symbols", "half", "steps", "batch", "eval_size", "eval_every")
CAUSAL_SLACK = 0.01  # causal variants may sit this far below ln v (evaluation noise; a convention)
#: the seed rule of every leak claim (``verify oc`` reads the interval from it)
T_RULE = "95% Student-t interval over seeds 0..S-1 (quick 3, full 3) of the mean first-half loss"


def _variant_config(n_symbols: int, variant: str) -> dict:
    from constructions.chapters.copy_task import copy_config

    routing = variant if variant in ("sequence", "prefix", "first") else "sequence"
    return copy_config(n_symbols, routing, memory=variant != "none", weighting=variant != "selection_only")


@shared
def _leak_run(ctx, n_symbols, half, steps, batch, eval_size, eval_every, stop, seed, variant) -> dict:
    from constructions.chapters.copy_task import copy_eval, make_copy_batch, train_copy
    from constructions.chapters.train import build

    run = (n_symbols, half, steps, batch, eval_size, eval_every, stop, seed, variant)
    done = _waiting(ctx, "_leak_run", run)
    if done is not None:  # trained with other seeds (prefetch_leak)
        return done
    cfg = _variant_config(n_symbols, variant)
    model = build(cfg, seed, device=ctx.device)
    eval_seqs = make_copy_batch(n_symbols, half, eval_size, rng_for(seed, "chapters.leak.make_copy_batch"))
    hist = train_copy(
        model,
        n_symbols,
        half,
        stop,
        batch,
        rng_for(seed, "chapters.leak.train_copy"),
        eval_seqs,
        eval_every=eval_every,
        device=ctx.device,
        schedule_steps=steps,
    )
    model.eval()
    return {
        "variant": variant,
        "seed": seed,
        "eval_steps": hist["eval_steps"],
        "first_half": hist["first_half"],
        "full_sequence": hist["first_half"][-1],
        "prefix_only": copy_eval(model, eval_seqs, half, prefix_only=True, device=ctx.device),
    }


def _leak_runs_batched(
    ctx, n_symbols, half, steps, batch, eval_size, eval_every, stop, seeds, variant
) -> list:
    """:func:`_leak_run` of every seed of ``seeds`` at once (:mod:`constructions.chapters.seed_batch`)."""
    import torch

    from constructions.chapters.copy_task import make_copy_batch
    from constructions.chapters.seed_batch import SeedBatch, copy_eval_batched, train_copy_batched

    models = SeedBatch(_variant_config(n_symbols, variant), seeds, device=ctx.device)
    eval_seqs = torch.stack(
        [
            make_copy_batch(n_symbols, half, eval_size, rng_for(s, "chapters.leak.make_copy_batch"))
            for s in seeds
        ]
    )
    hists = train_copy_batched(
        models,
        n_symbols,
        half,
        stop,
        batch,
        [rng_for(s, "chapters.leak.train_copy") for s in seeds],
        eval_seqs,
        eval_every=eval_every,
        schedule_steps=steps,
    )
    prefix = copy_eval_batched(models, eval_seqs, half, prefix_only=True)
    return [
        {
            "variant": variant,
            "seed": s,
            "eval_steps": h["eval_steps"],
            "first_half": h["first_half"],
            "full_sequence": h["first_half"][-1],
            "prefix_only": prefix[i],
        }
        for i, (s, h) in enumerate(zip(seeds, hists))
    ]


def _run_args(p) -> tuple:
    stop = int(p.get("stop", p["steps"]))
    return (p["n_symbols"], p["half"], p["steps"], p["batch"], p["eval_size"], p["eval_every"], stop)


def prefetch_leak(p, ctx, seeds: Sequence[int], variant: str) -> None:
    """Train together (on the devices of :func:`verify.chapters.toy_setup.batch_seeds`) the
    :func:`leak_run` runs of ``seeds`` that the run has not trained yet, stored under their own
    keys: the same runs as one at a time.

    >>> from verify.claims import Context
    >>> prefetch_leak(LEAK, Context(), [0, 1, 2], "sequence")  # the CPU: nothing trained
    """
    if not batch_seeds(ctx):
        return
    run = _run_args(p)
    todo = [int(s) for s in seeds if not in_cache(ctx, _leak_run, *run, int(s), variant)]
    if len(todo) < 2:
        return
    results = _leak_runs_batched(ctx, *run, todo, variant)
    stored(ctx, _leak_run, results, lambda i: (*run, todo[i], variant))


def leak_run(p, ctx, seed: int, variant: str) -> dict:
    """Train one copy-task model (variant as in the module docstring) and evaluate its first-half
    loss with the whole sequence visible (teacher forcing) and prefix-only (as at inference), once
    per run (:func:`verify.claims.shared`). With ``p["stop"]`` < ``p["steps"]`` the run stops at
    step ``stop`` of the ``steps``-step schedule (the same batches and learning rates as the longer
    run's first ``stop`` steps)."""
    return _leak_run(ctx, *_run_args(p), int(seed), variant)


def _stop_params(p, variant: str) -> dict:
    """The parameters of the run :func:`loss_at_stop` reads: the prefix-routed variant stopped at
    ``stop`` (evaluated there only unless it is the whole schedule, router_leak's run), any other
    variant's full-length run."""
    if variant == "prefix":
        stop = int(p["stop"])
        return dict(p, eval_every=p["eval_every"] if stop == p["steps"] else stop)
    return {k: v for k, v in p.items() if k != "stop"}


def loss_at_stop(p, ctx, seed: int, variant: str) -> tuple[float, float | None]:
    """(first-half loss with the whole sequence visible, prefix-only loss or None) at step
    ``p["stop"]`` of the ``p["steps"]``-step schedule. The prefix-routed variant runs to ``stop``
    (evaluated at 0 and ``stop`` only: it is the expensive one); every other variant reads the
    value off the curve of its full-length run, which the other leak claims share. Both are the
    same number: training draws nothing from the evaluation (tests/chapters/test_leak.py)."""
    stop = int(p["stop"])
    r = leak_run(_stop_params(p, variant), ctx, seed, variant)
    if variant == "prefix":
        return r["full_sequence"], r["prefix_only"]
    if stop not in r["eval_steps"]:
        raise ValueError(
            f"stop={stop} is not an evaluation step of the full run (eval_every={p['eval_every']}, "
            f"steps={p['steps']}): its loss at that step was not recorded"
        )
    value = r["first_half"][r["eval_steps"].index(stop)]
    return value, (r["prefix_only"] if stop == p["steps"] else None)


def variant_table(seeds, variants, params=None, device="cpu") -> list[dict]:
    """Train and evaluate every (seed, variant) at ``params`` (default the quick setting, LEAK):
    rows of seed, variant, first-half loss with the whole sequence visible and prefix-only."""
    from verify.claims import Context

    p = dict(LEAK if params is None else params)
    rows = []
    for seed in seeds:
        ctx = Context(seed=int(seed), device=device, dtype="float32")
        for v in variants:
            r = leak_run(p, ctx, int(seed), v)
            rows.append(
                {
                    "seed": int(seed),
                    "variant": v,
                    "full_sequence": r["full_sequence"],
                    "prefix_only": r["prefix_only"],
                }
            )
    return rows


def _variant_of(p) -> str:
    return "none" if not p["memory"] else p["routing"]


def _leak_threshold(floor: float) -> Threshold:
    """The leak criterion: the 95% t interval over seeds of the mean first-half loss (whole
    sequence visible) lies below ln v, the causal floor: no causal model beats ln v in expectation
    (the targets x_2..x_n are uniform and independent of everything before them).

    It replaces "the mean over the seeds <= ln v - 0.30" (one seed at quick scale). This boundary,
    ln v, is the one first fixed for the rule; at base seed 0 (2026-12-07) the leak's interval
    [2.513, 2.560] cleared it while the no_memory control's [2.771, 2.786] straddled it (a causal
    model sits on ln v by construction), so the claims read inconclusive there. A boundary moved
    to ln v - 0.01 after that run would be a criterion changed after seeing its result: it is not
    used; the inconclusive verdict stands.

    >>> _leak_threshold(2.7726).judge([2.5, 2.6], seeds=3).verdict
    'pass'
    >>> _leak_threshold(2.7726).judge([2.7, 2.8], seeds=3).verdict
    'inconclusive'
    >>> _leak_threshold(2.7726).judge([2.78, 2.79], seeds=3).verdict
    'fail'
    """
    return Threshold(
        "first-half loss, whole sequence visible (95% t interval over seeds; ln v, nats)",
        floor,
        "<",
        "convention",
    )


def _causal_rule(floor: float, what: str) -> Threshold:
    """A causal model's criterion: the 95% t interval over seeds of its mean first-half loss lies at
    or above ln v - CAUSAL_SLACK (the floor is the theory's; the slack a convention). It replaces
    "every seed >= ln v - 0.01", which over 1 or 3 seeds let a model sitting on the threshold pass
    1/2 or 1/8 of the time.

    >>> _causal_rule(2.7726, "x").judge([2.770, 2.780], seeds=3).verdict
    'pass'
    """
    return Threshold(
        f"first-half loss, {what} (95% t interval over seeds; ln v - {CAUSAL_SLACK}, nats)",
        floor - CAUSAL_SLACK,
        ">=",
        "convention",
    )


def _interval(values: list[float]) -> list[float]:
    """The 95% Student-t interval of the mean of per-seed values (at least 2)."""
    if len(values) < 2:
        raise ValueError(f"a t interval over seeds needs at least 2 seeds, got {len(values)}")
    if any(math.isnan(v) for v in values):
        raise ValueError(f"a first-half loss is NaN: {values}")
    return list(t_interval(values))


@claim(
    "chapters.leak.router_leak",
    source=f"{SOURCE}; this project's analysis of the routing leak (docs/chapters.md)",
    provenance="derived",
    templated=True,
    statement="on the copy task (v = {n_symbols}, n = {half}; causal floor ln v = 2.7726 nats on "
    "x_2..x_n), models trained with the paper's all-position routing ({steps} steps, batch {batch}) "
    "have a mean first-half loss (whole sequence visible, as in training) below ln v, the "
    "boundary the causal variants hold: the 95% Student-t interval over {seeds} seeds lies below it "
    "(inconclusive when it straddles it), so they read later tokens through the router. At full scale the causal variants (prefix routing, "
    "position-0 routing, no memory) each keep the interval of their mean at or above ln v - 0.01; "
    "the selection-only variant is reported",
    quick=LEAK,
    full=LEAK_FULL,
    needs=("torch",),
    seed_rule=T_RULE + "; causal variants (full): the same interval, each at or above ln v - 0.01",
    controls=[
        Control(
            "first",
            {"routing": "first"},
            "routing from position 0 only (causal; fixed chapters with BOS first): "
            "no later token reaches any position, so the loss cannot beat ln v",
        ),
        Control(
            "no_memory",
            {"memory": False},
            "the memory layer removed: a causal transformer cannot beat ln v on the first half",
        ),
    ],
)
def check_router_leak(p, ctx):
    floor = math.log(p["n_symbols"])
    seeds = ctx.seeds(p["seeds"])
    for v in [_variant_of(p), *p["variants"]]:  # each variant's seeds trained together (GPU)
        prefetch_leak(p, ctx, seeds, v)
    main = [leak_run(p, ctx, s, _variant_of(p)) for s in seeds]
    losses = [r["full_sequence"] for r in main]
    variants = {v: [leak_run(p, ctx, s, v) for s in seeds] for v in p["variants"]}
    causal = {v: [r["full_sequence"] for r in rs] for v, rs in variants.items() if v != "selection_only"}
    parts = {"leak": _leak_threshold(floor).judge(_interval(losses), seeds=len(seeds))}
    for v, vals in causal.items():  # full scale: every causal variant
        parts[f"causal_{v}"] = _causal_rule(floor, f"{v} variant").judge(_interval(vals), seeds=len(seeds))
    curves = {_variant_of(p): main, **variants}
    return all_of(**parts) if len(parts) > 1 else parts["leak"], {
        "ln_v": floor,
        "seeds": seeds,
        "variant": _variant_of(p),
        "per_seed": losses,
        "mean": float(np.mean(losses)),
        "prefix_only": [r["prefix_only"] for r in main],
        "eval_steps": main[0]["eval_steps"],
        "curves": {v: [r["first_half"] for r in rs] for v, rs in curves.items()},
        "final": {v: [r["full_sequence"] for r in rs] for v, rs in curves.items()},
        "causal_variants_ok": all(v >= floor - CAUSAL_SLACK for vals in causal.values() for v in vals),
    }


@claim(
    "chapters.leak.inference",
    source=f"{SOURCE}; this project's analysis of the routing leak (docs/chapters.md)",
    provenance="derived",
    templated=True,
    statement="the models trained with all-position routing (the router_leak runs, {seeds} seeds), "
    "evaluated prefix-only as at inference (position t sees tokens 0..t only), have a mean first-half "
    "loss at or above ln v (the 95% Student-t interval over the seeds lies at or above it), while "
    "with the whole sequence visible the interval of their mean lies below ln v: what the leak gave "
    "in training is lost at inference",
    quick={**LEAK, "evaluation": "prefix_only"},
    full={**LEAK_FULL, "evaluation": "prefix_only"},
    needs=("torch",),
    seed_rule=T_RULE + ", for each evaluation",
    controls=[
        Control(
            "whole_sequence_eval",
            {"evaluation": "full_sequence"},
            "the same models evaluated with the whole sequence visible (the training "
            "view): the leak is there, so '>= ln v' must fail",
        )
    ],
)
def check_leak_inference(p, ctx):
    floor = math.log(p["n_symbols"])
    seeds = ctx.seeds(p["seeds"])
    prefetch_leak(p, ctx, seeds, "sequence")
    runs = [leak_run(p, ctx, s, "sequence") for s in seeds]
    measured = [r[p["evaluation"]] for r in runs]
    full = [r["full_sequence"] for r in runs]
    judgement = all_of(
        evaluated=Threshold(
            f"first-half loss, {p['evaluation']} evaluation (95% t interval over seeds; ln v, nats)",
            floor,
            ">=",
            "theory",
        ).judge(_interval(measured), seeds=len(seeds)),
        training_view=_leak_threshold(floor).judge(_interval(full), seeds=len(seeds)),
    )
    return judgement, {
        "ln_v": floor,
        "seeds": seeds,
        "evaluation": p["evaluation"],
        "per_seed": measured,
        "prefix_only": [r["prefix_only"] for r in runs],
        "full_sequence": full,
    }


_RUN = {k: LEAK[k] for k in RUN_KEYS}
_RUN_FULL = {k: LEAK_FULL[k] for k in RUN_KEYS}
SELECTION = {**_RUN, "seeds": LEAK["seeds"], "variant": "selection_only"}
SELECTION_FULL = {**_RUN_FULL, "seeds": LEAK_FULL["seeds"], "variant": "selection_only"}


@claim(
    "chapters.leak.selection_only",
    source=f"{SOURCE}; this project's analysis of the routing leak (docs/chapters.md)",
    provenance="derived",
    templated=True,
    statement="on the copy task (v = {n_symbols}, n = {half}; causal floor ln v = 2.7726 nats), "
    "models trained with all-position routing and constant chapter weights (the selection kept, no LM "
    "gradient into the router; {steps} steps, batch {batch}) have a mean first-half loss (whole "
    "sequence visible) below ln v, the router_leak criterion (the 95% Student-t interval over {seeds} "
    "seeds lies below it): the chapter selection alone carries later tokens to earlier positions",
    quick=SELECTION,
    full=SELECTION_FULL,
    needs=("torch",),
    seed_rule=T_RULE,
    controls=[
        Control(
            "first",
            {"variant": "first"},
            "routing from position 0 only (BOS first: one fixed chapter set), the run router_leak's "
            "control trains: the selection cannot depend on later tokens, so '< ln v' must fail",
        ),
        Control(
            "no_memory",
            {"variant": "none"},
            "the memory layer removed (router_leak's control run): nothing is selected, so the "
            "criterion must fail",
        ),
    ],
)
def check_selection_only(p, ctx):
    floor = math.log(p["n_symbols"])
    seeds = ctx.seeds(p["seeds"])
    prefetch_leak(p, ctx, seeds, p["variant"])
    runs = [leak_run(p, ctx, s, p["variant"]) for s in seeds]
    losses = [r["full_sequence"] for r in runs]
    return _leak_threshold(floor).judge(_interval(losses), seeds=len(seeds)), {
        "ln_v": floor,
        "variant": p["variant"],
        "seeds": seeds,
        "per_seed": losses,
        "mean": float(np.mean(losses)),
        "prefix_only": [r["prefix_only"] for r in runs],
        "eval_steps": runs[0]["eval_steps"],
        "curves": [r["first_half"] for r in runs],
    }


#: Quick: the prefix-routed run goes the whole 150-step schedule (a prefix-routed training step
#: costs about 3x a sequence-routed one, since every position reads its own chapters), 3 seeds;
#: the earlier quick setting stopped at step 150 of a 300-step schedule on one seed. Pilot seeds
#: 100-102 (never judged): prefix 2.777 / 2.776 / 2.778 at step 150, sequence 2.519 / 2.583 / 2.559,
#: selection-only 2.423 / 2.495 / 2.475 (table above). Full: the whole 300-step run, batch 64, 3
#: seeds (router_leak's prefix variant run).
CAUSAL = {**_RUN, "stop": LEAK["steps"], "seeds": LEAK["seeds"], "variant": "prefix"}
CAUSAL_FULL = {**_RUN_FULL, "stop": LEAK_FULL["steps"], "seeds": LEAK_FULL["seeds"], "variant": "prefix"}


@claim(
    "chapters.leak.causal_prefix",
    source=f"{SOURCE}; this project's analysis of the routing leak (docs/chapters.md)",
    provenance="derived",
    templated=True,
    statement="on the copy task (v = {n_symbols}, n = {half}), models trained with per-position causal "
    "routing (position t routed from the running mean of positions 0..t) keep their mean first-half "
    "loss at or above ln v - 0.01 = 2.7626 nats at step {stop} (batch {batch}; the 95% Student-t "
    "interval over {seeds} seeds lies at or above it), where all-position routing trained on the same "
    "batches goes below it",
    quick=CAUSAL,
    full=CAUSAL_FULL,
    needs=("torch",),
    seed_rule=T_RULE,
    controls=[
        Control(
            "sequence_routing",
            {"variant": "sequence"},
            "the paper's all-position routing, same seeds, batches and step (router_leak's runs): it "
            "leaks, so '>= ln v - 0.01' must fail",
        ),
        Control(
            "selection_only",
            {"variant": "selection_only"},
            "all-position routing with constant weights (the selection_only runs): the selection "
            "alone leaks, so the criterion must fail",
        ),
    ],
)
def check_causal_prefix(p, ctx):
    floor = math.log(p["n_symbols"])
    seeds = ctx.seeds(p["seeds"])
    prefetch_leak(_stop_params(p, p["variant"]), ctx, seeds, p["variant"])  # seeds together (GPU)
    values = [loss_at_stop(p, ctx, s, p["variant"]) for s in seeds]
    losses = [v[0] for v in values]
    rule = _causal_rule(floor, f"{p['variant']} routing at step {p['stop']}")
    return rule.judge(_interval(losses), seeds=len(seeds)), {
        "ln_v": floor,
        "variant": p["variant"],
        "step": p["stop"],
        "seeds": seeds,
        "per_seed": losses,
        "prefix_only": [v[1] for v in values],
    }
