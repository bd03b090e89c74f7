"""Multi-hop claims of *Geometric Factual Recall in Transformers* (B5, docs/geometric.md).

CoT reuses the single-hop block model of constructions.geometric.single_hop; the no-CoT model has one block
per chain (constructions.geometric.multihop). The existence of both constructions and of the
capacity-depth tradeoff is the paper's [abstract]; the dimensions, the lower bound and every
constant are this project's [derived] formalisation (theory.geometric.multihop).

Two former claims, depth_tradeoff (k_max against a typed-in list, and "refused at k_max + 1", the
same inequality) and bound_ratio (a formula divided by a formula), were not real claims; they are unit
tests of theory.geometric.multihop now (tests/geometric/test_multihop.py). The tradeoff itself is
tested as an impossibility by multihop.below_bound_fail (below the 1-bit k-hop bound the one-pass model
misses queries, one bit per block above it the construction answers all) and on trained one-pass
models by multihop.trained_depth (verify.geometric.depth).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from constructions.geometric.multihop import (
    all_multi_hop_queries,
    build_nocot_model,
    cot_trace,
    multi_hop_queries,
    run_cot,
)
from constructions.geometric.single_hop import build_block_model
from constructions.tasks import make_bijections
from theory.geometric import multihop as M
from verify.claims import Control, choice, claim, rng_for, shared
from verify.criteria import Agreement, EverySeed, Threshold, all_of
from verify.geometric.single_hop_setup import SRC, _nocot_accuracy
from verify.measure import decode


@claim(
    "geometric.multihop.cot_khop",
    source=f"{SRC}, CoT construction (abstract); B5, docs/geometric.md",
    bounds=("geometric.d_cot",),
    provenance="abstract",
    controls=[
        Control(
            "no_cot",
            {"passes": "one (last hop)"},
            "one pass instead of k: the single-hop model "
            "answers (x, r_k), the last hop only, which is not the k-hop answer",
        )
    ],
    statement="chain of thought with the single-hop block model (d = R*d0, independent of k) answers "
    "random k-hop chains: accuracy 1 with every step's margin > 0 and every intermediate "
    "step equal to cot_trace (an exact construction: one deterministic run, whose verdict holds for any draw of distinct codes and is tested at base seeds 0-2)",
    quick=dict(n_subjects=1000, n_relations=4, block_dim=21, n_hops=5, n_queries=2000, passes="one per hop"),
    full=dict(n_subjects=1000, n_relations=4, block_dim=21, n_hops=20, n_queries=20000, passes="one per hop"),
)
def cot_khop(p, ctx):
    n, r, d0, k = p["n_subjects"], p["n_relations"], p["block_dim"], p["n_hops"]
    perms = make_bijections(n, r, ctx.rng("geometric.multihop.make_bijections"))
    model = build_block_model(
        perms,
        d0,
        rng=ctx.rng("geometric.multihop.build_block_model"),
        device=ctx.device,
        dtype=ctx.torch_dtype(),
    )
    start, chains, target = multi_hop_queries(
        perms, k, p["n_queries"], ctx.rng("geometric.multihop.multi_hop_queries")
    )
    if choice(p, "passes", ("one per hop", "one (last hop)")) == "one (last hop)":  # the control
        res1 = decode(model.final_hidden(start, chains[:, -1]), model.transformer.unembed, target)
        judgement = _answers(res1.accuracy)
        return dataclasses.replace(
            judgement,
            measured={**judgement.measured, "accuracy": res1.accuracy, "min_margin": res1.min_margin},
        ), {"forward_passes": 1}
    res = run_cot(model, start, chains)
    traces = np.array([cot_trace(x, c, perms) for x, c in zip(start[:200], chains[:200])])
    trace_ok = bool(np.array_equal(res.steps[:200], traces))
    # per-step accuracy against the true intermediate entities (all queries)
    y, per_step = start.copy(), []
    for j in range(k):
        y = perms[chains[:, j], y]
        per_step.append(float(np.mean(res.steps[:, j] == y)))
    acc = float(np.mean((res.final == target) & (res.min_margin > 0)))
    mismatched = (
        int(np.sum(res.steps[:200] != traces)) if res.steps[:200].shape == traces.shape else traces.size
    )
    judgement = all_of(
        answers=_answers(acc),
        trace=Agreement("intermediate steps unequal to cot_trace (first 200 queries)", 0.0).judge(mismatched),
    )
    # the figures read the accuracy from measured
    judgement = dataclasses.replace(
        judgement,
        measured={
            **judgement.measured,
            "accuracy": acc,
            "min_margin": float(res.min_margin.min()),
            "steps_match_cot_trace": trace_ok,
        },
    )
    return judgement, {
        "per_step_accuracy": per_step,
        "dim": M.dim_cot(r, d0),
        "n_hops": k,
        "forward_passes": k,
    }


def _answers(accuracy: float):
    """Accuracy 1 on the k-hop queries; a query counts only with margin > 0 (run_cot's final step,
    and decode's tie rule), so the old rule's "min margin > 0" is part of it."""
    return Threshold("k-hop accuracy (margin > 0)", 1.0, ">=", "theory").judge(accuracy)


@claim(
    "geometric.multihop.nocot_blocks",
    source=f"{SRC}, multi-hop without CoT (abstract); B5, docs/geometric.md",
    bounds=("geometric.d_nocot",),
    provenance="abstract",
    controls=[
        Control(
            "reversed_chain",
            {"chain_order": "reversed"},
            "the chain tokens in reverse "
            "order open the group of (r_k..r_1), whose answer differs unless the chain is a "
            "palindrome",
        )
    ],
    statement="the R^k-block construction (d = R^k d0, gates opened by a sum of per-position relation "
    "embeddings) answers all N*R^k k-hop queries in one pass: accuracy 1, selector output "
    "equal to u_{pi_rho(x)} to 1e-9, for every k listed (an exact construction: one deterministic run, whose verdict holds for any draw of distinct codes and is tested at base seeds 0-2)",
    quick=dict(n_subjects=500, n_relations=3, hops=[1, 2, 3], block_dim=19, chain_order="as given"),
    full=dict(n_subjects=500, n_relations=4, hops=[1, 2, 3, 4], block_dim=19, chain_order="as given"),
)
def nocot_blocks(p, ctx):
    n, r, d0 = p["n_subjects"], p["n_relations"], p["block_dim"]
    perms = make_bijections(n, r, ctx.rng("geometric.multihop.make_bijections"))
    reverse = choice(p, "chain_order", ("as given", "reversed")) == "reversed"  # the control
    rows = []
    for k in p["hops"]:
        model = build_nocot_model(perms, k, d0, rng=ctx.rng("geometric.multihop.build_nocot_model"))
        start, chains, target = all_multi_hop_queries(perms, k)
        if reverse:
            chains = chains[:, ::-1].copy()
        m = _nocot_accuracy(model, start, chains, target)
        rows.append(
            {"k": k, **m, "dim": model.dim, "dim_predicted": M.dim_nocot(r, k, d0), **model.param_counts()}
        )
    judgement = all_of(
        accuracy=Threshold("smallest accuracy over k", 1.0, ">=", "theory").judge(
            min(row["accuracy"] for row in rows)
        ),
        selector=Agreement("max |selector output - u_target| over k", 1e-9, strict=True).judge(
            max(row["max_abs_error"] for row in rows)
        ),
        dim=Agreement("max |model dimension - R^k d0| over k", 0.0).judge(
            max(abs(row["dim"] - row["dim_predicted"]) for row in rows)
        ),
    )
    return judgement, {
        "rows": rows,
        "ceil_3lnN": math.ceil(3 * math.log(n)),
        "accuracy": [row["accuracy"] for row in rows],
        "dims": [row["dim"] for row in rows],
    }


def _single_fail_rows(ctx, seed: int, n: int, r: int, block_dims: list, r2_blocks: bool) -> list[dict]:
    """One seed's draw of nocot_single_fail: the one-pass 2-hop accuracy at each d0 of ``block_dims``
    with R blocks (or, ``r2_blocks``, the R^2-block construction of the control)."""
    perms = make_bijections(n, r, rng_for(seed, "geometric.multihop.make_bijections"))
    start, chains, target = all_multi_hop_queries(perms, 2)
    rows = []
    for d0 in block_dims:
        if r2_blocks:
            model = build_nocot_model(
                perms, 2, d0, rng=rng_for(seed, "geometric.multihop.build_nocot_model", d0)
            )
            m = _nocot_accuracy(model, start, chains, target)
            rows.append({"block_dim": d0, "accuracy": m["accuracy"], "dim": r * r * d0})
            continue
        model = build_block_model(
            perms,
            d0,
            rng=rng_for(seed, "geometric.multihop.build_block_model", d0),
            device=ctx.device,
            dtype=ctx.torch_dtype(),
        )
        hidden = model.final_hidden(start, chains[:, 0])
        res = decode(hidden, model.transformer.unembed, target)
        first_hop = decode(hidden, model.transformer.unembed, perms[chains[:, 0], start]).accuracy
        rows.append(
            {"block_dim": d0, "accuracy": res.accuracy, "decodes_first_hop": first_hop, "dim": r * d0}
        )
    return rows


@claim(
    "geometric.multihop.nocot_single_fail",
    source=f"{SRC}, capacity-depth tradeoff (abstract)",
    provenance="derived",
    demonstrates_failure=True,
    controls=[
        Control(
            "across_R2_blocks",
            {"blocks": "R^2"},
            "the same d0 with R^2 blocks (one per "
            "2-hop chain, d = R^2 d0, the one-pass construction) answers every 2-hop query in one pass",
        )
    ],
    templated=True,
    statement="single-hop embeddings (R blocks, d = R*d0) cannot answer 2-hop queries in one pass: with the "
    "gate of block r_1 open (the best fact-free choice) accuracy <= 5/N (5x chance, a convention; "
    "N = {n_subjects}, R = {n_relations}) at every d0 of {block_dims} on every one of {seeds} seeds, so the failure is in the number "
    "of blocks, not in d0; with R^2 blocks at the same d0 the guarantee 'accuracy = 1' holds (the "
    "control; not a bracket around a theory boundary: R^2 blocks are the construction's sufficient "
    "count, and no theory bound places the boundary between R and R^2 blocks). It tests a "
    "convention, cites no bound (d_nocot is not measured here: the R^2-block dimension is "
    "multihop.nocot_blocks' claim) and brackets none",
    seed_rule="every seed of ctx.seeds(seeds): its own bijections and codes",
    quick={"n_subjects": 500, "n_relations": 3, "block_dims": [19, 200], "blocks": "R", "seeds": 6},
    full={"n_subjects": 500, "n_relations": 3, "block_dims": [19, 200], "blocks": "R", "seeds": 6},
)
def nocot_single_fail(p, ctx):
    """The failure does not depend on d0 (it persists at d0 = 200); what separates it from the control is
    the block count, R blocks against the R^2 of the one-pass construction, which the control builds
    at the same d0. That is not a :class:`verify.criteria.Bracket`: R^2 blocks are only sufficient (the
    construction), and no theory bound puts a boundary between R and R^2 blocks, so the rule stays a
    threshold on the accuracy. "accuracy = 1 fails" is part of it (5/N < 1). It cited d_nocot without
    measuring a boundary; it now cites no bound and says it tests a convention
    (details["tests_convention"]). Judged on every one of ``seeds`` draws (an EverySeed rule, so verify
    oc simulates it); the base seed's draw is the one the claim judged alone before. Six seeds:
    ``python -m verify oc`` on a 3-seed record of pilot base seed 100 (largest accuracies 0.0007-0.002
    against 5/N = 0.01) let the 'at the threshold' alternative pass 0.11 of the time at 3 seeds, 0.01
    at 6."""
    n, r = p["n_subjects"], p["n_relations"]
    if n <= 5:
        raise ValueError(f"n_subjects={n}: the criterion accuracy <= 5/N needs N > 5 (5/N below 1)")
    r2_blocks = choice(p, "blocks", ("R", "R^2")) == "R^2"  # the control
    seeds = ctx.seeds(p["seeds"])
    per_seed = [_single_fail_rows(ctx, seed, n, r, p["block_dims"], r2_blocks) for seed in seeds]
    rows = per_seed[0]  # the base seed's draw (the figures read it)
    accs = [row["accuracy"] for row in rows]
    guarantee = [a == 1.0 for a in accs]
    largest = [max(row["accuracy"] for row in seed_rows) for seed_rows in per_seed]
    judgement = EverySeed("largest 2-hop accuracy over d0", 5 / n, "<=", "convention").judge(largest, seeds)
    return judgement, {
        "tests_convention": "accuracy <= 5/N (5x chance) with R blocks, against accuracy 1 with R^2 "
        "blocks at the same d0; no theory boundary lies between R and R^2 blocks",
        "chance": 1 / n,
        "rows": rows,
        "rows_per_seed": per_seed,
        "seeds": seeds,
        "inner_check_accuracy_eq_1": ["PASS" if g else "FAIL" for g in guarantee],
        "dim_needed_nocot": [M.dim_nocot(r, 2, d0) for d0 in p["block_dims"]],
    }


@claim(
    "geometric.multihop.below_bound_fail",
    source=f"{SRC}, capacity-depth tradeoff and lower bound (abstract)",
    bounds=("geometric.khop_dim_bound",),
    provenance="derived",
    demonstrates_failure=True,
    controls=[
        Control(
            "at_construction",
            {"judged_d0": "ceil(log2 N)"},
            "one bit more per block, d0 = "
            "ceil(log2 N): d = R^k d0 is at or above the 1-bit bound and 2^d0 >= N distinct sign codes "
            "exist, so the R^k-block construction answers every k-hop query (accuracy 1)",
        )
    ],
    seed_rule="every seed of ctx.seeds(3) at every k (the code assignment is the seed's)",
    statement="the k-hop lower bound as an impossibility, at p = 1 bit per coordinate: with sign codes "
    "(+-1/sqrt(d0), a fact-independent decoder) and d = R^k d0 below khop_dim_bound(N, R, k, p=1) = "
    "R^k log2(N + 1 - I_k), the one-pass R^k-block model misses some of the N*R^k queries "
    "(accuracy < 1, ties counted as errors) for k = 1, 2, 3 on every seed; at d0 = ceil(log2 N), "
    "above the bound by less than R^k coordinates, it does not fail on every seed (a bracket per k, "
    "both sides measured by the claim; resolution about 1.12 at N = 500). The break side is a "
    "counting identity, not a measurement (2^d0 < N sign codes: two attributes share one, pigeonhole); "
    "the empirical part is the hold side, where the built model must answer every query",
    quick=dict(n_subjects=500, n_relations=3, hops=[1, 2, 3], block_dim=8, seeds=3, judged_d0="block_dim"),
    full=dict(
        n_subjects=2000, n_relations=3, hops=[1, 2, 3, 4], block_dim=10, seeds=5, judged_d0="block_dim"
    ),
)
def below_bound_fail(p, ctx):
    """The depth tradeoff as an impossibility. At p = 32 bits the bound R^k log2(N + 1 - I_k)/32 lies below
    R^k (no block model can be built under it, and in exact arithmetic any distinct real codes already
    succeed at d0 = 2, docs/geometric.md#setting), so the bracket is placed where the bound bites: one bit
    per coordinate. There the theorem of khop_bits says every fact-independent decoder fails on some table
    below the bound, and the construction with distinct sign codes matches it at d0 = ceil(log2 N). The
    demonstration runs the construction on random tables; its failure is the pigeonhole tie the counting
    argument predicts (2^d0 < N codes)."""
    from verify.criteria import Bracket, all_of

    n, r, hops = p["n_subjects"], p["n_relations"], list(p["hops"])
    # the side of the bracket judged: d0 = block_dim below the bound, or (the control) ceil(log2 N)
    side = "above" if choice(p, "judged_d0", ("block_dim", "ceil(log2 N)")) == "ceil(log2 N)" else "below"
    below_d0, above_d0 = p["block_dim"], math.ceil(math.log2(n))
    bounds = {k: M.khop_dim_lower_bound(n, r, k, bits_per_param=1) for k in hops}
    for k in hops:
        if side == "below" and not M.dim_nocot(r, k, below_d0) < bounds[k]:
            raise ValueError(
                f"block_dim={below_d0} gives d = {M.dim_nocot(r, k, below_d0)} >= the 1-bit k-hop bound "
                f"{bounds[k]:.2f} at k={k}: the demonstration's hypothesis (d below the lower bound) is violated"
            )
    rows = {d0: _below_bound_rows(ctx, n, r, hops, d0, p["seeds"]) for d0 in (below_d0, above_d0)}

    def breaks(d0, k):  # 'accuracy = 1' fails on every seed at this k
        return not any(row["accuracy"] == 1.0 for row in rows[d0] if row["k"] == k)

    judgement = all_of(
        **{
            f"k={k}": Bracket(
                f"d at k={k}", bounds[k], M.dim_nocot(r, k, below_d0), M.dim_nocot(r, k, above_d0)
            ).judge_side(side, breaks(below_d0, k), breaks(above_d0, k))
            for k in hops
        }
    )
    d0 = below_d0 if side == "below" else above_d0
    factors = {
        k: max(bounds[k] / M.dim_nocot(r, k, below_d0), M.dim_nocot(r, k, above_d0) / bounds[k]) for k in hops
    }
    worst = max(hops, key=factors.get)
    return judgement, {
        "bracket": {  # the widest of the brackets per k
            "bound": "geometric.khop_dim_bound",  # at p = 1 bit per coordinate
            "quantity": f"d at k={worst}",
            "boundary": bounds[worst],
            "below": M.dim_nocot(r, worst, below_d0),
            "above": M.dim_nocot(r, worst, above_d0),
            "factor": factors[worst],
            "breaks_by": "accuracy = 1 fails on every seed (ties are errors); on the below side a "
            "counting identity (2^d0 < N codes)",
        },
        "rows": rows[d0],
        "block_dim": d0,
        "rows_below": rows[below_d0],
        "rows_above": rows[above_d0],
        "block_dim_below": below_d0,
        "block_dim_above": above_d0,
        "bound_1bit": {str(k): v for k, v in bounds.items()},
        "inner_check_accuracy_eq_1": ["PASS" if row["accuracy"] == 1.0 else "FAIL" for row in rows[d0]],
    }


@shared
def _below_bound_rows(ctx, n: int, r: int, hops: list, d0: int, n_seeds: int) -> list[dict]:
    """Accuracy of the one-pass R^k-block model with distinct sign codes of width d0 on every
    k-hop query, per k and seed of ctx.seeds(n_seeds) (shared by the claim and its control)."""
    rows = []
    for k in hops:
        bound = M.khop_dim_lower_bound(n, r, k, bits_per_param=1)
        for seed in ctx.seeds(n_seeds):
            perms = make_bijections(n, r, rng_for(seed, "geometric.multihop.make_bijections", n, r))
            model = build_nocot_model(
                perms,
                k,
                d0,
                rng=rng_for(seed, "geometric.multihop.build_nocot_model", n, d0, k),
                code_kind="rademacher_distinct",
            )
            start, chains, target = all_multi_hop_queries(perms, k)
            m = _nocot_accuracy(model, start, chains, target)
            rows.append(
                {
                    "k": k,
                    "seed": seed,
                    "dim": M.dim_nocot(r, k, d0),
                    "bound_1bit": bound,
                    "accuracy": m["accuracy"],
                    "min_margin": m["min_margin"],
                    "n_queries": m["n_queries"],
                }
            )
    return rows
