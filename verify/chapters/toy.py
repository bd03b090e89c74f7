"""Toy synthetic experiments of Mixture of Chapters (2603.21096) [derived], docs/chapters.md: fact storage
against the iso-FLOP dense model, retention after a phase-2 task and frozen-bank parity (router
utilisation and the top-k sweep are in ``verify/chapters/toy_routing.py``).

Training runs in float32 on ``ctx.device`` whatever ``ctx.dtype`` says (these are training
experiments, not exact checks). Phase-1 and phase-2 runs are shared between claims
(:func:`verify.claims.shared`, keyed by every parameter they read and the seed).
"""

from __future__ import annotations

import numpy as np

from verify.chapters.toy_setup import (
    BASE,
    FULL,
    SOURCE,
    STORAGE_BASE,
    STORAGE_FULL,
    STORAGE_LOOKS,
    _acc_at,
    flop_ratio,
    paired,
    phase1,
    phase2,
    prefetch_looks,
    prefetch_phase1,
    storage_rule,
)
from verify.claims import Control, choice, claim
from verify.criteria import EverySeed, Threshold


@claim(
    "chapters.toy.fact_storage_vs_isoflop",
    source=f"{SOURCE}, abstract (iso-FLOP comparison)",
    provenance="derived",
    statement="on synthetic facts, the MoC toy's value accuracy at the comparison step is >= the "
    "iso-FLOP dense model's (rule depth) - 0.02, judged on the mean over seeds of the per-seed "
    "difference in stages (one-sided Student-t bounds at 3 and 6 seeds, error 0.05 per direction; "
    "inconclusive when undecided at 6), a speed-of-storage comparison with the same optimiser for "
    "both. Quick scale is weaker than the setting of docs/chapters.md: 512 facts, step 100 of 150 (the "
    "dense model is near 0.28 there); full scale is its 1024 facts, step 250 of 300",
    quick=dict(STORAGE_BASE, looks=STORAGE_LOOKS, moc_read="trained"),
    full=dict(STORAGE_FULL, looks=STORAGE_LOOKS, moc_read="trained"),
    needs=("torch",),
    seed_rule="staged (sequential) one-sided Student-t bounds of the mean over seeds of the per-seed "
    "difference, looks at 3 and 6 seeds",
    controls=[
        Control(
            "moc_init",
            {"moc_read": "init"},
            "MoC's accuracy taken at step 0 (the untrained model) against the "
            "trained dense model: the criterion must fail",
        )
    ],
)
def check_fact_storage(p, ctx):
    """Judged in stages (:func:`verify.chapters.toy_setup.storage_rule`): seeds are trained one at a
    time until a look decides. The rule was the 95% t interval over 2 seeds (undecided at base
    seeds 2 and 4, where the moc_init control's interval straddled -0.02); at base seed 0 it passed
    with [0.442, 0.864] (a run that undecided.toml reported inconclusive)."""
    moc_read = choice(p, "moc_read", ("trained", "init"))  # init: the control
    step = {"moc": 0 if moc_read == "init" else p["compare_step"], "dense": p["compare_step"]}
    rule = storage_rule(p["looks"])
    runs: dict[str, list] = {"moc": [], "dense": []}

    def difference(seed: int) -> float:
        for kind in runs:
            prefetch_looks(p, ctx, rule, seed, kind)  # a look's seeds trained together (GPU)
            runs[kind].append(phase1(p, ctx, seed, kind)[0])
        return _acc_at(runs["moc"][-1], step["moc"]) - _acc_at(runs["dense"][-1], step["dense"])

    judgement = rule.run(difference, ctx.seeds(rule.cap))
    seeds = ctx.seeds(len(runs["moc"]))
    acc = {k: [_acc_at(h, step[k]) for h in hs] for k, hs in runs.items()}
    dense_layers, ratio = flop_ratio(p)
    return judgement, {
        "seeds": seeds,
        "acc_moc": acc["moc"],
        "acc_dense": acc["dense"],
        "mean_moc": float(np.mean(acc["moc"])),
        "mean_dense": float(np.mean(acc["dense"])),
        "dense_layers": dense_layers,
        "flop_ratio_moc_over_dense": ratio,
        "eval_steps": runs["moc"][0]["eval_steps"],
        "curves_moc": [h["acc"][0] for h in runs["moc"]],
        "curves_dense": [h["acc"][0] for h in runs["dense"]],
        "final_moc": [h["acc"][0][-1] for h in runs["moc"]],
        "final_dense": [h["acc"][0][-1] for h in runs["dense"]],
        "note": "both models use the recipe's optimiser (backbone lr 3e-3); the "
        "21-layer dense model trains slowly at that lr, so this "
        "compares the recipe, not tuned models; the tuned "
        "comparison is chapters.toy.fact_storage_tuned",
    }


