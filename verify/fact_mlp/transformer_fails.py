"""Claims of the fact_mlp area, part 4b: the two must-fail demonstrations of the inserted MLPs.

The insertion constraint (tied frozen embeddings: an MLP works only on the table it was built for)
and the attention's separability hypothesis of :mod:`verify.fact_mlp.transformer` (at d = 16 one
query direction cannot rank 64 keys above the other tokens, unlike from d = (F + 16)/2 on: Cover's
function counting). The trained models are shared with
that module (measured once per run: :mod:`verify.fact_mlp.transformer_setup`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from verify.claims import Control, choice, claim
from verify.criteria import Bracket, Threshold, all_of
from verify.fact_mlp.transformer_setup import (
    BASE,
    SRC,
    _last,
    at_seeds,
    attention_ceiling,
    attention_first,
    contexts,
    default_encoder,
    mean_rule,
    task,
)


@claim(
    "fact_mlp.transformer.foreign_table_fails",
    source=SRC + ", the insertion constraints (tied frozen embeddings)",
    provenance="derived",
    demonstrates_failure=True,
    statement="must fail: an encoder-decoder built for the same F = {n_facts} facts on a re-drawn embedding "
    "table (d = {d_model}) is refused by swap_mlp, and forced in anyway it recalls < 0.2 of the facts "
    "(chance 1/(F+17); 0.2 a convention); the MLP only works on the table it was built for. The "
    "hypothesis dropped (the table the MLP was built on) has no numerical boundary, so this is not a "
    "bracket: the control is the same construction on the model's own table. It tests a convention "
    "(the 0.2 recall ceiling) and cites no bound",
    quick=dict(BASE, mlp_table="redrawn"),
    templated=True,
    controls=[
        Control(
            "own_table",
            {"mlp_table": "own"},
            "the same construction built on the model's own table is accepted by "
            "swap_mlp and recalls the facts, so the demonstration must fail",
        )
    ],
)
def check_foreign(p, ctx):
    from constructions.fact_mlp.transformer import RecallTask, clone_model, recall, recall_task, swap_mlp

    F, d, L = p["n_facts"], p["d_model"], p["seq_len"]
    t = task(ctx, F, d)
    other = recall_task(F, d, ctx.rng("fact_mlp.transformer_fails.recall_task"))
    other = RecallTask(other.embedding, t.fact_map, t.n_facts)
    if choice(p, "mlp_table", ("redrawn", "own")) == "own":  # the control
        other = t
    from constructions.fact_mlp.encoder import build_encoder_decoder

    mlp = build_encoder_decoder(
        other.facts(),
        p["code_dim"],
        ctx.rng("fact_mlp.transformer_fails.build_encoder_decoder"),
        n_gates=p["n_gates"],
    )
    model = clone_model(attention_first(ctx, F, d, L, p["lr"], p["steps"])[0])
    try:
        swap_mlp(model, mlp)
        refused, message = False, ""
    except ValueError as err:
        refused, message = True, str(err)
    swap_mlp(model, mlp, atol=np.inf)
    acc = recall(model, *contexts(ctx, F, d, p["contexts"], 0, L))[0]
    judgement = all_of(
        refused=Threshold("swap_mlp refuses the foreign MLP (1 = refused)", 1.0, ">=", "theory").judge(
            float(refused)
        ),
        forced_recall=_forced_recall_rule(acc),
    )
    return judgement, {
        "refused": refused,
        "error": message,
        "forced_recall": acc,
        "chance": 1.0 / t.vocab_size,
        "standalone_acc_own_table": mlp.decode()[0],
    }


def _forced_recall_rule(acc: float):
    """recall < 0.2 (strict, as first written)."""
    return Threshold("recall when forced in", 0.2, "<", "convention").judge(acc)


def separability_bracket(p) -> Bracket:
    """The bracket of attention_separability_fails: d around Cover's (n - 1)/2 for the n = F + 17
    embeddings the query direction must split (keys against junk and the query token)."""
    from constructions.fact_mlp.transformer import N_JUNK
    from theory.fact_mlp.bounds import separability_dim

    return Bracket("d", separability_dim(p["n_facts"] + N_JUNK + 1), p["below"], p["above"])


def _copy_and_recall(ctx, p, d):
    from constructions.fact_mlp.transformer import clone_model, recall, swap_mlp

    F, d, L = p["n_facts"], int(d), p["seq_len"]
    ceiling = attention_ceiling(ctx, {**p, "d_model": d})
    base, hist = attention_first(ctx, F, d, L, p["lr"], p["steps"])
    model = clone_model(base)
    swap_mlp(model, default_encoder(ctx, F, d, p["n_gates"], p["code_dim"]))
    acc = recall(model, *contexts(ctx, F, d, p["contexts"], 0, L))[0]
    return {
        "d": d,
        "attention_ceiling": ceiling,
        "recall": acc,
        "breaks": ceiling < 0.95 and acc < 0.95,
        "steps": _last(hist["steps"]),
    }


@claim(
    "fact_mlp.transformer.attention_separability_fails",
    source=SRC + ", transformer_recall (the separating-attention hypothesis; Cover's function counting)",
    provenance="derived",
    demonstrates_failure=True,
    templated=True,
    statement="must fail: one query direction must rank the F = {n_facts} keys above the 17 other tokens, "
    "which Cover's function counting makes likely only from d = (F + 16)/2 on; at d = {below}, below "
    "that boundary, the attention-first copy accuracy and the recall of the inserted encoder-decoder "
    "both stay below 0.95 after the same training, and at d = {above}, above it, they do not (a "
    "bracket within a factor 2 of the boundary)",
    quick=dict({k: v for k, v in BASE.items() if k != "d_model"}, below=27, above=60, side="below"),
    controls=[
        Control(
            "across_boundary",
            {"side": "above"},
            "the other side of the bracket: at d = above one query direction separates the keys "
            "(separable fraction about 1), so copy accuracy and recall reach 0.95 and the "
            "demonstration must fail",
        )
    ],
)
def check_separability(p, ctx):
    """Bracket points from Cover's formula, not from data: the 81 embeddings are affinely
    separable for a fraction P(Bin(80, 1/2) <= d) of the splits (theory.fact_mlp.bounds.
    separable_fraction), a half at d = 40 (for a fixed split of i.i.d. spherical embeddings, the
    chance of a separating direction through the origin is P(Bin(80, 1/2) <= d - 1), Wendel's
    theorem: the same boundary to one dimension); below = 40/1.5 rounded = 27 (fraction 0.002), above =
    1.5 x 40 = 60 (fraction 1 - 1e-6), a factor 1.5 (criterion object verify.criteria.Bracket). The
    previous bracket, d = 16 against 64 (piloted: at d = 16 attention cannot separate 64 keys from
    junk; a factor 2.5 below the boundary), was measured once; its stored result is kept in details["previous_criterion"] (verify.previous)."""
    from theory.fact_mlp.bounds import separable_fraction

    bracket = separability_bracket(p)
    sides = {side: _copy_and_recall(ctx, p, p[side]) for side in ("below", "above")}
    judgement = bracket.judge_side(p["side"], sides["below"]["breaks"], sides["above"]["breaks"])
    from constructions.fact_mlp.transformer import N_JUNK

    n = p["n_facts"] + N_JUNK + 1
    details = {
        side: {**row, "separable_fraction": separable_fraction(n, row["d"])} for side, row in sides.items()
    }
    details["bracket"] = bracket.details(
        "theory.fact_mlp.bounds.separability_dim (Cover's (n - 1)/2, n = F + 17)",
        "attention-first copy accuracy and the inserted encoder-decoder's recall both < 0.95",
    )
    return judgement, details


#: the pilot fit of the 0.95 criterion's boundary in d (pilot base seeds 100+, never judged)
BOUNDARY_FIT = Path(__file__).with_name("attention_boundary_fit.toml")


def fit_boundary(dims, means, level: float = 0.95) -> float:
    """The d at which the mean copy accuracy crosses ``level``: the per-d means (``dims``
    increasing) made non-decreasing by pooling adjacent violators (isotonic regression: the
    accuracy cannot fall as d grows, so a dip is read as noise), then interpolated linearly
    between the last d below ``level`` and the next. Hypothesis: the first mean is below
    ``level`` and the last one at or above it (the grid straddles the boundary).

    >>> round(fit_boundary([20, 30, 40], [0.85, 0.93, 0.99]), 4)
    33.3333
    >>> fit_boundary([20, 30, 40, 50], [0.85, 0.97, 0.91, 0.99])
    42.0
    >>> fit_boundary([20, 30], [0.96, 0.99])
    Traceback (most recent call last):
    ...
    ValueError: the pilot grid does not straddle 0.95 (means 0.96 .. 0.99)
    """
    d = [float(x) for x in dims]
    blocks = [[float(m), 1] for m in means]  # [mean, weight]; pool adjacent violators
    out: list[list[float]] = []
    for b in blocks:
        out.append(b)
        while len(out) > 1 and out[-2][0] > out[-1][0]:
            (m1, w1), (m2, w2) = out[-2], out[-1]
            out[-2:] = [[(m1 * w1 + m2 * w2) / (w1 + w2), w1 + w2]]
    iso = [m for m, w in out for _ in range(int(w))]
    if not iso[0] < level <= iso[-1]:
        raise ValueError(f"the pilot grid does not straddle {level:g} (means {iso[0]:.4g} .. {iso[-1]:.4g})")
    i = next(j for j in range(1, len(iso)) if iso[j] >= level)
    d0, d1, m0, m1 = d[i - 1], d[i], iso[i - 1], iso[i]
    return d0 + (level - m0) * (d1 - d0) / (m1 - m0)


def boundary_fit() -> dict:
    """The stored pilot fit (:data:`BOUNDARY_FIT`): pilot seeds, revision, grid, per-d mean copy
    accuracies, the fitted boundary and the bracket's two dimensions.

    >>> fit = boundary_fit()
    >>> fit["below"] < fit["boundary"] < fit["above"]
    True
    """
    import tomllib

    with BOUNDARY_FIT.open("rb") as fh:
        return tomllib.load(fh)


def _copy_accuracies(ctx, p: dict, d: int) -> list[float]:
    """The attention-first copy accuracy (identity MLP: the recall an inserted MLP can reach) at
    dimension ``d`` for each of the claim's seeds (one trained attention per seed)."""
    return [attention_ceiling(sub, {**p, "d_model": int(d)}) for sub in at_seeds(ctx, p["seeds"])]


