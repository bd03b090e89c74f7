"""Stored records judged by today's criteria: ``python -m verify rejudge [--scale quick|full]
[--results DIR] [--write]`` (README.md#kinds-of-claim-controls-and-verdicts-over-seeds).

A record's status is the one its claim's criterion gave when it ran. Criteria are replaced since
(a rule over seeds for a point rule, an interval for a sign), and the ledger gains entries, so a
stored "pass" may have been judged by a rule that no longer stands. This command re-derives each
stored record's status without running anything:

* **rejudged**: the claim exposes a judge hook (``claim.judge`` or ``claim.check.judge``, a
  callable ``(params, record) -> Outcome | Judgement`` that reads the measurement stored in the
  record): the current criterion's verdict and resolution on the stored measurement;
* **current criterion**: the record was made under the claim's current criterion (the same
  statement, kind and rule over seeds; a criterion object's resolution; not older than a criterion
  replacement stored in verify/previous_criteria.json): its stored verdict, with the ledger as it
  stands now (a claim ledgered since is "not reproduced");
* **judged by a replaced criterion**: neither: the record's measurement cannot be re-judged here
  and its verdict came from a criterion since replaced. Its status is "judged by a replaced
  criterion", never pass, until the claim is re-run;
* **claim removed**: the record's claim is no longer registered.

``--write`` replaces the generated section of DIR/README.md (between ``<!-- rejudge:begin -->`` and
``<!-- rejudge:end -->``); the records themselves are never rewritten.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path

from verify.previous import replaced_rules

REPLACED = "judged by a replaced criterion"
BASES = ("rejudged", "current criterion", REPLACED, "claim removed")
BEGIN, END = "<!-- rejudge:begin -->", "<!-- rejudge:end -->"
#: where a results folder's README had its hand-written status table before the first --write
_OLD_START = "A record's status is the one computed when it ran."


@lru_cache(maxsize=None)
def is_ancestor(older: str, newer: str) -> bool | None:
    """Whether git revision ``older`` is ``newer`` or one of its ancestors (a "+dirty-..." suffix is
    ignored); None when git cannot tell (an unknown revision, no checkout).

    >>> is_ancestor("not-a-revision", "HEAD") is None
    True
    """
    from verify.results import REPO

    a, b = older.split("+", 1)[0], newer.split("+", 1)[0]
    try:
        done = subprocess.run(
            ["git", "merge-base", "--is-ancestor", a, b], cwd=REPO, capture_output=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return {0: True, 1: False}.get(done.returncode)


@lru_cache(maxsize=1)
def _replacements() -> dict[str, list[str]]:
    """Claim id -> revisions at which a replaced criterion was last measured (previous_criteria.json)."""
    from verify.previous import STORE

    table = json.loads(Path(STORE).read_text())
    return {cid: sorted({run["revision"] for run in entry["runs"]}) for cid, entry in table.items()}


def replaced_because(claim, record: Mapping, scale: str) -> list[str]:
    """Why ``record`` was not judged by ``claim``'s current criterion (empty when it was): a
    different statement, kind or rule over seeds, no criterion object's resolution, or a revision
    older than a criterion replacement stored in verify/previous_criteria.json (the revision at
    which a replaced criterion was last measured, or the one that replaced a rule:
    :func:`verify.previous.replaced_rules`).

    >>> from verify.claims import load_all
    >>> c = load_all()["hopfield.capacity.gain"]
    >>> replaced_because(c, {"statement": "old text", "kind": c.kind, "seed_rule": c.seed_rule}, "full")[:2]
    ['its statement differs from the current one', 'it carries no resolution (its rule was not a criterion object)']
    """
    reasons = []
    if record.get("statement") != claim.statement_at(scale):
        reasons.append("its statement differs from the current one")
    if not record.get("resolution"):
        reasons.append("it carries no resolution (its rule was not a criterion object)")
    if record.get("kind", claim.kind) != claim.kind:
        reasons.append(f"its kind {record.get('kind')} is now {claim.kind}")
    if record.get("seed_rule", claim.seed_rule) != claim.seed_rule:
        reasons.append("its rule over seeds differs from the current one")
    revision = str(record.get("code") or record.get("git") or "")
    for old in _replacements().get(claim.id, []):
        if revision and is_ancestor(revision, old):
            reasons.append(f"it ran at or before {old[:10]}, after which the criterion was replaced")
            break
    for rule in replaced_rules(claim.id):
        since = str(rule.get("revision") or "")
        if revision and since and is_ancestor(since, revision) is False:
            reasons.append(
                f"it ran before {since[:10]}, which replaced the rule {str(rule.get('rule'))[:60]!r}"
            )
            break
    return reasons


def _verdict_of(result) -> tuple[str, Mapping | None]:
    """(verdict, resolution) of a judge hook's Outcome or Judgement."""
    from verify.claims import Outcome

    if isinstance(result, Outcome):
        verdict = "inconclusive" if result.inconclusive is not None else ("pass" if result.passed else "fail")
        return verdict, result.resolution
    verdict = getattr(result, "verdict", None)
    if verdict not in ("pass", "fail", "inconclusive"):
        raise TypeError(f"a judge hook returned {type(result).__name__}, not an Outcome or Judgement")
    return verdict, getattr(result, "resolution", None)


