"""Capacity atlas (docs/atlas.md): the one-pass k-hop construction, searched and set against the k-hop
lower bound. The claim measures its family itself (no earlier claim searches the construction's
size at depth k; ``geometric.multihop.nocot_blocks`` builds it at d0 = ceil(3 ln N)).

At each k, for each draw j: codes and bijections of key (seed, k, j); the block dimension d0* at
which the spherical codes reach margin 0.25 is found by the bisection of
:func:`verify.geometric.scaling_setup.threshold_bisect` (the codes' gap is the built model's margin by the
exactness lemma of the block construction, docs/geometric.md#setting). The built one-pass model
(B5, docs/geometric.md#statements-and-proof-sketches) is then decoded on
all N R^k queries at d0* (margin >= 0.25 and accuracy 1 required) and at d0* - 1 (margin < 0.25
required): the search is confirmed on the construction itself, on both sides of the threshold.

Criterion [derived], the shared one of :mod:`verify.atlas.verdict` (ratios of the per-k median d
to the bound d >= R^k log2(N + 1 - I_k)/32 within 2x; the 95% interval of the log-log exponent
contains 1 and excludes 0.8 and 1.2, inconclusive over bounds spanning less than a decade), plus
every confirmation. Controls: synthetic families at the same bounds growing like bound^1.5 or
bound^0.5 must fail it. Sizes were chosen before any judged run (N and R as small as keep k = 4 a
CI-sized decode, the bound spanning a factor 8); the pilot at seed 100 is in the claim's docstring.
"""

from __future__ import annotations

from dataclasses import replace

from constructions.geometric.multihop import all_multi_hop_queries, build_nocot_model
from constructions.geometric.single_hop import attribute_codes
from constructions.tasks import make_bijections
from verify.atlas.affine_fit import load_fit
from verify.atlas.multihop_setup import CONSTRUCTION_CLAIM, CONSTRUCTION_FIELDS, khop_dim_bound, nocot_params
from verify.atlas.replicates import (
    OVER_SEEDS_CONTROLS,
    OVER_SEEDS_RULE,
    SEED_RULE,
    judge_over_seeds,
    over_seeds_params,
)
from verify.atlas.sources import family
from verify.atlas.verdict import (
    ATLAS_CONTROLS,
    CONSTANT,
    EXPONENT_RULE,
    affine_params,
    affine_statement,
    judge_within_constant,
    judged_params,
)
from verify.claims import claim, rng_for, shared
from verify.geometric.scaling_setup import threshold_bisect
from verify.geometric.single_hop_setup import SRC, _nocot_accuracy, _rng

MAX_DRAWS = 1000
#: replicate seeds of the over-seeds claims (chosen for cost; pilots in verify.atlas.replicates)
OVER_SEEDS_COUNT = 5


def draw_salt(n_hops: int, draw: int) -> int:
    """The code salt of draw j at depth k: 1 + 1000 k + j, never 0 (single hop's log_scaling uses
    salt 0), so these draws are independent of that claim's."""
    if not 0 <= draw < MAX_DRAWS:
        raise ValueError(f"draw={draw} must lie in [0, {MAX_DRAWS})")
    return 1 + MAX_DRAWS * int(n_hops) + int(draw)


def decoded(perms, n_hops: int, block_dim: int, seed: int, salt: int) -> dict:
    """Accuracy and min margin of the built one-pass model with the codes the search probed."""
    n = perms.shape[1]
    codes = attribute_codes(n, block_dim, "spherical", _rng(seed, 2, n, block_dim, salt))
    model = build_nocot_model(perms, n_hops, codes=codes)
    start, chains, target = all_multi_hop_queries(perms, n_hops)
    return _nocot_accuracy(model, start, chains, target)


@shared
def search_construction(ctx, n, r, hops, margin, draws, d0_max) -> list[dict]:
    """Per k: d0* of every draw (seed ``ctx.seed``) and the built model's accuracy and margin at d0*
    and d0* - 1, once per run."""
    seed = ctx.seed
    rows = []
    for k in hops:
        d0s, at, below = [], [], []
        for j in range(draws):
            salt = draw_salt(k, j)
            d0, _ = threshold_bisect(n, margin, seed, d0_max, salt=salt)
            perms = make_bijections(n, r, rng_for(seed, "atlas.multihop.make_bijections", n, r, salt))
            d0s.append(int(d0))
            at.append(decoded(perms, k, d0, seed, salt))
            below.append(decoded(perms, k, d0 - 1, seed, salt))
        confirmed = all(a["accuracy"] == 1.0 and a["min_margin"] >= margin for a in at) and all(
            b["min_margin"] < margin for b in below
        )
        rows.append(
            {
                "k": int(k),
                "d0_star": d0s,
                "dim": [r**k * x for x in d0s],
                "params": [nocot_params(n, r, k, x) for x in d0s],
                "accuracy_at": [a["accuracy"] for a in at],
                "margin_at": [a["min_margin"] for a in at],
                "margin_below": [b["min_margin"] for b in below],
                "n_queries": at[0]["n_queries"],
                "confirmed": bool(confirmed),
            }
        )
    return rows


