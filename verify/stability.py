"""Verdicts across base seeds: ``python -m verify stability GLOB --seeds 0,1,2,3,4``
(README.md#kinds-of-claim-controls-and-verdicts-over-seeds).

A verdict belongs to the claim, not to the seed it ran at. This command runs the selected claims
at several base seeds through the ordinary runner (records go to a results folder, by default a
scratch folder outside the checkout, never the committed ``results/`` unless ``--out`` names it)
and lists every claim whose criterion gives different verdicts at different seeds, with its
numbers at each seed.

A claim is in order when its verdict is the same at every seed run, or when it flips and the
ledger holds a ``flips_with_seed`` entry for it (:mod:`verify.ledger`): such a claim is "not
reproduced" at every seed, never "ledger now passes"; or when it is pass at some seeds and
inconclusive at others and ``verify/<area>/undecided.toml`` holds an entry for it
(:class:`verify.ledger.UndecidedEntry`): such a claim is "inconclusive" at every seed, its seed's
own verdict in the record's ``criterion_verdict``. A *problem* (exit status 1) is a claim that
flips without such an entry, one that fails, errors, is vacuous or is "ledger now passes" at some
seed (an undecided claim that fails at a seed is one: its entry says never fail), a
``flips_with_seed`` entry whose recorded verdict at a seed differs from this run's, and a
``flips_with_seed`` or undecided entry whose claim gives one verdict at every seed run while its
recorded seeds are among them (the entry then no longer describes the claim).

A claim whose ledger entry names the claim that restates it (``restated_as``) is history: it keeps
running with its entry, and the summary lists its flips apart (``history_flipping``) from the live
claims' (``flipping``). ``pass_and_fail`` names the live claims whose verdicts mix pass and fail
between seeds, the claims a decided registry has none of.
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

#: the statuses that are problems when they occur at any seed (a ledgered failure is not one)
BAD_STATUSES = ("fail", "error", "vacuous", "ledger now passes")


def default_out() -> Path:
    """The scratch results folder of ``verify stability`` when no ``--out`` is given (in the
    system's temporary folder, so a second run resumes what the first finished).

    >>> default_out().name
    'recall-bounds-stability'
    """
    return Path(tempfile.gettempdir()) / "recall-bounds-stability"


def parse_seeds(text: str) -> list[int]:
    """The base seeds of ``--seeds``: comma-separated non-negative integers, each once.

    >>> parse_seeds("0,1,2,13")
    [0, 1, 2, 13]
    >>> parse_seeds("0,0")
    Traceback (most recent call last):
    ...
    ValueError: --seeds '0,0' repeats a seed
    """
    try:
        seeds = [int(part) for part in str(text).split(",") if part.strip()]
    except ValueError:
        raise ValueError(f"--seeds {text!r} must be comma-separated integers") from None
    if len(seeds) < 2:
        raise ValueError(f"--seeds {text!r}: a comparison across seeds needs at least two seeds")
    if any(s < 0 for s in seeds):
        raise ValueError(f"--seeds {text!r}: base seeds must be non-negative")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"--seeds {text!r} repeats a seed")
    return seeds


def criterion_verdict(record: Mapping) -> str:
    """The verdict the claim's criterion gave in one record, whatever the ledger made of it:
    "pass", "fail", "inconclusive", or the run's own status where no criterion verdict exists
    ("error", "skipped", "vacuous").

    >>> criterion_verdict({"status": "ledger now passes"})
    'pass'
    >>> criterion_verdict({"status": "not reproduced", "seed_verdict": True})
    'pass'
    >>> criterion_verdict({"status": "not reproduced", "criterion_verdict": "inconclusive"})
    'inconclusive'
    >>> criterion_verdict({"status": "not reproduced"})
    'fail'
    >>> criterion_verdict({"status": "inconclusive", "criterion_verdict": "pass"})  # an undecided entry's
    'pass'
    >>> criterion_verdict({"status": "inconclusive", "criterion_verdict": "pass",
    ...                    "controls": [{"name": "c", "status": "inconclusive"}]})
    'inconclusive'
    """
    status = record["status"]
    if status == "inconclusive" and record.get("criterion_verdict") in ("pass", "inconclusive"):
        if any(c.get("status") == "inconclusive" for c in record.get("controls") or []):
            return "inconclusive"  # as the status: a control not told apart is not ruled out
        return str(record["criterion_verdict"])  # undecided at this budget: the seed's own verdict
    if status in ("pass", "fail", "inconclusive", "error", "skipped", "vacuous"):
        return status
    if status == "ledger now passes":
        return "pass"
    if status != "not reproduced":
        raise ValueError(f"record of {record.get('id')!r} has an unknown status {status!r}")
    if record.get("criterion_verdict"):
        return str(record["criterion_verdict"])
    if record.get("seed_verdict") is True:
        return "pass"
    return "inconclusive" if record.get("inconclusive") else "fail"


def numbers(record: Mapping, limit: int = 160) -> str:
    """A record's measurement in one short line (strict JSON, cut at ``limit`` characters).

    >>> numbers({"measured": {"gap": 0.0576}})
    '{"gap": 0.0576}'
    """
    from theory.cli_support import dumps

    value = record.get("measured")
    text = value if isinstance(value, str) else dumps(value)
    if record.get("error"):
        text = f"error: {record['error']}"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def assess(claim_id: str, per_seed: Mapping[int, Mapping], scale: str = "quick") -> dict:
    """One row of the stability table: the claim's status and criterion verdict at each seed,
    whether the verdict flips, its ledger entry's kind at ``scale`` ("none", "refutation",
    "flips_with_seed", or "undecided" for an entry of ``undecided.toml``) and the problems (empty
    when the claim is in order; see the module docstring).

    >>> rows = {0: {"status": "pass", "measured": 1}, 3: {"status": "fail", "measured": 0}}
    >>> row = assess("a.b.c", rows)
    >>> row["flips"], row["pass_and_fail"], row["restated_as"], row["problems"]
    (True, True, '', ['the verdict differs between seeds (pass at 0; fail at 3) and the ledger has no flips_with_seed entry', 'fail at seed 3'])
    """
    from verify.ledger import entry_for, restated_as, undecided_for

    entry = entry_for(claim_id, scale)
    undecided = undecided_for(claim_id, scale) if entry is None else None
    seeds = sorted(per_seed)
    verdicts = {s: criterion_verdict(per_seed[s]) for s in seeds}
    statuses = {s: per_seed[s]["status"] for s in seeds}
    judged = {s: v for s, v in verdicts.items() if v in ("pass", "fail", "inconclusive")}
    flips = len(set(judged.values())) > 1
    ledger = "none" if entry is None else ("flips_with_seed" if entry.flips_with_seed else "refutation")
    if undecided is not None:
        ledger = "undecided"
    problems: list[str] = []
    expected = ledger == "flips_with_seed" or (
        ledger == "undecided" and set(judged.values()) <= {"pass", "inconclusive"}
    )  # an undecided claim differs between pass and inconclusive; a fail is a problem of its own
    if flips and not expected:
        by_verdict: dict[str, list[int]] = {}
        for s, v in judged.items():
            by_verdict.setdefault(v, []).append(s)
        text = "; ".join(f"{v} at {', '.join(map(str, ss))}" for v, ss in by_verdict.items())
        problems.append(
            f"the verdict differs between seeds ({text}) and "
            + (
                "its undecided entry says never fail"
                if ledger == "undecided"
                else "the ledger has no flips_with_seed entry"
            )
        )
    for s in seeds:
        if statuses[s] in BAD_STATUSES:
            problems.append(f"{statuses[s]} at seed {s}")
        if per_seed[s].get("ledger_differs"):
            problems.append(f"seed {s}: {per_seed[s]['ledger_differs']}")
    if entry is not None and entry.flips_with_seed and not flips and len(judged) > 1:
        recorded = {s: v for s, v in entry.seed_verdicts.items() if s in judged}
        if len(set(recorded.values())) > 1:
            problems.append(
                "ledgered as flipping with the seed but gives one verdict at every seed run "
                f"({next(iter(set(judged.values())))}), recorded {dict(sorted(recorded.items()))}"
            )
    if undecided is not None and not flips and len(judged) > 1:
        recorded = {s: v for s, v in undecided.seed_verdicts.items() if s in judged}
        if len(set(recorded.values())) > 1:
            problems.append(
                "recorded as undecided (pass at some seeds, inconclusive at others) but gives one "
                f"verdict at every seed run ({next(iter(set(judged.values())))}), recorded "
                f"{dict(sorted(recorded.items()))}"
            )
    return {
        "id": claim_id,
        "seeds": seeds,
        "status": {str(s): statuses[s] for s in seeds},
        "verdict": {str(s): verdicts[s] for s in seeds},
        "numbers": {str(s): numbers(per_seed[s]) for s in seeds},
        "seconds": {str(s): per_seed[s].get("seconds") for s in seeds},
        "flips": flips,
        "pass_and_fail": {"pass", "fail"} <= set(judged.values()),
        "ledger": ledger,
        "restated_as": restated_as(claim_id),
        "problems": problems,
    }


def _stored(store, claim, ctx) -> dict | None:
    """The newest non-error record of ``claim`` in ``store`` at ctx's scale, seed, device and dtype
    and the claim's current parameters, made at any revision (``--any-revision``)."""
    from verify.results import jsonable, params_key

    key = params_key(jsonable(claim.params(ctx.scale)))
    for row in reversed(store.records()):
        if (
            row.get("id") == claim.id
            and row.get("scale") == ctx.scale
            and row.get("seed") == ctx.seed
            and row.get("device") == ctx.device
            and row.get("dtype") == ctx.dtype
            and row.get("status") != "error"
            and params_key(row.get("params", {})) == key
        ):
            return dict(row, resumed=True)
    return None


