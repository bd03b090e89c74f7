"""Claims of the fact_mlp area, part 4: fact-storing MLPs inside a one-layer Transformer.

Spec fact_mlp.md §4 (the Transformer task), §5.5 (capacity vs usability), §7 transformer_recall.
The model and schedules are in :mod:`constructions.fact_mlp.transformer`; the MLPs are the ones of
:mod:`constructions.fact_mlp.encoder` and :mod:`constructions.fact_mlp.baselines`. Trained models
and the zoo of inserted MLPs are shared between claims (and with :mod:`verify.fact_mlp.edit`)
through ``ctx.shared``.
"""

from __future__ import annotations

import numpy as np

from theory.papers import paper
from verify.claims import Control, Outcome, claim

SRC = paper("fact_mlp")
#: spec §7 transformer_recall quick scale: F=64, L=8, AdamW on attention, <= 2000 steps, with two
#: recorded pilot changes (the 0.95 criterion is unchanged):
#: * d=64 instead of 32. At d=32 the attention-only ceiling (copy accuracy with the identity MLP)
#:   was 0.95-1.0 over 5 embedding draws and recall with the encoder-decoder 0.83-0.98 over seeds
#:   0-2: the single query direction w = W_K^T W_Q x_query must rank all 64 keys above the 17 other
#:   tokens, and 81 points in general position in R^32 are affinely separable for only ~4% of
#:   labelings (Cover's function counting, P(Bin(80, 1/2) <= 32)) [derived]. At d=64 the ceiling
#:   was 1.0 on 5/5 draws after 100-150 steps. The failure at small d is the must-fail claim
#:   fact_mlp.transformer.attention_separability_fails.
#: * lr 1e-2 instead of 3e-3: with 3e-3 the MLP-first schedule was still unconverged after 2000
#:   steps (recall 0.947 at d=32, seed 0).
BASE = dict(
    n_facts=64, d_model=64, seq_len=8, lr=1e-2, steps=2000, code_dim=48, n_gates=12, contexts=8, long_len=16
)
#: the sizes tried per MLP family (hidden width; encoder-decoder: (n_gates, code_dim), 0 = minimal H)
GRIDS = {
    "encoder_decoder": [[0, 16], [0, 32], [0, 48], [4, 32], [4, 48], [12, 32], [12, 48]],
    "ntk": [128, 256, 512, 1024],
    "hebbian": [64, 128, 256],
    "hebbian_whitened": [64, 128, 256],
    "gd": [4, 8, 16],
}
GD_EPOCHS = 3000


def _last(steps):
    """Steps run (0 for an untrained control: the history is empty)."""
    return steps[-1] if steps else 0


INIT = Control(
    "init",
    {"steps": 0},
    "attention at initialisation (0 training steps) does not route the key to the MLP, "
    "so recall must stay far below the criterion",
)


def _key(p, *names):
    return tuple((n, p[n]) for n in names)


def task(ctx, p):
    from constructions.fact_mlp.transformer import recall_task

    return ctx.shared(
        ("fact_mlp.tf.task", _key(p, "n_facts", "d_model"), ctx.seed),
        lambda: recall_task(p["n_facts"], p["d_model"], ctx.rng(71)),
    )


def table_rho(ctx, p):
    """Decodability of the whole embedding table (the MLP's value set), computed once."""
    from theory.fact_mlp.decodability import decodability

    return ctx.shared(
        ("fact_mlp.tf.rho", _key(p, "n_facts", "d_model"), ctx.seed),
        lambda: decodability(task(ctx, p).embedding),
    )


def build_encoder(ctx, p, facts, n_gates, code_dim):
    """The [derived] encoder-decoder for ``facts`` on the task's table (n_gates 0 = minimal H)."""
    from constructions.fact_mlp.encoder import build_encoder_decoder

    return build_encoder_decoder(
        facts,
        int(code_dim),
        ctx.rng(72, int(n_gates), int(code_dim)),
        n_gates=int(n_gates) or None,
        decodability=table_rho(ctx, p),
    )


def build_gd(ctx, facts, hidden):
    from constructions.fact_mlp.baselines import train_gated_mlp

    return train_gated_mlp(facts, int(hidden), ctx.seed, epochs=GD_EPOCHS, device="cpu")


def contexts(ctx, p, salt, seq_len=None):
    """Every key in p["contexts"] fresh junk contexts of length ``seq_len`` (default the training
    length; salt 0: evaluation, 1: paraphrases)."""
    from constructions.fact_mlp.transformer import evaluation_contexts

    L = int(seq_len or p["seq_len"])
    return ctx.shared(
        ("fact_mlp.tf.contexts", _key(p, "n_facts", "d_model", "contexts"), L, salt, ctx.seed),
        lambda: evaluation_contexts(task(ctx, p), p["contexts"], L, ctx.rng(73, salt, L)),
    )


