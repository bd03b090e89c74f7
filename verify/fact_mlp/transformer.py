"""Claims of the fact_mlp area, part 4: fact-storing MLPs inside a one-layer Transformer.

The Transformer task, capacity against usability and transformer_recall of
docs/fact_mlp.md#experimental-settings.
The model and schedules are in :mod:`constructions.fact_mlp.transformer`; the MLPs are the ones of
:mod:`constructions.fact_mlp.encoder` and :mod:`constructions.fact_mlp.baselines`. Trained models
and the zoo of inserted MLPs are measured once per run and shared between claims (and with
:mod:`verify.fact_mlp.edit`): :mod:`verify.fact_mlp.transformer_setup`.
"""

from __future__ import annotations

import numpy as np

from verify.claims import Control, choice, claim
from verify.criteria import EverySeed, Judgement, Threshold, all_of
from verify.fact_mlp.transformer_setup import (
    BASE,
    GRIDS,
    INIT,
    MIN_RECALL,
    SRC,
    T_RULE,
    _last,
    at_seeds,
    attention_ceiling,
    contexts,
    mean_rule,
    mlp_first,
    recall_over_seeds,
    zoo,
)

#: the tradeoff's correlation threshold: chosen when the claim was written, not derived
MIN_SPEARMAN = 0.5


@claim(
    "fact_mlp.transformer.recall",
    source=SRC + ", transformer_recall (docs/fact_mlp.md)",
    provenance="abstract",
    templated=True,
    statement="the [derived] encoder-decoder MLP (H={n_gates}, m_c={code_dim}) inserted in the constrained "
    "1-layer 1-head Transformer (tied frozen embeddings, frozen RMSNorm, identity "
    "value/output, no residual; d={d_model}, F={n_facts}, L={seq_len}, AdamW lr {lr} on attention, <= "
    "{steps} steps) recalls >= 0.95 of the facts in fresh junk contexts under both schedules "
    "(attention first then MLP; MLP first then attention): under each schedule the 95% Student-t "
    "interval of the mean recall over {seeds} seeds (one model per seed) clears 0.95 (a convention); "
    "inconclusive when it straddles 0.95",
    quick=dict(BASE, seeds=6),
    full=dict(BASE, d_model=128, n_facts=256, steps=4000, seeds=6),
    controls=[INIT],
    seed_rule=T_RULE,
)
def check_recall(p, ctx):
    """Recall >= MIN_RECALL under both schedules, judged over seeds (:func:`recall_over_seeds`).

    First judged on one model (base seed 0: 1.0 and 0.969), which failed at the unused base seed
    47 (MLP-first 0.932): a pass on one draw. The 3 seeds: at pilot base seeds 100-104 the
    MLP-first recall was 0.984, 0.984, 0.984, 1.0, 0.980 (attention first 1.0, 1.0, 0.984, 1.0,
    0.984), and at the unused base seeds 47-49 0.932, 0.984, 0.984. Resampling those 8 values, the
    95% interval clears 0.95 in 0.67 / 0.52 / 0.83 of runs at 3 / 5 / 6 seeds and lies below it in
    <= 0.001: 6 seeds, the seeds inserted trains its attention on too (the models are shared)."""
    return recall_over_seeds(p, ctx)


def _smallest(rows, family, ok):
    hits = [r for r in rows if r["family"] == family and ok(r)]
    return min(hits, key=lambda r: r["params"]) if hits else None


def _inserted_table(p, ctx, with_gd_first: bool) -> tuple[dict, list]:
    """One seed's table of inserted: per family the smallest standalone-storing and the smallest
    inside-reaching (recall >= MIN_RECALL) sizes; ``with_gd_first``: also the GD MLP under the
    MLP-first schedule (reported, the first seed only)."""
    from constructions.fact_mlp.transformer import recall

    F, d, L = p["n_facts"], p["d_model"], p["seq_len"]
    rows, mlps = zoo(ctx, F, d, L, p["lr"], p["steps"], p["contexts"], p["long_len"])
    table = {}
    for family in GRIDS:
        alone = _smallest(rows, family, lambda r: r["standalone_acc"] == 1.0)
        inside = _smallest(rows, family, lambda r: r["recall"] >= MIN_RECALL)
        table[family] = {
            "standalone_size": alone and alone["size"],
            "standalone_params": alone and alone["params"],
            "facts_per_param_standalone": alone and F * alone["standalone_acc"] / alone["params"],
            "recall_at_standalone_size": alone and alone["recall"],
            "inside_size": inside and inside["size"],
            "inside_params": inside and inside["params"],
            "inside_recall": inside and inside["recall"],
            "facts_per_param_inside": inside and F * inside["recall"] / inside["params"],
            "grid_max_params": max(r["params"] for r in rows if r["family"] == family),
        }
    gd_row = _smallest(rows, "gd", lambda r: r["standalone_acc"] == 1.0)
    if with_gd_first and gd_row is not None:
        model, hist = mlp_first(ctx, F, d, L, p["lr"], p["steps"], "gd", gd_row["size"])
        table["gd"]["mlp_first_recall"] = recall(model, *contexts(ctx, F, d, p["contexts"], 0, L))[0]
        table["gd"]["mlp_first_steps"] = _last(hist["steps"])
    return table, rows