def run_seeds(
    claims: Sequence,
    seeds: Iterable[int],
    out: str | Path,
    scale: str = "quick",
    device: str = "cpu",
    dtype: str = "float64",
    any_revision: bool = False,
    progress: bool = False,
) -> dict[str, dict[int, dict]]:
    """Run ``claims`` at each base seed (the runner, records appended to ``out``/claims.jsonl and
    resumed from it) and return their records by claim id and seed. ``any_revision``: reuse a stored
    record made at another revision (same claim, parameters, seed, device and dtype).

    >>> import tempfile
    >>> from verify.claims import Claim, Outcome
    >>> toy = Claim("toy.seed.parity", "doc", "derived", "seed is even", {}, {},
    ...             lambda p, ctx: Outcome(0, ctx.seed % 2, ctx.seed % 2 == 0), kind="identity", independence="toy")
    >>> got = run_seeds([toy], [0, 1], tempfile.mkdtemp())
    >>> [got["toy.seed.parity"][s]["status"] for s in (0, 1)]
    ['pass', 'fail']
    """
    from tqdm import tqdm

    from verify.claims import Context
    from verify.progress import bar_shape
    from verify.results import ResultStore
    from verify.runner import run_claims

    seeds = list(seeds)
    store = ResultStore(out)
    found: dict[str, dict[int, dict]] = {c.id: {} for c in claims}
    with tqdm(
        total=len(claims) * len(seeds), desc="stability", unit="run", disable=not progress, **bar_shape()
    ) as bar:
        for seed in seeds:
            ctx = Context(seed=int(seed), device=device, dtype=dtype, scale=scale, progress=False)
            todo = []
            for c in claims:
                row = _stored(store, c, ctx) if any_revision else None
                if row is None:
                    todo.append(c)
                else:
                    found[c.id][int(seed)] = row
                    bar.update()

            def seen(record, seed=int(seed)):
                found[record["id"]][seed] = record
                bar.set_postfix_str(f"seed {seed} {record['id']}")
                bar.update()

            run_claims(todo, ctx, store=store, resume=True, on_record=seen)
    return found


