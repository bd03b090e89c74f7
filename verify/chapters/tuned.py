"""Fact storage of Mixture of Chapters (2603.21096) against the iso-FLOP dense model with each
model's learning rate tuned [derived].

``chapters.toy.fact_storage_vs_isoflop`` trains both models with one shared recipe (backbone lr
3e-3, memory and bank 6e-3), so it compares recipes as much as architectures. Here each model gets
the same number of tries on a tuning seed that is never judged: a grid of backbone learning rates
(memory layers and bank at the recipe's ratio 2x) at the recipe's one warm-up (50 steps), the
rest of the recipe unchanged. Each model keeps its best grid point (highest value accuracy at the
tuning step, ties to the lower value loss), and the two tuned models are compared at the judged
seeds with the recipe claim's criterion. Runs are shared with the recipe claim
(:func:`verify.chapters.toy_setup.phase1`: the grid point equal to the recipe's rate reuses its runs).
"""

from __future__ import annotations

import numpy as np

from verify.chapters.toy_setup import (
    SOURCE,
    STORAGE_BASE,
    STORAGE_FULL,
    STORAGE_LOOKS,
    _acc_at,
    flop_ratio,
    phase1,
    prefetch_looks,
    storage_rule,
)
from verify.claims import Control, choice, claim

#: The grid: backbone lr; memory layers and bank at ``memory_lr_ratio`` x lr (the recipe's 2x);
#: one warm-up value, the recipe's (``train``'s default of 50 steps). Tuning seed 1000 is outside
#: every judged seed range (seeds 0..3 for --seed 0..2).
TUNE = {"tune_seed": 1000, "lr_grid": [1e-3, 3e-3, 1e-2, 3e-2], "memory_lr_ratio": 2.0, "warmup_grid": [50]}
#: Quick-scale tuning: runs stopped at step 50 of the 150-step schedule (half the comparison step),
#: score = value accuracy at step 50 on seed 1000. It costs about 40 CPU-seconds (8 runs of 50
#: steps; the two fact-storage claims took 92 CPU-s with it, 52 without), which the area's 145
#: CPU-s quick budget cannot hold, so CI's quick run does not rerun it (``retune`` False): it uses
#: the picks of this recorded run of the same code (2026-12-01, ``python -m verify run
#: 'chapters.toy.fact_storage*' --fresh`` with ``retune`` True; a second process rerunning it
#: picked the same rates; the table is copied into the record's details). Re-recorded on 2026-12-07
#: after the toy trainings were pinned to one torch thread: the two-thread table differed at
#: lr 0.01 and 0.03 (MoC accuracy 0.490 and 0.354 against 0.492 and 0.326), the picks did not. Full scale reruns the tuning at its comparison step (250
#: of 300); that has not been run here (no GPU, a loaded 2-core CPU).
RECORDED_QUICK_TUNING = {
    "moc": [
        (1e-3, 0.154296875, 5.888919314517085),
        (3e-3, 0.3984375, 4.7290512135483),
        (1e-2, 0.4921875, 3.014937706215572),
        (3e-2, 0.326171875, 2.791069800737693),
    ],
    "dense": [
        (1e-3, 0.048828125, 5.899643548261914),
        (3e-3, 0.06640625, 5.248661590028537),
        (1e-2, 0.009765625, 5.50990819706288),
        (3e-2, 0.009765625, 5.481984510156972),
    ],
}
TUNED_QUICK = dict(STORAGE_BASE, **TUNE, looks=STORAGE_LOOKS, tune_step=50, retune=False, moc_read="trained")
TUNED_FULL = dict(STORAGE_FULL, **TUNE, looks=STORAGE_LOOKS, tune_step=250, retune=True, moc_read="trained")


def _rates(p, lr):
    return dict(p, lr=float(lr), lr_memory=float(p["memory_lr_ratio"] * lr))


def grid_run(p, ctx, seed, kind, lr, stop):
    """Phase-1 history of ``kind`` at backbone rate ``lr`` on the recipe's schedule, stopped at
    step ``stop``; the recipe's own rate reuses the recipe claim's full run (same numbers up to
    ``stop``: same batches and schedule). A run of its own is evaluated at steps 0 and ``stop``
    only, the two steps the tuning and the comparison read (evaluation changes no weight)."""
    params, steps = _grid_params(p, lr, stop)
    return phase1(params, ctx, seed, kind, steps=steps)[0]


def _grid_params(p, lr, stop) -> tuple[dict, int | None]:
    """The phase-1 parameters and steps of :func:`grid_run` (the recipe's own run at its rate)."""
    if lr == p["lr"] and p["memory_lr_ratio"] * lr == p["lr_memory"]:
        return p, None
    return dict(_rates(p, lr), eval_every=int(stop)), stop


def _row(p, lr, acc, loss):
    return {
        "lr": float(lr),
        "lr_memory": float(p["memory_lr_ratio"] * lr),
        "warmup": p["warmup_grid"][0],
        "acc": float(acc),
        "loss": float(loss),
    }


def choose(rows):
    """The kept grid point: highest accuracy at the tuning step, ties to the lower loss."""
    return max(rows, key=lambda r: (r["acc"], -r["loss"]))


def tune(p, ctx, kind):
    """Every grid point of ``kind`` on the tuning seed: rows (lr, warm-up, accuracy and loss at
    the tuning step) and the chosen row. With ``retune`` False (quick scale in CI) the rows are
    those of :data:`RECORDED_QUICK_TUNING`, nothing is trained."""
    if not p.get("retune", True):
        recorded = RECORDED_QUICK_TUNING[kind]
        if [lr for lr, _, _ in recorded] != list(p["lr_grid"]) or p["tune_step"] != 50:
            raise ValueError(
                "the recorded tuning is for the quick grid at step 50 only; set "
                "retune=True for another grid or tuning step"
            )
        rows = [_row(p, lr, acc, loss) for lr, acc, loss in recorded]
        return rows, choose(rows)
    rows = []
    for lr in p["lr_grid"]:
        hist = grid_run(p, ctx, p["tune_seed"], kind, lr, p["tune_step"])
        i = hist["eval_steps"].index(p["tune_step"])
        rows.append(_row(p, lr, hist["acc"][0][i], hist["eval_loss"][0][i]))
    return rows, choose(rows)


