"""Claims on the early-phase gradient descent of the retrieval area (2603.15923, docs/retrieval.md,
setting and experiments): closed form vs autograd, uniform attention at initialisation, the attention step's
focus on the informative token and full-model accuracy after three steps. The random-MLP
variant (m*d) lives in verify/retrieval/mlp_product.py, the shared three-step model in
verify/retrieval/capacity_setup.py. Capacity claims live in verify/retrieval/capacity.py, the
fitted scaling law in verify/retrieval/scaling.py, the corrected statements in
verify/retrieval/sufficient.py. (The former theory.capacity_solve and theory.info_floor compared
formulas with themselves: they are unit tests in tests/retrieval/test_retrieval.py.)
"""

from __future__ import annotations

import math

import numpy as np

from constructions.retrieval.gd import (
    attend,
    evaluate,
    hebbian_step_one,
    loss_and_grads,
    three_steps_autograd,
    three_steps_closed_form,
    uniform_attention_accuracy,
)
from constructions.retrieval.task import make_retrieval_task, sample_sequences
from constructions.seeding import rng_for
from verify.claims import Control, choice, claim
from verify.criteria import Agreement, EverySeed, IntervalTest, all_of
from verify.measure import t_interval
from verify.retrieval.capacity_setup import SOURCE, trained


@claim(
    "retrieval.gd.closed_form",
    source=SOURCE + ", three-step GD (docs/retrieval.md)",
    provenance="derived",
    templated=True,
    statement="the closed-form numpy three steps equal torch autograd (V={vocab_size}, d={d_model}, "
    "L={seq_len}, N={n_samples}): max abs difference < {tol} for W_v^(1), W^(1) and W_v^(2) (float64; "
    "the tolerance is a convention)",
    quick={"vocab_size": 64, "d_model": 16, "seq_len": 8, "n_samples": 512, "tol": 1e-6},
    needs=("torch",),
    kind="identity",
    independence="numpy closed-form gradients written by hand (constructions.retrieval.gd."
    "loss_and_grads) vs torch autograd of the loss (three_steps_autograd); they share "
    "only the data",
)
def gd_closed_form(p, ctx):
    V, d, L, N = p["vocab_size"], p["d_model"], p["seq_len"], p["n_samples"]
    rng = ctx.rng("retrieval.early_gd.gd_closed_form.rng")
    task = make_retrieval_task(V, d, rng)
    data = sample_sequences(task, L, N, rng)
    ours = three_steps_closed_form(data, float(V), float(V))
    auto = three_steps_autograd(data, float(V), float(V))
    names = ("w_out_1", "w_kq_1", "w_out_2")
    diffs = {n: float(np.abs(getattr(ours, n) - getattr(auto, n)).max()) for n in names}
    scale = {n: float(np.abs(getattr(ours, n)).max()) for n in names}
    rule = Agreement("max abs difference closed form - autograd", p["tol"], strict=True)
    return rule.judge(max(diffs.values())), {
        "max_abs_diff": diffs,
        "max_abs_value": scale,
        "lr_value": ours.lr_value,
        "lr_attn": ours.lr_attn,
        "lr_value_final": ours.lr_value_final,
        "dtype": "float64",
    }


