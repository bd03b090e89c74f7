"""Claims of the fact_mlp area, part 1c: how the decoder's code dimension scales (B2).

docs/fact_mlp.md: the smallest storing code dimension m_c* against ln(n_V)/rho^2 (mc_log_scaling)
and against 1/rho^2 at fixed n_V (mc_rho_scaling), the pair tail behind B2's constant
(b2_pair_tail) and the geometry penalty of the abstract (geometry_penalty). Uses the helpers of
:mod:`verify.fact_mlp.decoder_setup`, shared with :mod:`verify.fact_mlp.decoder`.
"""

from __future__ import annotations

import math

import numpy as np

from verify.claims import Control, choice, claim, rng_for, shared
from verify.criteria import Agreement, EverySeed, Threshold, all_of
from verify.fact_mlp.decoder_setup import CODES, RANDOM_CODES, SRC, _spherical, shared_rho, smallest_code_dim

MC_GRID = [2, 3, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 128, 160, 192, 256]


def mc_star(
    ctx,
    n_values: int,
    d: int,
    beta: float = 0.0,
    draws: int = 10,
    need: int = 9,
    salt: int = 1,
    random_codes: bool = False,
) -> tuple[float, float]:
    """Smallest m_c in MC_GRID decoding every value in >= need of draws draws (inf when none),
    and rho. random_codes: the code of value j is a random unit vector instead of its separator
    u*_j (the hypothesis of B2 dropped).

    >>> from verify.claims import Context
    >>> m, rho = mc_star(Context(seed=0), 8, 16)
    >>> m, round(rho, 3)
    (12, 0.591)
    >>> mc_star(Context(seed=0), 8, 16, random_codes=True)[0]
    inf
    """
    V, res = shared_rho(ctx, n_values, d, beta, salt=salt)
    seps = res.separators
    if random_codes:
        seps = _spherical(len(V), d, ctx.rng("fact_mlp.decoder_scaling.mc_star.spherical", n_values))
    m = smallest_code_dim(
        V,
        seps,
        draws,
        need,
        ctx.rng("fact_mlp.decoder_scaling.mc_star.smallest_code_dim", n_values, int(10 * beta)),
        MC_GRID,
    )
    return (float("inf") if m is None else m), res.rho


@claim(
    "fact_mlp.decoder.mc_log_scaling",
    source=SRC + ", B2 (optimal scaling, abstract)",
    bounds=("fact_mlp.jl_code_dim",),
    provenance="derived",
    templated=True,
    statement="at d = {d}, n_V in {n_values}, the smallest m_c with accuracy 1 in >= {need}/{draws} draws "
    "is found at every n_V and fits m_c* = a ln(n_V)/rho^2 + b with a > 0, and m_c* <= B2 = "
    "8 ln(n_V)/rho^2 (proved sufficient, theory.fact_mlp.bounds.jl_code_dim) at every n_V; rho barely "
    "varies here (0.66-0.69 at quick scale), see decoder.mc_rho_scaling for the 1/rho^2 dependence",
    quick={"n_values": [64, 128, 256, 512], "d": 256, "draws": 10, "need": 9, "codes": "separators"},
    full={"n_values": [64, 256, 1024, 4096, 16384], "d": 256, "draws": 10, "need": 9, "codes": "separators"},
    controls=[RANDOM_CODES],
)
def check_mc_log_scaling(p, ctx):
    from theory.fact_mlp.bounds import jl_code_dim

    random_codes = choice(p, "codes", CODES) == "random unit vectors"  # RANDOM_CODES, the control
    xs, ms, b2 = [], [], []
    for n in p["n_values"]:
        m, rho = mc_star(ctx, n, p["d"], draws=p["draws"], need=p["need"], random_codes=random_codes)
        xs.append(math.log(n) / rho**2)
        ms.append(m)
        b2.append(jl_code_dim(n, rho))
    finite = all(math.isfinite(m) for m in ms)
    a, b = np.polyfit(xs, ms, 1) if finite else (float("nan"), float("nan"))
    found = [(n, m, q) for n, m, q in zip(p["n_values"], ms, b2) if math.isfinite(m)]
    parts = {"found": Agreement("n_V at which no m_c of the grid decodes", 0).judge(len(ms) - len(found))}
    if finite:  # a fit needs every n_V's m_c*
        parts["slope"] = Threshold("fitted a", 0.0, ">", "theory").judge(float(a))
    if found:
        parts["b2"] = EverySeed("m_c* / B2", 1.0, "<=", "theory", unit="n_V values").judge(
            [m / q for _, m, q in found], seeds=[n for n, _, _ in found]
        )
    return all_of(**parts), {
        "n_values": list(p["n_values"]),
        "ln_nv_over_rho2": xs,
        "mc_star": [m if math.isfinite(m) else None for m in ms],
        "b2": b2,
        "fit_a": float(a) if finite else None,
        "fit_b": float(b) if finite else None,
    }


