"""Capacity atlas (docs/atlas.md): the retrieval family, measured here because no stored claim has it.

The retrieval area's claims measure N_c (training samples), not a smallest storing size. This
module's claim measures, at V in {64, 128, 256, 512}, the smallest dimension d at which the
one-step value memory of docs/retrieval.md#setting (attention-only model, oracle accuracy: perfect
attention, no trigger; ``verify.retrieval.capacity.draw_accuracies``) stores the whole label
bijection pi of V tokens, i.e. oracle accuracy exactly 1, from N = 1e9 sampled sequences (the
population plateau, as in retrieval.capacity.plateau). Draw k of seed s at dimension d is the
task and data of key (s, k, V, d, L): the scan over d = 2, 3, ... is ascending and d*_k is the
first d at which draw k stores. Its fact-dependent parameters are W_v, V x d (the embeddings are
random and fixed); the information content is log2(V!) bits and the area's bound F4 is
d >= log2(V!)/(V b) (``theory.retrieval.bounds.param_floor``, [derived]) at b = 32 bits per parameter.

The criterion is that of :mod:`verify.atlas.verdict` (ratios within 2x; the exponent's 95%
interval contains 1 and excludes 0.8 and 1.2), with the same controls (synthetic families at the
same bounds growing like bound^1.5 and bound^0.5). Sizes were chosen on
a pilot at seed 100 (d* = 15-19, 21-25, 21-25, 27-28; 2.3 CPU-s), not on a judged seed.
"""

from __future__ import annotations

from dataclasses import replace

from constructions.search import smallest_size
from theory.retrieval import bounds as ret_theory
from verify.atlas.replicates import (
    OVER_SEEDS_CONTROLS,
    OVER_SEEDS_RULE,
    SEED_RULE,
    judge_over_seeds,
    over_seeds_params,
)
from verify.atlas.verdict import (
    ATLAS_CONTROLS,
    CONSTANT,
    EXPONENT_RULE,
    judged_params,
    synthetic_sizes,
    within_constant_judgement,
    within_constant_verdict,
)
from verify.claims import claim, shared
from verify.retrieval.capacity_setup import draw_accuracies

CLAIM_ID = "atlas.retrieval_value_memory.within_constant"


@shared
def _storing_dims(ctx, vocab_sizes, seq_len, n_samples, draws, d_max) -> list[list[int]]:
    """:func:`smallest_storing_dims` at every V, once per run and seed."""
    return [smallest_storing_dims(v, seq_len, n_samples, draws, ctx.seed, d_max) for v in vocab_sizes]


def smallest_storing_dims(
    vocab_size: int, seq_len: int, n_samples: int, draws: int, seed: int, d_max: int
) -> list[int]:
    """d*_k for k < draws: the first d in 2..d_max at which draw k's oracle accuracy is 1. The draws
    are scanned together (``constructions.search.smallest_size``, strategy "scan") up to the first d
    by which every draw has stored; each d evaluates all draws at once."""
    found: list[int | None] = [None] * draws

    def all_stored(d: int) -> bool:
        accs = draw_accuracies(vocab_size, d, seq_len, n_samples, seed, n_draws=draws)
        found[:] = [d if f is None and acc == 1.0 else f for f, acc in zip(found, accs)]
        return None not in found

    if smallest_size(range(2, d_max + 1), all_stored, strategy="scan").size is not None:
        return [int(f) for f in found]
    raise ValueError(
        f"V={vocab_size}: draws {[k for k, f in enumerate(found) if f is None]} do not store "
        f"(oracle accuracy 1) at any d <= d_max={d_max}; raise d_max"
    )


