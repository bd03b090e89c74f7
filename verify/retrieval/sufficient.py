"""Claims on the corrected capacity statements of the retrieval area (2603.15923;
docs/retrieval.md#statements-and-proof-sketches): the sufficient condition for exact recall
(theory/retrieval/sufficient.py), the plateau of the accuracy as N -> infinity, and the two must-fail brackets
placed at their boundaries (the plateau dimension d*(V, 0.9); the coupon boundary in N).

All accuracies are oracle accuracies of the one-step value memory (docs/retrieval.md#setting), from the
exactly distributed co-occurrence counts, per independent draw of embeddings and data.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from theory.retrieval import bounds as th
from theory.retrieval import sufficient as ts
from verify.claims import Control, claim, shared
from verify.criteria import Judgement, KOfN, Threshold, all_of
from verify.measure import t_interval
from verify.retrieval.capacity_setup import SOURCE, draw_accuracies, no_nan

#: the grid of the sufficient-condition claim: small d (about 2 ln V and 4 ln V, where the
#: statement promises nothing), moderate d, and d >> V; plus orthogonal embeddings
SUFFICIENT_GRID = [
    [64, 9, 4, "gaussian"],
    [64, 17, 4, "gaussian"],
    [64, 256, 4, "gaussian"],
    [64, 2048, 4, "gaussian"],
    [128, 1024, 4, "gaussian"],
    [128, 128, 4, "orthogonal"],
]
PLATEAU_N = 10**9


def _n_at(rule: str, V: int, d: int, L: int, delta: float, embedding: str) -> float:
    """The sample size a grid point is tested at: the sufficient condition, or (control) the
    coupon-necessary size V ln(V/10), where P(every token seen) <= 0.1."""
    if rule == "sufficient":
        return ts.n_sufficient(V, d, L, delta, embedding)
    if rule == "coupon_necessary":
        return coupon_necessary(V)
    raise ValueError(f"n_rule={rule!r} must be 'sufficient' or 'coupon_necessary'")


def coupon_necessary(V: int) -> int:
    """floor(V ln(V/10)): at this N the probability that every token was seen is <= 0.1.

    >>> coupon_necessary(128)
    326
    """
    return math.floor(V * math.log(V / 10.0))


def sufficient_judgement(rows: list, min_exact: int) -> Judgement:
    """The criterion of ``retrieval.capacity.sufficient`` on its grid rows: at every point with a
    finite n_sufficient, exact recall (oracle accuracy 1) on at least ``min_exact`` draws
    (verify.criteria.KOfN), and the grid holds at least one point with a finite and one with an
    infinite n_sufficient (verify.criteria.Threshold on the counts); verify.criteria.all_of.

    >>> rows = [{"vocab_size": 64, "d_model": 256, "seq_len": 4, "embedding": "gaussian", "n_samples": 900.0,
    ...          "accuracies": [1.0] * 9 + [0.99]}, {"vocab_size": 64, "d_model": 9, "seq_len": 4,
    ...          "embedding": "gaussian", "n_samples": math.inf}]
    >>> sufficient_judgement(rows, 9).verdict, sufficient_judgement(rows[:1], 9).verdict
    ('pass', 'fail')
    """
    parts, finite, infinite = {}, 0, 0
    for r in rows:
        if not math.isfinite(r["n_samples"]):
            infinite += 1
            continue
        finite += 1
        no_nan(r["accuracies"])
        name = f"V{r['vocab_size']}_d{r['d_model']}_L{r['seq_len']}_{r['embedding']}"
        parts[name] = KOfN(
            f"exact recall at N = n_sufficient = {r['n_samples']:.0f} (1 when the oracle accuracy is 1)",
            1.0,
            ">=",
            k=min_exact,
            source="convention",
            unit="draws",
        ).judge([float(a == 1.0) for a in r["accuracies"]])
    parts["finite_points"] = Threshold("grid points with a finite n_sufficient", 1, ">=", "convention").judge(
        finite
    )
    parts["infinite_points"] = Threshold(
        "grid points with an infinite n_sufficient", 1, ">=", "convention"
    ).judge(infinite)
    return all_of(**parts)


@claim(
    "retrieval.capacity.sufficient",
    source=SOURCE + "; theory retrieval.n_sufficient",
    bounds=("retrieval.n_sufficient", "retrieval.plateau_accuracy"),
    provenance="derived",
    templated=True,
    statement="the sufficient condition holds in simulation: at every grid point (V, d, L, embedding) of "
    "{grid} where n_sufficient(V, d, L, delta={delta}) is finite, N = n_sufficient gives oracle accuracy "
    "1 on at least {min_exact} of {n_draws} independent draws (a convention); the grid must also hold "
    "points where it is +inf (d near 2 ln V and 4 ln V; the mean accuracy at N=1e9 there is recorded "
    "beside the plateau prediction) and points with d >> V",
    quick={"grid": SUFFICIENT_GRID, "delta": 0.1, "n_draws": 10, "min_exact": 9, "n_rule": "sufficient"},
    seed_rule="at every finite grid point, >= 9 of 10 draws (seeds seed..seed+9 of the draw key) exact",
    controls=[
        Control(
            "coupon_necessary",
            {"n_rule": "coupon_necessary"},
            "at N = V ln(V/10) the probability that every token was seen is <= 0.1, so "
            "exact recall must fail on most draws",
        )
    ],
)
def sufficient(p, ctx):
    """Criterion: :func:`sufficient_judgement`, the former rule written as criterion objects."""
    rows, finite, infinite = [], 0, 0
    for V, d, L, emb in p["grid"]:
        N = _n_at(p["n_rule"], V, d, L, p["delta"], emb)
        row = {
            "vocab_size": V,
            "d_model": d,
            "seq_len": L,
            "embedding": emb,
            "n_samples": N,
            "n_c_pred_F1": th.nc_pred(V, d, L) if emb == "gaussian" else None,
        }
        if math.isfinite(N):
            accs = draw_accuracies(V, d, L, int(N), ctx.seed, p["n_draws"], emb)
            exact = int(sum(a == 1.0 for a in accs))
            row.update(accuracies=accs, exact=exact, passed=exact >= p["min_exact"])
            finite += 1
        else:
            accs = draw_accuracies(V, d, L, PLATEAU_N, ctx.seed, p["n_draws"], emb)
            row.update(
                plateau_n=PLATEAU_N,
                plateau_accuracies=accs,
                plateau_exact=int(sum(a == 1.0 for a in accs)),
                plateau_pred=ts.plateau_accuracy(V, d) if emb == "gaussian" else 1.0,
            )
            infinite += 1
        rows.append(row)
    return sufficient_judgement(rows, p["min_exact"]), {
        "rows": rows,
        "n_finite": finite,
        "n_infinite": infinite,
        "delta": p["delta"],
        "n_rule": p["n_rule"],
    }


@claim(
    "retrieval.capacity.plateau",
    source=SOURCE + "; theory retrieval.plateau_accuracy",
    bounds=("retrieval.plateau_accuracy",),
    provenance="derived",
    templated=True,
    statement="at N={n_samples} the mean oracle accuracy over {n_draws} draws agrees with the N -> infinity "
    "plateau p = E[Phi(chi_d)^(V-1)] at V={vocab_size}, L={seq_len}, d in {d_models}: |mean - p| <= "
    "{z} sqrt(p (1 - p) / (V K)) + {slack} (K = {n_draws} draws of V tokens; z and the slack are "
    "conventions) at every d",
    quick={
        "vocab_size": 256,
        "d_models": [12, 16, 20, 24],
        "seq_len": 4,
        "n_samples": PLATEAU_N,
        "n_draws": 8,
        "slack": 0.005,
        "z": 3.0,
    },
    seed_rule="one tolerance per d over 8 draws (binomial standard error at the prediction); every d "
    "must agree",
    controls=[
        Control(
            "finite_n",
            {"n_samples": 2048},
            "at N=2048 the sample crosstalk has not averaged out, so the accuracy is far "
            "below the N -> infinity plateau",
        )
    ],
)
def plateau(p, ctx):
    V, L = p["vocab_size"], p["seq_len"]
    rows, parts = [], {}
    for d in p["d_models"]:
        accs = draw_accuracies(V, d, L, p["n_samples"], ctx.seed, p["n_draws"])
        lo, hi = t_interval(accs, 0.99)
        pred = ts.plateau_accuracy(V, d)
        tol = p["z"] * math.sqrt(pred * (1.0 - pred) / (V * len(accs))) + p["slack"]
        mean = float(np.mean(accs))
        good = abs(mean - pred) <= tol
        parts[f"d{d}"] = Threshold(f"|mean accuracy - plateau p| at d={d}", tol, "<=", "convention").judge(
            abs(mean - pred)
        )
        rows.append(
            {
                "d_model": d,
                "accuracies": accs,
                "mean": mean,
                "ci99": [lo, hi],
                "tolerance": tol,
                "predicted": pred,
                "agrees": good,
            }
        )
    return all_of(**parts), {
        "vocab_size": V,
        "seq_len": L,
        "n_samples": p["n_samples"],
        "rows": rows,
    }


def _bracket_d(V: int, target: float, side: str) -> int:
    d_star = ts.plateau_dimension(V, target)
    if side == "below":
        return math.floor(d_star) - 1
    if side == "above":
        return math.ceil(d_star) + 1
    raise ValueError(f"d_side={side!r} must be 'below' or 'above'")


@shared
def run_accuracies(ctx, V: int, d: int, L: int, N: int, n_draws: int) -> list:
    """:func:`draw_accuracies` at the run's seed, computed once per run (small_d_fail and its
    control read both sides of the bracket).

    >>> from verify.claims import Context
    >>> run_accuracies(Context(), 16, 4, 4, 10**9, 2)
    [0.625, 0.75]
    """
    return draw_accuracies(V, d, L, N, ctx.seed, n_draws)


def small_d_judgement(bracket, below: list, above: list, target: float, side: str) -> Judgement:
    """small_d_fail's criterion: each side of the bracket read as the 95% Student-t interval over
    the draws of the mean accuracy against ``target`` (verify.criteria.Threshold): it breaks at a
    side whose interval lies wholly below the target and holds where it lies wholly above. Pass
    or fail as :meth:`verify.criteria.Bracket.judge_side` on those two readings; inconclusive, with
    the draws that would decide, while an interval straddles the target (a mean on the target
    decides nothing). The former rule read the two means of 8 draws as points, so a mean on the
    target passed about half the time (verify oc: 0.54, at any number of draws); with intervals
    ``verify oc`` on the record of pilot base seed 100 gave power 0.79 at 8 draws (worst
    alternative 0.03) and named 16 draws for power 0.8, the count the claim uses.

    >>> from verify.criteria import Bracket
    >>> b = Bracket("d", 15.3, 14, 17)
    >>> small_d_judgement(b, [0.85, 0.86, 0.84], [0.95, 0.94, 0.96], 0.9, "below").verdict
    'pass'
    >>> small_d_judgement(b, [0.85, 0.95, 0.90], [0.95, 0.94, 0.96], 0.9, "below").verdict
    'inconclusive'
    >>> small_d_judgement(b, [0.85, 0.86, 0.84], [0.95, 0.94, 0.96], 0.9, "above").verdict
    'fail'
    """
    no_nan(list(below) + list(above))
    reads = {
        name: Threshold(f"mean oracle accuracy at d = {d:.4g}", target, "<", "theory").judge(
            list(t_interval(accs, 0.95)), seeds=len(accs), unit="draws"
        )
        for name, d, accs in (("below", bracket.below, below), ("above", bracket.above, above))
    }
    breaks = {n: r.verdict for n, r in reads.items()}  # pass: breaks; fail: holds; inconclusive
    if side == "below":  # breaks below and holds above
        verdict = (
            "fail"
            if "fail" == breaks["below"] or "pass" == breaks["above"]
            else "pass"
            if (breaks["below"], breaks["above"]) == ("pass", "fail")
            else "inconclusive"
        )
    else:  # the control: "it breaks" read above
        verdict = {"pass": "pass", "fail": "fail"}.get(breaks["above"], "inconclusive")
    base = bracket.judge_side(side, breaks["below"] == "pass", breaks["above"] == "pass")
    measured = {**base.measured, **{k: v for r in reads.values() for k, v in r.measured.items()}}
    text = base.resolution["text"] + "".join(f"; {r.resolution['text']}" for r in reads.values())
    budget = next((r.budget for r in reads.values() if r.verdict == "inconclusive"), None)
    return Judgement(
        verdict,
        base.predicted,
        measured,
        {**base.resolution, "text": text},
        budget if verdict == "inconclusive" else None,
    )


@claim(
    "retrieval.capacity.small_d_fail",
    source=SOURCE + ", our F1 (population margin; docs/retrieval.md); plateau",
    bounds=("retrieval.n_sufficient", "retrieval.plateau_accuracy"),
    provenance="derived",
    demonstrates_failure=True,
    statement="must fail, bracketed at the plateau dimension d*(V=256, 0.9) = 15.3: at d = "
    "floor(d*) - 1 = 14 even N=1e9 gives mean oracle accuracy < 0.9 over 16 draws, the 95% Student-t "
    "interval of the mean wholly below 0.9 (the 'accuracy >= 0.9 for large N' guarantee fails); at "
    "d = ceil(d*) + 1 = 17 it holds, the interval wholly at or above 0.9 (an interval on 0.9 leaves "
    "the bracket inconclusive; the claim "
    "reads both sides; its resolution is the bracket's factor, max(d*/14, 17/d*) = 1.11)",
    quick={
        "vocab_size": 256,
        "seq_len": 4,
        "n_samples": PLATEAU_N,
        "target": 0.9,
        "n_draws": 16,
        "d_side": "below",
    },
    seed_rule="95% Student-t interval of the mean over 16 draws at each side",
    controls=[
        Control(
            "above_boundary",
            {"d_side": "above"},
            "just above d* the plateau exceeds 0.9, so the guarantee holds and the "
            "demonstration's criterion (accuracy < 0.9) must fail",
        )
    ],
)
def small_d_fail(p, ctx):
    """Both sides of the bracket are measured once per run and judged by
    :class:`verify.criteria.Bracket` around d*, whose resolution is the bracket's factor: the claim
    judges the break at floor(d*) - 1 (and reads the hold at ceil(d*) + 1), its control
    above_boundary judges the side at ceil(d*) + 1. Both read each side once (the details reuse
    the side's read): the control swaps the side judged, no arm stands in for another."""
    from verify.criteria import Bracket

    V, L, N, target = p["vocab_size"], p["seq_len"], p["n_samples"], p["target"]
    d_star = ts.plateau_dimension(V, target)
    bracket = Bracket("d", d_star, _bracket_d(V, target, "below"), _bracket_d(V, target, "above"))

    accs = {  # once each
        side: run_accuracies(ctx, V, int(getattr(bracket, side)), L, N, p["n_draws"])
        for side in ("below", "above")
    }
    means = {side: float(np.mean(a)) for side, a in accs.items()}
    sides = [accs["below"], accs["above"]]
    judgement = small_d_judgement(bracket, *sides, target, p["d_side"])
    d = _bracket_d(V, target, p["d_side"])
    return judgement, {
        "bracket": bracket.details(
            "retrieval.plateau_accuracy", f"mean oracle accuracy over the draws < {target}"
        ),
        "d_model": d,
        "accuracies": accs[p["d_side"]],
        "accuracies_by_side": accs,
        "accuracy": means[p["d_side"]],
        "mean_accuracy_below": means["below"],
        "mean_accuracy_above": means["above"],
        "inner_check_passed": means[p["d_side"]] >= target,
        "plateau_pred": ts.plateau_accuracy(V, d),
        "d_star": d_star,
        "margin_F1": th.population_margin(V, d),
        "n_sufficient": ts.n_sufficient(V, d, L),
    }


def small_n_judgement(
    accuracies: list, min_exact: int, n: int, necessary: float, sufficient: float
) -> Judgement:
    """The criterion of ``retrieval.capacity.small_n_fail`` at sample size ``n``: fewer than
    ``min_exact`` of the draws recall exactly, i.e. at least len - min_exact + 1 draws do not
    (verify.criteria.KOfN on the indicator of a draw that is not exact). Not a bracket: the theory's
    sizes around it, ``necessary`` (coupon side) and ``sufficient``, are far apart; the resolution
    is coarse and names their factor.

    >>> j = small_n_judgement([1.0] * 15 + [0.99] * 5, 18, 326, 326, 31950.0)
    >>> j.verdict, j.resolution["coarse"], round(j.resolution["value"])
    ('pass', True, 98)
    >>> small_n_judgement([1.0] * 18 + [0.99] * 2, 18, 326, 326, 31950.0).verdict
    'fail'
    """
    no_nan(accuracies)
    if not 1 <= min_exact <= len(accuracies):
        raise ValueError(f"min_exact = {min_exact} must lie in 1..{len(accuracies)} (the number of draws)")
    rule = KOfN(
        f"recall not exact at N={n} (1 when the oracle accuracy is below 1)",
        1.0,
        ">=",
        k=len(accuracies) - min_exact + 1,
        source="convention",
        unit="draws",
    )
    judgement = rule.judge([float(a != 1.0) for a in accuracies])
    factor = float(sufficient) / float(necessary)
    return dataclasses.replace(
        judgement,
        resolution={
            **judgement.resolution,
            "value": factor,
            "coarse": True,
            "text": f"{judgement.resolution['text']}; not a bracket: the necessary size V ln(V/10) = "
            f"{necessary:.0f} and the sufficient size {sufficient:.0f} are {factor:.3g}x apart, so no "
            "boundary is located between them",
        },
    )


@claim(
    "retrieval.capacity.small_n_fail",
    source=SOURCE + ", our F2 (coupon collector, necessary side; docs/retrieval.md)",
    bounds=("retrieval.coupon_floor", "retrieval.all_seen_upper"),
    provenance="derived",
    demonstrates_failure=True,
    templated=True,
    statement="must fail, tested on both sides in N but not a bracket (the theory gives a necessary and a "
    "sufficient size about 100x apart, no boundary): orthogonal embeddings, V=d={vocab_size}, "
    "L={seq_len}; at N = V ln(V/10) (P(every token seen) <= 0.1) fewer than {min_exact} of {n_draws} "
    "draws recall exactly (a convention); at N = n_sufficient_orthogonal(V, L, 0.1) at least "
    "{min_exact} of {n_draws} do",
    quick={"vocab_size": 128, "seq_len": 4, "n_draws": 20, "min_exact": 18, "n_side": "below"},
    seed_rule="count of exact draws among 20",
    controls=[
        Control(
            "above_boundary",
            {"n_side": "above"},
            "at the sufficient sample size exact recall holds on >= 18/20 draws, so the "
            "demonstration's criterion must fail",
        )
    ],
)
def small_n_fail(p, ctx):
    """Criterion: :func:`small_n_judgement` (the former count rule: fewer than min_exact exact)."""
    V, L = p["vocab_size"], p["seq_len"]
    suff, necessary = ts.n_sufficient_orthogonal(V, L, 0.1), coupon_necessary(V)
    N = necessary if p["n_side"] == "below" else int(suff)
    accs = draw_accuracies(V, V, L, N, ctx.seed, p["n_draws"], "orthogonal")
    exact = int(sum(a == 1.0 for a in accs))
    return small_n_judgement(accs, p["min_exact"], N, necessary, suff), {
        "n_samples": N,
        "accuracies": accs,
        "exact": exact,
        "all_seen_upper": ts.all_seen_upper(V, N),
        "coupon_floor_sufficient": th.coupon_floor(V, 0.1),
        "n_sufficient_orthogonal": suff,
    }
