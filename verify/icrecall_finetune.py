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
heuristic memory dimension) and uses one seed per training claim; the model class is unchanged.
"""
from __future__ import annotations

import math

import numpy as np

from constructions.icrecall import make_world, sample_icrecall, triplet_mlp
from constructions.icrecall_model import (ICAttention, TripletMemory, evaluate, finetune,
                                          pretrain_memory)
from theory.icrecall import SOURCE, relation_chance_ceiling
from verify.claims import Outcome, claim
from verify.ledger import LedgerEntry, record

RHO = 1 / math.sqrt(2)
PFULL = dict(n_subj=200, n_rel=5, n_ans_per_rel=10, dim=222, n_pairs=8, n_train=128, n_test=1000,
             lr=0.005, steps=200, slots=True, slot_values=False, logit_scale=10.0, theta=1.5)
PFULL_FULL = dict(PFULL, n_ans_per_rel=20, dim=256, n_train=256)
# quick n_train=128: the smallest of {64, 128} reaching 0.95 at seed 0 (64 gave 0.937)
STRUCT_ABLATION = dict(n_train=32, lr=0.05)


def _setup(p, seed, mode="single"):
    world = make_world(p["n_subj"], p["n_rel"], p["n_ans_per_rel"], p["dim"], RHO,
                       np.random.default_rng([seed, 71]))
    memory = TripletMemory(triplet_mlp(world, p["theta"]), p["logit_scale"])
    test = sample_icrecall(world, p["n_pairs"], p["n_test"], np.random.default_rng([seed, 72]),
                           relation_mode=mode)
    return world, memory, test


def train_run(p, ctx, param="full", slots=None, n_train=None, lr=None, mode="single", seed=None):
    """One fine-tuning run, shared through ctx: returns a JSON-able dict of what it measured."""
    seed = ctx.seed if seed is None else seed
    slots = p["slots"] if slots is None else slots
    n_train = p["n_train"] if n_train is None else n_train
    lr = p["lr"] if lr is None else lr
    key = ("icrecall.train", repr(sorted(p.items())), param, slots, n_train, lr, mode, seed)

    def compute():
        world, memory, test = _setup(p, seed, mode)
        train = sample_icrecall(world, p["n_pairs"], n_train,
                                np.random.default_rng([seed, 73, n_train]), relation_mode=mode)
        model = ICAttention(world, memory, param, slots=slots, slot_values=p["slot_values"])
        init_acc, _, init_ok = evaluate(model, test)
        res = finetune(model, train, test, steps=p["steps"], lr=lr)
        _, _, ok = evaluate(model, test)
        unseen = ~np.isin(test.query, train.query)
        return {"acc_init": res.acc_init, "acc": res.acc, "metrics_init": res.metrics_init,
                "metrics": res.metrics, "final_loss": res.losses[-1] if res.losses else None,
                "acc_unseen": float(ok[unseen].mean()) if unseen.any() else None,
                "acc_seen": float(ok[~unseen].mean()) if (~unseen).any() else None,
                "acc_init_unseen": float(init_ok[unseen].mean()) if unseen.any() else None,
                "n_unseen": int(unseen.sum()), "n_train": n_train}

    return ctx.shared(key, compute)


@claim("icrecall.finetune.solves", source=SOURCE + ", fine-tuning solves IC-recall [abstract]",
       provenance="derived",
       statement="fine-tuning W_KQ (P-full, slot embeddings, MLP frozen) from the query-heavy init "
                 "solves IC-recall: held-out accuracy <= 0.5 at init and >= 0.95 after training",
       quick=PFULL, full=PFULL_FULL)
def _solves(p, ctx):
    run = train_run(p, ctx)
    struct = train_run(p, ctx, param="struct", slots=False, **STRUCT_ABLATION)
    return Outcome(predicted="init <= 0.5, after >= 0.95",
                   measured={"init": run["acc_init"], "after": run["acc"]},
                   passed=run["acc_init"] <= 0.5 and run["acc"] >= 0.95,
                   details={"p_full": run, "p_struct_ablation": struct})


@claim("icrecall.finetune.pattern_emerges", source=SOURCE + ", pairwise attention pattern "
       "[abstract]", provenance="derived",
       statement="after fine-tuning (as finetune.solves) the attention is spread evenly over pairs "
                 "and moves off the query: pair uniformity H_p >= 0.95, query share <= 0.35, "
                 "within-pair imbalance <= 0.4", quick=PFULL, full=PFULL_FULL)
def _pattern(p, ctx):
    run = train_run(p, ctx)
    m = run["metrics"]
    return Outcome(predicted="H_p >= 0.95, alpha_T <= 0.35, imbalance <= 0.4",
                   measured={k: m[k] for k in ("pair_uniformity", "query_share", "imbalance")},
                   passed=m["pair_uniformity"] >= 0.95 and m["query_share"] <= 0.35
                   and m["imbalance"] <= 0.4,
                   details={"metrics_init": run["metrics_init"], "metrics": m})


@claim("icrecall.finetune.unseen_facts", source=SOURCE, provenance="derived",
       statement="with N_train < S, held-out accuracy on queries whose subject never was a "
                 "training query is within 0.05 of the accuracy on seen query subjects",
       quick=PFULL, full=PFULL_FULL)
def _unseen(p, ctx):
    if p["n_train"] >= p["n_subj"]:
        raise ValueError(f"n_train={p['n_train']} must be < n_subj={p['n_subj']} so that "
                         "unseen query subjects exist")
    run = train_run(p, ctx)
    gap = abs(run["acc_unseen"] - run["acc_seen"])
    return Outcome(predicted="|acc_unseen - acc_seen| <= 0.05", measured=gap, passed=gap <= 0.05,
                   details={k: run[k] for k in ("acc_unseen", "acc_seen", "n_unseen", "acc")})


NOSLOT = dict(PFULL, n_ans_per_rel=20, dim=128, slots=False, n_train_list=[64], n_seeds=2)


@claim("icrecall.finetune.no_slots_per_subject", source=SOURCE + ", spec §5.3 pilot finding",
       provenance="derived", demonstrates_failure=True,
       statement="MUST FAIL to generalise: P-full without slot embeddings learns per query subject; "
                 "at N_train <= S the accuracy on unseen query subjects stays within 0.2 of its "
                 "init value while the seen-subject accuracy rises above 0.8 (mean over seeds)",
       quick=NOSLOT, full=dict(NOSLOT, n_train_list=[256, 1024], n_seeds=3, dim=128))
def _noslot(p, ctx):
    rows = []
    for n_train in p["n_train_list"]:
        runs = [train_run(p, ctx, slots=False, n_train=n_train, seed=s) for s in ctx.seeds(p["n_seeds"])]
        rows.append({k: float(np.mean([r[k] for r in runs]))
                     for k in ("acc_init_unseen", "acc_unseen", "acc_seen", "acc")} | {"n_train": n_train})
    ok = all(abs(r["acc_unseen"] - r["acc_init_unseen"]) <= 0.2 and r["acc_seen"] > 0.8
             for r in rows if r["n_train"] <= p["n_subj"])
    return Outcome(predicted="|acc_unseen - acc_init| <= 0.2 and acc_seen > 0.8",
                   measured={str(r["n_train"]): {"unseen": r["acc_unseen"], "seen": r["acc_seen"]}
                             for r in rows}, passed=ok, details={"rows": rows})


@claim("icrecall.finetune.mixed_context_uninformative", source=SOURCE + ", spec §6",
       provenance="derived", demonstrates_failure=True,
       statement="MUST FAIL: when each context pair carries a relation drawn independently of the "
                 "target relation, fine-tuning P-full (train and test mixed, N_train as finetune.solves) stays at "
                 "relation chance: test accuracy <= 1/R + 3 sqrt((1/R)(1-1/R)/K) + 0.01",
       quick=PFULL, full=PFULL_FULL)
def _mixed_train(p, ctx):
    run = train_run(p, ctx, mode="mixed")
    ceiling = relation_chance_ceiling(p["n_rel"], p["n_test"])
    return Outcome(predicted=f"acc <= {ceiling:.3f}", measured=run["acc"], passed=run["acc"] <= ceiling,
                   details={"acc": run["acc"], "acc_init": run["acc_init"], "ceiling": ceiling,
                            "final_loss": run["final_loss"]})


PRETRAIN = dict(n_subj=100, n_rel=4, n_ans_per_rel=10, dim=64, width=512, pre_lr=3e-3, batch=256,
                max_steps=3000, n_pairs=8, n_train=64, n_test=1000, lr=0.05, steps=200,
                logit_scale=10.0)


@claim("icrecall.pretrained.solves", source=SOURCE + ", pretrained-MLP experiments [abstract]",
       provenance="derived",
       statement="with an MLP pretrained on direct recall (accuracy >= 0.99) and frozen, P-struct "
                 "fine-tuning (train_omega, init omega=1, N_train=64) reaches IC accuracy >= 0.90, "
                 "lowers the query share by >= 0.3, and has pair uniformity H_p >= 0.9",
       quick=PRETRAIN, full=dict(PRETRAIN, n_subj=2500, dim=256, width=4096))
def _pretrained(p, ctx):
    import torch

    def compute():
        world = make_world(p["n_subj"], p["n_rel"], p["n_ans_per_rel"], p["dim"], RHO,
                           np.random.default_rng([ctx.seed, 81]))
        mem, steps, direct = pretrain_memory(world, p["width"], p["logit_scale"], p["pre_lr"],
                                             p["batch"], p["max_steps"], 0.99,
                                             ctx.torch_generator(ctx.seed), np.random.default_rng([ctx.seed, 82]),
                                             dtype=torch.float64)
        test = sample_icrecall(world, p["n_pairs"], p["n_test"], np.random.default_rng([ctx.seed, 83]))
        train = sample_icrecall(world, p["n_pairs"], p["n_train"], np.random.default_rng([ctx.seed, 84]))
        model = ICAttention(world, mem, "struct", omega=1.0, train_omega=True)
        res = finetune(model, train, test, steps=p["steps"], lr=p["lr"])
        return {"direct_acc": direct, "pretrain_steps": steps, "acc_init": res.acc_init,
                "acc": res.acc, "omega": res.omega, "metrics_init": res.metrics_init,
                "metrics": res.metrics}

    run = ctx.shared(("icrecall.pretrained", repr(sorted(p.items())), ctx.seed), compute)
    drop = run["metrics_init"]["query_share"] - run["metrics"]["query_share"]
    hp = run["metrics"]["pair_uniformity"]
    return Outcome(predicted="direct >= 0.99, IC >= 0.90, query-share drop >= 0.3, H_p >= 0.9",
                   measured={"direct": run["direct_acc"], "ic": run["acc"], "query_drop": drop, "H_p": hp},
                   passed=run["direct_acc"] >= 0.99 and run["acc"] >= 0.90 and drop >= 0.3 and hp >= 0.9,
                   details=run)


record(LedgerEntry(
    claim_id="icrecall.finetune.pattern_emerges",
    measured="quick scale, seed 0 (S=200, R=5, D=10, d=222, N_train=128, P-full with slots): "
             "H_p 0.990 (>= 0.95 holds), query share 0.298 from 0.99 at init (<= 0.35 holds), "
             "within-pair imbalance 0.754 (> 0.4 fails): answers draw most of the context "
             "attention, subjects little (pilots: answer share 0.45-0.58, subject share 0.03-0.19)",
    tried="lr 0.001, 0.002, 0.005, 0.02, 0.05; N_train 16-1024; slot embeddings in the values or not; "
          "P-full without slots (imbalance 0.24-0.31 at lr 0.05, but no generalisation to unseen "
          "subjects); d 64-222",
    reason="in this derived model the context subjects carry no useful signal: the relation comes "
           "from the answers (rho e_r) and the query's own subject from the residual, while "
           "attention on a context subject only raises the wrong neuron (s_i, r). Gradient descent "
           "therefore learns an answers-plus-query pattern, even over pairs (H_p ~ 0.99) but not "
           "balanced within pairs; the paper's pairwise pattern likely needs its own construction "
           "(spec §9: its definition and the model are unknown)"))
