"""Claims of the fact_mlp area, part 5: editing facts in the one-layer Transformer.

The editing experiments of docs/fact_mlp.md#experimental-settings. Methods and metrics are in
:mod:`constructions.fact_mlp.edit`; the trained models are shared with
:mod:`verify.fact_mlp.transformer` (the encoder-decoder model of the MLP-first schedule and the
attention-first model holding a GD-trained MLP).
"""

from __future__ import annotations

import numpy as np

from verify.claims import Control, choice, claim, shared
from verify.criteria import Threshold, all_of
from verify.fact_mlp.transformer_setup import (
    BASE,
    SRC,
    EditBase,
    build_encoder,
    build_gd_batch,
    contexts,
    edit_base,
    edit_bases,
)
from verify.measure import t_interval

#: swap_built_for: the map the swapped-in encoder-decoder is built for ("edited"; "original" is
#: the stale_swap control); it changes no shared model
EDIT = dict(
    BASE, gd_hidden=16, n_edits=16, ks=[1, 4, 16, 32], ft_steps=300, ft_lr=1e-3, swap_built_for="edited"
)
ROME = "Meng et al. 2022 (ROME), rank-one model editing and the CounterFact metrics"
#: the editing thresholds of edit.swap and edit.by_k: chosen when the claims were written, not derived
MIN_SWAP = 0.9
CLOSE_SCORE = 0.05


@shared
def edit_table(ctx, base: EditBase, n_contexts: int, ft_steps: int, ft_lr: float, ks: list) -> list:
    """Every (base MLP of :func:`verify.fact_mlp.transformer_setup.edit_bases`, k in ``ks``,
    method): efficacy, paraphrase, specificity, score, attention unchanged."""
    from constructions.fact_mlp.edit import (
        METHODS,
        attention_unchanged,
        edit_fact_map,
        edit_metrics,
        finetune_edit,
        rank_one_edit,
        swap_edit,
    )

    bases = edit_bases(ctx, base)
    evals = contexts(ctx, base.n_facts, base.d_model, n_contexts, 0, base.seq_len)
    paras = contexts(ctx, base.n_facts, base.d_model, n_contexts, 1, base.seq_len)
    rows = []
    for name, model in bases.items():
        if name == "encoder_decoder":

            def build(facts):
                return build_encoder(ctx, facts, base.n_gates, base.code_dim)
        else:  # the swaps' GD MLPs of every k, trained as one batch (equal widths)
            maps = [
                edit_fact_map(model.mlp_facts.fact_map, k, ctx.rng("fact_mlp.edit.edit_fact_map", k))[0]
                for k in ks
            ]
            built = build_gd_batch(ctx, [model.task.facts(m) for m in maps], base.gd_hidden)

            def build(facts, maps=maps, built=built):
                return next(b for m, b in zip(maps, built) if np.array_equal(m, facts.fact_map))

        for k in ks:
            new_map, edited = edit_fact_map(
                model.mlp_facts.fact_map, k, ctx.rng("fact_mlp.edit.edit_fact_map", k)
            )
            for method in METHODS:
                trained = 0
                if method == "swap":
                    out = swap_edit(model, new_map, build)
                elif method == "rank_one":
                    out = rank_one_edit(model, new_map, edited)
                else:
                    out, trained = finetune_edit(model, new_map, edited, evals, steps=ft_steps, lr=ft_lr)
                row = {
                    "mlp": name,
                    "k": int(k),
                    "method": method,
                    "ft_steps": trained,
                    "attention_unchanged": attention_unchanged(model, out),
                }
                row.update(edit_metrics(out, new_map, edited, evals, paras))
                rows.append(row)
    return rows


def _table(ctx, p) -> list:
    """:func:`edit_table` at the claim's parameters, over its ks and n_edits."""
    ks = sorted(set(p["ks"]) | {p["n_edits"]})
    return edit_table(ctx, edit_base(p), p["contexts"], p["ft_steps"], p["ft_lr"], ks)


STALE = Control(
    "stale_swap",
    {"swap_built_for": "original"},
    "the swapped-in encoder-decoder is rebuilt for the ORIGINAL map, not the edited "
    "one: the edited facts keep their old values, so efficacy (and the Score) must "
    "fail",
)


