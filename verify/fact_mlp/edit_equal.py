"""Claims of the fact_mlp area, part 5b: editing at equal width and equal information.

Two MLPs of the SAME hidden width in the one-layer recall Transformer of transformer.recall
(d=64, F=64): the [derived] encoder-decoder (H = 12 gates x m_c = 48, width H m_c = 576,
MLP-first schedule) and a gated MLP trained by gradient descent with 576 hidden units (the
baseline protocol, inserted into the attention-first model). Six edit methods (attention never changes):

* ``swap``: rebuild the encoder-decoder for the full edited map (construction only: a GD "swap"
  is a retraining, which ``finetune_full`` covers from the current weights);
* ``rank_one``: sequential rank-one output edits with identity key covariance
  (:func:`constructions.fact_mlp.edit.rank_one_edit`);
* ``rome``: the same with the key covariance C (:func:`constructions.fact_mlp.edit_cov.rome_edit`);
* ``memit``: batched least squares over the k edits, the covariance as regulariser
  (:func:`constructions.fact_mlp.edit_cov.memit_edit`);
* ``finetune_edits``: Adam on the MLP, on the k edit prompts only;
* ``finetune_full``: Adam on the MLP, on every prompt with the whole edited map (the information
  the swap gets).

Both fine-tunings train on their own contexts (``ft_contexts`` = 2 fresh contexts per key, salt
3), not on the evaluation contexts: train/test separation, and a quarter of the cost of the
first version, which trained on the 8 evaluation contexts per key (21 CPU-s for the claim).

C is estimated on fresh recall contexts (salt 2: neither the evaluation nor the paraphrase
contexts). Per k, ``draws`` independent draws of the edited keys and their new values; each
cell of the table is the mean efficacy / retention (specificity) over the draws with a 95% t
interval.
"""

from __future__ import annotations

import time

import numpy as np

from verify.claims import Control, choice, claim, shared
from verify.criteria import Threshold, all_of
from verify.fact_mlp.transformer_setup import (
    BASE,
    SRC,
    EditBase,
    build_encoder,
    contexts,
    edit_base,
    edit_bases,
    mean_rule,
)
from verify.measure import t_interval

WIDTH = 576  # H m_c of the encoder-decoder at BASE (12 x 48)
EQUAL = dict(BASE, gd_hidden=WIDTH, ks=[4, 16, 32], draws=3, ft_steps=300, ft_lr=1e-3, ft_contexts=2)
EQUAL_FULL = dict(EQUAL, draws=5, ks=[1, 4, 16, 32, 48])
#: the draws of edit.equal_width and edit.rank_one_equal_width (their rows are shared): verify oc's
#: budget for equal_width (about 12 draws, from its 3-draw record) and the simulated count for
#: rank_one_equal_width (see check_rank_one_equal_width); equal_information keeps 3 (its budget,
#: about 622 draws, is not affordable)
DRAWS_WIDTH = 12
QUICK_WIDTH = dict(EQUAL, draws=DRAWS_WIDTH)
#: closed-form edits (cheap: every k) and the trained / rebuilt ones (costly: largest k at quick)
CLOSED = ("unedited", "rank_one", "rome", "memit")
TRAINED = ("swap", "finetune_edits", "finetune_full")
ROME = "Meng et al. 2022 (ROME) and 2023 (MEMIT)"
#: the bar of edit.equal_width and edit.equal_information: chosen when the claims were written (a
#: convention; the pilot at seed 10 of equal_information saw 1.0 in every cell)
MIN_CELL = 0.95


def apply_method(model, method: str, new_map, edited, stats: dict, build, train, ft_steps: int, ft_lr: float):
    """One edit of ``model`` by ``method``; returns the edited model. ``stats``: the key statistics
    of ROME and MEMIT; ``build``: the swap's builder of an encoder-decoder for a fact set;
    ``train``: the fine-tunings' training contexts.

    >>> apply_method("model", "unedited", None, None, {}, None, None, 0, 0.0)
    'model'
    >>> apply_method("model", "retrain", None, None, {}, None, None, 0, 0.0)
    Traceback (most recent call last):
    ...
    ValueError: unknown edit method 'retrain'
    """
    from constructions.fact_mlp.edit import finetune_edit, rank_one_edit, swap_edit
    from constructions.fact_mlp.edit_cov import key_covariance, memit_edit, rome_edit

    if method == "unedited":
        return model
    if method == "swap":
        return swap_edit(model, new_map, build)
    if method == "rank_one":
        return rank_one_edit(model, new_map, edited)
    if method == "rome":
        return rome_edit(model, new_map, edited, stats["C"], stats["kstar"])
    if method == "memit":
        keep = ~np.isin(stats["keys"], edited)
        C0 = key_covariance(stats["H"][keep], normalise=False)
        return memit_edit(model, new_map, edited, C0, stats["kstar"])
    if method in ("finetune_edits", "finetune_full"):
        full_map = method == "finetune_full"
        return finetune_edit(model, new_map, edited, train, steps=ft_steps, lr=ft_lr, full_map=full_map)[0]
    raise ValueError(f"unknown edit method {method!r}")


