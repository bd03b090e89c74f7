"""The within-constant verdict of the atlas claims, shared by verify.atlas.claims and
verify.atlas.retrieval: its constants and the faster-growing-family rule. Registers no claim."""

from __future__ import annotations

import numpy as np

from verify.atlas.core import fit_exponent
from verify.claims import Control

CONSTANT = 2.0
MAX_EXPONENT = 1.25
GROWTH = 1.5

#: The control of every ``atlas.<family>.within_constant`` claim judged against a bound (the
#: hopfield families, judged against a convention, word theirs differently).
FASTER_THAN_BOUND = Control(
    "faster_than_bound",
    {"control": "faster_than_bound"},
    f"a synthetic family at the same bounds whose size grows like bound^{GROWTH}, faster than the "
    "bound: its exponent is 1.5 > 1.25, so the criterion must fail",
)


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


def not_storing_outcome(family_name: str, rows: list, size_key: str, star_key: str):
    """The failing Outcome of a searched family's within-constant claim when some draw stores at
    no size of its grid (no size, so no point; the criterion fails), else None. ``size_key`` names
    the rows' size ("F", "N"), ``star_key`` their per-draw smallest sizes ("c_star", "d_star")."""
    from verify.claims import Outcome

    missing = [(r[size_key], k) for r in rows for k, c in enumerate(r[star_key]) if c is None]
    if not missing:
        return None
    return Outcome(
        predicted={"every draw stores": True},
        measured={f"draws not storing ({size_key}, k)": missing},
        passed=False,
        details={"family": family_name, "rows": rows},
    )


def smallest_bank_outcome(found: dict, steps: int, criterion: str):
    """Outcome of a chapters smallest-bank search (chapters_bank, chapters_toy): every draw at
    every F stores at some C of its grid."""
    from verify.claims import Outcome

    rows = found["rows"]
    return Outcome(
        predicted={str(r["F"]): f"C* <= {r['chapters_grid'][-1]}" for r in rows},
        measured={str(r["F"]): r["c_star"] for r in rows},
        passed=bool(all(c is not None for r in rows for c in r["c_star"])),
        details={"rows": rows, "info_bits": found["info_bits"], "criterion": criterion, "steps": steps},
    )