@claim(
    "retrieval.gd.uniform_attention",
    source=SOURCE + ", three-step GD, step 1 (docs/retrieval.md)",
    provenance="derived",
    templated=True,
    statement="at zero initialisation (V={vocab_size}, d={d_model}, L={seq_len}, N={n_samples}) attention "
    "is uniform (|a - 1/L| < {attn_tol}) and the autograd step 1 equals the Hebbian formula "
    "(eta/N) sum (e_y - 1/V) o^T within {formula_tol} (strictly; the tolerances are conventions)",
    quick={
        "vocab_size": 64,
        "d_model": 16,
        "seq_len": 8,
        "n_samples": 512,
        "attn_tol": 1e-12,
        "formula_tol": 1e-10,
    },
    needs=("torch",),
    kind="identity",
    independence="the Hebbian sum (eta/N) sum (e_y - 1/V) o^T over samples (hebbian_step_one) vs the "
    "torch autograd gradient of the cross-entropy at zero; attention from the softmax",
)
def uniform_attention(p, ctx):
    V, d, L, N = p["vocab_size"], p["d_model"], p["seq_len"], p["n_samples"]
    rng = ctx.rng("retrieval.early_gd.uniform_attention.rng")
    task = make_retrieval_task(V, d, rng)
    data = sample_sequences(task, L, N, rng)
    _, attn, _ = attend(data.hidden(), np.zeros((d, d)), task.eos)
    attn_dev = float(np.abs(attn - 1.0 / L).max())
    formula_dev = float(
        np.abs(
            hebbian_step_one(data, float(V)) - three_steps_autograd(data, float(V), float(V)).w_out_1
        ).max()
    )
    judgement = all_of(
        attention=Agreement("max |a - 1/L|", p["attn_tol"], strict=True).judge(attn_dev),
        formula=Agreement("max |Hebbian formula - autograd step 1|", p["formula_tol"], strict=True).judge(
            formula_dev
        ),
    )
    return judgement, {
        "attention_deviation": attn_dev,
        "formula_deviation": formula_dev,
        "lr_value": float(V),
    }


def _focus_params(V, L):
    return float(V), float(2 * L * L)  # eta = V, gamma = 2 L^2 (docs/retrieval.md#experiments)


def _init_or(p, w_kq):
    """The trained W^(1) (``p["attention"] == "trained"``), or the zero matrix of the
    initialisation (``"init"``, the control)."""
    return np.zeros_like(w_kq) if choice(p, "attention", ("trained", "init")) == "init" else w_kq


INIT = Control(
    "init",
    {"attention": "init"},
    "the model at initialisation (W = 0): attention is exactly uniform, so it cannot focus",
)


@claim(
    "retrieval.attention.focus",
    source=SOURCE + ", abstract (early-phase GD); three-step GD (docs/retrieval.md)",
    provenance="derived",
    templated=True,
    statement="after the attention step (eta=V, gamma=2L^2; V={vocab_size}, d={d_model}, L={seq_len}, "
    "N={n_samples}) the mean attention on the informative token over 4096 test sequences exceeds 2/L "
    "(twice uniform, a convention), on every one of {n_seeds} seeds",
    quick={
        "vocab_size": 128,
        "d_model": 64,
        "seq_len": 8,
        "n_samples": 8192,
        "n_seeds": 6,
        "attention": "trained",
    },
    full={
        "vocab_size": 128,
        "d_model": 64,
        "seq_len": 64,
        "n_samples": 65536,
        "n_seeds": 3,
        "attention": "trained",
    },
    seed_rule="every seed of seed..seed+n_seeds-1 (6 at quick scale, the count verify oc named for "
    "an admissible pass; 3 at full)",
    controls=[INIT],
)
def attn_focus(p, ctx):
    V, d, L, N = p["vocab_size"], p["d_model"], p["seq_len"], p["n_samples"]
    eta, gamma = _focus_params(V, L)
    per_seed = []
    seeds = ctx.seeds(p["n_seeds"])
    for s in seeds:
        _, steps, test = trained(ctx, V, d, L, N, eta, gamma, seed=s)
        per_seed.append(evaluate(test, steps.w_out_1, _init_or(p, steps.w_kq_1)).as_dict())
    attn = [e["mean_attn_info"] for e in per_seed]
    rule = EverySeed(
        f"mean attention on the informative token (2/L = {2 / L:.4g})",
        2.0 / L,
        ">",
        "convention",
    )
    return rule.judge(attn, seeds=seeds), {
        "per_seed": per_seed,
        "mean_attn_info": attn,
        "uniform": 1.0 / L,
        "n_samples": N,
        "lr_value": eta,
        "lr_attn": gamma,
        "seq_len": L,
    }


FOCUS_N = [1024, 4096, 16384, 65536]