@shared
def equal_rows(
    ctx,
    base: EditBase,
    n_contexts: int,
    ks: list,
    draws: int,
    ft_steps: int,
    ft_lr: float,
    ft_contexts: int,
    methods: list,
) -> list:
    """Every (base of :func:`verify.fact_mlp.transformer_setup.edit_bases`, k in ``ks``, draw,
    method): efficacy, paraphrase, specificity, score."""
    from constructions.fact_mlp.edit import attention_unchanged, edit_fact_map, edit_metrics
    from constructions.fact_mlp.edit_cov import context_hidden, key_covariance, key_hidden

    F, d, L = base.n_facts, base.d_model, base.seq_len
    bases = edit_bases(ctx, base)
    evals, paras, (cov_tok, cov_keys) = (contexts(ctx, F, d, n_contexts, salt, L) for salt in (0, 1, 2))
    train = None
    if any(m.startswith("finetune") for m in methods):
        train = contexts(ctx, F, d, ft_contexts, 3, L)

    def build(facts):
        return build_encoder(ctx, facts, base.n_gates, base.code_dim)

    rows = []
    for name, model in bases.items():
        H = context_hidden(model, cov_tok)
        stats = {
            "H": H,
            "keys": cov_keys,
            "C": key_covariance(H),
            "kstar": key_hidden(H, cov_keys, F),
        }
        meths = [m for m in methods if name == "encoder_decoder" or m != "swap"]
        for k in ks:
            for draw in range(draws):
                new_map, edited = edit_fact_map(
                    model.mlp_facts.fact_map, k, ctx.rng("fact_mlp.edit_equal.edit_fact_map", k, draw)
                )
                for method in meths:
                    t0 = time.process_time()
                    out = apply_method(model, method, new_map, edited, stats, build, train, ft_steps, ft_lr)
                    cpu = time.process_time() - t0
                    row = {
                        "mlp": name,
                        "k": int(k),
                        "draw": draw,
                        "method": method,
                        "attention_unchanged": attention_unchanged(model, out),
                        "cpu_s": round(cpu, 4),
                    }
                    row.update(edit_metrics(out, new_map, edited, evals, paras))
                    rows.append(row)
    return rows


def _rows(ctx, p, methods, ks) -> list:
    """:func:`equal_rows` at the claim's parameters."""
    return equal_rows(
        ctx,
        edit_base(p),
        p["contexts"],
        ks,
        p["draws"],
        p["ft_steps"],
        p["ft_lr"],
        p["ft_contexts"],
        methods,
    )


def summarise(rows) -> dict:
    """{"mlp/method@k": {metric: {"mean", "ci95", "per_draw"}}} for efficacy, specificity, score."""
    table = {}
    for r in rows:
        table.setdefault(f"{r['mlp']}/{r['method']}@{r['k']}", []).append(r)
    out = {}
    for cell, rs in table.items():
        out[cell] = {}
        for metric in ("efficacy", "specificity", "score"):
            x = [float(r[metric]) for r in rs]
            ci = (
                list(t_interval(x))
                if len(x) >= 2 and np.std(x) > 0
                else [x[0], x[0]]
                if len(set(x)) == 1
                else None
            )
            out[cell][metric] = {"mean": float(np.mean(x)), "ci95": ci, "per_draw": x}
    return out


def _cell(table, mlp, method, k, metric):
    return table[f"{mlp}/{method}@{k}"][metric]["mean"]


def _means(table: dict, cells: list) -> dict:
    """{cell: [mean efficacy, mean retention]}, rounded to 3 digits, for the record.

    >>> _means({"a": {"efficacy": {"mean": 0.99996}, "specificity": {"mean": 0.5}}}, ["a"])
    {'a': [1.0, 0.5]}
    """
    return {c: [round(table[c][m]["mean"], 3) for m in ("efficacy", "specificity")] for c in cells}


