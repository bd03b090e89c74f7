"""Claims on the early-phase gradient descent of the retrieval area (2603.15923, spec/retrieval.md
§5, §7): closed form vs autograd, uniform attention at initialisation, the attention step's
focus on the informative token, full-model accuracy after three steps and the random-MLP
variant. Capacity claims live in verify/retrieval/capacity.py, the fitted scaling law in
verify/retrieval/scaling.py, the corrected statements in verify/retrieval/sufficient.py. (The
former theory.capacity_solve and theory.info_floor compared formulas with themselves: they are
unit tests in tests/retrieval/test_retrieval.py.)
"""

from __future__ import annotations

import math

import numpy as np

from constructions.retrieval.gd import (
    attend,
    evaluate,
    hebbian_step_one,
    three_steps_autograd,
    three_steps_closed_form,
    uniform_attention_accuracy,
)
from constructions.retrieval.task import make_retrieval_task, sample_sequences
from theory.papers import paper
from verify.claims import Control, Outcome, claim, rng_for
from verify.ledger import LedgerEntry, record
from verify.measure import seeds_verdict, t_interval
from verify.retrieval.early_gd_setup import (
    N_TEST,
)

SOURCE = paper("retrieval")


def trained(ctx, V, d, L, N, lr_value, lr_attn, mlp_width=None, seed=None):
    """Task, three-step iterates (closed form) and a fresh test set, shared across claims."""
    seed = ctx.seed if seed is None else seed

    def compute():
        rng = rng_for(int(seed), 9, V, d, L, N, mlp_width or 0)
        task = make_retrieval_task(V, d, rng, mlp_width=mlp_width)
        data = sample_sequences(task, L, N, rng)
        test = sample_sequences(task, L, N_TEST, rng)
        return task, three_steps_closed_form(data, lr_value, lr_attn), test

    return ctx.shared(("retrieval.trained", V, d, L, N, lr_value, lr_attn, mlp_width, seed), compute)


@claim(
    "retrieval.gd.closed_form",
    source=SOURCE + ", spec §5.2 (three-step GD)",
    provenance="derived",
    statement="the closed-form numpy three steps equal torch autograd: max abs difference < 1e-6 "
    "for W_v^(1), W^(1) and W_v^(2) (float64)",
    quick={"vocab_size": 64, "d_model": 16, "seq_len": 8, "n_samples": 512, "tol": 1e-6},
    needs=("torch",),
    kind="identity",
    independence="numpy closed-form gradients written by hand (constructions.retrieval.gd."
    "loss_and_grads) vs torch autograd of the loss (three_steps_autograd); they share "
    "only the data",
)
def gd_closed_form(p, ctx):
    V, d, L, N = p["vocab_size"], p["d_model"], p["seq_len"], p["n_samples"]
    rng = ctx.rng(1)
    task = make_retrieval_task(V, d, rng)
    data = sample_sequences(task, L, N, rng)
    ours = three_steps_closed_form(data, float(V), float(V))
    auto = three_steps_autograd(data, float(V), float(V))
    names = ("w_out_1", "w_kq_1", "w_out_2")
    diffs = {n: float(np.abs(getattr(ours, n) - getattr(auto, n)).max()) for n in names}
    scale = {n: float(np.abs(getattr(ours, n)).max()) for n in names}
    return Outcome(
        predicted=f"max abs diff < {p['tol']}",
        measured=f"{max(diffs.values()):.2e}",
        passed=max(diffs.values()) < p["tol"],
        details={
            "max_abs_diff": diffs,
            "max_abs_value": scale,
            "lr_value": ours.lr_value,
            "lr_attn": ours.lr_attn,
            "lr_value_final": ours.lr_value_final,
            "dtype": "float64",
        },
    )


