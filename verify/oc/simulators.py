"""The simulators of :mod:`verify.oc`: for each covered claim, the measurement drawn from the
theory's law and from each named alternative, with the noise measured in the claim's stored
record, judged by the claim's own criterion function (never a second copy of a rule).

Each simulator takes the claim's stored record (and optionally a number of seeds other than the
record's) and returns a :class:`Setup`, or raises :class:`NotCovered` with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from verify.oc.laws import power_through, through


class NotCovered(ValueError):
    """A claim (or its record) whose measurement this module cannot simulate; the message says why."""


@dataclass(frozen=True)
class Setup:
    """What one claim's simulation needs: ``laws`` (name -> a function ``rng -> Judgement`` that
    draws one measurement under that law and judges it with the claim's criterion), ``theory``
    (the law the claim states), the ``noise`` measured in the record, and the ``budget`` (seeds,
    grid) the draws are made at.

    >>> from verify.criteria import Threshold
    >>> s = Setup("theory", {"theory": lambda rng: Threshold("x", 0.0).judge(1.0)}, {}, {"seeds": 1})
    >>> s.alternatives
    []
    """

    theory: str
    laws: Mapping[str, Callable]
    noise: Mapping = field(default_factory=dict)
    budget: Mapping = field(default_factory=dict)

    @property
    def alternatives(self) -> list[str]:
        return [n for n in self.laws if n != self.theory]


def _pooled_sd(by_seed, xs) -> float:
    """Residual sd of each seed's curve around its own affine fit in ln x, pooled over seeds."""
    logs = np.log(np.asarray(xs, dtype=float))
    ss, dof = 0.0, 0
    for y in by_seed:
        y = np.asarray(y, dtype=float)
        ss += float(((y - np.polyval(np.polyfit(logs, y, 1), logs)) ** 2).sum())
        dof += len(y) - 2
    return math.sqrt(ss / dof) if dof > 0 else 0.0


#: the named alternatives of a "grows like ln N" claim: no growth, the opposite sign and the
#: nearest laws on each side
LOG_ALTERNATIVES = ("no growth", "falling ln N", "N^(1/8)", "(ln N)^(3/2)", "ln N ln ln N")


def _growth_setup(record, seeds, rows_key, judge) -> Setup:
    rows = record["details"]["rows"]
    ns = [float(r["N"]) for r in rows]
    table = [r[rows_key] for r in rows]
    by_seed = [[table[i][s] for i in range(len(ns))] for s in range(len(table[0]))]
    n = int(seeds or len(by_seed))
    sd = max(_pooled_sd(by_seed, ns), 0.5)  # integer thresholds: at least the rounding's spread
    means = np.mean(by_seed, axis=0)
    fit = np.polyfit(np.log(ns), means, 1)
    first, last = np.polyval(fit, math.log(ns[0])), np.polyval(fit, math.log(ns[-1]))

    def law(name):
        curve = through(ns, name, first, last)

        def draw(rng):
            ys = np.rint(curve[None, :] + sd * rng.standard_normal((n, len(ns))))
            return judge([int(v) for v in ns], ys.tolist())

        return draw

    return Setup(
        "ln N",
        {name: law(name) for name in ("ln N", *LOG_ALTERNATIVES)},
        {"residual_sd": sd, "from": "pooled residual sd around each seed's ln N fit (at least 0.5)"},
        {"seeds": n, "grid": [int(v) for v in ns]},
    )


def log_scaling(record, seeds=None) -> Setup:
    """geometric.single_hop.log_scaling: thresholds per (N, seed), judged with the record's margins.

    >>> from verify.oc.command import _records
    >>> setup = log_scaling(_records("quick")["geometric.single_hop.log_scaling"])
    >>> setup.theory, setup.alternatives[:2]
    ('ln N', ['no growth', 'falling ln N'])
    """
    from verify.geometric.scaling import judge_log_scaling

    p = record["params"]
    details = record["details"]
    margins = details.get("model_margin_at_own_threshold") or [details["model_margin_at_threshold"]]

    def judge(ns, by_seed):
        table = {n: [row[i] for row in by_seed] for i, n in enumerate(ns)}
        k = len(by_seed)
        return judge_log_scaling({**p, "n_values": ns}, table, (list(margins) * k)[:k])

    # the judged thresholds: the line crossings where the record has them, else (records before
    # the window measurement) the bisection crossings
    return _growth_setup(record, seeds, "d0_line" if "d0_line" in details["rows"][0] else "d0_star", judge)


