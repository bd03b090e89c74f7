"""Shared parts of the hopfield capacity claims (docs/hopfield.md): the capacity sweep of ungated
and gated retrieval over a grid of N (shared by capacity.gain, capacity.d3 and
wrong_context.fails through the run's cache), the crossing that defines a capacity, and
capacity.gain's criterion. Registers no claim.
"""

from __future__ import annotations

import math

import numpy as np

from constructions.hopfield.networks import context_gates, retrieval_errors_batch, sphere_patterns
from theory.hopfield.derived import gated_capacity_prediction
from verify.claims import Control, choice, shared
from verify.criteria import IntervalTest, Judgement, Threshold, all_of
from verify.measure import t_interval


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


@shared
def _sweep(
    ctx,
    dim: int,
    beta: float,
    threshold: float,
    grid: list,
    targets: int,
    n_eff: int,
    seeds: int,
    kappa: float,
    wrong: bool,
) -> list[dict]:
    """Per seed: success fractions (error <= threshold, query x_i) of ungated and gated retrieval
    on every grid N, and the capacities (crossings of 0.5); gated with a wrong context when
    ``wrong``. Computed once per run (capacity.gain, capacity.d3 and wrong_context.fails share it):
    read through :func:`sweep_rows`."""
    rows = []
    for s in ctx.seeds(seeds):
        gen = ctx.rng("hopfield.capacity.sweep.gen", s)
        frac_u, frac_g = [], []
        for n in grid:
            X = sphere_patterns(n, dim, 1.0, gen)
            chosen = gen.choice(n, size=min(targets, n), replace=False)
            ne = min(n_eff, n - 1 if wrong else n)
            U = np.stack(
                [
                    _wrong_gates(n, int(t), ne, kappa, gen)
                    if wrong
                    else context_gates(n, int(t), ne, kappa, gen)[0]
                    for t in chosen
                ]
            )
            frac_u.append(float(np.mean(retrieval_errors_batch(X, chosen, beta) <= threshold)))
            frac_g.append(float(np.mean(retrieval_errors_batch(X, chosen, beta, U) <= threshold)))
        rows.append(
            {
                "seed": s,
                "frac_ungated": frac_u,
                "frac_gated": frac_g,
                "capacity_ungated": crossing(grid, frac_u),
                "capacity_gated": crossing(grid, frac_g),
            }
        )
    return rows


def sweep_rows(params, ctx) -> list[dict]:
    """The capacity sweep (:func:`_sweep`) of a capacity claim's parameters, at ``params["kappa"]``
    with the context of ``params["context"]``: each claim gets its own copies of the rows, to which
    it adds its own keys (ratio, prediction).

    >>> from verify.claims import Context
    >>> small = {**CAPACITY_QUICK, "grid": [16, 64], "targets": 8, "seeds": 2}
    >>> rows = sweep_rows(small, Context(seed=0))
    >>> [r["seed"] for r in rows], sorted(rows[0])[:2]
    ([0, 1], ['capacity_gated', 'capacity_ungated'])
    """
    rows = _sweep(
        ctx,
        params["dim"],
        params["beta"],
        params["threshold"],
        params["grid"],
        params["targets"],
        params["n_eff"],
        params["seeds"],
        float(params["kappa"]),
        is_wrong_context(params),
    )
    return [dict(r) for r in rows]


def is_wrong_context(params) -> bool:
    """Whether the sweep gates with a wrong context (``params["context"]``, one of CONTEXTS)."""
    return choice(params, "context", CONTEXTS) == "wrong"


def _ratio_verdict(rows):
    """Each seed's N_g/N_u (also written into its row; None when a capacity is off the grid) and the
    95% interval of the ratio (a t-interval of log2 ratios; None with fewer than two)."""
    ratios = []
    for r in rows:
        cu, cg = r["capacity_ungated"], r["capacity_gated"]
        r["ratio"] = None if cu is None or cg is None else cg / cu
        ratios.append(r["ratio"])
    finite = [math.log2(x) for x in ratios if x is not None and x > 0]
    interval = [2**v for v in t_interval(finite)] if len(finite) >= 2 else None
    return ratios, interval