@claim(
    "retrieval.attention.focus_n",
    source=SOURCE + ", attention focus against N (docs/retrieval.md)",
    provenance="derived",
    templated=True,
    statement="the attention step becomes more selective as N grows: the test score gap "
    "s_ell - mean noise score is strictly increasing over N in {n_values} (V={vocab_size}, "
    "d={d_model}, L={seq_len}), read as the smallest step of the gap between neighbouring N > 0, on "
    "every one of {n_seeds} base seeds",
    quick={
        "vocab_size": 128,
        "d_model": 64,
        "seq_len": 8,
        "n_values": FOCUS_N,
        "attention": "trained",
        "n_seeds": 3,
    },
    seed_rule="every seed of seed..seed+2: the smallest step of the score gap in N > 0",
    controls=[INIT],
)
def attn_focus_n(p, ctx):
    """Criterion: verify.criteria.EverySeed over 3 base seeds on the smallest step of the score gap
    between neighbouring N (> 0 exactly when the gap is strictly increasing). It replaced a
    Threshold on the count of non-increasing steps at one base seed (one draw, no spread for
    ``verify oc``); the claim failed there (seed 0: gaps flat) and fails at least as often now (the
    base seed is one of the three), so the change cannot turn its fail into a pass."""
    V, d, L = p["vocab_size"], p["d_model"], p["seq_len"]
    eta, gamma = _focus_params(V, L)
    seeds = ctx.seeds(p["n_seeds"])
    rows = []
    for s in seeds:
        gaps, attn, noise_std = [], [], []
        for N in p["n_values"]:
            _, steps, test = trained(ctx, V, d, L, N, eta, gamma, s)
            w_kq = _init_or(p, steps.w_kq_1)
            ev = evaluate(test, steps.w_out_1, w_kq)
            scores, _, _ = attend(test.hidden(), w_kq, test.task.eos)
            mask = np.ones(scores.shape, bool)
            mask[np.arange(len(scores)), test.info_pos] = False
            gaps.append(ev.score_gap)
            attn.append(ev.mean_attn_info)
            noise_std.append(float(scores[mask].std()))
        if any(math.isnan(g) for g in gaps):
            raise ValueError(f"a score gap is NaN at seed {s}: {gaps}")
        rows.append({"seed": s, "score_gap": gaps, "mean_attn_info": attn, "noise_score_std": noise_std})
    steps_min = [float(np.min(np.diff(r["score_gap"]))) for r in rows]
    rule = EverySeed("smallest step of the score gap between neighbouring N", 0.0, ">", "theory")
    return rule.judge(steps_min, seeds=seeds), {
        "n_values": p["n_values"],
        "rows": rows,
        "score_gap": rows[0]["score_gap"],
        "mean_attn_info": rows[0]["mean_attn_info"],
        "noise_score_std": rows[0]["noise_score_std"],
        "smallest_step": steps_min,
        "uniform": 1.0 / L,
        "lr_value": eta,
        "lr_attn": gamma,
    }


def attention_step(task, L: int, N: int, lr_value: float, lr_attn: float, rng) -> np.ndarray:
    """W^(1) = -gamma grad_W after the value step W_v^(1) = -eta grad_{W_v} (both at zero
    initialisation), from N fresh sequences of ``task`` drawn with ``rng`` (the first two of the
    three steps, constructions.retrieval.gd.loss_and_grads).

    >>> from constructions.seeding import rng_for
    >>> rng = rng_for(0, "retrieval.early_gd.trained.rng", 8, 4, 4, 0, 0)
    >>> attention_step(make_retrieval_task(8, 4, rng), 4, 64, 8.0, 32.0, rng).shape
    (4, 4)
    """
    data = sample_sequences(task, L, N, rng)
    _, g_out, _ = loss_and_grads(
        data, np.zeros((task.vocab_size, task.d_model)), np.zeros((task.d_model,) * 2)
    )
    _, _, g_kq = loss_and_grads(data, -lr_value * g_out, np.zeros((task.d_model,) * 2))
    return -lr_attn * g_kq