def status_now(claim_id: str, verdict: str, scale: str) -> str:
    """The status a criterion verdict gets under the ledger as it stands now (the runner's rule).

    >>> status_now("no.such.claim", "pass", "full")
    'pass'
    """
    return _judged_now(claim_id, verdict, scale)[0]


def _judged_now(claim_id: str, verdict: str, scale: str) -> tuple[str, str | None]:
    """(status now, the operating gate's reason where it turns a criterion pass inconclusive)."""
    from verify.ledger import entry_for, undecided_for

    if verdict not in ("pass", "fail", "inconclusive"):
        return verdict, None  # error, skipped, vacuous: kept as stored
    from verify.runner import operating_gate

    entry = entry_for(claim_id, scale)
    undecided = undecided_for(claim_id, scale)
    if entry is None and undecided is not None and verdict in ("pass", "inconclusive"):
        return "inconclusive", undecided.text()  # pass at some base seeds, inconclusive at others
    if entry is None:  # a pass its operating characteristic does not allow is inconclusive
        gate = operating_gate(claim_id, scale) if verdict == "pass" else None
        return ("inconclusive", gate) if gate else (verdict, None)
    if entry.flips_with_seed:
        return "not reproduced", None
    return ("ledger now passes" if verdict == "pass" else "not reproduced"), None


def rejudge_record(record: Mapping, claims: Mapping, scale: str) -> dict:
    """One record judged by today's criteria: its stored and current status and the basis
    (one of BASES), with the reasons when its criterion was replaced.

    >>> rejudge_record({"id": "gone.a.b", "status": "pass", "seconds": 1.0}, {}, "full")["status"]
    'claim removed'
    """
    from verify.stability import criterion_verdict

    cid = record["id"]
    row = {
        "id": cid,
        "area": cid.split(".", 1)[0],
        "provenance": record.get("provenance"),
        "stored_status": record["status"],
        "seconds": float(record.get("seconds") or 0.0),
        "revision": str(record.get("code") or record.get("git") or "")[:10],
        "reasons": [],
    }
    claim = claims.get(cid)
    if claim is None:
        return {**row, "basis": "claim removed", "status": "claim removed"}
    hook = getattr(claim, "judge", None) or getattr(claim.check, "judge", None)
    if hook is not None and record["status"] not in ("error", "skipped"):
        verdict, resolution = _verdict_of(hook(record.get("params", {}), record))
        row = {**row, "basis": "rejudged", "resolution": dict(resolution) if resolution else None}
    else:
        reasons = replaced_because(claim, record, scale)
        if reasons:
            return {**row, "basis": REPLACED, "status": REPLACED, "reasons": reasons}
        verdict = criterion_verdict(record)
        row = {**row, "basis": "current criterion"}
    status, gate = _judged_now(cid, verdict, scale)
    return {**row, "verdict": verdict, "status": status, **({"gate": gate} if gate else {})}


