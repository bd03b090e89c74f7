"""Figures of the Mixture of Chapters area (docs/chapters.md#figures, F-ch1..F-ch4), drawn from stored
results of the chapters claims."""

from __future__ import annotations

import numpy as np

from paper_figs.registry import figure, footer, need, verdict_title


def _stamp(fig, rec):
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    footer(fig, rec)


@figure(
    "chapters.fig_flop_breakdown",
    claims=("chapters.flops.model_totals", "chapters.flops.standard_layer", "chapters.flops.memory_layer"),
    title="Forward FLOPs per component: backbone, iso-FLOP dense, MoC",
)
def fig_flop_breakdown(records):
    import matplotlib.pyplot as plt

    rec = need(records, "chapters.flops.model_totals")
    det = rec["details"]
    n_layers, n_mem, n_iso = det["n_layers"], det["n_mem"], det["iso_flop_layers"]
    models = {
        "backbone\n(16 standard)": (n_layers, 0),
        f"iso-FLOP dense\n({n_iso} standard)": (n_iso, 0),
        f"MoC\n({n_layers - n_mem} standard + {n_mem} memory)": (n_layers, n_mem),
    }
    labels = [(r["section"], r["group"]) for r in det["groups"]]
    fig, ax = plt.subplots(figsize=(10.5, 4.8))
    cmap = plt.get_cmap("tab20")
    for j, (name, (layers, mem)) in enumerate(models.items()):
        bottom = 0.0
        for i, row in enumerate(det["groups"]):
            mult = {"standard_layer": layers, "memory_layer_extra": mem, "head": 1}[row["section"]]
            value = mult * row["flops"] / 1e9
            if value == 0:
                continue
            section = (
                "memory layer" if row["section"] == "memory_layer_extra" else row["section"].replace("_", " ")
            )
            ax.bar(
                j,
                value,
                bottom=bottom,
                color=cmap(i % 20),
                label=f"{section}: {row['group']}" if j == 2 or mem == 0 and j == 1 else None,
            )
            bottom += value
        ax.text(j, bottom, f"{bottom:,.1f}", ha="center", va="bottom", fontsize=8)
    handles, names = ax.get_legend_handles_labels()
    seen = dict(zip(names, handles))
    ax.legend(
        seen.values(),
        seen.keys(),
        fontsize=7,
        loc="upper left",
        bbox_to_anchor=(1.01, 1),
        title="component (sub-items summed)",
        title_fontsize=7,
    )
    ax.set_xticks(range(len(models)), list(models), fontsize=8)
    ax.set_ylabel("forward FLOPs per sequence (GFLOP, B = 1, L = 1024)")
    ax.set_ylim(0, 1.1 * max(rec["measured"][k] for k in ("backbone", "iso_flop", "moc")) / 1e9)
    ax.set_title(
        verdict_title(
            f"MoC/iso-FLOP = {rec['measured']['moc_over_iso']:.4f}, "
            f"MoC/backbone = {rec['measured']['moc_over_backbone']:.4f}: the paper's totals",
            rec,
        ),
        fontsize=9,
    )
    del labels
    _stamp(fig, rec)
    return fig


def _band(ax, x, curves, color, label):
    arr = np.array(curves)
    ax.plot(x, arr.mean(0), "-", color=color, label=label)
    ax.fill_between(x, arr.min(0), arr.max(0), color=color, alpha=0.2)


