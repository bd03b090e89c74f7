"""Figures of the geometric area, single hop (docs/geometric.md#figures), drawn from stored results."""

from __future__ import annotations

import math

import numpy as np

from paper_figs.registry import figure, footer, need, verdict_title
from theory.geometric import single_hop as B


@figure(
    "geometric.fig_threshold",
    claims=("geometric.single_hop.log_scaling",),
    title="Smallest block dimension with margin >= 0.25 against ln N",
)
def fig_threshold(records):
    import matplotlib.pyplot as plt

    rec = need(records, "geometric.single_hop.log_scaling")
    det, margin = rec["details"], rec["params"]["margin"]
    rows = det["rows"]
    x = np.array([math.log(r["N"]) for r in rows])
    mean = np.array([r["mean"] for r in rows])
    sd = np.array([r["sd"] for r in rows])
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    ax.errorbar(
        x,
        mean,
        yerr=sd,
        fmt="o",
        capsize=3,
        color="C0",
        label=f"measured d0* (mean ± sd, {len(rows[0]['d0_star'])} seeds)",
    )
    fit = det.get("fit") or rec["measured"]  # records before the criterion object kept it in measured
    a, b = fit["slope"], fit["intercept"]
    xs = np.linspace(x.min() - 0.2, x.max() + 0.2, 50)
    ax.plot(
        xs,
        a * xs + b,
        "-",
        color="C0",
        alpha=0.6,
        label=f"fit d0* = {a:.2f} ln N {b:+.2f} (R² = {fit['r2']:.2f}; verdict: {rec['status']})",
    )
    n_grid = np.exp(xs)
    ax.plot(
        xs,
        [B.d0_sufficient(max(2, round(n)), 1 - margin, 0.01) for n in n_grid],
        "--",
        color="C3",
        label=f"B2 sufficient (Rademacher), t = {1 - margin:g}, δ = 0.01",
    )
    ax.plot(
        xs,
        [B.d0_necessary(max(2, round(n)), margin) for n in n_grid],
        ":",
        color="C2",
        label=f"B3 necessary, γ = {margin:g}",
    )
    laws = {
        "N^(1/4)": lambda v: v**0.25,
        "N^(1/3)": lambda v: v ** (1 / 3),
        "(ln N)^2": lambda v: math.log(v) ** 2,
    }
    n0 = rows[0]["N"]
    for (name, f), color in zip(laws.items(), ("C4", "C5", "C6")):
        ax.plot(
            xs,
            [mean[0] * f(v) / f(n0) for v in n_grid],
            "-.",
            color=color,
            lw=0.9,
            label=f"competing law {name} from the smallest N (a control: rejected)",
        )
    gi = rec["measured"].get("growth_factor_interval")
    if gi:
        ax.plot(
            [], [], " ", label=f"growth factor d0*(N_max)/d0*(N_min): 95% interval [{gi[0]:.2f}, {gi[1]:.2f}]"
        )
    ax.set_xlabel("ln N  (N = number of subjects)")
    ax.set_ylabel(f"block dimension d0 (margin ≥ {margin:g})")
    ax.set_title(verdict_title("Single-hop threshold grows like ln N (spherical codes)", rec))
    ax.set_ylim(0, 1.3 * max(mean.max(), 1))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6.5, loc="upper left")
    footer(fig, rec)
    return fig


@figure(
    "geometric.fig_margin",
    claims=(
        "geometric.single_hop.log_scaling",
        "geometric.single_hop.block_accuracy",
        "geometric.single_hop.margin_suff",
    ),
    title="Minimum decoding margin against block dimension",
)
def fig_margin(records):
    import matplotlib.pyplot as plt

    rec = need(records, "geometric.single_hop.log_scaling")
    curves = rec["details"]["gap_curves_seed0"]
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    for i, (n, gaps) in enumerate(sorted(curves.items(), key=lambda kv: int(kv[0]))):
        ax.plot(
            range(2, 2 + len(gaps)), gaps, "-", color=f"C{i}", label=f"N = {n} (spherical codes, one draw)"
        )
    ax.axhline(rec["params"]["margin"], color="grey", lw=0.8, ls="--", label="margin 0.25 (threshold)")
    ax.axhline(0, color="black", lw=0.6)
    blk = records.get("geometric.single_hop.block_accuracy")
    if blk and blk.get("status") != "error":
        d0 = blk["details"]["block_dim"]
        ms = blk["details"]["margin"]
        ax.plot(
            [d0] * len(ms),
            ms,
            "kx",
            label=f"block_accuracy: N = {blk['params']['n_subjects']}, model margins",
        )
    suff = records.get("geometric.single_hop.margin_suff")
    if suff and suff.get("status") != "error":
        d0 = suff["predicted"]["block_dim"]
        ms = suff["details"]["margins"]
        ax.plot(
            [d0] * len(ms),
            ms,
            "r+",
            label=f"margin_suff: N = {suff['params']['n_subjects']}, Rademacher d0 = {d0}",
        )
    ax.set_xlabel("block dimension d0")
    ax.set_ylabel("minimum margin: correct logit − best wrong logit")
    ax.set_title("Margin of the block construction (= 1 − max code coherence)")
    ax.set_xscale("log")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")
    return fig
