"""Figures F-ic1..F-ic5 of IC-recall (docs/icrecall.md#figures), drawn from stored claim results."""

from __future__ import annotations

import numpy as np

from paper_figs.registry import figure, need
from paper_figs.registry import pyplot as _plt


def _position_labels(T):
    n = (T - 1) // 2
    return [f"s{i + 1}" if j == 0 else f"a{i + 1}" for i in range(n) for j in (0, 1)] + ["query"]


@figure(
    "icrecall.fig_attention_map",
    claims=("icrecall.finetune.pattern_emerges", "icrecall.pretrained.solves"),
    title="F-ic1: mean attention per position at init and after fine-tuning",
)
def attention_map(records):
    pat = need(records, "icrecall.finetune.pattern_emerges")["details"]
    pre = need(records, "icrecall.pretrained.solves")["details"]
    plt = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6), sharey=True)
    for ax, (name, init, after) in zip(
        axes,
        [
            ("constructed MLP, P-full", pat["metrics_init"], pat["metrics"]),
            ("pretrained MLP, P-struct", pre["metrics_init"], pre["metrics"]),
        ],
    ):
        a0, a1 = np.array(init["mean_alpha"]), np.array(after["mean_alpha"])
        x = np.arange(len(a0))
        ax.bar(x - 0.2, a0, 0.4, label="at init", color="0.6")
        ax.bar(x + 0.2, a1, 0.4, label="after fine-tuning", color="C0")
        ax.axhline(1 / (len(a0) - 1), color="C3", ls="--", lw=1, label="pairwise pattern 1/(2n)")
        ax.set_xticks(x, _position_labels(len(a0)), fontsize=7)
        ax.set_title(
            f"{name}\nH_p={after['pair_uniformity']:.2f}, imbalance={after['imbalance']:.2f}", fontsize=9
        )
        ax.set_xlabel("position")
    axes[0].set_ylabel("mean attention weight α (probability)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    return fig


@figure(
    "icrecall.fig_handset_ablation",
    claims=(
        "icrecall.handset.pairwise",
        "icrecall.handset.rho_zero_fails",
        "icrecall.handset.mixed_relations_fail",
        "icrecall.handset.query_only_fails",
        "icrecall.handset.subject_only_fails",
    ),
    title="F-ic2: accuracy of hand-set attention patterns and failure modes",
)
def handset_ablation(records):
    det = need(records, "icrecall.handset.pairwise")["details"]
    names = list(det["patterns"]) + ["pairwise, rho=0", "pairwise, mixed relations"]
    accs = list(det["accuracy"]) + [
        need(records, "icrecall.handset.rho_zero_fails")["details"]["accuracy"],
        need(records, "icrecall.handset.mixed_relations_fail")["details"]["accuracy"],
    ]
    n_rel = need(records, "icrecall.handset.pairwise")["params"]["n_rel"]
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    colors = ["C0" if a >= 0.9 else "C3" for a in accs]
    ax.bar(range(len(accs)), accs, color=colors)
    ax.axhline(1 / n_rel, color="k", ls="--", lw=1, label=f"relation chance 1/R = {1 / n_rel:.2f}")
    ax.set_xticks(range(len(accs)), [n.replace("_", " ") for n in names], rotation=25, ha="right", fontsize=8)
    ax.set_ylabel("IC-recall accuracy (fraction)")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


@figure(
    "icrecall.fig_sample_complexity",
    claims=("icrecall.sample_complexity.polylog",),
    title="F-ic3: held-out accuracy against fine-tuning samples, one curve per N_f and seed",
)
def sample_complexity(records):
    det = need(records, "icrecall.sample_complexity.polylog")["details"]
    plt = _plt()
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    for k, n_f in enumerate(det["n_facts"]):
        for j, row in enumerate(det["per_seed"]):
            curve = row["curves"][k]
            ax.plot(
                [c["n_train"] for c in curve],
                [c["acc"] for c in curve],
                "o-",
                color=f"C{k}",
                alpha=0.7,
                ms=3,
                label=f"N_f={n_f} (d={det['dim']})" if j == 0 else None,
            )
    ax.axhline(1 - det["eps"], color="k", ls="--", lw=1, label=f"1 - ε = {1 - det['eps']:.2f}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("fine-tuning samples N_train (sequences)")
    ax.set_ylabel("held-out accuracy (fraction)")
    ax.legend(fontsize=7)
    ax.set_title("one line per seed; the scan stops at the first N_train reaching 1 - ε", fontsize=8)
    nf = np.array(det["n_facts"], float)
    key = "n_star_interp" if all("n_star_interp" in r for r in det["per_seed"]) else "n_star"
    for j, row in enumerate(det["per_seed"]):
        pts = [(x, y) for x, y in zip(nf, row[key]) if y is not None]
        ax2.plot(
            [x for x, _ in pts],
            [y for _, y in pts],
            "ko-",
            alpha=0.5,
            ms=4,
            lw=0.8,
            label="one seed (N* interpolated between grid points)"
            if j == 0 and key == "n_star_interp"
            else None,
        )
    exps = [e for e in det.get("exponents") or [] if e is not None]
    firsts = [row[key][0] for row in det["per_seed"] if row[key][0] is not None]
    if exps and firsts:
        xs = np.geomspace(nf.min(), nf.max(), 50)
        c0 = float(np.exp(np.mean(np.log(firsts))))
        ax2.plot(
            xs,
            c0 * (xs / xs.min()) ** float(np.mean(exps)),
            "C1-",
            label=f"mean per-seed exponent {np.mean(exps):.2f} over {len(exps)} seeds (judged)",
        )
        ax2.plot(xs, c0 * (xs / xs.min()) ** 0.5, "C3:", label="exponent 0.5 (to be rejected)")
    ax2.set_xscale("log")
    ax2.set_yscale("log", base=2)
    ax2.set_xlabel("stored triplets N_f")
    ax2.set_ylabel("samples needed N*(ε=0.1), per seed")
    ax2.legend(fontsize=7)
    fig.tight_layout()
    return fig


@figure(
    "icrecall.fig_context_length",
    claims=("icrecall.context.length",),
    title="F-ic4: accuracy of the pairwise pattern against the number of context pairs",
)
def context_length(records):
    det = need(records, "icrecall.context.length")["details"]
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.plot(det["n_pairs"], det["accuracy"], "o-", label="hand-set pairwise pattern")
    ax.axvline(
        det["min_pairs"],
        color="C3",
        ls="--",
        lw=1,
        label=f"no wrong neuron fires: n > 1/(ρ(θ-1)), n ≥ {det['min_pairs']}",
    )
    if "min_recall_pairs" in det:
        ax.axvline(
            det["min_recall_pairs"],
            color="C2",
            ls=":",
            lw=1,
            label=f"correct neuron wins: n > 1/ρ, n ≥ {det['min_recall_pairs']}",
        )
    ax.set_xscale("log", base=2)
    ax.set_xlabel("context pairs n")
    ax.set_ylabel("IC-recall accuracy (fraction)")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


@figure(
    "icrecall.fig_capacity",
    claims=("icrecall.linear_memory.capacity",),
    title="F-ic5: linear memory capacity N99 against dimension",
)
def capacity(records):
    det = need(records, "icrecall.linear_memory.capacity")["details"]
    plt = _plt()
    d = np.array(det["dims"], float)
    n99 = np.array(det["n99"], float)
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    ax.loglog(d, n99, "o-", label=f"measured N99 (slope {det['slope']:.2f})")
    ref = n99[-1] / d[-1] ** 2
    ax.loglog(d, ref * d**2, "k--", lw=1, label="reference ∝ d²")
    ax.set_xlabel("dimension d")
    ax.set_ylabel("pairs stored at accuracy ≥ 0.99, N99")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


@figure(
    "icrecall.fig_dynamics",
    claims=("icrecall.finetune.solves", "icrecall.pretrained.solves"),
    title="F-ic6: fine-tuning dynamics: accuracy and attention metrics against the step",
)
def dynamics(records):
    runs = need(records, "icrecall.finetune.solves")["details"]["trajectory_per_seed"]
    pre = need(records, "icrecall.pretrained.solves")["details"].get("trajectory")
    plt = _plt()
    keys = [
        ("acc", "held-out accuracy"),
        ("query_share", "query share α_T"),
        ("pair_uniformity", "pair uniformity H_p"),
        ("imbalance", "within-pair imbalance"),
    ]
    fig, axes = plt.subplots(1, 4, figsize=(13, 3.2), sharex=True)
    for ax, (key, label) in zip(axes, keys):
        for j, traj in enumerate(runs):
            if traj:
                ax.plot(
                    [t["step"] for t in traj],
                    [t[key] for t in traj],
                    "-",
                    color="C0",
                    alpha=0.7,
                    label="constructed MLP, P-full (one line per seed)" if j == 0 else None,
                )
        if pre:
            ax.plot(
                [t["step"] for t in pre],
                [t[key] for t in pre],
                "--",
                color="C1",
                label="pretrained MLP, P-struct (seed 0)",
            )
        ax.set_title(label, fontsize=9)
        ax.set_xlabel("Adam step")
        ax.set_ylim(-0.02, 1.02)
    axes[0].set_ylabel("fraction")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    return fig