@shared
def _scaled_values(ctx, n_values: int, d: int, betas: list, isotropic: bool) -> list:
    """Per beta of ``betas``: the seed's spherical values spiked by beta along one random direction
    (isotropic: scaled to (1 + beta) V) and their decodability, cached per run."""
    from constructions.fact_mlp.facts import spike
    from theory.fact_mlp.rho import decodability

    rng = ctx.rng("fact_mlp.decoder_scaling.check_mc_rho_scaling.rng")
    V = _spherical(n_values, d, rng)
    u = _spherical(1, d, rng)[0]
    out = []
    for beta in betas:
        Vb = (1.0 + beta) * V if isotropic else (spike(V, beta, u) if beta > 0 else V)
        out.append((Vb, decodability(Vb)))
    return out


@claim(
    "fact_mlp.decoder.mc_rho_scaling",
    source=SRC + ", B2 (abstract: geometry-dependent penalty)",
    provenance="derived",
    templated=True,
    statement="at fixed n_V = {n_values}, d = {d}, spiking the values (beta in {betas}) moves rho "
    "from about 0.57 to 0.2; the smallest m_c with accuracy 1 in >= {need}/{draws} draws of "
    "Rp grows like a power of 1/rho^2 with log-log slope in [0.6, 1.4] (pilot seeds "
    "100-101: 0.76-0.84) and stays <= B2 = 8 ln(n_V)/rho^2 at every beta, on each "
    "of {seeds} value draws",
    quick={
        "n_values": 128,
        "d": 32,
        "betas": [0.0, 3.0, 8.0, 20.0],
        "draws": 20,
        "need": 18,
        "seeds": 6,
        "scaling": "spike",  # isotropic: the control's V -> (1 + beta) V
        "codes": "separators",
    },
    seed_rule="every seed of seed..seed+5 (one value draw each)",
    controls=[
        Control(
            "isotropic",
            {"scaling": "isotropic"},
            "spikes replaced by the isotropic scaling V -> (1 + beta) V: rho does not "
            "move, so no slope can be fitted and the criterion must fail",
        ),
        RANDOM_CODES,
    ],
    bounds=("fact_mlp.jl_code_dim",),
)
def check_mc_rho_scaling(p, ctx):
    """Seeds 3 -> 6: at 3 value draws the rule passed the alternative 'slope_high at the threshold'
    0.125 of the time (verify oc on the seed-0 record of revision 34bf7b3: inconclusive); the same
    simulation put every named alternative at <= 0.05 from 6 draws, the budget taken here."""
    from dataclasses import replace

    from theory.fact_mlp.bounds import jl_code_dim

    isotropic = choice(p, "scaling", ("spike", "isotropic")) == "isotropic"
    random_codes = choice(p, "codes", CODES) == "random unit vectors"
    rows = {}
    for s in ctx.seeds(p["seeds"]):
        sets = _scaled_values(replace(ctx, seed=s), p["n_values"], p["d"], p["betas"], isotropic)
        rhos, ms, b2 = [], [], []
        for k, (Vb, res) in enumerate(sets):
            seps = res.separators
            if random_codes:
                seps = _spherical(
                    len(Vb), p["d"], rng_for(s, "fact_mlp.decoder_scaling.check_mc_rho_scaling.spherical", k)
                )
            m = smallest_code_dim(
                Vb,
                seps,
                p["draws"],
                p["need"],
                rng_for(s, "fact_mlp.decoder_scaling.check_mc_rho_scaling.smallest_code_dim", k),
                MC_GRID,
            )
            rhos.append(res.rho)
            ms.append(float("inf") if m is None else float(m))
            b2.append(jl_code_dim(p["n_values"], res.rho))
        x = np.log(1.0 / np.square(rhos))
        ok = all(math.isfinite(m) for m in ms) and np.ptp(x) > 1e-6
        slope = float(np.polyfit(x, np.log(ms), 1)[0]) if ok else None
        passed = bool(ok and 0.6 <= slope <= 1.4 and all(m <= q for m, q in zip(ms, b2)))
        rows[str(s)] = {
            "rho": rhos,
            "mc_star": [m if math.isfinite(m) else None for m in ms],
            "b2": b2,
            "slope": slope,
            "passed": passed,
        }
    fitted = {int(k): v for k, v in rows.items() if v["slope"] is not None}
    parts = {
        "fitted": Agreement("value draws without a slope (an m_c* not found, or rho does not move)", 0).judge(
            len(rows) - len(fitted)
        )
    }
    if fitted:
        slopes, labels = [v["slope"] for v in fitted.values()], list(fitted)
        parts["slope_low"] = EverySeed("log-log slope", 0.6, ">=", "convention").judge(slopes, seeds=labels)
        parts["slope_high"] = EverySeed("log-log slope", 1.4, "<=", "convention").judge(slopes, seeds=labels)
        parts["b2"] = EverySeed("largest m_c* / B2 over beta", 1.0, "<=", "theory").judge(
            [max(m / q for m, q in zip(v["mc_star"], v["b2"])) for v in fitted.values()], seeds=labels
        )
    return all_of(**parts), {
        "betas": list(p["betas"]),
        "per_seed": rows,
    }


