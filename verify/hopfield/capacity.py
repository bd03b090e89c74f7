"""Capacity claims of the hopfield area (docs/hopfield.md).

capacity_gain (context gates at finite kappa multiply capacity; the grid runs until gated retrieval
fails), capacity_d3 (the measured gated capacity against D3's effective-competitor prediction),
wrong_context_fails (must fail: an informative but wrong context), r4_tightness (must fail: R4's N
is far below where retrieval breaks). Gate model [derived]: our formalisation of Context-Gated
Associative Retrieval (2605.10970); R4 is Ramsauer et al.'s [reference].
"""

from __future__ import annotations

import math

import numpy as np

from constructions.hopfield.networks import context_gates, retrieval_errors_batch, sphere_patterns
from theory.hopfield.derived import context_capacity_shift, context_competitors, gated_capacity_prediction
from theory.hopfield.reference import capacity, sphere_radius
from theory.papers import paper
from verify.claims import Control, Outcome, claim
from verify.criteria import IntervalTest, Threshold
from verify.measure import t_interval
from verify.previous import stored_previous

PAPER = paper("hopfield")
RAMSAUER = "Ramsauer et al. 2020 (arXiv 2008.02217)"


def crossing(grid, fractions, level=0.5):
    """The N at which the success fraction first falls below ``level``, interpolated linearly in
    log2 N between the two grid points around the fall; None when it starts below the level or
    never falls below it on the grid (the capacity is then off the grid)."""
    if fractions[0] < level:
        return None
    for k in range(1, len(grid)):
        if fractions[k] < level:
            x0, x1 = math.log2(grid[k - 1]), math.log2(grid[k])
            t = (fractions[k - 1] - level) / (fractions[k - 1] - fractions[k])
            return float(2 ** (x0 + t * (x1 - x0)))
    return None


def _wrong_gates(n, target, n_eff, kappa, gen):
    """Log-gates of another memory's context: N_eff memories open, the target not among them and
    gated at -kappa like every other closed memory (informative about something, wrong here)."""
    other = int((target + 1 + gen.integers(n - 1)) % n)
    u, active = context_gates(n, other, n_eff, kappa, gen)
    while target in active:
        u, active = context_gates(n, other, n_eff, kappa, gen)
    return u


def _sweep(params, ctx, kappa, wrong=False):
    """Per seed: success fractions (error <= threshold, query x_i) of ungated and gated retrieval
    on every grid N, and the capacities (crossings of 0.5)."""

    def compute():
        rows = []
        for s in ctx.seeds(params["seeds"]):
            gen = ctx.rng(15, s)
            frac_u, frac_g = [], []
            for n in params["grid"]:
                X = sphere_patterns(n, params["dim"], 1.0, gen)
                targets = gen.choice(n, size=min(params["targets"], n), replace=False)
                ne = min(params["n_eff"], n - 1 if wrong else n)
                U = np.stack(
                    [
                        (
                            _wrong_gates(n, int(t), ne, kappa, gen)
                            if wrong
                            else context_gates(n, int(t), ne, kappa, gen)[0]
                        )
                        for t in targets
                    ]
                )
                e_u = retrieval_errors_batch(X, targets, params["beta"])
                e_g = retrieval_errors_batch(X, targets, params["beta"], U)
                frac_u.append(float(np.mean(e_u <= params["threshold"])))
                frac_g.append(float(np.mean(e_g <= params["threshold"])))
            rows.append(
                {
                    "seed": s,
                    "frac_ungated": frac_u,
                    "frac_gated": frac_g,
                    "capacity_ungated": crossing(params["grid"], frac_u),
                    "capacity_gated": crossing(params["grid"], frac_g),
                }
            )
        return rows

    key = (
        "hopfield.capacity_sweep",
        params["dim"],
        params["beta"],
        params["threshold"],
        tuple(params["grid"]),
        params["targets"],
        params["n_eff"],
        params["seeds"],
        float(kappa),
        bool(wrong),
        ctx.seed,
    )
    return ctx.shared(key, compute)


