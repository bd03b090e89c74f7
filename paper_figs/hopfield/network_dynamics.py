"""Hopfield figures of the network's dynamics and the language-model probe: Picard fixed points
(F-hop4), the decomposition of the update, and the first-order lm probe (split from
``paper_figs/hopfield/network.py``; the package imports it right after, so the figure order is
unchanged)."""

from __future__ import annotations

import numpy as np

from paper_figs.registry import figure, need
from paper_figs.registry import pyplot as _plt


@figure(
    "hopfield.fig_fixed_point",
    claims=("hopfield.fixed_point.unique", "hopfield.multistability.above"),
    title="F-hop4: spread of Picard fixed points against the loop gain lambda M^2",
)
def fixed_point(records):
    plt = _plt()
    uni = need(records, "hopfield.fixed_point.unique")["details"]["rows"]
    mul = need(records, "hopfield.multistability.above")["details"]
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    floor = 1e-16
    full = max(r["converged"] for r in mul["rows"])
    ok = [r for r in mul["rows"] if r["converged"] == full]
    stuck = [r for r in mul["rows"] if r["converged"] < full]
    ax.semilogy(
        [r["lam_M2"] for r in ok],
        [max(r["spread"], floor) for r in ok],
        "o-",
        label=f"toy X = I_2 ({full} starts)",
    )
    if stuck:
        ax.semilogy(
            [r["lam_M2"] for r in stuck],
            [floor] * len(stuck),
            "rx",
            ms=9,
            label="toy: not all starts converged in 2e4 steps (critical slowing)",
        )
    ax.semilogy(
        [r["lam_M2"] for r in uni],
        [max(r["spread"], floor) for r in uni],
        "s",
        ms=8,
        label="d=32, N=64 (50 starts)",
    )
    ax.axvline(1.0, c="k", ls="--", label="D4 contraction boundary lambda M^2 = 1")
    if mul["lambda_c"] is not None:
        ax.axvline(mul["lambda_c"], c="C3", ls=":", label=f"measured threshold lambda_c = {mul['lambda_c']}")
    ax.axhline(1e-3, c="grey", ls=":", lw=0.8, label="distinct: spread > 1e-3")
    ax.set_xlabel("lambda M^2 (loop gain bound, dimensionless)")
    ax.set_ylabel("max distance between converged fixed points\n(0 drawn at 1e-16)")
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