def rejudge(records: Sequence[Mapping], scale: str) -> list[dict]:
    """Every claim's newest record at ``scale`` judged by today's criteria (:func:`rejudge_record`)."""
    from verify.claims import load_all

    claims = load_all()
    latest: dict[str, Mapping] = {}
    for r in records:
        if r.get("scale") == scale:
            latest[r["id"]] = r
    return [rejudge_record(r, claims, scale) for r in latest.values()]


def _counts(rows, key) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in rows:
        out[r[key]] = out.get(r[key], 0) + 1
    return dict(sorted(out.items()))


def summary_markdown(rows: Sequence[Mapping], scale: str, source: str) -> str:
    """The generated README section: counts before and after, per area, and the records judged by a
    replaced criterion with their seconds (the paper statements' first).

    >>> rows = [{"id": "a.b.c", "area": "a", "provenance": "paper", "stored_status": "pass",
    ...          "status": REPLACED, "basis": REPLACED, "seconds": 2.0, "revision": "abc",
    ...          "reasons": ["x"]}]
    >>> "| a | 1 | 0 | 0 | 0 | 0 | 0 | 1 | 0 | 2 |" in summary_markdown(rows, "full", "claims.jsonl")
    True
    """
    statuses = ("pass", "inconclusive", "not reproduced", "ledger now passes", "fail", REPLACED)
    before, after = _counts(rows, "stored_status"), _counts(rows, "status")
    replaced = [r for r in rows if r["basis"] == REPLACED]
    paper = [r for r in replaced if r.get("provenance") in ("abstract", "paper")]
    lines = [
        BEGIN,
        f"Generated by `python -m verify rejudge --scale {scale} --write` from `{source}` ({len(rows)} "
        "records, the newest per claim; nothing re-run). A record's stored status is the one its "
        "criterion gave when it ran; below, each is judged by today's registry: a record made under its "
        "claim's current criterion keeps its verdict, with the ledger as it stands now; a record whose "
        f'criterion was replaced since, and whose measurement cannot be re-judged here, is "{REPLACED}" '
        "(never a pass) until its claim is re-run.",
        "",
        "Stored statuses: " + ", ".join(f"{k} {v}" for k, v in before.items()) + ".",
        "Today: " + ", ".join(f"{k} {v}" for k, v in after.items()) + ".",
        "",
        "| area | records | " + " | ".join(statuses) + " | other | claim-seconds |",
        "|---|---|" + "---|" * len(statuses) + "---|---|",
    ]
    for area in dict.fromkeys(r["area"] for r in rows):
        mine = [r for r in rows if r["area"] == area]
        cells = [sum(r["status"] == s for r in mine) for s in statuses]
        other = len(mine) - sum(cells)
        seconds = sum(r["seconds"] for r in mine)
        lines.append(
            f"| {area} | {len(mine)} | " + " | ".join(map(str, cells)) + f" | {other} | {seconds:,.0f} |"
        )
    cost = sum(r["seconds"] for r in replaced)
    gated = [r for r in rows if r.get("gate")]
    if gated:
        lines += [
            "",
            f"{len(gated)} records pass their criterion but are inconclusive today: the stored "
            "operating characteristic of the criterion at this scale (`python -m verify oc ID --scale "
            f"{scale}`) lets a named alternative pass more than 5% of the time, so a pass cannot tell "
            "the claim from it (the paper statements' first):",
            "",
        ]
        for r in sorted(gated, key=lambda r: (r.get("provenance") not in ("abstract", "paper"), r["id"])):
            lines.append(f"- `{r['id']}` ({r.get('provenance')}): {r['gate']}")
    if not replaced:
        lines += ["", "No record is judged by a replaced criterion."]
        lines.append(END)
        return "\n".join(_wrap(line) for line in lines)
    lines += [
        "",
        f"{len(replaced)} records were judged by a replaced criterion; their runs took {cost:,.0f} "
        "claim-seconds (the records' wall seconds, on the machines and under the load they ran with), "
        "about what re-running them costs. "
        f"{len(paper)} of them check a statement of a paper (provenance abstract or paper; "
        f"{sum(r['seconds'] for r in paper):,.0f} claim-seconds):",
        "",
    ]
    for r in sorted(replaced, key=lambda r: (r.get("provenance") not in ("abstract", "paper"), r["id"])):
        lines.append(
            f"- `{r['id']}` ({r.get('provenance')}; stored {r['stored_status']}; {r['seconds']:,.0f} s at "
            f"{r['revision']}): {'; '.join(r['reasons'])}"
        )
    lines.append(END)
    return "\n".join(_wrap(line) for line in lines)