def _cells_rule(cells: list, rows: list, table: dict) -> dict:
    """The judgements of "efficacy and retention >= MIN_CELL in every cell, attention bit-identical
    in every edited model". Each cell's mean over the draws is judged by its 95% t interval
    (:func:`summarise`): the worst cell of a metric is the interval [lowest lower end, lowest upper
    end] over the cells, so the rule passes when every cell's interval clears the bar, fails when
    some cell's interval lies wholly below it, and is inconclusive otherwise."""
    changed = sum(not r["attention_unchanged"] for r in rows)
    draws = len({r["draw"] for r in rows})

    def worst(metric: str) -> list[float]:
        ivs = [table[c][metric]["ci95"] for c in cells]
        return [min(lo for lo, _ in ivs), min(hi for _, hi in ivs)]

    return {
        "efficacy": Threshold(
            "lowest 95% t interval of a cell's mean efficacy", MIN_CELL, ">=", "convention"
        ).judge(worst("efficacy"), seeds=draws, unit="draws"),
        "retention": Threshold(
            "lowest 95% t interval of a cell's mean retention", MIN_CELL, ">=", "convention"
        ).judge(worst("specificity"), seeds=draws, unit="draws"),
        "attention": Threshold("edited models whose attention changed", 0, "<=", "theory").judge(changed),
    }


UNEDITED = Control(
    "unedited",
    {"methods": ["unedited"]},
    "the unedited model scored on the edited map: the edited facts keep their old "
    "values, so efficacy is 0 and the criterion must fail",
)


@claim(
    "fact_mlp.edit.equal_width",
    source=SRC + " (abstract: modular editing); " + ROME,
    provenance="derived",
    templated=True,
    statement="at EQUAL hidden width (the encoder-decoder's H m_c = {n_gates} x {code_dim} against a GD "
    "gated MLP with {gd_hidden} hidden units, baseline protocol) in the recall Transformer (d={d_model}, "
    "F={n_facts}), the covariance-aware edits, ROME (rank-one with C^-1 k*) and MEMIT "
    "(batched least squares, the unedited keys' covariance as regulariser), reach mean "
    "efficacy >= 0.95 and mean retention (specificity) >= 0.95 (a convention) over {draws} draws of the "
    "edited keys (each cell's 95% t interval over the draws clears 0.95; inconclusive when one "
    "straddles it) on BOTH MLPs at every k in {ks}, with attention "
    "bit-identical: the construction has no editing advantage over a GD MLP of its width under these "
    "edits",
    quick=dict(QUICK_WIDTH, methods=["rome", "memit"]),
    full=dict(EQUAL_FULL, draws=DRAWS_WIDTH, methods=["rome", "memit"]),
    controls=[UNEDITED],
    seed_rule="mean over the draws of every (MLP, method, k) cell (table with 95% t intervals)",
)
def check_equal_width(p, ctx):
    rows = _rows(ctx, p, CLOSED, p["ks"])
    table = summarise(rows)
    meths = tuple(choice(p, "methods", (["rome", "memit"], ["unedited"])))  # unedited: the control
    cells = [f"{mlp}/{m}@{k}" for mlp in ("encoder_decoder", "gd") for m in meths for k in p["ks"]]
    return all_of(**_cells_rule(cells, rows, table)), {
        "cells": _means(table, cells),
        "table": table,
        "rows": rows,
        "widths": {"encoder_decoder": p["n_gates"] * p["code_dim"], "gd": p["gd_hidden"]},
    }


@claim(
    "fact_mlp.edit.rank_one_equal_width",
    source=SRC + "; " + ROME,
    provenance="derived",
    templated=True,
    statement="at equal hidden width (encoder-decoder H m_c = {n_gates} x {code_dim}; GD gated MLP with "
    "{gd_hidden} hidden units) the identity-covariance rank-one edit of the largest k of {ks} of "
    "{n_facts} facts retains strictly MORE unedited facts on the GD MLP than on the construction: the "
    "95% Student-t interval of the mean paired per-draw difference of retention (GD minus "
    "construction, the same edited keys) over {draws} draws lies above 0 (inconclusive when it "
    "straddles 0): the construction LOSES; the earlier finding that rank-one edits spoil a "
    "GD MLP came from a GD MLP of width 16 (the control)",
    quick=QUICK_WIDTH,
    full=dict(EQUAL_FULL, draws=DRAWS_WIDTH),
    controls=[
        Control(
            "gd_width_16",
            {"gd_hidden": 16},
            "the confounded comparison: a GD MLP of width 16 against the "
            "construction's 576 retains less, so the criterion must fail",
        )
    ],
    seed_rule="95% Student-t interval over the draws of the paired per-draw retention difference at k_max",
)
def check_rank_one_equal_width(p, ctx):
    """First judged by the difference of the two means over 3 draws against a strict > 0, which
    tied at base seed 3 (0.0) and cleared by 0.0078 at base seed 1, within one fact of one draw
    (0.0052): a window finer than the measurement (ledger, cause resolution). Now the paired
    per-draw differences are judged by their 95% t interval (inconclusive when it straddles 0),
    over the draws edit.equal_width uses (the rows are shared; :data:`DRAWS_WIDTH`). Simulation
    from the pilot at base seeds 100 and 101 (4 draws each, never judged; paired differences 0.031,
    0.012, 0.031, 0, 0, 0.031, -0.055, 0.020: mean 0.009, sd 0.029), resampling those differences:
    the interval clears 0 in 0.13 / 0.32 / 0.23 / 0.37 / 0.58 / 0.85 of runs at 3 / 6 / 12 / 24 / 48
    / 96 draws and lies below 0 in at most 0.014: about 96 draws would decide it, not affordable at
    quick scale; at the 12 draws equal_width needs it is mostly inconclusive, never a fail on a tie."""
    rows = _rows(ctx, p, CLOSED, p["ks"])
    table = summarise(rows)
    k = max(p["ks"])

    def per_draw(mlp):
        return table[f"{mlp}/rank_one@{k}"]["specificity"]["per_draw"]

    diffs = list(np.subtract(per_draw("gd"), per_draw("encoder_decoder")))
    judgement = mean_rule(
        f"mean paired difference retention(GD, width {p['gd_hidden']}) - retention(construction, "
        f"width {p['n_gates'] * p['code_dim']}) at k = {k}",
        diffs,
        ">",
        0.0,
        "theory",
        unit="paired draws",
    )
    return judgement, {
        "table": table,
        "k": k,
        "differences": diffs,
        "gd": _cell(table, "gd", "rank_one", k, "specificity"),
        "construction": _cell(table, "encoder_decoder", "rank_one", k, "specificity"),
    }


