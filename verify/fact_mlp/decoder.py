"""Claims of the fact_mlp area, part 1b: the random-projection decoder and its bound B2.

docs/fact_mlp.md: the decoder, B2 (theory.fact_mlp.bounds.jl_code_dim, with the proof of its
constant in theory.fact_mlp.bounds.pair_failure_bound), the experiments jl_decoder and
jl_too_small. The scaling experiments (mc_log_scaling, the 1/rho^2 dependence at fixed n_V, the
pair tail of B2's proof, geometry_penalty) are in :mod:`verify.fact_mlp.decoder_scaling`; the
helpers both use (the values and their decodability, decoding through Rp, the smallest storing
code dimension) in :mod:`verify.fact_mlp.decoder_setup`.
"""

from __future__ import annotations

import math

from verify.claims import Control, choice, claim, rng_for
from verify.criteria import KOfN
from verify.fact_mlp.decoder_setup import (
    CODES,
    RANDOM_CODES,
    SRC,
    _spherical,
    decoder_margin,
    half_success_dim,
    shared_rho,
)


@claim(
    "fact_mlp.decoder.jl_decoder",
    source=SRC + ", B2",
    provenance="derived",
    bounds=("fact_mlp.jl_code_dim",),
    templated=True,
    statement="at B2's sufficient code dimension m_c = ceil(8 ln(n_V)/rho^2) (rho measured on the "
    "value draw; B2 bounds the failure probability of one draw of Rp by 1/(2 n_V^2)) the "
    "random-projection decoder Rp^T Rp u*_j decodes every value (d={d}, n_V={n_values}) in all but "
    "<= {max_failures} of {draws} draws of Rp: the draw's smallest decoding margin over the values "
    "is > 0 (a tie or a wrong value counts as <= 0)",
    quick={"n_values": 512, "d": 256, "code_dim": 0, "draws": 10, "max_failures": 1},
    full={"n_values": 10000, "d": 256, "code_dim": 0, "draws": 10, "max_failures": 1},
    seed_rule="at most 1 failing draw of Rp among 10 (drawn from the run's seed)",
    controls=[
        Control(
            "below_bound",
            {"code_dim": 8},
            "m_c = 8 is far below ln(n_V)/rho^2 (about 14 at quick, 23 at full scale): most draws must fail",
        )
    ],
)
def check_jl_decoder(p, ctx):
    """B2's setting: ``code_dim`` 0 means m_c = ceil(jl_code_dim(n_V, rho)), B2 itself (its
    constant 8, no factor of ours), so the setting sits inside B2's hypothesis at every n_V; an
    explicit ``code_dim`` (the control) is used as given.

    Changed setting: m_c was fixed at 48 at both scales, 0.43 of B2 at quick scale (n_V = 512,
    B2 = 111) and 0.26 at full (n_V = 10,000, B2 = 182), where B2 promises nothing; the full run
    of 2026-12-01 then missed a few values in 8 of 10 draws. That setting demonstrated no boundary
    (B2 is a sufficient condition only, 2-4x loose, jl_too_small: nothing is guaranteed to break
    below it, and m_c = 48 sits a factor 4 below it, not just across), so it is not kept as a
    must-fail claim. The constant is B2's own (8, no factor of ours); pilot base seeds 100-102 at
    quick scale (m_c = 114, 114, 115; rho 0.661-0.663) decoded every value in 10 of 10 draws
    (smallest margins 0.30-0.42) and base seed 100 at full scale (m_c = 182, rho 0.637) in 10 of 10
    (0.33-0.38); the control m_c = 8 failed on each.

    The criterion is the old one (every value decoded in >= 9 of 10 draws) read on each draw's
    smallest decoding margin (the draw's margin, or min(margin, 0) when a value is not decoded,
    ties included), so the per-draw values vary and ``verify oc`` can simulate it."""
    from theory.fact_mlp.bounds import jl_code_dim

    V, res = shared_rho(ctx, p["n_values"], p["d"], salt=1)
    b2 = jl_code_dim(p["n_values"], res.rho)
    code_dim = int(p["code_dim"]) or math.ceil(b2)
    if code_dim > p["d"]:
        raise ValueError(
            f"B2's code dimension {code_dim} exceeds d = {p['d']}: the decoder's hypothesis m_c <= d fails"
        )
    rng = ctx.rng("fact_mlp.decoder.draws_ok")
    per_draw = [decoder_margin(V, res.separators, code_dim, rng) for _ in range(p["draws"])]
    accs = [a for a, _ in per_draw]
    margins = [m for _, m in per_draw]
    rule = KOfN(
        "smallest decoding margin over the values",
        0.0,
        ">",
        k=p["draws"] - p["max_failures"],
        source="theory",
        unit="draws",
    )
    return rule.judge(margins, seeds=list(range(p["draws"]))), {
        "failures": sum(a < 1.0 for a in accs),
        "accuracies": accs,
        "margins": margins,
        "rho": res.rho,
        "code_dim": code_dim,
        "b2_code_dim": b2,
        "code_dim_over_b2": code_dim / b2,
        "ln_nv_over_rho2": math.log(p["n_values"]) / res.rho**2,
    }


