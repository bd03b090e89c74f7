"""The single-hop threshold against ln N (docs/geometric.md#statements-and-proof-sketches).

"An embedding dimension logarithmic in N suffices" is the paper's [abstract]; the threshold
definition, the grid and the criterion are this project's [derived] choices. The criterion must
tell ln N from the competing laws (N^(1/4), N^(1/3), (ln N)^2) and from no
growth, so the grid spans two decades of N and the verdict uses the growth factor of the threshold
between the smallest and the largest N, whose interval over seeds must exclude every competitor's
factor. Each competitor is also a control: synthetic thresholds following that law (anchored at
the measured smallest-N thresholds of each seed) must fail the same criterion.
"""

from __future__ import annotations

import math

import numpy as np

from constructions.geometric.single_hop import attribute_codes, build_block_model
from constructions.tasks import make_bijections
from theory.geometric import single_hop as B
from verify.claims import Outcome, claim
from verify.geometric.scaling_setup import (
    LAW_CONTROLS,
    LAWS,
    threshold_bisect,
)
from verify.geometric.single_hop_setup import SRC, _rng, code_threshold, model_decoding
from verify.measure import bootstrap_interval, linear_fit


def _measure(p, ctx):
    def compute():
        table = {}
        for n in p["n_values"]:
            table[n] = [
                threshold_bisect(n, p["margin"], seed, p["d0_max"])[0] for seed in ctx.seeds(p["seeds"])
            ]
        curves = {
            str(n): code_threshold(n, p["margin"], ctx.seed, range(2, 49), full_curve=True)[1]
            for n in p["n_values"]
            if n <= 316
        }
        return table, curves

    key = ("geometric.log_scaling", tuple(p["n_values"]), p["margin"], p["seeds"], p["d0_max"], ctx.seed)
    return ctx.shared(key, compute)


@claim(
    "geometric.single_hop.log_scaling",
    source=f"{SRC}, log dimension suffices (abstract)",
    bounds=("geometric.d0_suff", "geometric.d0_nec"),
    provenance="abstract",
    controls=LAW_CONTROLS,
    seed_rule="95% bootstrap interval over seeds of the per-seed growth factor d0*(N_max)/d0*(N_min)",
    statement="the block dimension d0* at which spherical codes reach margin 0.25 grows like ln N over "
    "two decades of N: the 95% bootstrap interval of the growth factor d0*(N_max)/d0*(N_min) "
    "lies above 1 and below the factors of N^(1/4), N^(1/3) and (ln N)^2; the fit of the "
    "per-N means d0* = a ln N + b has a > 0 and R^2 >= 0.9, d0*/ln N varies by < 2x, and the "
    "built model's margin at d0* reaches 0.25 (derived criterion)",
    quick={"n_values": [100, 316, 1000, 3162, 10000], "margin": 0.25, "seeds": 3, "d0_max": 64},
    full={"n_values": [100, 1000, 10000, 100000], "margin": 0.25, "seeds": 5, "d0_max": 120},
)
def log_scaling(p, ctx):
    """Criterion changed (not because it failed): the old one (a > 0, R^2 >= 0.9,
    ratio spread < 2 over N = 128..2048) also passed synthetic N^(1/4), N^(1/3) and (ln N)^2 data.
    The old criterion's result is kept in details["previous_criterion"]. The threshold is now found
    by bisection (cost) instead of a scan from d0 = 2; the growth-factor rule was fixed from the
    competing laws' factors before any run: ln N gives 2.0 over N = 100..10^4, N^(1/4) 3.16,
    (ln N)^2 4.0, N^(1/3) 4.64."""
    table, curves = _measure(p, ctx)
    ns = list(p["n_values"])
    law = (p.get("control") or "")[4:]
    if law:  # synthetic competitor: each seed's smallest-N threshold scaled by the law
        f = LAWS[law]
        table = {n: [d * f(n) / f(ns[0]) for d in table[ns[0]]] for n in ns}
    rows = [
        {"N": n, "d0_star": table[n], "mean": float(np.mean(table[n])), "sd": float(np.std(table[n]))}
        for n in ns
    ]
    factors = [hi / lo for lo, hi in zip(table[ns[0]], table[ns[-1]])]
    interval = bootstrap_interval(factors, 0.95, seed=ctx.seed)
    competitors = {name: LAWS[name](ns[-1]) / LAWS[name](ns[0]) for name in ("quarter", "cuberoot", "lnsq")}
    fit = linear_fit([math.log(n) for n in ns], [r["mean"] for r in rows])
    ratios = [r["mean"] / math.log(r["N"]) for r in rows]
    spread = max(ratios) / min(ratios)
    n0, d_star = ns[0], int(round(rows[0]["d0_star"][0]))
    at = ctx.shared(  # the same model for the claim and every control
        ("geometric.log_scaling.margin_at", n0, d_star, ctx.seed),
        lambda: (
            model_decoding(
                build_block_model(
                    make_bijections(n0, 2, ctx.rng(9)),
                    codes=attribute_codes(n0, d_star, "spherical", _rng(ctx.seed, 2, n0, d_star, 0)),
                )
            ).min_margin
        ),
    )
    old = fit["slope"] > 0 and fit["r2"] >= 0.9 and spread < 2
    growth_ok = interval[0] > 1 and interval[1] < min(competitors.values()) * (1 - 1e-9)  # ulp-safe
    return Outcome(
        predicted={
            "growth_factor_interval": f"in (1, {min(competitors.values()):.3g})",
            "ln_N_factor": math.log(ns[-1]) / math.log(ns[0]),
            "competitors": competitors,
            "slope": "> 0",
            "r2": ">= 0.9",
            "ratio_spread": "< 2",
        },
        measured={
            "growth_factor_interval": list(interval),
            "growth_factors": factors,
            "slope": fit["slope"],
            "intercept": fit["intercept"],
            "r2": fit["r2"],
            "ratio_spread": spread,
        },
        passed=growth_ok and old and at >= p["margin"],
        details={
            "rows": rows,
            "ratios": ratios,
            "gap_curves_seed0": curves,
            "model_margin_at_threshold": at,
            "previous_criterion": {"rule": "slope > 0, R^2 >= 0.9, ratio spread < 2", "passed": old},
            "d0_suff_t": [B.d0_sufficient(n, 1 - p["margin"], 0.01) for n in ns],
            "d0_nec": [B.d0_necessary(n, p["margin"]) for n in ns],
        },
    )


