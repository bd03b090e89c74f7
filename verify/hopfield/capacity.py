"""Capacity claims of the hopfield area (docs/hopfield.md).

capacity_gain (context gates at finite kappa multiply capacity; the grid runs until gated retrieval
fails), capacity_d3 (the measured gated capacity against D3's effective-competitor prediction),
wrong_context_fails (must fail: an informative but wrong context), r4_tightness (R4 is sufficient
and loose: where retrieval of every pattern breaks, against R4's N). Gate model [derived]: our formalisation of Context-Gated
Associative Retrieval (2605.10970); R4 is Ramsauer et al.'s [reference].
"""

from __future__ import annotations

import math

import numpy as np

from constructions.hopfield.networks import retrieval_errors_batch, sphere_patterns
from constructions.search import smallest_size
from theory.hopfield.derived import context_capacity_shift, gated_capacity_prediction
from theory.hopfield.reference import capacity, sphere_radius
from theory.papers import paper
from verify.claims import Control, claim, rng_for
from verify.criteria import Judgement, Threshold
from verify.hopfield.capacity_setup import (
    CAPACITY_QUICK,
    WRONG_CONTEXT,
    _d3_judgement,
    _gain_judgement,
    _paired_d3,
    _ratio_verdict,
    crossing,
    d3_nearest_judgement,
    gain_nearest_judgement,
    is_wrong_context,
    sweep_rows,
)
from verify.measure import t_interval

PAPER = paper("hopfield")
RAMSAUER = "Ramsauer et al. 2020 (arXiv 2008.02217)"


def _gain(params, ctx):
    """capacity.gain's criterion on the sweep of ``params`` (:func:`_gain_judgement`): (judgement,
    details shared by capacity.gain and wrong_context.fails)."""
    rows = sweep_rows(params, ctx)
    ratios, interval = _ratio_verdict(rows)
    judgement, paired = _gain_judgement(rows, params["n_eff"], float(params["kappa"]))
    details = {"seeds": rows, "ratios": ratios, "ratio_interval95": interval}
    if paired is not None:
        details.update(c_d3=paired[0], c_minus_c_d3=paired[1])
    return judgement, details


@claim(
    "hopfield.capacity.gain",
    source=f"{PAPER}, D3 (our formalisation)",
    provenance="derived",
    bounds=("hopfield.capacity_shift",),
    templated=True,
    statement="with context gates at distractor log-odds kappa = {kappa} (N_eff = {n_eff} open), the gated "
    "capacity N_g (N where the fraction retrieved to error <= {threshold} falls through 0.5) grows "
    "exponentially in kappa as D3 predicts: the gain exponent c = ln(N_g/N_u)/kappa has a 95% "
    "interval over {seeds} seeds (D3's mean exponent plus the paired t-interval of each seed's "
    "difference from D3's, which cancels the ungated capacity's noise) that contains D3's c and "
    "excludes e^(0.75 kappa), the plain N_u e^kappa and e^(1.25 kappa) (c = 0.75, 1, 1.25)",
    quick=CAPACITY_QUICK,
    full={**CAPACITY_QUICK, "dim": 32, "grid": [2**k for k in range(4, 19)], "seeds": 3},
    seed_rule="95% paired Student-t interval over seeds seed..seed+seeds-1 of c - c_D3",
    controls=[WRONG_CONTEXT],
)
def capacity_gain(params, ctx):
    judgement, details = _gain(params, ctx)
    return judgement, {"grid": params["grid"], "dim": params["dim"], "kappa": params["kappa"], **details}


