"""Figures of the two cross-paper probes on the real language model (verify/hopfield/lm_probes.py),
drawn from stored claim records: superposition R^2 by layer, and context override by repetitions."""

from __future__ import annotations

import numpy as np

from paper_figs.registry import figure, need


def _model_name(rec):
    model = rec["details"].get("model")
    return model.get("model") if isinstance(model, dict) else str(model)


@figure(
    "hopfield_lm.fig_superposition",
    claims=("hopfield.lm.superposition_ridge",),
    title="Superposition probe: held-out ridge R^2 of the residual stream on attribute unembeddings, by layer",
)
def superposition(records):
    import matplotlib.pyplot as plt

    rec = need(records, "hopfield.lm.superposition_ridge")
    d = rec["details"]
    r2 = np.asarray(d["r2_by_layer"])
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(np.arange(len(r2)), r2, "o-", ms=3, label=f"real model, {d['subjects']} countries")
    markers = {"shuffled_attributes": "s", "random_weights": "^"}
    for c in rec.get("controls", []):
        m = c.get("measured")
        if isinstance(m, dict) and "r2_middle" in m:
            ax.plot(
                [m["layer"]],
                [m["r2_middle"]],
                markers.get(c["name"], "x"),
                ms=8,
                label=f"control {c['name']}: {m['r2_middle']:.3f}",
            )
    threshold = rec["params"]["threshold"]
    ax.axhline(
        threshold,
        color="k",
        ls="--",
        lw=0.8,
        label=f"criterion R^2 >= {threshold} at layer {d['middle_layer']}",
    )
    ax.axhline(0, color="grey", lw=0.5)
    ax.axvline(d["middle_layer"], color="grey", ls=":", lw=0.8)
    ax.set_xlabel("layer (0 = embeddings)")
    ax.set_ylabel("held-out R^2 (5-fold ridge)")
    ax.set_title(f"{_model_name(rec)}\nstatus: {rec['status']}", fontsize=8)
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


@figure(
    "hopfield_lm.fig_override",
    claims=("hopfield.lm.context_override",),
    title="In-context override: how often a repeated counterfactual context wins, against the first-order prediction",
)
def override(records):
    import matplotlib.pyplot as plt

    rec = need(records, "hopfield.lm.context_override")
    s = rec["details"]["summary"]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(s["reps"], s["override_rate"], "o-", label="model follows the context (argmax_C l_f = Y)")
    ax.plot(s["reps"], s["keeps_fact_rate"], "s-", label="model keeps its stored fact")
    ax.plot(s["reps"], s["predicted_rate"], "^--", label="first-order prediction argmax_C(l0 + b) = Y")
    for c in rec.get("controls", []):
        m = c.get("measured")
        if isinstance(m, dict):
            ax.plot(
                [],
                [],
                " ",
                label=f"control {c['name']}: override {m['override_at_max']:.2f}, "
                f"agreement {m['agreement']:.2f}",
            )
    ax.set_xlabel("repetitions n of 'In this story, the capital of X is Y.'")
    ax.set_ylabel(f"fraction of {rec['details']['known_facts']} prompts (known capitals)")
    ax.set_ylim(-0.05, 1.05)
    ax.set_title(
        f"{_model_name(rec)}; agreement (n >= 1) = {s['agreement_with_context']:.2f}; "
        f"status: {rec['status']}",
        fontsize=8,
    )
    ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