@claim(
    "retrieval.gd.uniform_attention",
    source=SOURCE + ", spec §5.2 step 1",
    provenance="derived",
    statement="at zero initialisation attention is uniform (|a - 1/L| < 1e-12) and the autograd step 1 "
    "equals the Hebbian formula (eta/N) sum (e_y - 1/V) o^T within 1e-10",
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
    rng = ctx.rng(2)
    task = make_retrieval_task(V, d, rng)
    data = sample_sequences(task, L, N, rng)
    _, attn, _ = attend(data.hidden(), np.zeros((d, d)), task.eos)
    attn_dev = float(np.abs(attn - 1.0 / L).max())
    formula_dev = float(
        np.abs(
            hebbian_step_one(data, float(V)) - three_steps_autograd(data, float(V), float(V)).w_out_1
        ).max()
    )
    return Outcome(
        predicted=f"|a - 1/L| < {p['attn_tol']}, formula diff < {p['formula_tol']}",
        measured=f"{attn_dev:.1e}, {formula_dev:.1e}",
        passed=attn_dev < p["attn_tol"] and formula_dev < p["formula_tol"],
        details={"attention_deviation": attn_dev, "formula_deviation": formula_dev, "lr_value": float(V)},
    )


def _focus_params(V, L):
    return float(V), float(2 * L * L)  # eta = V, gamma = 2 L^2 (spec §7 attn_focus)


def _init_or(p, w_kq):
    """The trained W^(1), or the zero matrix of the initialisation for the "init" control."""
    return np.zeros_like(w_kq) if p.get("control") == "init" else w_kq


INIT = Control(
    "init",
    {"control": "init"},
    "the model at initialisation (W = 0): attention is exactly uniform, so it cannot focus",
)


@claim(
    "retrieval.attention.focus",
    source=SOURCE + ", abstract (early-phase GD); spec §5.2",
    provenance="derived",
    statement="after the attention step (eta=V, gamma=2L^2) the mean attention on the informative "
    "token over 4096 test sequences exceeds 2/L, on every one of 3 seeds",
    quick={"vocab_size": 128, "d_model": 64, "seq_len": 8, "n_samples": 8192, "n_seeds": 3},
    full={"vocab_size": 128, "d_model": 64, "seq_len": 64, "n_samples": 65536, "n_seeds": 3},
    seed_rule="every seed of seed..seed+2",
    controls=[INIT],
)
def attn_focus(p, ctx):
    V, d, L, N = p["vocab_size"], p["d_model"], p["seq_len"], p["n_samples"]
    eta, gamma = _focus_params(V, L)
    per_seed = []
    for s in ctx.seeds(p["n_seeds"]):
        _, steps, test = trained(ctx, V, d, L, N, eta, gamma, seed=s)
        per_seed.append(evaluate(test, steps.w_out_1, _init_or(p, steps.w_kq_1)).as_dict())
    attn = [e["mean_attn_info"] for e in per_seed]
    return Outcome(
        predicted=f"mean a_ell > 2/L = {2 / L:.3f}",
        measured=f"{[round(a, 3) for a in attn]}",
        passed=seeds_verdict([a > 2.0 / L for a in attn]),
        details={
            "per_seed": per_seed,
            "mean_attn_info": attn,
            "uniform": 1.0 / L,
            "n_samples": N,
            "lr_value": eta,
            "lr_attn": gamma,
            "seq_len": L,
        },
    )


FOCUS_N = [1024, 4096, 16384, 65536]


@claim(
    "retrieval.attention.focus_n",
    source=SOURCE + ", spec §7 attn_focus_N",
    provenance="derived",
    statement="the attention step becomes more selective as N grows: the test score gap "
    "s_ell - mean noise score is strictly increasing over N in {1024, 4096, 16384, 65536}",
    quick={"vocab_size": 128, "d_model": 64, "seq_len": 8, "n_values": FOCUS_N},
    controls=[INIT],
)
def attn_focus_n(p, ctx):
    V, d, L = p["vocab_size"], p["d_model"], p["seq_len"]
    eta, gamma = _focus_params(V, L)
    gaps, attn, noise_std = [], [], []
    for N in p["n_values"]:
        _, steps, test = trained(ctx, V, d, L, N, eta, gamma)
        w_kq = _init_or(p, steps.w_kq_1)
        ev = evaluate(test, steps.w_out_1, w_kq)
        scores, _, _ = attend(test.hidden(), w_kq, test.task.eos)
        mask = np.ones(scores.shape, bool)
        mask[np.arange(len(scores)), test.info_pos] = False
        gaps.append(ev.score_gap)
        attn.append(ev.mean_attn_info)
        noise_std.append(float(scores[mask].std()))
    return Outcome(
        predicted="score gap strictly increasing in N",
        measured=f"gaps {[round(g, 2) for g in gaps]}, mean a_ell {[round(a, 3) for a in attn]}",
        passed=bool(all(np.diff(gaps) > 0)),
        details={
            "n_values": p["n_values"],
            "score_gap": gaps,
            "mean_attn_info": attn,
            "noise_score_std": noise_std,
            "uniform": 1.0 / L,
            "lr_value": eta,
            "lr_attn": gamma,
        },
    )


record(
    LedgerEntry(
        claim_id="retrieval.attention.focus_n",
        measured="seed 0, V=128, d=64, L=8, eta=V, gamma=2L^2: test score gap s_ell - mean noise score "
        "about 2.0, 1.8, 1.8, 1.8 for N = 1024, 4096, 16384, 65536 (not increasing); mean a_ell "
        "0.51 -> 0.45, which matches the spec's pilot (0.507 -> 0.449) to two digits; the std of "
        "the noise scores stays about 0.24, so the standardised gap is flat too (about 7.3-7.5)",
        tried="the literal definition (per-sample s_ell minus the mean of the L-1 noise scores, averaged "
        "over 4096 test sequences); the standardised gap; several seeds. Closed-form W^(1) agrees "
        "with autograd to 1e-15, so the numbers are those of the stated model",
        reason="W^(1) = -gamma grad_W converges to its population value as N grows, so the score gap "
        "converges instead of growing; the spec's pilot gaps (10 -> 43, growing like sqrt N) match "
        "the same attention masses, so they must measure another quantity (undocumented); the "
        "criterion is kept as written",
    )
)


@claim(
    "retrieval.gd.full_accuracy",
    source=SOURCE + ", abstract (trained by empirical GD)",
    provenance="abstract",
    statement="after three steps (eta=gamma=V) the full-model test accuracy acc(W_v^(2), W^(1)) exceeds "
    "the one-step uniform-attention accuracy acc(W_v^(1), W=0) by more than 3 standard errors "
    "of the difference on 4096 test sequences, on every one of 3 seeds",
    quick={"vocab_size": 128, "d_model": 64, "seq_len": 8, "n_samples": 16384, "n_seeds": 3, "z": 3.0},
    seed_rule="every seed of seed..seed+2",
    controls=[
        Control(
            "no_attention_step",
            {"control": "init"},
            "gamma = 0 (the attention step and the third step do nothing): the three-step "
            "model is the one-step model, so it cannot beat it",
        )
    ],
)
def full_accuracy(p, ctx):
    V, d, L, N = p["vocab_size"], p["d_model"], p["seq_len"], p["n_samples"]
    eta, gamma = _focus_params(V, L)  # 2 L^2 = V = 128 at the quick size
    if p.get("control") == "init":
        gamma = 0.0
    rows = []
    for s in ctx.seeds(p["n_seeds"]):
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
                "passed": three - one > p["z"] * se,
                "previous_criterion_passed": three >= one,
            }
        )
    return Outcome(
        predicted="acc(three steps) - acc(one step, uniform) > 3 SE",
        measured="; ".join(
            f"{r['acc_three_steps']:.3f} vs {r['acc_one_step_uniform']:.3f} "
            f"(attention step alone {r['acc_after_attention_step']:.3f})"
            for r in rows
        ),
        passed=seeds_verdict([r["passed"] for r in rows]),
        details={
            "rows": rows,
            "lr_value": eta,
            "lr_attn": gamma,
            "acc_three_steps": rows[0]["acc_three_steps"],
            "acc_one_step_uniform": rows[0]["acc_one_step_uniform"],
            "previous_criterion": {
                "rule": "acc(three) >= acc(one), base seed only (the "
                "gamma = 0 control would pass it with equality)",
                "passed": [r["previous_criterion_passed"] for r in rows],
            },
        },
    )