@claim(
    "hopfield.capacity.d3",
    source=f"{PAPER}, D3 (our formalisation)",
    provenance="derived",
    bounds=("hopfield.capacity_shift",),
    templated=True,
    statement="at kappa = {kappa} the measured gated capacity N_g matches D3's effective-competitor "
    "prediction N_eff + (N_u - N_eff) e^kappa from each seed's measured ungated capacity N_u: the 95% "
    "t-interval over {seeds} seeds of ln(N_g / prediction) contains 0 (factor 1) and excludes "
    "ln({max_factor}) and -ln({max_factor}) (off by a factor {max_factor} either way) and the plain law "
    "N_u e^kappa's mean ln(N_u e^kappa / prediction)",
    quick={**CAPACITY_QUICK, "max_factor": 2.0},
    full={**CAPACITY_QUICK, "dim": 32, "grid": [2**k for k in range(4, 19)], "seeds": 3, "max_factor": 2.0},
    seed_rule="95% Student-t interval over seeds seed..seed+seeds-1 (the same sweep as capacity.gain)",
    controls=[WRONG_CONTEXT],
)
def capacity_d3(params, ctx):
    """D3 at finite kappa against the measured shift. Under the context gates of
    docs/hopfield.md#setting the gated bound at N equals the ungated bound at C_g(N) + 1 memories
    (theory.hopfield.derived.context_competitors), so D3 predicts N_g from N_u. In separation units
    the predicted shift at N_g is context_capacity_shift(beta, N_g, N_eff, kappa) and the measured
    one is beta^{-1} log((N_g - 1)/(N_u - 1)); both are recorded."""
    rows = sweep_rows(params, ctx)
    kappa, ne, beta = float(params["kappa"]), params["n_eff"], params["beta"]
    for r in rows:
        nu, ng = r["capacity_ungated"], r["capacity_gated"]
        if nu is None or ng is None or nu <= ne:
            r.update(predicted_gated=None, factor=None)
            continue
        pred = gated_capacity_prediction(nu, ne, kappa)
        r["predicted_gated"] = pred
        r["factor"] = ng / pred
        if ng > ne:
            r["shift_d3"] = context_capacity_shift(beta, max(2, int(round(ng))), ne, kappa)
            r["shift_measured"] = math.log((ng - 1) / (nu - 1)) / beta
    return (
        _d3_judgement(rows, ne, kappa, params["max_factor"]),
        {
            "factors": [r.get("factor") for r in rows],
            "seeds": [
                {
                    k: r.get(k)
                    for k in (
                        "seed",
                        "capacity_ungated",
                        "capacity_gated",
                        "predicted_gated",
                        "factor",
                        "shift_d3",
                        "shift_measured",
                    )
                }
                for r in rows
            ],
            "kappa": kappa,
        },
    )


NEAREST_WHY = (
    "the interval must lie nearer the theory than each named alternative, between the midpoints "
    "from the theory to its nearest alternative on each side (a convention fixed before any run of "
    "these claims, the same for each): a fail needs the interval wholly beyond an edge, so a small "
    "true offset from the theory gives pass or inconclusive, not a verdict that flips between pass "
    "and fail with the base seed"
)


@claim(
    "hopfield.capacity.gain_nearest",
    source=f"{PAPER}, D3 (our formalisation)",
    provenance="derived",
    bounds=("hopfield.capacity_shift",),
    templated=True,
    statement="with context gates at distractor log-odds kappa = {kappa} (N_eff = {n_eff} open), the gated "
    "capacity N_g (N where the fraction retrieved to error <= {threshold} falls through 0.5) grows "
    "exponentially in kappa with D3's exponent rather than a competing one: the gain exponent c = "
    "ln(N_g/N_u)/kappa has a 95% interval over {seeds} seeds (D3's mean exponent plus the paired "
    "Student-t interval of each seed's difference from D3's) that lies nearer D3's c than e^(0.75 "
    "kappa), the plain N_u e^kappa and e^(1.25 kappa) (c = 0.75, 1, 1.25), between the midpoints from "
    "D3's c to the nearest of them on each side (pass); wholly beyond a midpoint it fails, straddling "
    "one it is inconclusive",
    quick=CAPACITY_QUICK,
    full={**CAPACITY_QUICK, "dim": 32, "grid": [2**k for k in range(4, 19)], "seeds": 3},
    seed_rule="95% paired Student-t interval over seeds seed..seed+seeds-1 of c - c_D3, shifted by D3's mean c",
    controls=[WRONG_CONTEXT],
)
def capacity_gain_nearest(params, ctx):
    """capacity.gain restated with an inconclusive band, on the same sweep and seeds (shared
    through the run's cache, so it costs nothing more in a registry run). capacity.gain's interval
    test around D3's point value flips with the base seed (ledger: at d = 16 the exponent sits
    about 0.03 below D3's and 12 seeds resolve that at some base seeds only); it stays as history.
    The rule (:func:`verify.hopfield.capacity_setup.nearest_band`): see NEAREST_WHY."""
    rows = sweep_rows(params, ctx)
    kappa = float(params["kappa"])
    judgement = gain_nearest_judgement(rows, params["n_eff"], kappa)
    details = {
        "grid": params["grid"],
        "dim": params["dim"],
        "kappa": kappa,
        "seeds": rows,
        "why": NEAREST_WHY,
    }
    paired = _paired_d3(rows, params["n_eff"], kappa)
    if paired is not None:
        details.update(c_d3=paired[0], c_minus_c_d3=paired[1])
    return judgement, details