def stale_row(ctx, p, k):
    """The swap control: an encoder-decoder built for the unedited map, scored on the edited map."""
    from constructions.fact_mlp.edit import edit_fact_map, edit_metrics, swap_edit

    F, d, L, n_gates, code_dim = p["n_facts"], p["d_model"], p["seq_len"], p["n_gates"], p["code_dim"]
    bases = edit_bases(ctx, edit_base(p))
    model = bases["encoder_decoder"]
    new_map, edited = edit_fact_map(model.mlp_facts.fact_map, k, ctx.rng("fact_mlp.edit.edit_fact_map", k))
    old_map = model.mlp_facts.fact_map.copy()
    out = swap_edit(model, old_map, lambda facts: build_encoder(ctx, facts, n_gates, code_dim))
    row = {
        "mlp": "encoder_decoder",
        "k": int(k),
        "method": "swap",
        "ft_steps": 0,
        "attention_unchanged": True,
    }
    evals, paras = (contexts(ctx, F, d, p["contexts"], salt, L) for salt in (0, 1))
    row.update(edit_metrics(out, new_map, edited, evals, paras))
    return row


def _stale(p) -> bool:
    """Whether the swap is the stale_swap control's (built for the original map)."""
    return choice(p, "swap_built_for", ("edited", "original")) == "original"


def _row(rows, mlp, k, method):
    return next(r for r in rows if r["mlp"] == mlp and r["k"] == k and r["method"] == method)


@claim(
    "fact_mlp.edit.swap",
    source=SRC + " (abstract: modular editing by MLP swap); " + ROME,
    provenance="abstract",
    templated=True,
    statement="editing {n_edits} of {n_facts} facts of the Transformer of transformer.recall (d={d_model}) by "
    "swapping in an encoder-decoder built for the edited map gives efficacy >= 0.9 and "
    "specificity >= 0.9 (conventions) with every attention parameter bit-identical (in every edited "
    "model of the table); a rank-one ROME-style edit (identity covariance) of a GD-trained MLP of width "
    "{gd_hidden} (the encoder-decoder's width is H m_c = {n_gates} x {code_dim}) retains strictly fewer "
    "unedited facts (specificity) than the swap; at equal width the GD MLP retains MORE than "
    "the construction (edit.rank_one_equal_width)",
    quick=EDIT,
    full=dict(EDIT, d_model=128, n_facts=256, steps=4000, n_edits=64, ks=[1, 4, 16, 64, 128]),
    controls=[STALE],
)
def check_swap(p, ctx):
    rows = _table(ctx, p)
    k = p["n_edits"]
    swap = _row(rows, "encoder_decoder", k, "swap")
    if _stale(p):
        swap = stale_row(ctx, p, k)
    gd_rank = _row(rows, "gd", k, "rank_one")
    judgement = all_of(
        efficacy=Threshold("swap efficacy", MIN_SWAP, ">=", "convention").judge(swap["efficacy"]),
        specificity=Threshold("swap specificity", MIN_SWAP, ">=", "convention").judge(swap["specificity"]),
        attention=_attention_rule(rows + [swap]),
        rank_one_gd_retains_less=Threshold(
            "specificity(swap) - specificity(rank-one on GD)", 0.0, ">", "theory"
        ).judge(swap["specificity"] - gd_rank["specificity"]),
    )
    return judgement, {
        "rows": [r for r in rows if r["k"] == k],
        "n_edits": k,
        "swap": {m: swap[m] for m in ("efficacy", "specificity", "paraphrase", "score")},
        "rank_one_gd_specificity": gd_rank["specificity"],
    }


def _attention_rule(rows):
    """Every edited model keeps every attention parameter bit-identical (the edits replace or
    change the MLP only): the count of rows whose attention changed must be 0."""
    changed = sum(not r["attention_unchanged"] for r in rows)
    return Threshold("edited models whose attention changed", 0, "<=", "theory").judge(changed)


