"""Figures of the retrieval area (2603.15923, docs/retrieval.md#figures), drawn from stored claim records.

All N_c are this project's measurements of the one-step value memory (oracle accuracy >= 0.9,
mean of 3 draws); the F1 curves are the [derived] scaling heuristic of theory/retrieval/bounds.py and the
sufficient condition and plateau curves the [derived] statements of theory/retrieval/sufficient.py,
not the paper's.
"""

from __future__ import annotations

import math

import numpy as np

from paper_figs.registry import figure, need, verdict_title
from paper_figs.registry import pyplot as _plt
from theory.retrieval import bounds as th
from theory.retrieval import sufficient as ts


@figure(
    "retrieval.fig_nc_grid",
    title="Capacity against L/d: Gaussian vs orthogonal embeddings",
    claims=(
        "retrieval.capacity.multiplicative",
        "retrieval.capacity.orth_d_independent",
        "retrieval.scaling.fit",
    ),
)
def fig_nc_grid(records):
    plt = _plt()
    mult = need(records, "retrieval.capacity.multiplicative")["details"]
    orth = need(records, "retrieval.capacity.orth_d_independent")["details"]
    order = need(records, "retrieval.scaling.fit")["details"]
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    V = mult["vocab_size"]
    vlnv = V * math.log(V)
    xs = [L / d for L, d in mult["pairs"]]
    ax.scatter(
        xs,
        [n / vlnv for n in mult["n_c"]],
        s=60,
        marker="o",
        color="C0",
        zorder=3,
        label=f"Gaussian, equal L/d pairs (V={V})",
    )
    Lc, dc = mult["contrast_pair"]
    ax.scatter(
        [Lc / dc],
        [mult["contrast_n_c"] / vlnv],
        s=60,
        marker="s",
        color="C3",
        zorder=3,
        label=f"Gaussian, (L, d)=({Lc}, {dc})",
    )
    gx = [L / d for V_, d, L in order["grid"]]
    gy = [n / (V_ * math.log(V_)) for (V_, d, L), n in zip(order["grid"], order["n_c"])]
    ax.scatter(
        gx, gy, s=28, marker="^", color="C2", zorder=3, label="Gaussian, scaling-fit grid (V = 128-512)"
    )
    ox = [orth["seq_len"] / d for d in orth["d_models"]]
    ax.scatter(
        ox,
        [n / orth["v_ln_v"] for n in orth["n_c_per_seed"][0]],
        s=60,
        marker="D",
        color="C1",
        zorder=3,
        label=f"orthogonal (V={orth['vocab_size']}, d >= V)",
    )
    ratio = np.geomspace(1 / 64, 1.5, 60)
    for d, style in ((32, "--"), (128, ":")):
        curve = [th.nc_pred(V, d, 1) * r * d / vlnv for r in ratio]  # F1 is linear in L
        ax.plot(ratio, curve, style, color="gray", label=f"F1 scaling heuristic [derived], d={d}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("L / d (sequence length per embedding dimension)")
    ax.set_ylabel("N_c(0.9) / (V ln V)  (samples, normalised)")
    ax.set_title("Critical sample size vs L/d (one-step value memory)")
    ax.legend(fontsize=7.5, loc="upper left")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


@figure(
    "retrieval.fig_nc_V",
    title="Capacity against vocabulary size, one line per d",
    claims=("retrieval.capacity.nc_increases_v", "retrieval.capacity.nc_decreases_d"),
)
def fig_nc_v(records):
    plt = _plt()
    inc = need(records, "retrieval.capacity.nc_increases_v")["details"]
    dec = need(records, "retrieval.capacity.nc_decreases_d")["details"]
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    L = inc["seq_len"]
    Vs = inc["vocab_sizes"]
    ax.plot(
        Vs, inc["n_c"], "o-", color="C0", label=f"measured, d={inc['d_model']} (slope {inc['slope']:.2f})"
    )
    Vgrid = np.geomspace(min(Vs), max(Vs), 40)
    colors = {inc["d_model"]: "C0"}
    for i, d in enumerate(dec["d_models"]):
        colors.setdefault(d, f"C{i + 1}")
    for d, n in zip(dec["d_models"], dec["n_c"]):
        if d != inc["d_model"]:
            ax.plot([dec["vocab_size"]], [n], "s", color=colors[d], ms=8, label=f"measured, d={d}")
    for d in sorted(colors):
        pred = [th.nc_pred(int(round(v)), d, L) for v in Vgrid]
        ax.plot(Vgrid, pred, "--", color=colors[d], alpha=0.7, label=f"F1 scaling heuristic [derived], d={d}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("V (vocabulary size = number of labels)")
    ax.set_ylabel("N_c(0.9) (training sequences)")
    ax.set_title(f"Critical sample size vs V (L={L}, Gaussian embeddings)")
    ax.legend(fontsize=7.5)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


@figure(
    "retrieval.fig_phase",
    title="Accuracy plateau in d and the two must-fail brackets",
    claims=(
        "retrieval.capacity.plateau",
        "retrieval.capacity.small_d_fail",
        "retrieval.capacity.small_n_fail",
        "retrieval.capacity.orth_coupon",
    ),
)
def fig_phase(records):
    plt = _plt()
    plat_rec = need(records, "retrieval.capacity.plateau")
    plat = plat_rec["details"]
    small_d = need(records, "retrieval.capacity.small_d_fail")
    small_n = need(records, "retrieval.capacity.small_n_fail")["details"]
    coupon = need(records, "retrieval.capacity.orth_coupon")["details"]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.4))
    V = plat["vocab_size"]
    ds = np.arange(4, 41)
    ax.plot(
        ds,
        [ts.plateau_accuracy(V, int(d)) for d in ds],
        "-",
        color="gray",
        label="plateau E[Phi(chi_d)^(V-1)] [derived]",
    )
    rows = plat["rows"]
    ax.errorbar(
        [r["d_model"] for r in rows],
        [r["mean"] for r in rows],
        yerr=[[r["mean"] - r["ci99"][0] for r in rows], [r["ci99"][1] - r["mean"] for r in rows]],
        fmt="o",
        color="C0",
        label=f"measured, N=1e9, mean of {len(rows[0]['accuracies'])} draws",
    )
    det = small_d["details"]
    ax.plot([det["d_model"]], [det["accuracy"]], "v", ms=10, color="C3", label="small_d_fail (below d*)")
    ax.axvline(det["d_star"], color="C3", ls="--", lw=0.8, label=f"d*(0.9) = {det['d_star']:.1f}")
    ax.axvline(2 * math.log(V), color="k", ls=":", lw=0.8, label=f"2 ln V = {2 * math.log(V):.1f}")
    ax.axvline(4 * math.log(V), color="k", ls="-.", lw=0.8, label=f"4 ln V = {4 * math.log(V):.1f}")
    ax.axhline(0.9, color="k", lw=0.6)
    ax.set_xlabel("d (embedding dimension)")
    ax.set_ylabel("oracle accuracy as N -> infinity")
    ax.set_title(verdict_title(f"Plateau below 1 for every N (V={V}, Gaussian)", plat_rec), fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    ax.grid(True, alpha=0.3)
    pts = np.array(coupon["curve"]["points"], dtype=float)
    ax2.plot(pts[:, 0], pts[:, 1], "o-", color="C1", label=coupon["curve"]["label"] + " (mean accuracy)")
    ax2.axvline(
        small_n["n_samples"],
        color="C3",
        ls="--",
        lw=0.8,
        label=f"V ln(V/10) = {small_n['n_samples']}: P(all seen) <= {small_n['all_seen_upper']:.2f}",
    )
    ax2.axvline(
        small_n["coupon_floor_sufficient"],
        color="C2",
        ls="--",
        lw=0.8,
        label=f"coupon floor (sufficient to see all), delta=0.1: {small_n['coupon_floor_sufficient']:.0f}",
    )
    ax2.axvline(
        small_n["n_sufficient_orthogonal"],
        color="C0",
        ls="--",
        lw=0.8,
        label=f"n_sufficient (exact recall), delta=0.1: {small_n['n_sufficient_orthogonal']:.0f}",
    )
    ax2.set_xscale("log")
    ax2.set_ylim(0, 1.05)
    ax2.set_xlabel("N (training sequences)")
    ax2.set_ylabel("oracle accuracy")
    ax2.set_title("Orthogonal embeddings: the N bracket")
    ax2.legend(fontsize=7, loc="lower right")
    ax2.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig


@figure(
    "retrieval.fig_sufficient",
    title="Simulation against the sufficient condition for exact recall",
    claims=("retrieval.capacity.sufficient", "retrieval.capacity.nc_decreases_d"),
)
def fig_sufficient(records):
    plt = _plt()
    suff = need(records, "retrieval.capacity.sufficient")["details"]
    dec = need(records, "retrieval.capacity.nc_decreases_d")["details"]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.4))
    V, L = dec["vocab_size"], dec["seq_len"]
    dgrid = np.unique(np.geomspace(8, 8192, 80).astype(int))
    suff_curve = [ts.n_sufficient(V, int(d), L) for d in dgrid]
    ax.plot(
        dgrid,
        [x if math.isfinite(x) else np.nan for x in suff_curve],
        "-",
        color="C0",
        label="n_sufficient, delta=0.1 (exact recall) [derived]",
    )
    ax.plot(
        dgrid,
        [th.nc_pred(V, int(d), L) for d in dgrid],
        "--",
        color="gray",
        label="F1 scaling heuristic (not a guarantee)",
    )
    for r in dec["rows"]:
        ax.plot(
            dec["d_models"],
            r["n_c"],
            "o-",
            color="C1",
            alpha=0.6,
            ms=4,
            label="measured N_c(0.9), per seed" if r is dec["rows"][0] else None,
        )
        ax.axhline(
            r["n_c_orth"],
            color="C2",
            lw=0.6,
            ls=":",
            label="orthogonal N_c(0.9) (the plateau)" if r is dec["rows"][0] else None,
        )
    ax.axhline(ts.n_sufficient_orthogonal(V, L), color="C0", lw=0.6, ls=":", label="n_sufficient, orthogonal")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("d (embedding dimension)")
    ax.set_ylabel("N (training sequences)")
    ax.set_title(f"V={V}, L={L}: thresholds against d")
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    for i, r in enumerate(suff["rows"]):
        label = f"({r['vocab_size']},{r['d_model']},{r['seq_len']}{',orth' if r['embedding'] != 'gaussian' else ''})"
        if "exact" in r:
            frac = r["exact"] / len(r["accuracies"])
            ax2.bar(i, frac, color="C0")
            ax2.text(i, frac + 0.02, f"N={r['n_samples']:.0f}", ha="center", fontsize=7)
        else:
            acc = float(np.mean(r["plateau_accuracies"]))
            ax2.bar(i, r["plateau_exact"] / len(r["plateau_accuracies"]), color="C3")
            ax2.text(i, 0.05, f"N_suff=inf\nplateau {acc:.3f}", ha="center", fontsize=7)
        ax2.text(i, -0.1, label, ha="center", fontsize=7, rotation=20)
    ax2.axhline(1 - suff["delta"], color="k", ls="--", lw=0.8, label="1 - delta")
    ax2.set_ylim(-0.15, 1.12)
    ax2.set_xticks([])
    ax2.set_ylabel("fraction of draws with exact recall")
    ax2.set_title("At N = n_sufficient (blue); N=1e9 where it is +inf (red)")
    ax2.legend(fontsize=7, loc="center right")
    fig.tight_layout()
    return fig


