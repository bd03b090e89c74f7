"""Transfer, intervention and frozen-embedding claims on the trained model of docs/geometric.md.

The models are those of verify.geometric.gd (one per seed, verify.geometric.gd_setup.trained_model). Transfer of
the MLP to new bijections is the paper's [abstract]; the least-squares re-initialisation, the
intervention probe and the frozen-embedding comparison are this project's [derived] experiments
(docs/geometric.md#the-trained-model), with every numeric threshold ours.
"""

from __future__ import annotations

import numpy as np

from constructions.geometric.train import train_accuracy
from constructions.tasks import make_bijections
from verify.claims import Control, claim, rng_for
from verify.criteria import EverySeed, Threshold, all_of
from verify.geometric.gd_setup import GD_FULL, GD_QUICK, INIT, attribute_features, ridge_fit, trained
from verify.geometric.single_hop_setup import SRC
from verify.measure import binomial_tolerance, t_interval


def _superposition_map(model, lam):
    e, u = model.numpy("subject").astype(np.float64), model.numpy("unembed").astype(np.float64)
    w, xm, ym = ridge_fit(attribute_features(u, model.perms), e, lam)
    return w, xm, ym, u


def transfer_point(p, ctx, seed) -> dict:
    """One seed of gd.transfer: accuracy on new bijections pi' with e'_s = concat_r U[pi'_r(s)] W."""
    model = trained(p, ctx, seed)
    w, xm, ym, u = _superposition_map(model, p["ridge"])
    new = make_bijections(
        p["n_subjects"], p["n_relations"], rng_for(seed, "geometric.gd_transfer.make_bijections")
    )
    acc = train_accuracy(model, (attribute_features(u, new) - xm) @ w + ym, perms=new)
    e = model.numpy("subject").astype(np.float64)
    noise = rng_for(seed, "geometric.gd_transfer.standard_normal").standard_normal(e.shape)
    rand = noise * e.std(0) + e.mean(0)
    ctrl = train_accuracy(model, rand, perms=new)
    return {
        "seed": seed,
        "transfer_accuracy": acc,
        "random_accuracy": ctrl,
        "learned_accuracy": train_accuracy(model),
    }


@claim(
    "geometric.gd.transfer",
    source=f"{SRC}, zero-shot transfer of the trained MLP (abstract)",
    provenance="abstract",
    controls=[INIT],
    seed_rule="every seed of ctx.seeds(5)",
    statement="the frozen trained MLP, relation embeddings and unembedding answer new bijections pi' "
    "with no gradient step once E_subj is re-initialised as e'_s = concat_r U[pi'_r(s)] W "
    "(W fitted by least squares on the trained model): accuracy >= 0.1 and >= 20x "
    "max(random-Gaussian-E_subj control, chance 1/N), on every seed",
    quick=GD_QUICK,
    full=GD_FULL,
    needs=("torch",),
)
def gd_transfer(p, ctx):
    chance = 1 / p["n_subjects"]
    seeds = ctx.seeds(p["seeds"])
    rows = [transfer_point(p, ctx, seed) for seed in seeds]
    acc = [r["transfer_accuracy"] for r in rows]
    judgement = all_of(
        accuracy=EverySeed("transfer accuracy", 0.1, ">=", "convention").judge(acc, seeds),
        # acc >= 20 m as acc - 20 m >= 0: the same comparison in floats (a difference of floats has
        # the sign of their order)
        times_control=EverySeed(
            "transfer accuracy - 20 max(random-E_subj accuracy, 1/N)", 0.0, ">=", "convention"
        ).judge([a - 20 * max(r["random_accuracy"], chance) for a, r in zip(acc, rows)], seeds),
    )
    first = rows[0]
    return judgement, {
        "rows": rows,
        "transfer_accuracy_per_seed": acc,
        "random_embedding_accuracy_per_seed": [r["random_accuracy"] for r in rows],
        "learned_accuracy": first["learned_accuracy"],
        "transfer_accuracy": first["transfer_accuracy"],
        "random_accuracy": first["random_accuracy"],
        "chance": chance,
    }


def intervention_point(p, ctx, seed) -> dict:
    """One seed of gd.intervention (hit rates and unchanged-other-relation rates, real and random)."""
    model = trained(p, ctx, seed)
    w, _, _, u = _superposition_map(model, p["ridge"])
    n, r_, d = p["n_subjects"], p["n_relations"], p["dim"]
    e = model.numpy("subject").astype(np.float64)
    rng = rng_for(seed, "geometric.gd_transfer.rng")
    k = p["n_interventions"]
    subj, rel = rng.integers(0, n, k), rng.integers(0, r_, k)
    b = (model.perms[rel, subj] + rng.integers(1, n, k)) % n  # a new answer, never the old one
    base = np.stack([model.predict(subj, np.full(k, q)) for q in range(r_)], axis=1)  # (k, R)
    hits, others, c_hits, c_others = [], [], [], []
    for i in range(k):
        s, r, bb = subj[i], rel[i], b[i]
        delta = (u[bb] - u[model.perms[r, s]]) @ w[r * d : (r + 1) * d]
        rand = rng.standard_normal(d)
        rand *= np.linalg.norm(delta) / np.linalg.norm(rand)
        for shift, h, o in ((delta, hits, others), (rand, c_hits, c_others)):
            e2 = e.copy()
            e2[s] += shift
            pred = model.predict(np.full(r_, s), np.arange(r_), e2)
            h.append(pred[r] == bb)
            o.extend(pred[q] == base[i, q] for q in range(r_) if q != r)
    return {
        "seed": seed,
        "hit_rate": float(np.mean(hits)),
        "control_hit_rate": float(np.mean(c_hits)),
        "others_unchanged": float(np.mean(others)),
        "control_others_unchanged": float(np.mean(c_others)),
    }


