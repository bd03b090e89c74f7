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

import numpy as np

from theory.papers import paper
from verify.claims import Control, claim, rng_for, shared
from verify.criteria import EverySeed, Threshold, all_of

SOURCE = paper("chapters")
#: Quick scale: the task of docs/chapters.md (v = 16, n = 6, 300 steps) at batch 32 and one seed, chosen on a
#: pilot seed that is not judged (seed 100: 2.404 nats at step 300, prefix-only 3.142): one run
#: costs about 13 CPU-seconds, and each control is another run. Full scale: its batch 64,
#: 3 seeds, and every variant (the prefix-routed one costs about 3.5x a sequence-routed run).
LEAK = {
    "n_symbols": 16,
    "half": 6,
    "steps": 300,
    "batch": 32,
    "seeds": 1,
    "eval_size": 512,
    "eval_every": 50,
    "routing": "sequence",
    "memory": True,
    "variants": [],
}
LEAK_FULL = dict(LEAK, batch=64, seeds=3, variants=["prefix", "first", "none", "selection_only"])
#: The quick setting's variants, run outside CI on seeds 0-2 (2026-12-01, `variant_table(range(3),
#: ["sequence", "selection_only", "prefix"])`, before the prefix path was vectorised: a prefix-routed
#: run then cost about 55-60 CPU-s; a selection-only run 12-14). The claims
#: chapters.leak.selection_only and chapters.leak.causal_prefix now check them. First-half loss
#: with the whole sequence visible / evaluated prefix-only (ln v = 2.7726; the claims' thresholds
#: are ln v - 0.30 = 2.4726 for a leak and ln v - 0.01 = 2.7626 for a causal variant):
#:   seed  sequence (paper)   selection-only     prefix (causal)
#:   0     2.3936 / 3.0880    2.3572 / 3.0741    2.7739 / 2.7739
#:   1     2.4580 / 3.0982    2.3853 / 3.1410    2.7787 / 2.7787
#:   2     2.3305 / 3.1748    2.3622 / 3.1226    2.7762 / 2.7762
#: The selection alone (constant chapter weights, no LM gradient into the router) leaks as much
#: as the paper's weighted routing at this scale (mean 2.368 vs 2.394); every leaking model is
#: worse than chance when evaluated prefix-only; the causal prefix router stays at the floor.
RUN_KEYS = ("n_symbols", "half", "steps", "batch", "eval_size", "eval_every")
MARGIN = 0.30  # (a) must beat the causal floor ln v by this much [derived]
CAUSAL_SLACK = 0.01  # causal variants may sit this far below ln v (evaluation noise)


@shared
def _leak_run(ctx, n_symbols, half, steps, batch, eval_size, eval_every, stop, seed, variant) -> dict:
    from constructions.chapters.copy_task import copy_config, copy_eval, make_copy_batch, train_copy
    from constructions.chapters.train import build

    routing = variant if variant in ("sequence", "prefix", "first") else "sequence"
    cfg = copy_config(n_symbols, routing, memory=variant != "none", weighting=variant != "selection_only")
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


def leak_run(p, ctx, seed: int, variant: str) -> dict:
    """Train one copy-task model (variant as in the module docstring) and evaluate its first-half
    loss with the whole sequence visible (teacher forcing) and prefix-only (as at inference), once
    per run (:func:`verify.claims.shared`). With ``p["stop"]`` < ``p["steps"]`` the run stops at
    step ``stop`` of the ``steps``-step schedule (the same batches and learning rates as the longer
    run's first ``stop`` steps)."""
    stop = int(p.get("stop", p["steps"]))
    run = (p["n_symbols"], p["half"], p["steps"], p["batch"], p["eval_size"], p["eval_every"], stop)
    return _leak_run(ctx, *run, int(seed), variant)


def loss_at_stop(p, ctx, seed: int, variant: str) -> tuple[float, float | None]:
    """(first-half loss with the whole sequence visible, prefix-only loss or None) at step
    ``p["stop"]`` of the ``p["steps"]``-step schedule. The prefix-routed variant runs to ``stop``
    (evaluated at 0 and ``stop`` only: it is the expensive one); every other variant reads the
    value off the curve of its full-length run, which the other leak claims share. Both are the
    same number: training draws nothing from the evaluation (tests/chapters/test_leak.py)."""
    stop = int(p["stop"])
    if variant == "prefix":
        every = p["eval_every"] if stop == p["steps"] else stop  # full scale: router_leak's run
        r = leak_run(dict(p, eval_every=every), ctx, seed, variant)
        return r["full_sequence"], r["prefix_only"]
    full = {k: v for k, v in p.items() if k != "stop"}
    r = leak_run(full, ctx, seed, variant)
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
    """The leak criterion: mean first-half loss at most ln v - MARGIN (the margin is a convention)."""
    return Threshold(
        f"mean first-half loss, whole sequence visible (ln v - {MARGIN}, nats)",
        floor - MARGIN,
        "<=",
        "convention",
    )