@claim(
    "retrieval.mlp.md_product",
    source=SOURCE + ", abstract (capacity); spec §5.3",
    provenance="derived",
    statement="with a fixed random MLP and d > 2 ln V, the three-step test accuracy depends on m*d: "
    "over 3 seeds, the 95% t-interval of acc(64, 32) - acc(128, 16) (same m*d) lies within "
    "+-20% of acc(64, 32), while that of acc(64, 32) - acc(64, 16) (half the m*d) excludes "
    "0 and its mean exceeds 20% of acc(64, 32)",
    quick={
        "vocab_size": 256,
        "seq_len": 4,
        "n_samples": 32768,
        "pairs": [[64, 32], [128, 16]],
        "contrast": [64, 16],
        "counter": [256, 8],
        "n_seeds": 3,
        "rel_tol": 0.2,
    },
    seed_rule="95% t-intervals over seeds seed..seed+2 of the per-seed differences",
    controls=[
        Control(
            "same_contrast",
            {"contrast": [64, 32]},
            "a contrast with the same (m, d) as the first pair cannot differ from it",
        )
    ],
)
def mlp_md(p, ctx):
    V, L, N = p["vocab_size"], p["seq_len"], p["n_samples"]
    lr = float(V)

    def acc(m, d, seed):
        _, steps, test = trained(ctx, V, d, L, N, lr, lr, mlp_width=m, seed=seed)
        return evaluate(test, steps.w_out_2, steps.w_kq_1).accuracy

    seeds = ctx.seeds(p["n_seeds"])
    accs = [[acc(m, d, s) for s in seeds] for m, d in p["pairs"]]
    contrast = [acc(*p["contrast"], s) for s in seeds]
    means = [float(np.mean(a)) for a in accs]
    c_mean = float(np.mean(contrast))
    tol = p["rel_tol"] * means[0]
    same_lo, same_hi = t_interval([a - b for a, b in zip(*accs)], 0.95)
    diff_vals = [a - c for a, c in zip(accs[0], contrast)]
    diff_lo, diff_hi = t_interval(diff_vals, 0.95)
    agree = -tol <= same_lo and same_hi <= tol
    differ = (diff_lo > 0 or diff_hi < 0) and abs(float(np.mean(diff_vals))) > tol
    counter = acc(*p["counter"], ctx.seed)
    old_same = abs(means[0] - means[1]) / max(means[0], means[1])
    old_diff = abs(means[0] - c_mean) / max(means[0], c_mean)
    return Outcome(
        predicted=f"CI(same m*d) within +-{tol:.3f}; CI(half m*d) excludes 0, |mean| > {tol:.3f}",
        measured=f"means (64,32) {means[0]:.3f}, (128,16) {means[1]:.3f}, "
        f"{tuple(p['contrast'])} {c_mean:.3f}; CI same [{same_lo:.3f}, {same_hi:.3f}], "
        f"CI contrast [{diff_lo:.3f}, {diff_hi:.3f}]",
        passed=bool(agree and differ),
        details={
            "pairs": p["pairs"],
            "accuracies": accs,
            "mean_accuracy": means,
            "contrast": p["contrast"],
            "contrast_accuracies": contrast,
            "ci_same": [same_lo, same_hi],
            "ci_contrast": [diff_lo, diff_hi],
            "counter_example": p["counter"],
            "counter_accuracy": counter,
            "lr_value": lr,
            "lr_attn": lr,
            "previous_criterion": [
                {
                    "rule": "|acc(64,32) - acc(128,16)| <= 0.1 absolute (mean of 3 seeds)",
                    "passed": abs(means[0] - means[1]) <= 0.1,
                },
                {
                    "rule": "relative gap of the means <= 0.2 at same m*d and > 0.2 at half "
                    "m*d (flipped: passed at base seed 4)",
                    "passed": old_same <= p["rel_tol"] and old_diff > p["rel_tol"],
                },
            ],
        },
    )


