"""The affine law of the capacity atlas [derived]: size = overhead + slope x bound, fitted on pilot seeds.

The ``atlas.<family>.within_constant`` claims state that a family's smallest storing size is
proportional to its information bound (P = c I). Six families failed that law with an exponent
below 1 (0.52-0.98; verify/atlas/ledger.toml) and a seventh (geometric_multihop_construction)
excluded 1 at an unused seed, the ratio size / bound falling with the size: what a fixed
overhead does (the chapters layer's attention, the toy's backbone, a code's minimum dimension).
The affine law P = P0 + c I restates it: the size less a fixed overhead P0 is proportional to
the bound. Registers no claim: the ``atlas.<family>.affine_overhead`` claims of the family modules
read the fit stored here and judge it with :func:`verify.atlas.verdict.judge_within_constant`
(parameter ``overhead``).

The fit (:func:`fit_affine`): weighted least squares of the sizes S on the bounds b with relative
residuals, minimising sum ((S - P0 - c b) / S)^2 over every (point, draw) of the pilot records
(every draw's error counts in proportion, as the log-log fit of the proportional law counts it).
It is made once, on pilot seeds (100 and up) the registry never judges, at quick scale, and
stored in ``verify/atlas/affine_fit.toml`` with the seeds, the revision and the pilot points
(:func:`fit_text`, :func:`fit_families`); the claims read it (:func:`load_fit`) and never refit.
The overhead is the family's, not the grid's: the full-scale claim reads the same fit.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import tomllib

from verify.atlas.sources import Family, family, family_points

FIT_FILE = Path(__file__).with_name("affine_fit.toml")

#: the families whose proportional law failed or excluded 1 (module doc), in the fit file's order
AFFINE_FAMILIES = (
    "chapters_bank",
    "chapters_toy",
    "icrecall_linear_memory",
    "hopfield_gated",
    "hopfield_trained",
    "geometric_multihop_gd",
    "geometric_multihop_construction",
)


def fit_affine(sizes_per_point, bounds_per_point) -> dict:
    """The affine law's ``overhead`` P0 and ``slope`` c fitted to per-point, per-draw sizes and
    bounds (module doc), with the largest relative residual of the fit (``max_rel_residual``).

    >>> fit = fit_affine([[110.0, 110.0], [200.0], [1100.0]], [[1.0, 1.0], [10.0], [100.0]])
    >>> round(fit["overhead"], 6), round(fit["slope"], 6), fit["max_rel_residual"] < 1e-9
    (100.0, 10.0, True)
    """
    s = np.array([v for vs in sizes_per_point for v in vs], float)
    b = np.array([v for bs, vs in zip(bounds_per_point, sizes_per_point) for v in bs], float)
    if s.size != b.size or s.size < 3:
        raise ValueError(
            f"an affine fit needs >= 3 (size, bound) pairs of equal count, got {s.size}, {b.size}"
        )
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(b)) and np.all(s > 0) and np.all(b > 0)):
        raise ValueError("an affine fit needs finite positive sizes and bounds (NaN is an error)")
    if np.ptp(b) == 0:
        raise ValueError("an affine fit needs at least two distinct bounds")
    design = np.stack([1.0 / s, b / s], axis=1)
    (p0, c), *_ = np.linalg.lstsq(design, np.ones_like(s), rcond=None)
    rel = (s - p0 - c * b) / s
    return {"overhead": float(p0), "slope": float(c), "max_rel_residual": float(np.abs(rel).max())}


def resource_of(fam: Family, pt: dict) -> tuple[list[float], list[float]]:
    """(sizes, bounds) of one family point in the family's resource: parameters against I/32, or
    dimension against the family's bound in dimension (as the within_constant claims read them)."""
    if fam.resource == "parameters":
        return list(pt["params"]), [b / 32.0 for b in pt["info_bits"]]
    if fam.dim_bound is None:
        raise ValueError(f"atlas family {fam.name} is measured in dimension but names no dim_bound")
    return list(pt["dims"]), [fam.dim_bound(pt["sizes"])] * len(pt["dims"])


def fit_families(records_by_seed: dict[int, dict], names=AFFINE_FAMILIES) -> dict[str, dict]:
    """The affine fit of each family in ``names`` from pilot records ``{seed: {claim id: record}}``
    (every seed must be a pilot seed, >= 100): the family's points of every seed pooled."""
    if any(int(s) < 100 for s in records_by_seed):
        raise ValueError(
            f"the affine law is fitted on pilot seeds >= 100 only, got {sorted(records_by_seed)}"
        )
    out = {}
    for name in names:
        fam = family(name)
        sizes, bounds, points = [], [], []
        for seed, records in sorted(records_by_seed.items()):
            if fam.claim_id not in records:
                raise ValueError(f"no pilot record of {fam.claim_id} at seed {seed} (family {name})")
            for pt in family_points(fam, records[fam.claim_id]):
                s, b = resource_of(fam, pt)
                sizes.append(s)
                bounds.append(b)
                points.append({"seed": int(seed), "sizes": pt["sizes"], "size_per_draw": s, "bound": b[0]})
        fit = fit_affine(sizes, bounds)
        out[name] = {
            **fit,
            "resource": fam.resource,
            "source_claim": fam.claim_id,
            "pilot_seeds": sorted(int(s) for s in records_by_seed),
            "pilot_points": points,
        }
    return out


def fit_text(fits: dict[str, dict], revision: str, header: str) -> str:
    """The TOML text of the fit file: ``header`` (comment lines) and one table per family."""

    def val(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(float(v)) if isinstance(v, float) else str(v)
        if isinstance(v, str):
            return '"' + v.replace('"', "'") + '"'
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {val(x)}" for k, x in v.items()) + " }"
        return "[" + ", ".join(val(x) for x in v) + "]"

    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    for name, fit in fits.items():
        lines += ["", f"[{name}]", f'revision = "{revision}"']
        for key in ("overhead", "slope", "max_rel_residual", "resource", "source_claim", "pilot_seeds"):
            lines.append(f"{key} = {val(fit[key])}")
        lines.append("pilot_points = [")
        lines += [f"    {val(pt)}," for pt in fit["pilot_points"]]
        lines.append("]")
    return "\n".join(lines) + "\n"


def load_fit(name: str, path: Path = FIT_FILE) -> dict:
    """The stored affine fit of family ``name`` (a ValueError naming the file when it lacks one).

    >>> load_fit("chapters_bank")["pilot_seeds"][0] >= 100
    True
    """
    with open(path, "rb") as fh:
        table = tomllib.load(fh)
    if name not in table:
        raise ValueError(f"{path} holds no affine fit of family {name!r} (families: {sorted(table)})")
    fit = table[name]
    if not math.isfinite(fit.get("overhead", math.nan)) or not math.isfinite(fit.get("slope", math.nan)):
        raise ValueError(f"{path}: the affine fit of {name!r} needs a finite overhead and slope")
    return fit