def table_text(rows: Sequence[Mapping]) -> str:
    """The stability table as text: one line per claim and seed, flipping claims first.

    >>> row = {"id": "a.b.c", "seeds": [0], "status": {"0": "pass"}, "verdict": {"0": "pass"},
    ...        "numbers": {"0": "1"}, "flips": False, "ledger": "none", "problems": []}
    >>> print(table_text([row]))
    a.b.c: stable (ledger: none)
        seed 0: pass (criterion pass)  1
    >>> print(table_text([{**row, "flips": True, "restated_as": "a.b.d"}]).splitlines()[0])
    a.b.c: FLIPS (ledger: none; history, restated as a.b.d)
    """
    lines = []
    for row in sorted(rows, key=lambda r: (not r["flips"], not r["problems"], r["id"])):
        state = "FLIPS" if row["flips"] else "stable"
        history = f"; history, restated as {row['restated_as']}" if row.get("restated_as") else ""
        lines.append(f"{row['id']}: {state} (ledger: {row['ledger']}{history})")
        for s in row["seeds"]:
            k = str(s)
            lines.append(
                f"    seed {s}: {row['status'][k]} (criterion {row['verdict'][k]})  {row['numbers'][k]}"
            )
        lines += [f"    problem: {p}" for p in row["problems"]]
    return "\n".join(lines)


def cmd_stability(args) -> int:
    """``python -m verify stability GLOB ... --seeds S,S,... [--json] [--out DIR]``: exit 1 when a
    claim has a problem (module docstring), else 0."""
    from constructions.device import default_dtype, resolve_device
    from theory.cli_support import dumps
    from verify.claims import select

    seeds = parse_seeds(args.seeds)
    claims = select(args.ids)
    out = Path(args.out) if args.out else default_out()
    device = resolve_device(args.device)
    dtype = args.dtype or default_dtype(device)
    found = run_seeds(
        claims,
        seeds,
        out,
        scale=args.scale,
        device=device,
        dtype=dtype,
        any_revision=args.any_revision,
        progress=sys.stderr.isatty(),
    )
    rows = [assess(c.id, found[c.id], args.scale) for c in claims]
    flipping = [r["id"] for r in rows if r["flips"] and not r["restated_as"]]
    history = [r["id"] for r in rows if r["flips"] and r["restated_as"]]
    pass_and_fail = [r["id"] for r in rows if r["pass_and_fail"] and not r["restated_as"]]
    problems = [r["id"] for r in rows if r["problems"]]
    summary = {
        "claims": len(rows),
        "seeds": seeds,
        "scale": args.scale,
        "device": device,
        "dtype": dtype,
        "results": str(out / "claims.jsonl"),
        "flipping": flipping,
        "pass_and_fail": pass_and_fail,
        "history_flipping": history,
        "with_problems": problems,
    }
    if args.json:
        print(dumps({"summary": summary, "claims": rows}))
    else:
        print(table_text(rows))
        print(
            f"\n{len(rows)} claims at seeds {', '.join(map(str, seeds))} ({args.scale} scale): "
            f"{len(flipping)} live claims flip with the seed ({len(pass_and_fail)} between pass and "
            f"fail), {len(history)} restated claims kept as history flip, {len(problems)} with a "
            "problem "
            f"(records in {summary['results']})"
        )
    return 1 if problems else 0