@figure(
    "retrieval.fig_attention",
    title="Attention on the informative token after the W step",
    claims=("retrieval.attention.focus", "retrieval.attention.focus_n"),
)
def fig_attention(records):
    plt = _plt()
    focus_rec = need(records, "retrieval.attention.focus")
    focus = focus_rec["details"]
    by_n_rec = need(records, "retrieval.attention.focus_n")
    by_n = by_n_rec["details"]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 4.2))
    ax.plot(by_n["n_values"], by_n["mean_attn_info"], "o-", color="C0", label="mean a_ell (test, 4096 seqs)")
    ax.plot(
        [focus["n_samples"]] * len(focus["mean_attn_info"]),
        focus["mean_attn_info"],
        "*",
        ms=14,
        color="C1",
        label="retrieval.attention.focus (3 seeds)",
    )
    L = focus["seq_len"]
    ax.axhline(1 / L, color="gray", ls=":", label=f"uniform attention 1/L = {1 / L:.3f}")
    ax.axhline(2 / L, color="k", ls="--", lw=0.8, label=f"claim threshold 2/L = {2 / L:.3f}")
    ax.set_xscale("log")
    ax.set_ylim(0, 1)
    ax.set_xlabel("N (training sequences)")
    ax.set_ylabel("attention on informative token (probability)")
    ax.set_title(
        verdict_title(
            f"After step 2 (eta=V, gamma=2L^2={focus['lr_attn']:.0f}, L={L}) the attention\n"
            "on the informative token exceeds 2/L",
            focus_rec,
        ),
        fontsize=9,
    )
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax2.plot(
        by_n["n_values"], by_n["score_gap"], "o-", color="C2", label="score gap s_ell - mean noise score"
    )
    ax2.plot(by_n["n_values"], by_n["noise_score_std"], "s--", color="C4", label="std of noise scores")
    ax2.set_xscale("log")
    ax2.set_xlabel("N (training sequences)")
    ax2.set_ylabel("attention score (logit units)")
    ax2.set_title(verdict_title("Score gap grows with N (claim focus_n)", by_n_rec), fontsize=9)
    ax2.legend(fontsize=8)
    ax2.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    return fig