@claim(
    "geometric.gd.intervention",
    source=f"{SRC}, derived probe of the superposition",
    provenance="derived",
    controls=[INIT],
    seed_rule="95% Student-t intervals over ctx.seeds(seeds) of the mean hit rate and of the mean "
    "'others unchanged' gap; the random change's hit rate on every seed",
    templated=True,
    statement="overwriting relation r's content, e_s <- e_s + (U[b] - U[pi_r(s)]) W_r, makes (s, r) "
    "predict b: over {seeds} training seeds the 95% interval of the mean hit rate on "
    "{n_interventions} random (s, r, b) lies at or above 0.1 and 50x chance, an equal-norm random "
    "change hits b at most at chance (99th percentile of Binomial) on every seed, and the 95% interval "
    "of the mean gap between 'predictions for (s, r' != r) unchanged' under the edit and under the "
    "random change lies at or above 0.03 (a convention); an interval straddling a threshold is inconclusive",
    quick={**GD_QUICK, "seeds": 10, "n_interventions": 200},
    full={**GD_FULL, "n_interventions": 2000},
    needs=("torch",),
)
def gd_intervention(p, ctx):
    """Quick scale at 10 training seeds (5 before): at 5 its verdict was pass at some base seeds and
    inconclusive at others (verify/geometric/undecided.toml), and ``python -m verify oc`` on the
    5-seed reference record gave power 0.33 at 5 seeds and 0.87 at 10 (worst alternative, 'others
    at the threshold', passing 0.03): the budget is the one the simulation named, not one chosen on
    a judged verdict. The models of seeds 5-9 are trained for this claim only (about 1 s each)."""
    n, k = p["n_subjects"], p["n_interventions"]
    allowed = binomial_tolerance(k, 1 / n) / k
    rows = [intervention_point(p, ctx, seed) for seed in ctx.seeds(p["seeds"])]
    gaps = [r["others_unchanged"] - r["control_others_unchanged"] for r in rows]
    judgement = all_of(
        hit=Threshold("mean hit rate", max(0.1, 50 / n), ">=", "convention").judge(
            list(t_interval([r["hit_rate"] for r in rows])), seeds=len(rows)
        ),
        random_hit=Threshold("random change's largest hit rate", allowed, "<=", "theory").judge(
            max(r["control_hit_rate"] for r in rows)
        ),
        others=Threshold(
            "mean 'others unchanged' gap over the random change", 0.03, ">=", "convention"
        ).judge(list(t_interval(gaps)), seeds=len(rows)),
    )
    return judgement, {"rows": rows, "chance": 1 / n, "n_interventions": k, "gaps": gaps}


@claim(
    "geometric.gd.frozen_embed_control",
    source=f"{SRC}, derived frozen-embedding experiment",
    provenance="derived",
    seed_rule="every seed of ctx.seeds(5)",
    controls=[
        Control(
            "roomy_dim",
            {"dim": 32, "seeds": 1},
            "at d = 32 a trainable unembedding and MLP "
            "store all facts even with E_subj frozen, so the gap must vanish",
        )
    ],
    statement="with E_subj frozen at its random init the same model (d = 8, tight) stores fewer facts: "
    "acc(frozen) < acc(learned) - 0.1 on every seed (at d = 32 a trainable unembedding and "
    "MLP store all facts even with frozen E_subj, so the comparison is run where the "
    "dimension is tight)",
    quick={**GD_QUICK, "dim": 8},
    full={**GD_FULL, "dim": 16},
    needs=("torch",),
)
def frozen_embed_control(p, ctx):
    rows = []
    for seed in ctx.seeds(p["seeds"]):
        rows.append(
            {
                "seed": seed,
                "learned": train_accuracy(trained(p, ctx, seed)),
                "frozen": train_accuracy(trained(p, ctx, seed, freeze_subject=True)),
            }
        )
    # "acc(frozen) < acc(learned) - 0.1" as (acc(learned) - 0.1) - acc(frozen) > 0, exact in floats
    # (a difference of floats is positive exactly when the first is larger)
    judgement = EverySeed("(acc(learned) - 0.1) - acc(frozen)", 0.0, ">", "convention").judge(
        [(r["learned"] - 0.1) - r["frozen"] for r in rows], [r["seed"] for r in rows]
    )
    return judgement, {
        "rows": rows,
        "learned_per_seed": [r["learned"] for r in rows],
        "frozen_per_seed": [r["frozen"] for r in rows],
        "learned_accuracy": rows[0]["learned"],
        "frozen_accuracy": rows[0]["frozen"],
        "dim": p["dim"],
        "chance": 1 / p["n_subjects"],
    }