@claim(
    "retrieval.attention.focus_converges",
    source=SOURCE + ", three-step GD, attention step (docs/retrieval.md); restates focus_n",
    provenance="derived",
    templated=True,
    statement="the attention step converges as N grows [derived]: at V={vocab_size}, d={d_model}, "
    "L={seq_len} (eta=V, gamma=2L^2) and a fixed task per seed, two attention matrices W^(1) from "
    "independent draws of N sequences concentrate at the CLT rate: their distance "
    "||W_N^a - W_N^b|| (in units of ||W^a|| at the smallest N, N0) falls over N in {n_values} with a log-log slope whose 95% "
    "Student-t interval over {n_seeds} seeds contains -1/2 and excludes no convergence (0) and the "
    "rate 1/N (-1); so the test score gap, linear in W^(1), converges instead of growing (recorded "
    "per N)",
    quick={
        "vocab_size": 128,
        "d_model": 64,
        "seq_len": 8,
        "n_values": [1024, 4096, 16384],
        "n_seeds": 3,
        "growth": "none",
    },
    seed_rule="95% Student-t interval over seeds seed..seed+2 of the per-seed log-log slope",
    controls=[
        Control(
            "grows_sqrt_n",
            {"growth": "sqrt_n"},
            "a competing law, the score gap growing like sqrt N (the growth focus_n tested): both "
            "W^(1)_N scaled by sqrt(N / n_values[0]); their distance does not shrink, so the slope "
            "interval must exclude the CLT rate",
        )
    ],
)
def attn_focus_converges(p, ctx):
    """The restatement of retrieval.attention.focus_n (kept as history with its ledger entry): W^(1)
    = -gamma grad_W is a smooth function of empirical means over N sequences, so it concentrates at
    the CLT rate (delta method [derived]) and the score gap converges instead of growing. Two
    independent draws share the O(1/N) bias of the estimate, so their distance has the slope -1/2
    from the smallest N on. The criterion (verify.criteria.IntervalTest) was first written as the
    distance to one reference from 65536 sequences (theory slope -0.46): it passed at base seed 0
    but failed at pilot seeds 103-105 (slopes -0.62 ... -0.74: the bias steepens it at N = 1024), so
    before registration it was replaced by the replicate distance, checked on pilot seeds 100-105."""
    V, d, L = p["vocab_size"], p["d_model"], p["seq_len"]
    eta, gamma = _focus_params(V, L)
    scale = choice(p, "growth", ("none", "sqrt_n")) == "sqrt_n"
    rows = []
    for s in ctx.seeds(p["n_seeds"]):
        rng = rng_for(s, "retrieval.early_gd.trained.rng", V, d, L, 0, 0)
        task = make_retrieval_task(V, d, rng)
        test = sample_sequences(task, L, 4096, rng)
        dist, gaps, gap_diff, unit = [], [], [], None
        for N in p["n_values"]:
            wa, wb = (
                attention_step(
                    task, L, N, eta, gamma, rng_for(s, "retrieval.early_gd.trained.rng", V, d, L, N, 0, r)
                )
                * (math.sqrt(N / p["n_values"][0]) if scale else 1.0)
                for r in (1, 2)
            )
            unit = np.linalg.norm(wa) if unit is None else unit  # ||W^a|| at the smallest N: a fixed scale
            dist.append(float(np.linalg.norm(wa - wb) / unit))
            ga, gb = (evaluate(test, np.zeros((V, d)), w).score_gap for w in (wa, wb))
            gaps.append(ga)
            gap_diff.append(abs(ga - gb))
        if any(math.isnan(x) for x in dist + gaps):
            raise ValueError(f"a distance or score gap is NaN: {dist}, {gaps}")
        slope = float(np.polyfit(np.log(p["n_values"]), np.log(dist), 1)[0])
        rows.append(
            {
                "seed": s,
                "relative_distance": dist,
                "slope": slope,
                "score_gap": gaps,
                "score_gap_difference": gap_diff,
            }
        )
    rule = IntervalTest(
        "log-log slope in N of ||W_N^a - W_N^b|| / ||W_N0^a||",
        -0.5,
        {"no convergence": 0.0, "rate 1/N": -1.0},
        theory_name="the CLT rate",
    )
    slopes = [r["slope"] for r in rows]
    return rule.judge(list(t_interval(slopes, 0.95)), seeds=len(slopes)), {
        "n_values": p["n_values"],
        "rows": rows,
        "slopes": slopes,
        "score_gap": rows[0]["score_gap"],
        "lr_value": eta,
        "lr_attn": gamma,
    }