def _wrap(line: str, width: int = 100) -> str:
    """A prose or list line of the section wrapped at ``width`` (table rows and markers as they are)."""
    import textwrap

    if line.startswith(("|", "<!--")) or len(line) <= width:
        return line
    indent = "  " if line.startswith("- ") else ""
    return textwrap.fill(
        line, width, subsequent_indent=indent, break_on_hyphens=False, break_long_words=False
    )


def write_section(readme: Path, section: str) -> None:
    """Replace the generated section of ``readme`` (or, the first time, its hand-written status
    paragraph and table, else append it)."""
    text = readme.read_text()
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + section + rest.split(END, 1)[1]
    elif _OLD_START in text:
        head, rest = text.split(_OLD_START, 1)
        blocks = rest.split("\n\n")
        # the status paragraph, then the table: drop both, keep what follows
        i = next((k for k, b in enumerate(blocks) if b.lstrip().startswith("| area |")), 0)
        text = head + section + "\n\n" + "\n\n".join(blocks[i + 1 :])
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    readme.write_text(text)


def cmd_rejudge(args) -> int:
    """``python -m verify rejudge``: print the re-judged records (or --json) and, with --write,
    update DIR/README.md. Exit 0."""
    from theory.cli_support import dumps
    from verify.results import RESULTS_FILE, ResultStore, missing_results, reading_root, results_root

    sub = "full/" if args.results is None and args.scale == "full" else ""
    # a write goes to the named folder or runs/, never to the committed reference unless named
    root = results_root(args.results) if args.write else reading_root(args.results, sub + RESULTS_FILE)
    root = root / sub if sub else root
    path = root / RESULTS_FILE
    if not path.exists():
        raise ValueError(missing_results(path))
    rows = rejudge(ResultStore(root, create=False).records(), args.scale)
    if not rows:
        raise ValueError(f"{path} holds no record at {args.scale} scale")
    if args.json:
        print(dumps({"scale": args.scale, "results": str(path), "records": rows}))
    else:
        for r in sorted(rows, key=lambda r: (r["basis"], r["id"])):
            why = f"  ({'; '.join(r['reasons'])})" if r["reasons"] else ""
            print(f"{r['id']:<58} {r['stored_status']:<17} -> {r['status']:<30} [{r['basis']}]{why}")
        before, after = _counts(rows, "stored_status"), _counts(rows, "status")
        print(f"\n{len(rows)} records ({path}): stored {before}; today {after}", file=sys.stdout)
    if args.write:
        readme = root / "README.md"
        if not readme.exists():
            raise ValueError(f"--write updates {readme}, which does not exist")
        write_section(readme, summary_markdown(rows, args.scale, f"{path.parent.name}/{RESULTS_FILE}"))
        print(f"updated {readme}", file=sys.stderr)
    return 0
