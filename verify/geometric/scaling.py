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

import dataclasses
import math

import numpy as np

from constructions.geometric.single_hop import attribute_codes, build_block_model
from constructions.tasks import make_bijections
from theory.geometric import single_hop as B
from verify.claims import choice, claim, shared
from verify.criteria import EverySeed, Judgement, Threshold, all_of, growth_exponent, growth_law_judgement
from verify.geometric.scaling_setup import (
    BAND_CONTROLS,
    SCALING_CONTROLS,
    code_threshold,
    law_table,
    threshold_bisect,
    window_threshold,
)
from verify.geometric.single_hop_setup import SRC, _rng, model_decoding
from verify.measure import linear_fit, t_interval


@shared
def measure_thresholds(ctx, n_values: list, margin: float, n_seeds: int, d0_max: int) -> tuple[dict, dict]:
    """The code thresholds d0* (:func:`threshold_bisect`) per N of ``n_values`` and seed of
    ctx.seeds(n_seeds), and the base seed's gap curves over d0 = 2..48 at N <= 316: the measurement
    log_scaling and matching_bound share (with their controls).

    >>> from verify.claims import Context
    >>> table, curves = measure_thresholds(Context(), [100, 316], 0.25, 2, 64)
    >>> sorted(table), len(table[100]), sorted(curves), len(curves["100"])
    ([100, 316], 2, ['100', '316'], 47)
    """
    table = {
        n: [threshold_bisect(n, margin, seed, d0_max)[0] for seed in ctx.seeds(n_seeds)] for n in n_values
    }
    curves = {
        str(n): code_threshold(n, margin, ctx.seed, range(2, 49), full_curve=True)[1]
        for n in n_values
        if n <= 316
    }
    return table, curves


@shared
def measure_window_thresholds(
    ctx, n_values: list, margin: float, n_seeds: int, d0_max: int, half: int
) -> tuple[dict, dict, dict]:
    """log_scaling's measurement: per N of ``n_values`` and seed of ctx.seeds(n_seeds), the line
    crossing d0* of :func:`window_threshold` (window half-width ``half``) and the bisection crossing
    d0b that centred it, and the base seed's gap curves over d0 = 2..48 at N <= 316 (one draw per
    d0, the figure's).

    >>> from verify.claims import Context
    >>> line, bisect, curves = measure_window_thresholds(Context(), [10, 32], 0.25, 2, 64, 6)
    >>> sorted(line), len(line[10]), all(isinstance(v, int) for v in bisect[32]), len(curves["10"])
    ([10, 32], 2, True, 47)
    """
    line, bisect = {}, {}
    for n in n_values:
        found = [window_threshold(n, margin, seed, d0_max, half) for seed in ctx.seeds(n_seeds)]
        line[n] = [f[0] for f in found]
        bisect[n] = [f[1] for f in found]
    curves = {
        str(n): code_threshold(n, margin, ctx.seed, range(2, 49), full_curve=True)[1]
        for n in n_values
        if n <= 316
    }
    return line, bisect, curves


def judge_log_scaling(p, table: dict, margins) -> Judgement:
    """log_scaling's criterion on a measurement: ``table`` (N -> per-seed thresholds d0*) judged by
    :func:`verify.criteria.growth_law_judgement`, and ``margins`` (the built model's margin at each
    seed's own smallest-N d0*, with the code its search accepted) by an every-seed rule. The check
    is ``judge_log_scaling(p, *measure)``; ``python -m verify oc`` feeds it simulated tables.

    >>> ns = [100, 1000, 10000]
    >>> t = {n: [round(3 * math.log(n)) + e for e in (0, 1)] for n in ns}
    >>> judge_log_scaling({"n_values": ns, "margin": 0.25}, t, [0.3, 0.26]).verdict in VERDICT_NAMES
    True
    """
    ns = list(p["n_values"])
    by_seed = [[table[n][s] for n in ns] for s in range(len(table[ns[0]]))]
    return all_of(
        growth=growth_law_judgement(ns, by_seed),
        margin=EverySeed("model margin at the seed's own d0*", p["margin"], ">=", "theory").judge(margins),
    )


VERDICT_NAMES = ("pass", "fail", "inconclusive")


@shared
def margin_at(ctx, n: int, d0: int, code_seed: int) -> float:
    """The built model's minimum margin at (N = n, R = 2, d0), built with the spherical code of
    ``code_seed`` that the threshold search tried there (the bijections are the run's).

    >>> from verify.claims import Context
    >>> margin_at(Context(), 100, 30, 0) >= 0.25
    True
    """
    perms = make_bijections(n, 2, ctx.rng("geometric.scaling.make_bijections"))
    codes = attribute_codes(n, d0, "spherical", _rng(code_seed, 2, n, d0, 0))
    return model_decoding(build_block_model(perms, codes=codes)).min_margin