@claim(
    "fact_mlp.edit.by_k",
    source=SRC + "; " + ROME,
    provenance="derived",
    templated=True,
    statement="over k in {ks} edited facts of {n_facts}, on both the encoder-decoder and a "
    "GD-trained MLP (width {gd_hidden}; the encoder-decoder has width H m_c = {n_gates} x {code_dim}), the "
    "swap's Score is >= 0.9 at every k; at the largest k it strictly beats fine-tuning the MLP on "
    "both and the sequential rank-one edit on the GD MLP; on the constructed MLP the "
    "rank-one edit stays within 0.05 of the swap at every k (our expectation: a rank-one "
    "output edit keeps the other facts on the constructed MLP; 0.9 and 0.05 are conventions)",
    quick=EDIT,
    full=dict(EDIT, d_model=128, n_facts=256, steps=4000, ks=[1, 4, 16, 64, 128]),
    controls=[STALE],
)
def check_by_k(p, ctx):
    """Criterion restored over every k: it had been narrowed to k <= F/4 after
    the full scale failed at k = F/2; the narrowed check's result is kept in the details.
    Known: at full scale (d=128, F=256) the restored criterion fails at k = F/2 (rank-one Score
    0.924 vs swap 0.997, measured earlier, not re-run here): the ledger holds that failure at
    full scale only, so the quick scale is still judged."""
    rows = [r for r in _table(ctx, p) if r["k"] in p["ks"]]
    if _stale(p):
        rows = [r for r in rows if not (r["mlp"] == "encoder_decoder" and r["method"] == "swap")]
        rows += [stale_row(ctx, p, k) for k in p["ks"]]
    kmax = max(p["ks"])
    swap_min = min(r["score"] for r in rows if r["method"] == "swap")

    def score(mlp, method, k=kmax):
        return _row(rows, mlp, k, method)["score"]

    gap = {
        k: abs(score("encoder_decoder", "rank_one", k) - score("encoder_decoder", "swap", k)) for k in p["ks"]
    }
    beats = {
        name: Threshold(f"Score(swap) - Score({other}) on {mlp} at k = {kmax}", 0.0, ">", "theory").judge(
            score(mlp, "swap") - score(mlp, other)
        )
        for name, mlp, other in (
            ("swap_beats_finetune_ed", "encoder_decoder", "finetune"),
            ("swap_beats_finetune_gd", "gd", "finetune"),
            ("swap_beats_rank_one_gd", "gd", "rank_one"),
        )
    }
    parts = {
        "swap_min_score_ge_0.9": Threshold("min swap Score over k", MIN_SWAP, ">=", "convention").judge(
            swap_min
        ),
        **beats,
        "rank_one_close_on_ed_every_k": Threshold(
            "max over k of |Score(rank-one) - Score(swap)| (constructed)", CLOSE_SCORE, "<=", "convention"
        ).judge(max(gap.values())),
    }
    best = {}
    for mlp in ("encoder_decoder", "gd"):
        for k in p["ks"]:
            cands = [r for r in rows if r["mlp"] == mlp and r["k"] == k]
            best[f"{mlp}@{k}"] = max(cands, key=lambda r: r["score"])["method"]
    return all_of(**parts), {
        "min_swap_score": swap_min,
        "at_kmax": {
            f"{m}/{meth}": score(m, meth)
            for m in ("encoder_decoder", "gd")
            for meth in ("swap", "rank_one", "finetune")
        },
        "rows": rows,
        "ks": list(p["ks"]),
        "winner": best,
        "checks": {name: j.passed for name, j in parts.items()},
    }


@shared
def rank_one_draws(ctx, base: EditBase, n_contexts: int, ks: list, draws: int, edit_mlp: str) -> list:
    """Per (k in ``ks``, draw < ``draws``): the Score of the swap of the encoder-decoder model of
    :func:`verify.fact_mlp.transformer_setup.edit_bases` and of the sequential rank-one edit of
    the ``edit_mlp`` model ("encoder_decoder", or "gd": the GD MLP of width gd_hidden), on the
    same edited keys (drawn per (k, draw), a stream apart from edit_table's one draw per k)."""
    from constructions.fact_mlp.edit import edit_fact_map, edit_metrics, rank_one_edit, swap_edit

    bases = edit_bases(ctx, base)
    ed = bases["encoder_decoder"]
    evals, paras = (
        contexts(ctx, base.n_facts, base.d_model, n_contexts, salt, base.seq_len) for salt in (0, 1)
    )
    rows = []
    for k in ks:
        for draw in range(int(draws)):
            new_map, edited = edit_fact_map(
                ed.mlp_facts.fact_map, k, ctx.rng("fact_mlp.edit.edit_fact_map", int(k), draw + 1)
            )
            swap = swap_edit(
                ed, new_map, lambda facts: build_encoder(ctx, facts, base.n_gates, base.code_dim)
            )
            model = bases[edit_mlp]
            rank_map = new_map
            if edit_mlp != "encoder_decoder":  # the same edits, on the other model's own map
                rank_map = model.mlp_facts.fact_map.copy()
                rank_map[edited] = new_map[edited]
            rank = rank_one_edit(model, rank_map, edited)
            s_swap = edit_metrics(swap, new_map, edited, evals, paras)
            s_rank = edit_metrics(rank, rank_map, edited, evals, paras)
            rows.append(
                {
                    "k": int(k),
                    "draw": draw,
                    "swap": {m: s_swap[m] for m in ("efficacy", "specificity", "score")},
                    "rank_one": {m: s_rank[m] for m in ("efficacy", "specificity", "score")},
                    "gap": abs(s_rank["score"] - s_swap["score"]),
                }
            )
    return rows