def gd_threshold_scaling(record, seeds=None) -> Setup:
    """geometric.gd.threshold_scaling: trained thresholds per (N, seed).

    >>> from verify.oc.command import _records
    >>> setup = gd_threshold_scaling(_records("quick")["geometric.gd.threshold_scaling"])
    >>> setup.budget['grid']
    [64, 128, 256, 512]
    """
    from verify.geometric.gd_threshold import judge_threshold_scaling

    return _growth_setup(record, seeds, "trained_d_star", judge_threshold_scaling)


#: the named alternatives of an atlas claim (size proportional to its bound): the nearest laws on
#: each side, no growth and the opposite sign
ATLAS_LAWS = {"bound^1": 1.0, "bound^0.8": 0.8, "bound^1.2": 1.2, "no growth": 0.0, "bound^-1": -1.0}


def atlas(record, seeds=None) -> Setup:
    """atlas.<family>.within_constant: sizes per (point, draw) against the bound.

    >>> from verify.oc.command import _records
    >>> setup = atlas(_records("quick")["atlas.hopfield.within_constant"])
    >>> setup.theory
    'bound^1'
    """
    from verify.atlas.verdict import within_constant_judgement, within_constant_verdict

    points = record["details"].get("points")
    if not points:
        raise NotCovered("the record holds no sizes per point (a draw stored at no size of its grid)")
    sizes = [[float(v) for v in pt["size_per_draw"]] for pt in points]
    bounds = [float(np.median(s)) / float(pt["ratio"]) for s, pt in zip(sizes, points)]
    draws = int(seeds or len(sizes[0]))
    flat_b = np.log([b for b, s in zip(bounds, sizes) for _ in s])
    flat_s = np.log([v for s in sizes for v in s])
    resid = flat_s - np.polyval(np.polyfit(flat_b, flat_s, 1), flat_b)
    sd = float(np.sqrt((resid**2).sum() / max(len(resid) - 2, 1)))
    anchor_b = float(np.exp(np.mean(np.log(bounds))))
    anchor_s = float(np.exp(np.mean(flat_s)))
    p, scale = record["params"], record.get("scale", "quick")

    def law(exponent):
        curve = power_through(bounds, exponent, anchor_b, anchor_s)

        def draw(rng):
            drawn = [list(c * np.exp(sd * rng.standard_normal(draws))) for c in curve]
            v = within_constant_verdict(drawn, [[b] * draws for b in bounds])
            return within_constant_judgement(v, p["constant"], scale)

        return draw

    return Setup(
        "bound^1",
        {name: law(e) for name, e in ATLAS_LAWS.items()},
        {"log_residual_sd": sd, "from": "residual sd of log size around the record's log-log fit"},
        {"draws": draws, "bounds": bounds},
    )


#: the laws an affine atlas claim (size = P0 + c x bound) is judged against: the affine law, the
#: proportional law it restates, the sizes less P0 growing like the nearest laws on each side of the
#: bound, and no growth
AFFINE_LAWS = ("affine", "proportional", "residual bound^0.8", "residual bound^1.2", "no growth")


def atlas_affine(record, seeds=None) -> Setup:
    """atlas.<family>.affine_overhead: measured sizes per (point, draw) against the bound, judged by
    the claim's rule on the sizes less the record's overhead P0 (:func:`verify.atlas.verdict.affine_judgement`).
    Every law draws a size P0 + (L_i - P0) e^(sd z) at point i, L the law's mean curve: the noise
    sits on the part above the overhead, as the criterion reads it, with sd the residual sd of
    log(size - P0) around c b (c the median of the record's ratios). The proportional law L = c' b
    passes through the affine curve at the bounds' geometric mean (below it, where c' b < P0, it
    draws sizes under the overhead, which fail).

    >>> from verify.oc.command import _records
    >>> rec = _records("quick").get("atlas.hopfield_gated.affine_overhead")
    >>> rec is None or atlas_affine(rec).theory == "affine"
    True
    """
    from verify.atlas.verdict import affine_judgement

    points = record["details"].get("points")
    if not points or "size_measured_per_draw" not in points[0]:
        raise NotCovered("the record holds no measured sizes per point (a size at or below the overhead)")
    p0 = float(record["params"]["overhead"])
    above = [[float(v) for v in pt["size_per_draw"]] for pt in points]  # the sizes less P0
    bounds = np.array([float(np.median(a)) / float(pt["ratio"]) for a, pt in zip(above, points)])
    slope = float(np.median([pt["ratio"] for pt in points]))
    draws = int(seeds or len(above[0]))
    resid = np.concatenate([np.log(a) - math.log(slope * b) for a, b in zip(above, bounds)])
    sd = float(np.sqrt((resid**2).sum() / max(len(resid) - 1, 1)))
    anchor_b = float(np.exp(np.mean(np.log(bounds))))
    anchor_s = p0 + slope * anchor_b
    curves = {
        "affine": p0 + slope * bounds,
        "proportional": anchor_s * bounds / anchor_b,
        "residual bound^0.8": p0 + power_through(bounds, 0.8, anchor_b, anchor_s - p0),
        "residual bound^1.2": p0 + power_through(bounds, 1.2, anchor_b, anchor_s - p0),
        "no growth": np.full(len(bounds), anchor_s),
    }
    p, scale = record["params"], record.get("scale", "quick")

    def law(c):
        def draw(rng):
            drawn = [list(p0 + (v - p0) * np.exp(sd * rng.standard_normal(draws))) for v in c]
            return affine_judgement(drawn, [[b] * draws for b in bounds], p0, p["constant"], scale)

        return draw

    return Setup(
        "affine",
        {name: law(curves[name]) for name in AFFINE_LAWS},
        {
            "log_residual_sd": sd,
            "from": "residual sd of log(size - P0) around c b, c the record's median ratio",
        },
        {"draws": draws, "bounds": bounds.tolist()},
    )