@claim(
    CLAIM_ID,
    source="capacity atlas (docs/atlas.md) over Learning to Recall with Transformers Beyond Orthogonal "
    "Embeddings (2603.15923), one-step value memory (docs/retrieval.md)",
    provenance="derived",
    statement=(
        "the smallest dimension d at which the one-step value memory (N = 1e9 sequences, L = 4, "
        "oracle accuracy exactly 1 on all V tokens; V x d parameters in W_v) stores the label "
        "bijection, searched upwards from d = 2 for each draw at V in {64, 128, 256, 512}, stays "
        f"within a constant of the F4 bound d >= log2(V!)/(32 V): the ratios of the per-V median "
        f"d* to the bound vary by at most {CONSTANT}x and the log-log exponent of d* against the "
        f"bound {EXPONENT_RULE}"
    ),
    quick=judged_params(vocab_sizes=[64, 128, 256, 512], seq_len=4, n_samples=10**9, draws=3, d_max=96),
    full=judged_params(
        vocab_sizes=[64, 128, 256, 512, 1024, 2048], seq_len=4, n_samples=10**9, draws=5, d_max=160
    ),
    kind="empirical",
    controls=list(ATLAS_CONTROLS),
    seed_rule="ctx.seeds(1)[0] fixes the draws: every draw's d* enters the per-V median and the fit",
)
def retrieval_within_constant(p, ctx):
    dims = _storing_dims(ctx, p["vocab_sizes"], p["seq_len"], p["n_samples"], p["draws"], p["d_max"])
    bounds = [[ret_theory.param_floor(v, 32.0)] * len(ds) for v, ds in zip(p["vocab_sizes"], dims)]
    sizes = synthetic_sizes(p, dims, bounds)
    v = within_constant_verdict(sizes, bounds)
    rows = [
        {"V": int(vs), "d_star": [int(x) for x in ds], "bound": b[0], "ratio": r}
        for vs, ds, b, r in zip(p["vocab_sizes"], dims, bounds, v["ratios"])
    ]
    # the judged sizes per point in the form verify oc's atlas simulator reads (as judge_within_constant)
    points = [
        {"sizes": {"V": int(vs)}, "size_per_draw": [float(x) for x in s], "bound": b[0], "ratio": r}
        for vs, s, b, r in zip(p["vocab_sizes"], sizes, bounds, v["ratios"])
    ]
    return within_constant_judgement(v, p["constant"], ctx.scale), {
        "exponent": v["exponent"],
        "rows": rows,
        "points": points,
        "seq_len": p["seq_len"],
        "n_samples": p["n_samples"],
        "sizes_judged": sizes,
        "exponent_interval95": v["exponent_interval95"],
        "bound": "theory.retrieval.bounds.param_floor = log2(V!)/(V b), b = 32",
        "bound_tag": "derived",
    }


#: replicate seeds of the over-seeds claims (chosen for cost; pilots in verify.atlas.replicates)
OVER_SEEDS_COUNT = 5


@claim(
    "atlas.retrieval_value_memory.within_constant_over_seeds",
    source="capacity atlas (docs/atlas.md) over Learning to Recall with Transformers Beyond Orthogonal "
    f"Embeddings (2603.15923), one-step value memory; restates {CLAIM_ID} over replicate seeds",
    provenance="derived",
    statement=(
        "the smallest dimension d at which the one-step value memory (N = 1e9 sequences, L = 4, oracle "
        "accuracy exactly 1 on all V tokens; V x d parameters in W_v) stores the label bijection, "
        "searched upwards from d = 2 for each draw at V in {64, 128, 256, 512} (3 draws per seed; full: "
        f"to V = 2048, 5 draws; the search of {CLAIM_ID} on each seed), stays within a constant of the "
        f"F4 bound d >= log2(V!)/(32 V); {OVER_SEEDS_RULE}"
    ),
    quick=over_seeds_params(
        OVER_SEEDS_COUNT, vocab_sizes=[64, 128, 256, 512], seq_len=4, n_samples=10**9, draws=3, d_max=96
    ),
    full=over_seeds_params(
        OVER_SEEDS_COUNT,
        vocab_sizes=[64, 128, 256, 512, 1024, 2048],
        seq_len=4,
        n_samples=10**9,
        draws=5,
        d_max=160,
    ),
    kind="empirical",
    controls=list(OVER_SEEDS_CONTROLS),
    seed_rule=SEED_RULE,
)
def retrieval_over_seeds(p, ctx):
    """The search of :data:`CLAIM_ID` at every seed of ``ctx.seeds(p["seeds"])`` (the base seed's
    is that claim's cache entry), judged over the seeds (:mod:`verify.atlas.replicates`)."""
    seeds = ctx.seeds(p["seeds"])
    replicates = []
    for s in seeds:
        dims = _storing_dims(
            replace(ctx, seed=s), p["vocab_sizes"], p["seq_len"], p["n_samples"], p["draws"], p["d_max"]
        )
        bounds = [[ret_theory.param_floor(v, 32.0)] * len(ds) for v, ds in zip(p["vocab_sizes"], dims)]
        replicates.append(([[float(x) for x in ds] for ds in dims], bounds))
    return judge_over_seeds(p, seeds, replicates)
