"""Toy routing experiments of Mixture of Chapters (2603.21096) [derived], docs/chapters.md: router
utilisation with and without the load-balance loss, and the top-k sweep (split from
``verify/chapters/toy.py``, which keeps fact storage, retention and frozen-bank parity; the name
sorts right after it, so the registration order is unchanged).

Training runs in float32 on ``ctx.device`` whatever ``ctx.dtype`` says. Phase-1 runs are shared
with the other toy claims through ``ctx.shared`` (``verify.chapters.toy_setup``).
"""

from __future__ import annotations

import numpy as np

from verify.chapters.toy_setup import BASE, FULL, SOURCE, USAGE, phase1
from verify.claims import Control, Outcome, claim
from verify.ledger import LedgerEntry, record

record(
    LedgerEntry(
        claim_id="chapters.toy.router_utilisation",
        measured="first epoch (8 steps of 64 facts, 63 routed chapters, top-4, L_lb 0.01), per seed "
        "(fraction of routed chapters used, normalised entropy): seed 0 (0.921, 0.922), seed 1 "
        "(0.921, 0.900), seed 2 (0.952, 0.885), seed 3 (0.857, 0.848): seed 3 uses 54 of 63 "
        "chapters, below the 0.9 threshold, so 'every seed of 5' fails at base seeds 0, 1 and 2. "
        "The entropy criterion (>= 0.8) holds in every seed measured; without L_lb the entropy "
        "is 0.535-0.636.",
        tried="the planned measurement point (one epoch of the facts) with 2 seeds (passed at base seeds "
        "0 and 1, failed at base seed 2 through seed 3); the claim now uses 5 seeds because a "
        "first epoch costs a fraction of a second (>= 3 seeds where a seed is cheap).",
        reason="2048 top-4 picks over 63 chapters in one epoch leave a few chapters unpicked by "
        "chance when the router is not yet balanced; the 0.9 fraction threshold (a [derived] "
        "pilot value) sits inside the seed-to-seed spread. The load-balance effect itself is "
        "clear (entropy 0.85-0.92 with L_lb vs 0.54-0.64 without, lb_needed). Full scale (one epoch "
        "of 1024 facts) passes at base seed 0 (fraction 1.0, entropy 0.961; no-L_lb control 0.333, "
        "0.473; run of 2026-12-01 on the shared CPU, results/full): this entry holds at quick "
        "scale only.",
        scales=("quick",),
    )
)

record(
    LedgerEntry(
        claim_id="chapters.toy.topk_sweep",
        measured="quick scale (512 facts, mean training loss over steps 25-100 of a 150-step "
        "schedule, k = 2, 4, 8), per seed: seed 0 4.0494, 4.0463, 4.0409 (increments -0.0031, "
        "-0.0054); seed 1 3.9891, 3.9877, 3.9913 (-0.0013, +0.0036); seed 2 4.0094, 4.0023, "
        "3.9937 (-0.0071, -0.0086); seed 3 4.0781, 4.0664, 4.0828 (-0.0116, +0.0164); seed 4 "
        "3.9737, 3.9656, 3.9678 (-0.0081, +0.0022). k = 2 -> 4 always lowers the loss; "
        "4 -> 8 raises it in seeds 1, 3 and 4, so 'every seed of 3' fails at base seeds 0, 1, 2.",
        tried="the old criterion (one seed, +0.02 tolerance per step) passed every seed but also "
        "passed the reversed curve (a rising law), so it could not fail; with tolerance 0 one "
        "seed flips with the seed (pass at 0 and 2, fail at 1, 3, 4), so the rule is every seed "
        "of 3.",
        reason="at quick scale (the first 100 steps, loss still ~4 nats of ln 256 = 5.5) the effect of "
        "k between 4 and 8 is below the seed-to-seed noise of a 75-step window; the full-scale "
        "setting (steps 50-150 of 300) was not run here.",
    )
)