@claim(
    "chapters.toy.fact_storage_tuned",
    source=f"{SOURCE}, abstract (iso-FLOP comparison)",
    provenance="derived",
    statement="with each model's learning rate tuned on seed 1000 (never judged; the same 4 tries "
    "for each: backbone lr in {1e-3, 3e-3, 1e-2, 3e-2}, memory and bank at 2x, one "
    "warm-up of 50 steps; best value accuracy at the tuning step), the MoC toy's "
    "value accuracy at the comparison step is >= the iso-FLOP dense model's - 0.02 (the mean over "
    "seeds of the per-seed difference judged in stages at 3 and 6 seeds; the criterion of "
    "fact_storage_vs_isoflop, whose shared-"
    "recipe numbers are in the details). Quick scale tunes cheaply, on runs stopped at "
    "step 50 of the 150-step schedule (picked: MoC 1e-2, dense 3e-3, the recipe's), "
    "and compares at step 100 (512 facts); for the CPU budget CI uses the "
    "recorded picks of that tuning run instead of rerunning it. Full scale tunes and "
    "compares at step 250 of 300 (1024 facts; not run here). Tuning "
    "does not reverse the shared-recipe conclusion at quick scale (--seed 0, 1, 2): "
    "the dense model does best at the recipe's rate, so its numbers are unchanged, "
    "and MoC gains 0.05-0.07",
    quick=TUNED_QUICK,
    full=TUNED_FULL,
    needs=("torch",),
    seed_rule="staged (sequential) one-sided Student-t bounds of the mean over seeds of the per-seed "
    "difference, looks at 3 and 6 seeds; tuning on seed 1000 only",
    controls=[
        Control(
            "moc_init",
            {"moc_read": "init"},
            "the tuned MoC's accuracy taken at step 0 (the untrained model) against "
            "the tuned dense model: the criterion must fail",
        )
    ],
)
def check_fact_storage_tuned(p, ctx):
    """The control moc_init takes the tuned MoC runs' step-0 evaluation (the untrained model)
    against the tuned dense runs at the comparison step: two different arms. Each run is read
    once (the control used to read the tuned MoC runs a second time for their step 0). Judged in
    stages (:func:`verify.chapters.toy_setup.storage_rule`, seeds trained one at a time until a
    look decides); the rule was the 95% t interval over 2 seeds (undecided at base seeds 2 and 4,
    where the moc_init control's interval straddled -0.02; at base seed 0 it passed with [0.472,
    0.944])."""
    rule = storage_rule(p["looks"])
    if p["tune_seed"] in ctx.seeds(rule.cap):
        raise ValueError(f"the tuning seed {p['tune_seed']} must not be a judged seed {ctx.seeds(rule.cap)}")
    if len(p["warmup_grid"]) != 1 or p["warmup_grid"][0] != 50:
        raise ValueError("the grid has one warm-up, the recipe's 50 steps (train's default)")
    step = p["compare_step"]
    tuning, acc = {}, {"moc": [], "dense": []}
    at_init = choice(p, "moc_read", ("trained", "init")) == "init"  # the control: the tuned MoC at step 0
    for kind in ("moc", "dense"):
        rows, best = tune(p, ctx, kind)
        tuning[kind] = {"grid": rows, "chosen": best, "rerun": bool(p.get("retune", True))}

    def difference(seed: int) -> float:
        for kind in ("moc", "dense"):
            params, steps = _grid_params(p, tuning[kind]["chosen"]["lr"], step)
            prefetch_looks(params, ctx, rule, seed, kind, steps=steps)  # a look's seeds together (GPU)
            h = grid_run(p, ctx, seed, kind, tuning[kind]["chosen"]["lr"], step)  # each run read once
            acc[kind].append(h["acc"][0][0] if at_init and kind == "moc" else _acc_at(h, step))
        return acc["moc"][-1] - acc["dense"][-1]

    judgement = rule.run(difference, ctx.seeds(rule.cap))
    seeds = ctx.seeds(len(acc["moc"]))
    recipe = {kind: [_acc_at(phase1(p, ctx, s, kind)[0], step) for s in seeds] for kind in ("moc", "dense")}
    recipe_passed = rule.judge([a - b for a, b in zip(recipe["moc"], recipe["dense"])]).passed
    dense_layers, ratio = flop_ratio(p)
    return judgement, {
        "seeds": seeds,
        "compare_step": step,
        "tune_seed": p["tune_seed"],
        "tune_step": p["tune_step"],
        "tuning": tuning,
        "tuned_acc_moc": acc["moc"],
        "tuned_acc_dense": acc["dense"],
        "tuned_mean_moc": float(np.mean(acc["moc"])),
        "tuned_mean_dense": float(np.mean(acc["dense"])),
        "recipe_acc_moc": recipe["moc"],
        "recipe_acc_dense": recipe["dense"],
        "recipe_mean_moc": float(np.mean(recipe["moc"])),
        "recipe_mean_dense": float(np.mean(recipe["dense"])),
        "recipe_passed": recipe_passed,
        "conclusion_reversed_by_tuning": recipe_passed != judgement.passed,
        "dense_layers": dense_layers,
        "flop_ratio_moc_over_dense": ratio,
    }
