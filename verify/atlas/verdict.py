"""The within-constant verdict of the atlas claims, shared by verify.atlas.claims and
verify.atlas.retrieval: its constants, the criterion object and the faster- and slower-growing
family controls. Registers no claim.

The criterion (verify.criteria): the size/bound ratios vary by at most CONSTANT (a convention),
and the 95% interval of the log-log exponent of size against bound contains 1 (size proportional
to the bound) and excludes the two nearest alternatives, bound^0.8 and bound^1.2. Over bounds
spanning less than MIN_SPAN (one decade at quick scale, two at full) the exponent cannot be told
from its alternatives and the verdict is inconclusive; so it is when every size of the family is
the same (no growth to fit) or every bound is (no span to fit), which leaves the exponent part
inconclusive while the spread is judged as ever. The previous one-sided rule (spread <= 2
and exponent <= 1.25) stays in each record as details["previous_criterion"]."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from verify.atlas.affine_fit import load_fit
from verify.atlas.core import fit_exponent
from verify.claims import Control, choice
from verify.criteria import EverySeed, IntervalTest, Judgement, Threshold, all_of, unit_of
from verify.oc.laws import power_through

CONSTANT = 2.0
#: the previous rule's one-sided bound, still a parameter of every atlas claim (that rule's stored
#: verdict is the record's details["previous_criterion"], verify.previous)
MAX_EXPONENT = 1.25
GROWTH = 1.5
SLOWER = 0.5
ALTERNATIVES = {"bound^0.8": 0.8, "bound^1.2": 1.2}
MIN_SPAN = {"quick": 10.0, "full": 100.0}
#: the exponent part of every atlas statement
EXPONENT_RULE = (
    "has a 95% interval that contains 1 and excludes 0.8 and 1.2 (over bounds spanning at least "
    "10x at quick scale, 100x at full; narrower data, or an interval holding 0.8 or 1.2, are inconclusive)"
)

#: The parameter ``judged_sizes`` of every ``atlas.<family>.within_constant`` claim: the sizes the
#: criterion judges, the measured ones (the claim's value) or a synthetic family at the same bounds
#: growing like bound^GROWTH or bound^SLOWER (the controls' values).
JUDGED_SIZES = ("measured", f"synthetic bound^{GROWTH}", f"synthetic bound^{SLOWER}")


def judged_params(**fields) -> dict:
    """A within_constant claim's parameters: its own ``fields``, the criterion's constant and
    exponent bound, and the sizes it judges (the measured ones; the controls override that).

    >>> judged_params(draws=3)["judged_sizes"]
    'measured'
    """
    return {**fields, "constant": CONSTANT, "max_exponent": MAX_EXPONENT, "judged_sizes": JUDGED_SIZES[0]}


#: The control of every ``atlas.<family>.within_constant`` claim judged against a bound (the
#: hopfield families, judged against a convention, word theirs differently).
FASTER_THAN_BOUND = Control(
    "faster_than_bound",
    {"judged_sizes": JUDGED_SIZES[1]},
    f"a synthetic family at the same bounds whose size grows like bound^{GROWTH}, faster than the "
    "bound: its exponent's interval excludes 1, so the criterion must fail",
)
SLOWER_THAN_BOUND = Control(
    "slower_than_bound",
    {"judged_sizes": JUDGED_SIZES[2]},
    f"a synthetic family at the same bounds whose size grows like bound^{SLOWER}, slower than the "
    "bound: its exponent's interval excludes 1, so the criterion must fail",
)
ATLAS_CONTROLS = (FASTER_THAN_BOUND, SLOWER_THAN_BOUND)


#: why the exponent part cannot be judged when every size, or every bound, of a family is the same
EVERY_SIZE_EQUAL = "every size equal: no growth to fit"
EVERY_BOUND_EQUAL = "every bound equal: no span to fit"


def within_constant_verdict(sizes_per_point, bounds_per_point) -> dict:
    """The numbers the criterion of the module doc reads from per-point, per-draw sizes and bounds
    (>= 3 points): the size/bound ratios, their spread, the log-log exponent with its 95% interval
    and the bounds' span, and ``degenerate``: :data:`EVERY_SIZE_EQUAL` or :data:`EVERY_BOUND_EQUAL`
    when the exponent has nothing to be fitted to (its interval is then [0, 0] for equal sizes and
    None for equal bounds), else None.

    >>> v = within_constant_verdict([[2.0], [20.0], [200.0]], [[1.0], [10.0], [100.0]])
    >>> v["spread"], round(v["exponent"], 9), v["bound_span"], v["degenerate"]
    (1.0, 1.0, 100.0, None)
    >>> within_constant_verdict([[64.0], [64.0], [64.0]], [[1.0], [1.5], [2.0]])["degenerate"]
    'every size equal: no growth to fit'
    """
    if len(sizes_per_point) < 3:
        raise ValueError(f"within a constant 'across the sizes' needs >= 3 sizes, got {len(sizes_per_point)}")
    ratios = [float(np.median(s)) / float(np.median(b)) for s, b in zip(sizes_per_point, bounds_per_point)]
    if not all(np.isfinite(ratios)) or min(ratios) <= 0:
        raise ValueError(f"size/bound ratios must be finite and positive, got {ratios}")
    spread = max(ratios) / min(ratios)
    flat = [b for bs in bounds_per_point for b in bs]
    sizes = [s for ss in sizes_per_point for s in ss]
    degenerate = EVERY_BOUND_EQUAL if np.ptp(flat) == 0 else EVERY_SIZE_EQUAL if np.ptp(sizes) == 0 else None
    fit = (
        {"exponent": None, "interval95": None}
        if degenerate == EVERY_BOUND_EQUAL
        else fit_exponent(flat, sizes)
    )
    return {
        "ratios": ratios,
        "spread": spread,
        "exponent": fit["exponent"],
        "exponent_interval95": fit["interval95"],
        "bound_span": max(flat) / min(flat),
        "degenerate": degenerate,
    }


def exponent_judgement(v: dict) -> Judgement:
    """The exponent part of the criterion on :func:`within_constant_verdict`'s numbers: the
    interval test of the module doc, or inconclusive when ``v["degenerate"]`` says there is no
    growth (every size equal) or no span (every bound equal) to fit an exponent to.

    >>> v = within_constant_verdict([[64.0], [64.0], [64.0]], [[1.0], [1.5], [2.0]])
    >>> j = exponent_judgement(v)
    >>> j.verdict, j.resolution["text"]
    ('inconclusive', 'log-log exponent of size against bound: every size equal: no growth to fit')
    """
    test = IntervalTest("log-log exponent of size against bound", 1.0, ALTERNATIVES, "the bound")
    if v.get("degenerate") is None:
        return test.judge(v["exponent_interval95"])
    return Judgement(
        "inconclusive",
        {
            test.quantity: f"interval contains {test.theory:.4g} ({test.theory_name})",
            "alternatives": dict(ALTERNATIVES),
        },
        {test.quantity: v["exponent_interval95"]},
        {
            "rule": "interval_test",
            "value": None,
            "kind": "distance_to_nearest_rejected",
            "unit": unit_of(test.quantity),
            "coarse": True,
            "text": f"{test.quantity}: {v['degenerate']}",
            "rejected": [],
            "not_rejected": sorted(ALTERNATIVES),
            "degenerate": v["degenerate"],
        },
        "sizes that differ across the family (a size grid whose smallest storing sizes grow)"
        if v["degenerate"] == EVERY_SIZE_EQUAL
        else "points whose bounds differ (a wider grid of sizes)",
    )


def within_constant_judgement(v: dict, constant: float, scale: str) -> Judgement:
    """The criterion object on :func:`within_constant_verdict`'s numbers (module doc)."""
    if scale not in MIN_SPAN:
        raise ValueError(f"scale must be one of {sorted(MIN_SPAN)}, got {scale!r}")
    judgement = all_of(
        spread=Threshold("size/bound spread", constant, "<=", "convention").judge(v["spread"]),
        exponent=exponent_judgement(v),
    )
    if v["bound_span"] < MIN_SPAN[scale] and judgement.verdict == "pass":
        judgement = Judgement(
            "inconclusive",
            {**judgement.predicted, "bound_span": f">= {MIN_SPAN[scale]:g}"},
            {**judgement.measured, "bound_span": v["bound_span"]},
            {
                **dict(judgement.resolution),
                "coarse": True,
                "text": f"the bounds span {v['bound_span']:.3g}x < {MIN_SPAN[scale]:g}x; "
                + judgement.resolution["text"],
            },
            f"sizes whose bounds span at least {MIN_SPAN[scale]:g}x",
        )
    elif judgement.verdict == "inconclusive" and v.get("degenerate") is None:
        judgement = dataclasses.replace(
            judgement, budget="a wider span of sizes (the interval's width falls as 1/log span)"
        )
    return judgement