@claim(
    "hopfield.capacity.d3_nearest",
    source=f"{PAPER}, D3 (our formalisation)",
    provenance="derived",
    bounds=("hopfield.capacity_shift",),
    templated=True,
    statement="at kappa = {kappa} the measured gated capacity N_g is about D3's effective-competitor "
    "prediction N_eff + (N_u - N_eff) e^kappa (from each seed's measured ungated capacity N_u), nearer "
    "it than any named alternative: the 95% Student-t interval over {seeds} seeds of ln(N_g / "
    "prediction) lies between the midpoints from D3's 0 to its nearest alternatives, -ln({max_factor}) "
    "below and, above, the smaller of ln({max_factor}) and the plain law N_u e^kappa's mean ln(N_u "
    "e^kappa / prediction) (pass); wholly beyond a midpoint it fails, straddling one it is inconclusive",
    quick={**CAPACITY_QUICK, "max_factor": 2.0},
    full={**CAPACITY_QUICK, "dim": 32, "grid": [2**k for k in range(4, 19)], "seeds": 3, "max_factor": 2.0},
    seed_rule="95% Student-t interval over seeds seed..seed+seeds-1 (the same sweep as capacity.gain)",
    controls=[WRONG_CONTEXT],
)
def capacity_d3_nearest(params, ctx):
    """capacity.d3 restated with an inconclusive band, on the same sweep and seeds (shared through
    the run's cache). capacity.d3's interval test (contains 0) flips with the base seed (ledger: at
    d = 16, N_g is about 0.8-0.95 of D3's prediction at kappa = 4); it stays as history. D3 says
    the gated memory behaves like an ungated one with *about* (N_eff - 1) e^-kappa + 1 competitors:
    this rule reads "about" as "nearer D3 than a factor 2 either way or the plain law N_u e^kappa"
    (:func:`verify.hopfield.capacity_setup.nearest_band`; NEAREST_WHY)."""
    rows = sweep_rows(params, ctx)
    kappa, ne = float(params["kappa"]), params["n_eff"]
    per_seed = []
    for r in rows:
        nu, ng = r["capacity_ungated"], r["capacity_gated"]
        ok = nu is not None and ng is not None and nu > ne and ng > 0
        pred = gated_capacity_prediction(nu, ne, kappa) if ok else None
        per_seed.append(
            {
                "seed": r["seed"],
                "capacity_ungated": nu,
                "capacity_gated": ng,
                "predicted_gated": pred,
                "ln_factor": math.log(ng / pred) if ok else None,
            }
        )
    judgement = d3_nearest_judgement(rows, ne, kappa, params["max_factor"])
    return judgement, {"kappa": kappa, "seeds": per_seed, "why": NEAREST_WHY}