@claim(
    "fact_mlp.decoder.jl_too_small",
    source=SRC + ", B2",
    provenance="derived",
    bounds=("fact_mlp.jl_code_dim",),
    templated=True,
    statement="B2 is a sufficient condition, and loose: for n_V = {n_values} spherical values in d = {d} "
    "(one value draw per seed, {seeds} seeds), the smallest m_c at which the random-projection decoder "
    "decodes every value in at least half of {draws} draws of Rp (searched in 1..2 m_B2) lies at or "
    "below B2's m_B2 = 2 ln(n_V (n_V - 1)) / ln(1/(1 - rho^2)) for failure probability 1/2; the "
    "looseness factor m_B2 / measured m_c has a 95% Student-t interval over seeds at or above 1 "
    "(inconclusive when it straddles 1), and is reported",
    quick={"n_values": 256, "d": 32, "draws": 20, "seeds": 3, "codes": "separators"},
    full={"n_values": 256, "d": 32, "draws": 40, "seeds": 10, "codes": "separators"},
    seed_rule="one value draw per seed of seed..seed+seeds-1; 95% Student-t interval over seeds of the "
    "looseness factor",
    controls=[RANDOM_CODES],
)
def check_jl_too_small(p, ctx):
    """Was a must-fail demonstration (m_c = 4 breaks, ceil(ln n_V / rho^2) = 19 holds), but B2 is
    only a sufficient condition: below it nothing is guaranteed to break, so the claim now measures
    the true boundary and B2's looseness. The failure probability 1/2 makes the measured event
    (every value decoded in half the draws) the one B2 bounds (jl_code_dim_delta); B2 as
    registered (failure probability 1/(2 n_V^2), 8 ln n_V / rho^2) and its factor are in details.
    Control RANDOM_CODES: no m_c decodes, so the factor falls below 1. The previous criterion's
    result on the base seed's value draw was measured once and is stored
    (details["previous_criterion"], verify.previous). Sizes and draws were
    tried on pilot seeds 100-102 (measured m_c 34-35 against m_B2 61-64: factors 1.75-1.87; random
    codes decode at no m_c up to 2 m_B2), not on a judged seed."""
    from dataclasses import replace

    from theory.fact_mlp.bounds import jl_code_dim, jl_code_dim_delta
    from verify.criteria import Threshold
    from verify.measure import t_interval

    n, d = p["n_values"], p["d"]
    random_codes = choice(p, "codes", CODES) == "random unit vectors"  # RANDOM_CODES, the control
    rows = []
    for s in ctx.seeds(p["seeds"]):
        V, res = shared_rho(replace(ctx, seed=s), n, d)
        seps = (
            _spherical(n, d, rng_for(s, "fact_mlp.decoder.spherical", n)) if random_codes else res.separators
        )
        m_b2 = jl_code_dim_delta(n, res.rho, 0.5)
        m_max = math.ceil(2 * m_b2)
        m = half_success_dim(V, seps, p["draws"], rng_for(s, "fact_mlp.decoder.half_success_dim"), m_max)
        rows.append(
            {
                "seed": s,
                "rho": res.rho,
                "m_b2_half": m_b2,
                "measured_m_c": m,
                # above the searched range: the factor is at most m_B2 / m_max
                "factor": m_b2 / (m if m is not None else m_max),
                "b2_factor": jl_code_dim(n, res.rho) / (m if m is not None else m_max),
                "ln_nv_over_rho2": math.log(n) / res.rho**2,
            }
        )
    factors = [r["factor"] for r in rows]
    interval = t_interval(factors)
    judgement = Threshold("looseness factor m_B2(1/2) / measured m_c", 1.0, ">=", "theory").judge(
        list(interval), seeds=len(rows)
    )
    details = {
        "rows": rows,
        "factor_interval95": list(interval),
        "b2_factor_interval95": list(t_interval([r["b2_factor"] for r in rows])),
        "codes": "random unit vectors" if random_codes else "separators u*_j",
    }
    return judgement, details