@claim(
    "geometric.single_hop.log_scaling",
    source=f"{SRC}, log dimension suffices (abstract)",
    bounds=("geometric.d0_suff", "geometric.d0_nec"),
    provenance="abstract",
    controls=SCALING_CONTROLS,
    templated=True,
    seed_rule="Student-t interval over seeds of the per-seed fitted growth exponent, 97.5% in each of two families of laws",
    statement="the block dimension d0* at which spherical codes reach margin {margin} grows like ln N over "
    "N = {n_values} ({seeds} seeds; d0* located per seed and N as the crossing of {margin} by the "
    "least-squares line of the code gap 1 - max coherence against d0, one code draw per d0 over "
    "d0b +- {window} around a bisection crossing d0b): fitting d0* = a + b g(N) with g = (N^p - 1)/p and "
    "with g = (ln N)^q, the 97.5% Student-t intervals over seeds of p and q contain ln N's (p = 0, q = 1) "
    "and exclude N^(1/8) ... N^(1/3) and (ln N)^(1/2), (ln N)^(3/2), (ln N)^2, and the 97.5% interval of "
    "the slope against ln N lies above 0; and on every seed the built model's margin at that seed's "
    "smallest-N bisection crossing (its accepted code) reaches {margin} (derived criterion; "
    "inconclusive when an interval holds both ln N and a competitor or a seed's exponent sits on its "
    "grid's end)",
    quick={
        "n_values": [10, 32, 100, 316, 1000, 3162],
        "margin": 0.25,
        "seeds": 12,
        "d0_max": 64,
        "window": 6,
        "law": "measured",
        "anchor": "ends",
    },
    full={
        "n_values": [10, 32, 100, 316, 1000, 3162, 10000],
        "margin": 0.25,
        "seeds": 8,
        "d0_max": 120,
        "window": 6,
        "law": "measured",
        "anchor": "ends",
    },
)
def log_scaling(p, ctx):
    """The measurement and budget changed when the earlier one could not decide: one bisection
    crossing per seed and N over N = 100 .. 10^4 (3 seeds) put every seed's log exponent q on the
    grid's end 1/60 at base seed 47 and its power exponent at -0.2 (a fail), and verify oc gave it
    power 0.01 (inconclusive 0.96; no seed count up to 64 reached 0.8): one crossing moves with the
    extreme of one draw's coherences (sd about 2.4 in d0, pilot seeds 100-107), so a seed's curve
    bends at random. Now each d0* is the crossing of a line through 13 draws around the bisection
    crossing (sd about 1, pilot seeds 110-127), over 2.5 decades of N from 10 (the asymptotic
    median threshold of the cap-area tail is affine in ln N there: q = 1.03-1.05 from N = 10 to
    10^6), with 6 seeds: a simulation of the criterion on ln N data with sd 0.8-1.0 passed 74-91%
    at that budget and 30-47% at 3 seeds over N = 100 .. 10^4; the window half-width, grid and
    seed count were fixed on those pilots and the simulation, never on a judged seed. The margin
    part reads the bisection crossing, whose code reaches the margin by construction of the
    search; the rows' ``d0_star`` keep those integer crossings (the atlas reads them), ``d0_line``
    the judged line crossings.

    Controls re-anchored and seeds 6 -> 12 (undecided at 6: pass at base seed 100, inconclusive at
    0, 47, 101, 102): the competitor controls were curves y0 g(N) / g(N_0) through each seed's
    smallest-N threshold, so N^(1/8) from N = 10 rose by about 8 against the measured 26 and its own
    fitted exponent was too loose to exclude ln N (about 100-130 seeds would have rejected it). They
    are now a + b g(N) through the seed's own ln N fit at the smallest and the largest N (``anchor``
    "ends", :func:`verify.geometric.scaling_setup.law_table`), the curves ``verify oc`` draws its
    alternatives from: the same rise as the data, only the shape differs. Pilot base seeds 100-103 at
    6 seeds: every control fails as required at each, the claim's own criterion passes at 100, 101
    and is inconclusive at 102, 103 ((ln N)^(3/2) not rejected: q in [0.78, 1.54]); verify oc on the
    6-seed reference record named 12 seeds for power 0.8 (0.98). At 12 seeds, pilot base seeds
    100-103: the criterion passes at each, every control fails as required, verify oc on base seed
    102's record power 0.97, no alternative above 0.00. The anchoring and the budget were fixed
    there, before any judged seed ran; the criterion is unchanged. Quick CPU 4.7 s -> 8.9 s."""
    ns = list(p["n_values"])
    line, bisect, curves = measure_window_thresholds(
        ctx, ns, p["margin"], p["seeds"], p["d0_max"], p["window"]
    )
    table = law_table(line, ns, p["law"], choice(p, "anchor", ("smallest", "ends")))
    rows = [
        {
            "N": n,
            "d0_line": table[n],
            "d0_star": bisect[n],
            "mean": float(np.mean(table[n])),
            "sd": float(np.std(table[n])),
        }
        for n in ns
    ]
    by_seed = [[table[n][s] for n in ns] for s in range(len(table[ns[0]]))]
    # the built model at each seed's own smallest-N bisection crossing, with the code that seed's
    # search accepted there (one model per seed: several code draws, not one)
    n0 = ns[0]
    margins = [margin_at(ctx, n0, int(d0), int(seed)) for seed, d0 in zip(ctx.seeds(p["seeds"]), bisect[n0])]
    judgement = judge_log_scaling(p, table, margins)
    fit = linear_fit([math.log(n) for n in ns], [r["mean"] for r in rows])
    return judgement, {
        "rows": rows,
        "ratios": [r["mean"] / math.log(r["N"]) for r in rows],
        "gap_curves_seed0": curves,
        "model_margin_at_own_threshold": margins,
        "fit": {"slope": fit["slope"], "intercept": fit["intercept"], "r2": fit["r2"]},
        "growth_exponents": {
            family: growth_exponent(ns, by_seed, family) for family in ("boxcox", "log_power")
        },
        "d0_suff_t": [B.d0_sufficient(n, 1 - p["margin"], 0.01) for n in ns],
        "d0_nec": [B.d0_necessary(n, p["margin"]) for n in ns],
    }


