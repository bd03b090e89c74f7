"""Single-hop claims of *Geometric Factual Recall in Transformers* (docs/geometric.md).

Every check builds the explicit weights of constructions.geometric.single_hop and measures accuracy and
margin with the chunked kernel of verify.measure. Provenance follows docs/geometric.md: the structure
("log dimension suffices", the transfer) is the paper's [abstract]; every constant and every
bound is this project's [derived] formalisation. Every empirical claim has a control (the same
criterion where it must fail); every must-fail demonstration is bracketed by a control just across
its boundary. The threshold-vs-ln N claim is in verify.geometric.scaling.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from constructions.geometric.single_hop import (
    build_block_model,
    build_selector,
)
from constructions.tasks import make_bijections, single_hop_dataset
from theory.geometric import single_hop as B
from verify.claims import Control, claim
from verify.criteria import Agreement, EverySeed, KOfN, Threshold, all_of, binomial_k
from verify.geometric.scaling_setup import threshold_bisect
from verify.geometric.single_hop_setup import SRC, _rng, decoding_clearance, model_decoding
from verify.measure import binomial_tolerance, min_pairwise_gap, t_interval


def _block(n, r, d0, seed, ctx, kind="spherical"):
    """The block model of seed ``seed``'s bijections and codes, in the run's device and dtype."""
    perms = make_bijections(n, r, _rng(seed, 1, n, r, 0))
    return build_block_model(
        perms, d0, code_kind=kind, rng=_rng(seed, 2, n, d0, 0), device=ctx.device, dtype=ctx.torch_dtype()
    )


# ---------------------------------------------------------------------------------------------
@claim(
    "geometric.single_hop.selector_exact",
    source=f"{SRC}, selector MLP (exactness lemma of the block construction)",
    provenance="derived",
    controls=[
        Control(
            "leaky_gates",
            {"gate_bias": 0.05},
            "beta = 0.05 is below max|x_i| (about 0.67 "
            "for unit codes in d0 = 28), the lemma's hypothesis: closed blocks leak (the "
            "transformer part is then built at beta = 10; the standalone selector fails)",
        )
    ],
    statement="with beta > max|x_i| the selector MLP outputs u_{pi_r(s)} exactly: max abs error < 1e-9 "
    "(1e-5 in float32) over all (s, r), standalone and inside the transformer (an exact construction: one deterministic run, whose verdict holds for any draw of distinct codes and is tested at base seeds 0-2)",
    quick={"n_subjects": 1000, "n_relations": 4, "block_dim": 28, "gate_bias": 10.0},
    full={"n_subjects": 100000, "n_relations": 16, "block_dim": 28, "gate_bias": 10.0},
)
def selector_exact(p, ctx):
    perms = make_bijections(
        p["n_subjects"], p["n_relations"], ctx.rng("geometric.single_hop.make_bijections")
    )
    beta = p["gate_bias"]
    model = build_block_model(
        perms,
        p["block_dim"],
        rng=ctx.rng("geometric.single_hop.build_block_model"),
        gate_bias=max(beta, 10.0),
        device=ctx.device,
        dtype=ctx.torch_dtype(),
    )
    subj, rel, target = single_hop_dataset(perms)
    # the selector at gate bias beta, applied without the lemma's guard (the control drops its hypothesis)
    sel = build_selector(p["n_relations"], p["block_dim"], beta)
    ans0 = model.transformer.embed.shape[1] - model.block_dim
    standalone = in_transformer = 0.0
    step = 1 << 15  # (s, r) pairs per chunk: at full scale all 1.6M at once held > 14 GB
    for at in range(0, len(subj), step):
        s_, r_, t_ = subj[at : at + step], rel[at : at + step], target[at : at + step]
        out = np.maximum(model.subject_embeddings[s_] @ sel.w_in.T + sel.gate_bias[r_], 0.0) @ sel.w_out.T
        standalone = max(standalone, float(np.max(np.abs(out - model.codes[t_]))))
        inside = model.final_hidden(s_, r_)[:, ans0:].cpu().numpy()
        in_transformer = max(in_transformer, float(np.max(np.abs(inside - model.codes[t_]))))
    tol = 1e-9 if ctx.dtype == "float64" else 1e-5  # float32: one rounding per block sum
    judgement = all_of(  # "< tol", strictly
        standalone=Agreement("max |selector(x_s) - u_target|, standalone", tol, strict=True).judge(
            standalone
        ),
        in_transformer=Agreement(
            "max |answer channels - u_target|, in the transformer", tol, strict=True
        ).judge(in_transformer),
    )
    return judgement, {
        "tolerance": tol,
        "gate_bias": p["gate_bias"],
        "max_abs_x": float(np.max(np.abs(model.subject_embeddings))),
        "standalone": standalone,
        "in_transformer": in_transformer,
    }


@claim(
    "geometric.single_hop.block_accuracy",
    source=f"{SRC}, block construction (margin = 1 - code coherence)",
    provenance="derived",
    controls=[
        Control(
            "one_dim",
            {"block_dims": [1]},
            "d0 = 1: unit codes are +-1, so N = 1000 "
            "attributes share two codes and logits tie: below the boundary d0 = 2",
        )
    ],
    seed_rule="every seed of ctx.seeds(seeds), at the smallest and at the largest listed d0",
    templated=True,
    statement="the block construction stores all N*R facts whenever its spherical codes are distinct: "
    "accuracy 1 (ties are errors) on every one of {seeds} seeds at each tested d0, read as the smallest "
    "ratio of a fact's margin to its tie tolerance exceeding 1 (log10 of it > 0, -inf for a tie or a "
    "wrong answer), and the model's margin equals 1 - max code coherence to within 1e-6 (strictly); "
    "N = {n_subjects}, R = {n_relations}, d0 in {block_dims}, the last being ceil(3 ln N) (d0 = 1 ties; at "
    "d0 = 2 the margin, about (2 pi/N^2)^2/2, is at float64 rounding and is recorded only). "
    "This is not the log-dimension statement (accuracy needs only distinct codes; the margin "
    "claims margin_suff and log_scaling carry ln N)",
    quick={"n_subjects": 1000, "n_relations": 4, "block_dims": [3, 21], "seeds": 5},
    full={"n_subjects": 100000, "n_relations": 16, "block_dims": [3, 35], "seeds": 5},
)
def block_accuracy(p, ctx):
    """Retagged [derived]: it passed at d0 = 3, as it must, since accuracy 1 needs only distinct codes
    (docs/geometric.md#setting, the margin). In exact arithmetic the boundary is d0 = 1 | 2; in float64 the d0
    = 2 margin of N = 1000 random points on the circle is 1e-16..1e-10 (seed 1: -1.1e-16, a rounding tie), so
    the criterion is tested at d0 = 3 and d0 = 2 is recorded in details. The old rule's "margin > 0" is
    part of "accuracy 1": decode counts a fact only when its margin exceeds the tie tolerance (>= 0).

    Changed measurement (no spread): the rule was "accuracy 1" over the ten (d0, seed) points, a
    value stuck at 1 that ``verify oc`` could not simulate (a rule over points). It is now judged per
    tested d0 (the smallest and the largest of ``block_dims``) over the seeds, on the continuous
    quantity that decides accuracy 1 exactly under the tie rule: log10 of the smallest ratio
    margin / tie tolerance over the N*R facts (:func:`~verify.geometric.single_hop_setup.tie_clearance_decades`;
    > 0 exactly when every fact clears its tolerance). At base seed 0 the verdict is pass under both
    rules (quick)."""
    n, r = p["n_subjects"], p["n_relations"]
    dims = list(p["block_dims"])
    if not 1 <= len(dims) <= 2:
        raise ValueError(
            f"block_dims must list one or two d0 (the smallest and the largest tested), got {dims}"
        )
    seeds = ctx.seeds(p["seeds"])
    rows, at_two = [], []
    if dims != [1]:
        for seed in seeds:
            res2 = model_decoding(_block(n, r, 2, seed, ctx))
            at_two.append({"seed": seed, "accuracy": res2.accuracy, "margin": res2.min_margin})
    for d0 in dims:
        for seed in seeds:
            model = _block(n, r, d0, seed, ctx)
            res, decades = decoding_clearance(model)
            gap = min_pairwise_gap(model.codes)
            rows.append(
                {
                    "block_dim": d0,
                    "seed": seed,
                    "accuracy": res.accuracy,
                    "margin": res.min_margin,
                    "tie_clearance_decades": decades,
                    "margin_from_coherence": gap,
                }
            )
    quantity = "log10 of min margin / tie tolerance over the facts"
    parts = {
        where: EverySeed(f"{quantity}, {where.replace('_', ' ')}", 0.0, ">", "theory").judge(
            [row["tie_clearance_decades"] for row in rows if row["block_dim"] == d0], seeds=seeds
        )
        for where, d0 in (("at_smallest_d0", dims[0]), ("at_largest_d0", dims[-1]))
    }
    last = [row for row in rows if row["block_dim"] == dims[-1]]
    judgement = all_of(
        **parts,
        coherence=Agreement("max |margin - (1 - max code coherence)|", 1e-6, strict=True).judge(
            max(abs(row["margin"] - row["margin_from_coherence"]) for row in rows)
        ),
    )
    return judgement, {
        "min_margin": min(row["margin"] for row in rows),
        "accuracy_per_point": {f"d0={row['block_dim']}/{row['seed']}": row["accuracy"] for row in rows},
        "rows": rows,
        "block_dim": dims[-1],
        "recorded_at_d0_2": at_two,
        "margin": [row["margin"] for row in last],
        "ceil_3lnN": math.ceil(3 * math.log(n)),
    }


@claim(
    "geometric.single_hop.margin_suff",
    source=f"{SRC}, bound B2 (Hoeffding + union)",
    bounds=("geometric.d0_suff",),
    provenance="derived",
    controls=[
        Control(
            "half_dim",
            {"d0_factor": 0.5},
            "d0 = ceil(d0_suff / 2) drops B2's hypothesis; "
            "max coherence of N = 1000 Rademacher codes is then about sqrt(2 ln(N^2)/d0) > 0.5",
        )
    ],
    seed_rule="binomial: margin >= 1 - t on at least k of ctx.seeds(seeds), k = seeds minus the 99th "
    "percentile of Binomial(seeds, fail_prob)",
    templated=True,
    statement="at d0 = ceil(d0_suff(N, t, delta)) (N = {n_subjects}, t = {threshold}, delta = {fail_prob}) "
    "Rademacher codes give margin >= 1 - t (B2's guarantee, failure probability at most delta per "
    "draw): on at least k of {seeds} seeds, k = {seeds} minus the 99th percentile of "
    "Binomial({seeds}, {fail_prob})",
    quick={"n_subjects": 1000, "threshold": 0.5, "fail_prob": 0.01, "seeds": 20, "d0_factor": 1.0},
    full={"n_subjects": 10000, "threshold": 0.5, "fail_prob": 0.01, "seeds": 100, "d0_factor": 1.0},
)
def margin_suff(p, ctx):
    n, t, q, k = p["n_subjects"], p["threshold"], p["fail_prob"], p["seeds"]
    d0 = math.ceil(p["d0_factor"] * B.d0_sufficient(n, t, q))
    margins = []
    for seed in ctx.seeds(k):
        model = _block(n, 1, d0, seed, ctx, kind="rademacher")
        margins.append(model_decoding(model).min_margin)
    judgement = KOfN("margin", 1 - t, ">=", k=binomial_k(k, q), source="theory").judge(
        margins, seeds=ctx.seeds(k)
    )
    # the figures read the block dimension from predicted
    judgement = dataclasses.replace(judgement, predicted={**judgement.predicted, "block_dim": d0})
    return judgement, {
        "margins": margins,
        "d0_suff": B.d0_sufficient(n, t, q),
        "block_dim": d0,
        "failures": int(sum(m < 1 - t for m in margins)),
        "max_failures": binomial_tolerance(k, q),
        "median_margin": float(np.median(margins)),
    }


@claim(
    "geometric.single_hop.margin_nec",
    source=f"{SRC}, bound B3 (volumetric packing)",
    bounds=("geometric.d0_nec",),
    provenance="derived",
    controls=[
        Control(
            "overclaiming_bound",
            {"bound_scale": 20.0},
            "a 'necessary' dimension 20x B3's, which claims more than packing allows: the measured "
            "random-code boundary lies below it, so 'the boundary is at or above the bound' must fail",
        )
    ],
    seed_rule="95% Student-t interval over ctx.seeds(seeds) of d0*/d0_nec",
    templated=True,
    statement="B3 is a necessary condition (below d0_nec(N, gamma) = ln N / ln(1 + sqrt(2/gamma)) no code "
    "of N = {n_subjects} reaches margin gamma = {margin}), so it is not bracketed: the claim measures "
    "where random spherical codes reach gamma (d0*, by bisection over 1 <= d0 <= {d0_max}: its lower "
    "end assumes nothing of B3, so a crossing below d0_nec would contradict it; each of {seeds} seeds) and "
    "reports B3's looseness d0*/d0_nec; the 95% interval of the looseness lies at or above 1 (B3 holds "
    "for the measured codes)",
    quick={"n_subjects": 1000, "margin": 0.5, "seeds": 5, "d0_max": 160, "bound_scale": 1.0},
    full={"n_subjects": 1000, "margin": 0.5, "seeds": 20, "d0_max": 160, "bound_scale": 1.0},
)
def margin_nec(p, ctx):
    """Was a must-fail bracket at d0 = 60 against 110 (9.5x and 17.5x d0_nec = 6.29, not straddling
    B3's boundary). A bracket within 2x of a necessary condition cannot be reproduced with any code
    here: margin 0.5 means pairwise angles of at least 60 degrees, and the known upper bounds on the
    kissing number (at most 869 vectors in dimension 11) rule out 1000 such codes at d0 <= 11; a
    bracket at d0 = 4 / 9 missed the margin on both sides at seeds 0-2 (largest margin 0.040 at 9).
    So, as for the sufficient conditions, the claim measures the true (random-code) boundary and
    reports the looseness. Its old verdict, measured once, is stored (details["previous_criterion"],
    verify.previous).

    The search starts at d0 = 1 (verify.geometric.scaling_setup.threshold_bisect with
    ``assume_b3=False``). It started at ceil(d0_nec) - 1 (the same search assuming B3), which made every
    d0* >= ceil(d0_nec) and the looseness >= 1 by construction; that rule's d0*, measured once, is
    stored (details["previous_criterion"], the bracket before it under "earlier")."""

    n, g = p["n_subjects"], p["margin"]
    seeds = ctx.seeds(p["seeds"])
    bound = B.d0_necessary(n, g) * p["bound_scale"]
    searched = [threshold_bisect(n, g, s, p["d0_max"], assume_b3=False) for s in seeds]
    stars = [d for d, _ in searched]
    factors = [d / bound for d in stars]
    judgement = Threshold("looseness d0*/d0_nec", 1.0, ">=", "theory").judge(
        list(t_interval(factors)), seeds=len(seeds)
    )
    return judgement, {
        "d0_nec": bound,
        "d0_star": stars,
        "factors": factors,
        "search_from": 1,
        "probed": [{str(d): gap for d, gap in sorted(probed.items())} for _, probed in searched],
    }


@claim(
    "geometric.single_hop.pigeonhole_fail",
    source=f"{SRC}, bound B4 (pigeonhole)",
    bounds=("geometric.pigeonhole_dim",),
    provenance="derived",
    demonstrates_failure=True,
    controls=[
        Control(
            "across_log2N",
            lambda p: {"block_dim": math.ceil(math.log2(p["n_subjects"]))},
            "at d0 = ceil(log2 N) = 10 there are 2^10 >= N patterns, so distinct codes exist "
            "and the guarantee 'accuracy = 1' holds",
        )
    ],
    seed_rule="every seed of ctx.seeds(5)",
    statement="with binary codes drawn without replacement (rademacher_distinct) and d0 = floor(log2 N) "
    "< log2 N two attributes share a code, so the guarantee 'accuracy = 1' FAILS on every seed "
    "(ties are errors); at d0 = ceil(log2 N) it does not fail on every seed (bracket around log2 N, "
    "both points measured; resolution max(log2 N / floor, ceil / log2 N) = 1.11 at N = 1000). The "
    "break side is a counting identity, not a measurement: 2^d0 < N sign patterns cannot give N "
    "distinct codes (pigeonhole; details: distinct codes = min(2^d0, N)); the empirical part is the "
    "hold side, where the built model must decode every fact once 2^d0 >= N",
    quick={"n_subjects": 1000, "n_relations": 4, "block_dim": 9, "seeds": 5},
    full={"n_subjects": 1000, "n_relations": 4, "block_dim": 9, "seeds": 5},
)
def pigeonhole_fail(p, ctx):
    """Codes changed: i.i.d. Rademacher signs also collide at d0 = 10-20 (birthday),
    so that demonstration was not at B4's boundary; distinct patterns put the boundary at log2 N. The
    i.i.d. draw's accuracy, measured once, is stored (details["iid_rademacher_accuracy"],
    verify.previous). Judged by a :class:`verify.criteria.Bracket` at
    floor / ceil of log2 N (``block_dim`` is the point on its side); both points are measured."""
    from verify.criteria import Bracket

    n, r, d0 = p["n_subjects"], p["n_relations"], p["block_dim"]
    log2n = B.pigeonhole_dim(n)
    side = "below" if d0 < log2n else "above"
    bracket = Bracket(
        "d0",
        log2n,
        d0 if side == "below" else math.ceil(log2n) - 1,
        d0 if side == "above" else math.floor(log2n) + 1,
    )
    seeds = ctx.seeds(p["seeds"])
    models = {
        d: [_block(n, r, d, s, ctx, kind="rademacher_distinct") for s in seeds]
        for d in (int(bracket.below), int(bracket.above))
    }
    accs = {d: [model_decoding(m).accuracy for m in ms] for d, ms in models.items()}
    breaks = {d: not any(a == 1.0 for a in v) for d, v in accs.items()}  # 'accuracy = 1' fails on every seed
    judgement = bracket.judge_side(side, breaks[int(bracket.below)], breaks[int(bracket.above)])
    distinct = [
        int(len(np.unique(np.round(m.codes * math.sqrt(d0)).astype(int), axis=0))) for m in models[d0]
    ]
    return judgement, {
        "bracket": {
            "bound": "geometric.pigeonhole_dim",
            "quantity": "d0",
            "boundary": log2n,
            "below": bracket.below,
            "above": bracket.above,
            "factor": bracket.factor,
            "breaks_by": "accuracy = 1 fails on every seed (ties are errors); on the below side a "
            "counting identity (2^d0 < N patterns)",
        },
        "log2_N": log2n,
        "accuracy": accs[d0],
        "accuracy_by_d0": {str(d): v for d, v in accs.items()},
        "distinct_codes": distinct,
        "inner_check_accuracy_eq_1": ["PASS" if a == 1.0 else "FAIL" for a in accs[d0]],
        "max_distinct_codes": 2**d0,
        "d0_below_log2_N": d0 < log2n,
    }
