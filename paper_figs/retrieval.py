"""Figures of the retrieval area (2603.15923, spec/retrieval.md §8), drawn from stored claim records.

All N_c are this project's measurements of the one-step value memory (oracle accuracy >= 0.9,
mean of 3 seeds); the F1 curves are the [derived] prediction of theory/retrieval.py, not the paper's.
"""
from __future__ import annotations

import math

import numpy as np

from paper_figs.registry import figure, need
from theory import retrieval as th


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@figure("retrieval.fig_nc_grid", title="Capacity against L/d: Gaussian vs orthogonal embeddings",
        claims=("retrieval.capacity.multiplicative", "retrieval.capacity.orth_d_independent",
                "retrieval.capacity.pred_order"))
def fig_nc_grid(records):
    plt = _plt()
    mult = need(records, "retrieval.capacity.multiplicative")["details"]
    orth = need(records, "retrieval.capacity.orth_d_independent")["details"]
    order = need(records, "retrieval.capacity.pred_order")["details"]
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    V = mult["vocab_size"]
    vlnv = V * math.log(V)
    xs = [L / d for L, d in mult["pairs"]]
    ax.scatter(xs, [n / vlnv for n in mult["n_c"]], s=60, marker="o", color="C0", zorder=3,
               label=f"Gaussian, equal L/d pairs (V={V})")
    Lc, dc = mult["contrast_pair"]
    ax.scatter([Lc / dc], [mult["contrast_n_c"] / vlnv], s=60, marker="s", color="C3", zorder=3,
               label=f"Gaussian, (L, d)=({Lc}, {dc})")
    gx = [L / d for V_, d, L in order["grid"]]
    gy = [n / (V_ * math.log(V_)) for (V_, d, L), n in zip(order["grid"], order["n_c"])]
    ax.scatter(gx, gy, s=28, marker="^", color="C2", zorder=3, label="Gaussian, reference grid")
    ox = [L / orth["d_orth"] for L in orth["seq_lens"]]
    ax.scatter(ox, [n / orth["v_ln_v"] for n in orth["n_c_orth"]], s=60, marker="D", color="C1", zorder=3,
               label=f"orthogonal (d=V={orth['d_orth']})")
    ax.scatter([L / orth["d_gauss"] for L in orth["seq_lens"]], [n / orth["v_ln_v"] for n in orth["n_c_gauss"]],
               s=28, marker="o", facecolors="none", edgecolors="C0", zorder=3)
    ratio = np.geomspace(1 / 64, 1.5, 60)
    for d, style in ((32, "--"), (128, ":")):
        curve = [th.nc_pred(V, d, 1) * r * d / vlnv for r in ratio]  # F1 is linear in L
        ax.plot(ratio, curve, style, color="gray", label=f"F1 prediction [derived], d={d}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("L / d (sequence length per embedding dimension)")
    ax.set_ylabel("N_c(0.9) / (V ln V)  (samples, normalised)")
    ax.set_title("Critical sample size vs L/d (one-step value memory)")
    ax.legend(fontsize=7.5, loc="upper left")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


@figure("retrieval.fig_nc_V", title="Capacity against vocabulary size, one line per d",
        claims=("retrieval.capacity.nc_increases_v", "retrieval.capacity.nc_decreases_d"))
def fig_nc_v(records):
    plt = _plt()
    inc = need(records, "retrieval.capacity.nc_increases_v")["details"]
    dec = need(records, "retrieval.capacity.nc_decreases_d")["details"]
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    L = inc["seq_len"]
    Vs = inc["vocab_sizes"]
    ax.plot(Vs, inc["n_c"], "o-", color="C0", label=f"measured, d={inc['d_model']} (slope {inc['slope']:.2f})")
    Vgrid = np.geomspace(min(Vs), max(Vs), 40)
    colors = {inc["d_model"]: "C0"}
    for i, d in enumerate(dec["d_models"]):
        colors.setdefault(d, f"C{i + 1}")
    for d, n in zip(dec["d_models"], dec["n_c"]):
        if d != inc["d_model"]:
            ax.plot([dec["vocab_size"]], [n], "s", color=colors[d], ms=8, label=f"measured, d={d}")
    for d in sorted(colors):
        pred = [th.nc_pred(int(round(v)), d, L) for v in Vgrid]
        ax.plot(Vgrid, pred, "--", color=colors[d], alpha=0.7, label=f"F1 prediction [derived], d={d}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("V (vocabulary size = number of labels)")
    ax.set_ylabel("N_c(0.9) (training sequences)")
    ax.set_title(f"Critical sample size vs V (L={L}, Gaussian embeddings)")
    ax.legend(fontsize=7.5)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


@figure("retrieval.fig_phase", title="Oracle accuracy against N, one curve per (embedding, d, L)",
        claims=("retrieval.capacity.small_d_fail", "retrieval.capacity.small_n_fail",
                "retrieval.capacity.orth_coupon"))
def fig_phase(records):
    plt = _plt()
    small_d = need(records, "retrieval.capacity.small_d_fail")["details"]
    small_n = need(records, "retrieval.capacity.small_n_fail")["details"]
    coupon = need(records, "retrieval.capacity.orth_coupon")["details"]
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    curves = list(small_d["curves"]) + [small_n["curve"], coupon["curve"]]
    for i, curve in enumerate(curves):
        pts = np.array(curve["points"], dtype=float)
        label = curve["label"] + (" (V=128)" if curve is coupon["curve"] else " (V=256)")
        ax.plot(pts[:, 0], pts[:, 1], "o-", color=f"C{i}", label=label)
    ax.axhline(0.9, color="k", lw=0.8, ls=":", label="target accuracy 0.9")
    ax.axvline(small_n["coupon_floor"], color="C2", lw=0.8, ls="--",
               label=f"F2 coupon floor V=256, delta=0.1 ({small_n['coupon_floor']:.0f})")
    ax.axvline(coupon["coupon_floor"], color="C3", lw=0.8, ls="--",
               label=f"F2 coupon floor V=128, delta=0.1 ({coupon['coupon_floor']})")
    ax.set_xscale("log")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("N (training sequences)")
    ax.set_ylabel("oracle accuracy (fraction of tokens recalled)")
    ax.set_title("One-step value memory: accuracy vs sample size")
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


@figure("retrieval.fig_attention", title="Attention on the informative token after the W step",
        claims=("retrieval.attention.focus", "retrieval.attention.focus_n"))
def fig_attention(records):
    plt = _plt()
    focus = need(records, "retrieval.attention.focus")["details"]
    by_n = need(records, "retrieval.attention.focus_n")["details"]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 4.2))
    ax.plot(by_n["n_values"], by_n["mean_attn_info"], "o-", color="C0", label="mean a_ell (test, 4096 seqs)")
    ax.plot([focus["n_samples"]], [focus["mean_attn_info"]], "*", ms=14, color="C1",
            label="retrieval.attention.focus")
    L = focus["seq_len"]
    ax.axhline(1 / L, color="gray", ls=":", label=f"uniform attention 1/L = {1 / L:.3f}")
    ax.axhline(2 / L, color="k", ls="--", lw=0.8, label=f"claim threshold 2/L = {2 / L:.3f}")
    ax.set_xscale("log")
    ax.set_ylim(0, 1)
    ax.set_xlabel("N (training sequences)")
    ax.set_ylabel("attention on informative token (probability)")
    ax.set_title(f"After step 2 (eta=V, gamma=2L^2={focus['lr_attn']:.0f}, L={L})")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax2.plot(by_n["n_values"], by_n["score_gap"], "o-", color="C2", label="score gap s_ell - mean noise score")
    ax2.plot(by_n["n_values"], by_n["noise_score_std"], "s--", color="C4", label="std of noise scores")
    ax2.set_xscale("log")
    ax2.set_xlabel("N (training sequences)")
    ax2.set_ylabel("attention score (logit units)")
    ax2.set_title("Score gap (claim focus_n: not reproduced, see ledger)")
    ax2.legend(fontsize=8)
    ax2.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig
