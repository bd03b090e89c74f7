"""Figures of the hopfield area (docs/hopfield.md#figures) on errors, gates, capacity and the bounds'
tightness, drawn from stored claim results; fixed points, the decomposition and the lm probe are in
``network_dynamics.py``."""

from __future__ import annotations

import numpy as np

from paper_figs.registry import figure, need, verdict_title
from paper_figs.registry import pyplot as _plt

FLOOR = 1e-300  # errors that underflow to 0 are left out of log plots


def _positive(x, *ys):
    x = np.asarray(x, float)
    keep = x > FLOOR
    for y in ys:
        keep &= np.asarray(y, float) > FLOOR
    return keep


@figure(
    "hopfield.fig_error_vs_separation",
    claims=("hopfield.one_step.error", "hopfield.gated.error_bound", "hopfield.error.exponential_in_beta"),
    title="F-hop1: retrieval error against beta * separation, ungated and gated, with D1/D2",
)
def error_vs_separation(records):
    plt = _plt()
    ung = np.asarray(need(records, "hopfield.one_step.error")["details"]["beta_delta_error_bound"])
    gat = np.asarray(
        need(records, "hopfield.gated.error_bound")["details"]["beta_delta_errg_boundg_err_bound"]
    )
    exp_rec = need(records, "hopfield.error.exponential_in_beta")
    exp = exp_rec["details"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    k = _positive(ung[:, 1], ung[:, 2])
    ax1.scatter(ung[k, 0], ung[k, 1], s=6, c="C0", label="ungated error ||f(xi)-x_i||")
    ax1.scatter(ung[k, 0], ung[k, 2], s=6, c="C0", marker="x", alpha=0.4, label="D1 bound 2M min(1, eps)")
    k = _positive(gat[:, 1], gat[:, 2])
    ax1.scatter(gat[k, 0], gat[k, 1], s=6, c="C3", label="gated error ||f_g(xi)-x_i||")
    ax1.scatter(gat[k, 0], gat[k, 2], s=6, c="C3", marker="x", alpha=0.4, label="D2 bound 2M min(1, eps_g)")
    ax1.set_yscale("log")
    ax1.set_xlabel("beta * Delta_i (dimensionless)")
    ax1.set_ylabel("retrieval error (pattern-norm units)")
    ax1.set_title("noisy queries, d=32, N=64, |x|=sqrt(d)")
    ax1.legend(fontsize=7)
    bd, err, d1 = map(np.asarray, (exp["beta_delta"], exp["error"], exp["d1_bound"]))
    ax2.semilogy(bd, err, "o-", label="measured error (well-separated pattern)")
    ax2.semilogy(bd, d1, "--", label="D1 bound at r = 0")
    ax2.semilogy(bd, err[0] * np.exp(-(bd - bd[0])), ":", c="k", label="slope -1 reference")
    ax2.set_xlabel("beta * Delta_i (dimensionless)")
    ax2.set_ylabel("||f(x_i) - x_i|| (unit-norm patterns)")
    ax2.set_title(
        verdict_title(
            f"error exponential in beta (fitted slope {exp.get('slopes', [float('nan')])[0]:.3f}, first seed)",
            exp_rec,
        ),
        fontsize=9,
    )
    ax2.legend(fontsize=8)
    fig.tight_layout()
    return fig


@figure(
    "hopfield.fig_gate_strength",
    claims=("hopfield.gated.exponential_in_kappa",),
    title="F-hop2: retrieval error against distractor log-odds kappa",
)
def gate_strength(records):
    plt = _plt()
    det = need(records, "hopfield.gated.exponential_in_kappa")["details"]
    kappa = np.asarray(det["kappa"])
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for k, errs in enumerate(det["errors"]):
        ax.semilogy(kappa, errs, "o-", ms=3, alpha=0.7, label="seeds (measured)" if k == 0 else None)
    e0 = np.median([e[0] for e in det["errors"]])
    ax.semilogy(kappa, e0 * np.exp(-(kappa - kappa[0])), "k--", label="D2: proportional to exp(-kappa)")
    ax.set_xlabel("distractor log-odds kappa = log(g_i/g_j) (nats)")
    ax.set_ylabel("||f_g(x_i) - x_i|| (unit-norm patterns)")
    ax.set_title(f"slopes {min(det['slopes']):.3f} .. {max(det['slopes']):.3f} (d=16, N=64, beta=2)")
    ax.legend()
    fig.tight_layout()
    return fig


@figure(
    "hopfield.fig_capacity",
    claims=("hopfield.capacity.empirical", "hopfield.capacity.gain", "hopfield.capacity.d3"),
    title="F-hop3: capacity, ungated against context-gated (kappa = 4), and the R4 bound against d",
)
def capacity(records):
    plt = _plt()
    from theory.hopfield.reference import capacity as r4

    emp = need(records, "hopfield.capacity.empirical")
    gain = need(records, "hopfield.capacity.gain")["details"]
    d3 = need(records, "hopfield.capacity.d3")["details"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    grid = gain["grid"]
    for k, s in enumerate(gain["seeds"]):
        ax1.semilogx(
            grid, s["frac_ungated"], "o-", c="C0", alpha=0.7, base=2, label="ungated" if k == 0 else None
        )
        ax1.semilogx(
            grid,
            s["frac_gated"],
            "s-",
            c="C3",
            alpha=0.7,
            base=2,
            label=f"gated, N_eff = 16 open, others at -kappa = -{gain['kappa']}" if k == 0 else None,
        )
    ax1.axhline(0.5, c="k", ls=":", label="capacity: success falls through 0.5")
    ax1.set_xlabel("number of memories N")
    ax1.set_ylabel("fraction retrieved with error <= 1e-3")
    ratios = [s.get("ratio") for s in gain["seeds"]]
    ci = gain.get("ratio_interval95")
    ci_txt = f", 95% t-interval [{ci[0]:.0f}, {ci[1]:.0f}]" if ci else ""
    ax1.set_title(
        f"d={gain['dim']}, beta=16: N_g/N_u = {[None if r is None else round(r, 1) for r in ratios]}{ci_txt}",
        fontsize=9,
    )
    ax1.legend(fontsize=7)
    dims, bound = [], []
    for d in range(20, 201, 2):
        try:  # R4 says nothing where its hypothesis c >= (2/sqrt p)^(4/(d-1)) fails
            bound.append(r4(1.0, 1.0, d, 0.001))
            dims.append(d)
        except ValueError:
            continue
    ax2.semilogy(
        dims, bound, "-", label=f"R4 bound sqrt(p) c^((d-1)/4) (hypothesis holds for d >= {dims[0]})"
    )
    ed = emp["details"]
    ax2.semilogy(
        [ed["dim"]],
        [ed["N"]],
        "o",
        c="C0",
        label=f"R4 N stored: {ed['failures']} failing seeds of {ed['seeds']}",
    )
    caps = [s for s in d3["seeds"] if s["capacity_ungated"] and s["capacity_gated"]]
    ax2.semilogy(
        [gain["dim"]] * len(caps),
        [s["capacity_ungated"] for s in caps],
        "v",
        c="C0",
        label="measured ungated capacity (beta=16)",
    )
    ax2.semilogy(
        [gain["dim"]] * len(caps),
        [s["capacity_gated"] for s in caps],
        "^",
        c="C3",
        label="measured gated capacity (kappa = 4)",
    )
    ax2.semilogy(
        [gain["dim"]] * len(caps),
        [s["predicted_gated"] for s in caps],
        "_",
        c="k",
        ms=14,
        label="D3 prediction N_eff + (N_u - N_eff) e^kappa",
    )
    ax2.set_xlabel("dimension d")
    ax2.set_ylabel("number of memories N")
    ax2.set_title("R4 (beta=1, K=1, p=0.001) and measured capacities")
    ax2.legend(fontsize=7)
    fig.tight_layout()
    return fig


def _control(rec, name):
    return next(c for c in rec.get("controls", []) if c["name"] == name)


def _control_worst(rec, name, part):
    """The largest per-seed value a control stores for a part of its claim's criterion."""
    measured = _control(rec, name)["measured"][part]
    values = [x for key, per_seed in measured.items() if key != "seeds" for x in per_seed]
    return max(values)


@figure(
    "hopfield.fig_tightness",
    claims=(
        "hopfield.one_step.error",
        "hopfield.gated.error_bound",
        "hopfield.gated.separation",
        "hopfield.capacity.empirical",
        "hopfield.capacity.r4_tightness",
        "hopfield.sparsity.pr",
        "hopfield.separation.violated_fails",
    ),
    title="F-hop7: tightness of the hopfield bounds: where each holds and where it breaks",
)
def tightness(records):
    plt = _plt()
    one, gat = need(records, "hopfield.one_step.error"), need(records, "hopfield.gated.error_bound")
    sep, emp = need(records, "hopfield.gated.separation"), need(records, "hopfield.capacity.empirical")
    r4t, pr = need(records, "hopfield.capacity.r4_tightness"), need(records, "hopfield.sparsity.pr")
    r1 = need(records, "hopfield.separation.violated_fails")
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    ax = axes[0, 0]
    names = ["D1", "D2", "D2 via Delta^g", "R4 at N_R4", "D5 hard gates"]
    vals = [
        one["details"]["max_error_over_bound"],
        gat["details"]["max_error_over_bound"],
        sep["details"]["max_error_over_bound"],
        emp["details"]["worst_error_over_tolerance"],
        pr["details"]["max_pr_over_bound"],
    ]
    ax.bar(names, [max(v, 1e-300) for v in vals], color="C0")
    ax.axhline(1.0, c="k", ls="--", label="measured = bound")
    ax.set_yscale("log")
    ax.set_ylabel("largest measured / bound (where the bound holds)")
    ax.set_xlabel("bound (claim records at quick scale)")
    broken = (
        f"dropping 2Mr: largest error / bound {_control_worst(one, 'no_2Mr', 'error'):.3g} (D1), "
        f"{_control_worst(gat, 'no_2Mr', 'error'):.3g} (D2) over {one['details']['trials']} trials"
    )
    ax.set_title(broken, fontsize=8)
    ax.legend(fontsize=7)
    ax.tick_params(axis="x", labelsize=7)
    ax = axes[0, 1]
    det = r4t["details"]
    ax.axvline(
        det["N_R4"], c="C0", ls="--", label=f"R4 at p = {r4t['params']['p']}: N_R4 = {det['N_R4']:.1f}"
    )
    for k, row in enumerate(det["rows"]):
        ax.semilogx(
            row["N"],
            row["fraction_all_retrieved"],
            "o-",
            c="C3",
            alpha=0.4 + 0.6 / (k + 1),
            label="draws with every pattern retrieved (one curve per seed)" if k == 0 else None,
        )
        ax.axvline(row["crossing"], c="C3", ls=":", alpha=0.6, label="measured boundary" if k == 0 else None)
    level = 1 - r4t["params"]["p"]
    ax.axhline(level, c="k", ls=":", lw=0.8, label=f"1 - p = {level:g}")
    lo, hi = det["factor_interval95"]
    ax.set_xlabel("number of memories N (beta=1, K=3, d=16)")
    ax.set_ylabel("fraction of pattern draws")
    ax.set_title(
        verdict_title(f"R4 is loose: measured N / N_R4 in [{lo:.0f}, {hi:.0f}] (95%)", r4t), fontsize=9
    )
    ax.legend(fontsize=7)
    ax = axes[1, 0]
    br = pr["details"]["kappa_bracket"]
    ax.plot(
        [b["kappa"] for b in br],
        [b["max_pr_gated"] for b in br],
        "o-",
        c="C3",
        label="soft gates: max PR(p_g)",
    )
    ax.axhline(
        max(pr["measured"][0], 0), c="C0", ls=":", label=f"hard gates: max PR = {pr['measured'][0]:.2f}"
    )
    ax.axhline(16, c="k", ls="--", label="D5 bound N_eff = 16")
    ax.set_yscale("log")
    ax.set_xlabel("distractor log-odds kappa (nats)")
    ax.set_ylabel("participation ratio (memories)")
    exceed = [b["kappa"] for b in br if b["exceeds_n_eff"]]
    ax.set_title(
        verdict_title(
            f"D5 needs hard gates:\nsoft gates exceed N_eff at kappa <= {max(exceed) if exceed else '-'}", pr
        ),
        fontsize=9,
    )
    ax.legend(fontsize=7)
    ax = axes[1, 1]
    lo = r1["details"]["looseness_by_beta"]
    ax.semilogx(
        [r["beta"] for r in lo],
        [r["violators_outside"] / max(r["violating_R1"], 1) for r in lo],
        "o-",
        base=2,
        c="C3",
        label="R1 violators ending outside S_i (fraction)",
    )
    share = [r["meeting_R1"] / max(r["meeting_R1"] + r["violating_R1"], 1) for r in lo]
    ax.semilogx([r["beta"] for r in lo], share, "s-", base=2, c="C0", label="patterns meeting R1 (fraction)")
    ax.set_xlabel("inverse temperature beta")
    ax.set_ylabel("fraction of (pattern, seed) pairs")
    f_lo, f_hi = r1["details"]["factor_interval95"]
    text = f"R1 (d=32, N=64, |x|=3) is loose by {f_lo:.2f}-{f_hi:.2f} in beta (95%)"
    fails = [r["beta"] for r in lo if r["violating_R1"] and r["violators_outside"] == r["violating_R1"]]
    wins = [r for r in lo if r["violating_R1"] and r["violators_outside"] == 0]
    if fails and wins:
        w = wins[0]
        text += (
            f":\nviolators fail up to beta = {max(fails):g} and retrieve from beta = {w['beta']:g},\n"
            f"where {w['meeting_R1']} of {w['meeting_R1'] + w['violating_R1']} pattern-seed pairs meet R1"
        )
    ax.set_title(verdict_title(text, r1), fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
