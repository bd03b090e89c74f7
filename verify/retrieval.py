"""Claims on the early-phase gradient descent of the retrieval area (2603.15923, spec/retrieval.md
§5, §7): closed form vs autograd, uniform attention at initialisation, the attention step's
focus on the informative token, full-model accuracy after three steps, the random-MLP variant,
and the F4/F5 theory claims. Capacity claims live in verify/retrieval_capacity.py, the fitted
scaling law in verify/retrieval_scaling.py.
"""
from __future__ import annotations

import math

import numpy as np

from constructions.retrieval import make_retrieval_task, sample_sequences
from constructions.retrieval_gd import (attend, evaluate, hebbian_step_one, three_steps_autograd,
                                        three_steps_closed_form, uniform_attention_accuracy)
from theory import retrieval as th
from verify.claims import Outcome, claim
from verify.ledger import LedgerEntry, record

SOURCE = "Learning to Recall with Transformers Beyond Orthogonal Embeddings (2603.15923)"
N_TEST = 4096


def trained(ctx, V, d, L, N, lr_value, lr_attn, mlp_width=None, seed=None):
    """Task, three-step iterates (closed form) and a fresh test set, shared across claims."""
    seed = ctx.seed if seed is None else seed

    def compute():
        rng = np.random.default_rng([int(seed), 9, V, d, L, N, mlp_width or 0])
        task = make_retrieval_task(V, d, rng, mlp_width=mlp_width)
        data = sample_sequences(task, L, N, rng)
        test = sample_sequences(task, L, N_TEST, rng)
        return task, three_steps_closed_form(data, lr_value, lr_attn), test

    return ctx.shared(("retrieval.trained", V, d, L, N, lr_value, lr_attn, mlp_width, seed), compute)


@claim("retrieval.gd.closed_form", source=SOURCE + ", spec §5.2 (three-step GD)", provenance="derived",
       statement="the closed-form numpy three steps equal torch autograd: max abs difference < 1e-6 "
                 "for W_v^(1), W^(1) and W_v^(2) (float64)",
       quick={"vocab_size": 64, "d_model": 16, "seq_len": 8, "n_samples": 512, "tol": 1e-6},
       needs=("torch",))
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
    return Outcome(predicted=f"max abs diff < {p['tol']}", measured=f"{max(diffs.values()):.2e}",
                   passed=max(diffs.values()) < p["tol"],
                   details={"max_abs_diff": diffs, "max_abs_value": scale, "lr_value": ours.lr_value,
                            "lr_attn": ours.lr_attn, "lr_value_final": ours.lr_value_final,
                            "dtype": "float64"})


@claim("retrieval.gd.uniform_attention", source=SOURCE + ", spec §5.2 step 1", provenance="derived",
       statement="at zero initialisation attention is uniform (|a - 1/L| < 1e-12) and the autograd step 1 "
                 "equals the Hebbian formula (eta/N) sum (e_y - 1/V) o^T within 1e-10",
       quick={"vocab_size": 64, "d_model": 16, "seq_len": 8, "n_samples": 512, "attn_tol": 1e-12,
              "formula_tol": 1e-10}, needs=("torch",))
def uniform_attention(p, ctx):
    V, d, L, N = p["vocab_size"], p["d_model"], p["seq_len"], p["n_samples"]
    rng = ctx.rng(2)
    task = make_retrieval_task(V, d, rng)
    data = sample_sequences(task, L, N, rng)
    _, attn, _ = attend(data.hidden(), np.zeros((d, d)), task.eos)
    attn_dev = float(np.abs(attn - 1.0 / L).max())
    formula_dev = float(np.abs(hebbian_step_one(data, float(V))
                               - three_steps_autograd(data, float(V), float(V)).w_out_1).max())
    return Outcome(predicted=f"|a - 1/L| < {p['attn_tol']}, formula diff < {p['formula_tol']}",
                   measured=f"{attn_dev:.1e}, {formula_dev:.1e}",
                   passed=attn_dev < p["attn_tol"] and formula_dev < p["formula_tol"],
                   details={"attention_deviation": attn_dev, "formula_deviation": formula_dev,
                            "lr_value": float(V)})


def _focus_params(V, L):
    return float(V), float(2 * L * L)  # eta = V, gamma = 2 L^2 (spec §7 attn_focus)


@claim("retrieval.attention.focus", source=SOURCE + ", abstract (early-phase GD); spec §5.2",
       provenance="derived",
       statement="after the attention step (eta=V, gamma=2L^2) the mean attention on the informative "
                 "token over 4096 test sequences exceeds 2/L",
       quick={"vocab_size": 128, "d_model": 64, "seq_len": 8, "n_samples": 8192},
       full={"vocab_size": 128, "d_model": 64, "seq_len": 64, "n_samples": 65536})