def _capacity_setup(record, seeds, judge) -> Setup:
    from theory.hopfield.derived import gated_capacity_prediction

    p = record["params"]
    rows = record["details"]["seeds"]
    nu = [r["capacity_ungated"] for r in rows]
    ng = [r["capacity_gated"] for r in rows]
    if any(v is None for v in nu + ng):
        raise NotCovered("a seed's capacity is off the grid in the record")
    kappa, ne = float(p["kappa"]), int(p["n_eff"])
    n = int(seeds or len(rows))
    mu, sd_u = float(np.mean(np.log(nu))), float(np.std(np.log(nu), ddof=1))
    diffs = [math.log(g / gated_capacity_prediction(u, ne, kappa)) for u, g in zip(nu, ng)]
    sd_g = float(np.std(diffs, ddof=1))
    laws = {
        "D3": lambda u: gated_capacity_prediction(u, ne, kappa),
        "N_u e^kappa (c = 1)": lambda u: u * math.exp(kappa),
        "e^(0.75 kappa)": lambda u: u * math.exp(0.75 * kappa),
        "e^(1.25 kappa)": lambda u: u * math.exp(1.25 * kappa),
        "no gain": lambda u: u,
    }

    def law(f):
        def draw(rng):
            us = np.exp(mu + sd_u * rng.standard_normal(n))
            gs = [f(u) * math.exp(sd_g * e) for u, e in zip(us, rng.standard_normal(n))]
            return judge(
                [{"capacity_ungated": float(u), "capacity_gated": float(g)} for u, g in zip(us, gs)], p
            )

        return draw

    return Setup(
        "D3",
        {name: law(f) for name, f in laws.items()},
        {"ln_nu_sd": sd_u, "ln_ng_given_nu_sd": sd_g, "from": "the record's per-seed capacities"},
        {"seeds": n},
    )


def capacity_gain(record, seeds=None, plain=True) -> Setup:
    """hopfield.capacity.gain: ungated and gated capacities per seed.

    >>> from verify.oc.command import _records
    >>> setup = capacity_gain(_records("quick")["hopfield.capacity.gain"])
    >>> setup.budget
    {'seeds': 12}
    """
    from verify.hopfield.capacity_setup import _gain_judgement

    return _capacity_setup(
        record, seeds, lambda rows, p: _gain_judgement(rows, p["n_eff"], float(p["kappa"]), plain)[0]
    )


def capacity_d3(record, seeds=None, plain=True) -> Setup:
    """hopfield.capacity.d3: ungated and gated capacities per seed.

    >>> from verify.oc.command import _records
    >>> setup = capacity_d3(_records("quick")["hopfield.capacity.d3"])
    >>> 'N_u e^kappa (c = 1)' in setup.alternatives
    True
    """
    from verify.hopfield.capacity_setup import _d3_judgement

    return _capacity_setup(
        record,
        seeds,
        lambda rows, p: _d3_judgement(rows, p["n_eff"], float(p["kappa"]), p["max_factor"], plain),
    )