def _causal_rule(floor: float, what: str) -> EverySeed:
    """A causal model's criterion: first-half loss at least ln v - CAUSAL_SLACK on every seed (the
    floor is the theory's; the slack for evaluation noise is a convention)."""
    return EverySeed(
        f"first-half loss, {what} (ln v - {CAUSAL_SLACK}, nats)", floor - CAUSAL_SLACK, ">=", "convention"
    )


@claim(
    "chapters.leak.router_leak",
    source=f"{SOURCE}; this project's analysis of the routing leak (docs/chapters.md)",
    provenance="derived",
    statement="on the copy task (v = 16, n = 6; causal floor ln v = 2.7726 nats on x_2..x_n), a "
    "model trained with the paper's all-position routing reaches a mean first-half "
    "loss (whole sequence visible, as in training) <= ln v - 0.30: it reads later "
    "tokens through its router. Quick: 300 steps, batch 32, 1 seed; full: batch 64, "
    "3 seeds, and every seed of the causal variants (prefix routing, position-0 "
    "routing, no memory) stays >= ln v - 0.01; the selection-only variant is reported",
    quick=LEAK,
    full=LEAK_FULL,
    needs=("torch",),
    seed_rule="mean over seeds 0..S-1 (quick 1 seed, full 3); causal variants: every seed",
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
    main = [leak_run(p, ctx, s, _variant_of(p)) for s in seeds]
    losses = [r["full_sequence"] for r in main]
    mean = float(np.mean(losses))
    variants = {v: [leak_run(p, ctx, s, v) for s in seeds] for v in p["variants"]}
    causal = [r["full_sequence"] for v, rs in variants.items() if v != "selection_only" for r in rs]
    causal_ok = all(v >= floor - CAUSAL_SLACK for v in causal)
    parts = {"leak": _leak_threshold(floor).judge(mean)}
    if causal:  # full scale: every seed of every causal variant
        labels = [f"{v} {r['seed']}" for v, rs in variants.items() if v != "selection_only" for r in rs]
        parts["causal_variants"] = _causal_rule(floor, "causal variants").judge(causal, seeds=labels)
    curves = {_variant_of(p): main, **variants}
    return all_of(**parts) if len(parts) > 1 else parts["leak"], {
        "ln_v": floor,
        "seeds": seeds,
        "variant": _variant_of(p),
        "per_seed": losses,
        "prefix_only": [r["prefix_only"] for r in main],
        "eval_steps": main[0]["eval_steps"],
        "curves": {v: [r["first_half"] for r in rs] for v, rs in curves.items()},
        "final": {v: [r["full_sequence"] for r in rs] for v, rs in curves.items()},
        "causal_variants_ok": causal_ok,
    }


@claim(
    "chapters.leak.inference",
    source=f"{SOURCE}; this project's analysis of the routing leak (docs/chapters.md)",
    provenance="derived",
    statement="the model trained with all-position routing (the router_leak run), evaluated "
    "prefix-only as at inference (position t sees tokens 0..t only), has first-half "
    "loss >= ln v in every seed, while with the whole sequence visible its mean over the "
    "seeds is <= ln v - 0.30: what the leak gave in training is lost at inference",
    quick={**LEAK, "evaluation": "prefix_only"},
    full={**LEAK_FULL, "evaluation": "prefix_only"},
    needs=("torch",),
    seed_rule="every seed (quick 1, full 3)",
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
    runs = [leak_run(p, ctx, s, "sequence") for s in ctx.seeds(p["seeds"])]
    measured = [r[p["evaluation"]] for r in runs]
    full = [r["full_sequence"] for r in runs]
    judgement = all_of(
        evaluated=EverySeed(
            f"first-half loss, {p['evaluation']} evaluation (ln v, nats)", floor, ">=", "theory"
        ).judge(measured, seeds=ctx.seeds(p["seeds"])),
        training_view=_leak_threshold(floor).judge(float(np.mean(full))),
    )
    return judgement, {
        "ln_v": floor,
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
    statement="on the copy task (v = 16, n = 6; causal floor ln v = 2.7726 nats), a model trained "
    "with all-position routing and constant chapter weights (the selection kept, no LM "
    "gradient into the router) reaches a mean first-half loss (whole sequence visible) "
    "<= ln v - 0.30, the router_leak criterion: the chapter selection alone carries later "
    "tokens to earlier positions. Quick: 300 steps, batch 32, 1 seed; full: batch 64, 3 seeds",
    quick=SELECTION,
    full=SELECTION_FULL,
    needs=("torch",),
    seed_rule="mean over seeds 0..S-1 (quick 1 seed, full 3), every per-seed value recorded",
    controls=[
        Control(
            "first",
            {"variant": "first"},
            "routing from position 0 only (BOS first: one fixed chapter set), the run router_leak's "
            "control trains: the selection cannot depend on later tokens, so '<= ln v - 0.30' must fail",
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
    runs = [leak_run(p, ctx, s, p["variant"]) for s in ctx.seeds(p["seeds"])]
    losses = [r["full_sequence"] for r in runs]
    return _leak_threshold(floor).judge(float(np.mean(losses))), {
        "ln_v": floor,
        "variant": p["variant"],
        "seeds": ctx.seeds(p["seeds"]),
        "per_seed": losses,
        "prefix_only": [r["prefix_only"] for r in runs],
        "eval_steps": runs[0]["eval_steps"],
        "curves": [r["first_half"] for r in runs],
    }


#: Quick: the prefix-routed run stops at step 150 of the 300-step schedule (a prefix-routed training
#: step costs about 3x a sequence-routed one, 97-108 ms vs 35 ms on one thread, since every position
#: reads its own chapters). Chosen on pilot seeds 100 and 101, never judged: at step 150 sequence
#: routing is at 2.552 / 2.589 nats (below ln v - 0.01 = 2.7626), selection-only at 2.531 / 2.630,
#: prefix routing (seed 100) at 2.787 (prefix-only 2.787). Full: the whole 300-step run, batch 64,
#: 3 seeds (router_leak's prefix variant run).
CAUSAL = {**_RUN, "stop": 150, "seeds": 1, "variant": "prefix"}
CAUSAL_FULL = {**_RUN_FULL, "stop": LEAK_FULL["steps"], "seeds": LEAK_FULL["seeds"], "variant": "prefix"}


@claim(
    "chapters.leak.causal_prefix",
    source=f"{SOURCE}; this project's analysis of the routing leak (docs/chapters.md)",
    provenance="derived",
    statement="on the copy task (v = 16, n = 6), a model trained with per-position causal routing "
    "(position t routed from the running mean of positions 0..t) keeps its first-half loss "
    ">= ln v - 0.01 = 2.7626 nats on every seed, where all-position routing trained on the "
    "same batches goes below it. Quick: step 150 of the 300-step schedule, batch 32, 1 seed "
    "(the full-length run is 3x a sequence-routed one); full: step 300, batch 64, 3 seeds",
    quick=CAUSAL,
    full=CAUSAL_FULL,
    needs=("torch",),
    seed_rule="every seed (quick 1, full 3)",
    controls=[
        Control(
            "sequence_routing",
            {"variant": "sequence"},
            "the paper's all-position routing, same seeds, batches and step (read off router_leak's "
            "run): it leaks, so '>= ln v - 0.01' must fail",
        ),
        Control(
            "selection_only",
            {"variant": "selection_only"},
            "all-position routing with constant weights (read off the selection_only run): the "
            "selection alone leaks, so the criterion must fail",
        ),
    ],
)
def check_causal_prefix(p, ctx):
    floor = math.log(p["n_symbols"])
    seeds = ctx.seeds(p["seeds"])
    values = [loss_at_stop(p, ctx, s, p["variant"]) for s in seeds]
    losses = [v[0] for v in values]
    return _causal_rule(floor, f"{p['variant']} routing at step {p['stop']}").judge(losses, seeds=seeds), {
        "ln_v": floor,
        "variant": p["variant"],
        "step": p["stop"],
        "seeds": seeds,
        "per_seed": losses,
        "prefix_only": [v[1] for v in values],
    }
