"""Claims of the fact_mlp area, part 1b: the random-projection decoder and its bound B2.

docs/fact_mlp.md: the decoder, B2 (theory.fact_mlp.bounds.jl_code_dim, with the proof of its
constant in theory.fact_mlp.bounds.pair_failure_bound), the experiments jl_decoder, jl_too_small,
mc_log_scaling, geometry_penalty, and the 1/rho^2 dependence at fixed n_V.
"""

from __future__ import annotations

import math

import numpy as np

from verify.claims import Control, Outcome, claim, rng_for
from verify.fact_mlp.decodability_setup import SRC, _spherical, shared_rho


def decoder_accuracy(V, separators, code_dim, rng) -> float:
    """Fraction of values j decoded from Rp^T Rp u*_j by argmax <., v_i> (ties are errors)."""
    from constructions.fact_mlp.encoder import random_projection
    from constructions.fact_mlp.facts import decode_numpy

    Rp = random_projection(int(code_dim), V.shape[1], rng)
    return decode_numpy(separators @ Rp.T @ Rp, V, np.arange(len(V)))[0]


def draws_ok(V, separators, code_dim, draws, rng) -> list[float]:
    return [decoder_accuracy(V, separators, code_dim, rng) for _ in range(draws)]


def smallest_code_dim(V, separators, draws, need, rng, grid) -> int | None:
    """Smallest m_c in ``grid`` with accuracy 1 in >= ``need`` of ``draws`` draws (binary search)."""
    lo, hi, best = 0, len(grid) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        ok = sum(a == 1.0 for a in draws_ok(V, separators, grid[mid], draws, rng)) >= need
        if ok:
            best, hi = grid[mid], mid - 1
        else:
            lo = mid + 1
    return best


@claim(
    "fact_mlp.decoder.jl_decoder",
    source=SRC + ", B2",
    provenance="derived",
    bounds=("fact_mlp.jl_code_dim",),
    statement="at m_c = 48 the random-projection decoder Rp^T Rp u*_j decodes every value "
    "(d=256, n_V=512) in all but <= 1 of 10 draws of Rp",
    quick={"n_values": 512, "d": 256, "code_dim": 48, "draws": 10, "max_failures": 1},
    full={"n_values": 10000, "d": 256, "code_dim": 48, "draws": 10, "max_failures": 1},
    seed_rule="at most 1 failing draw of Rp among 10 (drawn from the run's seed)",
    controls=[
        Control(
            "below_bound",
            {"code_dim": 8},
            "m_c = 8 is far below ln(n_V)/rho^2 (about 14): most draws must fail",
        )
    ],
)
def check_jl_decoder(p, ctx):
    from theory.fact_mlp.bounds import jl_code_dim

    V, res = shared_rho(ctx, p["n_values"], p["d"], salt=1)
    accs = draws_ok(V, res.separators, p["code_dim"], p["draws"], ctx.rng(5))
    failures = sum(a < 1.0 for a in accs)
    return Outcome(
        predicted=f"failures <= {p['max_failures']} of {p['draws']}",
        measured=failures,
        passed=failures <= p["max_failures"],
        details={
            "accuracies": accs,
            "rho": res.rho,
            "code_dim": p["code_dim"],
            "b2_code_dim": jl_code_dim(p["n_values"], res.rho),
            "ln_nv_over_rho2": math.log(p["n_values"]) / res.rho**2,
        },
    )


RANDOM_CODES = Control(
    "random_codes",
    {"control": "random_codes"},
    "the code of value j is a random unit vector, not its separator u*_j (the "
    "hypothesis of B2 dropped): no m_c in the grid decodes, so m_c* <= B2 fails",
)


