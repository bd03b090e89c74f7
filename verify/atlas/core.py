"""Capacity atlas (docs/atlas.md): bits stored per parameter of every construction and trained model.

The table is assembled from STORED claim records (``results/claims.jsonl``, and
``results/full/claims.jsonl`` when present); nothing is re-measured. Each row: family, size
parameters, information bits (from ``theory``, with its tag), the smallest storing size per draw
(parameters total and unique, dimension), bits per parameter, and the record it came from
(claim id, seed, git revision). Per family: the exponent of log parameters against log
information bits, with a 95% t-interval of the least-squares slope over the points (every draw a
point). Beside them, two lines that are NOT measured here: the information limit at 32 bits per
parameter ([derived], P = I/32) and about 2 bits per parameter measured for trained language
models by Allen-Zhu and Li (arXiv 2404.05405, "Physics of Language Models 3.3") [reference].

``python -m verify atlas [--json]`` prints the table; with ``--write`` it stores it in ``results/atlas.json``.
The claims ``atlas.<family>.within_constant`` live in :mod:`verify.atlas.claims`.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from verify.atlas.sources import FAMILIES, NOT_COVERED, Family, family_points

REPO = Path(__file__).resolve().parent.parent.parent
ATLAS_FILE = "atlas.json"

REFERENCE = {
    "bits_per_param": 2.0,
    "tag": "reference",
    "source": "Allen-Zhu and Li, Physics of Language Models 3.3 (arXiv 2404.05405): about 2 "
    "bits of knowledge per parameter for trained language models",
    "note": "a reference line, not measured here",
}
INFO_LIMIT = {
    "bits_per_param": 32.0,
    "tag": "derived",
    "source": "pigeonhole: P parameters of p = 32 bits take at most 2^(32 P) states, so P >= I/32 "
    "(theory.fact_mlp.bounds.min_params, theory.geometric.single_hop.param_lower_bound)",
}


def _resolve(folder) -> Path:
    """``folder`` as a path: None is the folder commands read (:func:`verify.results.reading_root`:
    RECALL_RESULTS, else runs/ when it holds records, else the committed results/); a relative path
    is relative to the repository (the atlas claims' parameter ``results``)."""
    if folder is None:
        from verify.results import reading_root

        return reading_root()
    path = Path(folder)
    return path if path.is_absolute() else REPO / path


def load_records(folder=None, scale: str = "quick") -> dict[str, dict]:
    """Newest non-error record of every claim at ``scale`` in ``folder``/claims.jsonl (empty if
    none); a skipped or malformed line is reported as :class:`verify.results.ResultStore` does."""
    from verify.results import ResultStore

    out: dict[str, dict] = {}
    for row in ResultStore(_resolve(folder), create=False).records():
        if row.get("scale", "quick") == scale and row.get("status") != "error":
            out[row["id"]] = row
    return out


def record_of(records: dict, fam: Family) -> dict:
    rec = records.get(fam.claim_id)
    if rec is None:
        raise ValueError(
            f"atlas family {fam.name}: no stored record of claim {fam.claim_id}; run "
            f"`python -m verify run {fam.claim_id}` first"
        )
    return rec


def fit_exponent(info_bits, params, level: float = 0.95) -> dict:
    """Least-squares slope of log P on log I with its t-interval (n - 2 degrees of freedom).

    Equal sizes (every P the same) fit exactly: slope 0, a zero-width interval, never NaN.

    >>> fit_exponent([10.0, 100.0, 1000.0], [64.0, 64.0, 64.0])["interval95"]
    [0.0, 0.0]
    """
    from scipy import stats

    x, y = np.log(np.asarray(info_bits, float)), np.log(np.asarray(params, float))
    if x.size != y.size or x.size < 3:
        raise ValueError(f"an exponent fit needs >= 3 points, got {x.size}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("an exponent fit needs finite positive bits and parameters (NaN is an error)")
    if np.ptp(x) == 0:
        raise ValueError("an exponent fit needs at least two distinct information contents")
    if np.ptp(y) == 0:  # linregress gives stderr NaN (r = 0/0); the exact fit's error is 0
        return {
            "exponent": 0.0,
            "interval95": [0.0, 0.0],
            "intercept": float(y[0]),
            "n_points": int(x.size),
            "dof": int(x.size - 2),
        }
    fit = stats.linregress(x, y)
    half = stats.t.ppf((1 + level) / 2, x.size - 2) * fit.stderr if x.size > 2 else math.inf
    return {
        "exponent": float(fit.slope),
        "interval95": [float(fit.slope - half), float(fit.slope + half)],
        "intercept": float(fit.intercept),
        "n_points": int(x.size),
        "dof": int(x.size - 2),
    }


def _spread(values):
    return [float(np.median(values)), float(np.min(values)), float(np.max(values))]


def family_rows(fam: Family, rec: dict, scale: str) -> list[dict]:
    rows = []
    source = {
        "claim": fam.claim_id,
        "seed": rec.get("seed"),
        "git": rec.get("git"),
        "status": rec.get("status"),
        "scale": scale,
    }
    for pt in family_points(fam, rec):
        bpp = [b / p for b, p in zip(pt["info_bits"], pt["params"])]
        row = {
            "family": fam.name,
            "area": fam.area,
            "kind": fam.kind,
            "scale": scale,
            "sizes": pt["sizes"],
            "draws": len(pt["params"]),
            "info_bits": _spread(pt["info_bits"]),
            "bound": fam.bound,
            "bound_tag": fam.bound_tag,
            "params": _spread(pt["params"]),
            "params_per_draw": pt["params"],
            "params_unique": None if pt["params_unique"] is None else _spread(pt["params_unique"]),
            "dim": None if pt["dims"] is None else _spread(pt["dims"]),
            "dims_per_draw": pt["dims"],
            "info_bits_per_draw": pt["info_bits"],
            "bits_per_param": _spread(bpp),
            "searched": fam.searched,
            "source": source,
        }
        if "table_bits" in pt:  # a family whose information column is not the table's entropy
            row["table_bits"] = [float(b) for b in pt["table_bits"]]
            row["bits_per_param_table_max"] = _spread([pt["table_bits"][1] / p for p in pt["params"]])
        if pt["params_unique"] is not None:
            row["bits_per_unique_param"] = _spread(
                [b / p for b, p in zip(pt["info_bits"], pt["params_unique"])]
            )
        rows.append(row)
    return rows


def build_atlas(records_by_scale: dict[str, dict]) -> dict:
    """The atlas from ``{scale: {claim id: record}}``; a family whose record is missing at the
    quick scale raises ValueError naming the claim, unless the family is optional: it is then
    listed under "missing" with its claim (never invented). The full scale is used only where present; an
    optional family whose full-scale record cannot be read (a draw that stores nowhere) is listed
    under "missing" with the reason."""
    rows, fits, missing = [], [], []
    for scale, records in records_by_scale.items():
        for fam in FAMILIES:
            if scale != "quick" and fam.claim_id not in records:
                continue
            if fam.optional and fam.claim_id not in records:
                missing.append(
                    {
                        "family": fam.name,
                        "scale": scale,
                        "claim": fam.claim_id,
                        "why": f"no stored record of {fam.claim_id}; run `python -m verify run "
                        f"{fam.claim_id}` to add the family",
                    }
                )
                continue
            try:
                fam_rows = family_rows(fam, record_of(records, fam), scale)
            except ValueError as err:
                if not fam.optional or scale == "quick":
                    raise
                # a full-scale record the family cannot be read from (e.g. a draw that stores at
                # no grid size): the family is left out at that scale and listed under "missing"
                # with the reason, never drawn from its storing draws only
                missing.append({"family": fam.name, "scale": scale, "claim": fam.claim_id, "why": str(err)})
                continue
            rows += fam_rows
            bits = [b for r in fam_rows for b in r["info_bits_per_draw"]]
            params = [p for r in fam_rows for p in r["params_per_draw"]]
            fits.append(
                {
                    "family": fam.name,
                    "scale": scale,
                    "kind": fam.kind,
                    "area": fam.area,
                    "searched": fam.searched,
                    "note": fam.note,
                    **fit_exponent(bits, params),
                    "bits_per_param_range": [
                        min(b / p for b, p in zip(bits, params)),
                        max(b / p for b, p in zip(bits, params)),
                    ],
                }
            )
    return {
        "rows": rows,
        "fits": fits,
        "reference": REFERENCE,
        "information_limit": INFO_LIMIT,
        "not_covered": NOT_COVERED,
        "missing": missing,
        "ranges": "[median, min, max] over the draws stored in each record",
    }


def atlas_from_results(folder=None) -> dict:
    """The atlas from the records stored in ``folder`` (and ``folder``/full); None: the folder
    commands read (:func:`verify.results.reading_root`)."""
    folder = _resolve(folder)
    by_scale = {"quick": load_records(folder, "quick")}
    full = load_records(folder / "full", "full")
    if full:
        by_scale["full"] = full
    return build_atlas(by_scale)


def _fmt(v) -> str:
    if v is None:
        return "-"
    med, lo, hi = v

    def f(x):
        return f"{x:.3g}"

    return f(med) if lo == hi else f"{f(med)} [{f(lo)}, {f(hi)}]"


def table_text(atlas: dict) -> str:
    lines = [
        f"{'family':<24} {'scale':<5} {'sizes':<30} {'bits':>18} {'params':>24} {'unique':>22} "
        f"{'dim':>14} {'bits/param':>24}  source"
    ]
    for r in atlas["rows"]:
        sizes = ", ".join(f"{k}={v}" for k, v in r["sizes"].items())
        src = r["source"]
        lines.append(
            f"{r['family']:<24} {r['scale']:<5} {sizes:<30} {_fmt(r['info_bits']):>18} "
            f"{_fmt(r['params']):>24} {_fmt(r['params_unique']):>22} {_fmt(r['dim']):>14} "
            f"{_fmt(r['bits_per_param']):>24}  {src['claim']}@seed{src['seed']}/{str(src['git'])[:8]}"
            + ("" if src.get("status") == "pass" else f" ({src.get('status')})")
        )
    lines.append("")
    lines.append("exponent of log P against log I (95% t-interval over the points):")
    for f in atlas["fits"]:
        lo, hi = f["interval95"]
        lines.append(
            f"  {f['family']:<24} {f['scale']:<5} {f['exponent']:.3f} [{lo:.3f}, {hi:.3f}] "
            f"(n={f['n_points']}){'' if f['searched'] else '  size as built, not searched'}"
        )
    lines.append(
        f"[reference] {atlas['reference']['bits_per_param']} bits/param: "
        f"{atlas['reference']['source']} ({atlas['reference']['note']})"
    )
    lines.append(
        f"[derived] information limit {atlas['information_limit']['bits_per_param']:.0f} bits/param: "
        f"{atlas['information_limit']['source']}"
    )
    for area, why in atlas["not_covered"].items():
        lines.append(f"not covered: {area}: {why}")
    for m in atlas.get("missing", []):
        lines.append(f"missing ({m['scale']}): {m['family']}: {m['why']}")
    lines.append("ranges: " + atlas["ranges"])
    return "\n".join(lines)


def main(args) -> int:
    """``python -m verify atlas [--json] [--write] [--results DIR]``: print the table (with
    ``--write``, also store it in DIR/atlas.json; without it nothing is written).

    DIR defaults to RECALL_RESULTS, else the user's runs/ when it holds records, else the committed
    reference results/ (:func:`verify.results.reading_root`); with ``--write`` it defaults to
    RECALL_RESULTS, else runs/ (:func:`verify.results.results_root`), so the committed atlas is
    rewritten only when named (``--results results``). A missing results file is a ValueError
    naming the path and the command that writes it. Both the printed and the stored JSON are
    strict (no NaN or Infinity).
    """
    from theory.cli_support import dumps
    from verify.results import RESULTS_FILE, missing_results, reading_root, results_root

    given = getattr(args, "results", None)
    folder = results_root(given) if getattr(args, "write", False) else reading_root(given)
    path = folder / RESULTS_FILE
    if not path.is_file():
        needed = [f.claim_id for f in FAMILIES if not f.optional]
        raise ValueError(
            missing_results(path, needed, f"`python -m paper_figs atlas --recompute --results {folder}`")
        )
    try:
        atlas = atlas_from_results(folder)
    except ValueError as exc:
        raise ValueError(f"{exc} (records read from {path}; write there with --out {folder})") from None
    out = folder / ATLAS_FILE
    if getattr(args, "write", False):
        from verify.inputs import writable_folder

        writable_folder(folder, "--results")
        out.write_text(dumps(atlas, indent=1) + "\n")
    if getattr(args, "json", False):
        print(dumps(atlas))
    else:
        print(table_text(atlas))
        print(
            f"\nstored in {out}"
            if getattr(args, "write", False)
            else f"\nread from {path}; not stored (`--write --results {folder}` stores it in {out})"
        )
    return 0
