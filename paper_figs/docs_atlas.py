"""The capacity-atlas table of docs/atlas.md, from results/atlas.json, and the table of inconclusive
claims of docs/claims.md; used by
``paper_figs.docs`` (split from it)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the repository root


def _span(v, fmt="{:.3g}") -> str:
    if v is None:
        return "-"
    med, lo, hi = v
    return fmt.format(med) if lo == hi else f"{fmt.format(med)} [{fmt.format(lo)}, {fmt.format(hi)}]"


def atlas_table(path: Path | None = None) -> str:
    """The capacity atlas (docs/atlas.md) as stored by ``python -m verify atlas`` in results/atlas.json:
    per family and size, information bits, smallest storing size (median [min, max] over draws) and
    bits per parameter, with the record each row came from; then the fitted exponents."""
    import json

    path = path or ROOT / "results" / "atlas.json"
    if not path.exists():
        return "No stored atlas: run the main job, then `python -m verify atlas`."
    atlas = json.loads(path.read_text())
    lines = [
        "From the stored records (`python -m verify atlas` prints it, `python -m paper_figs atlas` "
        "draws it); median [min, max] over draws. Not measured here: "
        f"[reference] {atlas['reference']['source']}; [derived] {atlas['information_limit']['source']}.",
        "",
        "| family | scale | sizes | information (bits) | parameters | dimension | bits per parameter | record |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in atlas["rows"]:
        src = r["source"]
        status = "" if src.get("status") == "pass" else f" ({src.get('status')})"
        sizes = ", ".join(f"{k}={v}" for k, v in r["sizes"].items())
        lines.append(
            f"| {r['family']} | {r['scale']} | {sizes} | {_span(r['info_bits'])} | {_span(r['params'])} | "
            f"{_span(r['dim'])} | {_span(r['bits_per_param'])} | `{src['claim']}` seed {src['seed']}{status} |"
        )
    lines += [
        "",
        "| family | scale | exponent of log P against log I | 95% interval | points |",
        "|---|---|---|---|---|",
    ]
    for f in atlas["fits"]:
        lo, hi = f["interval95"]
        built = "" if f["searched"] else " (size as built, not searched)"
        lines.append(
            f"| {f['family']}{built} | {f['scale']} | {f['exponent']:.3f} | [{lo:.3f}, {hi:.3f}] | {f['n_points']} |"
        )
    for area, why in atlas["not_covered"].items():
        lines.append(f"\nNot covered: {area}: {why}")
    conv = sorted({r["family"] for r in atlas["rows"] if "convention" in r.get("bound", "")})
    if conv:
        lines.append(
            f"\n{', '.join(conv)}: information = N log2 N by convention, not a bound (no honest "
            "information bound exists for the auto-associative task; verify/atlas/sources.py)."
        )
    table = [r for r in atlas["rows"] if "table_bits" in r]
    if table:
        rates = "; ".join(
            f"{r['family']} {r['scale']} k={r['sizes']['k']}: {_span(r['bits_per_param_table_max'])}"
            for r in table
        )
        lines.append(
            f"\n{', '.join(sorted({r['family'] for r in table}))}: information = N R^k log2(N + 1 - I_k), "
            "the k-hop lower bound on the subject-embedding bits of a one-pass model with a "
            "fact-independent decoder, summed over subjects (theory.geometric.multihop.khop_table_bits). "
            "It is not the entropy of the fact table, which lies between (R - 1) log2 N! and R log2 N! "
            "bits whatever k (khop_table_entropy); the trained family's decoder is trained, so its bits "
            "per parameter above are not a storage rate. Against R log2 N! the rate is at most: "
            f"{rates}."
        )
    for m in atlas.get("missing", []):
        lines.append(f"\nMissing ({m['scale']}): {m['family']}: {m['why']}")
    return "\n".join(lines)


def undecided_table(path: Path | None = None) -> str:
    """The claims whose stored quick-scale record (results/claims.jsonl, the main job's) is
    inconclusive: what the interval straddles and the budget that would decide it.

    >>> undecided_table(Path("/nonexistent/claims.jsonl"))
    'No stored quick run: run the main job.'
    """
    import json

    path = path or ROOT / "results" / "claims.jsonl"
    if not path.exists():
        return "No stored quick run: run the main job."
    latest: dict = {}
    for line in path.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            if r.get("scale") == "quick":
                latest[r["id"]] = r
    rows = [r for r in latest.values() if r.get("status") == "inconclusive"]
    if not rows:
        return "No stored quick-scale record is inconclusive."
    lines = [
        f"{len(rows)} claims of the stored quick run (seed {rows[0].get('seed')}) cannot be decided at "
        "this budget: their measurement's interval straddles the criterion. They do not fail the run; "
        "the last column says what would decide them.",
        "",
        "| claim | what the interval holds | would decide |",
        "|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: r["id"]):
        text = r.get("inconclusive", "")
        what, _, budget = text.partition("; would decide: ")
        cell = (what or text).replace("|", "\\|").replace("\n", " ")
        lines.append(f"| `{r['id']}` | {cell} | {budget.replace('|', '/') or '-'} |")
    return "\n".join(lines)