def synthetic_sizes(p, sizes_per_point, bounds_per_point):
    """The sizes ``p["judged_sizes"]`` names (:data:`JUDGED_SIZES`): the measured ones, or (the
    controls) a family growing like bound^GROWTH (``faster_than_bound``) or bound^SLOWER
    (``slower_than_bound``) through the first point."""
    judged = choice(p, "judged_sizes", JUDGED_SIZES)
    if judged == JUDGED_SIZES[1]:
        return faster_family(sizes_per_point, bounds_per_point, GROWTH)
    if judged == JUDGED_SIZES[2]:
        return faster_family(sizes_per_point, bounds_per_point, SLOWER)
    return sizes_per_point


def faster_family(sizes_per_point, bounds_per_point, growth=GROWTH):
    """A control's sizes: every draw's size set to size_first * (bound / bound_first)^growth."""
    s0, b0 = float(np.median(sizes_per_point[0])), float(np.median(bounds_per_point[0]))
    return [power_through(bs, growth, b0, s0).tolist() for bs in bounds_per_point]


#: the criterion of an affine claim when a size does not exceed the fitted overhead: the law
#: P = P0 + c I with c > 0 puts every size above P0, so a size at or below it refutes the fit
ABOVE_OVERHEAD = Threshold("smallest size less the fitted overhead P0", 0.0, ">", "pilot")