CAPACITY_QUICK = {
    "dim": 16,
    "beta": 16.0,
    "threshold": 1e-3,
    "grid": [2**k for k in range(4, 15)],
    "targets": 200,
    "n_eff": 16,
    "kappa": 4.0,
    # 12 seeds: the budget verify oc names for power 0.8, read from the operating characteristic,
    # never from a verdict: at 3 seeds (power 0.76) it named 6 (0.92), at 6 (the seed-0 record:
    # power 0.74) it named 12 (0.94)
    "seeds": 12,
    "min_ratio": 16,
    "context": "correct",  # the target's own context; "wrong": another memory's (WRONG_CONTEXT)
}
#: the contexts the capacity claims read (:func:`is_wrong_context`)
CONTEXTS = ("correct", "wrong")
WRONG_CONTEXT = Control(
    "wrong_context",
    {"context": "wrong"},
    "an informative but wrong context: another memory's 16-memory active set, "
    "the target gated at -kappa with the other closed memories; gating then "
    "hurts retrieval and the criterion must fail",
)


#: the plain law N_g = N_u e^kappa (gain exponent c = 1), D3's nearest competitor: a named
#: alternative of capacity.gain and capacity.d3 (without it c = 1 data passed 30-71% of the time,
#: ``python -m verify oc 'hopfield.capacity.*'``)
PLAIN = "N_u e^kappa (c = 1)"


def _gain_judgement(rows, n_eff: int, kappa: float, plain: bool = True):
    """capacity.gain's criterion on a sweep's rows: the paired interval of the gain exponent
    c = ln(N_g/N_u)/kappa must contain D3's and exclude 0.75, 1.25 and the plain law's c = 1
    (:data:`PLAIN`; ``plain=False`` is the replaced rule without it); a seed with a capacity off
    the grid (or not above N_eff) fails it. Returns (judgement, (c_D3, per-seed c - c_D3) or None)."""
    paired = _paired_d3(rows, n_eff, kappa)
    if paired is None:
        judgement = Threshold("seeds with both capacities on the grid", len(rows), ">=", "convention").judge(
            0.0
        )
        return judgement, None
    c_d3, diffs = paired
    lo, hi = t_interval(diffs)
    judgement = IntervalTest(
        "gain exponent c = ln(N_g/N_u)/kappa",
        c_d3,
        {"e^(0.75 kappa)": 0.75, "e^(1.25 kappa)": 1.25, **({PLAIN: 1.0} if plain else {})},
        theory_name="D3",
        unit="dimensionless",
    ).judge([c_d3 + lo, c_d3 + hi], seeds=len(rows))
    return judgement, paired


def _d3_judgement(rows, n_eff: int, kappa: float, max_factor: float, plain: bool = True):
    """capacity.d3's criterion on a sweep's rows: the t-interval over seeds of ln(N_g / D3's
    prediction) must contain 0 and exclude +-ln(max_factor) and the plain law's mean
    ln(N_u e^kappa / prediction) (:data:`PLAIN`; ``plain=False`` is the replaced rule); a seed
    with a capacity off the grid or not above N_eff fails it."""
    factors, plain_logs = [], []
    for r in rows:
        nu, ng = r["capacity_ungated"], r["capacity_gated"]
        if nu is None or ng is None or nu <= n_eff:
            factors.append(None)
            continue
        pred = gated_capacity_prediction(nu, n_eff, kappa)
        factors.append(ng / pred)
        plain_logs.append(math.log(nu * math.exp(kappa) / pred))
    if not all(f is not None and f > 0 for f in factors):
        return Threshold("seeds with both capacities above N_eff", len(rows), ">=", "convention").judge(
            float(sum(f is not None for f in factors))
        )
    off = math.log(max_factor)
    alternatives = {f"x{max_factor:g}": off, f"/{max_factor:g}": -off}
    if plain:
        alternatives[PLAIN] = float(np.mean(plain_logs))
    return IntervalTest("ln(N_g / D3 prediction)", 0.0, alternatives, "D3", unit="ln of a ratio").judge(
        list(t_interval([math.log(f) for f in factors])), seeds=len(rows)
    )


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