@claim(
    "hopfield.wrong_context.fails",
    source=f"{PAPER}, D3 (our formalisation)",
    provenance="derived",
    bounds=("hopfield.capacity_shift",),
    demonstrates_failure=True,
    statement="MUST FAIL: with an informative but wrong context (another memory's active set, the "
    "target gated at -kappa = -{kappa}) the capacity.gain criterion (the paired 95% interval over "
    "{seeds} seeds of the gain exponent c = ln(N_g/N_u)/kappa contains D3's c and excludes 0.75 and "
    "1.25; a seed whose capacity leaves the grid fails it) is violated; on the other side, the "
    "correct context, it holds. The hypothesis dropped is a switch (which context), not a scale, so "
    "this is not a bracket in a boundary",
    templated=True,
    quick={**CAPACITY_QUICK, "context": "wrong"},
    seed_rule="the capacity.gain criterion over seeds seed..seed+seeds-1 must be violated (its verdict fail)",
    controls=[
        Control(
            "correct_context",
            {"context": "correct"},
            "the other side: the context that contains the target; the capacity.gain criterion "
            "holds there, so the demonstration must fail",
        )
    ],
)
def wrong_context_fails(params, ctx):
    """Replaces no_context.fails, whose kappa = 0 gates made gated and ungated one
    computation. A wrong context changes the computation and still carries information.

    Criterion: capacity.gain's own judgement (:func:`_gain_judgement`) on the wrong-context sweep,
    turned over: it passes when that judgement fails, fails when it passes, and is inconclusive
    when it is. (Before, the inner criterion was capacity.gain's replaced rule, N_g/N_u >= 16 on
    every seed; its verdict is kept in ``details.previous_criterion``.)"""
    inner, details = _gain(params, ctx)
    verdict = {"fail": "pass", "pass": "fail", "inconclusive": "inconclusive"}[inner.verdict]
    context = "wrong" if is_wrong_context(params) else "correct"  # correct: its control
    judgement = Judgement(
        verdict,
        {"capacity.gain criterion": "violated (its verdict fail)", "context": context},
        {"capacity.gain verdict": inner.verdict, **dict(inner.measured)},
        {
            "rule": "must_fail_switch",
            "value": inner.resolution.get("value"),
            "coarse": False,
            "text": f"{context} context: capacity.gain criterion {inner.verdict} ("
            + inner.resolution.get("text", "")
            + ")",
        },
        inner.budget,
    )
    return judgement, {"inner_criterion_verdict": inner.verdict, "context": context, **details}


def _all_retrieved(n, params, seed, k) -> bool:
    """Whether one update from every x_i of draw (seed, k) at size N lands within 1/(beta N M) of x_i
    (R4's event); stops at the first chunk of targets with a miss."""
    from constructions.hopfield.networks import clustered_patterns

    gen = rng_for(seed, "hopfield.capacity.all_retrieved.gen", k, n)
    radius = params["K"] * math.sqrt(params["dim"] - 1)
    if params["spread"] is None:
        X = sphere_patterns(n, params["dim"], radius, gen)
    else:
        X = clustered_patterns(n, params["dim"], radius, params["spread"], gen)
    tol = sphere_radius(params["beta"], n, radius)
    for start in range(0, n, 250):
        targets = np.arange(start, min(n, start + 250))
        if np.any(retrieval_errors_batch(X, targets, params["beta"]) > tol):
            return False
    return True


def r4_grid(params) -> list[int]:
    """The sizes N = 2^(k/per_octave), rounded, from the first to the last of ``n_range``."""
    lo, hi = params["n_range"]
    k0, k1 = (round(params["per_octave"] * math.log2(v)) for v in (lo, hi))
    return sorted({int(round(2 ** (k / params["per_octave"]))) for k in range(k0, k1 + 1)})


