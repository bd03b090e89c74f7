"""Figures of the geometric area, gradient descent (docs/geometric.md#figures), drawn from stored results."""

from __future__ import annotations

import math

import numpy as np

from paper_figs.registry import figure, footer, need


@figure(
    "geometric.fig_gd_structure",
    claims=("geometric.gd.fit", "geometric.gd.superposition", "geometric.gd.threshold_scaling"),
    title="What gradient descent learns: accuracy and superposition probe over training; trained threshold",
)
def fig_gd_structure(records):
    import matplotlib.pyplot as plt

    rec = need(records, "geometric.gd.superposition")
    c, p = rec["details"]["curve"], rec["params"]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.4))
    ax.plot(c["step"], c["accuracy"], "o-", color="C0", label="train accuracy (all N·R facts)")
    ax.plot(c["step"], c["r2"], "s-", color="C1", label="held-out probe R²: e_s ~ concat_r U[π_r(s)] W")
    ax.plot(c["step"], c["control_r2"], "^-", color="C7", label="control R² (independent random bijections)")
    ax.axhline(0.3, color="C1", lw=0.8, ls="--", label="probe criterion R² ≥ 0.3")
    ax.axhline(0, color="black", lw=0.6)
    ax.set_xlabel("training step (full-batch Adam)")
    ax.set_ylabel("accuracy / R² (dimensionless)")
    ax.set_title(
        f"N = {p['n_subjects']}, R = {p['n_relations']}, d = {p['dim']}, m = {p['mlp_width']}", fontsize=9
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center right")
    thr = records.get("geometric.gd.threshold_scaling")
    if thr and thr.get("status") != "error":
        rows, fit = thr["details"]["rows"], thr["details"]["fit"]
        x = np.array([math.log(r["N"]) for r in rows])
        ax2.errorbar(
            x,
            [r["mean"] for r in rows],
            yerr=[r["sd"] for r in rows],
            fmt="o",
            capsize=3,
            color="C0",
            label=f"trained: smallest d with train accuracy 1 "
            f"(mean ± sd, {len(rows[0]['trained_d_star'])} seeds)",
        )
        xs = np.linspace(x.min() - 0.1, x.max() + 0.1, 20)
        ax2.plot(
            xs,
            fit["slope"] * xs + fit["intercept"],
            "-",
            color="C0",
            alpha=0.6,
            label=f"fit d* = {fit['slope']:.2f} ln N {fit['intercept']:+.2f} (R² = {fit['r2']:.2f})",
        )
        ax2.plot(
            x,
            [r["construction_d"] for r in rows],
            "s--",
            color="C3",
            label="construction: R·d0* (margin ≥ 0.25)",
        )
        ax2.set_xlabel("ln N  (N = number of subjects)")
        ax2.set_ylabel("embedding dimension d")
        ax2.set_title(
            f"Threshold against ln N, R = {thr['params']['n_relations']}, status: {thr['status']}", fontsize=9
        )
        ax2.set_ylim(bottom=0)
        ax2.grid(alpha=0.3)
        ax2.legend(fontsize=7, loc="upper left")
    else:
        ax2.set_axis_off()
    fig.tight_layout()
    footer(fig, rec)
    return fig


@figure(
    "geometric.fig_transfer",
    claims=("geometric.gd.transfer", "geometric.gd.frozen_embed_control"),
    title="Accuracy of the trained model: learned, zero-shot transfer, random and frozen embeddings",
)
def fig_transfer(records):
    import matplotlib.pyplot as plt

    rec = need(records, "geometric.gd.transfer")
    det, p = rec["details"], rec["params"]
    labels = [
        f"learned\n(d = {p['dim']})",
        "transfer: new π',\ne' = concat U[π'] W",
        "random Gaussian\nE_subj, new π'",
    ]
    values = [det["learned_accuracy"], det["transfer_accuracy"], det["random_accuracy"]]
    colors = ["C0", "C2", "C7"]
    frz = records.get("geometric.gd.frozen_embed_control")
    if frz and frz.get("status") != "error":
        fd = frz["details"]
        labels += [f"learned\n(d = {fd['dim']})", f"frozen E_subj\n(d = {fd['dim']})"]
        values += [fd["learned_accuracy"], fd["frozen_accuracy"]]
        colors += ["C0", "C3"]
    floor = 0.1 / p["n_subjects"]
    fig, ax = plt.subplots(figsize=(7.4, 4.4))
    bars = ax.bar(range(len(values)), [max(v, floor) for v in values], color=colors)
    for bar, v in zip(bars, values):
        ax.text(bar.get_x() + bar.get_width() / 2, max(v, floor) * 1.15, f"{v:.3g}", ha="center", fontsize=8)
    ax.axhline(det["chance"], color="black", ls="--", lw=0.8, label=f"chance 1/N = {det['chance']:.2g}")
    ax.set_yscale("log")
    ax.set_ylim(floor / 2, 2.5)
    ax.set_xticks(range(len(values)))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("accuracy over all N·R facts (log scale; 0 drawn at the floor)")
    ax.set_title(
        f"Zero-shot transfer of the trained MLP (N = {p['n_subjects']}, R = {p['n_relations']})", fontsize=10
    )
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    footer(fig, rec)
    return fig
