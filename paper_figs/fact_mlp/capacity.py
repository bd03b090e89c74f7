"""Figures of the fact_mlp area (docs/fact_mlp.md#figures), drawn from stored claim results."""

from __future__ import annotations

import numpy as np

from paper_figs.registry import figure, need, verdict_title


@figure(
    "fact_mlp.fig_capacity",
    claims=(
        "fact_mlp.capacity.linear_cost",
        "fact_mlp.capacity.beats_baseline",
        "fact_mlp.gd.gd_linear_capacity",
        "fact_mlp.bounds.info_bound",
        "fact_mlp.capacity.grid",
    ),
    title="Facts stored at accuracy 1 against parameters",
)
def fig_capacity(records):
    import matplotlib.pyplot as plt

    lin_rec = need(records, "fact_mlp.capacity.linear_cost")
    lin, lp = lin_rec["details"], lin_rec.get("params") or {}
    base = need(records, "fact_mlp.capacity.beats_baseline")["details"]
    gd = need(records, "fact_mlp.gd.gd_linear_capacity")["details"]
    grid = need(records, "fact_mlp.capacity.grid")["details"]["rows"]
    fig, ax = plt.subplots(figsize=(7, 5))
    ax.plot(
        lin["params_standard"],
        lin["n_facts"],
        "o-",
        color="C0",
        label=f"encoder-decoder, d={lp.get('d', '?')}, n_V={lp.get('n_values', '?')} (P_std)",
    )
    ax.plot(
        lin["params_unique"], lin["n_facts"], "o--", color="C0", alpha=0.6, label="encoder-decoder (P_unique)"
    )
    if base.get("ntk_params"):
        ax.plot(
            [base["ntk_params"]],
            [base["n_facts"]],
            "s",
            color="C1",
            ms=9,
            label=f"NTK baseline, d={base.get('d', 128)} (median of draws, ratio "
            f"{base['ratio_standard']:.1f}x)",
        )
    ax.plot(gd["params_no_bias"], gd["n_facts"], "^-", color="C2", label="GD gated MLP, d=16")
    for geom, marker in (("spherical", "o"), ("spiked", "D"), ("clustered", "v")):
        rows = [r for r in grid if r["geometry"] == geom and r["ours_params"]]
        ax.plot(
            [r["ours_params"] for r in rows],
            [r["n_facts"] for r in rows],
            marker,
            color="C0",
            mfc="none",
            label=f"encoder-decoder, d=32, {geom}",
        )
        rows = [r for r in grid if r["geometry"] == geom and r.get("hebbian_whitened_params")]
        ax.plot(
            [r["hebbian_whitened_params"] for r in rows],
            [r["n_facts"] for r in rows],
            marker,
            color="C4",
            mfc="none",
            label=f"whitened Hebbian, d=32, {geom}",
        )
    P = np.logspace(2.5, 6.5, 50)
    log2v = np.log2(256)
    for b, style in ((2, "k-"), (32, "k:")):
        ax.plot(P, P * b / log2v, style, lw=1, label=f"B1 information bound, b={b} bits/param (n_V=256)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("parameters P (count)")
    ax.set_ylabel("facts F stored at accuracy 1 (count)")
    ax.set_ylim(30, 3e5)
    ax.legend(fontsize=6.5, loc="upper left")
    ax.set_title("Parameters needed to store F facts")
    return fig


@figure(
    "fact_mlp.fig_mc",
    claims=("fact_mlp.decoder.mc_log_scaling", "fact_mlp.decoder.jl_decoder"),
    title="Smallest code dimension against ln n_V / rho^2",
)
def fig_mc(records):
    import matplotlib.pyplot as plt

    sc = need(records, "fact_mlp.decoder.mc_log_scaling")["details"]
    jl = need(records, "fact_mlp.decoder.jl_decoder")["details"]
    x = np.asarray(sc["ln_nv_over_rho2"])
    fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.plot(x, sc["mc_star"], "o", color="C0", label="measured m_c* (acc 1 in >= 9/10 draws)")
    for xi, n, m in zip(x, sc["n_values"], sc["mc_star"]):
        ax.annotate(f"n_V={n}", (xi, m), textcoords="offset points", xytext=(4, -10), fontsize=7)
    xx = np.linspace(0, x.max() * 1.1, 50)
    ax.plot(xx, sc["fit_a"] * xx + sc["fit_b"], "C0--", lw=1, label=f"fit a x + b (a = {sc['fit_a']:.2f})")
    ax.plot(
        xx, 8 * xx, "k-", lw=1, label="B2 sufficient m_c = 8 ln n_V / rho^2 (proved, failure <= 1/(2 n_V^2))"
    )
    n_ok = sum(a == 1.0 for a in jl["accuracies"])
    ax.plot(
        [jl["ln_nv_over_rho2"]],
        [jl["code_dim"]],
        "*",
        color="C3",
        ms=12,
        label=f"jl_decoder: m_c={jl['code_dim']}, {n_ok}/{len(jl['accuracies'])} draws exact",
    )
    ax.set_xlabel("ln n_V / rho^2 (dimensionless)")
    ax.set_ylabel("code dimension m_c (count)")
    ax.set_ylim(0, max(max(sc["mc_star"]) * 2, 8 * x.max() * 0.6))
    ax.legend(fontsize=7)
    ax.set_title("Random-projection decoder, d = 256")
    return fig


@figure(
    "fact_mlp.fig_geometry",
    claims=("fact_mlp.decodability.rho_anisotropy", "fact_mlp.capacity.geometry_penalty"),
    title="Spiked geometry: decodability and needed code dimension",
)
def fig_geometry(records):
    import matplotlib.pyplot as plt

    an_rec = need(records, "fact_mlp.decodability.rho_anisotropy")
    gp_rec = need(records, "fact_mlp.capacity.geometry_penalty")
    an, gp = an_rec["details"], gp_rec["details"]
    fig, ax = plt.subplots(figsize=(6, 4.5))
    ap, gpp = an_rec.get("params") or {}, gp_rec.get("params") or {}
    where_an = f"d={ap.get('d', '?')}, n_V={ap.get('n_values', '?')}"
    where_gp = f"d={gpp.get('d', '?')}, n_V={gpp.get('n_values', '?')}"
    ax.plot(an["betas"], an["rho"], "o-", color="C0", label=f"rho, {where_an}")
    ax.plot(gp["betas"], gp["rho"], "s--", color="C0", alpha=0.6, label=f"rho, {where_gp}")
    ax.set_xlabel("spike strength beta (dimensionless)")
    ax.set_ylabel("decodability rho (dimensionless)", color="C0")
    ax2 = ax.twinx()
    ax2.plot(gp["betas"], gp["mc_star"], "^-", color="C3", label=f"m_c*, {where_gp}")
    ax2.set_ylabel("smallest code dimension m_c* (count)", color="C3")
    ax2.set_ylim(0, max(gp["mc_star"]) * 1.5)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=7, loc="lower left")
    ax.set_title(
        verdict_title("Anisotropy lowers rho (d=32)", an_rec)
        + "\n"
        + verdict_title("m_c* rises as rho falls (d=256)", gp_rec),
        fontsize=9,
    )
    return fig


