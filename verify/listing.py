"""What ``python -m verify list`` prints: the claims as text, markdown, JSON, and with
``--where`` each claim's code location and the theory bounds it checks.

The location comes from :func:`inspect.getsourcelines` of the claim's check function, so it stays
right wherever the module lives (``verify/fact_mlp/capacity.py`` or ``verify/fact_mlp/capacity.py``).
Figures are drawn by ``paper_figs``, a later stage: the full chain claim -> figure is printed by
``python -m paper_figs where`` (and in docs/README.md), not here, so that ``verify`` never imports
``paper_figs``.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the repository root (the folder above verify/)


@dataclass(frozen=True)
class Location:
    path: str  # relative to the repository root, with forward slashes
    line: int  # 1-based line of the check function's ``def``

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


def location(fn) -> Location:
    """File and line of the ``def`` of ``fn`` (decorators skipped), relative to the repository."""
    fn = inspect.unwrap(fn)
    source_file = inspect.getsourcefile(fn)
    if source_file is None:
        raise ValueError(f"no source file for {fn!r}")
    lines, first = inspect.getsourcelines(fn)
    defs = (i for i, text in enumerate(lines) if text.lstrip().startswith(("def ", "async def ")))
    offset = next(defs, 0)
    path = Path(source_file).resolve()
    try:
        rel = path.relative_to(ROOT).as_posix()
    except ValueError:  # installed elsewhere: print the absolute path
        rel = path.as_posix()
    return Location(rel, first + offset)


def bound_rows(claim) -> list[dict]:
    """The bounds a claim names (``bounds=``), with their labels; an unknown id raises ValueError."""
    from theory.registry import load_all

    bounds = load_all()
    rows = []
    for name in claim.bounds:
        if name not in bounds:
            raise ValueError(
                f"claim {claim.id} names bound {name!r}, which theory does not register; "
                "`python -m theory list` shows the bounds"
            )
        b = bounds[name]
        rows.append({"id": name, "label": b.label, "provenance": b.provenance})
    return rows


def bound_text(row: dict) -> str:
    return row["id"] + (f" ({row['label']})" if row["label"] else "")


def where_rows(claims) -> list[dict]:
    return [
        {"id": c.id, "kind": c.kind, "location": str(location(c.check)), "bounds": bound_rows(c)}
        for c in claims
    ]


def claims_markdown(claims) -> str:
    lines = [
        "| claim | kind | provenance | statement | controls (must fail) | source |",
        "|---|---|---|---|---|---|",
    ]
    for c in claims:
        statement = c.statement_at("quick").replace("|", "\\|")
        if c.templated:
            statement += " *(numbers at quick scale; the full-scale record states its own)*"
        if c.seed_rule:
            statement += f" *Over seeds: {c.seed_rule}.*".replace("|", "\\|")
        controls = ", ".join(f"`{k.name}`" for k in c.controls) or "-"
        lines.append(f"| `{c.id}` | {c.kind} | {c.provenance} | {statement} | {controls} | {c.source} |")
    return "\n".join(lines)


def _stored_resolutions() -> dict:
    """Resolution of each claim from the newest quick record of the committed reference results/
    (the generated docs read these, whatever a user's own runs hold)."""
    from verify.commands import resolution_of
    from verify.results import latest_records, reference_root

    stored = latest_records("quick", [str(reference_root())])
    return {cid: (r.get("status"), resolution_of(None, r)) for cid, r in stored.items()}


def _operating(claim_id: str):
    from verify.oc import summary

    return summary(claim_id)


def claims_json(claims, where: bool = False) -> str:
    rows = []
    resolutions = _stored_resolutions()
    for c in claims:
        row = {
            "id": c.id,
            "source": c.source,
            "provenance": c.provenance,
            "kind": c.kind,
            "statement": c.statement_at("quick"),
            "statement_full": c.statement_at("full"),
            "seed_rule": c.seed_rule,
            "controls": [{"name": k.name, "why": k.why} for k in c.controls],
            "independence": c.independence,
            "quick": c.quick,
            "full": c.full,
            "demonstrates_failure": c.demonstrates_failure,
            "bounds": list(c.bounds),
        }
        status, resolution = resolutions.get(c.id, (None, None))
        row["stored_status"] = status
        row["resolution"] = resolution or resolution_of_missing()
        row["operating"] = _operating(c.id)
        if where:
            row["location"] = str(location(c.check))
            row["bounds"] = bound_rows(c)
        rows.append(row)
    from theory.cli_support import dumps

    return dumps(rows, indent=2)


def resolution_of_missing() -> dict:
    """The resolution of a claim with no stored quick record."""
    from verify.commands import resolution_of

    return resolution_of(None, None)


def claims_text(claims, where: bool = False) -> str:
    out = []
    resolutions = _stored_resolutions()
    for c in claims:
        out.append(f"{c.id}  [{c.kind}, {c.provenance}]  {c.source}\n    {c.statement_at('quick')}")
        status, resolution = resolutions.get(c.id, (None, resolution_of_missing()))
        out.append(
            f"    stored quick verdict: {status or '-'}; resolution: "
            + ("coarse: " if resolution.get("coarse") else "")
            + str(resolution.get("text", ""))[:300]
        )
        op = _operating(c.id)
        if op and op.get("covered"):
            out.append(
                f"    operating: power {op['power']:.2f}, worst alternative {op['worst_alternative']} "
                f"passes {op['worst_pass_rate']:.2f} ({op['reps']} replications; verify oc)"
            )
        if where:
            out.append(f"    at {location(c.check)}")
            out.append("    bounds: " + (", ".join(bound_text(r) for r in bound_rows(c)) or "-"))
        if c.seed_rule:
            out.append(f"    over seeds: {c.seed_rule}")
        for k in c.controls:
            out.append(f"    control {k.name}: {k.why}")
        if c.independence:
            out.append(f"    independence: {c.independence}")
    return "\n".join(out)


def where_text(claims) -> str:
    """One line per claim: id, file:line, bounds (with labels)."""
    rows = where_rows(claims)
    width = max((len(r["id"]) for r in rows), default=10)
    return "\n".join(
        f"{r['id']:<{width}}  {r['location']}  " + (", ".join(bound_text(b) for b in r["bounds"]) or "-")
        for r in rows
    )