def _ratio_verdict(rows, min_ratio):
    ratios = []
    for r in rows:
        cu, cg = r["capacity_ungated"], r["capacity_gated"]
        r["ratio"] = None if cu is None or cg is None else cg / cu
        ratios.append(r["ratio"])
    ok = all(x is not None and x >= min_ratio for x in ratios)
    finite = [math.log2(x) for x in ratios if x is not None and x > 0]
    interval = [2**v for v in t_interval(finite)] if len(finite) >= 2 else None
    return ok, ratios, interval


CAPACITY_QUICK = {
    "dim": 16,
    "beta": 16.0,
    "threshold": 1e-3,
    "grid": [2**k for k in range(4, 15)],
    "targets": 200,
    "n_eff": 16,
    "kappa": 4.0,
    "seeds": 3,
    "min_ratio": 16,
}
WRONG_CONTEXT = Control(
    "wrong_context",
    {"control": "wrong_context"},
    "an informative but wrong context: another memory's 16-memory active set, "
    "the target gated at -kappa with the other closed memories; gating then "
    "hurts retrieval and the criterion must fail",
)


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
    "excludes e^(0.75 kappa) and e^(1.25 kappa) (c = 0.75, 1.25)",
    quick=CAPACITY_QUICK,
    full={**CAPACITY_QUICK, "dim": 32, "grid": [2**k for k in range(4, 19)]},
    seed_rule="95% paired Student-t interval over seeds seed..seed+2 of c - c_D3",
    controls=[WRONG_CONTEXT],
)
def capacity_gain(params, ctx):
    wrong = params.get("control") == "wrong_context"
    rows = _sweep(params, ctx, float(params["kappa"]), wrong=wrong)
    ok, ratios, interval = _ratio_verdict(rows, params["min_ratio"])
    details = {
        "grid": params["grid"],
        "seeds": rows,
        "dim": params["dim"],
        "kappa": params["kappa"],
        "ratio_interval95": interval,
    }
    if not wrong:
        # hard gates on the grid 16..4096 (replaced: with hard gates the gated problem is the same
        # 16-memory network at every N, so the ratio was only a grid-limited lower bound)
        details["previous_criterion"] = stored_previous(
            "hopfield.capacity.gain", ctx.scale, ctx.seed, {k: v for k, v in params.items() if k != "control"}
        )
    # replaced in turn: "every seed's ratio >= 16" also accepted a gain of e^(0.7 kappa)
    details["previous_criterion_min_ratio"] = {
        "rule": f"N_g/N_u >= {params['min_ratio']} in every seed",
        "passed": ok,
    }
    kappa = float(params["kappa"])
    paired = _paired_d3(rows, params["n_eff"], kappa)
    if paired is None:
        judgement = Threshold("seeds with both capacities on the grid", len(rows), ">=", "convention").judge(
            0.0
        )
    else:
        c_d3, diffs = paired
        lo, hi = t_interval(diffs)
        judgement = IntervalTest(
            "gain exponent c = ln(N_g/N_u)/kappa",
            c_d3,
            {"e^(0.75 kappa)": 0.75, "e^(1.25 kappa)": 1.25},
            theory_name="D3",
        ).judge([c_d3 + lo, c_d3 + hi], seeds=len(rows))
        details.update(c_d3=c_d3, c_minus_c_d3=diffs)
    return Outcome.judged(judgement, details={**details, "ratios": ratios})


def _paired_d3(rows, n_eff: int, kappa: float):
    """(mean D3 gain exponent, per-seed c - c_D3) of the sweep's seeds, or None when a seed's
    capacity is off the grid or not above N_eff (D3 then predicts nothing)."""
    c_d3, diffs = [], []
    for r in rows:
        nu, ng = r["capacity_ungated"], r["capacity_gated"]
        if nu is None or ng is None or nu <= n_eff or ng <= 0:
            return None
        pred = gated_capacity_prediction(nu, n_eff, kappa)
        c_d3.append(math.log(pred / nu) / kappa)
        diffs.append(math.log(ng / pred) / kappa)
    return float(np.mean(c_d3)), diffs