@figure(
    "fact_mlp.fig_gd_vs_construction",
    claims=("fact_mlp.capacity.gd_vs_construction",),
    title="Fewest parameters storing every fact: construction, GD and baselines",
)
def fig_gd_vs_construction(records):
    import matplotlib.pyplot as plt

    det = need(records, "fact_mlp.capacity.gd_vs_construction")["details"]
    fams = ("construction", "gd", "hebbian_whitened", "hebbian", "ntk")
    labels = {
        "construction": "encoder-decoder (ours)",
        "gd": "GD gated MLP",
        "hebbian_whitened": "whitened Hebbian",
        "hebbian": "Hebbian",
        "ntk": "NTK",
    }
    points = [tuple(q) if len(q) == 3 else (*q, q[1]) for q in det["points"]]
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    width = 0.8 / len(fams)
    top = 1e3
    for j, fam in enumerate(fams):
        for i, (d, F, n_v) in enumerate(points):
            cell = det["table"][f"{fam}@d={d},F={F}" + (f",n_V={n_v}" if n_v != F else "")]
            x = i + (j - len(fams) / 2 + 0.5) * width
            got = [v for v in cell["per_draw"] if v is not None]
            if got:
                top = max(top, max(got))
                ax.bar(x, cell["median"], width, color=f"C{j}", label=labels[fam] if i == 0 else None)
                if cell["interval95"] is not None:
                    lo, hi = cell["interval95"]
                    ax.plot([x, x], [lo, hi], "k-", lw=1)
                ax.plot([x] * len(got), got, "k.", ms=4)
            if len(got) < len(cell["per_draw"]):
                ax.text(
                    x,
                    1.2e2,
                    f"{labels[fam]}: {cell['status']}",
                    rotation=90,
                    ha="center",
                    va="bottom",
                    fontsize=5,
                    color=f"C{j}",
                )
    ax.set_yscale("log")
    ax.set_ylim(1e2, top * 3)
    ax.set_xlim(-0.5, len(points) - 0.5)
    ax.set_xticks(range(len(points)))
    ax.set_xticklabels(
        [
            (f"d={d}, F=n_V={F}" if n_v == F else f"d={d}, F={F}, n_V={n_v}") + f"\n(F/d^2={F / d**2:g})"
            for d, F, n_v in points
        ],
        fontsize=7,
    )
    ax.set_ylabel("fewest parameters storing all F facts (count)")
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3)
    per_point = det.get("per_point", {})
    for i, (d, F, n_v) in enumerate(points):
        cell = per_point.get(f"d={d},F={F}" + (f",n_V={n_v}" if n_v != F else ""))
        if cell and cell.get("ratio_median") is not None:
            ci = cell.get("ratio_interval95")
            text = f"constr./GD {cell['ratio_median']:.1f}" + (f"\n[{ci[0]:.1f}, {ci[1]:.1f}]" if ci else "")
            ax.text(i, top * 1.6, text, ha="center", va="center", fontsize=6)
    ratios = [r["ratio_construction_over_gd"] for r in det.get("rows", [])]
    if ratios and all(r is not None for r in ratios):
        verdict = (
            "GD stores with fewer parameters than the construction on every draw"
            if min(ratios) > 1
            else "the construction stores with fewer parameters than GD on some draw"
        )
    else:
        verdict = "some draw stores at no size of its grid"
    ax.set_title(
        "median over draws (bars), draws (dots), 95% interval of the geometric mean (lines);\n"
        + verdict
        + " (construction / GD ratio: median, [95% interval])",
        fontsize=8,
    )
    fig.tight_layout()
    return fig