def _new_model(ctx, p):
    from constructions.fact_mlp.transformer import OneLayerRecallTransformer

    return OneLayerRecallTransformer(
        task(ctx, p), ctx.torch_generator(ctx.seed + 7), device=ctx.device, dtype=ctx.torch_dtype()
    )


def attention_first(ctx, p):
    """Schedule 1: attention trained on the copy target with the identity MLP (no MLP inserted)."""
    from constructions.fact_mlp.transformer import train_attention

    def compute():
        model = _new_model(ctx, p)
        hist = train_attention(model, "key", ctx.rng(74), steps=p["steps"], lr=p["lr"], seq_len=p["seq_len"])
        return model, hist

    return ctx.shared(
        ("fact_mlp.tf.attn_first", _key(p, "n_facts", "d_model", "seq_len", "lr", "steps"), ctx.seed), compute
    )


def attention_ceiling(ctx, p, seq_len=None) -> float:
    """Copy accuracy of the attention-first model (identity MLP, target the key token itself):
    the recall any inserted MLP can reach when it decodes its own keys and nothing else."""
    import torch

    model, _ = attention_first(ctx, p)
    tok, keys = contexts(ctx, p, 0, seq_len)
    with torch.no_grad():
        pred = model(torch.as_tensor(tok, device=model.embedding.device)).argmax(-1).cpu().numpy()
    return float(np.mean(pred == keys))


def mlp_first(ctx, p, name, mlp):
    """Schedule 2: ``mlp`` inserted first, attention trained on the recall target through it."""
    from constructions.fact_mlp.transformer import swap_mlp, train_attention

    def compute():
        model = _new_model(ctx, p)
        swap_mlp(model, mlp)
        hist = train_attention(
            model, "value", ctx.rng(75), steps=p["steps"], lr=p["lr"], seq_len=p["seq_len"]
        )
        return model, hist

    return ctx.shared(
        ("fact_mlp.tf.mlp_first", name, _key(p, "n_facts", "d_model", "seq_len", "lr", "steps"), ctx.seed),
        compute,
    )


def default_encoder(ctx, p):
    key = ("fact_mlp.tf.ed", _key(p, "n_facts", "d_model", "n_gates", "code_dim"), ctx.seed)
    return ctx.shared(key, lambda: build_encoder(ctx, p, task(ctx, p).facts(), p["n_gates"], p["code_dim"]))


def attention_inputs(ctx, p, seq_len=None):
    """The attention-first model's MLP inputs (RMSNorm of the attention output) on the evaluation
    contexts, and their attention noise ||n - k||: both independent of the inserted MLP."""
    from constructions.fact_mlp.transformer import attention_noise, mlp_inputs

    L = int(seq_len or p["seq_len"])

    def compute():
        model, _ = attention_first(ctx, p)
        tok, keys = contexts(ctx, p, 0, L)
        return mlp_inputs(model, tok), keys, attention_noise(model, tok, keys)

    return ctx.shared(
        (
            "fact_mlp.tf.inputs",
            _key(p, "n_facts", "d_model", "seq_len", "lr", "steps", "contexts"),
            L,
            ctx.seed,
        ),
        compute,
    )


def inserted(ctx, p, mlp):
    """Recall of ``mlp`` inserted into (a copy of) the attention-first model, on contexts of the
    training length and of length p["long_len"]. The frozen attention's outputs are computed once
    (:func:`attention_inputs`) and fed to the inserted module."""
    import torch

    from constructions.fact_mlp.facts import decode_numpy
    from constructions.fact_mlp.transformer import clone_model, swap_mlp

    model = clone_model(attention_first(ctx, p)[0])
    swap_mlp(model, mlp)
    E = model.embedding.cpu().double().numpy()
    out = {}
    for suffix, L in (("", p["seq_len"]), ("_long", p["long_len"])):
        X, keys, noise = attention_inputs(ctx, p, L)
        with torch.no_grad():
            y = model.mlp(torch.as_tensor(X, dtype=model.embedding.dtype, device=model.embedding.device))
        acc, margin = decode_numpy(y.cpu().double().numpy(), E, model.mlp_facts.fact_map[keys])
        out["recall" + suffix] = acc
        out["min_margin" + suffix] = margin
        out["attention_noise" + (suffix or "_mean")] = float(noise.mean())
    return out


