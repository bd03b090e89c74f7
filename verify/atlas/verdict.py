"""The within-constant verdict of the atlas claims, shared by verify.atlas.claims and
verify.atlas.retrieval: its constants and the faster-growing-family rule. Registers no claim."""

from __future__ import annotations

import numpy as np

from verify.atlas.core import fit_exponent

CONSTANT = 2.0
MAX_EXPONENT = 1.25
GROWTH = 1.5


def within_constant_verdict(
    sizes_per_point, bounds_per_point, constant=CONSTANT, max_exponent=MAX_EXPONENT
) -> dict:
    """Criterion of the module doc on per-point, per-draw sizes and bounds (>= 3 points)."""
    if len(sizes_per_point) < 3:
        raise ValueError(f"within a constant 'across the sizes' needs >= 3 sizes, got {len(sizes_per_point)}")
    ratios = [float(np.median(s)) / float(np.median(b)) for s, b in zip(sizes_per_point, bounds_per_point)]
    if not all(np.isfinite(ratios)) or min(ratios) <= 0:
        raise ValueError(f"size/bound ratios must be finite and positive, got {ratios}")
    spread = max(ratios) / min(ratios)
    fit = fit_exponent([b for bs in bounds_per_point for b in bs], [s for ss in sizes_per_point for s in ss])
    return {
        "ratios": ratios,
        "spread": spread,
        "exponent": fit["exponent"],
        "exponent_interval95": fit["interval95"],
        "passed": bool(spread <= constant and fit["exponent"] <= max_exponent),
    }


def faster_family(sizes_per_point, bounds_per_point, growth=GROWTH):
    """The control: every draw's size set to size_first * (bound / bound_first)^growth."""
    s0, b0 = float(np.median(sizes_per_point[0])), float(np.median(bounds_per_point[0]))
    return [[s0 * (b / b0) ** growth for b in bs] for bs in bounds_per_point]


def within_constant_outcome(
    fam, p, points, sizes, bounds, source, *, bound_key="bound", before=None, after=None
):
    """The Outcome of an ``atlas.<family>.within_constant`` claim: the control (a family growing like
    bound^GROWTH) when ``p["control"] == "faster_than_bound"``, the verdict, and per-point details
    (``before``/``after``: per-point extra fields placed around size_per_draw, bound and ratio)."""
    from verify.claims import Outcome

    if p.get("control") == "faster_than_bound":
        sizes = faster_family(sizes, bounds)
    v = within_constant_verdict(sizes, bounds, p["constant"], p["max_exponent"])
    n = len(points)
    before, after = before or [{}] * n, after or [{}] * n
    rows = [
        {"sizes": pt["sizes"], **pre, "size_per_draw": s, bound_key: float(np.median(b)), "ratio": r, **post}
        for pt, pre, s, b, r, post in zip(points, before, sizes, bounds, v["ratios"], after)
    ]
    return Outcome(
        predicted={"spread": f"<= {p['constant']}", "exponent": f"<= {p['max_exponent']}"},
        measured={"spread": v["spread"], "exponent": v["exponent"]},
        passed=v["passed"],
        details={
            "family": fam.name,
            "resource": fam.resource,
            "bound": fam.bound,
            "bound_tag": fam.bound_tag,
            "points": rows,
            "source": source,
            "exponent_interval95": v["exponent_interval95"],
        },
    )
