"""The check to run before committing a new claim (docs/contributing.md, "10. Check it before
committing"): in a few minutes, what the structural tests and the claim's own tests say of it.

    python tools/check_claim.py ID [ID ...] [--keep] [--verbose]

Four steps, each printed as one line when it ends:

1. ``run``: ``python -m verify run ID... --out SCRATCH --jobs 1 --fresh`` at quick scale, into a
   temporary folder (never ``runs/`` or ``results/``); the line gives each claim's status.
2. ``falsify``: ``python -m verify falsify ID...``: every control must fail the claim's criterion
   (the resolution is read from the scratch records).
3. ``oc``: ``python -m verify oc ID... --results SCRATCH --reps 200``: the operating
   characteristic of the scratch record (power and worst alternative, or why it is not covered).
4. ``tests``: pytest (``-p no:xdist -q``) on the structural tests a new claim must pass, restricted
   to the claim's own parametrised nodes where a test runs every claim (:func:`pytest_command`).

Every step runs, whatever the one before gave. The exit status is 0 when every step passed, 1 when
one failed (its output's last lines are printed under its line), 2 for an id that is not registered
(refused before anything runs; ``python -m verify list`` shows the ids).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent

#: structural test files run whole: each takes a few seconds and runs no claim
WHOLE_FILES = (
    "tests/test_registry_ids.py",
    "tests/test_claim_modules.py",
    "tests/test_scorecards.py",
    "tests/test_seeding.py",
    "tests/test_ledger_data.py",
)
#: tests run for each checked claim: they run the claim's quick record (with its controls)
QUICK_NODE = "tests/test_claims_quick.py::test_claim_quick[{id}]"
CONTROLS_NODE = "tests/test_controls_differ.py::test_no_control_reads_the_claims_own_arm_twice[{id}]"
MUST_FAIL_NODES = (
    "tests/test_must_fail_brackets.py::test_a_convention_claim_cites_no_bound[{id}]",
    "tests/test_must_fail_brackets.py::test_must_fail_brackets_its_bound_within_two_or_tests_a_convention[{id}]",
)
#: the tests of those files that run no claim, run once whatever the claims
CONTROLS_STATIC = "tests/test_controls_differ.py::test_every_control_changes_the_claims_parameters"
MUST_FAIL_STATIC = "tests/test_must_fail_brackets.py::test_known_violations_are_must_fail_claims"
#: lines of a failed step's output printed under its summary line
TAIL_LINES = 40


class Shape(NamedTuple):
    """What decides which tests apply to a claim: its kind and whether it has controls."""

    kind: str
    has_controls: bool


@dataclass(frozen=True)
class Step:
    """One step's result: its name, whether it passed, its one-line summary, its wall time and
    the command's output (stdout and stderr)."""

    name: str
    ok: bool
    summary: str
    seconds: float
    output: str = ""

    def line(self) -> str:
        """The step's summary line.

        >>> Step("oc", True, "a.b.c: not covered", 2.04).line()
        'oc       ok        2.0 s  a.b.c: not covered'
        """
        return f"{self.name:<8} {'ok' if self.ok else 'FAILED':<7} {self.seconds:5.1f} s  {self.summary}"


def refusal(ids: Sequence[str], registered: Collection[str]) -> str | None:
    """Why ``ids`` cannot be checked (an id that is not registered; globs are not ids), or None.

    >>> refusal(["a.b.c"], {"a.b.c"}) is None
    True
    >>> print(refusal(["a.b.x", "a.*"], {"a.b.c"}))
    not registered: a.b.x, a.* (give exact claim ids; `python -m verify list [PATTERN]` lists them)
    """
    unknown = [i for i in ids if i not in registered]
    if not unknown:
        return None
    return (
        f"not registered: {', '.join(unknown)} "
        "(give exact claim ids; `python -m verify list [PATTERN]` lists them)"
    )


def run_command(ids: Sequence[str], scratch: str | os.PathLike) -> list[str]:
    """The quick run of ``ids`` into ``scratch`` (one process, no reused records).

    >>> run_command(["a.b.c"], "/tmp/x")[1:]
    ['-m', 'verify', 'run', 'a.b.c', '--out', '/tmp/x', '--jobs', '1', '--fresh']
    """
    return [sys.executable, "-m", "verify", "run", *ids, "--out", str(scratch), "--jobs", "1", "--fresh"]


def falsify_command(ids: Sequence[str]) -> list[str]:
    """Every control of ``ids`` run against its claim's criterion (one JSON document).

    >>> falsify_command(["a.b.c"])[1:]
    ['-m', 'verify', 'falsify', 'a.b.c', '--json']
    """
    return [sys.executable, "-m", "verify", "falsify", *ids, "--json"]