@claim(
    CONSTRUCTION_CLAIM,
    source=f"capacity atlas (docs/atlas.md) over {SRC}, one-pass multi-hop construction (B5) "
    "and its matching lower bound (abstract)",
    provenance="derived",
    needs=("torch",),
    bounds=("geometric.khop_dim_bound", "geometric.khop_table_bits", "geometric.d_nocot"),
    statement=(
        "the one-pass R^k-block construction (B5, spherical codes) at the block dimension d0* "
        "where its margin crosses 0.25 (bisection on each draw's codes, as for single hop: a crossing, "
        "not necessarily the first; confirmed on the built model: margin >= 0.25 and accuracy 1 on "
        "all N R^k queries at d0*, margin < 0.25 at d0* - 1), "
        "d = R^k d0*, stays within a constant of the k-hop lower bound d >= R^k log2(N + 1 - I_k)/32 "
        f"across k (quick: N = 500, R = 2, k = 1..4, 3 draws; full: N = 1000, R = 2, k = 1..5, 5 "
        f"draws): every confirmation holds, the ratios of the per-k median d to the bound vary by at "
        f"most {CONSTANT}x and the log-log exponent of d against the bound {EXPONENT_RULE}"
    ),
    quick=judged_params(n_subjects=500, n_relations=2, hops=[1, 2, 3, 4], margin=0.25, draws=3, d0_max=64),
    full=judged_params(n_subjects=1000, n_relations=2, hops=[1, 2, 3, 4, 5], margin=0.25, draws=5, d0_max=80),
    kind="empirical",
    controls=list(ATLAS_CONTROLS),
    seed_rule="ctx.seeds(1)[0] fixes the draws (seed, k, j), j < draws: every draw's d enters the "
    "per-k median and the fit, and every draw's confirmation must hold",
)
def multihop_construction_within_constant(p, ctx):
    """Pilot (seed 100, not judged; quick parameters, 2.6 s): d0* = [26, 35, 24], [25, 27, 25],
    [25, 26, 27], [29, 22, 27] at k = 1..4; ratios to the bound 92.8, 89.3, 93.0, 96.8 (spread 1.08),
    exponent 0.97 [0.87, 1.07]; every confirmation held; the control's spread 2.82, exponent 1.5. The
    parameters and the criterion were fixed before the pilot and not changed after it."""
    n, r = int(p["n_subjects"]), int(p["n_relations"])
    rows = search_construction(ctx, n, r, p["hops"], p["margin"], p["draws"], p["d0_max"])
    points = [{"sizes": {"N": n, "R": r, "k": row["k"]}} for row in rows]
    sizes = [[float(x) for x in row["dim"]] for row in rows]
    bounds = [[khop_dim_bound(pt["sizes"])] * len(s) for pt, s in zip(points, sizes)]
    judgement, details = judge_within_constant(
        family(CONSTRUCTION_FIELDS["name"]),
        p,
        points,
        sizes,
        bounds,
        {"claim": CONSTRUCTION_CLAIM, "seed": ctx.seed, "scale": ctx.scale},
        scale=ctx.scale,
    )
    confirmed = all(row["confirmed"] for row in rows)
    judgement = replace(
        judgement,
        measured={**judgement.measured, "confirmed": confirmed},
        verdict=judgement.verdict if confirmed else "fail",  # an unconfirmed size fails outright
    )
    return judgement, {**details, "rows": rows}