def zoo(ctx, p):
    """Every family x size of GRIDS built on the task's fact set: standalone accuracy, parameters,
    scale-free Lipschitz constant (spec §7 definition) and recall inside the attention-first model."""
    from constructions.fact_mlp.baselines import hebbian_readout, ntk_memory
    from verify.fact_mlp.usability import lipschitz

    def compute():
        facts = task(ctx, p).facts()
        rows, mlps = [], {}
        for family, sizes in GRIDS.items():
            for size in sizes:
                rng = ctx.rng(76, len(rows))
                if family == "encoder_decoder":
                    mlp = build_encoder(ctx, p, facts, *size)
                elif family == "ntk":
                    mlp = ntk_memory(facts, size, rng)
                elif family.startswith("hebbian"):
                    mlp = hebbian_readout(facts, size, rng, whitened=family.endswith("whitened"))
                else:  # shared across schedules and controls: training does not involve attention
                    mlp = ctx.shared(
                        ("fact_mlp.tf.gd", _key(p, "n_facts", "d_model"), size, ctx.seed),
                        lambda: build_gd(ctx, facts, size),
                    )
                acc, margin = mlp.decode()
                row = {
                    "family": family,
                    "size": size,
                    "params": mlp.params_standard,
                    "params_unique": mlp.params_unique,
                    "standalone_acc": acc,
                    "standalone_margin": margin,
                    "lipschitz": lipschitz(mlp, facts.keys, ctx.rng(77, len(rows))),
                    "size_detail": dict(mlp.size),
                }
                row.update(inserted(ctx, p, mlp))
                row["drop"] = acc - row["recall"]
                row["drop_long"] = acc - row["recall_long"]
                mlps[(family, str(size))] = mlp
                rows.append(row)
        return rows, mlps

    return ctx.shared(
        (
            "fact_mlp.tf.zoo",
            _key(p, "n_facts", "d_model", "seq_len", "lr", "steps", "contexts", "long_len"),
            ctx.seed,
        ),
        compute,
    )


@claim(
    "fact_mlp.transformer.recall",
    source=SRC + ", spec §7 transformer_recall",
    provenance="abstract",
    statement="the [derived] encoder-decoder MLP (H=12, m_c=48) inserted in the constrained "
    "1-layer 1-head Transformer (tied frozen embeddings, frozen RMSNorm, identity "
    "value/output, no residual; d=64, F=64, L=8, AdamW lr 1e-2 on attention, <= 2000 "
    "steps) recalls >= 0.95 of the facts in fresh junk contexts under both schedules "
    "(attention first then MLP; MLP first then attention)",
    quick=BASE,
    full=dict(BASE, d_model=128, n_facts=256, steps=4000),
    controls=[INIT],
)
def check_recall(p, ctx):
    from constructions.fact_mlp.transformer import attention_noise, clone_model, recall, swap_mlp

    mlp = default_encoder(ctx, p)
    tok, keys = contexts(ctx, p, 0)
    base, hist_a = attention_first(ctx, p)
    model_a = clone_model(base)
    swap_mlp(model_a, mlp)
    model_m, hist_m = mlp_first(ctx, p, "encoder_decoder", mlp)
    out = {}
    for sched, model, hist in (("attention_first", model_a, hist_a), ("mlp_first", model_m, hist_m)):
        acc, margin = recall(model, tok, keys)
        noise = attention_noise(model, tok, keys)
        out[sched] = {
            "recall": acc,
            "min_margin": margin,
            "steps": _last(hist["steps"]),
            "loss_history": hist["loss"],
            "acc_history": hist["batch_acc"],
            "attention_noise_mean": float(noise.mean()),
            "attention_noise_max": float(noise.max()),
        }
    worst = min(v["recall"] for v in out.values())
    return Outcome(
        predicted="recall >= 0.95 (both schedules)",
        measured={k: v["recall"] for k, v in out.items()},
        passed=worst >= 0.95,
        details={
            "schedules": out,
            "standalone_acc": mlp.decode()[0],
            "attention_ceiling": attention_ceiling(ctx, p),
            "params": mlp.params_standard,
            "size": dict(mlp.size),
        },
    )


def _smallest(rows, family, ok):
    hits = [r for r in rows if r["family"] == family and ok(r)]
    return min(hits, key=lambda r: r["params"]) if hits else None