def oc_command(ids: Sequence[str], scratch: str | os.PathLike, reps: int = 200) -> list[str]:
    """The operating characteristic of ``ids`` from the records in ``scratch`` (one JSON document).

    >>> oc_command(["a.b.c"], "/tmp/x")[1:]
    ['-m', 'verify', 'oc', 'a.b.c', '--results', '/tmp/x', '--reps', '200', '--json']
    """
    return [
        sys.executable,
        "-m",
        "verify",
        "oc",
        *ids,
        "--results",
        str(scratch),
        "--reps",
        str(reps),
        "--json",
    ]


def pytest_command(claims: Mapping[str, Shape]) -> list[str]:
    """The structural tests for ``claims`` (id -> :class:`Shape`): the whole files that run no
    claim, and the claims' own nodes of the tests that run every claim (a control test only for a
    claim with controls, the bracket tests only for a must_fail claim).

    >>> cmd = pytest_command({"a.b.c": Shape("identity", False)})
    >>> cmd[1:5]
    ['-m', 'pytest', '-p', 'no:xdist']
    >>> [a for a in cmd if "[" in a]
    ['tests/test_claims_quick.py::test_claim_quick[a.b.c]']
    >>> cmd = pytest_command({"a.b.d": Shape("must_fail", True)})
    >>> [a.split("::")[1] for a in cmd if "[" in a]  # doctest: +NORMALIZE_WHITESPACE
    ['test_claim_quick[a.b.d]', 'test_no_control_reads_the_claims_own_arm_twice[a.b.d]',
     'test_a_convention_claim_cites_no_bound[a.b.d]',
     'test_must_fail_brackets_its_bound_within_two_or_tests_a_convention[a.b.d]']
    """
    nodes = [*WHOLE_FILES, CONTROLS_STATIC, MUST_FAIL_STATIC]
    for cid, shape in claims.items():
        nodes.append(QUICK_NODE.format(id=cid))
        if shape.has_controls:
            nodes.append(CONTROLS_NODE.format(id=cid))
        if shape.kind == "must_fail":
            nodes += [node.format(id=cid) for node in MUST_FAIL_NODES]
    return [sys.executable, "-m", "pytest", "-p", "no:xdist", "-q", *nodes]


def shapes(ids: Sequence[str]) -> dict[str, Shape]:
    """The :class:`Shape` of each registered claim of ``ids`` (imports every claim module).

    >>> shapes(["chapters.router.zloss_zero_logits"])
    {'chapters.router.zloss_zero_logits': Shape(kind='identity', has_controls=False)}
    """
    from verify.claims import load_all

    claims = load_all()
    return {cid: Shape(claims[cid].kind, bool(claims[cid].controls)) for cid in ids if cid in claims}


def _call(cmd: Sequence[str], env: Mapping[str, str] | None = None) -> tuple[int, str, str, float]:
    """(exit status, stdout, stderr, seconds) of ``cmd`` run from the checkout's root."""
    start = time.perf_counter()
    done = subprocess.run(
        list(cmd), cwd=ROOT, capture_output=True, text=True, env=None if env is None else dict(env)
    )
    return done.returncode, done.stdout, done.stderr, time.perf_counter() - start


def _json(text: str) -> dict:
    """The JSON document a command printed on stdout ({} when there is none)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return {}


def run_step(ids: Sequence[str], scratch: str | os.PathLike) -> Step:
    """Run ``ids`` at quick scale into ``scratch``; each claim's status from its record."""
    rc, out, err, seconds = _call(run_command(ids, scratch))
    latest: dict[str, dict] = {}
    path = Path(scratch) / "claims.jsonl"
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                latest[record["id"]] = record
    parts = []
    for cid in ids:
        record = latest.get(cid)
        if record is None:
            parts.append(f"{cid}: no record")
            continue
        why = str(record.get("inconclusive") or record.get("error") or record.get("skipped") or "")
        why = why if len(why) <= 120 else why[:117].rstrip(" ,;") + "..."
        parts.append(f"{cid}: {record['status']}" + (f" ({why})" if why else ""))
    ok = rc == 0 and all(cid in latest for cid in ids)
    return Step("run", ok, "; ".join(parts), seconds, out + err)


