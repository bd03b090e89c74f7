"""Claim of the fact_mlp area: the bucketed builder, for the large fact sets of the full-scale claims.

:func:`constructions.fact_mlp.large.build_large` is checked for exactness (every fact decoded with
margin > 0 by the argmax over the value table, codes equal to the targets) and for its parameter
cost per fact against the joint construction (:mod:`constructions.fact_mlp.encoder`) built on a
fact set of the same (d, n_V) with the same code dimension (m_c = d, orthonormal decoder).
The build-time rows F = 10^3 .. 10^6 are ``python -m verify bench fact_mlp_build``.
"""

from __future__ import annotations

import math

import numpy as np

from theory.papers import paper
from verify.claims import Control, claim, rng_for, shared
from verify.criteria import EverySeed, all_of

SRC = paper("fact_mlp")


@shared
def _large_facts(ctx, n_facts: int, n_values: int, d: int, seed: int) -> tuple:
    """The spherical fact set of ``seed`` and its decodability, once per run (the claim and its
    bucket controls share them)."""
    from constructions.fact_mlp.facts import fact_set
    from theory.fact_mlp.rho import decodability

    facts = fact_set(n_facts, n_values, d, rng_for(seed, "fact_mlp.large.fact_set"))
    return facts, decodability(facts.values)


def large_point(ctx, n_facts: int, n_values: int, d: int, bucket: int, seed: int) -> tuple:
    """Build the bucketed MLP on a spherical fact set drawn from ``seed`` (shared in ``ctx``);
    decode every fact. Returns (mlp, accuracy, min margin, max |code - target|).

    >>> from verify.claims import Context
    >>> mlp, acc, margin, code_err = large_point(Context(), 256, 16, 16, 16, 0)
    >>> acc, margin > 0, code_err < 1e-8
    (1.0, True, True)
    """
    from constructions.fact_mlp.facts import decode_numpy
    from constructions.fact_mlp.large import build_large

    facts, rho = _large_facts(ctx, n_facts, n_values, d, seed)
    mlp = build_large(
        facts.keys,
        facts.values,
        facts.fact_map,
        seed=seed,
        bucket=bucket,
        allow_overfull=bucket > d,
        decodability=rho,
    )
    acc, margin = decode_numpy(mlp.forward(facts.keys), facts.values, facts.fact_map)
    code_err = float(np.max(np.abs(mlp.code(facts.keys) - mlp.info["value_codes"][facts.fact_map])))
    return mlp, acc, margin, code_err


@shared
def joint_params_per_fact(ctx, n_facts: int, n_values: int, d: int, seed: int) -> tuple[float, float, float]:
    """P_unique / F, P_std / F and the accuracy of the joint construction (m_c = d, orthonormal
    decoder) on a fresh fact set of ``seed``, once per run (the bucket controls do not change it).

    >>> from verify.claims import Context
    >>> joint_params_per_fact(Context(), 64, 16, 16, 0)
    (21.0, 48.0, 1.0)
    """
    from constructions.fact_mlp.encoder import build_encoder_decoder
    from constructions.fact_mlp.facts import fact_set

    rng = rng_for(seed, "fact_mlp.large.rng")
    facts = fact_set(n_facts, n_values, d, rng)
    mlp = build_encoder_decoder(facts, d, rng, orthogonal=True)
    return mlp.params_unique / n_facts, mlp.params_standard / n_facts, mlp.decode()[0]


@claim(
    "fact_mlp.large.bucketed_exact",
    source=SRC + ", scale requirement of the construction",
    provenance="derived",
    templated=True,
    statement="the bucketed builder (one gate direction, slabs of <= {bucket} keys, trapezoid gates) "
    "decodes every one of F = {n_facts} facts (accuracy 1, min margin > 0, max |code - target| < 1e-8) "
    "with unique parameters per fact at most 2x the joint construction's (on {joint_facts} facts) at "
    "equal (d = {d}, n_V = {n_values}, m_c = d), on every one of {seeds} seeds",
    quick={"n_facts": 8192, "n_values": 256, "d": 64, "bucket": 64, "joint_facts": 1024, "seeds": 6},
    full={"n_facts": 100000, "n_values": 1024, "d": 64, "bucket": 64, "joint_facts": 4096, "seeds": 6},
    controls=[
        Control(
            "overfull_buckets",
            lambda p: {"bucket": 2 * p["d"]},
            "slabs of 2d keys have too few gates (d x m_c unknowns for 2d x m_c "
            "equations): the least-squares fit cannot be exact, so facts are lost",
        ),
        Control(
            "small_buckets",
            lambda p: {"bucket": p["d"] // 4},
            "slabs of d/4 keys stay exact but need about 4x the joint construction's "
            "parameters per fact, so the 2x parameter criterion must fail",
        ),
    ],
    seed_rule="every seed of seed..seed+5",
)
def check_bucketed_exact(p, ctx):
    """Seeds 3 -> 6: at 3 seeds the rule passed the alternative 'margin at the threshold' 0.105 of
    the time (verify oc on the seed-0 record of revision 34bf7b3: inconclusive); the same
    simulation put every named alternative at <= 0.05 from 6 seeds, the budget taken here (from
    the characteristic, not from a verdict)."""
    d, n_v, rows = p["d"], p["n_values"], []
    for s in ctx.seeds(p["seeds"]):
        mlp, acc, margin, code_err = large_point(ctx, p["n_facts"], n_v, d, p["bucket"], s)
        joint_ppf, joint_std_ppf, joint_acc = joint_params_per_fact(ctx, p["joint_facts"], n_v, d, s)
        ratio = (mlp.n_params / p["n_facts"]) / joint_ppf
        ok = acc == 1.0 and margin > 0 and code_err < 1e-8 and ratio <= 2.0
        rows.append(
            {
                "seed": s,
                "accuracy": acc,
                "min_margin": margin,
                "max_code_error": code_err,
                "n_params": mlp.n_params,
                "params_per_fact": mlp.n_params / p["n_facts"],
                "joint_params_per_fact": joint_ppf,
                "joint_accuracy": joint_acc,
                "ratio_to_joint": ratio,
                "n_buckets": mlp.n_buckets,
                # not the criterion: both as standard ReLU-gated MLPs (3 d m [+ m]); the
                # trapezoid gate costs two ReLU gate units per slab boundary
                "ratio_std_relu_form_to_joint_std": (mlp.n_params_relu / p["n_facts"]) / joint_std_ppf,
                "bucket_mean": mlp.info["bucket_mean"],
                "bits_per_param": p["n_facts"] * math.log2(n_v) / mlp.n_params,
                "passed": ok,
            }
        )
    seeds = [r["seed"] for r in rows]

    def every(quantity, value, side, source, key):
        return EverySeed(quantity, value, side, source).judge([r[key] for r in rows], seeds=seeds)

    judgement = all_of(
        accuracy=every("accuracy", 1.0, ">=", "theory", "accuracy"),
        margin=every("min margin", 0.0, ">", "theory", "min_margin"),
        code_error=every("max |code - target|", 1e-8, "<", "convention", "max_code_error"),
        params=every("unique parameters per fact / joint's", 2.0, "<=", "convention", "ratio_to_joint"),
    )
    return judgement, {
        "per_seed": rows,
        "log2_n_values": math.log2(n_v),
    }