@claim(
    "geometric.single_hop.matching_bound",
    source=f"{SRC}, bound B3 (volumetric packing) beside the measured threshold",
    bounds=("geometric.d0_nec",),
    provenance="derived",
    controls=BAND_CONTROLS,
    seed_rule="every seed's threshold must respect B3; 95% Student-t interval over seeds of the per-seed ratio spread",
    templated=True,
    statement="the measured single-hop threshold d0* (spherical codes reach margin {margin}) stays within a "
    "constant factor of the volumetric lower bound d0_nec(N, {margin}) = ln N / ln(1 + sqrt 8) over "
    "N = {n_values} ({seeds} seeds): d0* >= d0_nec for every seed and N (B3 holds), and the 95% interval "
    "over seeds of the spread of d0*/d0_nec (max over N / min over N) lies below {max_spread} (a "
    "convention: over two decades it rejects N^(1/4), N^(1/3), (ln N)^2 and no growth, not N^(1/5) or "
    "slower laws, which geometric.single_hop.log_scaling judges)",
    quick={
        "n_values": [100, 316, 1000, 3162, 10000],
        "margin": 0.25,
        "seeds": 3,
        "d0_max": 64,
        "law": "measured",
        "max_spread": 1.5,
    },
    full={
        "n_values": [100, 1000, 10000, 100000],
        "margin": 0.25,
        "seeds": 5,
        "d0_max": 120,
        "law": "measured",
        "max_spread": 1.5,
    },
)
def matching_bound(p, ctx):
    """The real claim behind the former multihop.bound_ratio (which divided a formula by a
    formula): a measured threshold beside a lower bound as N grows. It shares log_scaling's measurement
    (same parameters, same cache key). The lower bound B3 holds for every code, so the first half can
    only fail on a wrong bound or a wrong measurement; the second half is the "matching" statement: a
    constant factor, not a factor growing with N, judged on the 95% Student-t interval over seeds of
    the spread of d0*/d0_nec (criterion object: verify.criteria.Threshold, a convention of 1.5x).
    The competing-law controls (log_scaling's) must break the band by more than its interval."""
    ns = list(p["n_values"])
    table = law_table(measure_thresholds(ctx, ns, p["margin"], p["seeds"], p["d0_max"])[0], ns, p["law"])
    bound = {n: B.d0_necessary(n, p["margin"]) for n in ns}
    ratios = [float(np.mean(table[n])) / bound[n] for n in ns]
    above = all(d >= bound[n] for n in ns for d in table[n])
    per_seed = [
        max(table[n][s] / bound[n] for n in ns) / min(table[n][s] / bound[n] for n in ns)
        for s in range(len(table[ns[0]]))
    ]
    spread = list(t_interval(per_seed, 0.95))
    judgement = all_of(
        b3=Threshold("seeds and N with d0* >= d0_nec (fraction)", 1.0, ">=", "theory").judge(float(above)),
        spread=Threshold("spread of d0*/d0_nec over N", p["max_spread"], "<=", "convention").judge(
            list(spread), seeds=len(per_seed)
        ),
    )
    resolution = {
        **dict(judgement.resolution),
        "coarse": True,
        "text": judgement.resolution["text"] + "; the 1.5x band rejects N^(1/4) and faster growth, not "
        "N^(1/5) or slower power laws (their ratio to ln N varies by < 1.5x over two decades)",
    }
    judgement = dataclasses.replace(judgement, resolution=resolution)
    return judgement, {
        "rows": [{"N": n, "d0_star": table[n], "d0_nec": bound[n]} for n in ns],
        "ratios_of_means": ratios,
        "per_seed_spread": per_seed,
    }