@claim(
    "fact_mlp.transformer.inserted",
    source=SRC + " (abstract: optimal scaling inside "
    "Transformers with fewer parameters than prior constructions)",
    provenance="abstract",
    statement="inside the attention-first Transformer (d=64, F=64), the encoder-decoder reaches "
    "recall >= 0.95 with fewer MLP parameters than the NTK baseline (ratio P_ntk/P_ed "
    "> 1 at the smallest size of each grid reaching it); every family's recall, "
    "parameters and facts per parameter inside vs standalone are reported, and the "
    "GD MLP also under the MLP-first schedule",
    quick=BASE,
    full=dict(BASE, d_model=128, n_facts=256, steps=4000),
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
    from constructions.fact_mlp.transformer import recall

    rows, mlps = zoo(ctx, p)
    F = p["n_facts"]
    table = {}
    for family in GRIDS:
        alone = _smallest(rows, family, lambda r: r["standalone_acc"] == 1.0)
        inside = _smallest(rows, family, lambda r: r["recall"] >= 0.95)
        table[family] = {
            "standalone_size": alone and alone["size"],
            "standalone_params": alone and alone["params"],
            "facts_per_param_standalone": alone and F * alone["standalone_acc"] / alone["params"],
            "recall_at_standalone_size": alone and alone["recall"],
            "inside_size": inside and inside["size"],
            "inside_params": inside and inside["params"],
            "inside_recall": inside and inside["recall"],
            "facts_per_param_inside": inside and F * inside["recall"] / inside["params"],
        }
    gd_row = _smallest(rows, "gd", lambda r: r["standalone_acc"] == 1.0)
    if gd_row is not None:
        model, hist = mlp_first(ctx, p, "gd", mlps[("gd", str(gd_row["size"]))])
        table["gd"]["mlp_first_recall"] = recall(model, *contexts(ctx, p, 0))[0]
        table["gd"]["mlp_first_steps"] = _last(hist["steps"])
    ed, ntk = table["encoder_decoder"]["inside_params"], table["ntk"]["inside_params"]
    if ed is None:
        ratio = 0.0
    elif ntk is None:
        ratio = float("inf")
    else:
        ratio = ntk / ed
    return Outcome(
        predicted="P_ntk / P_ed > 1 inside the Transformer",
        measured=ratio,
        passed=ratio > 1.0,
        details={
            "table": table,
            "rows": rows,
            "ratio_ntk_over_ed": ratio if np.isfinite(ratio) else "inf (NTK never reached 0.95)",
            "attention_params": 2 * p["d_model"] ** 2,
        },
    )


@claim(
    "fact_mlp.transformer.tradeoff",
    source=SRC + " (abstract and reference: capacity vs usability)",
    provenance="abstract",
    statement="over every inserted MLP that stores all F facts standalone (d=64, F=64), the "
    "recall lost inside the attention-first Transformer on contexts of length 16 "
    "(trained at 8, so the attention mixes in more junk) rises with the scale-free "
    "empirical Lipschitz constant: Spearman correlation >= 0.5. Length-8 drops reported",
    quick=BASE,
    full=dict(BASE, d_model=128, n_facts=256, steps=4000),
    controls=[
        Control(
            "clean_inputs",
            {"control": "clean_inputs"},
            "the MLPs fed the exact key instead of the attention output (the junk "
            "mixing removed): no stored MLP loses recall, the drops are constant and "
            "no correlation with the Lipschitz constant can reach 0.5",
        )
    ],
)
def check_tradeoff(p, ctx):
    from scipy.stats import spearmanr

    rows, mlps = zoo(ctx, p)
    stored = [r for r in rows if r["standalone_acc"] == 1.0]
    lip = [r["lipschitz"] for r in stored]
    drop = [r["drop_long"] for r in stored]
    if p.get("control") == "clean_inputs":  # standalone accuracy on the exact keys: drop 0
        drop = [r["standalone_acc"] - mlps[(r["family"], str(r["size"]))].decode()[0] for r in stored]
    if len(stored) < 3 or np.ptp(drop) == 0 or np.ptp(lip) == 0:
        rho = -1.0  # constant drops (or too few points): no evidence of a tradeoff
    else:
        rho = float(spearmanr(lip, drop).statistic)
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
    return Outcome(
        predicted="Spearman(Lipschitz, recall drop at L=16) >= 0.5",
        measured=rho,
        passed=rho >= 0.5,
        details={
            "points": [{k: r[k] for k in keys} for r in stored],
            "spearman": rho,
            "n_stored": len(stored),
            "n_total": len(rows),
            "long_len": p["long_len"],
            "attention_ceiling": attention_ceiling(ctx, p),
            "attention_ceiling_long": attention_ceiling(ctx, p, p["long_len"]),
        },
    )
