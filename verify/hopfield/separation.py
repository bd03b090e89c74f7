"""Claims of the hopfield area on retrieval near a stored pattern of the ungated network
(docs/hopfield.md): separation_condition and separation_violated_fails (R1, and its looseness in
beta), r2_contraction (R2; R3 is covered by D1, see its docstring), one_step_error (D1),
error_exponential_in_beta. Split from verify/hopfield/ungated.py (registered after its claims);
helpers in verify/hopfield/separation_setup.py.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import softmax

from constructions.hopfield.networks import (
    noisy_query,
    retrieval_distribution,
    retrieval_error,
    sphere_patterns,
    update,
)
from theory.hopfield.derived import epsilon_ungated, error_bound, norm_bound, separation
from theory.hopfield.reference import jacobian_norm_bound, sphere_radius, well_separated_threshold
from theory.papers import paper
from verify.claims import Control, choice, claim
from verify.criteria import EverySeed, Threshold, all_of
from verify.hopfield.separation_setup import (  # noqa: F401  (r1_beta, measured_beta: re-exported)
    CONDITIONS,
    _query,
    _r1_sweep,
    _retrieval_grid,
    measured_beta,
    r1_beta,
    retrieval_error_bound_curve,
)

RAMSAUER = "Ramsauer et al. 2020 (arXiv 2008.02217)"
PAPER = paper("hopfield")
PATTERNS = ("meeting R1", "violating R1")  # separation.condition's, r2_contraction's; violating: controls'
#: one_step.error's parameters after d and N (eps_at "pattern": eps at r = 0, its control's)
ONE_STEP = {"beta_range": [0.5, 8.0], "noise": 0.05, "trials": 400, "seeds": 5, "eps_at": "query"}


@claim(
    "hopfield.separation.condition",
    source=f"{RAMSAUER}, Thm 4",
    provenance="reference",
    bounds=("hopfield.well_separated",),
    templated=True,
    statement="every sphere pattern meeting R1 (N = {n_patterns}, d = {dim}, radius {radius}) ends, after "
    "{updates} updates from x_i, within 1/(beta N M) of x_i at each beta of {betas} (on every one of "
    "{seeds} seeds, the largest distance over its patterns meeting R1, in units of 1/(beta N M), is at "
    "most 1), and at least {min_meeting} (pattern, seed) pairs of the {seeds} seeds meet R1 per beta",
    quick={
        "dim": 32,
        "n_patterns": 64,
        "radius": 3.0,
        "betas": [2.0, 8.0],
        "seeds": 5,
        "updates": 200,
        "min_meeting": 40,
        "patterns": "meeting R1",
    },
    seed_rule="every selected pattern of every seed of seed..seed+4, at every beta",
    controls=[
        Control(
            "violators_low_beta",
            {"patterns": "violating R1", "betas": [0.5]},
            "the same criterion on the patterns that VIOLATE R1 at beta = 0.5 (hypothesis "
            "dropped): they settle on a metastable mixture outside S_i, so it must fail",
        )
    ],
)
def separation_condition(params, ctx):
    """Per beta, R1 (theory) puts every selected pattern inside S_i: on every seed the largest
    distance from x_i over the seed's selected patterns, in units of S_i's radius 1/(beta N M), is
    at most 1 (a seed with no selected pattern counts 0); the minimum count of selected pairs is a
    convention. Before, the rule was the pooled count of patterns ending outside S_i (<= 0), the
    same event, with no per-seed spread for verify oc (not covered); the per-seed largest distance
    decides the same and is stored in the rule's form. Verdict at base seed 0: pass before and
    after."""
    rows, parts = [], {}
    selected = choice(params, "patterns", PATTERNS)
    meeting_r1 = selected == "meeting R1"
    for beta in params["betas"]:
        meeting, violations, worst, counts = _r1_sweep(params, ctx, beta, meeting_r1)
        seeds = ctx.seeds(params["seeds"])
        rows.append(
            {"beta": beta, "selected": meeting, "violations": violations, "selected_per_seed": counts}
        )
        parts[f"outside_at_beta_{beta:g}"] = EverySeed(
            f"largest distance from x_i / (1/(beta N M)), patterns {selected}, beta = {beta:g}",
            1.0,
            "<=",
            "theory",
        ).judge(worst, seeds=seeds)
        parts[f"selected_at_beta_{beta:g}"] = Threshold(
            f"(pattern, seed) pairs {selected} at beta = {beta:g}", params["min_meeting"], ">=", "convention"
        ).judge(meeting)
    return all_of(**parts), {"rows": rows, "selection": selected}


@claim(
    "hopfield.separation.violated_fails",
    source=f"{RAMSAUER}, Thm 4",
    provenance="reference",
    bounds=("hopfield.well_separated",),
    templated=True,
    statement="R1 is a sufficient condition, and loose in beta: for N = {n_patterns} patterns on the "
    "sphere of radius {radius} in d = {dim} ({seeds} seeds), each pattern's R1 boundary beta_R1 (the beta "
    "from which Delta_i >= 2/(beta N) + ln(2 (N-1) N beta M^2)/beta) lies at or above its measured "
    "boundary, the smallest beta of the grid 2^(k/{per_octave}) in {beta_range} from which {updates} "
    "updates from x_i end within 1/(beta N M) of x_i at every larger grid beta; the looseness factor "
    "(per seed, the median over patterns of beta_R1 / measured beta) has a 95% Student-t interval over "
    "seeds at or above 1 (inconclusive when it straddles 1), and is reported",
    quick={
        "dim": 32,
        "n_patterns": 64,
        "radius": 3.0,
        "seeds": 5,
        "updates": 200,
        "beta_range": [0.0625, 64.0],
        "per_octave": 8,
        "condition": "R1",
    },
    seed_rule="every pattern of seeds seed..seed+4; 95% Student-t interval over seeds of the per-seed "
    "median looseness factor",
    controls=[
        Control(
            "no_log_term",
            {"condition": "no_log_term"},
            "R1 without its log term (Delta_i >= 2/(beta N)), a condition that is not sufficient: its "
            "boundary lies far below the measured one, so the criterion must fail",
        ),
        Control(
            "half_beta",
            {"condition": "half_beta"},
            "R1 read at half its beta, a condition twice as optimistic: R1's looseness is below 2 "
            "here, so the criterion must fail (what a factor 2 looks like to the measurement)",
        ),
    ],
)
def separation_violated_fails(params, ctx):
    """Was a must-fail demonstration (the patterns violating R1 at beta = 0.5 end outside S_i,
    those meeting it at beta = 8 do not), but R1 is only sufficient: violating it guarantees no
    failure. The claim now measures each pattern's boundary in beta and R1's looseness. The grid
    (2^(k/8), 9% steps) and the half_beta control were tried on pilot seeds 100-104 (median factor
    1.46-1.52, smallest 1.26-1.33; no_log_term 0.004), not on a judged seed. The previous criterion's
    result was measured once and is stored (details["previous_criterion"], verify.previous); details["looseness_by_beta"] keeps the
    by-beta counts the tightness figure draws."""
    from verify.measure import t_interval

    n, m = params["n_patterns"], params["radius"]
    boundary = CONDITIONS[params["condition"]]
    rows, by_beta = [], {}
    for s in ctx.seeds(params["seeds"]):
        grid, deltas, inside = _retrieval_grid(
            ctx, n, params["dim"], m, params["updates"], params["beta_range"], params["per_octave"], s
        )
        sufficient = np.array([boundary(float(x), n, m) for x in deltas])
        measured = [measured_beta(grid, inside[:, i]) for i in range(n)]
        # not retrieved at the largest grid beta: the factor is at most beta_R1 / grid[-1]
        factors = [b / (g if g is not None else grid[-1]) for b, g in zip(sufficient, measured)]
        rows.append(
            {
                "seed": s,
                "median_factor": float(np.median(factors)),
                "min_factor": float(np.min(factors)),
                "median_boundary": float(np.median(sufficient)),
                "median_measured": float(np.median([g for g in measured if g is not None] or [np.nan])),
                "not_retrieved": sum(g is None for g in measured),
            }
        )
        for beta in (0.25, 0.5, 1.0, 2.0, 4.0, 8.0):
            row = int(np.argmin(np.abs(grid - beta)))
            meets = deltas >= well_separated_threshold(beta, n, m)
            counts = by_beta.setdefault(beta, [0, 0, 0])
            counts[0] += int(meets.sum())
            counts[1] += int((~meets).sum())
            counts[2] += int((~meets & ~inside[row]).sum())
    medians = [r["median_factor"] for r in rows]
    interval = t_interval(medians)
    judgement = Threshold(f"looseness factor beta_{params['condition']} / measured beta", 1.0, ">=", "theory")
    return judgement.judge(list(interval), seeds=len(rows)), {
        "rows": rows,
        "factor_interval95": list(interval),
        "condition": params["condition"],
        "looseness_by_beta": [
            {"beta": b, "meeting_R1": c[0], "violating_R1": c[1], "violators_outside": c[2]}
            for b, c in by_beta.items()
        ],
    }


@claim(
    "hopfield.retrieval.r2_contraction",
    source=f"{RAMSAUER}, Thm 4 (R2)",
    provenance="reference",
    bounds=("hopfield.well_separated", "hopfield.jacobian_norm"),
    templated=True,
    statement="at beta = {beta} (N = {n_patterns}, d = {dim}, radius {radius}, {queries} queries per "
    "pattern, {seeds} seeds), for sphere patterns meeting R1 and queries xi on the boundary of S_i, one update "
    "shrinks the distance to the fixed point x_i* by at most R2's factor (||f(xi) - x_i*|| "
    "<= ||J^m|| ||xi - x_i*|| with ||J^m|| <= 2 beta N M^2 (N-1) exp(-beta (Delta_i - 2 M r))) "
    "and that factor is < 1, for every pattern and query (ratios within 1e-9 relative round-off)",
    quick={
        "dim": 32,
        "n_patterns": 64,
        "radius": 3.0,
        "beta": 8.0,
        # 6 seeds (3 before): the budget verify oc named for an every-seed rule, whose value placed on
        # its threshold passes each seed about half the time (1/8 at 3 seeds, 1/64 at 6)
        "seeds": 6,
        "queries": 4,
        "updates": 200,
        "patterns": "meeting R1",
    },
    seed_rule="every (pattern, query) of seeds seed..seed+seeds-1",
    controls=[
        Control(
            "violating_R1",
            {"patterns": "violating R1", "beta": 0.5},
            "R1 dropped: for the patterns violating R1 at beta = 0.5 R2's factor is >= 1 "
            "(it certifies no contraction), so the criterion must fail",
        )
    ],
)
def r2_contraction(params, ctx):
    """R2 is Ramsauer's one-update contraction (Thm 4): R1 is exactly the condition that makes its
    factor < 1 on S_i. R3 needs no claim of its own: with r = max{||xi - x_i||, ||x_i* - x_i||} >=
    ||xi - x_i|| and Delta_ij >= Delta_i, R3's bound 2 M (N-1) exp(-beta (Delta_i - 2 M r)) is at least
    D1's 2 M min(1, eps), so every D1 check (hopfield.one_step.error, zero violations) is an R3 check
    with more slack.

    The rule is per seed (every seed's largest ratio / R2 factor at most 1 + 1e-9 and its largest
    factor below 1), the same events as before, when it counted violating cases over all seeds
    (<= 0), with no per-seed spread for verify oc; a seed with no case counts 0. Verdict at base
    seed 0: pass before and after."""
    beta, n, radius = params["beta"], params["n_patterns"], params["radius"]
    meeting = choice(params, "patterns", PATTERNS) == "meeting R1"
    count, v_ratio, v_factor, worst, factors = 0, 0, 0, 0.0, []
    seed_ratio, seed_factor = [], []  # per seed: the largest ratio / R2 factor, the largest factor
    seeds = ctx.seeds(params["seeds"])
    for s in seeds:
        gen = ctx.rng("hopfield.separation.r2_contraction.gen", s)
        X = sphere_patterns(n, params["dim"], radius, gen)
        need = well_separated_threshold(beta, n, radius)
        tol = sphere_radius(beta, n, radius)
        chosen = [i for i in range(n) if (separation(X, i) >= need) == meeting]
        stars = X[:, chosen].copy()  # the fixed points x_i*, iterated from x_i for all i at once
        for _ in range(params["updates"]):
            stars = X @ softmax(beta * (X.T @ stars), axis=0)
        seed_ratio.append(0.0)
        seed_factor.append(0.0)
        for k, i in enumerate(chosen):
            delta, star = separation(X, i), stars[:, k]
            for _ in range(params["queries"]):
                z = gen.standard_normal(params["dim"])
                xi = X[:, i] + tol * z / np.linalg.norm(z)
                r = max(float(np.linalg.norm(xi - X[:, i])), float(np.linalg.norm(star - X[:, i])))
                factor = jacobian_norm_bound(beta, n, radius, delta, r)
                ratio = float(np.linalg.norm(update(X, xi, beta) - star) / np.linalg.norm(xi - star))
                count += 1
                v_ratio += int(ratio > factor * (1 + 1e-9))
                v_factor += int(factor >= 1.0)
                worst = max(worst, ratio / factor)
                factors.append(factor)
                seed_ratio[-1] = max(seed_ratio[-1], ratio / factor)
                seed_factor[-1] = max(seed_factor[-1], factor)
    judgement = all_of(
        cases=Threshold("(pattern, query) cases", 1, ">=", "convention").judge(count),
        ratio=EverySeed(
            "largest contraction ratio / R2 factor over the seed's cases", 1 + 1e-9, "<=", "theory"
        ).judge(seed_ratio, seeds=seeds),
        factor=EverySeed("largest R2 factor over the seed's cases", 1.0, "<", "theory").judge(
            seed_factor, seeds=seeds
        ),
    )
    return judgement, {
        "cases": count,
        "violations_ratio": v_ratio,
        "factor_at_least_1": v_factor,
        "max_ratio_over_factor": worst,
        "factor_range": [min(factors), max(factors)] if factors else None,
        "per_seed_max_ratio_over_factor": seed_ratio,
        "per_seed_max_factor": seed_factor,
    }


@claim(
    "hopfield.one_step.error",
    source=f"{PAPER}, D1 (our version of {RAMSAUER} Thm 5)",
    bounds=("hopfield.ungated_error",),
    provenance="derived",
    templated=True,
    statement="for noisy queries xi = x_i + r u (noise {noise} sqrt(d), beta in {beta_range}), 1 - p_i <= "
    "eps(xi) and ||f(xi) - x_i|| <= 2 M min(1, eps(xi)) in every one of {trials} trials of each of {seeds} "
    "seeds (zero violations: on every seed both largest ratios <= 1 + 1e-12, a float64 round-off "
    "allowance)",
    quick={"dim": 32, "n_patterns": 64, **ONE_STEP},
    full={"dim": 32, "n_patterns": 10_000, **ONE_STEP},
    seed_rule="every one of the trials of every seed of seed..seed+seeds-1",
    controls=[
        Control(
            "no_2Mr",
            {"eps_at": "pattern"},
            "D1 with its 2 M r term dropped (eps evaluated at r = 0): the noise can move "
            "the query toward a distractor, so the bound must be violated in some trial",
        )
    ],
)
def one_step_error(params, ctx):
    """D1 on noisy queries, judged per seed: every seed's largest (1 - p_i) / eps and largest
    error / bound are at most 1 + 1e-12. Before, the 2000 trials were drawn from the run's seed and
    the rule read the largest ratios over all of them (one draw: verify oc could not simulate it);
    now the same 2000 trials are 5 seeds of 400 (the same cost), the same event per trial, and the
    record keeps the per-seed largest ratios. Verdict at base seed 0: pass before and after."""
    d, n = params["dim"], params["n_patterns"]
    radius = math.sqrt(d)
    violations, points, tight, tight_miss = 0, [], 0.0, 0.0
    seed_err, seed_miss = [], []
    drop = choice(params, "eps_at", ("query", "pattern")) == "pattern"
    seeds = ctx.seeds(params["seeds"])
    for s in seeds:
        gen = ctx.rng("hopfield.separation.one_step_error.gen", s)
        seed_err.append(0.0)
        seed_miss.append(0.0)
        for _ in range(params["trials"]):
            X = sphere_patterns(n, d, radius, gen)
            i = int(gen.integers(n))
            beta = float(gen.uniform(*params["beta_range"]))
            xi = noisy_query(X, i, params["noise"] * math.sqrt(d), gen)
            p = retrieval_distribution(X, xi, beta)
            eps = epsilon_ungated(X, X[:, i] if drop else xi, i, beta)
            err = retrieval_error(X, xi, i, beta)
            miss = float(np.sum(np.delete(p, i)))
            bound = error_bound(eps, norm_bound(X))
            violations += int(miss > eps * (1 + 1e-12)) + int(err > bound * (1 + 1e-12))
            seed_err[-1] = max(seed_err[-1], err / bound)
            seed_miss[-1] = max(seed_miss[-1], miss / eps)
            if len(points) < 400:
                points.append([beta * separation(X, i), err, bound])
        tight, tight_miss = max(tight, seed_err[-1]), max(tight_miss, seed_miss[-1])
    judgement = all_of(
        miss=EverySeed("largest (1 - p_i) / eps of the seed's trials", 1 + 1e-12, "<=", "convention").judge(
            seed_miss, seeds=seeds
        ),
        error=EverySeed(
            "largest ||f(xi) - x_i|| / (2 M min(1, eps)) of the seed's trials", 1 + 1e-12, "<=", "convention"
        ).judge(seed_err, seeds=seeds),
    )
    details = {
        "violations": violations,
        "max_miss_over_eps": tight_miss,
        "beta_delta_error_bound": points,
        "trials": params["trials"] * params["seeds"],
        "max_error_over_bound": tight,
        "bound": "no 2Mr term" if drop else "D1",
    }
    return judgement, details


@claim(
    "hopfield.error.exponential_in_beta",
    source=f"{RAMSAUER}, Thm 5",
    provenance="reference",
    bounds=("hopfield.retrieval_error", "hopfield.ungated_error"),
    templated=True,
    statement="for the best-separated pattern queried with itself, the fitted slope of "
    "log ||f(x_i) - x_i|| against beta Delta_i (beta on linspace{betas}) lies in {slope_range} "
    "(theory: -1; the window is a convention), on every one of {seeds} seeds",
    quick={
        "dim": 32,
        "n_patterns": 64,
        "betas": [1.0, 16.0, 12],
        "slope_range": [-1.2, -0.8],
        # 6 seeds: the budget verify oc named at 3 (its worst alternative passed 0.14 there, 0.05
        # at 6), read from the operating characteristic, not from a verdict
        "seeds": 6,
        "query": "pattern",
    },
    seed_rule="every seed of seed..seed+seeds-1 (one pattern set per seed)",
    controls=[
        Control(
            "query_toward_neighbour",
            {"query": "toward neighbour"},
            "query moved a quarter of the way to the nearest distractor (noise-free query "
            "dropped): the exponent becomes beta Delta (1 - 2/4), slope about -0.5, so "
            "the criterion must fail",
        )
    ],
)
def error_exponential_in_beta(params, ctx):
    lo, hi, num = params["betas"]
    betas = np.linspace(lo, hi, int(num))
    low, high = params["slope_range"]
    per_seed = []
    for s in ctx.seeds(params["seeds"]):
        X = sphere_patterns(
            params["n_patterns"],
            params["dim"],
            1.0,
            ctx.rng("hopfield.separation.error_exponential_in_beta.sphere_patterns", s),
        )
        # the well-separated pattern: the one with the largest separation Delta_i
        i = max(range(params["n_patterns"]), key=lambda j: separation(X, j))
        delta = separation(X, i)
        query = _query(params, X, i)
        errs = np.array([retrieval_error(X, query, i, b) for b in betas])
        slope = float(np.polyfit(betas * delta, np.log(errs), 1)[0])
        per_seed.append(
            {
                "seed": s,
                "slope": slope,
                "beta_delta": (betas * delta).tolist(),
                "error": errs.tolist(),
                "d1_bound": retrieval_error_bound_curve(betas, X, i),
                "separation": delta,
                "pattern": i,
            }
        )
    slopes = [r["slope"] for r in per_seed]
    labels = [r["seed"] for r in per_seed]
    judgement = all_of(
        above=EverySeed("slope", low, ">=", "convention").judge(slopes, seeds=labels),
        below=EverySeed("slope", high, "<=", "convention").judge(slopes, seeds=labels),
    )
    first = per_seed[0]  # the figure draws the first seed
    return judgement, {
        "beta": betas.tolist(),
        **{k: first[k] for k in ("beta_delta", "error", "d1_bound", "separation", "pattern")},
        "slopes": slopes,
        "per_seed": per_seed,
    }