@claim(
    "fact_mlp.decoder.b2_pair_tail",
    source=SRC + ", B2 (proof of the constant)",
    bounds=("fact_mlp.jl_code_dim",),
    provenance="derived",
    templated=True,
    statement="for unit u, w with <u, w> = c and Gaussian Rp (m x d), the Monte Carlo rate of "
    "<Rp u, Rp w> <= 0 ({draws} draws) is at most (1/2)(1 - c^2)^({exponent} m) at every "
    "c in {cosines} and m in {code_dims}: the lower end of its 95% "
    "Clopper-Pearson interval never exceeds the bound",
    quick={"cosines": [0.2, 0.4, 0.6], "code_dims": [2, 4, 8, 16], "draws": 200000, "exponent": 0.5},
    seed_rule="one Monte Carlo batch per point from the run's seed; 95% binomial interval",
    controls=[
        Control(
            "sharper_rate",
            {"exponent": 1.0},
            "the competing rate (1/2)(1 - c^2)^m (twice the exponent) must be "
            "exceeded by the measured rate at some point",
        )
    ],
)
def check_b2_pair_tail(p, ctx):
    from verify.measure import binomial_interval

    rows = []
    for i, c in enumerate(p["cosines"]):
        s = math.sqrt(1.0 - c * c)
        for m in p["code_dims"]:
            rng = ctx.rng("fact_mlp.decoder_scaling.check_b2_pair_tail.rng", i, m)
            a = rng.standard_normal((p["draws"], m))
            b = rng.standard_normal((p["draws"], m))
            fails = int(np.sum(c * np.sum(a * a, 1) + s * np.sum(a * b, 1) <= 0))
            lo, hi = binomial_interval(fails, p["draws"])
            bound = 0.5 * (1.0 - c * c) ** (p["exponent"] * m)
            rows.append(
                {
                    "cosine": c,
                    "code_dim": m,
                    "rate": fails / p["draws"],
                    "ci": [lo, hi],
                    "bound": bound,
                    "within": lo <= bound,
                }
            )
    rule = EverySeed("lower end of the rate's 95% interval / bound", 1.0, "<=", "theory", unit="points")
    return rule.judge(
        [r["ci"][0] / r["bound"] for r in rows],
        seeds=[f"c={r['cosine']},m={r['code_dim']}" for r in rows],
    ), {
        "rows": rows,
        "max_rate_over_bound": max(r["rate"] / r["bound"] for r in rows),
    }


@claim(
    "fact_mlp.capacity.geometry_penalty",
    source=SRC + " (abstract: geometry penalty)",
    provenance="abstract",
    templated=True,
    statement="at fixed n_V the needed m_c rises as rho falls: m_c*(beta=3) >= m_c*(beta=0) "
    "(d={d}, n_V={n_values}) on each of {seeds} value draws; the other betas of {betas} reported",
    quick={"n_values": 256, "d": 256, "betas": [0.0, 1.5, 3.0], "seeds": 3, "codes_at_beta0": "separators"},
    full={
        "n_values": 256,
        "d": 256,
        "betas": [0.0, 0.5, 1.5, 3.0, 6.0],
        "seeds": 3,
        "codes_at_beta0": "separators",
    },
    seed_rule="every seed of seed..seed+2 (the single-seed verdict flipped with the seed)",
    controls=[
        Control(
            "undecodable_beta0",
            {"codes_at_beta0": "random unit vectors"},
            "at beta = 0 the codes are random unit vectors instead of separators, so "
            "no m_c decodes there (m_c*(0) = inf) and m_c*(3) >= m_c*(0) must fail",
        )
    ],
)
def check_geometry_penalty(p, ctx):
    from dataclasses import replace

    random_at_0 = choice(p, "codes_at_beta0", CODES) == "random unit vectors"  # the control
    per_seed = {}
    i0, i3 = p["betas"].index(0.0), p["betas"].index(3.0)
    for s in ctx.seeds(p["seeds"]):
        sub = replace(ctx, seed=s)
        ms, rhos = [], []
        for beta in p["betas"]:
            m, rho = mc_star(sub, p["n_values"], p["d"], beta, random_codes=random_at_0 and beta == 0)
            ms.append(m)
            rhos.append(rho)
        per_seed[str(s)] = {
            "mc_star": [m if math.isfinite(m) else None for m in ms],
            "rho": rhos,
            "passed": ms[i3] >= ms[i0],
        }
    first = per_seed[str(ctx.seed)]
    rises = []
    for k, v in per_seed.items():
        m0, m3 = (math.inf if v["mc_star"][i] is None else v["mc_star"][i] for i in (i0, i3))
        if math.isinf(m0) and math.isinf(m3):
            raise ValueError(
                f"seed {k}: no m_c of the grid decodes at beta = 0 or at beta = 3, so m_c* is "
                "compared at neither (the decoder's hypothesis, codes that decode, fails)"
            )
        rises.append(m3 - m0)
    rule = EverySeed("m_c*(beta=3) - m_c*(beta=0)", 0.0, ">=", "theory")
    return rule.judge(rises, seeds=[int(k) for k in per_seed]), {
        "betas": list(p["betas"]),
        "per_seed": per_seed,
        "mc_star": first["mc_star"],
        "rho": first["rho"],
    }