def nearest_band(
    quantity: str,
    theory: float,
    alternatives: dict,
    interval,
    seeds: int,
    source: str = "convention",
    unit: str = "",
) -> Judgement:
    """The nearest-law rule with an inconclusive band: the 95% interval ``interval`` of
    ``quantity`` over ``seeds`` seeds must lie nearer the theory's value ``theory`` than every
    named alternative (name -> its value), i.e. between the midpoints from the theory to its
    nearest alternative on each side. Two Thresholds on the one interval, combined by all_of: pass
    when the whole interval lies between the two edges, fail when it lies wholly beyond one edge
    (nearer an alternative), inconclusive when it straddles an edge. Unlike an interval test
    around a point value, a small true offset from the theory never turns into a fail, and the
    verdict cannot flip from pass to fail unless the intervals of two base seeds are disjoint.
    An alternative equal to the theory is an error (no midpoint to place).

    >>> j = nearest_band("x", 0.0, {"a": -1.0, "b": 0.5}, [-0.1, 0.2], 6)
    >>> j.verdict, j.predicted["lower_edge"]["x"], j.predicted["upper_edge"]["x"]
    ('pass', '>= -0.5', '<= 0.25')
    >>> nearest_band("x", 0.0, {"a": -1.0, "b": 0.5}, [0.2, 0.3], 6).verdict
    'inconclusive'
    >>> nearest_band("x", 0.0, {"a": -1.0, "b": 0.5}, [0.3, 0.4], 6).verdict
    'fail'
    """
    values = {n: float(v) for n, v in alternatives.items()}
    if any(math.isnan(v) for v in values.values()) or math.isnan(float(theory)):
        raise ValueError(f"{quantity}: a NaN theory or alternative value: {theory}, {values}")
    if any(v == theory for v in values.values()):
        raise ValueError(f"{quantity}: an alternative equals the theory's value {theory}: no midpoint")
    below = [v for v in values.values() if v < theory]
    above = [v for v in values.values() if v > theory]
    parts = {}
    if below:
        edge = (theory + max(below)) / 2
        parts["lower_edge"] = Threshold(quantity, edge, ">=", source, unit).judge(interval, seeds=seeds)
    if above:
        edge = (theory + min(above)) / 2
        parts["upper_edge"] = Threshold(quantity, edge, "<=", source, unit).judge(interval, seeds=seeds)
    if not parts:
        raise ValueError(f"{quantity}: the nearest-law rule needs at least one alternative")
    return all_of(**parts)


def gain_nearest_judgement(rows, n_eff: int, kappa: float) -> Judgement:
    """capacity.gain_nearest's criterion on a sweep's rows: the paired 95% interval of the gain
    exponent c = ln(N_g/N_u)/kappa (D3's mean exponent plus the t-interval of each seed's c - c_D3)
    lies nearer D3's c than e^(0.75 kappa), the plain N_u e^kappa (c = 1) and e^(1.25 kappa)
    (:func:`nearest_band`); a seed with a capacity off the grid (or not above N_eff) fails it."""
    paired = _paired_d3(rows, n_eff, kappa)
    if paired is None:
        return Threshold("seeds with both capacities on the grid", len(rows), ">=", "convention").judge(0.0)
    c_d3, diffs = paired
    lo, hi = t_interval(diffs)
    return nearest_band(
        "gain exponent c = ln(N_g/N_u)/kappa",
        c_d3,
        {"e^(0.75 kappa)": 0.75, PLAIN: 1.0, "e^(1.25 kappa)": 1.25},
        [c_d3 + lo, c_d3 + hi],
        len(rows),
        unit="dimensionless",
    )


def d3_nearest_judgement(rows, n_eff: int, kappa: float, max_factor: float) -> Judgement:
    """capacity.d3_nearest's criterion on a sweep's rows: the 95% t-interval over seeds of
    ln(N_g / D3's prediction) lies nearer D3's 0 than a factor ``max_factor`` either way and the
    plain law's mean ln(N_u e^kappa / prediction) (:func:`nearest_band`); a seed with a capacity
    off the grid or not above N_eff fails it."""
    logs, plain_logs = [], []
    for r in rows:
        nu, ng = r["capacity_ungated"], r["capacity_gated"]
        if nu is None or ng is None or nu <= n_eff or ng <= 0:
            return Threshold("seeds with both capacities above N_eff", len(rows), ">=", "convention").judge(
                float(
                    sum(x["capacity_ungated"] is not None and x["capacity_gated"] is not None for x in rows)
                )
            )
        pred = gated_capacity_prediction(nu, n_eff, kappa)
        logs.append(math.log(ng / pred))
        plain_logs.append(math.log(nu * math.exp(kappa) / pred))
    off = math.log(max_factor)
    return nearest_band(
        "ln(N_g / D3 prediction)",
        0.0,
        {f"x{max_factor:g}": off, f"/{max_factor:g}": -off, PLAIN: float(np.mean(plain_logs))},
        list(t_interval(logs)),
        len(rows),
        unit="ln of a ratio",
    )