@claim(
    "fact_mlp.edit.equal_information",
    source=SRC + " (abstract: modular editing); " + ROME,
    provenance="derived",
    templated=True,
    statement="with EQUAL information (the whole edited map, as the swap gets), fine-tuning "
    "the MLP (Adam, <= {ft_steps} steps, on {ft_contexts} training contexts per key, evaluated on "
    "{contexts} others) keeps mean efficacy and retention >= 0.95 (a convention; each cell's 95% t "
    "interval over {draws} draws clears it, inconclusive when one straddles it) on both the encoder-decoder (width {n_gates} x {code_dim}) and the GD MLP (width {gd_hidden}) at "
    "k in {ft_ks} of {n_facts} edits, as does the swap of the construction; fine-tuning on the k "
    "edit prompts only retains strictly less than fine-tuning on the full map on both MLPs (95% t "
    "interval of the paired per-draw difference) "
    "(the swap's advantage over fine-tuning came from the information, not the "
    "method). Quick scale: k = 32 only (fine-tuning costs ~0.5 CPU-s a run); full "
    "scale: every k of edit.equal_width",
    quick=dict(EQUAL, ft_ks=[32], finetune_on="full map"),
    full=dict(EQUAL_FULL, ft_ks=[4, 16, 32, 48], finetune_on="full map"),
    controls=[
        Control(
            "edits_only",
            {"finetune_on": "edits"},
            "fine-tuning on the k edit prompts only in place of the full map: its "
            "retention falls (pilot at seed 10: 0.72 on the construction at k = 32), "
            "so the criterion must fail",
        )
    ],
    seed_rule="mean over the draws of every cell, each judged by its 95% t interval (per-draw values "
    "in the table)",
)
def check_equal_information(p, ctx):
    rows = _rows(ctx, p, TRAINED, p["ft_ks"])
    table = summarise(rows)
    edits_only = choice(p, "finetune_on", ("full map", "edits")) == "edits"  # the control
    full = "finetune_edits" if edits_only else "finetune_full"
    cells = [
        f"{mlp}/{m}@{k}"
        for k in p["ft_ks"]
        for mlp, m in (("encoder_decoder", "swap"), ("encoder_decoder", full), ("gd", full))
    ]
    less_keys = [(mlp, k) for mlp in ("encoder_decoder", "gd") for k in p["ft_ks"]]
    less = {
        f"{mlp}@{k}": tuple(_cell(table, mlp, f"finetune_{on}", k, "specificity") for on in ("edits", "full"))
        for mlp, k in less_keys
    }
    parts = _cells_rule(cells, rows, table)

    def per_draw(mlp, k, on):
        return table[f"{mlp}/finetune_{on}@{k}"]["specificity"]["per_draw"]

    # per (MLP, k): the 95% t interval of the paired per-draw retention difference
    gaps = [t_interval(np.subtract(per_draw(m, k, "full"), per_draw(m, k, "edits"))) for m, k in less_keys]
    parts["edits_only_retains_less"] = Threshold(
        "lowest 95% t interval of retention(full-map FT) - retention(edits-only FT) over MLPs and k",
        0.0,
        ">",
        "theory",
    ).judge([min(lo for lo, _ in gaps), min(hi for _, hi in gaps)], seeds=p["draws"], unit="draws")
    return all_of(**parts), {
        "cells": _means(table, cells),
        "retention_edits_only_vs_full": less,
        "table": table,
        "rows": rows,
    }