_AFFINE = CONSTRUCTION_FIELDS["name"]
claim(
    f"atlas.{_AFFINE}.affine_overhead",
    source=f"capacity atlas (docs/atlas.md) over {SRC}; restates {CONSTRUCTION_CLAIM}",
    provenance="derived",
    needs=("torch",),
    bounds=("geometric.khop_dim_bound", "geometric.khop_table_bits", "geometric.d_nocot"),
    statement=affine_statement(
        "the one-pass R^k-block construction (B5, spherical codes) at the block dimension d0* where its "
        "margin crosses 0.25 (the search and confirmations of "
        f"{CONSTRUCTION_CLAIM}; quick: N = 500, R = 2, k = 1..4, 3 draws; full: N = 1000, k = 1..5, 5 "
        "draws), d = R^k d0*, against the k-hop lower bound d >= R^k log2(N + 1 - I_k)/32; every "
        "confirmation holds",
        _AFFINE,
        "dimension",
    ),
    quick=affine_params(
        _AFFINE, n_subjects=500, n_relations=2, hops=[1, 2, 3, 4], margin=0.25, draws=3, d0_max=64
    ),
    full=affine_params(
        _AFFINE, n_subjects=1000, n_relations=2, hops=[1, 2, 3, 4, 5], margin=0.25, draws=5, d0_max=80
    ),
    kind="empirical",
    controls=list(ATLAS_CONTROLS),
    seed_rule="ctx.seeds(1)[0] fixes the draws (seed, k, j), j < draws: every draw's d enters the "
    "per-k median and the fit, and every draw's confirmation must hold",
)(multihop_construction_within_constant)


def multihop_construction_over_seeds(p, ctx):
    """The construction's laws over replicate seeds (:mod:`verify.atlas.replicates`): the search
    and confirmations of :func:`search_construction` at every seed of ``ctx.seeds(p["seeds"])`` (the
    base seed's is the family claim's cache entry); an unconfirmed size on any seed fails outright."""
    n, r = int(p["n_subjects"]), int(p["n_relations"])
    seeds = ctx.seeds(p["seeds"])
    replicates, confirmed = [], []
    for s in seeds:
        rows = search_construction(
            replace(ctx, seed=s), n, r, p["hops"], p["margin"], p["draws"], p["d0_max"]
        )
        sizes = [[float(x) for x in row["dim"]] for row in rows]
        bounds = [[khop_dim_bound({"N": n, "R": r, "k": row["k"]})] * len(d) for row, d in zip(rows, sizes)]
        replicates.append((sizes, bounds))
        confirmed.append(all(row["confirmed"] for row in rows))
    judgement, details = judge_over_seeds(p, seeds, replicates)
    judgement = replace(
        judgement,
        measured={**judgement.measured, "confirmed": all(confirmed)},
        verdict=judgement.verdict if all(confirmed) else "fail",  # an unconfirmed size fails outright
    )
    return judgement, {**details, "confirmed_per_seed": confirmed}


for _law, _overhead in (("within_constant", None), ("affine", load_fit(_AFFINE)["overhead"])):
    _extra = {} if _overhead is None else {"overhead": float(_overhead)}
    claim(
        f"atlas.{_AFFINE}.{_law}_over_seeds",
        source=f"capacity atlas (docs/atlas.md) over {SRC}; restates atlas.{_AFFINE}.{_law}"
        f"{'' if _overhead is None else '_overhead'} over replicate seeds",
        provenance="derived",
        needs=("torch",),
        bounds=("geometric.khop_dim_bound", "geometric.khop_table_bits", "geometric.d_nocot"),
        statement=(
            "the one-pass R^k-block construction (B5, spherical codes) at the block dimension d0* where its "
            f"margin crosses 0.25 (the search and confirmations of {CONSTRUCTION_CLAIM} on each seed; quick: "
            "N = 500, R = 2, k = 1..4, 3 draws per seed; full: N = 1000, k = 1..5, 5 draws), d = R^k d0*, "
            "against the k-hop lower bound d >= R^k log2(N + 1 - I_k)/32: every confirmation holds and "
            + (
                "d stays within a constant of the bound"
                if _overhead is None
                else f"d less the pilot overhead d0 = {_overhead:.4g} (verify/atlas/affine_fit.toml, pilot "
                "seeds 100, 101) stays within a constant of the bound, every size above it on every seed"
            )
            + f"; {OVER_SEEDS_RULE}"
        ),
        quick=over_seeds_params(
            OVER_SEEDS_COUNT,
            n_subjects=500,
            n_relations=2,
            hops=[1, 2, 3, 4],
            margin=0.25,
            draws=3,
            d0_max=64,
            **_extra,
        ),
        full=over_seeds_params(
            OVER_SEEDS_COUNT,
            n_subjects=1000,
            n_relations=2,
            hops=[1, 2, 3, 4, 5],
            margin=0.25,
            draws=5,
            d0_max=80,
            **_extra,
        ),
        kind="empirical",
        controls=list(OVER_SEEDS_CONTROLS),
        seed_rule=SEED_RULE,
    )(multihop_construction_over_seeds)