def attn_focus(p, ctx):
    V, d, L, N = p["vocab_size"], p["d_model"], p["seq_len"], p["n_samples"]
    eta, gamma = _focus_params(V, L)
    _, steps, test = trained(ctx, V, d, L, N, eta, gamma)
    ev = evaluate(test, steps.w_out_1, steps.w_kq_1)
    return Outcome(predicted=f"mean a_ell > 2/L = {2 / L:.3f}", measured=f"{ev.mean_attn_info:.3f}",
                   passed=ev.mean_attn_info > 2.0 / L,
                   details={**ev.as_dict(), "uniform": 1.0 / L, "n_samples": N, "lr_value": eta,
                            "lr_attn": gamma, "seq_len": L})


FOCUS_N = [1024, 4096, 16384, 65536]


@claim("retrieval.attention.focus_n", source=SOURCE + ", spec §7 attn_focus_N", provenance="derived",
       statement="the attention step becomes more selective as N grows: the test score gap "
                 "s_ell - mean noise score is strictly increasing over N in {1024, 4096, 16384, 65536}",
       quick={"vocab_size": 128, "d_model": 64, "seq_len": 8, "n_values": FOCUS_N})
def attn_focus_n(p, ctx):
    V, d, L = p["vocab_size"], p["d_model"], p["seq_len"]
    eta, gamma = _focus_params(V, L)
    gaps, attn, noise_std = [], [], []
    for N in p["n_values"]:
        _, steps, test = trained(ctx, V, d, L, N, eta, gamma)
        ev = evaluate(test, steps.w_out_1, steps.w_kq_1)
        scores, _, _ = attend(test.hidden(), steps.w_kq_1, test.task.eos)
        mask = np.ones(scores.shape, bool)
        mask[np.arange(len(scores)), test.info_pos] = False
        gaps.append(ev.score_gap)
        attn.append(ev.mean_attn_info)
        noise_std.append(float(scores[mask].std()))
    return Outcome(predicted="score gap strictly increasing in N",
                   measured=f"gaps {[round(g, 2) for g in gaps]}, mean a_ell {[round(a, 3) for a in attn]}",
                   passed=bool(all(np.diff(gaps) > 0)),
                   details={"n_values": p["n_values"], "score_gap": gaps, "mean_attn_info": attn,
                            "noise_score_std": noise_std, "uniform": 1.0 / L, "lr_value": eta,
                            "lr_attn": gamma})


record(LedgerEntry(
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
           "criterion is kept as written"))


@claim("retrieval.gd.full_accuracy", source=SOURCE + ", abstract (trained by empirical GD)",
       provenance="abstract",
       statement="after three steps (eta=gamma=V) the full-model test accuracy acc(W_v^(2), W^(1)) is at "
                 "least the one-step uniform-attention accuracy acc(W_v^(1), W=0)",
       quick={"vocab_size": 128, "d_model": 64, "seq_len": 8, "n_samples": 16384})
def full_accuracy(p, ctx):
    V, d, L, N = p["vocab_size"], p["d_model"], p["seq_len"], p["n_samples"]
    eta, gamma = _focus_params(V, L)  # 2 L^2 = V = 128 at the quick size
    _, steps, test = trained(ctx, V, d, L, N, eta, gamma)
    three = evaluate(test, steps.w_out_2, steps.w_kq_1).accuracy
    one = uniform_attention_accuracy(test, steps.w_out_1)
    attn_only = evaluate(test, steps.w_out_1, steps.w_kq_1).accuracy
    return Outcome(predicted="acc(three steps) >= acc(one step, uniform attention)",
                   measured=f"{three:.3f} vs {one:.3f} (attention step alone {attn_only:.3f})",
                   passed=three >= one,
                   details={"acc_three_steps": three, "acc_one_step_uniform": one,
                            "acc_after_attention_step": attn_only, "lr_value": eta, "lr_attn": gamma,
                            "lr_value_final": steps.lr_value_final})


@claim("retrieval.mlp.md_product", source=SOURCE + ", abstract (capacity); spec §5.3", provenance="derived",
       statement="with a fixed random MLP and d > 2 ln V, the three-step test accuracy depends on m*d: "
                 "(m, d) = (64, 32) and (128, 16) agree within 0.1 (mean of 3 seeds); (256, 8), "
                 "d <= 2 ln V, reported as the counter-example",
       quick={"vocab_size": 256, "seq_len": 4, "n_samples": 32768, "pairs": [[64, 32], [128, 16]],
              "counter": [256, 8], "n_seeds": 3, "tol": 0.1})
