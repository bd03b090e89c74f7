"""Figure of the retrieval lower bound (theory/retrieval/lower.py, claim retrieval.lower.intrinsic),
drawn from the stored claim record. The bounds are this project's [derived]
statements for the pooled-state problem, not the paper's.
"""

from __future__ import annotations

import numpy as np

from paper_figs.registry import figure, need
from theory.retrieval import lower as tl


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@figure(
    "retrieval.fig_lower",
    title="Exact recovery against N: the lower bounds and the sufficient size",
    claims=("retrieval.lower.intrinsic",),
)
def fig_lower(records):
    rows = need(records, "retrieval.lower.intrinsic")["details"]["rows"]
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.6, 4.4))
    for j, r in enumerate(rows):
        fano = float(np.mean(r["fano_n_lower"]))
        swap = float(np.mean(r["swap_n_lower"]))
        suff = float(np.mean(r["n_sufficient_decoder"]))
        xs = [float(np.mean(r["n_samples"])) / fano] + [m["n_over_swap"] * swap / fano for m in r["mle_scan"]]
        ys = [r["exact_rate"]] + [m["exact_rate"] for m in r["mle_scan"]]
        label = f"MLE, d={r['d_model']}, L={r['seq_len']} ((L-1)/d = {r['sigma2']:g})"
        ax.plot(xs, ys, "o-", color=f"C{j}", label=label)
        grid = np.geomspace(0.3, suff / fano * 1.3, 80)
        ax.plot(
            grid,
            [tl.fano_exact_upper(g * fano, r["vocab_size"], r["d_model"], r["seq_len"]) for g in grid],
            ":",
            color=f"C{j}",
            alpha=0.6,
            label="Fano upper bound on P(exact)" if j == 0 else None,
        )
        ax.axvline(
            swap / fano,
            color=f"C{j}",
            ls="--",
            alpha=0.5,
            label="genie lower bound (P < 1/2 below)" if j == 0 else None,
        )
        ax.axvline(
            suff / fano,
            color=f"C{j}",
            ls="-.",
            alpha=0.5,
            label="sufficient N (decoder, P >= 1/2)" if j == 0 else None,
        )
    ax.axhline(0.5, color="grey", lw=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("N / Fano bound 2 (L-1)(ln(V!)/2 - ln 2)/(d S_E)")
    ax.set_ylabel("exact recovery rate (40 draws)")
    ax.set_title(f"pooled-state problem, V = {rows[0]['vocab_size']} [derived bounds]", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
