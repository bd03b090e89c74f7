"""Claims of the hopfield area on retrieval near a stored pattern of the ungated network
(docs/hopfield.md): separation_condition and separation_violated_fails (R1, with its bracket over
beta), r2_contraction (R2; R3 is covered by D1, see its docstring), one_step_error (D1),
error_exponential_in_beta. Split from verify/hopfield/ungated.py (registered after its claims).
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
from verify.claims import Control, Outcome, claim

RAMSAUER = "Ramsauer et al. 2020 (arXiv 2008.02217)"
PAPER = paper("hopfield")


def _r1_sweep(params, ctx, beta, meeting_r1: bool):
    """Patterns that meet (or violate) R1, iterated ``updates`` times from x_i: (count, ended outside S_i)."""
    count, outside = 0, 0
    for s in ctx.seeds(params["seeds"]):
        X = sphere_patterns(params["n_patterns"], params["dim"], params["radius"], ctx.rng(3, s))
        need = well_separated_threshold(beta, params["n_patterns"], params["radius"])
        tol = sphere_radius(beta, params["n_patterns"], params["radius"])
        chosen = [i for i in range(params["n_patterns"]) if (separation(X, i) >= need) == meeting_r1]
        count += len(chosen)
        states = X[:, chosen].copy()  # column k: the state started at x_{chosen[k]}
        for _ in range(params["updates"]):  # f applied to every column at once
            states = X @ softmax(beta * (X.T @ states), axis=0)
        outside += int(np.sum(np.linalg.norm(states - X[:, chosen], axis=0) > tol))
    return count, outside


def _r1_looseness(params, ctx, betas=(0.25, 0.5, 1.0, 2.0, 4.0, 8.0)):
    """Per beta: (meeting R1, violating R1, violators that end outside S_i). Shows where R1 is loose:
    the patterns violating R1 still retrieve at beta >= 2 (R1 is sufficient, far from necessary)."""
    rows = []
    for beta in betas:
        meet, _ = _r1_sweep(params, ctx, beta, True)
        viol, out = _r1_sweep(params, ctx, beta, False)
        rows.append({"beta": beta, "meeting_R1": meet, "violating_R1": viol, "violators_outside": out})
    return rows


@claim(
    "hopfield.separation.condition",
    source=f"{RAMSAUER}, Thm 4",
    provenance="reference",
    bounds=("hopfield.well_separated",),
    statement="every sphere pattern meeting R1 ends, after 200 updates from x_i, within "
    "1/(beta N M) of x_i, and at least 40 (pattern, seed) pairs meet R1 per beta",
    quick={
        "dim": 32,
        "n_patterns": 64,
        "radius": 3.0,
        "betas": [2.0, 8.0],
        "seeds": 5,
        "updates": 200,
        "min_meeting": 40,
    },
    seed_rule="every selected pattern of every seed of seed..seed+4, at every beta",
    controls=[
        Control(
            "violators_low_beta",
            {"control": "violating", "betas": [0.5]},
            "the same criterion on the patterns that VIOLATE R1 at beta = 0.5 (hypothesis "
            "dropped): they settle on a metastable mixture outside S_i, so it must fail",
        )
    ],
)
def separation_condition(params, ctx):
    rows, ok = [], True
    meeting_r1 = params.get("control") != "violating"
    for beta in params["betas"]:
        meeting, violations = _r1_sweep(params, ctx, beta, meeting_r1)
        rows.append({"beta": beta, "selected": meeting, "violations": violations})
        ok &= violations == 0 and meeting >= params["min_meeting"]
    return Outcome(
        predicted=f"0 violations, >= {params['min_meeting']} meeting R1",
        measured={str(r["beta"]): [r["selected"], r["violations"]] for r in rows},
        passed=bool(ok),
        details={"rows": rows, "selection": "meeting R1" if meeting_r1 else "violating R1"},
    )


@claim(
    "hopfield.separation.violated_fails",
    source=f"{RAMSAUER}, Thm 4",
    provenance="reference",
    bounds=("hopfield.well_separated",),
    demonstrates_failure=True,
    statement="MUST FAIL: at beta = 0.5 the patterns violating R1 (radius 3, d=32, N=64) are not "
    "all retrieved: at least half of them end, after 200 updates from x_i, outside "
    "1/(beta N M) of x_i (the iteration settles on a metastable mixture); bracketed by "
    "the patterns meeting R1 at beta = 8, of which fewer than half end outside",
    quick={"dim": 32, "n_patterns": 64, "radius": 3.0, "beta": 0.5, "seeds": 5, "updates": 200},
    seed_rule="pooled over the patterns of seeds seed..seed+4",
    controls=[
        Control(
            "meeting_R1_beta8",
            {"control": "meeting", "beta": 8.0},
            "the other side of the bracket: patterns meeting R1 at beta = 8 converge into "
            "S_i, so 'at least half end outside' must fail there",
        )
    ],
)
def separation_violated_fails(params, ctx):
    meeting = params.get("control") == "meeting"
    count, outside = _r1_sweep(params, ctx, params["beta"], meeting)
    details = {
        "selection": "meeting R1" if meeting else "violating R1",
        "selected": count,
        "outside_S_i": outside,
    }
    if not meeting:  # where R1 is loose: the violators at larger beta
        details["looseness_by_beta"] = _r1_looseness(params, ctx)
    return Outcome(
        predicted=">= half of the selected patterns end outside S_i",
        measured=[outside, count],
        passed=count > 0 and outside >= count / 2,
        details=details,
    )


@claim(
    "hopfield.retrieval.r2_contraction",
    source=f"{RAMSAUER}, Thm 4 (R2)",
    provenance="reference",
    bounds=("hopfield.well_separated", "hopfield.jacobian_norm"),
    statement="for sphere patterns meeting R1 and queries xi on the boundary of S_i, one update "
    "shrinks the distance to the fixed point x_i* by at most R2's factor (||f(xi) - x_i*|| "
    "<= ||J^m|| ||xi - x_i*|| with ||J^m|| <= 2 beta N M^2 (N-1) exp(-beta (Delta_i - 2 M r))) "
    "and that factor is < 1, for every pattern and query",
    quick={"dim": 32, "n_patterns": 64, "radius": 3.0, "beta": 8.0, "seeds": 3, "queries": 4, "updates": 200},
    seed_rule="every (pattern, query) of seeds seed..seed+2",
    controls=[
        Control(
            "violating_R1",
            {"control": "violating", "beta": 0.5},
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
    with more slack."""
    beta, n, radius = params["beta"], params["n_patterns"], params["radius"]
    meeting = params.get("control") != "violating"
    count, v_ratio, v_factor, worst, factors = 0, 0, 0, 0.0, []
    for s in ctx.seeds(params["seeds"]):
        gen = ctx.rng(6, s)
        X = sphere_patterns(n, params["dim"], radius, gen)
        need = well_separated_threshold(beta, n, radius)
        tol = sphere_radius(beta, n, radius)
        chosen = [i for i in range(n) if (separation(X, i) >= need) == meeting]
        stars = X[:, chosen].copy()  # the fixed points x_i*, iterated from x_i for all i at once
        for _ in range(params["updates"]):
            stars = X @ softmax(beta * (X.T @ stars), axis=0)
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
    ok = count > 0 and v_ratio == 0 and v_factor == 0
    return Outcome(
        predicted="ratio <= R2 factor < 1",
        measured=[v_ratio, v_factor, count],
        passed=bool(ok),
        details={
            "cases": count,
            "violations_ratio": v_ratio,
            "factor_at_least_1": v_factor,
            "max_ratio_over_factor": worst,
            "factor_range": [min(factors), max(factors)] if factors else None,
        },
    )