def affine_params(name: str, **fields) -> dict:
    """An ``atlas.<family>.affine_overhead`` claim's parameters: :func:`judged_params` and the
    ``overhead`` P0 of the family's stored pilot fit (:mod:`verify.atlas.affine_fit`).

    >>> affine_params("chapters_bank", draws=3)["overhead"] == load_fit("chapters_bank")["overhead"]
    True
    """
    return {**judged_params(**fields), "overhead": float(load_fit(name)["overhead"])}


def less_overhead(sizes_per_point, overhead: float) -> list[list[float]]:
    """Every size less the fixed overhead P0 of the affine law.

    >>> less_overhead([[110.0, 120.0], [300.0]], 100.0)
    [[10.0, 20.0], [200.0]]
    """
    if not math.isfinite(overhead):
        raise ValueError(f"the affine law's overhead must be finite, got {overhead}")
    return [[float(s) - overhead for s in ss] for ss in sizes_per_point]


def affine_judgement(
    sizes_per_point, bounds_per_point, overhead: float, constant: float, scale: str
) -> Judgement:
    """The affine law's criterion on measured sizes: fail (:data:`ABOVE_OVERHEAD`) when a size does
    not exceed the overhead, else the within-constant criterion on the sizes less the overhead.

    >>> affine_judgement([[12.0], [30.0], [210.0]], [[1.0], [10.0], [100.0]], 10.0, 2.0, "full").verdict
    'pass'
    >>> affine_judgement([[12.0], [30.0], [210.0]], [[1.0], [10.0], [100.0]], 12.0, 2.0, "full").verdict
    'fail'
    """
    residual = less_overhead(sizes_per_point, overhead)
    low = min(min(r) for r in residual)
    if low <= 0:
        return ABOVE_OVERHEAD.judge(low)
    return within_constant_judgement(within_constant_verdict(residual, bounds_per_point), constant, scale)