def retrieval_fit(record, seeds=None) -> Setup:
    """retrieval.scaling.fit: N_c per grid point, log-normal noise around F1 (or an alternative).

    >>> from verify.oc.command import _records
    >>> setup = retrieval_fit(_records("quick")["retrieval.scaling.fit"])
    >>> setup.budget
    {'grid_points': 12}
    """
    import verify.retrieval.scaling as rs

    p = record["params"]
    grid, n_c = record["details"]["grid"], record["details"]["n_c"]
    pred = np.array([rs.th.nc_pred(V, d, L) for V, d, L in grid])
    resid = np.log(n_c) - np.log(pred)
    sd = float(np.std(resid - resid.mean(), ddof=1))
    level = float(np.exp(resid.mean()))
    no_margin = np.array([4 * V * L * math.log(V) / d for V, d, L in grid])
    no_margin *= np.exp(np.mean(np.log(pred) - np.log(no_margin)))
    geo = float(np.exp(np.mean(np.log(pred))))
    laws = {
        "F1": pred,
        "F1 without its margin factor": no_margin,
        "no dependence": np.full(len(grid), geo),
        "opposite sign": geo**2 / pred,
    }

    def law(curve):
        def draw(rng):
            drawn = level * curve * np.exp(sd * rng.standard_normal(len(grid)))
            return rs.f1_exponents_judgement(grid, drawn.tolist(), p["r2"])[0]

        return draw

    if seeds:
        raise NotCovered("one fit over the grid: its budget is grid points, not seeds")
    return Setup(
        "F1",
        {name: law(c) for name, c in laws.items()},
        {"log_sd": sd, "from": "sd of log(N_c / F1) over the record's grid"},
        {"grid_points": len(grid)},
    )


def tradeoff(record, seeds=None) -> Setup:
    """fact_mlp.transformer.tradeoff: a rank correlation over the zoo of stored MLPs, judged by the
    claim's own :func:`verify.fact_mlp.transformer.tradeoff_judgement`. Each MLP's long-context
    recall is redrawn as a binomial fraction over its n_facts x contexts evaluations (every key in
    every fresh context) at the measured recall; the Lipschitz constants are the record's (a
    property of each stored MLP, not a draw). Laws: the drops as measured (the theory: drops rise
    with the Lipschitz constant as measured), no relation (the same drops in a random order each
    draw) and the opposite sign (the drops sorted against the Lipschitz ranks).

    >>> from verify.oc.command import _records
    >>> tradeoff(_records("quick")["fact_mlp.transformer.tradeoff"]).alternatives
    ['no relation', 'opposite sign']
    """
    from verify.fact_mlp.transformer import tradeoff_judgement

    if seeds:
        raise NotCovered("one zoo of MLPs: its budget is evaluations, not seeds")
    p, details = record["params"], record.get("details") or {}
    points = details.get("points") or []
    if len(points) < 3 or any("recall_long" not in pt or "lipschitz" not in pt for pt in points):
        raise NotCovered("the record holds fewer than 3 stored MLPs with their long-context recall")
    lip = np.array([float(pt["lipschitz"]) for pt in points])
    recall = np.array([float(pt["recall_long"]) for pt in points])
    m = int(p["n_facts"]) * int(p["contexts"])
    long_len = int(details.get("long_len", p["long_len"]))
    ranks = np.argsort(np.argsort(lip))

    def law(order):
        def draw(rng):
            drops = 1.0 - rng.binomial(m, recall) / m
            return tradeoff_judgement(lip.tolist(), order(drops, rng).tolist(), long_len)

        return draw

    return Setup(
        "as measured",
        {
            "as measured": law(lambda d, rng: d),
            "no relation": law(lambda d, rng: rng.permutation(d)),
            "opposite sign": law(lambda d, rng: np.sort(d)[::-1][ranks]),
        },
        {"evaluations_per_mlp": m, "from": "binomial noise of each MLP's long-context recall"},
        {"mlps": len(points), "evaluations": m},
    )