def _standardised(diff: float, se: float) -> float:
    """The difference in standard errors; with a zero standard error (both accuracies 0 or 1) the
    sign of the difference as +-inf, or 0 when there is none."""
    if se > 0:
        return diff / se
    return math.copysign(math.inf, diff) if diff != 0 else 0.0


@claim(
    "retrieval.gd.full_accuracy",
    source=SOURCE + ", abstract (trained by empirical GD)",
    provenance="abstract",
    templated=True,
    statement="after three steps (eta=V, gamma=2L^2; V={vocab_size}, d={d_model}, L={seq_len}, "
    "N={n_samples}) the full-model test accuracy acc(W_v^(2), W^(1)) exceeds the one-step "
    "uniform-attention accuracy acc(W_v^(1), W=0) by more than {z} standard errors of the difference "
    "(a convention) on 4096 test sequences, on every one of {n_seeds} seeds",
    quick={
        "vocab_size": 128,
        "d_model": 64,
        "seq_len": 8,
        "n_samples": 16384,
        "n_seeds": 6,
        "z": 3.0,
        "gamma_scale": 1.0,
    },
    seed_rule="every seed of seed..seed+5 (6 seeds, the count verify oc named for an admissible pass)",
    controls=[
        Control(
            "no_attention_step",
            {"gamma_scale": 0.0},
            "gamma = 0 (the attention step and the third step do nothing): the three-step "
            "model is the one-step model, so it cannot beat it",
        )
    ],
)
def full_accuracy(p, ctx):
    """Criterion: verify.criteria.EverySeed on the per-seed difference in standard errors, the
    former rule (three - one > z SE on every seed); the rule it replaced earlier stays in
    details["previous_criterion"]."""
    V, d, L, N = p["vocab_size"], p["d_model"], p["seq_len"], p["n_samples"]
    eta, gamma = _focus_params(V, L)  # 2 L^2 = V = 128 at the quick size
    gamma *= p["gamma_scale"]  # 1 (the claim) or 0 (the control: no attention step)
    rows = []
    seeds = ctx.seeds(p["n_seeds"])
    for s in seeds:
        _, steps, test = trained(ctx, V, d, L, N, eta, gamma, seed=s)
        three = evaluate(test, steps.w_out_2, steps.w_kq_1).accuracy
        one = uniform_attention_accuracy(test, steps.w_out_1)
        attn_only = evaluate(test, steps.w_out_1, steps.w_kq_1).accuracy
        n = test.n_samples
        se = math.sqrt((three * (1 - three) + one * (1 - one)) / n)
        rows.append(
            {
                "seed": s,
                "acc_three_steps": three,
                "acc_one_step_uniform": one,
                "acc_after_attention_step": attn_only,
                "se_diff": se,
                "z_diff": _standardised(three - one, se),
                "passed": three - one > p["z"] * se,
            }
        )
    rule = EverySeed(
        "(acc(three steps) - acc(one step, uniform)) / SE",
        p["z"],
        ">",
        "convention",
    )
    return rule.judge([r["z_diff"] for r in rows], seeds=seeds), {
        "rows": rows,
        "lr_value": eta,
        "lr_attn": gamma,
        "acc_three_steps": rows[0]["acc_three_steps"],
        "acc_one_step_uniform": rows[0]["acc_one_step_uniform"],
    }
