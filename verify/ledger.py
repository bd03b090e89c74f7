"""The ledger of claims that did not reproduce after an honest investigation
(README.md#kinds-of-claim-controls-and-verdicts-over-seeds).

The entries are data: one TOML file per area, ``verify/<area>/ledger.toml``, a ``[[entry]]`` table
each with the fields of :class:`LedgerEntry` (``seed_verdicts`` an inline table whose keys are
the base seeds). They are loaded when this module is imported (:func:`load`); a malformed file
raises a ValueError that names it.

A ledger entry keeps the claim's criterion unchanged. The runner reports such a claim as
"not reproduced" (``passed`` false, field ``ledger`` with the reason); it does not make the
exit status non-zero while it keeps failing, but a ledgered claim that starts passing does
(someone must update this file). Each entry's test asserts the claim still fails as recorded.

An entry with ``flips_with_seed=True`` records a claim whose verdict depends on the base seed (it
passes at some ``--seed`` values and fails at others). A verdict that flips with the seed is not a
pass, so such a claim is reported "not reproduced" at every seed; the seed's own verdict is kept in
the record (field ``seed_verdict``, and ``criterion_verdict``: pass, fail or inconclusive). Its
``seed_verdicts`` map the base seeds it was run at to the criterion's verdict there, at least two
of them different: the entry's expected behaviour is "differs between seeds", which ``verify
stability`` checks (a claim recorded as flipping that now gives one verdict at every seed run, or
another verdict than recorded at a recorded seed, is listed for someone to update this file). A
verdict that flips with the seed never reports "ledger now passes": that status means a refutation
no longer holds.

An entry may name ``known_vacuous`` controls: controls on which the (unchanged) criterion is known
to pass as well, so the criterion does not discriminate against them. Such a claim is not
reproduced twice over; the control keeps running and its rows stay in every record (status
"passes", marked ``known``), and ``verify falsify`` lists it as a known defect of the criterion
instead of a new one. Only a ledgered or an undecided claim can carry such a control
(:func:`known_vacuous` reads either).

An entry may name the claim that restates it (``restated_as``): where our formalisation failed, a
new claim states the corrected law or rule, fixed on pilot seeds the registry never judges, and the
old claim stays as history. It keeps running with its entry, and ``verify stability`` reports its
flips as history, apart from the live claims' (:func:`restated_as`).

An entry applies at the scales it names (``scales``, default both): a claim that fails at full
scale and passes at quick scale has a full-scale entry only, so the quick run still judges it.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

SEED_VERDICTS = ("pass", "fail", "inconclusive")
#: whose statement a ledger entry refutes (docs/ledger.md, "Whose statement fails"): the paper's
#: sentence in a setting it permits, or this project's own formalisation (a law, constant or
#: threshold we derived, or a model other than the one the paper names), setting (sizes or
#: schedules we chose) or resolution (a criterion window finer than the measurement)
CAUSES = ("paper", "formalisation", "setting", "resolution")


@dataclass(frozen=True)
class LedgerEntry:
    claim_id: str
    measured: str  # the numbers measured when it was recorded
    tried: str  # what was tried
    reason: str  # the suspected reason
    flips_with_seed: bool = False  # passes at some base seeds, fails at others (numbers in `measured`)
    scales: tuple[str, ...] = ("quick", "full")  # the scales at which the claim was not reproduced
    known_vacuous: tuple[str, ...] = ()  # controls on which the criterion is known to pass too
    #: base seed -> the criterion's verdict there (flips_with_seed entries: at least two differ)
    seed_verdicts: Mapping[int, str] = field(default_factory=dict)
    #: whose statement the entry refutes, one of CAUSES
    cause: str = ""
    #: the claim that restates this one (its law or rule fixed on pilot seeds the registry never
    #: judges); this claim then stays as history: it still runs and keeps this entry, and
    #: ``verify stability`` lists its seed-to-seed flips apart from the live claims'
    restated_as: str = ""

    def __post_init__(self):
        if self.cause and self.cause not in CAUSES:
            raise ValueError(f"ledger entry {self.claim_id}: cause {self.cause!r} is not one of {CAUSES}")
        if self.seed_verdicts:
            if not self.flips_with_seed:
                raise ValueError(
                    f"ledger entry {self.claim_id}: seed_verdicts belong to a flips_with_seed entry"
                )
            bad = {s: v for s, v in self.seed_verdicts.items() if v not in SEED_VERDICTS}
            if bad or not all(isinstance(s, int) and not isinstance(s, bool) for s in self.seed_verdicts):
                raise ValueError(
                    f"ledger entry {self.claim_id}: seed_verdicts must map int base seeds to one of "
                    f"{SEED_VERDICTS}, got {dict(self.seed_verdicts)}"
                )
            if len(set(self.seed_verdicts.values())) < 2:
                raise ValueError(
                    f"ledger entry {self.claim_id}: flips_with_seed needs two seeds with different "
                    f"verdicts, got {dict(self.seed_verdicts)}"
                )
        if self.restated_as and (self.restated_as == self.claim_id or self.restated_as.count(".") != 2):
            raise ValueError(
                f"ledger entry {self.claim_id}: restated_as {self.restated_as!r} must name another "
                "claim id <area>.<topic>.<property>"
            )
        if not self.scales or set(self.scales) - {"quick", "full"}:
            raise ValueError(
                f"ledger entry {self.claim_id}: scales {self.scales} must be a non-empty "
                "subset of ('quick', 'full')"
            )


LEDGER: dict[str, LedgerEntry] = {}


#: entries by (claim id, scale); LEDGER (by claim id) keeps every claim with an entry at any scale
BY_SCALE: dict[tuple[str, str], LedgerEntry] = {}


def record(entry: LedgerEntry) -> LedgerEntry:
    for scale in entry.scales:
        if (entry.claim_id, scale) in BY_SCALE:
            raise ValueError(f"ledger entry for {entry.claim_id} at {scale} scale recorded twice")
        BY_SCALE[(entry.claim_id, scale)] = entry
    LEDGER.setdefault(entry.claim_id, entry)
    return entry


def restated_as(claim_id: str) -> str:
    """The claim that restates ``claim_id`` (its ledger entry's ``restated_as`` at any scale), or
    "" when the claim is live.

    >>> restated_as("hopfield.capacity.gain")
    'hopfield.capacity.gain_nearest'
    >>> restated_as("hopfield.capacity.gain_nearest")
    ''
    """
    for scale in ("quick", "full"):
        entry = entry_for(claim_id, scale)
        if entry is not None and entry.restated_as:
            return entry.restated_as
    return ""


def entry_for(claim_id: str, scale: str) -> LedgerEntry | None:
    """The ledger entry of a claim at a scale, or None when it is judged normally there."""
    entry = BY_SCALE.get((claim_id, scale))
    if (
        entry is None
        and claim_id in LEDGER
        and (claim_id, "quick") not in BY_SCALE
        and (claim_id, "full") not in BY_SCALE
    ):
        entry = LEDGER[claim_id]  # placed in LEDGER by hand (tests)
    return entry


@dataclass(frozen=True)
class UndecidedEntry:
    """A claim whose verdict over base seeds is pass at some and inconclusive at others, never fail:
    not a refutation, so not in the ledger, but undecided at this budget. The runner reports it
    "inconclusive" at every seed (a pass that depends on the seed is not a pass) with ``reason``
    and ``would_decide`` (the budget that decides it); a fail is still a fail. Stored in
    ``verify/<area>/undecided.toml`` (``[[entry]]`` tables of these fields)."""

    claim_id: str
    measured: str  # the verdicts and numbers over base seeds
    reason: str  # why this budget cannot decide
    would_decide: str  # the budget that decides it (seeds, draws), as verify oc or the record names it
    scales: tuple[str, ...] = ("quick", "full")
    seed_verdicts: Mapping[int, str] = field(default_factory=dict)
    known_vacuous: tuple[str, ...] = ()  # controls on which the criterion is known to pass too

    def __post_init__(self):
        if set(self.seed_verdicts.values()) - {"pass", "inconclusive"}:
            raise ValueError(
                f"undecided entry {self.claim_id}: its seed verdicts are pass or inconclusive, never "
                f"fail (an entry with a fail is a ledger entry), got {dict(self.seed_verdicts)}"
            )
        if not self.scales or set(self.scales) - {"quick", "full"}:
            raise ValueError(f"undecided entry {self.claim_id}: scales {self.scales} must name quick or full")

    def text(self) -> str:
        """The record's ``inconclusive`` text.

        >>> UndecidedEntry("a.b", "m", "straddles 0.9", "about 6 seeds").text()
        'pass at some base seeds, inconclusive at others, never fail: straddles 0.9; would decide: about 6 seeds'
        """
        return (
            f"pass at some base seeds, inconclusive at others, never fail: {self.reason}; "
            f"would decide: {self.would_decide}"
        )


#: undecided entries by (claim id, scale)
UNDECIDED: dict[tuple[str, str], UndecidedEntry] = {}


def undecided_for(claim_id: str, scale: str) -> UndecidedEntry | None:
    """The undecided entry of a claim at a scale (:class:`UndecidedEntry`), or None."""
    return UNDECIDED.get((claim_id, scale))


def known_vacuous(claim_id: str, scale: str) -> set[str]:
    """The controls of ``claim_id`` on which its criterion is known to pass at ``scale``, as its
    ledger or undecided entry names them (empty without an entry).

    >>> known_vacuous("no.such.claim", "quick")
    set()
    """
    entry = entry_for(claim_id, scale) or undecided_for(claim_id, scale)
    return set(entry.known_vacuous) if entry is not None else set()


def _entries(path: Path, cls, required: set[str]) -> list:
    """The ``[[entry]]`` tables of the TOML file ``path`` as ``cls`` objects; a ValueError naming
    the file and the entry for bad TOML, unknown or missing fields, or invalid values."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"ledger file {path}: not valid TOML ({exc})") from exc
    known = {f.name for f in fields(cls)}
    if set(data) - {"entry"}:
        raise ValueError(
            f"ledger file {path}: only [[entry]] tables belong here, got {sorted(set(data) - {'entry'})}"
        )
    entries = []
    for i, raw in enumerate(data.get("entry", [])):
        if set(raw) - known or not required <= set(raw):
            raise ValueError(
                f"ledger file {path}, entry {i}: fields {sorted(raw)}; allowed {sorted(known)}, "
                f"{', '.join(sorted(required))} required"
            )
        kw = dict(raw)
        for name in ("scales", "known_vacuous"):
            if name in kw:
                kw[name] = tuple(kw[name])
        if "seed_verdicts" in kw:
            try:
                kw["seed_verdicts"] = {int(s): v for s, v in kw["seed_verdicts"].items()}
            except ValueError as exc:
                raise ValueError(
                    f"ledger file {path}, entry {i}: seed_verdicts keys must be base seeds"
                ) from exc
        try:
            entries.append(cls(**kw))
        except (TypeError, ValueError) as exc:
            raise ValueError(f"ledger file {path}, entry {i}: {exc}") from exc
    return entries


def load_undecided(path: Path) -> list[UndecidedEntry]:
    """The entries of one ``undecided.toml`` file (:class:`UndecidedEntry`'s fields).

    >>> import tempfile
    >>> lines = ['[[entry]]', 'claim_id = "a.b"', 'measured = "m"', 'reason = "r"', 'would_decide = "6 seeds"',
    ...          'seed_verdicts = { 0 = "pass", 3 = "inconclusive" }']
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = Path(d) / "undecided.toml"
    ...     _ = path.write_text("\\n".join(lines))
    ...     load_undecided(path)[0].would_decide
    '6 seeds'
    """
    return _entries(path, UndecidedEntry, {"claim_id", "measured", "reason", "would_decide"})


def load(path: Path) -> list[LedgerEntry]:
    """The entries of one ledger file (``[[entry]]`` tables with :class:`LedgerEntry`'s fields).

    >>> import tempfile
    >>> lines = ['[[entry]]', 'claim_id = "a.b"', 'measured = "m"', 'tried = "t"', 'reason = "r"',
    ...          'scales = ["full"]', 'flips_with_seed = true', 'seed_verdicts = { 0 = "pass", 3 = "fail" }']
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = Path(d) / "ledger.toml"
    ...     _ = path.write_text("\\n".join(lines))
    ...     entry = load(path)[0]
    >>> entry.scales, entry.seed_verdicts
    (('full',), {0: 'pass', 3: 'fail'})
    """
    return _entries(path, LedgerEntry, {"claim_id", "measured", "tried", "reason"})


def _load_areas() -> None:
    from theory.registry import AREAS

    for area in AREAS:
        path = Path(__file__).with_name(area) / "ledger.toml"
        if path.exists():
            for entry in load(path):
                record(entry)
        path = Path(__file__).with_name(area) / "undecided.toml"
        if path.exists():
            for entry in load_undecided(path):
                for scale in entry.scales:
                    if (entry.claim_id, scale) in UNDECIDED or (entry.claim_id, scale) in BY_SCALE:
                        raise ValueError(f"{path}: {entry.claim_id} at {scale} scale has two entries")
                    UNDECIDED[(entry.claim_id, scale)] = entry


_load_areas()