def judge_within_constant(
    fam, p, points, sizes, bounds, source, *, bound_key="bound", before=None, after=None, scale="quick"
):
    """The (judgement, details) of an ``atlas.<family>.within_constant`` claim: the controls'
    synthetic families (:func:`synthetic_sizes`), the criterion object's verdict at ``scale``, and
    per-point details (``before``/``after``: per-point extra fields placed around size_per_draw,
    bound and ratio).

    With ``p["overhead"]`` (an ``atlas.<family>.affine_overhead`` claim) the criterion judges the
    sizes less that overhead (:func:`affine_judgement`; the controls' synthetic families grow from
    the first point's size less the overhead); every point keeps its measured sizes
    (``size_measured_per_draw``) and the details the stored fit and the proportional law's reading
    of the same sizes (``proportional``: its spread, exponent interval and verdict)."""
    measured = sizes
    overhead = p.get("overhead")
    extra = {}
    if overhead is not None:
        fit = load_fit(fam.name)
        plain = within_constant_verdict(measured, bounds)
        extra = {
            "overhead": float(overhead),
            "affine_fit": {
                k: fit[k] for k in ("overhead", "slope", "pilot_seeds", "revision", "max_rel_residual")
            },
            "proportional": {
                "spread": plain["spread"],
                "exponent_interval95": plain["exponent_interval95"],
                "verdict": within_constant_judgement(plain, p["constant"], scale).verdict,
            },
        }
        sizes = less_overhead(measured, float(overhead))
        low = min(min(r) for r in sizes)
        if low <= 0:  # the measured sizes refute the fit; a control's family would start below 0
            rows = [
                {"sizes": pt["sizes"], "size_measured_per_draw": m, bound_key: float(np.median(b))}
                for pt, m, b in zip(points, measured, bounds)
            ]
            return ABOVE_OVERHEAD.judge(low), {"family": fam.name, "points_below_overhead": rows, **extra}
    sizes = synthetic_sizes(p, sizes, bounds)
    v = within_constant_verdict(sizes, bounds)
    n = len(points)
    before, after = before or [{}] * n, after or [{}] * n
    if overhead is not None:
        after = [{**post, "size_measured_per_draw": m} for post, m in zip(after, measured)]
    rows = [
        {"sizes": pt["sizes"], **pre, "size_per_draw": s, bound_key: float(np.median(b)), "ratio": r, **post}
        for pt, pre, s, b, r, post in zip(points, before, sizes, bounds, v["ratios"], after)
    ]
    return within_constant_judgement(v, p["constant"], scale), {
        "family": fam.name,
        "resource": fam.resource,
        "bound": fam.bound,
        "bound_tag": fam.bound_tag,
        "points": rows,
        "source": source,
        "exponent": v["exponent"],
        "exponent_interval95": v["exponent_interval95"],
        **extra,
    }


def affine_statement(what: str, fam_name: str, resource: str) -> str:
    """The statement of an ``atlas.<family>.affine_overhead`` claim about ``what`` (the family's
    sizes, in words)."""
    fit = load_fit(fam_name)
    seeds = ", ".join(str(s) for s in fit["pilot_seeds"])
    return (
        f"{what}: the affine law [derived] size = P0 + c x bound (a fixed overhead), restating "
        f"atlas.{fam_name}.within_constant (the proportional law, kept as history): the smallest storing "
        f"{resource} less the overhead P0 = {fit['overhead']:.4g} fitted on pilot seeds {seeds} "
        f"(verify/atlas/affine_fit.toml, never refitted) stays within a constant of the bound: every size "
        f"exceeds P0, the ratios of (median size - P0) to the bound vary by at most {CONSTANT}x and the "
        f"log-log exponent of size - P0 against the bound {EXPONENT_RULE}"
    )


