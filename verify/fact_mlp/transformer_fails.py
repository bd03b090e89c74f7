"""Claims of the fact_mlp area, part 4b: the two must-fail demonstrations of the inserted MLPs.

The insertion constraint (tied frozen embeddings: an MLP works only on the table it was built for)
and the attention's separability hypothesis of :mod:`verify.fact_mlp.transformer` (at d = 16 one
query direction cannot rank 64 keys above the other tokens). The trained models are shared with
that module through ``ctx.shared``.
"""

from __future__ import annotations

import numpy as np

from verify.claims import Control, Outcome, claim
from verify.fact_mlp.transformer_setup import (
    BASE,
    SRC,
    _last,
    attention_ceiling,
    attention_first,
    contexts,
    default_encoder,
    task,
)


@claim(
    "fact_mlp.transformer.foreign_table_fails",
    source=SRC + ", the insertion constraints (tied frozen embeddings)",
    provenance="derived",
    demonstrates_failure=True,
    statement="must fail: an encoder-decoder built for the same facts on a re-drawn embedding "
    "table is refused by swap_mlp, and forced in anyway it recalls < 0.2 of the facts "
    "(chance 1/(F+17)); the MLP only works on the table it was built for",
    quick=BASE,
    controls=[
        Control(
            "own_table",
            {"control": "own_table"},
            "the same construction built on the model's own table is accepted by "
            "swap_mlp and recalls the facts, so the demonstration must fail",
        )
    ],
)
def check_foreign(p, ctx):
    from constructions.fact_mlp.transformer import RecallTask, clone_model, recall, recall_task, swap_mlp

    t = task(ctx, p)
    other = recall_task(p["n_facts"], p["d_model"], ctx.rng(78))
    other = RecallTask(other.embedding, t.fact_map, t.n_facts)
    if p.get("control") == "own_table":
        other = t
    from constructions.fact_mlp.encoder import build_encoder_decoder

    mlp = build_encoder_decoder(other.facts(), p["code_dim"], ctx.rng(79), n_gates=p["n_gates"])
    base, _ = attention_first(ctx, p)
    model = clone_model(base)
    try:
        swap_mlp(model, mlp)
        refused, message = False, ""
    except ValueError as err:
        refused, message = True, str(err)
    swap_mlp(model, mlp, atol=np.inf)
    acc = recall(model, *contexts(ctx, p, 0))[0]
    return Outcome(
        predicted="refused, and recall < 0.2 when forced",
        measured=acc,
        passed=refused and acc < 0.2,
        details={
            "refused": refused,
            "error": message,
            "forced_recall": acc,
            "chance": 1.0 / t.vocab_size,
            "standalone_acc_own_table": mlp.decode()[0],
        },
    )


@claim(
    "fact_mlp.transformer.attention_separability_fails",
    source=SRC + ", transformer_recall (pilot: at d=16 attention cannot separate 64 keys from junk)",
    provenance="derived",
    demonstrates_failure=True,
    statement="must fail: at d=16 (F=64, 17 other tokens) no single query direction ranks every "
    "key above every junk token, so the attention-first copy accuracy and the recall "
    "of the inserted encoder-decoder both stay below 0.95 after the same training "
    "(the recall claim's hypothesis of a separating attention is violated)",
    quick=dict(BASE, d_model=16),
    controls=[
        Control(
            "d64",
            {"d_model": 64},
            "at d = 64 (the recall claim's setting; d = 32 is the borderline, "
            "ceiling 0.95-1.0) one query direction separates the keys: copy accuracy "
            "and recall reach 0.95, so the demonstration must fail",
        )
    ],
)
def check_separability(p, ctx):
    from constructions.fact_mlp.transformer import clone_model, recall, swap_mlp

    ceiling = attention_ceiling(ctx, p)
    model = clone_model(attention_first(ctx, p)[0])
    swap_mlp(model, default_encoder(ctx, p))
    acc = recall(model, *contexts(ctx, p, 0))[0]
    return Outcome(
        predicted="copy accuracy and recall < 0.95 at d=16",
        measured={"attention_ceiling": ceiling, "recall": acc},
        passed=ceiling < 0.95 and acc < 0.95,
        details={
            "attention_ceiling": ceiling,
            "recall": acc,
            "steps": _last(attention_first(ctx, p)[1]["steps"]),
        },
    )
