"""IC-recall with a pretrained MLP (docs/icrecall.md).

The pretrained variant is judged by the same pairwise-pattern rule as the constructed one
(:func:`verify.icrecall.finetune.pattern_verdict`): one rule for both.
"""

from __future__ import annotations

from constructions.icrecall.model import ICAttention
from constructions.icrecall.train import finetune, pretrain_memory
from constructions.icrecall.world import make_world, sample_icrecall
from theory.icrecall import SOURCE
from verify.claims import Control, Outcome, claim, rng_for
from verify.criteria import EverySeed, all_of
from verify.icrecall.finetune_setup import (
    EVERY3,
    PATTERN_STATEMENT,
    PREVIOUS_PATTERN,
    RHO,
    pattern_judgement,
    pattern_verdict,
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
INIT = Control(
    "init", {"steps": 0}, "the attention at initialisation (no fine-tuning step), on the same pretrained MLP"
)


def pretrained_run(p, ctx, seed):
    """Pretrain the MLP on direct recall, freeze it, fine-tune P-struct (train_omega, omega = 1)."""
    import torch

    def pretrain():
        world = make_world(p["n_subj"], p["n_rel"], p["n_ans_per_rel"], p["dim"], RHO, rng_for(seed, "icrecall.pretrained.make_world"))
        return world, *pretrain_memory(
            world,
            p["width"],
            p["logit_scale"],
            p["pre_lr"],
            p["batch"],
            p["max_steps"],
            0.99,
            ctx.torch_generator(seed),
            rng_for(seed, "icrecall.pretrained.pretrain_memory"),
            dtype=torch.float64,
        )

    def compute():
        # the frozen memory is shared by the claim and its init control (steps do not touch it)
        world, mem, steps, direct = ctx.shared(
            ("icrecall.pretrain", tuple(p[k] for k in PRETRAIN_KEYS), seed), pretrain
        )
        test = sample_icrecall(world, p["n_pairs"], p["n_test"], rng_for(seed, "icrecall.pretrained.test"))
        train = sample_icrecall(world, p["n_pairs"], p["n_train"], rng_for(seed, "icrecall.pretrained.train"))
        model = ICAttention(world, mem, "struct", omega=1.0, train_omega=True)
        res = finetune(model, train, test, steps=p["steps"], lr=p["lr"], record_every=40)
        return {
            "seed": seed,
            "direct_acc": direct,
            "pretrain_steps": steps,
            "acc_init": res.acc_init,
            "acc": res.acc,
            "omega": res.omega,
            "metrics_init": res.metrics_init,
            "metrics": res.metrics,
            "trajectory": res.extra.get("trajectory"),
        }

    key = ("icrecall.pretrained", repr(sorted(p.items())), seed)
    return ctx.shared(key, compute)


@claim(
    "icrecall.pretrained.solves",
    source=SOURCE + ", pretrained-MLP experiments [abstract]",
    provenance="derived",
    statement="with an MLP pretrained on direct recall (accuracy >= 0.99) and frozen, P-struct "
    "fine-tuning (train_omega, init omega=1, N_train={n_train}) reaches IC accuracy >= 0.90 "
    "and lowers the query share by >= 0.3, in every one of {n_seeds} seeds",
    templated=True,
    quick=PRETRAIN,
    full=PRETRAIN_FULL,
    seed_rule=EVERY3,
    controls=[INIT],
)
def _pretrained(p, ctx):
    runs = [pretrained_run(p, ctx, s) for s in ctx.seeds(p["n_seeds"])]
    drops = [r["metrics_init"]["query_share"] - r["metrics"]["query_share"] for r in runs]
    ok = [r["direct_acc"] >= 0.99 and r["acc"] >= 0.90 and d >= 0.3 for r, d in zip(runs, drops)]
    old = [o and r["metrics"]["pair_uniformity"] >= 0.9 for o, r in zip(ok, runs)]
    seeds = [r["seed"] for r in runs]
    judgement = all_of(
        direct=EverySeed("pretrained direct-recall accuracy", 0.99, ">=", "convention").judge(
            [r["direct_acc"] for r in runs], seeds
        ),
        ic=EverySeed("IC accuracy after fine-tuning", 0.90, ">=", "convention").judge(
            [r["acc"] for r in runs], seeds
        ),
        query_drop=EverySeed("query-share drop from init", 0.3, ">=", "convention").judge(drops, seeds),
    )
    return Outcome.judged(
        judgement,
        details=dict(
            runs[0],
            per_seed=[
                {k: r[k] for k in ("seed", "direct_acc", "acc", "acc_init", "omega")} | {"query_drop": d}
                for r, d in zip(runs, drops)
            ],
            previous_criterion={
                "rule": "also H_p >= 0.9 (H_p is 0.98-0.99 at init: moved to "
                "the pattern rule, recorded there, not judged)",
                "passed": bool(all(old)),
            },
        ),
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
    runs = [pretrained_run(p, ctx, s) for s in ctx.seeds(p["n_seeds"])]
    verdicts = [pattern_verdict(r["metrics_init"], r["metrics"]) for r in runs]
    keys = ("pair_uniformity", "query_share", "imbalance", "subject_share", "answer_share")
    judgement = pattern_judgement(
        [r["metrics_init"] for r in runs], [r["metrics"] for r in runs], [r["seed"] for r in runs]
    )
    return Outcome.judged(
        judgement,
        details={
            "metrics_init": runs[0]["metrics_init"],
            "metrics": runs[0]["metrics"],
            "per_seed": [
                {
                    "seed": r["seed"],
                    "init": {k: r["metrics_init"][k] for k in keys},
                    "after": {k: r["metrics"][k] for k in keys},
                    **v,
                }
                for r, v in zip(runs, verdicts)
            ],
            "previous_criterion": {"rule": PREVIOUS_PATTERN, "passed": verdicts[0]["previous_passed"]},
        },
    )
