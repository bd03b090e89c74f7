"""The quick setting of transformer_recall as first written (d=32, lr 3e-3; docs/fact_mlp.md), kept.

fact_mlp.transformer.recall runs at d=64, lr 1e-2 (see verify.fact_mlp.transformer.BASE for why);
this module keeps that setting as its own claim so its outcome is measured, and records in
the ledger that it does not reproduce here.
"""

from __future__ import annotations

from verify.claims import claim
from verify.criteria import EverySeed
from verify.fact_mlp.transformer_setup import BASE, INIT, MIN_RECALL, SRC, _recall_schedules

#: the quick setting of transformer_recall as first written (d=32, lr 3e-3)
SPEC_QUICK = dict(BASE, d_model=32, lr=3e-3, seeds=1)


@claim(
    "fact_mlp.transformer.recall_spec_scale",
    source=SRC + ", transformer_recall (docs/fact_mlp.md)",
    provenance="abstract",
    templated=True,
    statement="at the quick setting of docs/fact_mlp.md (d={d_model}, F={n_facts}, L={seq_len}, AdamW lr {lr} "
    "on attention, <= {steps} steps, encoder-decoder H={n_gates}, m_c={code_dim}) recall >= 0.95 under "
    "both schedules on every one of {seeds} seeds (quick: 1 seed, full: 5; its pilot: >= 0.98 in 5/5 "
    "runs)",
    quick=SPEC_QUICK,
    full=dict(SPEC_QUICK, seeds=5),
    controls=[INIT],
    seed_rule="every seed of seed..seed+seeds-1 (quick 1, full 5), both schedules",
)
def check_recall_spec_scale(p, ctx):
    """The setting as first written, unchanged: fact_mlp.transformer.recall runs at d=64 (see BASE); this
    claim keeps the d=32 criterion visible so that its outcome is measured, not assumed."""
    from dataclasses import replace

    per_seed = {}
    seeds = ctx.seeds(p["seeds"])
    for seed in seeds:
        sub = replace(ctx, seed=seed)  # same cache, so models are trained once per run
        per_seed[str(seed)] = _recall_schedules(p, sub)[0]
    worst = [min(per_seed[str(s)].values()) for s in seeds]
    judgement = EverySeed("recall (worse of the two schedules)", MIN_RECALL, ">=", "convention").judge(
        worst, seeds=seeds
    )
    return judgement, {"worst": min(worst), "per_seed": per_seed}


from verify.ledger import LedgerEntry, record  # noqa: E402

record(
    LedgerEntry(
        claim_id="fact_mlp.transformer.recall_spec_scale",
        measured="d=32, lr 3e-3, 2000 steps, seeds 0/1/2: attention-first recall 0.984/0.984/0.918, "
        "MLP-first 0.941/0.941/0.828 (criterion >= 0.95 on both schedules, every seed)",
        tried="the quick setting as first written; attention-only copy ceiling 0.95-1.0 over 5 "
        "embedding draws; lr 1e-2 (MLP-first still 0.947 at lr 3e-3 after 2000 steps); d=64, "
        "where every schedule reaches >= 0.95 (claim fact_mlp.transformer.recall)",
        reason="at d=32 one query direction must rank all 64 keys above the 17 other tokens of a "
        "context; 81 points in R^32 admit such a split for only ~4% of labelings (Cover's "
        "counting), so attention itself misses keys, and the MLP-first schedule trains "
        "attention through the MLP's non-smooth map more slowly; the setting's pilot (>= 0.98 "
        "in 5/5) used an implementation we do not have",
        scales=("full",),  # at quick scale the verdict flips with the seed: verify/fact_mlp/ledger.py
    )
)
