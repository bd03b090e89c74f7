"""Figures of the two cross-paper probes on the real language model (verify/hopfield/lm_probes.py),
drawn from stored claim records: superposition R^2 by layer, and context override by repetitions."""

from __future__ import annotations

import numpy as np

from paper_figs.registry import figure, need


def _per_model(rec) -> dict:
    """spec -> that model's record part (``details["per_model"]``); a record from before the lm
    claims ran on several models is read as one model."""
    d = rec["details"]
    if "per_model" in d:
        return d["per_model"]
    return {"model": dict(d, verdict=rec["status"])}


def _model_name(part) -> str:
    model = part.get("model")
    name = model.get("model") if isinstance(model, dict) else str(model)
    return name.split(" (")[0] + (" (exploratory)" if part.get("exploratory") else "")


def _control_value(rec, name, spec, key):
    for c in rec.get("controls", []):
        m = c.get("measured")
        if c["name"] == name and isinstance(m, dict):
            m = m.get(spec, m)
            value = m.get(key) if isinstance(m, dict) else None
            if isinstance(value, dict):  # a criterion part: its mean, else its one number
                value = value.get("mean", next(iter(value.values()), None))
            if isinstance(value, list):
                value = float(np.mean(value))
            return value
    return None


@figure(
    "hopfield_lm.fig_superposition",
    claims=("hopfield.lm.superposition_ridge",),
    title="Superposition probe: held-out ridge R^2 of the residual stream on attribute unembeddings, by layer",
)
def superposition(records):
    import matplotlib.pyplot as plt

    rec = need(records, "hopfield.lm.superposition_ridge")
    models = _per_model(rec)
    fig, axes = plt.subplots(1, len(models), figsize=(6.2 * len(models), 4.2), squeeze=False)
    threshold = rec["params"]["threshold"]
    markers = {"shuffled_attributes": "s", "random_weights": "^"}
    for ax, (spec, d) in zip(axes[0], models.items()):
        r2 = np.asarray(d["r2_by_layer"])
        ax.plot(np.arange(len(r2)), r2, "o-", ms=3, label=f"real model, {d['subjects']} countries")
        for name, marker in markers.items():
            value = _control_value(rec, name, spec, "r2_middle")
            if value is not None:
                ax.plot([d["middle_layer"]], [value], marker, ms=8, label=f"control {name}: {value:.3f}")
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
        ax.set_title(f"{_model_name(d)}: {d.get('verdict', rec['status'])}", fontsize=8)
        ax.legend(fontsize=7)
    fig.suptitle(f"status of the claim: {rec['status']}", fontsize=9)
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
    models = _per_model(rec)
    fig, axes = plt.subplots(1, len(models), figsize=(6.2 * len(models), 4.2), squeeze=False)
    for ax, (spec, d) in zip(axes[0], models.items()):
        s = d["summary"]
        ax.plot(s["reps"], s["override_rate"], "o-", label="model follows the context (argmax_C l_f = Y)")
        ax.plot(s["reps"], s["keeps_fact_rate"], "s-", label="model keeps its stored fact")
        ax.plot(s["reps"], s["predicted_rate"], "^--", label="first-order prediction argmax_C(l0 + b) = Y")
        for name in ("other_prompt_bias", "random_weights"):
            value = _control_value(rec, name, spec, "override")
            agreement = _control_value(rec, name, spec, "agreement")
            if value is not None:
                ax.plot([], [], " ", label=f"control {name}: override {value:.2f}, agreement {agreement:.2f}")
        ax.set_xlabel("repetitions n of 'In this story, the capital of X is Y.'")
        ax.set_ylabel(f"fraction of {d['known_facts']} prompts (known capitals)")
        ax.set_ylim(-0.05, 1.05)
        ax.set_title(
            f"{_model_name(d)}; agreement (n >= 1) = {s['agreement_with_context']:.2f}: {d.get('verdict')}",
            fontsize=8,
        )
        ax.legend(fontsize=7)
    fig.suptitle(f"status of the claim: {rec['status']}", fontsize=9)
    fig.tight_layout()
    return fig
