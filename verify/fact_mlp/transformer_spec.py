"""The training setting of transformer_recall as first written (lr 3e-3; docs/fact_mlp.md), in a
dimension inside the statement's hypothesis.

fact_mlp.transformer.recall runs at d=64, lr 1e-2 (see verify.fact_mlp.transformer_setup.BASE);
this module keeps the first-written training setting (lr 3e-3, <= 2000 steps) as its own claim.
It was first judged at the first-written d = 32, where the statement's hypothesis does not hold:
one query direction must rank the F = 64 keys above the 17 other tokens, and Cover's count makes
only 5% of such splits of 81 embeddings separable in R^32. There the worse schedule's recall was
0.941, 0.941, 0.828, 0.953, 0.975, 0.893, 0.873 at base seeds 0, 1, 2, 3, 4, 11, 13 (one model
each; 0.941 / 0.941 / 0.828 / 0.953 / 0.975 over the full run's 5 seeds), a verdict that flipped
with the seed around the 0.95 convention. d = 32 is not kept as a boundary claim: its recall
straddles 0.95 rather than lying below it, so it brackets no boundary; the boundary of the
attention's copy accuracy is bracketed by fact_mlp.transformer.attention_boundary.
"""

from __future__ import annotations

from verify.claims import claim
from verify.fact_mlp.transformer_setup import BASE, INIT, SRC, T_RULE, recall_over_seeds

#: the hypothesis' share of separable splits: a dimension "where attention can rank the keys" is
#: one where Cover's count makes at least this share of the splits of the F + 17 embeddings
#: separable (a convention, fixed before the pilot)
MIN_SEPARABLE = 0.99


def hypothesis_dim(n_facts: int, n_junk: int = 16) -> int:
    """The smallest d at which at least :data:`MIN_SEPARABLE` of the splits of the n_facts + n_junk
    + 1 embeddings (keys against junk and the query token) are affinely separable (Cover's count,
    :func:`theory.fact_mlp.bounds.separable_fraction`).

    >>> from theory.fact_mlp.bounds import separable_fraction
    >>> hypothesis_dim(64), round(separable_fraction(81, 50), 4)
    (50, 0.9908)
    """
    from theory.fact_mlp.bounds import separable_fraction

    n = int(n_facts) + int(n_junk) + 1
    return next(d for d in range(1, n) if separable_fraction(n, d) >= MIN_SEPARABLE)


#: the first-written training setting (lr 3e-3) at the hypothesis' dimension d = 50. Pilot at base
#: seeds 100-102 (never judged): see check_recall_spec_scale
SPEC_QUICK = dict(BASE, d_model=50, lr=3e-3, seeds=3)


@claim(
    "fact_mlp.transformer.recall_spec_scale",
    source=SRC + ", transformer_recall (docs/fact_mlp.md)",
    provenance="abstract",
    templated=True,
    statement="at the first-written training setting of docs/fact_mlp.md (F={n_facts}, L={seq_len}, AdamW "
    "lr {lr} on attention, <= {steps} steps, encoder-decoder H={n_gates}, m_c={code_dim}) in a dimension "
    "where one query direction can rank the keys (the hypothesis: d={d_model}, the smallest d at which "
    "Cover's count makes >= 99% of the splits of the F + 17 embeddings separable; the first-written "
    "d = 32 makes 5%), recall >= 0.95 under both schedules: the 95% Student-t interval of the mean "
    "recall over {seeds} seeds (one model per seed) clears 0.95 (a convention) under each schedule, "
    "inconclusive when it straddles it",
    quick=SPEC_QUICK,
    full=dict(SPEC_QUICK, seeds=5),
    controls=[INIT],
    seed_rule=T_RULE,
)
def check_recall_spec_scale(p, ctx):
    """The first-written lr 3e-3 inside the hypothesis: d = :func:`hypothesis_dim` (50 for F =
    64), decided from Cover's count before any run; the pilot at base seeds 100-102 (never judged)
    confirmed that the attention ranks the keys there. The d = 32 history is in the module's
    docstring."""
    return recall_over_seeds(p, ctx)