@claim(
    "fact_mlp.edit.rank_one_close",
    source=SRC + "; " + ROME,
    provenance="derived",
    templated=True,
    statement="our expectation (a formalisation), restricted to the range where it held: for k in {ks} "
    "edited facts of F = {n_facts} (k <= F/4), the sequential rank-one output edit of the constructed "
    "MLP (H m_c = {n_gates} x {code_dim}) keeps its Score within 0.05 (a convention) of the swap's on "
    "the same edits: at every k the 95% Student-t interval of the mean |Score(rank-one) - "
    "Score(swap)| over {draws} draws of the edited keys lies at or below 0.05 (inconclusive when it "
    "straddles). Restates edit.by_k's rank-one part, which failed at k = F/2 at full scale",
    quick=dict(EDIT, ks=[1, 4, 16], draws=6, edit_mlp="encoder_decoder"),
    full=dict(
        EDIT, d_model=128, n_facts=256, steps=4000, ks=[1, 4, 16, 64], draws=6, edit_mlp="encoder_decoder"
    ),
    controls=[
        Control(
            "gd_mlp",
            {"edit_mlp": "gd"},
            "the same rank-one edits applied to the GD-trained MLP of width gd_hidden in place of the "
            "construction: the edits spoil its other facts (edit.by_k: Score 0.075 at k = 32), so its "
            "Score falls far below the swap's and the criterion must fail",
        )
    ],
    seed_rule="95% Student-t interval over the draws of each k; the worst k decides",
)
def check_rank_one_close(p, ctx):
    """edit.by_k's expectation "a rank-one output edit keeps the other facts on the constructed
    MLP" failed at k = F/2 at full scale (rank-one Score 0.924 against the swap's 0.997, one draw;
    ledger), and its quick part flipped at base seed 4 (max gap 0.065, one draw per k at k <= F/2).
    Restated over the range where it held, k <= F/4 (the range by_k had been narrowed to before;
    chosen from that full-scale failure, not from a judged run of this claim), with ``draws`` draws
    of the edited keys per k instead of one; the 0.05 band is by_k's, unchanged. by_k stays as
    history (role formalisation).

    The draw count: the pilot at base seeds 100 and 101 (4 draws, never judged) saw gaps <= 0.0054
    at every k <= 16, which 3 draws decide; but by_k's single draws showed gaps of 0.023-0.065 (base
    seeds 0-4), one fact of an edit flipping. One such jump J among n draws, the rest 0, gives the
    interval's upper end J (1 + t_{n-1}) / n: with n = 6 (t_5 = 2.57) it stays below 0.05 for
    J <= 0.084, with 3 only for J <= 0.028. 3 draws ran first at base seed 0 (inconclusive: one draw
    of 0.042 at k = 16); the count 6 is this rule's, not that run's."""
    F = p["n_facts"]
    if max(p["ks"]) > F // 4:
        raise ValueError(f"the hypothesis k <= F/4 = {F // 4} is violated by ks = {p['ks']}")
    edit_mlp = choice(p, "edit_mlp", ("encoder_decoder", "gd"))
    rows = rank_one_draws(ctx, edit_base(p), p["contexts"], list(p["ks"]), p["draws"], edit_mlp)
    ivs = {k: t_interval([r["gap"] for r in rows if r["k"] == k]) for k in p["ks"]}
    worst = [max(lo for lo, _ in ivs.values()), max(hi for _, hi in ivs.values())]
    judgement = Threshold(
        "highest 95% t interval over k of the mean |Score(rank-one) - Score(swap)|",
        CLOSE_SCORE,
        "<=",
        "convention",
    ).judge(worst, seeds=p["draws"], unit="draws")
    return judgement, {
        "rows": rows,
        "intervals": {str(k): list(iv) for k, iv in ivs.items()},
        "mean_gap": {str(k): float(np.mean([r["gap"] for r in rows if r["k"] == k])) for k in p["ks"]},
        "edit_mlp": edit_mlp,
    }