@figure(
    "hopfield.fig_decomposition",
    claims=("hopfield.decomposition.orders",),
    title="F-hop5: first- and second-order residuals of the joint fixed point against lambda",
)
def decomposition(records):
    plt = _plt()
    det = need(records, "hopfield.decomposition.orders")["details"]
    lam = np.asarray(det["lambda"])
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for k, c in enumerate(det["curves"]):
        ax.loglog(
            lam, c["first"], "o-", c="C0", alpha=0.6, label="||xi* - xi1|| (first order)" if k == 0 else None
        )
        ax.loglog(
            lam,
            c["second"],
            "s-",
            c="C3",
            alpha=0.6,
            label="||xi* - xi2|| (second order)" if k == 0 else None,
        )
    f0 = np.median([c["first"][0] for c in det["curves"]])
    s0 = np.median([c["second"][0] for c in det["curves"]])
    ax.loglog(lam, f0 * lam / lam[0], "k--", lw=0.8, label="slope 1")
    ax.loglog(lam, s0 * (lam / lam[0]) ** 2, "k:", lw=0.8, label="slope 2")
    ax.set_xlabel("feedback gain lambda")
    ax.set_ylabel("residual norm (unit-norm patterns)")
    ax.set_title(f"slopes {np.mean(det['slopes_first']):.2f} and {np.mean(det['slopes_second']):.2f}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


@figure(
    "hopfield.fig_lm_probe",
    claims=(
        "hopfield.lm.probe_pipeline",
        "hopfield.lm.first_order",
        "hopfield.lm.margin",
        "hopfield.lm.zero_shot_discriminates",
    ),
    title="F-hop6: language-model probe on real weights (SmolLM2-135M and Gemma 3 270M)",
)
def lm_probe(records):
    plt = _plt()
    real = records.get("hopfield.lm.first_order")
    models = (real or {}).get("details", {}).get("per_model") if real else None
    if real is None or real.get("status") in ("skipped", "error") or not models:
        return _lm_pipeline(plt, need(records, "hopfield.lm.probe_pipeline")["details"]["rows"])
    bars = [
        ("acc_full_in_V", "full prompt, over V (accf_V)"),
        ("acc_first_order_in_V", "first-order gate, over V (acc1_V)"),
        ("acc_zero_shot_in_V", "zero-shot query, over V (acc0_V)"),
        ("acc_zero_shot_in_C", "zero-shot query, within C (acc0_C)"),
        ("mean_chance3", "3 / |C|"),
        ("acc_product_in_V", "product of the two distributions, over V"),
        ("acc_first_order_in_V_wrong_gate", "control: gate of another relation"),
        ("acc_first_order_in_V_shuffled_query", "control: query of another subject"),
    ]
    fig, axes = plt.subplots(1, len(models), figsize=(6.4 * len(models), 4.8), squeeze=False)
    x = np.arange(len(bars))
    for ax, part in zip(axes[0], models.values()):
        for k, (fmt, summary, hatch) in enumerate(
            (
                ("relation-ambiguous (judged)", part["summary"], None),
                ("relation-stated (recorded)", part.get("stated_format", {}).get("summary", {}), "//"),
            )
        ):
            values = [summary.get(key, np.nan) for key, _ in bars]
            ax.bar(x + (k - 0.5) * 0.4, values, 0.4, hatch=hatch, alpha=0.8, label=fmt)
        ax.set_xticks(x)
        ax.set_xticklabels([label for _, label in bars], rotation=35, ha="right", fontsize=7)
        ax.set_ylabel(f"fraction of {part['summary']['prompts']} prompts")
        ax.set_ylim(0, 1.05)
        name = part["model"]["model"].split(" (")[0]
        ax.set_title(f"{name} ({part['role']}): first_order {part['verdict']}", fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle(
        f"hopfield.lm.first_order: {real['status']}; acc1_V >= accf_V - 0.15 and acc1_V >= acc0_V + 0.1 "
        "(means over prompts, bootstrap intervals in the record)",
        fontsize=8,
    )
    fig.tight_layout()
    return fig


def _lm_pipeline(plt, rows):
    """The pipeline check's rows when no real weights ran: context effect against the bias."""
    label = "TINY RANDOM LLAMA (no real weights given): pipeline check only, not a semantic result"
    delta = np.concatenate([np.asarray(d) for d in rows["delta"]])
    bias = np.concatenate([np.asarray(b) for b in rows["bias"]])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.6))
    ax1.scatter(bias, delta, s=6, alpha=0.6, label="candidate logits, all prompts")
    lim = [min(bias.min(), delta.min()), max(bias.max(), delta.max())]
    ax1.plot(lim, lim, "k--", lw=0.8, label="l_f - l0 = b (exact first order)")
    ax1.set_xlabel("context-only gate bias b (logits)")
    ax1.set_ylabel("context effect l_f - l0 on C (logits)")
    ax1.set_title(f"median Pearson r = {np.median(rows['r']):.2f}", fontsize=9)
    ax1.legend(fontsize=8)
    bins = np.histogram_bin_edges(np.concatenate([rows["margin0"], rows["marginf"]]), bins=15)
    ax2.hist(rows["margin0"], bins=bins, alpha=0.6, label="zero-shot margin (l0)")
    ax2.hist(rows["marginf"], bins=bins, alpha=0.6, label="margin with context (l_f)")
    ax2.set_xlabel("answer margin l[a] - max_{c != a} l[c] (logits)")
    ax2.set_ylabel("prompts")
    ax2.legend(fontsize=8)
    fig.suptitle(label, fontsize=8)
    fig.tight_layout()
    return fig