def judge_not_storing(family_name: str, rows: list, size_key: str, star_key: str):
    """The failing (judgement, details) of a searched family's within-constant claim when some draw
    stores at no size of its grid (no size, so no point; the criterion fails), else None.
    ``size_key`` names the rows' size ("F", "N"), ``star_key`` their per-draw smallest sizes
    ("c_star", "d_star"). Judged by a criterion object, so the record carries a resolution like
    every other verdict.

    >>> judgement, details = judge_not_storing("toy", [{"F": 32, "c_star": [2, None]}], "F", "c_star")
    >>> judgement.passed, judgement.resolution["text"], details["draws not storing (F, k)"]
    (False, 'draws storing at no size of the grid <= 0 (theory): measured 1', [(32, 1)])
    >>> judge_not_storing("toy", [{"F": 32, "c_star": [2, 4]}], "F", "c_star") is None
    True
    """
    missing = [(r[size_key], k) for r in rows for k, c in enumerate(r[star_key]) if c is None]
    if not missing:
        return None
    every_draw = Threshold("draws storing at no size of the grid", 0, "<=", "theory", "draws")
    return every_draw.judge(float(len(missing)), unit="draws"), {
        "family": family_name,
        "rows": rows,
        f"draws not storing ({size_key}, k)": missing,
    }


def storing_headroom(stored_at: int | None, steps: int, last_accuracy: float) -> float:
    """One draw's headroom of a smallest-bank search: > 0 exactly when the draw stores within the
    grid. A storing draw: the fraction of the step budget left when it first stored at its C*,
    (steps + 1 - t) / (steps + 1), in (0, 1] for t in 0..steps; a draw storing at no C of the grid:
    its accuracy at the grid's last C after the whole budget, less 1 (< 0).

    >>> storing_headroom(0, 99, 1.0), storing_headroom(99, 99, 1.0), storing_headroom(None, 99, 0.75)
    (1.0, 0.01, -0.25)
    """
    if stored_at is None:
        if not 0.0 <= last_accuracy < 1.0:
            raise ValueError(f"a draw storing nowhere must end below accuracy 1, got {last_accuracy}")
        return float(last_accuracy) - 1.0
    if not 0 <= int(stored_at) <= int(steps):
        raise ValueError(f"a storing step must lie in 0..{steps}, got {stored_at}")
    return (int(steps) + 1 - int(stored_at)) / (int(steps) + 1)


#: the quantity of the smallest-bank claims (one value per (F, draw) search)
HEADROOM = "storing headroom (step budget left at C*; accuracy - 1 if storing nowhere)"


def judge_smallest_bank(found: dict, steps: int, criterion: str):
    """The (judgement, details) of a chapters smallest-bank search (chapters_bank, chapters_toy): every draw at
    every F stores at some C of its grid, judged by an :class:`verify.criteria.EverySeed` rule
    over the (F, draw) searches on :func:`storing_headroom` (> 0 exactly when the draw stores within
    the grid; the grid's end is the criterion's bound, a convention of the atlas). The 0/1 "stores"
    of the previous rule decided the same but gave ``verify oc`` no spread. The details keep C* per
    draw."""
    rows = found["rows"]
    labels = [f"F={r['F']} draw {k}" for r in rows for k in range(len(r["c_star"]))]
    room = [
        storing_headroom(t, steps, trace[-1])
        for r in rows
        for t, trace in zip(r["stored_at_step"], r["accuracy_trace"])
    ]
    judgement = EverySeed(HEADROOM, 0.0, ">", "convention", unit="draws").judge(room, labels)
    return judgement, {"rows": rows, "info_bits": found["info_bits"], "criterion": criterion, "steps": steps}