record(
    LedgerEntry(
        claim_id="retrieval.mlp.md_product",
        measured="V=256, L=4, N=32768, eta=gamma=V; three-step test accuracy by seed 0..6: (m, d) = (64, 32) "
        "0.224, 0.138, 0.213, 0.238, 0.339, 0.166, 0.050; (128, 16) (same m*d) 0.057, 0.167, 0.089, "
        "0.073, 0.213, 0.183, 0.164; (64, 16) (half m*d) 0.217, 0.139, 0.198, 0.189, 0.126, 0.083, "
        "0.180. At fixed (m, d) the accuracy spans 0.05-0.34 across seeds, more than any difference "
        "between configurations; over 3 seeds the 95% t-intervals of the differences span about "
        "+-0.25, so neither 'same m*d agree' nor 'half m*d differs' can be shown",
        tried="absolute gap <= 0.1 (flipped: failed at seed 2, issue 12); relative gaps of 3-seed means with "
        "a contrast at half m*d (issue 13 item 5: failed at seeds 0-3, passed at seed 4: noise); "
        "t-intervals of the per-seed differences (kept)",
        reason="with a fixed random ReLU MLP after three GD steps the test accuracy is dominated by the "
        "draw of the task and the MLP (seed-to-seed spread 0.05-0.34), so at quick scale the m*d "
        "hypothesis (spec §5.3, [derived]) is not decidable; the pooled means ((64,32) 0.195, "
        "(128,16) 0.135, (64,16) 0.162) do not support it either. The criterion is kept",
    )
)