@claim(
    "hopfield.capacity.r4_tightness",
    source=f"{RAMSAUER}, Thm 3",
    provenance="reference",
    bounds=("hopfield.capacity",),
    templated=True,
    statement="R4 is a sufficient condition, and loose: at beta = {beta}, K = {K}, d = {dim} and failure "
    "probability p = {p} it guarantees N_R4 = sqrt(p) c^((d-1)/4) patterns uniform on the sphere of radius "
    "K sqrt(d-1); the measured boundary, the N on the grid 2^(k/{per_octave}) over {n_range} at which the "
    "fraction of {draws} pattern draws with every pattern retrieved by one update (error <= 1/(beta N M)) "
    "first falls below 1 - p (interpolated in log2 N), lies above N_R4 in each of {seeds} seeds: the "
    "looseness factor, measured N / N_R4 (R4 bounds the capacity from below), has a 95% Student-t "
    "interval over seeds at or above 1 (inconclusive when it straddles 1), and is reported",
    quick={
        "beta": 1.0,
        "K": 3.0,
        "dim": 16,
        "p": 0.5,
        "draws": 8,
        "seeds": 3,
        "n_range": [4, 16384],
        "per_octave": 2,
        "spread": None,
    },
    full={
        "beta": 1.0,
        "K": 3.0,
        "dim": 16,
        "p": 0.5,
        "draws": 16,
        "seeds": 5,
        "n_range": [4, 16384],
        "per_octave": 4,
        "spread": None,
    },
    seed_rule="draws (seed, k), k < draws, for each seed of seed..seed+seeds-1; 95% Student-t interval "
    "over seeds of the looseness factor",
    controls=[
        Control(
            "clustered",
            {"spread": 0.25},
            "patterns clustered in a cap (clustered_patterns, spread 0.25), dropping R4's uniform-pattern "
            "hypothesis: retrieval breaks below N_R4, so the criterion must fail",
        )
    ],
)
def r4_tightness(params, ctx):
    """Was a must-fail bracket (every seed misses a sampled target at N = 16384; not at N = 1024),
    but R4 is only sufficient: above N_R4 nothing is guaranteed to break, and its points sat 400-6600x
    above N_R4 (2.49 at p = 0.001). The claim now measures where retrieval of every pattern breaks
    and R4's looseness. The failure probability 1/2 makes the measured event (every pattern retrieved
    in half the draws) the one R4 bounds at that p; N_R4 at the previous p = 0.001 is in details. The
    grid, draws and the control's spread were tried on pilot seeds 100-101 (crossings 2048 and 3327
    against N_R4 = 14.8; clustered patterns: at or below N = 4), not on a judged seed. The replaced
    bracket's result was measured once and is stored (verify/previous.py), with the first design
    it replaced (details["previous_criterion"]["earlier"])."""

    n_r4 = capacity(params["beta"], params["K"], params["dim"], params["p"])
    grid, level = r4_grid(params), 1.0 - params["p"]
    rows = []
    for s in ctx.seeds(params["seeds"]):
        fractions = []

        def breaks(n: int, s: int = s) -> bool:  # scanned up to the first size below the level
            fractions.append(
                float(np.mean([_all_retrieved(n, params, s, k) for k in range(params["draws"])]))
            )
            return fractions[-1] < level

        smallest_size(grid, breaks, strategy="scan")  # the crossing is decided there
        found = crossing(grid[: len(fractions)], fractions, level)
        if found is None:  # below the grid (at most its first size) or above it (at least its last)
            found, bound = (grid[0], "at most") if fractions[0] < level else (grid[-1], "at least")
        else:
            bound = "measured"
        rows.append(
            {
                "seed": s,
                "N": grid[: len(fractions)],
                "fraction_all_retrieved": fractions,
                "crossing": found,
                "crossing_is": bound,
                "factor": found / n_r4,
            }
        )
    factors = [r["factor"] for r in rows]
    interval = t_interval(factors)
    judgement = Threshold("looseness factor measured N / N_R4", 1.0, ">=", "theory").judge(
        list(interval), seeds=len(rows)
    )
    return judgement, {
        "N_R4": n_r4,
        "N_R4_p0.001": capacity(params["beta"], params["K"], params["dim"], 0.001),
        "rows": rows,
        "factor_interval95": list(interval),
        "patterns": "uniform" if params["spread"] is None else f"clustered, spread {params['spread']}",
    }
