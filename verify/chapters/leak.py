"""The routing-leak experiment of Mixture of Chapters (2603.21096), spec §5.7 [derived]: per-sequence
routing pools every position, so under teacher-forced causal language modelling the chapter choice
can carry later tokens to earlier positions. On the copy task [BOS, x_1..x_n, x_1..x_n] the first
half x_2..x_n is unpredictable to any causal model (loss floor ln v); a model that beats the floor
is reading the future through its router.

Variants: ``sequence`` (the paper's routing), ``prefix`` (per-position causal routing from the
running mean of the prefix), ``first`` (position 0 only: fixed-chapter memory), ``none`` (no memory
layer) and ``selection_only`` (paper routing with constant chapter weights: the router gets no LM
gradient, so only the selection itself can leak). Training runs in float32 on ``ctx.device``;
runs are shared between claims through ``ctx.shared``.
"""

from __future__ import annotations

import math

import numpy as np

from theory.papers import paper
from verify.claims import Control, Outcome, claim, rng_for

SOURCE = paper("chapters")
#: Quick scale: the spec's task (v = 16, n = 6, 300 steps) at batch 32 and one seed, chosen on a
#: pilot seed that is not judged (seed 100: 2.404 nats at step 300, prefix-only 3.142): one run
#: costs about 13 CPU-seconds, and each control is another run. Full scale: the spec's batch 64,
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
#: ["sequence", "selection_only", "prefix"])`; they do not fit the area's quick CPU budget: a
#: prefix-routed run costs about 55-60 CPU-s, a selection-only run about 12-14). First-half loss
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
MARGIN = 0.30  # (a) must beat the causal floor ln v by this much (spec §5.7)
CAUSAL_SLACK = 0.01  # causal variants may sit this far below ln v (evaluation noise)


def leak_run(p, ctx, seed: int, variant: str) -> dict:
    """Train one copy-task model (variant as in the module docstring) and evaluate its first-half
    loss with the whole sequence visible (teacher forcing) and prefix-only (as at inference)."""

    def compute():
        from constructions.chapters.train import build, copy_config, copy_eval, make_copy_batch, train_copy

        routing = variant if variant in ("sequence", "prefix", "first") else "sequence"
        cfg = copy_config(
            p["n_symbols"], routing, memory=variant != "none", weighting=variant != "selection_only"
        )
        model = build(cfg, seed, device=ctx.device)
        eval_seqs = make_copy_batch(p["n_symbols"], p["half"], p["eval_size"], rng_for(int(seed), 99))
        hist = train_copy(
            model,
            p["n_symbols"],
            p["half"],
            p["steps"],
            p["batch"],
            rng_for(int(seed), 1),
            eval_seqs,
            eval_every=p["eval_every"],
            device=ctx.device,
        )
        model.eval()
        return {
            "variant": variant,
            "seed": seed,
            "eval_steps": hist["eval_steps"],
            "first_half": hist["first_half"],
            "full_sequence": hist["first_half"][-1],
            "prefix_only": copy_eval(model, eval_seqs, p["half"], prefix_only=True, device=ctx.device),
        }

    key = tuple((k, p[k]) for k in RUN_KEYS)
    return ctx.shared(("chapters.leak", key, int(seed), variant), compute)


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


@claim(
    "chapters.leak.router_leak",
    source=f"{SOURCE}; this project's analysis (spec §5.7)",
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
    causal_ok = all(
        r["full_sequence"] >= floor - CAUSAL_SLACK
        for v, rs in variants.items()
        if v != "selection_only"
        for r in rs
    )
    passed = mean <= floor - MARGIN and causal_ok
    curves = {_variant_of(p): main, **variants}
    return Outcome(
        f"<= ln v - {MARGIN} = {floor - MARGIN:.4f}",
        mean,
        passed,
        details={
            "ln_v": floor,
            "seeds": seeds,
            "variant": _variant_of(p),
            "per_seed": losses,
            "prefix_only": [r["prefix_only"] for r in main],
            "eval_steps": main[0]["eval_steps"],
            "curves": {v: [r["first_half"] for r in rs] for v, rs in curves.items()},
            "final": {v: [r["full_sequence"] for r in rs] for v, rs in curves.items()},
            "causal_variants_ok": causal_ok,
        },
    )


@claim(
    "chapters.leak.inference",
    source=f"{SOURCE}; this project's analysis (spec §5.7)",
    provenance="derived",
    statement="the model trained with all-position routing (the router_leak run), evaluated "
    "prefix-only as at inference (position t sees tokens 0..t only), has first-half "
    "loss >= ln v in every seed, while with the whole sequence visible it is <= "
    "ln v - 0.30: what the leak gave in training is lost at inference",
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
    passed = all(m >= floor for m in measured) and float(np.mean(full)) <= floor - MARGIN
    return Outcome(
        f">= ln v = {floor:.4f} (prefix-only)",
        min(measured),
        passed,
        details={
            "ln_v": floor,
            "evaluation": p["evaluation"],
            "per_seed": measured,
            "prefix_only": [r["prefix_only"] for r in runs],
            "full_sequence": full,
        },
    )