def falsify_step(ids: Sequence[str], scratch: str | os.PathLike) -> Step:
    """Run every control of ``ids``; each must fail its claim's criterion. The resolution is read
    from the records in ``scratch`` (``RECALL_RESULTS``)."""
    env = {**os.environ, "RECALL_RESULTS": str(scratch)}
    rc, out, err, seconds = _call(falsify_command(ids), env)
    rows = {row["id"]: row for row in _json(out).get("claims", [])}
    parts = []
    for cid in ids:
        row = rows.get(cid)
        if row is None:
            parts.append(f"{cid}: not reported")
        elif not row["controls"] and row["ok"]:
            parts.append(f"{cid}: no controls ({row['kind']})")
        else:
            controls = ", ".join(f"{c['name']} {c['status']}" for c in row["controls"])
            parts.append(f"{cid}: {controls or '; '.join(row['problems'])}")
    ok = rc == 0 and all(cid in rows and rows[cid]["ok"] for cid in ids)
    return Step("falsify", ok, "; ".join(parts), seconds, out + err)


def oc_step(ids: Sequence[str], scratch: str | os.PathLike, reps: int = 200) -> Step:
    """The operating characteristic of the scratch records of ``ids``. A claim it cannot simulate
    is not a failure of the step (docs/contributing.md says what to do); the reason is shown."""
    rc, out, err, seconds = _call(oc_command(ids, scratch, reps))
    got = _json(out).get("claims", {})
    parts = []
    for cid in ids:
        c = got.get(cid)
        if c is None:
            parts.append(f"{cid}: not reported")
        elif not c["covered"]:
            parts.append(f"{cid}: not covered ({c['reason']})")
        else:
            note = "" if c["admissible"] else ", above 0.05: a pass would mean nothing"
            budget = c.get("budget_for_power") or {}
            if budget.get("reached"):
                note += f"; power 0.8 at {budget['seeds']} seeds"
            parts.append(
                f"{cid}: power {c['power']:.2f}, worst alternative {c['worst_alternative']} "
                f"passes {c['worst_pass_rate']:.2f}{note}"
            )
    return Step("oc", rc == 0 and all(cid in got for cid in ids), "; ".join(parts), seconds, out + err)


def tests_step(claims: Mapping[str, Shape]) -> Step:
    """pytest on the structural tests of ``claims`` (:func:`pytest_command`); pytest's last line."""
    rc, out, err, seconds = _call(pytest_command(claims))
    lines = [line for line in out.splitlines() if line.strip()]
    return Step("tests", rc == 0, lines[-1] if lines else f"pytest exit status {rc}", seconds, out + err)


def _report(step: Step, verbose: bool) -> None:
    print(step.line(), flush=True)
    if verbose or not step.ok:
        lines = step.output.rstrip().splitlines()
        shown = lines if verbose else lines[-TAIL_LINES:]
        for line in shown:
            print(f"    {line}")


def main(argv: Sequence[str] | None = None) -> int:
    """Check the claims named in ``argv``; the exit status (0 all steps passed, 1 one failed,
    2 an id that is not registered).

    >>> main(["no.such.claim"])
    check_claim: not registered: no.such.claim (give exact claim ids; `python -m verify list [PATTERN]` lists them)
    2
    """
    ap = argparse.ArgumentParser(
        prog="python tools/check_claim.py", description=__doc__.split("\n\n")[0].replace("\n", " ")
    )
    ap.add_argument("ids", nargs="+", metavar="ID", help="registered claim ids (no globs)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder and print its path")
    ap.add_argument("--verbose", action="store_true", help="print every step's whole output")
    ap.add_argument("--reps", type=int, default=200, help="replications per law for verify oc (default 200)")
    args = ap.parse_args(argv)
    ids = list(dict.fromkeys(args.ids))
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    claims = shapes(ids)
    why = refusal(ids, claims)
    if why is not None:
        print(f"check_claim: {why}")
        return 2
    scratch = tempfile.mkdtemp(prefix="check_claim_")
    start, steps = time.perf_counter(), []
    try:
        for step in (
            lambda: run_step(ids, scratch),
            lambda: falsify_step(ids, scratch),
            lambda: oc_step(ids, scratch, args.reps),
            lambda: tests_step(claims),
        ):
            steps.append(step())
            _report(steps[-1], args.verbose)
    finally:
        if args.keep:
            print(f"check_claim: scratch records kept in {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    failed = [s.name for s in steps if not s.ok]
    total = time.perf_counter() - start
    if failed:
        print(
            f"check_claim: {len(failed)} of {len(steps)} steps failed ({', '.join(failed)}) in {total:.0f} s"
        )
        return 1
    print(f"check_claim: all {len(steps)} steps passed in {total:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