@claim(
    "hopfield.capacity.d3",
    source=f"{PAPER}, D3 (our formalisation)",
    provenance="derived",
    bounds=("hopfield.capacity_shift",),
    templated=True,
    statement="at kappa = {kappa} the measured gated capacity N_g matches D3's effective-competitor "
    "prediction N_eff + (N_u - N_eff) e^kappa from each seed's measured ungated capacity N_u: the 95% "
    "t-interval over {seeds} seeds of ln(N_g / prediction) contains 0 (factor 1) and excludes "
    "ln({max_factor}) and -ln({max_factor}) (off by a factor {max_factor} either way)",
    quick={**CAPACITY_QUICK, "max_factor": 2.0},
    full={**CAPACITY_QUICK, "dim": 32, "grid": [2**k for k in range(4, 19)], "max_factor": 2.0},
    seed_rule="95% Student-t interval over seeds seed..seed+2 (the same sweep as capacity.gain)",
    controls=[WRONG_CONTEXT],
)
def capacity_d3(params, ctx):
    """D3 at finite kappa against the measured shift. Under the context gates of
    docs/hopfield.md#setting the gated bound at N equals the ungated bound at C_g(N) + 1 memories
    (theory.hopfield.derived.context_competitors), so D3 predicts N_g from N_u. In separation units
    the predicted shift at N_g is context_capacity_shift(beta, N_g, N_eff, kappa) and the measured
    one is beta^{-1} log((N_g - 1)/(N_u - 1)); both are recorded."""
    wrong = params.get("control") == "wrong_context"
    rows = _sweep(params, ctx, float(params["kappa"]), wrong=wrong)
    kappa, ne, beta = float(params["kappa"]), params["n_eff"], params["beta"]
    ok = True
    for r in rows:
        nu, ng = r["capacity_ungated"], r["capacity_gated"]
        if nu is None or ng is None or nu <= ne:
            r.update(predicted_gated=None, factor=None)
            ok = False
            continue
        pred = gated_capacity_prediction(nu, ne, kappa)
        r["predicted_gated"] = pred
        r["factor"] = ng / pred
        if ng > ne:
            r["shift_d3"] = context_capacity_shift(beta, max(2, int(round(ng))), ne, kappa)
            r["shift_measured"] = math.log((ng - 1) / (nu - 1)) / beta
            r["competitors_at_ng"] = context_competitors(max(ne, int(round(ng))), ne, kappa)
        ok &= 1.0 / params["max_factor"] <= r["factor"] <= params["max_factor"]
    factors = [r.get("factor") for r in rows]
    if all(f is not None and f > 0 for f in factors):
        off = math.log(params["max_factor"])
        judgement = IntervalTest(
            "ln(N_g / D3 prediction)",
            0.0,
            {f"x{params['max_factor']:g}": off, f"/{params['max_factor']:g}": -off},
            "D3",
        ).judge(list(t_interval([math.log(f) for f in factors])), seeds=len(rows))
    else:
        judgement = Threshold("seeds with both capacities above N_eff", len(rows), ">=", "convention").judge(
            float(sum(f is not None for f in factors))
        )
    return Outcome.judged(
        judgement,
        details={
            "factors": factors,
            "previous_criterion": {
                "rule": f"every seed's N_g / prediction in [1/{params['max_factor']}, {params['max_factor']}]",
                "passed": bool(ok),
            },
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


@claim(
    "hopfield.wrong_context.fails",
    source=f"{PAPER}, D3 (our formalisation)",
    provenance="derived",
    bounds=("hopfield.capacity_shift",),
    demonstrates_failure=True,
    statement="MUST FAIL: with an informative but wrong context (another memory's active set, the "
    "target gated at -kappa = -4) the capacity_gain criterion (N_g/N_u >= 16 in every "
    "seed) is violated; bracketed by the correct context, where it holds",
    quick=CAPACITY_QUICK,
    seed_rule="the capacity_gain criterion over seeds seed..seed+2 must be violated",
    controls=[
        Control(
            "correct_context",
            {"control": "correct_context"},
            "the other side of the bracket: the context that contains the target; the "
            "capacity_gain criterion holds there, so the demonstration must fail",
        )
    ],
)
def wrong_context_fails(params, ctx):
    """Replaces no_context.fails, whose kappa = 0 gates made gated and ungated one
    computation. A wrong context changes the computation and still carries information."""
    wrong = params.get("control") != "correct_context"
    rows = _sweep(params, ctx, float(params["kappa"]), wrong=wrong)
    inner_ok, ratios, interval = _ratio_verdict(rows, params["min_ratio"])
    return Outcome(
        predicted="capacity_gain criterion violated",
        measured=ratios,
        passed=not inner_ok,
        details={
            "inner_criterion_held": inner_ok,
            "seeds": rows,
            "ratio_interval95": interval,
            "context": "wrong" if wrong else "correct",
        },
    )


def _misses(X, targets, beta, tol, chunk=250):
    """How many targets miss S_i after one update from x_i (errors in chunks of targets)."""
    errs = np.concatenate(
        [retrieval_errors_batch(X, targets[c : c + chunk], beta) for c in range(0, len(targets), chunk)]
    )
    return int(np.sum(errs > tol)), float(errs.max() / tol)


@claim(
    "hopfield.capacity.r4_tightness",
    source=f"{RAMSAUER}, Thm 3",
    provenance="reference",
    bounds=("hopfield.capacity",),
    demonstrates_failure=True,
    statement="MUST FAIL: far above R4's N (beta=1, K=3, d=16, p=0.001: N_R4 = 2.49), at N = 16384, "
    "one-update retrieval misses S_i (error > 1/(beta N M)) for at least one of 2000 "
    "sampled targets in every seed; bracketed at N = 1024, where no pattern misses in "
    "some seed",
    quick={"beta": 1.0, "K": 3.0, "dim": 16, "p": 0.001, "n_patterns": 16384, "targets": 2000, "seeds": 3},
    seed_rule="every seed of seed..seed+2 (its control: not every seed may miss)",
    controls=[
        Control(
            "near_R4",
            {"n_patterns": 1024},
            "the other side of the bracket: at N = 1024 all patterns (targets = N) were "
            "retrieved in pilot seeds 100-105, so 'retrieval breaks in every seed' must fail",
        )
    ],
)
def r4_tightness(params, ctx):
    """R4 was only checked at its own N, where the worst error is 1e-19 against a
    tolerance of 1e-2. Here N is pushed until retrieval breaks. The bracket was chosen on pilot
    seeds 100-105 (per 2000 sampled targets: 3-8 misses at 8192, 13-24 at 16384; none of all 1024
    at 1024). A first version (200 targets at N = 32768, chosen on pilot seeds 100-102) missed
    0, 3, 6 targets at judged seeds 0, 1, 2: 200 samples cannot witness a per-target miss rate of
    about 1%; its result was measured once and is kept in details["previous_criterion"] (stored,
    verify/previous.py). The doubling sweep
    from N_R4 (200 sampled targets per N) is recorded: the break over N_R4 is R4's slack."""
    beta, k, d = params["beta"], params["K"], params["dim"]
    n_r4 = capacity(beta, k, d, params["p"])
    radius = k * math.sqrt(d - 1)
    n = params["n_patterns"]
    rows, broke = [], []
    for s in ctx.seeds(params["seeds"]):
        gen = ctx.rng(17, s)
        X = sphere_patterns(n, d, radius, gen)
        targets = gen.choice(n, size=min(params["targets"], n), replace=False)
        missed, worst = _misses(X, targets, beta, sphere_radius(beta, n, radius))
        broke.append(missed > 0)
        rows.append(
            {
                "seed": s,
                "N": n,
                "targets": len(targets),
                "missed": missed,
                "worst_error_over_tolerance": worst,
            }
        )
    details = {"N_R4": n_r4, "rows": rows}
    if n > 1024:  # the breaking side of the bracket: the first design and the doubling sweep
        details["previous_criterion"] = stored_previous(
            "hopfield.capacity.r4_tightness",
            ctx.scale,
            ctx.seed,
            {k: v for k, v in params.items() if k != "control"},
        )
        sweep = []
        for s in ctx.seeds(params["seeds"]):
            gen, m, brk = ctx.rng(18, s), max(2, int(math.floor(n_r4))), None
            while m <= 4 * n:
                X = sphere_patterns(m, d, radius, gen)
                t = gen.choice(m, size=min(200, m), replace=False)
                if _misses(X, t, beta, sphere_radius(beta, m, radius))[0]:
                    brk = m
                    break
                m *= 2
            sweep.append(
                {"seed": s, "first_break": brk, "break_over_N_R4": None if brk is None else brk / n_r4}
            )
        details["doubling_sweep"] = sweep
    return Outcome(
        predicted="a sampled target misses S_i in every seed",
        measured=[r["missed"] for r in rows],
        passed=all(broke),
        details=details,
    )