@claim(
    "hopfield.one_step.error",
    source=f"{PAPER}, D1 (our version of {RAMSAUER} Thm 5)",
    bounds=("hopfield.ungated_error",),
    provenance="derived",
    statement="for noisy queries xi = x_i + r u, 1 - p_i <= eps(xi) and ||f(xi) - x_i|| <= "
    "2 M min(1, eps(xi)) in every trial (zero violations)",
    quick={"dim": 32, "n_patterns": 64, "beta_range": [0.5, 8.0], "noise": 0.05, "trials": 2000},
    full={"dim": 32, "n_patterns": 10_000, "beta_range": [0.5, 8.0], "noise": 0.05, "trials": 2000},
    seed_rule="every one of the 2000 trials drawn from the run's seed",
    controls=[
        Control(
            "no_2Mr",
            {"control": "no_2Mr"},
            "D1 with its 2 M r term dropped (eps evaluated at r = 0): the noise can move "
            "the query toward a distractor, so the bound must be violated in some trial",
        )
    ],
)
def one_step_error(params, ctx):
    d, n = params["dim"], params["n_patterns"]
    gen = ctx.rng(4)
    radius = math.sqrt(d)
    violations, points, tight = 0, [], 0.0
    drop = params.get("control") == "no_2Mr"
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
        tight = max(tight, err / bound)
        if len(points) < 400:
            points.append([beta * separation(X, i), err, bound])
    return Outcome(
        predicted="0 violations",
        measured=violations,
        passed=violations == 0,
        details={
            "beta_delta_error_bound": points,
            "trials": params["trials"],
            "max_error_over_bound": tight,
            "bound": "no 2Mr term" if drop else "D1",
        },
    )


