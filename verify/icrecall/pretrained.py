"""IC-recall with a pretrained MLP (docs/icrecall.md).

The pretrained variant is judged by the same pairwise-pattern rule as the constructed one
(:func:`verify.icrecall.finetune_setup.pattern_verdict`): one rule for both.
"""

from __future__ import annotations

from typing import Any, Mapping

from constructions.icrecall.model import ICAttention
from constructions.icrecall.train import finetune, pretrain_memory
from constructions.icrecall.world import make_world, sample_icrecall
from theory.icrecall import SOURCE
from verify.claims import Context, Control, claim, rng_for, shared
from verify.criteria import EverySeed, Sequential, all_of, run_staged
from verify.icrecall.finetune_setup import (
    EVERY3,
    PATTERN_STATEMENT,
    RHO,
    pattern_outcome,
)

PRETRAIN = dict(
    n_subj=100,
    n_rel=4,
    n_ans_per_rel=10,
    dim=64,
    width=512,
    pre_lr=3e-3,
    batch=256,
    max_steps=3000,
    n_pairs=8,
    n_train=64,
    n_test=1000,
    lr=0.05,
    steps=200,
    logit_scale=10.0,
    n_seeds=3,
)
PRETRAIN_KEYS = (
    "n_subj",
    "n_rel",
    "n_ans_per_rel",
    "dim",
    "width",
    "pre_lr",
    "batch",
    "max_steps",
    "logit_scale",
)
PRETRAIN_FULL = dict(PRETRAIN, n_subj=2500, dim=256, width=4096)
#: error per direction of pretrained.solves's staged rules over their two looks: a mean on a
#: threshold passes about 2.2% of the time (3.9% at 0.05, too near the 0.05 a 200-run simulation checks)
ALPHA = 0.03
INIT = Control(
    "init", {"steps": 0}, "the attention at initialisation (no fine-tuning step), on the same pretrained MLP"
)


@shared
def _pretrained_memory(ctx: Context, memory: dict, seed: int):
    """(world, frozen MLP, pretraining steps, direct-recall accuracy): the MLP pretrained on direct
    recall, shared by the claim and its init control (steps do not touch it)."""
    import torch

    world = make_world(
        memory["n_subj"],
        memory["n_rel"],
        memory["n_ans_per_rel"],
        memory["dim"],
        RHO,
        rng_for(seed, "icrecall.pretrained.make_world"),
    )
    return world, *pretrain_memory(
        world,
        memory["width"],
        memory["logit_scale"],
        memory["pre_lr"],
        memory["batch"],
        memory["max_steps"],
        0.99,
        ctx.torch_generator(seed),
        rng_for(seed, "icrecall.pretrained.pretrain_memory"),
        dtype=torch.float64,
    )


@shared
def pretrained_run(
    ctx: Context, memory: dict, n_pairs: int, n_train: int, n_test: int, steps: int, lr: float, seed: int
) -> dict:
    """Pretrain the MLP on direct recall (``memory``: the parameters of :data:`PRETRAIN_KEYS`),
    freeze it, fine-tune P-struct (train_omega, omega = 1).

    >>> small = dict(PRETRAIN, n_subj=10, n_rel=2, n_ans_per_rel=3, dim=16, width=32, max_steps=20)
    >>> run = pretrained_run(Context(), {k: small[k] for k in PRETRAIN_KEYS}, 2, 8, 20, 2, 0.05, 0)
    >>> run["seed"], len(run["trajectory"])
    (0, 2)
    """
    world, mem, pre_steps, direct = _pretrained_memory(ctx, memory, seed)
    test = sample_icrecall(world, n_pairs, n_test, rng_for(seed, "icrecall.pretrained.test"))
    train = sample_icrecall(world, n_pairs, n_train, rng_for(seed, "icrecall.pretrained.train"))
    model = ICAttention(world, mem, "struct", omega=1.0, train_omega=True)
    res = finetune(model, train, test, steps=steps, lr=lr, record_every=40)
    return {
        "seed": seed,
        "direct_acc": direct,
        "pretrain_steps": pre_steps,
        "acc_init": res.acc_init,
        "acc": res.acc,
        "omega": res.omega,
        "metrics_init": res.metrics_init,
        "metrics": res.metrics,
        "trajectory": res.extra.get("trajectory"),
    }


def pretrained_runs(p: Mapping[str, Any], ctx: Context) -> list[dict]:
    """One :func:`pretrained_run` per seed of seed..seed+n_seeds-1."""
    memory = {k: p[k] for k in PRETRAIN_KEYS}
    return [
        pretrained_run(ctx, memory, p["n_pairs"], p["n_train"], p["n_test"], p["steps"], p["lr"], s)
        for s in ctx.seeds(p["n_seeds"])
    ]


