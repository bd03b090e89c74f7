"""Figure of the geometric area, multi-hop (spec geometric.md §8): required dimension against hops."""
from __future__ import annotations

from paper_figs.registry import figure, footer, need


@figure("geometric.fig_multihop", claims=("geometric.multihop.bound_ratio", "geometric.multihop.nocot_blocks",
                                          "geometric.multihop.cot_khop", "geometric.multihop.depth_tradeoff"),
        title="Dimension needed for k-hop recall, with and without chain of thought")
def fig_multihop(records):
    import matplotlib.pyplot as plt

    rec = need(records, "geometric.multihop.bound_ratio")
    p, rows = rec["params"], rec["details"]["rows"]
    ks = [r["k"] for r in rows]
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.4), gridspec_kw={"width_ratios": [1.4, 1]})
    ax.plot(ks, [r["dim_nocot"] for r in rows], "o-", color="C0", label="no CoT, construction d = R^k d0")
    ax.plot(ks, [r["bound_nocot"] for r in rows], "--", color="C0",
            label=f"no CoT, lower bound R^k log2(N+1−I_k)/p (p = {p['bits_per_param']})")
    ax.plot(ks, [r["dim_cot"] for r in rows], "s-", color="C1", label="CoT, construction d = R d0 (k passes)")
    ax.plot(ks, [r["bound_cot"] for r in rows], ":", color="C1", label="CoT, lower bound R log2 N / p per step")
    ok = [r for r in rows if r["accuracy_nocot"] == 1.0]
    ax.plot([r["k"] for r in ok], [r["dim_nocot"] for r in ok], "k*", ms=10,
            label=f"measured: no-CoT accuracy 1 ({p['n_queries']} random chains each)")
    cot = records.get("geometric.multihop.cot_khop")
    if cot and cot.get("status") != "error":
        cp = cot["params"]
        ax.plot([], [], " ", label=f"cot_khop: accuracy {cot['measured']['accuracy']:.3g} at k = {cp['n_hops']} "
                                   f"(N = {cp['n_subjects']}, R = {cp['n_relations']}, d = {cot['details']['dim']})")
    ax.set_yscale("log")
    ax.set_xticks(ks)
    ax.set_xlabel("hops k")
    ax.set_ylabel("embedding dimension d (log scale)")
    ax.set_title(f"N = {p['n_subjects']}, R = {p['n_relations']}, d0 = {p['block_dim']}; "
                 f"construction / bound = {min(rec['measured']['ratios']):.1f}–{max(rec['measured']['ratios']):.1f}",
                 fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="upper left")
    dep = records.get("geometric.multihop.depth_tradeoff")
    if dep and dep.get("status") != "error":
        dp, drows = dep["params"], dep["details"]["rows"]
        ax2.step([r["dim"] for r in drows], [r["k_max"] for r in drows], "o-", where="post", color="C2",
                 label=f"k_max = ⌊log_R(d/d0)⌋, R = {dp['n_relations']}, d0 = {dp['block_dim']}")
        ax2.plot([r["dim"] for r in drows if r["accuracy_at_k_max"] == 1.0],
                 [r["k_max"] for r in drows if r["accuracy_at_k_max"] == 1.0], "k*", ms=10,
                 label=f"measured: construction at k_max answers all N·R^k queries (N = {dp['n_subjects']})")
        ax2.set_xscale("log")
        ax2.margins(x=0.08)
        ax2.set_ylim(0.5, max(r["k_max"] for r in drows) + 1.2)
        ax2.set_yticks(sorted({r["k_max"] for r in drows}))
        from matplotlib.ticker import NullFormatter

        ax2.set_xticks([r["dim"] for r in drows], [str(r["dim"]) for r in drows])
        ax2.xaxis.set_minor_formatter(NullFormatter())
        ax2.set_xlabel("embedding dimension d (log scale)")
        ax2.set_ylabel("largest depth k answered in one pass")
        ax2.set_title("Capacity-depth tradeoff without CoT", fontsize=9)
        ax2.grid(alpha=0.3, which="both")
        ax2.legend(fontsize=7, loc="upper left")
    else:
        ax2.set_axis_off()
    fig.tight_layout()
    footer(fig, rec)
    return fig