def half_success_dim(V, separators, draws, rng, m_max) -> int | None:
    """Smallest m_c in 1..m_max at which the decoder decodes every value in at least half of
    ``draws`` draws of Rp (binary search, as :func:`smallest_code_dim`); None when none does."""
    return smallest_code_dim(V, separators, draws, math.ceil(draws / 2), rng, list(range(1, m_max + 1)))


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
    quick={"n_values": 256, "d": 32, "draws": 20, "seeds": 3},
    full={"n_values": 256, "d": 32, "draws": 40, "seeds": 10},
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
    Control RANDOM_CODES: no m_c decodes, so the factor falls below 1. The previous criterion is
    recomputed on the base seed's value draw (details["previous_criterion"]). Sizes and draws were
    tried on pilot seeds 100-102 (measured m_c 34-35 against m_B2 61-64: factors 1.75-1.87; random
    codes decode at no m_c up to 2 m_B2), not on a judged seed."""
    from dataclasses import replace

    from theory.fact_mlp.bounds import jl_code_dim, jl_code_dim_delta
    from verify.criteria import Threshold
    from verify.measure import t_interval

    n, d = p["n_values"], p["d"]
    rows = []
    for s in ctx.seeds(p["seeds"]):
        V, res = shared_rho(replace(ctx, seed=s), n, d)
        seps = _spherical(n, d, rng_for(s, 8, n)) if p.get("control") == "random_codes" else res.separators
        m_b2 = jl_code_dim_delta(n, res.rho, 0.5)
        m_max = math.ceil(2 * m_b2)
        m = half_success_dim(V, seps, p["draws"], rng_for(s, 6), m_max)
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
        "codes": "random unit vectors" if p.get("control") == "random_codes" else "separators u*_j",
    }
    if p.get("control") is None:
        V, res = shared_rho(ctx, n, d)
        old = {}
        for name, m_c in (("m_c_4", 4), ("m_c_ln", math.ceil(math.log(n) / res.rho**2))):
            accs = draws_ok(V, res.separators, m_c, 10, ctx.rng(6))
            old[name] = {
                "code_dim": m_c,
                "mean_accuracy": float(np.mean(accs)),
                "all_fail": all(a < 1 for a in accs),
            }
        details["previous_criterion"] = {
            "rule": "must fail: at m_c = 4 the mean accuracy over 10 draws is < 0.5 and every draw misses "
            "a value; control at m_c = ceil(ln n_V / rho^2), where that must not hold",
            "passed": bool(
                old["m_c_4"]["mean_accuracy"] < 0.5
                and old["m_c_4"]["all_fail"]
                and not (old["m_c_ln"]["mean_accuracy"] < 0.5 and old["m_c_ln"]["all_fail"])
            ),
            **old,
            "factor_to_b2": jl_code_dim(n, res.rho) / 4,
        }
    return Outcome.judged(judgement, details=details)


MC_GRID = [2, 3, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 128, 160, 192, 256]


def mc_star(ctx, n_values, d, beta=0.0, draws=10, need=9, salt=1, control=None):
    """Smallest m_c in MC_GRID decoding every value in >= need of draws draws (inf when none).
    control "random_codes": the code of value j is a random unit vector instead of its separator
    u*_j (the hypothesis of B2 dropped)."""
    V, res = shared_rho(ctx, n_values, d, beta, salt=salt)
    seps = res.separators
    if control == "random_codes":
        seps = _spherical(len(V), d, ctx.rng(8, n_values))
    m = smallest_code_dim(V, seps, draws, need, ctx.rng(7, n_values, int(10 * beta)), MC_GRID)
    return (float("inf") if m is None else m), res.rho


@claim(
    "fact_mlp.decoder.mc_log_scaling",
    source=SRC + ", B2 (optimal scaling, abstract)",
    bounds=("fact_mlp.jl_code_dim",),
    provenance="derived",
    statement="the smallest m_c with accuracy 1 in >= 9/10 draws fits m_c* = a ln(n_V)/rho^2 + "
    "b with a > 0, and m_c* <= B2 = 8 ln(n_V)/rho^2 (proved sufficient, "
    "theory.fact_mlp.bounds.jl_code_dim) at every n_V; rho barely varies here (0.66-0.69), "
    "see decoder.mc_rho_scaling for the 1/rho^2 dependence",
    quick={"n_values": [64, 128, 256, 512], "d": 256, "draws": 10, "need": 9},
    full={"n_values": [64, 256, 1024, 4096, 16384], "d": 256, "draws": 10, "need": 9},
    controls=[RANDOM_CODES],
)
def check_mc_log_scaling(p, ctx):
    from theory.fact_mlp.bounds import jl_code_dim

    xs, ms, b2 = [], [], []
    for n in p["n_values"]:
        m, rho = mc_star(ctx, n, p["d"], draws=p["draws"], need=p["need"], control=p.get("control"))
        xs.append(math.log(n) / rho**2)
        ms.append(m)
        b2.append(jl_code_dim(n, rho))
    finite = all(math.isfinite(m) for m in ms)
    a, b = np.polyfit(xs, ms, 1) if finite else (float("nan"), float("nan"))
    passed = finite and a > 0 and all(m <= bound for m, bound in zip(ms, b2))
    return Outcome(
        predicted="a > 0; m_c* <= B2",
        measured={"a": float(a) if finite else None, "m_c*": [m if math.isfinite(m) else None for m in ms]},
        passed=passed,
        details={
            "n_values": list(p["n_values"]),
            "ln_nv_over_rho2": xs,
            "mc_star": [m if math.isfinite(m) else None for m in ms],
            "b2": b2,
            "fit_a": float(a) if finite else None,
            "fit_b": float(b) if finite else None,
        },
    )


@claim(
    "fact_mlp.decoder.mc_rho_scaling",
    source=SRC + ", B2 (abstract: geometry-dependent penalty)",
    provenance="derived",
    statement="at fixed n_V = 128, d = 32, spiking the values (beta in {0, 3, 8, 20}) moves rho "
    "from about 0.57 to 0.2; the smallest m_c with accuracy 1 in >= 18/20 draws of "
    "Rp grows like a power of 1/rho^2 with log-log slope in [0.6, 1.4] (pilot seeds "
    "100-101: 0.76-0.84) and stays <= B2 = 8 ln(n_V)/rho^2 at every beta, on each "
    "of 3 value draws",
    quick={"n_values": 128, "d": 32, "betas": [0.0, 3.0, 8.0, 20.0], "draws": 20, "need": 18, "seeds": 3},
    seed_rule="every seed of seed..seed+2 (one value draw each)",
    controls=[
        Control(
            "isotropic",
            {"control": "isotropic"},
            "spikes replaced by the isotropic scaling V -> (1 + beta) V: rho does not "
            "move, so no slope can be fitted and the criterion must fail",
        ),
        RANDOM_CODES,
    ],
    bounds=("fact_mlp.jl_code_dim",),
)
def check_mc_rho_scaling(p, ctx):
    from dataclasses import replace

    from constructions.fact_mlp.facts import spike
    from theory.fact_mlp.bounds import jl_code_dim
    from theory.fact_mlp.rho import decodability
    from verify.measure import seeds_verdict

    rows, passes = {}, []
    for s in ctx.seeds(p["seeds"]):
        sub = replace(ctx, seed=s)

        def compute(s=s):
            rng = rng_for(s, 91)
            V = _spherical(p["n_values"], p["d"], rng)
            u = _spherical(1, p["d"], rng)[0]
            out = []
            for beta in p["betas"]:
                Vb = (
                    (1.0 + beta) * V
                    if p.get("control") == "isotropic"
                    else (spike(V, beta, u) if beta > 0 else V)
                )
                out.append((Vb, decodability(Vb)))
            return out

        sets = sub.shared(
            ("fact_mlp.mc_rho", p["n_values"], p["d"], tuple(p["betas"]), p.get("control") == "isotropic", s),
            compute,
        )
        rhos, ms, b2 = [], [], []
        for k, (Vb, res) in enumerate(sets):
            seps = res.separators
            if p.get("control") == "random_codes":
                seps = _spherical(len(Vb), p["d"], rng_for(s, 92, k))
            m = smallest_code_dim(Vb, seps, p["draws"], p["need"], rng_for(s, 93, k), MC_GRID)
            rhos.append(res.rho)
            ms.append(float("inf") if m is None else float(m))
            b2.append(jl_code_dim(p["n_values"], res.rho))
        x = np.log(1.0 / np.square(rhos))
        ok = all(math.isfinite(m) for m in ms) and np.ptp(x) > 1e-6
        slope = float(np.polyfit(x, np.log(ms), 1)[0]) if ok else None
        passed = bool(ok and 0.6 <= slope <= 1.4 and all(m <= q for m, q in zip(ms, b2)))
        passes.append(passed)
        rows[str(s)] = {
            "rho": rhos,
            "mc_star": [m if math.isfinite(m) else None for m in ms],
            "b2": b2,
            "slope": slope,
            "passed": passed,
        }
    return Outcome(
        predicted="slope of log m_c* on log(1/rho^2) in [0.6, 1.4]; m_c* <= B2",
        measured={k: v["slope"] for k, v in rows.items()},
        passed=seeds_verdict(passes, "every"),
        details={"betas": list(p["betas"]), "per_seed": rows},
    )


@claim(
    "fact_mlp.decoder.b2_pair_tail",
    source=SRC + ", B2 (proof of the constant)",
    bounds=("fact_mlp.jl_code_dim",),
    provenance="derived",
    statement="for unit u, w with <u, w> = c and Gaussian Rp (m x d), the Monte Carlo rate of "
    "<Rp u, Rp w> <= 0 (200 000 draws) is at most (1/2)(1 - c^2)^(m/2) at every "
    "c in {0.2, 0.4, 0.6} and m in {2, 4, 8, 16}: the lower end of its 95% "
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

    rows, ok = [], True
    for i, c in enumerate(p["cosines"]):
        s = math.sqrt(1.0 - c * c)
        for m in p["code_dims"]:
            rng = ctx.rng(94, i, m)
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
            ok &= lo <= bound
    return Outcome(
        predicted=f"rate <= (1/2)(1-c^2)^({p['exponent']:g} m)",
        measured=max(r["rate"] / r["bound"] for r in rows),
        passed=bool(ok),
        details={"rows": rows},
    )


@claim(
    "fact_mlp.capacity.geometry_penalty",
    source=SRC + " (abstract: geometry penalty)",
    provenance="abstract",
    statement="at fixed n_V the needed m_c rises as rho falls: m_c*(beta=3) >= m_c*(beta=0) "
    "(d=256, n_V=256) on each of 3 value draws; beta=1.5 reported",
    quick={"n_values": 256, "d": 256, "betas": [0.0, 1.5, 3.0], "seeds": 3},
    full={"n_values": 256, "d": 256, "betas": [0.0, 0.5, 1.5, 3.0, 6.0], "seeds": 3},
    seed_rule="every seed of seed..seed+2 (the single-seed verdict flipped with the seed)",
    controls=[
        Control(
            "undecodable_beta0",
            {"control": "undecodable_beta0"},
            "at beta = 0 the codes are random unit vectors instead of separators, so "
            "no m_c decodes there (m_c*(0) = inf) and m_c*(3) >= m_c*(0) must fail",
        )
    ],
)
def check_geometry_penalty(p, ctx):
    from dataclasses import replace

    from verify.measure import seeds_verdict

    per_seed, passes = {}, []
    i0, i3 = p["betas"].index(0.0), p["betas"].index(3.0)
    for s in ctx.seeds(p["seeds"]):
        sub = replace(ctx, seed=s)
        ms, rhos = [], []
        for beta in p["betas"]:
            control = "random_codes" if p.get("control") == "undecodable_beta0" and beta == 0 else None
            m, rho = mc_star(sub, p["n_values"], p["d"], beta, control=control)
            ms.append(m)
            rhos.append(rho)
        passes.append(ms[i3] >= ms[i0])
        per_seed[str(s)] = {
            "mc_star": [m if math.isfinite(m) else None for m in ms],
            "rho": rhos,
            "passed": passes[-1],
        }
    first = per_seed[str(ctx.seed)]
    return Outcome(
        predicted="m_c*(3) >= m_c*(0) on every seed",
        measured={k: v["mc_star"] for k, v in per_seed.items()},
        passed=seeds_verdict(passes, "every"),
        details={
            "betas": list(p["betas"]),
            "per_seed": per_seed,
            "mc_star": first["mc_star"],
            "rho": first["rho"],
            "previous_criterion": {
                "rule": "m_c*(3) >= m_c*(0) on the run's seed only",
                "passed": first["passed"],
            },
        },
    )


from verify.ledger import LedgerEntry, record  # noqa: E402

record(
    LedgerEntry(
        claim_id="fact_mlp.capacity.geometry_penalty",
        measured="d=256, n_V=256, m_c* at beta = 0, 1.5, 3 (smallest m_c with accuracy 1 in >= 9/10 "
        "draws of Rp): seed 0: 40, 32, 32 (rho 0.670, 0.667, 0.650); seed 1: 40, 32, 40 "
        "(holds); seed 2: 40, 40, 32 (fails); the verdict flips with the seed, so it is "
        "judged on every seed of three",
        tried="the setting of docs/fact_mlp.md (d=256, n_V=256, beta in {0, 3}); binary search over "
        "the m_c grid 2..256 with 10 draws per m_c and the 9/10 criterion; exact rho with certificate",
        reason="at d=256 one spike of strength 3 lowers rho by only 3 % (0.670 -> 0.650), far less "
        "than at d=32 (0.551 -> 0.431, rho_anisotropy); that change is below the resolution "
        "of m_c* estimated from 10 draws, which moves by a grid step between draws, so the "
        "penalty shows in rho but not in m_c* at this size",
    )
)