@claim(
    "icrecall.pretrained.solves",
    source=SOURCE + ", pretrained-MLP experiments [abstract]",
    provenance="derived",
    statement="with an MLP pretrained on direct recall (accuracy >= 0.99) and frozen, P-struct "
    "fine-tuning (train_omega, init omega=1, N_train={n_train}) reaches IC accuracy >= 0.90 "
    "and lowers the query share by >= 0.3: the pretraining reaches 0.99 on every seed, and the "
    "means over seeds of the IC accuracy and of the drop clear their thresholds, judged in stages "
    "(looks at {n_seeds} and 2 x {n_seeds} seeds, one-sided Student-t bounds at 0.985 each: pass "
    "when the lower bound clears, fail when the upper bound misses, else inconclusive at the cap)",
    templated=True,
    # quick n_seeds 6: at 3 seeds an IC accuracy at 0.90 passed 0.115 of the time (python -m verify
    # oc, from the stored spread); 6 is the budget it named for <= 0.05 (pretrained.pattern keeps
    # the first 3 runs)
    quick=dict(PRETRAIN, n_seeds=6),
    full=PRETRAIN_FULL,
    seed_rule="direct: every seed measured; ic and query_drop: sequential over seed..seed+2*n_seeds-1, "
    "looks at n_seeds and 2 * n_seeds (per-seed values recorded)",
    controls=[INIT],
)
def _pretrained(p, ctx):
    """Changed rule (verify/previous_criteria.json keeps the old one): "IC accuracy >= 0.90 and
    query-share drop >= 0.3 on every one of 6 seeds" failed 8% of the runs verify oc drew at base
    seed 0's per-seed spread (drop: mean 0.418, sd 0.050, 2.3 sd above 0.3). The tail is real:
    at pilot base seeds 100-135 (never judged; 36 seeds, one run each) the drops spread over
    0.328-0.549 (mean 0.434, sd 0.057, 2.3 sd above 0.3; the IC accuracies 0.945-0.989, mean 0.975,
    sd 0.010), so about one seed in a hundred falls below 0.3, and an every-seed rule over 6
    fails at some unused base seed by chance (0.054 from that normal). The claim is about what
    fine-tuning typically does, so ic and query_drop now judge the mean over seeds with
    :class:`verify.criteria.Sequential` (thresholds unchanged, looks at n_seeds and 2 x n_seeds,
    alpha 0.03): the first look reads the same 6 runs as before, 6 more only when it does not
    decide. Resampled from the 36 pilot drops the staged rule passed 4000 of 4000 runs; from a
    normal at base seed 0's spread it passes 100% at 6 seeds; with the mean on 0.3 it passes
    2.2% and fails 3.1% (staged_rates, 4000 runs). alpha 0.03, not 0.05: at 0.05 a mean on 0.3
    passes 3.9%, and verify oc's 200 replications estimated 6% (standard error 0.014), which
    would gate a pass. direct stays an every-seed rule: it is the
    setting's precondition (the pretraining stops at the first check with accuracy >= 0.99; it
    stopped at 50 steps at every pilot seed, accuracies >= 0.9975), stored per seed as whether it
    reached 0.99 (1) or not (0), the accuracy itself in ``per_seed``: the stop rule puts every
    accuracy in [0.99, 1] unless max_steps runs out, a floor a normal law at the record's spread
    does not have (full scale, base seed 0: 0.9934, 0.9951, 0.9907, which verify oc drew below
    0.99 on 26% of its runs)."""
    memory = {k: p[k] for k in PRETRAIN_KEYS}
    n = int(p["n_seeds"])

    def measure(s):
        return pretrained_run(ctx, memory, p["n_pairs"], p["n_train"], p["n_test"], p["steps"], p["lr"], s)

    def judge(runs):
        seeds = [r["seed"] for r in runs]
        drops = [r["metrics_init"]["query_share"] - r["metrics"]["query_share"] for r in runs]
        return all_of(
            direct=EverySeed(
                "pretraining reached direct-recall accuracy 0.99 (1 yes, 0 no)", 1, ">=", "convention"
            ).judge([float(r["direct_acc"] >= 0.99) for r in runs], seeds),
            ic=Sequential(
                "mean IC accuracy after fine-tuning", 0.90, ">=", "convention", (n, 2 * n), ALPHA
            ).judge([r["acc"] for r in runs], seeds),
            query_drop=Sequential(
                "mean query-share drop from init", 0.3, ">=", "convention", (n, 2 * n), ALPHA
            ).judge(drops, seeds),
        )

    judgement, runs = run_staged((n, 2 * n), ctx.seeds(2 * n), measure, judge)
    drops = [r["metrics_init"]["query_share"] - r["metrics"]["query_share"] for r in runs]
    return judgement, dict(
        runs[0],
        per_seed=[
            {k: r[k] for k in ("seed", "direct_acc", "acc", "acc_init", "omega")} | {"query_drop": d}
            for r, d in zip(runs, drops)
        ],
    )


@claim(
    "icrecall.pretrained.pattern",
    source=SOURCE + ", pretrained-MLP experiments [abstract]",
    provenance="derived",
    statement="with the pretrained MLP (as pretrained.solves) the fine-tuned attention meets the "
    "same pairwise-pattern rule as finetune.pattern_emerges: "
    + PATTERN_STATEMENT
    + ", every one of {n_seeds} seeds",
    templated=True,
    quick=PRETRAIN,
    full=PRETRAIN_FULL,
    seed_rule=EVERY3,
    controls=[INIT],
)
def _pretrained_pattern(p, ctx):
    runs = pretrained_runs(p, ctx)
    keys = ("pair_uniformity", "query_share", "imbalance", "subject_share", "answer_share")
    return pattern_outcome(runs, [r["seed"] for r in runs], keys)
