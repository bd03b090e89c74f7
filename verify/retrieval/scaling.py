"""Fitted scaling law of the retrieval area (2603.15923): over a (V, d, L) grid,
least squares log N_c = c + a log V + b log L + c' log d with t-intervals, each exponent judged
against the same fit applied to the F1 prediction (verify.criteria.IntervalTest), and the
multiplicative test b = -c' (``retrieval.capacity.multiplicative``, gated on the fit's interval).

Each grid point's N_c is one point of the shared sweep runner verify.sweep.run_grid (in this
process, workers=1: the claim's own budget is small), computed once per run for every capacity claim
(verify.retrieval.capacity_setup.critical_n_run).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import numpy as np

from theory.retrieval import bounds as th
from verify.claims import Control, choice, claim
from verify.criteria import EverySeed, IntervalTest, Threshold, all_of
from verify.measure import t_interval
from verify.retrieval.capacity_setup import SOURCE, shared_nc

NAMES = ("c", "a (log V)", "b (log L)", "c' (log d)")


def _design(points) -> np.ndarray:
    """The regressors (1, log V, log L, log d) of grid points [V, d, L]."""
    pts = np.asarray(points, dtype=float)
    return np.column_stack([np.ones(len(pts)), np.log(pts[:, 0]), np.log(pts[:, 2]), np.log(pts[:, 1])])


def fit_scaling_law(points, n_c, level: float = 0.95) -> dict:
    """Ordinary least squares of log N_c on (1, log V, log L, log d) [reference: OLS].

    Returns coefficients, standard errors from s^2 (X^T X)^-1 with s^2 = RSS/(n - 4), two-sided
    ``level`` t-intervals, R^2, and the same for b + c' (the multiplicative test: N_c depends on
    L and d only through L/d iff b + c' = 0). Needs at least 5 points in general position.
    """
    from scipy import stats

    y = np.log(np.asarray(n_c, dtype=float))
    if not np.all(np.isfinite(y)):
        raise ValueError("every grid point needs a finite N_c to fit the scaling law")
    X = _design(points)
    n, k = X.shape
    if n <= k or np.linalg.matrix_rank(X) < k:
        raise ValueError(f"the grid needs more than {k} points spanning V, L and d; got {n}")
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    resid = y - X @ coef
    dof = n - k
    s2 = float(resid @ resid) / dof
    cov = s2 * np.linalg.inv(X.T @ X)
    se = np.sqrt(np.diag(cov))
    tq = float(stats.t.ppf(0.5 + level / 2, dof))
    sum_bc = float(coef[2] + coef[3])
    se_sum = math.sqrt(max(cov[2, 2] + cov[3, 3] + 2 * cov[2, 3], 0.0))
    r2 = 1.0 - float(resid @ resid) / float(((y - y.mean()) ** 2).sum())
    return {
        "coef": coef.tolist(),
        "se": se.tolist(),
        "ci": [[c - tq * s, c + tq * s] for c, s in zip(coef, se)],
        "b_plus_cprime": sum_bc,
        "b_plus_cprime_ci": [sum_bc - tq * se_sum, sum_bc + tq * se_sum],
        "r2": r2,
        "dof": dof,
        "level": level,
        "residuals": resid.tolist(),
    }


def _noise_free_fit(points, values) -> list:
    return np.linalg.lstsq(_design(points), np.log(values), rcond=None)[0].tolist()


#: three exponents judged together: each interval at 1 - 0.05/3, 95% for the three (Bonferroni)
LEVEL = 1 - 0.05 / 3
#: the competing law named beside "no dependence": F1's signal-to-noise term alone, without the
#: population-margin factor (its exponents on the grid come from the same noise-free fit)
NO_MARGIN = "4 V L ln V / d (F1 without its margin factor)"


def _exponent_test(name, theory, alternatives, interval, points):
    """F1's exponent against the fitted one's interval; an undecided verdict's budget is in grid
    points (the fit's interval narrows with the points, not with seeds)."""
    j = IntervalTest(name, theory, alternatives, theory_name="F1").judge(interval, seeds=points)
    if j.budget:
        j = dataclasses.replace(j, budget=j.budget.replace("seeds", "grid points"))
    return j


def f1_exponents_judgement(grid, n_c, r2: float) -> tuple:
    """The criterion of ``retrieval.scaling.fit``: each fitted exponent's t-interval (at
    :data:`LEVEL`) against F1's exponent on the same grid (the same fit applied to F1's noise-free
    values), with no dependence (0) and, for a and c', :data:`NO_MARGIN` as the alternatives, and
    R^2 >= ``r2`` (a convention). Returns (judgement, the judged fit, F1's and the margin-free
    law's coefficients (c, a, b, c')).

    >>> grid = [[V, d, L] for V in (128, 256, 512) for d in (32, 64) for L in (4, 16)]
    >>> f1_exponents_judgement(grid, [th.nc_pred(V, d, L) * (1 + 0.01 * (-1) ** i)
    ...                               for i, (V, d, L) in enumerate(grid)], 0.9)[0].verdict
    'pass'
    """
    judged = fit_scaling_law(grid, n_c, LEVEL)
    f1 = _noise_free_fit(grid, [th.nc_pred(V, d, L) for V, d, L in grid])
    no_margin = _noise_free_fit(grid, [4 * V * L * math.log(V) / d for V, d, L in grid])
    ci, points = judged["ci"], len(grid)
    judgement = all_of(
        a=_exponent_test(
            "a (exponent of V)", f1[1], {"no dependence on V": 0.0, NO_MARGIN: no_margin[1]}, ci[1], points
        ),
        b=_exponent_test("b (exponent of L)", f1[2], {"no dependence on L": 0.0}, ci[2], points),
        c_prime=_exponent_test(
            "c' (exponent of d)", f1[3], {"no dependence on d": 0.0, NO_MARGIN: no_margin[3]}, ci[3], points
        ),
        r2=Threshold("R^2 of the fit", r2, ">=", "convention").judge(judged["r2"]),
    )
    return judgement, judged, f1, no_margin


@claim(
    "retrieval.scaling.fit",
    source=SOURCE + ", abstract (multiplicative N, d, L); our F1 (docs/retrieval.md)",
    bounds=("retrieval.nc_pred",),
    provenance="derived",
    templated=True,
    statement="over the grid V in {vocab_sizes}, d in {d_models}, L in {seq_lens}, the least-squares fit "
    "log N_c(0.9) = c + a log V + b log L + c' log d has R^2 >= {r2} (a convention) and each "
    "exponent's t-interval (98.3% each, 95% for the three) contains F1's exponent on the same grid "
    "(the same fit applied to F1's noise-free values) and excludes no dependence (0) and, for a and "
    "c', the law 4 V L ln V / d (F1 without its population-margin factor); the distance b + c' from "
    "the multiplicative law (with its interval) is reported",
    quick={
        "vocab_sizes": [128, 256, 512],
        "d_models": [32, 64],
        "seq_lens": [4, 16],
        "r2": 0.9,
        "n_c_order": "measured",
    },
    full={
        "vocab_sizes": [128, 256, 512, 1024, 2048],
        "d_models": [32, 64, 128, 256],
        "seq_lens": [4, 8, 16, 32, 64],
        "r2": 0.9,
        "n_c_order": "measured",
    },
    seed_rule="one fit on the base seed's grid (each N_c: mean accuracy of 3 draws); OLS t-intervals "
    "of the exponents at 98.3% each (Bonferroni over three)",
    controls=[
        Control(
            "shuffled",
            {"n_c_order": "shuffled"},
            "N_c values permuted across the grid points (seeded): the fit must lose F1's exponents or its R^2",
        )
    ],
)
def scaling_fit(p, ctx):
    """Criterion (verify.criteria.IntervalTest per exponent, and a Threshold on R^2) replaced the
    sign-only rule (a > 0, b > 0, c' < 0 with 95% intervals, R^2 >= 0.9), which any increasing law
    passed, F1 or not; its verdict stays in details["previous_criterion"] with its numbers."""
    grid = [[V, d, L] for V, d, L in itertools.product(p["vocab_sizes"], p["d_models"], p["seq_lens"])]
    n_c = [shared_nc(ctx, V, d, L) for V, d, L in grid]
    if choice(p, "n_c_order", ("measured", "shuffled")) == "shuffled":  # the control
        n_c = [n_c[i] for i in ctx.rng("retrieval.scaling.permutation").permutation(len(n_c))]
    fit = fit_scaling_law(grid, n_c)
    judgement, judged, pred_coef, no_margin = f1_exponents_judgement(grid, n_c, p["r2"])
    predicted = [th.nc_pred(V, d, L) for V, d, L in grid]
    lo, hi = fit["b_plus_cprime_ci"]
    return judgement, {
        "grid": grid,
        "n_c": n_c,
        "predicted": predicted,
        "fit": fit,
        "judged_fit": {"level": LEVEL, "coef": judged["coef"], "ci": judged["ci"]},
        "names": list(NAMES),
        "predicted_coef": pred_coef,
        "no_margin_coef": no_margin,
        "multiplicative_within_ci": bool(lo <= 0.0 <= hi),
        "b_plus_cprime": fit["b_plus_cprime"],
        "b_plus_cprime_ci": [lo, hi],
        "ratio": [m / q for m, q in zip(n_c, predicted)],
        "grid_runner": "verify.sweep.run_grid (workers=1)",
    }


MULT_RULE = (
    "spread <= 2 and contrast > 1.5 on every one of 3 base seeds, AND 0 in the 95% Student-t interval "
    "over the same 3 seeds of the per-seed b + c' (one scaling-law fit per seed)"
)


@claim(
    "retrieval.capacity.multiplicative",
    source=SOURCE + ", abstract (multiplicative dependence); F1",
    bounds=("retrieval.nc_pred",),
    provenance="abstract",
    templated=True,
    statement="N_c(0.9) depends on L and d through L/d: at V={vocab_size}, the (L, d) pairs {pairs} agree "
    "within a factor {agree} while the first pair and (L, d) = {contrast} differ by more than {differ}x "
    "(both conventions; every one of {n_seeds} base seeds), and the 95% Student-t interval over the "
    "{n_seeds} seeds of b + c' of the per-seed scaling-law fit over {fit_grid} contains 0",
    quick={
        "vocab_size": 256,
        "pairs": [[8, 32], [16, 64], [32, 128]],
        "contrast": [32, 32],
        "agree": 2.0,
        "differ": 1.5,
        "n_seeds": 3,
        "fit_grid": {"vocab_sizes": [128, 256, 512], "d_models": [32, 64], "seq_lens": [4, 16]},
    },
    seed_rule=MULT_RULE,
    controls=[
        Control(
            "unequal_ratio",
            {"pairs": [[8, 32], [8, 64], [8, 128]]},
            "pairs of different L/d (d varies at fixed L) must not agree within 2x",
        )
    ],
)
def multiplicative(p, ctx):
    """Criterion: verify.criteria.all_of of two verify.criteria.EverySeed rules (spread, contrast)
    and an IntervalTest that the 95% Student-t interval over the seeds of the per-seed b + c' holds
    0. The fit part read the OLS interval of one fit at the base seed (one draw, which ``verify oc``
    cannot simulate: no interval over seeds); since revision 63408c5 it fits each of the claim's 3
    seeds. The claim failed on that part at base seed 0 (b + c' = -0.70, OLS interval [-0.86,
    -0.54]); per-seed fits measure about the same, so the change cannot turn it into a pass (its
    ledger entry stands). The rule it replaced earlier stays in details["previous_criterion"]."""
    V = p["vocab_size"]
    Lc, dc = p["contrast"]
    rows = []
    seeds = ctx.seeds(p["n_seeds"])
    for s in seeds:
        ncs = [shared_nc(ctx, V, d, L, seed=s) for L, d in p["pairs"]]
        contrast = shared_nc(ctx, V, dc, Lc, seed=s)
        spread, differ = max(ncs) / min(ncs), contrast / ncs[0]
        rows.append(
            {
                "seed": s,
                "n_c": ncs,
                "contrast_n_c": contrast,
                "spread": spread,
                "contrast_ratio": differ,
                "passed": spread <= p["agree"] and differ > p["differ"],
            }
        )
    g = p["fit_grid"]
    grid = [[V_, d, L] for V_, d, L in itertools.product(g["vocab_sizes"], g["d_models"], g["seq_lens"])]
    fits = [fit_scaling_law(grid, [shared_nc(ctx, V_, d, L, seed=s) for V_, d, L in grid]) for s in seeds]
    fit = fits[0]
    per_seed = [f["b_plus_cprime"] for f in fits]
    lo, hi = t_interval(per_seed, 0.95)
    judgement = all_of(
        spread=EverySeed("max/min N_c over the equal-L/d pairs", p["agree"], "<=", "convention").judge(
            [r["spread"] for r in rows], seeds
        ),
        contrast=EverySeed(
            "N_c(contrast pair)/N_c(first pair)",
            p["differ"],
            ">",
            "convention",
        ).judge([r["contrast_ratio"] for r in rows], seeds),
        fit=IntervalTest(
            "b + c' (95% Student-t interval over seeds)", 0.0, {}, theory_name="the L/d law"
        ).judge([lo, hi], seeds=len(per_seed)),
    )
    return judgement, {
        "vocab_size": V,
        "pairs": p["pairs"],
        "rows": rows,
        "n_c": rows[0]["n_c"],
        "spread": rows[0]["spread"],
        "contrast_pair": p["contrast"],
        "contrast_n_c": rows[0]["contrast_n_c"],
        "contrast_ratio": rows[0]["contrast_ratio"],
        "b_plus_cprime": fit["b_plus_cprime"],
        "b_plus_cprime_per_seed": per_seed,
        "b_plus_cprime_ci": [lo, hi],
        "b_plus_cprime_ci_base_seed_fit": fit["b_plus_cprime_ci"],
        "fit_coef": fit["coef"],
        "predicted": [th.nc_pred(V, d, L) for L, d in p["pairs"]],
    }