@claim(
    "fact_mlp.transformer.attention_boundary",
    source=SRC + ", transformer_recall (the separating-attention hypothesis; its 0.95 boundary measured)",
    provenance="derived",
    demonstrates_failure=True,
    templated=True,
    statement="must fail: the attention-first copy accuracy (the recall any inserted MLP can reach) "
    "crosses 0.95 (a convention) near d* = {boundary}, the boundary fitted on pilot base seeds (never "
    "judged; attention_boundary_fit.toml); at d = {below}, just below it, the 95% Student-t interval "
    "of the mean copy accuracy over {seeds} seeds lies below 0.95, and at d = {above}, just above it, "
    "it does not (it clears 0.95): a bracket of the measured boundary. Restates "
    "attention_separability_fails, which bracketed Cover's d = 40 instead",
    quick=dict(
        {k: v for k, v in BASE.items() if k != "d_model"},
        side="below",
        **{k: boundary_fit()[k] for k in ("boundary", "below", "above", "seeds")},
    ),
    seed_rule="95% Student-t interval of the mean over seeds seed..seed+seeds-1 at each side",
    controls=[
        Control(
            "above_boundary",
            {"side": "above"},
            "the other side of the bracket: at d = above the mean copy accuracy clears 0.95, so the "
            "demonstration's criterion (the interval lies below 0.95) must fail there",
        )
    ],
)
def check_attention_boundary(p, ctx):
    """The boundary of the 0.95 criterion, not Cover's: attention_separability_fails bracketed
    Cover's (F + 16)/2 = 40, where a perfect ranking of every key becomes likely, but the
    criterion asks for 95% copy accuracy and broke or held at d = 27 depending on the embedding
    draw (ledger). The boundary d* is fitted (:func:`fit_boundary`) on pilot base seeds whose
    accuracies are stored with the fit in attention_boundary_fit.toml; below and above are the
    pilot-grid dimensions just across it, chosen there. Judged over the registry's seeds (one
    attention per seed and side): below, "it breaks" = the interval of the mean lies below 0.95;
    the control reads the same criterion above, where it must fail."""
    bracket = Bracket("d", float(p["boundary"]), float(p["below"]), float(p["above"]))
    acc = {side: _copy_accuracies(ctx, p, p[side]) for side in ("below", "above")}
    rule = {
        side: mean_rule(f"mean copy accuracy over seeds at d = {p[side]}", acc[side], "<", 0.95, "convention")
        for side in ("below", "above")
    }
    side = choice(p, "side", ("below", "above"))
    if side == "below":
        holds = mean_rule(
            f"mean copy accuracy over seeds at d = {p['above']}", acc["above"], ">=", 0.95, "convention"
        )
        judgement = all_of(breaks_below=rule["below"], holds_above=holds)
    else:
        judgement = rule["above"]
    return judgement, {
        "copy_accuracy": {side: acc[side] for side in acc},
        "seeds": ctx.seeds(p["seeds"]),
        "bracket": bracket.details(
            "the pilot fit of attention_boundary_fit.toml (the 0.95 criterion's boundary in d)",
            "the 95% t interval of the mean attention-first copy accuracy over the seeds < 0.95",
        ),
        "fit": {k: v for k, v in boundary_fit().items() if k != "per_seed"},
    }