@claim(
    "geometric.single_hop.matching_bound",
    source=f"{SRC}, bound B3 (volumetric packing) beside the measured threshold",
    bounds=("geometric.d0_nec",),
    provenance="derived",
    controls=LAW_CONTROLS,
    seed_rule="per-N means over ctx.seeds(3); every seed's threshold must respect B3",
    statement="the measured single-hop threshold d0* (spherical codes reach margin 0.25) stays within a "
    "constant factor of the volumetric lower bound d0_nec(N, 0.25) = ln N / ln(1 + sqrt 8) as N "
    "grows over two decades: d0* >= d0_nec for every seed and N (B3 holds), and the ratio of the "
    "per-N mean d0* to d0_nec varies by less than 1.5x from N_min to N_max",
    quick={"n_values": [100, 316, 1000, 3162, 10000], "margin": 0.25, "seeds": 3, "d0_max": 64},
    full={"n_values": [100, 1000, 10000, 100000], "margin": 0.25, "seeds": 5, "d0_max": 120},
)
def matching_bound(p, ctx):
    """The real claim behind the former multihop.bound_ratio (which divided a formula by a
    formula): a measured threshold beside a lower bound as N grows. It shares log_scaling's measurement
    (same parameters, same cache key). The lower bound B3 holds for every code, so the first half can
    only fail on a wrong bound or a wrong measurement; the second half is the "matching" statement: a
    constant factor, not a factor growing with N. The competing-law controls (synthetic thresholds
    growing like N^(1/4), N^(1/3), (ln N)^2, or not at all) must break the 1.5x band."""
    table, _ = _measure(p, ctx)
    ns = list(p["n_values"])
    law = (p.get("control") or "")[4:]
    if law:
        f = LAWS[law]
        table = {n: [d * f(n) / f(ns[0]) for d in table[ns[0]]] for n in ns}
    bound = {n: B.d0_necessary(n, p["margin"]) for n in ns}
    ratios = [float(np.mean(table[n])) / bound[n] for n in ns]
    above = all(d >= bound[n] for n in ns for d in table[n])
    spread = max(ratios) / min(ratios)
    return Outcome(
        predicted={"d0_star_over_d0_nec": ">= 1", "ratio_spread": "< 1.5"},
        measured={"ratios": ratios, "ratio_spread": spread, "all_above_bound": above},
        passed=above and spread < 1.5,
        details={"rows": [{"N": n, "d0_star": table[n], "d0_nec": bound[n]} for n in ns]},
    )