def log_ratio(ntk: dict, ed: dict) -> float:
    """log2(P_ntk / P_ed) at the smallest sizes reaching the recall inside; a family that never
    reaches it is censored at twice its grid's largest parameter count (the grid's next doubling).

    >>> log_ratio({"inside_params": 800, "grid_max_params": 800}, {"inside_params": 100, "grid_max_params": 900})
    3.0
    >>> log_ratio({"inside_params": None, "grid_max_params": 800}, {"inside_params": 400, "grid_max_params": 900})
    2.0
    """

    def params(row):
        return row["inside_params"] if row["inside_params"] is not None else 2 * row["grid_max_params"]

    return float(np.log2(params(ntk) / params(ed)))


@claim(
    "fact_mlp.transformer.inserted",
    source=SRC + " (abstract: optimal scaling inside "
    "Transformers with fewer parameters than prior constructions)",
    provenance="abstract",
    templated=True,
    statement="inside the attention-first Transformer (d={d_model}, F={n_facts}), the encoder-decoder reaches "
    "recall >= 0.95 with fewer MLP parameters than the NTK baseline (P_ntk/P_ed at the smallest "
    "size of each grid reaching it: the 95% Student-t interval of the mean of log2(P_ntk/P_ed) over "
    "{seeds} seeds lies above 0, and the encoder-decoder reaches 0.95 at every seed); every family's recall, "
    "parameters and facts per parameter inside vs standalone are reported, and the "
    "GD MLP also under the MLP-first schedule",
    quick=dict(BASE, seeds=6),
    full=dict(BASE, d_model=128, n_facts=256, steps=4000, seeds=6),
    seed_rule=T_RULE + "; the encoder-decoder reaches the recall at every seed",
    controls=[
        Control(
            "init",
            {"steps": 0},
            "attention at initialisation: no MLP family reaches recall 0.95, so "
            "there is no encoder-decoder size to compare and the ratio fails",
        )
    ],
)
def check_inserted(p, ctx):
    """Judged over ``seeds`` seeds (a Transformer, a table and a zoo per seed): the encoder-decoder
    reaches recall >= 0.95 inside at every seed, and the 95% Student-t interval of the mean of
    log2(P_ntk / P_ed) over the seeds lies above 0 (fewer parameters than the NTK baseline; 0 is
    the theory's "fewer", no fitted number). First judged on one seed (ratio 8 at base seed 0),
    which failed at the unused base seed 47 (ratio 1.0): a pass on one draw.

    The seed count, from the pilot at base seeds 100-105 (never judged): log2(P_ntk / P_ed) = 0,
    2, 2, 2, 1, 0 (a grid of doublings, so a few values). Resampling them, the interval lies above
    0 in 0.26 / 0.46 / 0.68 / 0.91 of runs at 3 / 5 / 6 / 8 seeds and below it (three equal zeros)
    in 0.035 at 3 seeds, <= 0.002 from 5 on: 6 seeds, the most the quick run affords (each seed
    trains an attention and builds the zoo, about 2.5 CPU-s)."""
    tables = {sub.seed: _inserted_table(p, sub, sub.seed == ctx.seed) for sub in at_seeds(ctx, p["seeds"])}
    seeds = list(tables)
    reached = [float(tables[s][0]["encoder_decoder"]["inside_params"] is not None) for s in seeds]
    logs = [log_ratio(tables[s][0]["ntk"], tables[s][0]["encoder_decoder"]) for s in seeds]
    judgement = all_of(
        ed_reaches=EverySeed(
            "encoder-decoder reaches recall >= 0.95 inside (1 = yes)", 1.0, ">=", "convention"
        ).judge(reached, seeds=seeds),
        fewer_params=mean_rule(
            "mean over seeds of log2(P_ntk / P_ed) inside the Transformer", logs, ">", 0.0, "theory"
        ),
    )
    table, rows = tables[seeds[0]]
    return judgement, {
        "table": table,
        "rows": rows,
        "per_seed": {
            str(s): {
                "P_ed": tables[s][0]["encoder_decoder"]["inside_params"],
                "P_ntk": tables[s][0]["ntk"]["inside_params"],
                "log2_ratio": v,
            }
            for s, v in zip(seeds, logs)
        },
        "ratio_ntk_over_ed": float(2 ** np.mean(logs)),
        "attention_params": 2 * p["d_model"] ** 2,
    }