def small_d_bracket(record, seeds=None) -> Setup:
    """retrieval.capacity.small_d_fail: a must-fail bracket around the plateau dimension d*, judged
    by the claim's own :func:`verify.retrieval.sufficient.small_d_judgement` on per-draw accuracies
    at the two sides. Draws: normal around each side's measured mean accuracy, with the per-draw
    sd of the side the record stores (below; the same sd assumed above). Laws: as measured (breaks
    below d*, holds above), and the nearest violating values: the guarantee holding at the below
    point (its mean on the target) and breaking at the above point (its mean on the target).

    >>> from verify.oc.command import _records
    >>> small_d_bracket(_records("quick")["retrieval.capacity.small_d_fail"]).alternatives[0]
    'holds below (mean on the target)'
    """
    from verify.criteria import Bracket
    from verify.retrieval.sufficient import small_d_judgement

    p, d, pred = record["params"], record.get("details") or {}, record.get("predicted") or {}
    accs = d.get("accuracies") or []
    if p.get("d_side") != "below" or len(accs) < 2 or "mean_accuracy_above" not in d:
        raise NotCovered("the record holds no per-draw accuracies below and a mean above the boundary")
    bracket = Bracket("d", float(pred["boundary"]), float(pred["below"]), float(pred["above"]))
    n, target, sd = int(seeds or p["n_draws"]), float(p["target"]), float(np.std(accs, ddof=1))
    low, high = float(d["mean_accuracy_below"]), float(d["mean_accuracy_above"])

    def law(mean_below, mean_above):
        def draw(rng):
            below = mean_below + sd * rng.standard_normal(n)
            above = mean_above + sd * rng.standard_normal(n)
            return small_d_judgement(bracket, below.tolist(), above.tolist(), target, "below")

        return draw

    return Setup(
        "as measured",
        {
            "as measured": law(low, high),
            "holds below (mean on the target)": law(target, high),
            "breaks above (mean on the target)": law(low, target),
        },
        {"per_draw_sd": sd, "from": "the record's per-draw accuracies below the boundary"},
        {"draws": n},
    )


def rho_bracket(record, seeds=None) -> Setup:
    """icrecall.handset.rho_zero_fails: a must-fail bracket around the relation-signal boundary,
    judged by the claim's own :func:`verify.icrecall.handset_setup.silence_judgement` on per-seed
    pre-activations of the correct neuron (minus theta) at every rho the record measured. Draws:
    normal around each rho's measured mean, with that rho's own per-seed sd. Laws: as measured
    (silent below the boundary, firing above), and the nearest violating values: the neuron on the
    threshold (mean 0) at the largest rho below the boundary, and at the rho above it.

    >>> from verify.oc.command import _records
    >>> rho_bracket(_records("quick")["icrecall.handset.rho_zero_fails"]).alternatives[0]
    'fires below (mean on 0 at rho = 0.3)'
    """
    from verify.criteria import Bracket
    from verify.icrecall.handset_setup import silence_judgement

    p, d, pred = record["params"], record.get("details") or {}, record.get("predicted") or {}
    per_seed = d.get("correct_preactivation_per_seed") or {}
    rhos = [*p.get("rho_tests", []), p.get("rho_above")]
    if p.get("rho_side") != "below" or any(str(r) not in per_seed for r in rhos):
        raise NotCovered("the record holds no per-seed pre-activations at every rho of the bracket")
    vals = {r: np.asarray(per_seed[str(r)], dtype=float) for r in rhos}
    if any(v.size < 2 for v in vals.values()):
        raise NotCovered("fewer than 2 seeds per rho: no spread to draw from")
    bracket = Bracket("rho", float(pred["boundary"]), float(pred["below"]), float(pred["above"]))
    n = int(seeds or p["n_seeds"])
    tests, above = list(p["rho_tests"]), p["rho_above"]
    below = max(tests)

    def law(shift: dict):
        def draw(rng):
            pre = {
                r: (shift.get(r, v.mean()) + v.std(ddof=1) * rng.standard_normal(n)).tolist()
                for r, v in vals.items()
            }
            return silence_judgement(bracket, pre, tests, above, "below")

        return draw

    return Setup(
        "as measured",
        {
            "as measured": law({}),
            f"fires below (mean on 0 at rho = {below:.4g})": law({below: 0.0}),
            f"silent above (mean on 0 at rho = {above:.4g})": law({above: 0.0}),
        },
        {
            "per_seed_sd": {str(r): float(v.std(ddof=1)) for r, v in vals.items()},
            "from": "the record's per-seed pre-activations at each rho",
        },
        {"seeds": n},
    )


#: claim id (or fnmatch pattern) -> simulator
SIMULATORS: dict[str, Callable] = {
    "geometric.single_hop.log_scaling": log_scaling,
    "geometric.gd.threshold_scaling": gd_threshold_scaling,
    "hopfield.capacity.gain": capacity_gain,
    "hopfield.capacity.d3": capacity_d3,
    "retrieval.scaling.fit": retrieval_fit,
    "atlas.*.within_constant": atlas,
    "atlas.*.affine_overhead": atlas_affine,
    "fact_mlp.transformer.tradeoff": tradeoff,
    "retrieval.capacity.small_d_fail": small_d_bracket,
    "icrecall.handset.rho_zero_fails": rho_bracket,
}
