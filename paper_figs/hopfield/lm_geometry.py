"""The geometry of real language models' answer tables beside random tables of the same shape
(``python -m verify lm-geometry``), drawn from the stored results/lm_geometry.json only."""

from __future__ import annotations

import numpy as np

from paper_figs.docs_lm import NAME, load_lm_geometry, model_label
from paper_figs.registry import figure


def _pair(ax, x, real, rand, key, real_label, rand_label) -> None:
    """The real tables' ``key`` beside the random tables' on one axis (paired bars)."""
    ax.bar(x - 0.2, [g[key] for g in real], 0.4, label=real_label)
    ax.bar(x + 0.2, [g[key] for g in rand], 0.4, label=rand_label)


@figure(
    "lm.fig_answer_geometry",
    claims=(),
    files=(NAME,),
    title="Answer-table geometry of real language models: decodability rho, coherence and B2's "
    "code dimension against the width, beside random tables of the same shape",
)
def fig_answer_geometry(records, results=None):
    """One row per model: rho (real, random, and the coherence bound sqrt((1 - mu)/2)), the
    coherence mu = max |cos|, and B2's m_c = 8 ln n_V / rho^2 on a log axis with the width d."""
    import matplotlib.pyplot as plt

    rec = load_lm_geometry(results)
    models = rec["models"]
    if not models:
        raise LookupError("the stored lm_geometry.json holds no model")
    fig, axes = plt.subplots(len(models), 3, figsize=(15, 4.2 * len(models)), squeeze=False)
    for row, m in zip(axes, models):
        rels = [r for r, e in m["relations"].items() if "error" not in e["real"]]
        real = [m["relations"][r]["real"] for r in rels]
        rand = [m["relations"][r]["random"] for r in rels]
        x = np.arange(len(rels))
        labels = [r.replace("_", "_\n") + f"\n(n_V={g['n_values']})" for r, g in zip(rels, real)]
        d = real[0]["width"] if real else None
        name = f"{model_label(m)} (d = {d})"
        ax = row[0]
        _pair(
            ax,
            x,
            real,
            rand,
            "rho",
            "model's answer table",
            f"random Gaussian table (seed {rand[0]['seed']})",
        )
        ax.plot(
            x - 0.2, [g["rho_lower_bound"] for g in real], "k_", ms=14, label="sqrt((1 - max cos)/2) <= rho"
        )
        ax.set_ylabel("decodability rho (exact, certified)")
        ax.set_ylim(0, 1.15)
        ax.set_title(f"{name}: rho", fontsize=9)
        ax = row[1]
        _pair(ax, x, real, rand, "coherence", "model: mu = max |cos|", "random: mu = max |cos|")
        ax.set_ylabel("coherence mu = max |cos|")
        ax.set_ylim(0, 1.15)
        ax.set_title(f"{name}: coherence (1 - max cos: smallest readout margin)", fontsize=9)
        ax = row[2]
        _pair(ax, x, real, rand, "b2_code_dim", "model: 8 ln n_V / rho^2", "random: 8 ln n_V / rho^2")
        if d:
            ax.axhline(d, color="k", ls="--", lw=1, label=f"model width d = {d}")
        ax.set_yscale("log")
        if d:
            ax.set_ylim(top=8 * d)
        ax.set_ylabel("B2 code dimension m_c (log)")
        ax.set_title(f"{name}: B2 code dimension vs width", fontsize=9)
        for ax in row:
            ax.set_xticks(x, labels, fontsize=7)
            ax.set_xlabel("relation")
            ax.legend(fontsize=7, loc="upper left", ncol=1 if ax is row[0] else 2)
            ax.grid(axis="y", alpha=0.3)
    fig.suptitle(
        "Answer tables (unit unembedding rows of the answers' first tokens) of "
        + " and ".join(model_label(m) for m in models),
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0.02, 1, 0.98))
    fig.text(
        0.01,
        0.003,
        f"recall-bounds, results/{NAME}, seed {rec['seed']}, git {str(rec.get('git'))[:10]}",
        fontsize=6,
        color="grey",
    )
    return fig
