"""Figure of the fact_mlp editing comparison at equal width, drawn from the
stored records of edit.equal_width (closed-form edits), edit.rank_one_equal_width and
edit.equal_information (swap and fine-tunings): efficacy and retention per method and k, the
construction against the GD MLP of the same hidden width, mean over draws with 95% intervals."""

from __future__ import annotations

from paper_figs.registry import figure, need

EDIT_CLAIMS = (
    "fact_mlp.edit.equal_width",
    "fact_mlp.edit.rank_one_equal_width",
    "fact_mlp.edit.equal_information",
)
#: plotted methods ("unedited", the claims' control, is in the tables but not drawn: efficacy 0)
METHODS = ("rank_one", "rome", "memit", "swap", "finetune_edits", "finetune_full")
MLPS = {"encoder_decoder": ("encoder-decoder", "-", "o"), "gd": ("GD gated MLP", "--", "^")}


def edit_cells(records) -> dict:
    """{(mlp, method): {k: {"efficacy": cell, "specificity": cell}}} merged over the three
    claims' details["table"] (keys "mlp/method@k"; a cell is {"mean", "ci95", "per_draw"})."""
    out = {}
    for cid in EDIT_CLAIMS:
        for key, cell in need(records, cid)["details"]["table"].items():
            base, k = key.rsplit("@", 1)
            mlp, method = base.split("/", 1)
            out.setdefault((mlp, method), {})[int(k)] = cell
    return out


@figure(
    "fact_mlp.fig_edit_equal_width",
    claims=EDIT_CLAIMS,
    title="Editing at equal hidden width: construction against GD, per method and k",
)
def fig_edit_equal_width(records):
    import matplotlib.pyplot as plt

    cells = edit_cells(records)
    widths = need(records, "fact_mlp.edit.equal_width")["details"].get("widths", {})
    fig, axes = plt.subplots(1, 2, figsize=(10, 5.5), sharex=True)
    methods = [m for m in METHODS if any(meth == m for _, meth in cells)]
    for ax, metric, label in zip(
        axes,
        ("efficacy", "specificity"),
        ("efficacy (fraction of edited facts recalled)", "retention (fraction of unedited facts kept)"),
    ):
        for j, method in enumerate(methods):
            for mlp, (name, style, marker) in MLPS.items():
                per_k = cells.get((mlp, method))
                if not per_k:
                    continue
                ks = sorted(per_k)
                means = [per_k[k][metric]["mean"] for k in ks]
                lo = [m - (per_k[k][metric]["ci95"] or [m, m])[0] for k, m in zip(ks, means)]
                hi = [(per_k[k][metric]["ci95"] or [m, m])[1] - m for k, m in zip(ks, means)]
                w = widths.get(mlp)
                ax.errorbar(
                    ks,
                    means,
                    yerr=[lo, hi],
                    color=f"C{j}",
                    ls=style,
                    marker=marker,
                    ms=5,
                    capsize=3,
                    mfc="none" if mlp == "gd" else None,
                    label=f"{method}, {name}" + (f" (width {w})" if w else ""),
                )
                for k in ks:
                    x = per_k[k][metric]["per_draw"]
                    ax.plot([k] * len(x), x, ".", color=f"C{j}", ms=3, alpha=0.5)
        ax.axhline(0.95, color="grey", lw=0.8, ls=":")
        ax.set_xlabel("number of edited facts k (count)")
        ax.set_ylabel(label)
        ax.set_ylim(top=1.05)  # a fraction: t intervals above 1 are cut
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=6.5, loc="lower center", ncol=4)
    fig.subplots_adjust(bottom=0.3)
    fig.suptitle(
        "Editing at equal hidden width: mean over draws (lines), draws (dots), 95% t "
        "interval (bars); 0.95 threshold dotted",
        fontsize=9,
    )
    return fig
