"""Figures of fact MLPs inside the Transformer (docs/fact_mlp.md#figures) and of editing."""

from __future__ import annotations

from paper_figs.registry import figure, need, verdict_title
from paper_figs.registry import pyplot as _plt

FAMILY_STYLE = {
    "encoder_decoder": ("C0", "o", "encoder-decoder [derived]"),
    "ntk": ("C1", "s", "NTK baseline"),
    "hebbian": ("C2", "^", "Hebbian readout"),
    "hebbian_whitened": ("C3", "v", "whitened Hebbian readout"),
    "gd": ("C4", "D", "GD-trained gated MLP"),
}


def _plain_log_ticks(ax):
    from matplotlib.ticker import NullFormatter

    ax.xaxis.set_minor_formatter(NullFormatter())


@figure(
    "fact_mlp.fig_tradeoff",
    claims=("fact_mlp.transformer.tradeoff", "fact_mlp.usability.noise_usability"),
    title="Capacity vs usability: Lipschitz constant against recall under noise",
)
def fig_tradeoff(records):
    inside_rec = need(records, "fact_mlp.transformer.tradeoff")
    alone_rec = need(records, "fact_mlp.usability.noise_usability")
    inside, alone = inside_rec["details"], alone_rec["details"]
    plt = _plt()
    fig, (ax0, ax1) = plt.subplots(1, 2, figsize=(11, 4.2))
    for name, (color, marker, label) in (
        ("hebbian", FAMILY_STYLE["hebbian"]),
        ("hebbian_whitened", FAMILY_STYLE["hebbian_whitened"]),
    ):
        lips = [r[name]["lipschitz"] for r in alone["per_seed"]]
        noisy = [r[name]["noisy"] for r in alone["per_seed"]]
        ax0.scatter(
            lips, noisy, color=color, marker=marker, label=label + f" (F = m = 128, {len(lips)} seeds)"
        )
        for F, rec in alone.get("larger_F", {}).items():
            ax0.scatter(
                [rec[name]["lipschitz"]],
                [rec[name]["noisy"]],
                facecolors="none",
                edgecolors=color,
                marker=marker,
            )
    ax0.scatter([], [], facecolors="none", edgecolors="k", label="open: F = m in {256, 512, 1024}")
    ax0.set_xscale("log")
    _plain_log_ticks(ax0)
    ax0.set_xlabel("scale-free empirical Lipschitz constant (max ratio / mean output norm)")
    ax0.set_ylabel("accuracy under key noise σ = 0.1 (fraction)")
    ax0.set_title(
        verdict_title(
            "standalone, Gaussian key noise (d = 32):\nthe whitened readout loses more under noise", alone_rec
        ),
        fontsize=9,
    )
    ax0.set_ylim(-0.02, 1.02)
    ax0.legend(fontsize=7, loc="lower left")
    pts = inside["points"]
    for fam, (color, marker, label) in FAMILY_STYLE.items():
        sel = [p for p in pts if p["family"] == fam]
        if sel:
            lips = [p["lipschitz"] for p in sel]
            ax1.scatter(lips, [p["recall_long"] for p in sel], color=color, marker=marker, label=label)
            ax1.scatter(lips, [p["recall"] for p in sel], facecolors="none", edgecolors=color, marker=marker)
    ax1.scatter(
        [],
        [],
        facecolors="none",
        edgecolors="k",
        label=f"open: contexts of the training length 8; filled: length {inside['long_len']}",
    )
    ax1.axhline(
        inside["attention_ceiling_long"],
        color="k",
        ls="--",
        lw=1,
        label=f"attention ceiling at length {inside['long_len']} (copy accuracy) = "
        f"{inside['attention_ceiling_long']:.3f}",
    )
    ax1.set_xscale("log")
    _plain_log_ticks(ax1)
    ax1.set_xlabel("scale-free empirical Lipschitz constant (max ratio / mean output norm)")
    ax1.set_ylabel("recall inside the Transformer (fraction)")
    ax1.set_title(
        "inside the attention-first Transformer (noise = the attention's own):\n"
        + verdict_title(
            "the recall drop rises with the Lipschitz constant\n"
            f"(Spearman at length {inside['long_len']} = {inside['spearman']:.2f})",
            inside_rec,
        ),
        fontsize=9,
    )
    ax1.legend(fontsize=7, loc="lower left")
    fig.suptitle(
        "MLPs storing every fact standalone: Lipschitz constant against recall under noise",
        fontsize=10,
    )
    fig.tight_layout()
    return fig


@figure(
    "fact_mlp.fig_edit",
    claims=("fact_mlp.edit.by_k",),
    title="Editing k facts: MLP swap vs fine-tuning vs rank-one edit",
)
def fig_edit(records):
    rec = need(records, "fact_mlp.edit.by_k")
    det, n_facts = rec["details"], rec["params"]["n_facts"]
    rows, ks = det["rows"], det["ks"]
    plt = _plt()
    metrics = ("score", "efficacy", "specificity")
    fig, axes = plt.subplots(2, 3, figsize=(12, 6.4), sharex=True, sharey=True)
    styles = {
        "swap": ("C0", "o", "MLP swap"),
        "finetune": ("C1", "s", "fine-tune MLP"),
        "rank_one": ("C3", "^", "rank-one (ROME-style)"),
    }
    for i, mlp in enumerate(("encoder_decoder", "gd")):
        for j, metric in enumerate(metrics):
            ax = axes[i, j]
            for method, (color, marker, label) in styles.items():
                y = [
                    next(r[metric] for r in rows if r["mlp"] == mlp and r["k"] == k and r["method"] == method)
                    for k in ks
                ]
                ax.plot(ks, y, color=color, marker=marker, label=label)
            ax.set_xscale("log", base=2)
            ax.set_ylim(-0.02, 1.05)
            where = (
                "encoder-decoder MLP, MLP-first model"
                if mlp == "encoder_decoder"
                else "GD-trained MLP, attention-first model"
            )
            ax.set_title(f"{where}: {metric}", fontsize=9)
            if i == 1:
                ax.set_xlabel(f"edited facts k (of F = {n_facts})")
            if j == 0:
                ax.set_ylabel("fraction of facts")
    axes[0, 0].legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    return fig