@figure(
    "chapters.fig_retention",
    claims=("chapters.toy.fact_storage_vs_isoflop", "chapters.toy.retention"),
    title="Phase-1 fact accuracy through phases 1 and 2, MoC vs iso-FLOP dense",
)
def fig_retention(records):
    import matplotlib.pyplot as plt

    st = need(records, "chapters.toy.fact_storage_vs_isoflop")
    rt = need(records, "chapters.toy.retention")
    d1, d2 = st["details"], rt["details"]
    steps1 = st["params"]["steps1"]
    x1 = np.array(d1["eval_steps"])
    x2 = steps1 + np.array(d2["moc_eval_steps"])
    fig, ax = plt.subplots(figsize=(9.6, 4.4))
    n = len(d1["seeds"])
    _band(ax, x1, d1["curves_moc"], "C0", f"MoC, phase-1 facts (mean, range over {n} seeds)")
    _band(ax, x1, d1["curves_dense"], "C3", f"iso-FLOP dense ({d1['dense_layers']} layers), phase-1 facts")
    _band(ax, x2, d2["moc_curves_A"], "C0", None)
    _band(ax, x2, d2["dense_curves_A"], "C3", None)
    ax.plot(x2, np.mean(d2["moc_curves_B"], 0), "--", color="C0", label="MoC, phase-2 facts")
    ax.plot(x2, np.mean(d2["dense_curves_B"], 0), "--", color="C3", label="dense, phase-2 facts")
    ax.axvline(steps1, color="grey", lw=0.8, ls=":", label="start of phase 2 (fresh optimiser)")
    ax.axvline(
        st["params"]["compare_step"],
        color="grey",
        lw=0.8,
        ls="-.",
        label=f"comparison step {st['params']['compare_step']}",
    )
    ax.set_xlabel("training step")
    ax.set_ylabel("value accuracy (fraction of facts)")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(
        f"mean drop of phase-1 accuracy: MoC {d2['mean_drop_moc']:.3f}, "
        f"dense {d2['mean_drop_dense']:.3f} ({rt['status']})",
        fontsize=9,
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    _stamp(fig, st)
    return fig


@figure(
    "chapters.fig_router_usage",
    claims=("chapters.toy.router_utilisation", "chapters.toy.lb_needed"),
    title="Routed-chapter selection frequency with and without the load-balance loss",
)
def fig_router_usage(records):
    import matplotlib.pyplot as plt

    rec = need(records, "chapters.toy.lb_needed")
    det = rec["details"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4.2))
    f_with, f_without = np.array(det["f_with_lb"][0]), np.array(det["f_without_lb"][0])
    idx = np.arange(len(f_with))
    ax1.bar(idx - 0.2, np.sort(f_with)[::-1], width=0.4, color="C0", label="with L_lb (coef 0.01)")
    ax1.bar(idx + 0.2, np.sort(f_without)[::-1], width=0.4, color="C3", label="without L_lb")
    ax1.axhline(4 / len(f_with), color="grey", ls="--", lw=0.8, label="uniform k / (C - C_sh)")
    ax1.set_xlabel("routed chapter (sorted by frequency)")
    ax1.set_ylabel("selection frequency f_i, first epoch (seed 0)")
    ax1.legend(fontsize=8)
    for rows, color, name in (
        (det["rows_with"], "C0", "with L_lb"),
        (det["rows_without"], "C3", "without L_lb"),
    ):
        for i, r in enumerate(rows):
            ax2.plot(
                r["entropy_steps"],
                r["entropy"],
                "-o",
                ms=2,
                color=color,
                alpha=0.7,
                label=f"{name}" if i == 0 else None,
            )
    ax2.set_xlabel(f"training step (windows of {det['window']} steps = one epoch)")
    ax2.set_ylabel("normalised entropy of f over the window")
    ax2.set_ylim(0, 1.02)
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=8)
    ax2.set_title("router usage entropy, every seed", fontsize=9)
    _stamp(fig, rec)
    return fig


