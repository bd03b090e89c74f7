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
    "8 ln(n_V)/rho^2 (proved sufficient, theory.fact_mlp.bounds.jl_code_dim) at every n_V, on each "
    "of {seeds} value draws; rho barely varies here (0.66-0.69 at quick scale), see "
    "decoder.mc_rho_scaling for the 1/rho^2 dependence",
    quick={
        "n_values": [64, 128, 256, 512],
        "d": 256,
        "draws": 10,
        "need": 9,
        "codes": "separators",
        "seeds": 6,
    },
    full={
        "n_values": [64, 256, 1024, 4096, 16384],
        "d": 256,
        "draws": 10,
        "need": 9,
        "codes": "separators",
        "seeds": 6,
    },
    seed_rule="every seed of seed..seed+5 (one value draw per n_V each)",
    controls=[RANDOM_CODES],
)
def check_mc_log_scaling(p, ctx):
    """Changed (replicates): judged on one value draw per n_V, now on each of six (the fitted a
    and the largest m_c*/B2 over n_V stored per value draw, so verify oc can simulate it). Six is
    verify oc's count: on the record of pilot base seed 100 at three draws the alternative 'b2 at
    the threshold' passed 0.14 of the time, at six every alternative <= 0.05."""
    from dataclasses import replace

    from theory.fact_mlp.bounds import jl_code_dim

    random_codes = choice(p, "codes", CODES) == "random unit vectors"  # RANDOM_CODES, the control
    per_seed = []
    for s in ctx.seeds(p["seeds"]):
        xs, ms, b2 = [], [], []
        for n in p["n_values"]:
            m, rho = mc_star(
                replace(ctx, seed=s), n, p["d"], draws=p["draws"], need=p["need"], random_codes=random_codes
            )
            xs.append(math.log(n) / rho**2)
            ms.append(m)
            b2.append(jl_code_dim(n, rho))
        finite = all(math.isfinite(m) for m in ms)
        a, b = np.polyfit(xs, ms, 1) if finite else (None, None)
        found = [m / q for m, q in zip(ms, b2) if math.isfinite(m)]
        per_seed.append(
            {
                "seed": s,
                "ln_nv_over_rho2": xs,
                "mc_star": [m if math.isfinite(m) else None for m in ms],
                "b2": b2,
                "fit_a": None if a is None else float(a),
                "fit_b": None if b is None else float(b),
                "max_mc_over_b2": max(found) if found else None,
            }
        )
    missing = sum(m is None for r in per_seed for m in r["mc_star"])
    parts = {"found": Agreement("(value draw, n_V) at which no m_c of the grid decodes", 0).judge(missing)}
    fitted = [r for r in per_seed if r["fit_a"] is not None]
    if fitted:  # a fit needs every n_V's m_c*
        parts["slope"] = EverySeed("fitted a", 0.0, ">", "theory").judge(
            [r["fit_a"] for r in fitted], seeds=[r["seed"] for r in fitted]
        )
    some = [r for r in per_seed if r["max_mc_over_b2"] is not None]
    if some:
        parts["b2"] = EverySeed("largest m_c* / B2 over n_V", 1.0, "<=", "theory").judge(
            [r["max_mc_over_b2"] for r in some], seeds=[r["seed"] for r in some]
        )
    first = per_seed[0]
    return all_of(**parts), {
        "n_values": list(p["n_values"]),
        "ln_nv_over_rho2": first["ln_nv_over_rho2"],
        "mc_star": first["mc_star"],
        "b2": first["b2"],
        "fit_a": first["fit_a"],
        "fit_b": first["fit_b"],
        "per_seed": per_seed,
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
    "<Rp u, Rp w> <= 0 is at most (1/2)(1 - c^2)^({exponent} m) at every c in {cosines} and m in "
    "{code_dims}: in each of {batches} independent batches of {draws} draws, the largest rate / "
    "bound over the points is <= 1",
    quick={
        "cosines": [0.2, 0.4, 0.6],
        "code_dims": [2, 4, 8, 16],
        "draws": 40000,
        "batches": 5,
        "exponent": 0.5,
    },
    seed_rule="every one of the independent Monte Carlo batches (draws of Rp per point and batch)",
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
    """Changed criterion (one draw): the rule was one Monte Carlo batch of 200,000 draws per
    point, the lower end of each point's 95% Clopper-Pearson interval against the bound (a rule
    over points, no replicates: verify oc could not simulate it). The same 200,000 draws per point
    are now spent as 5 independent batches of 40,000, and each batch's largest rate / bound over
    the points must be <= 1 (EverySeed over the batches; a batch ratio centred on 1 passes
    1/32 of the time). The point estimate replaces the interval's lower end, a stricter reading
    of "the rate is at most the bound". At base seed 0 the former rule passed (largest lower end /
    bound 0.825, at c = 0.2, m = 2); nothing was chosen on a judged seed (the split into 5 batches
    is the smallest count whose every-batch rule is admissible)."""
    rows = []
    per_batch = []
    for j in range(int(p["batches"])):
        worst = -math.inf
        for i, c in enumerate(p["cosines"]):
            s = math.sqrt(1.0 - c * c)
            for m in p["code_dims"]:
                rng = ctx.rng("fact_mlp.decoder_scaling.check_b2_pair_tail.rng", i, m, j)
                a = rng.standard_normal((p["draws"], m))
                b = rng.standard_normal((p["draws"], m))
                fails = int(np.sum(c * np.sum(a * a, 1) + s * np.sum(a * b, 1) <= 0))
                bound = 0.5 * (1.0 - c * c) ** (p["exponent"] * m)
                rate = fails / p["draws"]
                rows.append({"batch": j, "cosine": c, "code_dim": m, "rate": rate, "bound": bound})
                worst = max(worst, rate / bound)
        per_batch.append(worst)
    rule = EverySeed("largest rate / bound over the points", 1.0, "<=", "theory", unit="draws")
    return rule.judge(per_batch, seeds=list(range(int(p["batches"])))), {
        "rows": rows,
        "max_rate_over_bound": max(r["rate"] / r["bound"] for r in rows),
    }


def paired_mc_star(
    V: np.ndarray, separators: np.ndarray, draws: int, need: int, seed: int, grid=range(2, 257)
) -> int | None:
    """Smallest m_c in ``grid`` (bisection) at which the decoder decodes every value in >= ``need``
    of ``draws`` draws of Rp, draw k at code dimension m being Rp from rng_for(seed, ...,  m, k):
    the same matrices whatever the values, so two value sets of one seed are compared on common
    decoder draws (paired). None when no m_c of the grid decodes.

    >>> from theory.fact_mlp.rho import decodability
    >>> V = _spherical(8, 16, np.random.default_rng(0))
    >>> paired_mc_star(V, decodability(V).separators, 4, 3, 0, range(2, 17))
    7
    """
    from constructions.search import smallest_size
    from verify.fact_mlp.decoder_setup import decoder_accuracy

    def stores(m: int) -> bool:
        ok = 0
        for k in range(draws):
            rng = rng_for(seed, "fact_mlp.decoder_scaling.paired_mc_star.random_projection", m, k)
            ok += decoder_accuracy(V, separators, m, rng) == 1.0
        return ok >= need

    return smallest_size(grid, stores).size


@claim(
    "fact_mlp.capacity.geometry_penalty",
    source=SRC + " (abstract: geometry penalty)",
    provenance="abstract",
    templated=True,
    statement="at fixed n_V the needed m_c rises as rho falls: m_c*(beta=3) - m_c*(beta=0) > 0 "
    "(d={d}, n_V={n_values}; m_c* the smallest integer m_c with accuracy 1 in >= {need} of {draws} "
    "draws of Rp, the same draws at both betas) in the 95% Student-t interval of its mean over "
    "{seeds} value draws (inconclusive when the interval holds 0); the other betas of {betas} "
    "reported",
    quick={
        "n_values": 256,
        "d": 256,
        "betas": [0.0, 3.0],
        "draws": 10,
        "need": 9,
        "seeds": 10,
        "codes_at_beta0": "separators",
    },
    full={
        "n_values": 256,
        "d": 256,
        "betas": [0.0, 0.5, 1.5, 3.0, 6.0],
        "draws": 10,
        "need": 9,
        "seeds": 10,
        "codes_at_beta0": "separators",
    },
    seed_rule="one value draw per seed of seed..seed+9, m_c* at each beta on common draws of Rp; 95% "
    "Student-t interval over the value draws of the mean of m_c*(3) - m_c*(0)",
    controls=[
        Control(
            "undecodable_beta0",
            {"codes_at_beta0": "random unit vectors", "seeds": 2},
            "at beta = 0 the codes are random unit vectors instead of separators, so "
            "no m_c decodes there (m_c*(0) counted as the grid's end plus one, 257) and the mean "
            "difference must fall below 0 (two value draws: each is a search that never stores)",
        )
    ],
)
def check_geometry_penalty(p, ctx):
    """Changed (resolution): m_c* was searched on MC_GRID, whose steps near m_c* = 32-40 are 8 (25%),
    with the decoder draws taken in probe order and apart for each beta, and judged 'm_c*(3) >=
    m_c*(0) on each of 3 value draws'. At d = 256 a spike of 3 lowers rho by 3% (0.670 -> 0.650),
    so B2's scaling moves m_c* by about 5%, under two units: a fraction of one grid step, and the
    verdict flipped with the base seed (ledger). Now m_c* is searched over every integer, the
    decoder draws are common to both betas (draw k at size m is the same Rp: a paired
    comparison), and the rule is the 95% Student-t interval of the mean difference over value draws
    (pass above 0, fail below, inconclusive across). Quick scale drops beta = 1.5 (reported only)
    to afford ten value draws, the most this budget affords (about 2 s each).

    Pilot base seed 100 (value draws 100-109, never judged): rho 0.667-0.671 -> 0.625-0.655, m_c*
    at beta = 0 / 3: 32/33, 31/31, 33/33, 36/34, 33/33, 33/35, 33/33, 33/33, 33/33, 35/34; mean rise
    0.0, interval [-0.75, 0.75]: inconclusive, and verify oc on that record finds no value-draw
    count up to 64 with power 0.8 (power 0.03, the alternative 'at the threshold' 0.04). The
    penalty B2's 1/rho^2 would predict here (about +1.8 at the 0.8 power law of mc_rho_scaling)
    lies outside that interval: at this spike the needed m_c does not follow the worst-case rho.
    On pilot seed 100, beta = 6, 12, 20 gave rho 0.587, 0.499, 0.422 and m_c* 31, 41, 66: the
    penalty shows once rho falls by about a quarter (mc_rho_scaling, d = 32, tests that law).

    The control's m_c*(0) is not found (random codes decode at no m_c): it enters the difference
    as the grid's end plus one (257, a lower bound of the unknown size), so every difference is
    below 0 and the criterion fails."""
    from dataclasses import replace

    from verify.measure import t_interval

    random_at_0 = choice(p, "codes_at_beta0", CODES) == "random unit vectors"  # the control
    grid = range(2, p["d"] + 1)
    per_seed = {}
    i0, i3 = p["betas"].index(0.0), p["betas"].index(3.0)
    for s in ctx.seeds(p["seeds"]):
        sub = replace(ctx, seed=s)
        ms, rhos = [], []
        for beta in p["betas"]:
            V, res = shared_rho(sub, p["n_values"], p["d"], beta, salt=1)
            seps = res.separators
            if random_at_0 and beta == 0:
                seps = _spherical(
                    len(V), p["d"], sub.rng("fact_mlp.decoder_scaling.mc_star.spherical", p["n_values"])
                )
            ms.append(paired_mc_star(V, seps, p["draws"], p["need"], s, grid))
            rhos.append(res.rho)
        m0, m3 = ms[i0], ms[i3]
        if m0 is None and m3 is None:
            raise ValueError(
                f"seed {s}: no m_c of the grid decodes at beta = 0 or at beta = 3, so m_c* is "
                "compared at neither (the decoder's hypothesis, codes that decode, fails)"
            )
        end = grid[-1] + 1  # not found: above the grid, counted as its end plus one
        per_seed[str(s)] = {
            "mc_star": ms,
            "rho": rhos,
            "rise": (end if m3 is None else m3) - (end if m0 is None else m0),
        }
    rises = [v["rise"] for v in per_seed.values()]
    interval = list(t_interval(rises))
    judgement = Threshold("mean m_c*(beta=3) - m_c*(beta=0)", 0.0, ">", "theory").judge(
        interval, seeds=len(rises)
    )
    first = per_seed[str(ctx.seed)]
    return judgement, {
        "betas": list(p["betas"]),
        "rises": rises,
        "rise_interval95": interval,
        "per_seed": per_seed,
        "mc_star": first["mc_star"],
        "rho": first["rho"],
    }