def tradeoff_judgement(lipschitz, drops, long_len: int) -> Judgement:
    """The tradeoff criterion on one zoo's stored MLPs: Spearman(Lipschitz constant, recall drop at
    length ``long_len``) against :data:`MIN_SPEARMAN`; -1 (no evidence of a tradeoff) where fewer
    than 3 MLPs are stored or either list is constant. The claim's check and its operating
    characteristic (:mod:`verify.oc`) both judge with it.

    >>> tradeoff_judgement([1.0, 2.0, 3.0], [0.0, 0.1, 0.2], 16).verdict
    'pass'
    >>> tradeoff_judgement([1.0, 2.0, 3.0], [0.0, 0.0, 0.0], 16).measured
    {'Spearman(Lipschitz, recall drop at L=16)': -1.0}
    """
    from scipy.stats import spearmanr

    if len(lipschitz) < 3 or np.ptp(drops) == 0 or np.ptp(lipschitz) == 0:
        rho = -1.0  # constant drops (or too few points): no evidence of a tradeoff
    else:
        rho = float(spearmanr(lipschitz, drops).statistic)
    return Threshold(
        f"Spearman(Lipschitz, recall drop at L={long_len})", MIN_SPEARMAN, ">=", "convention"
    ).judge(rho)


@claim(
    "fact_mlp.transformer.tradeoff",
    source=SRC + " (abstract and reference: capacity vs usability)",
    provenance="abstract",
    templated=True,
    statement="over every inserted MLP that stores all F facts standalone (d={d_model}, F={n_facts}), the "
    "recall lost inside the attention-first Transformer on contexts of length {long_len} "
    "(trained at {seq_len}, so the attention mixes in more junk) rises with the scale-free "
    "empirical Lipschitz constant: Spearman correlation >= 0.5 (a convention). Length-{seq_len} drops "
    "reported",
    quick=dict(BASE, mlp_inputs="attention output"),
    full=dict(BASE, d_model=128, n_facts=256, steps=4000, mlp_inputs="attention output"),
    controls=[
        Control(
            "clean_inputs",
            {"mlp_inputs": "exact keys"},
            "the MLPs fed the exact key instead of the attention output (the junk "
            "mixing removed): no stored MLP loses recall, the drops are constant and "
            "no correlation with the Lipschitz constant can reach 0.5",
        )
    ],
)
def check_tradeoff(p, ctx):
    rows, mlps = zoo(
        ctx, p["n_facts"], p["d_model"], p["seq_len"], p["lr"], p["steps"], p["contexts"], p["long_len"]
    )
    stored = [r for r in rows if r["standalone_acc"] == 1.0]
    lip = [r["lipschitz"] for r in stored]
    drop = [r["drop_long"] for r in stored]
    if choice(p, "mlp_inputs", ("attention output", "exact keys")) == "exact keys":  # the control: drop 0
        drop = [r["standalone_acc"] - mlps[(r["family"], str(r["size"]))].decode()[0] for r in stored]
    judgement = tradeoff_judgement(lip, drop, p["long_len"])
    (rho,) = judgement.measured.values()
    keys = (
        "family",
        "size",
        "params",
        "lipschitz",
        "recall",
        "drop",
        "recall_long",
        "drop_long",
        "attention_noise_mean",
        "attention_noise_long",
    )
    return judgement, {
        "points": [{k: r[k] for k in keys} for r in stored],
        "spearman": rho,
        "n_stored": len(stored),
        "n_total": len(rows),
        "long_len": p["long_len"],
        "attention_ceiling": attention_ceiling(ctx, p),
        "attention_ceiling_long": attention_ceiling(ctx, p, p["long_len"]),
    }