@figure("chapters.fig_topk", claims=("chapters.toy.topk_sweep",), title="Early loss against top-k")
def fig_topk(records):
    import matplotlib.pyplot as plt

    rec = need(records, "chapters.toy.topk_sweep")
    det = rec["details"]
    lo, hi = rec["params"]["window"]
    fig, ax = plt.subplots(figsize=(5.6, 4.0))
    for i, row in enumerate(det.get("rows", [{"seed": rec["seed"], "loss": det["loss"]}])):
        ax.plot(det["top_ks"], row["loss"], "-o", color=f"C{i}", label=f"MoC toy, seed {row['seed']}")
    for k, v in det["reported"].items():
        ax.plot([int(k)], [v], "s", color="C3", label=f"k = {k} (constant weight: no router LM gradient)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("routed chapters selected, k")
    ax.set_ylabel(f"mean training loss, steps {lo}-{hi} (nats)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"top-k sweep ({rec['status']})", fontsize=9)
    _stamp(fig, rec)
    return fig


@figure(
    "chapters.fig_router_leak",
    claims=(
        "chapters.leak.router_leak",
        "chapters.leak.inference",
        "chapters.leak.capacity",
        "chapters.leak.selection_only",
        "chapters.leak.causal_prefix",
    ),
    title="Routing leak on the copy task: first-half loss vs step against the causal floor",
)
def fig_router_leak(records):
    import matplotlib.pyplot as plt

    rec = need(records, "chapters.leak.router_leak")
    det = rec["details"]
    x = np.array(det["eval_steps"])
    names = {
        "sequence": "(a) all-position routing (paper)",
        "prefix": "(b) prefix routing (causal)",
        "first": "(b') position-0 routing (fixed chapters)",
        "none": "(c) no memory layer",
        "selection_only": "(a') all-position routing, constant weights",
    }
    fig, ax = plt.subplots(figsize=(9.6, 4.4))
    for i, (variant, curves) in enumerate(det["curves"].items()):
        _band(ax, x, curves, f"C{i}", f"{names.get(variant, variant)} ({len(curves)} seed(s))")
    for j, control in enumerate(rec.get("controls", [])):
        value = control.get("measured")
        if isinstance(value, dict) and len(value) == 1:  # a criterion object's {quantity: value}
            value = next(iter(value.values()))
        if isinstance(value, (int, float)):
            ax.plot(
                [x[-1]],
                [value],
                "s",
                color=f"C{5 + j}",
                label=f"control {control['name']}: final {value:.3f}",
            )
    ax.axhline(det["ln_v"], color="k", ls="--", lw=0.9, label=f"causal floor ln v = {det['ln_v']:.3f}")
    inf = records.get("chapters.leak.inference")
    if inf is not None:
        for value in inf["details"]["prefix_only"]:
            ax.plot([x[-1]], [value], "v", color="C3", ms=7)
        ax.plot([], [], "v", color="C3", label="(a) evaluated prefix-only, as at inference")
    sel = records.get("chapters.leak.selection_only")
    if sel is not None and "selection_only" not in det["curves"]:
        sd = sel["details"]
        n = len(sd["curves"])
        _band(ax, np.array(sd["eval_steps"]), sd["curves"], "C4", f"{names['selection_only']} ({n} seed(s))")
        for value in sd["prefix_only"]:
            ax.plot([sd["eval_steps"][-1]], [value], "^", color="C4", ms=7)
        ax.plot([], [], "^", color="C4", label="(a') evaluated prefix-only")
    cau = records.get("chapters.leak.causal_prefix")
    if cau is not None and "prefix" not in det["curves"]:
        cd = cau["details"]
        ax.plot(
            [cd["step"]] * len(cd["per_seed"]),
            cd["per_seed"],
            "D",
            color="C2",
            ms=7,
            label=f"{names['prefix']} at step {cd['step']} ({len(cd['per_seed'])} seed(s), {cau['status']})",
        )
    cap = records.get("chapters.leak.capacity")
    if cap is not None:
        ax.text(
            0.01,
            0.02,
            f"paper config: one router's selection can carry "
            f"{cap['measured']['bits']:.1f} bits per sequence "
            f"({cap['measured']['nats_per_token']:.3f} nats/token)",
            transform=ax.transAxes,
            fontsize=7,
        )
    ax.set_xlabel("training step")
    ax.set_ylabel("first-half loss on x_2..x_n (nats)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.set_title(
        f"copy task v = {rec['params']['n_symbols']}, n = {rec['params']['half']} ({rec['status']})",
        fontsize=9,
    )
    _stamp(fig, rec)
    return fig
