"""Figure of the geometric area, depth tradeoff: the trained one-pass threshold
d*(k) beside the k-hop lower bound and the construction's dimension, and the 1-bit bracket."""

from __future__ import annotations

from paper_figs.registry import figure, footer, need


@figure(
    "geometric.fig_depth",
    claims=("geometric.multihop.trained_depth", "geometric.multihop.below_bound_fail"),
    title="One pass, k hops: trained threshold between the lower bound and the construction",
)
def fig_depth(records):
    import matplotlib.pyplot as plt

    from theory.geometric import multihop as M

    rec = need(records, "geometric.multihop.trained_depth")
    p, rows = rec["params"], rec["details"]["rows"]
    n, r, ks = p["n_subjects"], p["n_relations"], list(p["hops"])
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.4))
    for i, row in enumerate(rows):
        pts = [(q["k"] + 0.06 * (i - (len(rows) - 1) / 2), q["d_star"]) for q in row["per_k"] if q["d_star"]]
        ax.plot(
            *zip(*pts),
            "o",
            color="C2",
            alpha=0.8,
            label="trained d*(k), one pass (per seed)" if i == 0 else None,
        )
    first = rows[0]["per_k"]
    ax.plot(
        ks,
        [q["construction_dim"] for q in first],
        "s-",
        color="C0",
        label=f"construction R^k d0 (first exact d0, seed {rows[0]['seed']})",
    )
    ax.plot(
        ks,
        [M.khop_dim_lower_bound(n, r, k, 32) for k in ks],
        "--",
        color="k",
        label="lower bound R^k log2(N+1−I_k)/32",
    )
    ax.set_yscale("log")
    ax.set_xticks(ks)
    ax.set_xlabel("hops k")
    ax.set_ylabel("embedding dimension d (log scale)")
    ax.set_title(f"N = {n}, R = {r}; trained_depth status: {rec['status']}", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="upper left")
    fail = records.get("geometric.multihop.below_bound_fail")
    if fail and fail.get("status") != "error":
        fp = fail["params"]
        fks = list(fp["hops"])
        acc = {k: min(q["accuracy"] for q in fail["details"]["rows"] if q["k"] == k) for k in fks}
        det = fail["details"]
        x = range(len(fks))
        ax2.bar(
            [i - 0.2 for i in x],
            [acc[k] for k in fks],
            width=0.4,
            color="C3",
            label=f"d0 = {fp['block_dim']}: d = R^k d0 below the 1-bit bound",
        )
        if "rows_above" in det:  # the bracket's other side, measured by the claim itself
            above = {k: min(q["accuracy"] for q in det["rows_above"] if q["k"] == k) for k in fks}
            ax2.bar(
                [i + 0.2 for i in x],
                [above[k] for k in fks],
                width=0.4,
                color="C0",
                label=f"d0 = {det['block_dim_above']}: at or above the bound (bracket)",
            )
        else:  # a record made before the claim measured both sides: its control's record
            ctl = {c["name"]: c for c in fail.get("controls") or []}.get("at_construction")
            if ctl and "measured" in ctl:
                nseed = len(ctl["measured"]["accuracy"]) // len(fks)
                ax2.bar(
                    [i + 0.2 for i in x],
                    [min(ctl["measured"]["accuracy"][j * nseed : (j + 1) * nseed]) for j in x],
                    width=0.4,
                    color="C0",
                    label=f"d0 = {ctl['measured']['block_dim']} (bracket control)",
                )
        ax2.set_xticks(list(x), [f"k = {k}" for k in fks])
        ax2.set_ylabel("accuracy on all N·R^k queries (min over seeds)")
        ax2.set_title(
            f"sign codes (p = 1), N = {fp['n_subjects']}, R = {fp['n_relations']}: status {fail['status']}",
            fontsize=9,
        )
        ax2.set_ylim(0, 1.05)
        ax2.grid(alpha=0.3, axis="y")
        ax2.legend(fontsize=7, loc="center right")
    else:
        ax2.set_axis_off()
    fig.tight_layout()
    footer(fig, rec)
    return fig