@claim(
    "hopfield.error.exponential_in_beta",
    source=f"{RAMSAUER}, Thm 5",
    provenance="reference",
    bounds=("hopfield.retrieval_error", "hopfield.ungated_error"),
    statement="for the best-separated pattern queried with itself, the fitted slope of "
    "log ||f(x_i) - x_i|| against beta Delta_i lies in [-1.2, -0.8], in every seed",
    quick={"dim": 32, "n_patterns": 64, "betas": [1.0, 16.0, 12], "slope_range": [-1.2, -0.8], "seeds": 3},
    seed_rule="every seed of seed..seed+2 (one pattern set per seed)",
    controls=[
        Control(
            "query_toward_neighbour",
            {"control": "toward_neighbour"},
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
        X = sphere_patterns(params["n_patterns"], params["dim"], 1.0, ctx.rng(5, s))
        # the well-separated pattern: the one with the largest separation Delta_i
        i = max(range(params["n_patterns"]), key=lambda j: separation(X, j))
        delta = separation(X, i)
        query = X[:, i]
        if params.get("control") == "toward_neighbour":
            gaps = np.delete(X[:, i] @ X[:, i] - X[:, i] @ X, i)
            j = int(np.delete(np.arange(params["n_patterns"]), i)[np.argmin(gaps)])
            query = X[:, i] + 0.25 * (X[:, j] - X[:, i])
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
    ok = all(low <= s <= high for s in slopes)
    first = per_seed[0]  # the figure draws the first seed
    return Outcome(
        predicted=f"slope in [{low}, {high}]",
        measured=slopes,
        passed=ok,
        details={
            "beta": betas.tolist(),
            "beta_delta": first["beta_delta"],
            "error": first["error"],
            "d1_bound": first["d1_bound"],
            "separation": first["separation"],
            "pattern": first["pattern"],
            "slopes": slopes,
            "per_seed": per_seed,
        },
    )


def retrieval_error_bound_curve(betas, X, i):
    """D1 at the noise-free query (r = 0) for each beta: 2 M min(1, eps)."""
    m = norm_bound(X)
    return [error_bound(epsilon_ungated(X, X[:, i], i, b), m) for b in betas]