@claim(
    "chapters.toy.retention",
    source=f"{SOURCE}, abstract (retention from pretraining to IFT)",
    provenance="derived",
    statement="after phase 2 on a disjoint fact set (bank lr 1/10 of base), the drop of phase-1 "
    "accuracy is <= for MoC than for the iso-FLOP dense model: the 95% t interval over the seeds "
    "(2 quick, 3 full) of the per-seed difference lies at or below 0 (inconclusive when it "
    "straddles 0)",
    quick=dict(BASE, moc_after_phase2="measured"),
    full=dict(FULL, moc_after_phase2="measured"),
    needs=("torch",),
    seed_rule="95% t interval over seeds 0..1 (quick), 0..2 (full) of the per-seed difference",
    controls=[
        Control(
            "moc_forgets",
            {"moc_after_phase2": "init"},
            "MoC's phase-1 accuracy after phase 2 replaced by its accuracy at "
            "initialisation (complete forgetting): its drop is then ~1, larger than "
            "the dense model's, so the criterion must fail",
        )
    ],
)
def check_retention(p, ctx):
    seeds = ctx.seeds(p["seeds"])
    forgets = choice(p, "moc_after_phase2", ("measured", "init")) == "init"
    out = {}
    for kind in ("moc", "dense"):
        prefetch_phase1(p, ctx, seeds, kind)
        firsts = [phase1(p, ctx, s, kind)[0] for s in seeds]
        before = [h["acc"][0][-1] for h in firsts]
        hists = [phase2(p, ctx, s, kind) for s in seeds]
        after = [h["acc"][0][-1] for h in hists]
        if kind == "moc" and forgets:  # the control: complete forgetting
            after = [h["acc"][0][0] for h in firsts]
        out[kind] = {
            "before": before,
            "after": after,
            "drop": [b - a for b, a in zip(before, after)],
            "phase2_acc_B": [h["acc"][1][-1] for h in hists],
            "curves_A": [h["acc"][0] for h in hists],
            "curves_B": [h["acc"][1] for h in hists],
            "eval_steps": hists[0]["eval_steps"],
        }
    rule = Threshold(
        "drop of phase-1 accuracy, MoC - iso-FLOP dense (95% t interval over seeds)", 0.0, "<=", "theory"
    )
    return rule.judge(paired(out["moc"]["drop"], out["dense"]["drop"]), seeds=len(seeds)), {
        "seeds": seeds,
        "mean_drop_moc": float(np.mean(out["moc"]["drop"])),
        "mean_drop_dense": float(np.mean(out["dense"]["drop"])),
        **{f"{k}_{f}": v for k, r in out.items() for f, v in r.items()},
    }


@claim(
    "chapters.toy.frozen_bank_parity",
    source=f"{SOURCE}, Table 8 (frozen bank in IFT)",
    provenance="derived",
    statement="freezing the bank in phase 2 costs nothing against updating it at 1/10 lr: in every "
    "seed the phase-2 accuracy differs by <= 0.01 or the phase-2 loss by <= 0.01 nats. "
    "Quick scale is weaker than the 150-300 phase-2 steps of docs/chapters.md: 100 steps on 512 "
    "facts, 2 seeds (at 75 steps it failed on seed 1: gap 0.021, 0.018 nats)",
    quick=dict(BASE, phase2_read="end"),
    full=dict(FULL, phase2_read="end"),
    needs=("torch",),
    seed_rule="every seed of 0..1 (quick), 0..2 (full)",
    controls=[
        Control(
            "no_phase2",
            {"phase2_read": "start"},
            "the frozen-bank arm read before its phase-2 training (step 0): it has not "
            "learnt the phase-2 facts, so both gaps must exceed 0.01",
        )
    ],
)
def check_frozen(p, ctx):
    seeds = ctx.seeds(p["seeds"])
    rows = []
    at = 0 if choice(p, "phase2_read", ("end", "start")) == "start" else -1  # start: the control
    for s in seeds:
        slow, frozen = phase2(p, ctx, s, "moc", "slow"), phase2(p, ctx, s, "moc", "frozen")
        rows.append(
            {
                "seed": s,
                "acc_slow": slow["acc"][1][-1],
                "acc_frozen": frozen["acc"][1][at],
                "loss_slow": slow["eval_loss"][1][-1],
                "loss_frozen": frozen["eval_loss"][1][at],
                "retained_A_slow": slow["acc"][0][-1],
                "retained_A_frozen": frozen["acc"][0][-1],
            }
        )
    # "accuracy gap <= 0.01 or loss gap <= 0.01 nats" is "the smaller of the two gaps <= 0.01"
    smaller = [
        min(abs(r["acc_slow"] - r["acc_frozen"]), abs(r["loss_slow"] - r["loss_frozen"])) for r in rows
    ]
    rule = EverySeed("min(|phase-2 accuracy gap|, |phase-2 loss gap| nats)", 0.01, "<=", "convention")
    return rule.judge(smaller, seeds=seeds), {"rows": rows}