def mlp_md(p, ctx):
    V, L, N = p["vocab_size"], p["seq_len"], p["n_samples"]
    lr = float(V)

    def acc(m, d, seed):
        _, steps, test = trained(ctx, V, d, L, N, lr, lr, mlp_width=m, seed=seed)
        return evaluate(test, steps.w_out_2, steps.w_kq_1).accuracy

    seeds = ctx.seeds(p["n_seeds"])
    accs = [[acc(m, d, s) for s in seeds] for m, d in p["pairs"]]
    means = [float(np.mean(a)) for a in accs]
    counter = acc(*p["counter"], ctx.seed)
    _, plain, plain_test = trained(ctx, V, p["pairs"][0][1], L, N, lr, lr, seed=ctx.seed)
    plain_acc = evaluate(plain_test, plain.w_out_2, plain.w_kq_1).accuracy
    gap = abs(means[0] - means[1])
    return Outcome(predicted=f"|acc(64,32) - acc(128,16)| <= {p['tol']}",
                   measured=f"{means[0]:.3f} vs {means[1]:.3f} (counter-example (256,8): {counter:.3f})",
                   passed=gap <= p["tol"],
                   details={"pairs": p["pairs"], "accuracies": accs, "mean_accuracy": means,
                            "counter_example": p["counter"], "counter_accuracy": counter,
                            "attention_only_accuracy_d32": plain_acc, "lr_value": lr, "lr_attn": lr})


@claim("retrieval.theory.capacity_solve", source=SOURCE + ", spec §6 F5", provenance="derived",
       statement="F5: V_max(N, d, L) solves N = N_c^pred(V) and dV_max/dN > 0, dV_max/dd > 0, "
                 "dV_max/dL < 0 at N=1e4, d=64, L=8 (implicit differentiation and finite differences agree)",
       quick={"n_samples": 1e4, "d_model": 64, "seq_len": 8})
def capacity_solve(p, ctx):
    N, d, L = p["n_samples"], p["d_model"], p["seq_len"]
    root = th.v_max(N, d, L)
    check = th.v_max_sympy(N, d, L)
    grad = th.v_max_gradient(N, d, L)
    fd = {"n_samples": (th.v_max(N * 1.001, d, L) - th.v_max(N / 1.001, d, L)) / (N * 1.001 - N / 1.001),
          "d_model": (th.v_max(N, d + 1, L) - th.v_max(N, d - 1, L)) / 2.0,
          "seq_len": (th.v_max(N, d, L + 1) - th.v_max(N, d, L - 1)) / 2.0}
    signs_ok = grad["n_samples"] > 0 and grad["d_model"] > 0 and grad["seq_len"] < 0
    fd_ok = all(np.sign(fd[k]) == np.sign(grad[k]) for k in grad)
    nc_at_root = 4 * root * L * math.log(root) / (d * (1 - math.sqrt(2 * math.log(root) / d)) ** 2)
    residual = abs(nc_at_root - N) / N
    return Outcome(predicted="dV/dN > 0, dV/dd > 0, dV/dL < 0",
                   measured=f"V_max={root:.1f}, dV/dN={grad['n_samples']:.3g}, dV/dd={grad['d_model']:.3g}, "
                            f"dV/dL={grad['seq_len']:.3g}",
                   passed=bool(signs_ok and fd_ok and residual < 1e-9 and abs(check - root) < 1e-6 * root),
                   details={"v_max": root, "v_max_nsolve": check, "implicit": grad, "finite_diff": fd,
                            "relative_residual": residual})


@claim("retrieval.theory.info_floor", source=SOURCE + ", spec §6 F4", provenance="derived",
       statement="F4 at V=1024, b=32: d >= log2(1024!)/(1024*32) = 0.268, the bound computed by "
                 "lgamma agreeing with the exact sum of log2 k to 1e-9",
       quick={"vocab_size": 1024, "bits": 32, "reference": 0.268, "tol": 5e-4})
def info_floor(p, ctx):
    V, b = p["vocab_size"], p["bits"]
    value = th.param_floor(V, b)
    exact = math.fsum(math.log2(k) for k in range(2, V + 1)) / (V * b)
    return Outcome(predicted=f"d >= {p['reference']}", measured=f"{value:.4f} (exact sum {exact:.4f})",
                   passed=abs(value - p["reference"]) < p["tol"] and abs(value - exact) < 1e-9,
                   details={"bound": value, "exact_sum": exact, "stirling": math.log2(V) / b})