def _usage_rows(p, ctx, lb_coef, steps):
    from constructions.chapters.train import usage

    window = max(1, p["n_facts"] // p["batch"])  # one epoch of the facts
    rows = []
    for i, s in enumerate(ctx.seeds(p["usage_seeds"])):
        # The first `seeds` seeds reuse the full phase-1 runs; the others train the first epoch
        # only (same schedule, so the first epoch is the same as in a full run). Usage reads the
        # routing frequencies alone, so a run no other claim shares is not evaluated.
        run_steps = steps if i < p["seeds"] else window
        shared = run_steps == p["steps1"] and lb_coef == 0.01  # the recipe run of the toy claims
        hist = phase1(p, ctx, s, "moc", steps=run_steps, lb_coef=lb_coef, evaluate=shared)[0]
        ends = list(range(window, len(hist["f"]) + 1, window))
        rows.append(
            {
                "seed": s,
                "first_epoch": usage(hist["f"], window, window),
                "end": usage(hist["f"], len(hist["f"]), window),
                "entropy_steps": ends,
                "entropy": [usage(hist["f"], e, window)["entropy"] for e in ends],
            }
        )
    return rows, window


@claim(
    "chapters.toy.router_utilisation",
    source=f"{SOURCE}; Switch Transformer load balance",
    provenance="derived",
    statement="with L_lb at coefficient 0.01, over the first epoch of the facts (quick: 8 steps) "
    "every seed of 5 selects >= 90% of the routed chapters at least once and the normalised "
    "entropy of the selection frequencies is >= 0.8 (end-of-training usage reported)",
    quick=dict(BASE, **USAGE, lb_coef=0.01, steps_nolb=24),
    full=dict(FULL, **USAGE, lb_coef=0.01, steps_nolb=300),
    needs=("torch",),
    seed_rule="every seed of 0..4",
    controls=[
        Control(
            "no_lb",
            {"lb_coef": 0.0},
            "the load-balance loss switched off: usage collapses within the first "
            "epoch (the lb_needed run), so the entropy criterion must fail",
        )
    ],
)
def check_utilisation(p, ctx):
    steps = p["steps1"] if p["lb_coef"] == 0.01 else p["steps_nolb"]
    rows, window = _usage_rows(p, ctx, p["lb_coef"], steps)
    frac = min(r["first_epoch"]["fraction_used"] for r in rows)
    ent = min(r["first_epoch"]["entropy"] for r in rows)
    return Outcome(
        {"fraction_used": ">= 0.9", "entropy": ">= 0.8"},
        {"fraction_used": frac, "entropy": ent},
        frac >= 0.9 and ent >= 0.8,
        details={"window": window, "rows": rows, "end_entropy": [r["end"]["entropy"] for r in rows]},
    )


@claim(
    "chapters.toy.lb_needed",
    source=f"{SOURCE}; Switch Transformer load balance",
    provenance="derived",
    statement="without L_lb (coefficient 0), chapter usage over the first epoch collapses: its "
    "normalised entropy is <= the entropy with L_lb - 0.1 in every seed of 5",
    quick=dict(BASE, **USAGE, steps_nolb=24, lb_coef_dropped=0.0),
    full=dict(FULL, **USAGE, steps_nolb=300, lb_coef_dropped=0.0),
    demonstrates_failure=True,
    needs=("torch",),
    seed_rule="every seed of 0..4",
    controls=[
        Control(
            "lb_kept",
            {"lb_coef_dropped": 0.01},
            "the other side of the bracket: the 'without' arm keeps L_lb at 0.01, so "
            "its usage equals the with-L_lb run and the collapse criterion must fail",
        )
    ],
)
def check_lb_needed(p, ctx):
    base = {k: v for k, v in p.items() if k not in ("steps_nolb", "lb_coef_dropped")}
    with_lb, window = _usage_rows(base, ctx, 0.01, base["steps1"])
    coef = p["lb_coef_dropped"]
    without, _ = _usage_rows(base, ctx, coef, base["steps1"] if coef == 0.01 else p["steps_nolb"])
    e_with = [r["first_epoch"]["entropy"] for r in with_lb]
    e_without = [r["first_epoch"]["entropy"] for r in without]
    passed = all(b <= a - 0.1 for a, b in zip(e_with, e_without))
    return Outcome(
        f"<= entropy with L_lb - 0.1 ({min(e_with):.3f})",
        max(e_without),
        passed,
        details={
            "window": window,
            "entropy_with_lb": e_with,
            "entropy_without_lb": e_without,
            "f_with_lb": [r["first_epoch"]["f"] for r in with_lb],
            "f_without_lb": [r["first_epoch"]["f"] for r in without],
            "rows_without": without,
            "rows_with": with_lb,
        },
    )


@claim(
    "chapters.toy.topk_sweep",
    source=f"{SOURCE}; this project (top-k sweep)",
    provenance="derived",
    statement="at a fixed bank the mean training loss over the early window (quick: steps 25-100 "
    "of a 150-step schedule; full: steps 50-150 of 300) is non-increasing in k in "
    "{2, 4, 8} (every increment <= 0) in every one of 3 seeds (k = 1 reported at full "
    "scale: its router gets no LM gradient). The effect is small: at quick scale the "
    "increments per doubling lie between -0.012 and +0.016 nats over seeds 0-4",
    quick=dict(BASE, top_ks=[2, 4, 8], report_ks=[], window=[25, 100], topk_seeds=3),
    full=dict(FULL, top_ks=[2, 4, 8, 16], report_ks=[1], window=[50, 150], topk_seeds=3),
    needs=("torch",),
    seed_rule="every seed of 0..2",
    controls=[
        Control(
            "k_reversed",
            {"control": "k_reversed"},
            "the measured losses read in reverse k order (a synthetic law in which "
            "the loss rises with k): the criterion must fail",
        )
    ],
)
def check_topk(p, ctx):
    base = {k: v for k, v in p.items() if k not in ("top_ks", "report_ks", "window", "control", "topk_seeds")}
    lo, hi = p["window"]
    rows = []
    for i, seed in enumerate(ctx.seeds(p["topk_seeds"])):
        losses = {}
        for k in list(p["top_ks"]) + list(p["report_ks"]):
            # k = 4 reuses the phase-1 runs of the seeds the other toy claims train (same
            # schedule, so its first `hi` steps are those of a run stopped at `hi`)
            shared = k == 4 and i < p["seeds"]
            hist = (
                phase1(base, ctx, seed, "moc")[0]
                if shared
                else phase1(base, ctx, seed, "moc", top_k=k, steps=hi, evaluate=False)[0]
            )  # the sweep reads the training loss only: its own runs are not evaluated
            losses[k] = float(np.mean(hist["loss"][lo:hi]))
        sweep = [losses[k] for k in p["top_ks"]]
        if p.get("control") == "k_reversed":
            sweep = sweep[::-1]
        increments = [b - a for a, b in zip(sweep, sweep[1:])]
        rows.append(
            {
                "seed": seed,
                "loss": sweep,
                "increments": increments,
                "passed": all(x <= 0 for x in increments),
                "reported": {str(k): losses[k] for k in p["report_ks"]},
            }
        )
    # Criterion changed: the old tolerance (+0.02 per step, one seed) accepted
    # a flat or slightly rising curve while the effect is ~0.005 nats; its result is kept here.
    first = rows[0]
    return Outcome(
        "non-increasing (every increment <= 0) in every seed",
        [r["loss"] for r in rows],
        all(r["passed"] for r in rows),
        details={
            "top_ks": list(p["top_ks"]),
            "rows": rows,
            "loss": first["loss"],
            "increments": first["increments"],
            "reported": first["reported"],
            "previous_criterion": {
                "rule": "every increment <= +0.02, first seed only",
                "passed": all(x <= 0.02 for x in first["increments"]),
            },
        },
    )
