"""Results as JSON lines, appended one claim at a time, and the Markdown report.

Each record holds: id, scale, params, predicted, measured, passed, status, provenance,
seed, device, dtype, versions, git revision, code key, seconds, details. A re-run with the
same claim, parameters, seed, device, dtype and code key resumes: finished records are reused.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np

try:
    import fcntl
except ImportError:  # not POSIX: appends are whole lines, but unlocked
    fcntl = None

from theory.cli_support import dumps

RESULTS_FILE = "claims.jsonl"
REPORT_FILE = "report.md"
#: environment variable naming the results folder when no ``--results``/``--out`` is given
RESULTS_ENV = "RECALL_RESULTS"
REPO = Path(__file__).resolve().parent.parent  # the repository root when run from a checkout


RUNS_DIR = "runs"  #: the git-ignored folder of a user's own runs, beside the reference
REFERENCE_DIR = "results"  #: the committed reference results of the checkout


def _in_checkout() -> bool:
    return (REPO / "pyproject.toml").is_file() and (REPO / "verify").is_dir()


def default_results_root() -> Path:
    """The folder a command WRITES to when neither ``--results``/``--out`` nor RECALL_RESULTS says
    otherwise: the checkout's git-ignored ``runs/`` (found from this package's location, whatever
    the working directory), or ``./runs`` for an installed copy that has no checkout around it.
    A run never writes the committed reference (:func:`reference_root`) unless it is named.

    >>> default_results_root().name
    'runs'
    """
    return (REPO if _in_checkout() else Path.cwd()) / RUNS_DIR


def reference_root() -> Path:
    """The committed reference results of the checkout, ``results/`` (the records the generated
    docs, the atlas and the operating characteristics are computed from). Only an explicit
    ``python -m verify run ... --reference`` (or ``--out`` naming it) writes there; an installed
    copy without a checkout has none and gets ``./results``.

    >>> reference_root().name
    'results'
    """
    return (REPO if _in_checkout() else Path.cwd()) / REFERENCE_DIR


def results_root(folder: str | os.PathLike | None = None) -> Path:
    """The one results folder a command WRITES to, as an absolute path: ``folder`` when given
    (relative to the working directory), else the environment variable RECALL_RESULTS, else
    :func:`default_results_root` (``runs/``). The README's "Command line" section describes it.

    >>> results_root("/tmp/res") == Path("/tmp/res")
    True
    """
    if folder is None or str(folder) == "":
        env = os.environ.get(RESULTS_ENV, "")
        if not env:
            return default_results_root()
        folder = env
    return Path(os.path.abspath(os.path.expanduser(str(folder))))


def reading_root(folder: str | os.PathLike | None = None, name: str = RESULTS_FILE) -> Path:
    """The results folder a command READS ``name`` from: ``folder`` or RECALL_RESULTS when given
    (exactly as :func:`results_root`), else the user's ``runs/`` when it holds ``name``, else the
    committed reference :func:`reference_root`. So figures and the atlas show the user's own
    records once there are some, and the reference on a fresh clone.

    >>> reading_root("/tmp/res") == Path("/tmp/res")
    True
    """
    if (folder is not None and str(folder) != "") or os.environ.get(RESULTS_ENV, ""):
        return results_root(folder)
    own = default_results_root()
    return own if (own / name).is_file() else reference_root()


def missing_results(path: str | os.PathLike, claim_ids=(), recompute: str | None = None) -> str:
    """The message for a results file that is not there: the path looked for and the command that
    writes it (``python -m verify run ... --out DIR``; ``recompute`` names another command).

    >>> print(missing_results("/x/claims.jsonl", ["a.b.c"]))
    no stored results: /x/claims.jsonl does not exist; `python -m verify run a.b.c --out /x` writes it
    """
    path = Path(path)
    ids = " ".join(dict.fromkeys(claim_ids)) or "'*'"
    text = f"no stored results: {path} does not exist; `python -m verify run {ids} --out {path.parent}` writes it"
    return text + (f" (or {recompute})" if recompute else "")


@lru_cache(maxsize=None)
def git_revision() -> str:
    """HEAD's hash, with "+dirty-<hash of the diff>" when the tree has uncommitted changes."""
    root = Path(__file__).resolve().parent.parent
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        diff = subprocess.run(
            ["git", "diff", "HEAD", "--", "theory", "constructions", "verify"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if diff:
        rev += "+dirty-" + hashlib.sha1(diff.encode()).hexdigest()[:10]
    return rev


#: what :func:`source_digest` reads: the packages whose code makes a record, with the data files
#: beside it (criteria thresholds, ledgers, stored operating characteristics, pilot fits)
SOURCE_PACKAGES = ("theory", "constructions", "verify")
SOURCE_SUFFIXES = (".py", ".toml", ".json", ".txt")


@lru_cache(maxsize=1)
def source_digest() -> str:
    """A digest of everything a record is made from, by content: every code and data file of
    :data:`SOURCE_PACKAGES` (committed or not) and the reference records the runner reads (the
    replaced rules' verdicts, :mod:`verify.previous`). Two records with the same digest, seed,
    scale, device, dtype and versions were made by the same code from the same inputs; the test
    suite reuses the main job's records only then (docs/testing.md). Computed once per process;
    "unknown" outside a checkout.

    >>> len(source_digest()) in (16, len("unknown"))
    True
    """
    if not _in_checkout():
        return "unknown"
    h = hashlib.blake2b(digest_size=8)
    files = sorted(
        p
        for pkg in SOURCE_PACKAGES
        for p in (REPO / pkg).rglob("*")
        if p.suffix in SOURCE_SUFFIXES and p.is_file() and "__pycache__" not in p.parts
    )
    files += [REPO / REFERENCE_DIR / RESULTS_FILE, REPO / REFERENCE_DIR / "full" / RESULTS_FILE]
    for path in files:
        h.update(str(path.relative_to(REPO)).encode() + b"\0")
        h.update(path.read_bytes() if path.is_file() else b"(absent)")
        h.update(b"\0")
    return h.hexdigest()


def cpu_model() -> str:
    """The processor's model name (Linux /proc/cpuinfo, else platform.processor()): float32 GEMM
    sums, and so float32 training, can differ in their last bits between processors."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def versions() -> dict:
    import numpy
    import scipy
    import sympy

    out = {
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "sympy": sympy.__version__,
        "platform": platform.platform(),
        "cpu": cpu_model(),
    }
    try:
        import torch

        out["torch"] = torch.__version__
    except ImportError:  # theory-only installs
        out["torch"] = None
    try:
        from importlib.metadata import version

        out["recall-bounds"] = version("recall-bounds")
    except Exception:  # noqa: BLE001 - not installed as a distribution
        out["recall-bounds"] = None
    return out


def params_key(params: dict) -> str:
    return json.dumps(params, sort_keys=True, default=str)


class ResultsFileError(ValueError):
    """A results file that cannot be read as records; the message names the file and the line.

    >>> issubclass(ResultsFileError, ValueError)
    True
    """


_WARNED: set[tuple[str, int, int]] = set()  # (file, line, length): each skipped line reported once


def _lock(fh, exclusive: bool) -> None:
    """Hold an advisory lock on the open file ``fh`` until it is closed (POSIX ``flock``: shared for
    readers, exclusive for writers; nothing where the standard library has no ``fcntl``)."""
    if fcntl is not None:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)


def _skip(path: Path, number: int, raw: bytes, why: str) -> None:
    """Report on stderr, once per process, a line of ``path`` that is skipped and why."""
    key = (str(path), number, len(raw))
    if key not in _WARNED:
        _WARNED.add(key)
        print(f"warning: {path}:{number}: line skipped: {why}", file=sys.stderr)


def parse_records(path: str | os.PathLike, data: bytes, first: int = 1) -> list[dict]:
    """The records of the results file ``path`` whose bytes are ``data``, one JSON object per line
    (``first``: the number of the first line of ``data`` in the file, for the messages).

    A line that is not JSON (a line cut by an interrupted write, or garbage) is skipped and
    reported on stderr with the file and the line number; a line that is JSON but not an object,
    a record without a string ``id``, or bytes that are not UTF-8 are a :class:`ResultsFileError`
    naming the file and the line.

    >>> parse_records("r.jsonl", b'{"id": "a"}\\n{"id": "b", "x": 1}\\n')
    [{'id': 'a'}, {'id': 'b', 'x': 1}]
    >>> try:
    ...     parse_records("r.jsonl", b'[1, 2]\\n')
    ... except ResultsFileError as exc:
    ...     print(exc)
    r.jsonl:1: a record must be a JSON object, not list
    """
    path = Path(path)
    rows: list[dict] = []
    lines = data.split(b"\n")
    last = first + len(lines) - 1
    for number, raw in enumerate(lines, first):
        if not raw.strip():
            continue
        cut = number == last  # the last line has no newline: an interrupted write
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            if cut and exc.reason == "unexpected end of data":
                _skip(path, number, raw, "cut inside a character by an interrupted write")
                continue
            raise ResultsFileError(
                f"{path}:{number}: not UTF-8 text (byte {exc.start} of the line): not a results "
                "file written by verify (one JSON record per line)"
            ) from None
        try:
            row = json.loads(text)
        except json.JSONDecodeError as exc:
            why = "the last line, cut by an interrupted write" if cut else f"not JSON ({exc.msg})"
            _skip(path, number, raw, why)
            continue
        if not isinstance(row, dict):
            raise ResultsFileError(
                f"{path}:{number}: a record must be a JSON object, not {type(row).__name__}"
            )
        if not isinstance(row.get("id"), str):
            raise ResultsFileError(f"{path}:{number}: a record must have a string 'id' (the claim's id)")
        rows.append(row)
    return rows


#: path -> (the bytes parsed, their rows): :func:`_parsed_rows`'s memory
_PARSED: dict[str, tuple[bytes, list[dict]]] = {}


def _parsed_rows(path: Path, data: bytes) -> list[dict]:
    """:func:`parse_records` of ``data`` (the bytes of the results file ``path``), remembered per
    path: when ``data`` extends the bytes parsed before by whole lines (records appended since),
    only the new lines are parsed. The same rows as a fresh parse, shared between callers.

    >>> rows = _parsed_rows(Path("/x/r.jsonl"), b'{"id": "a"}\\n')
    >>> _parsed_rows(Path("/x/r.jsonl"), b'{"id": "a"}\\n{"id": "b"}\\n')
    [{'id': 'a'}, {'id': 'b'}]
    """
    key = str(path)
    old = _PARSED.get(key)
    if old is not None and old[0] == data:
        return old[1]
    if old is not None and old[0].endswith(b"\n") and data.startswith(old[0]):
        rows = old[1] + parse_records(path, data[len(old[0]) :], first=old[0].count(b"\n") + 1)
    else:
        rows = parse_records(path, data)
    _PARSED[key] = (data, rows)
    return rows


class ResultStore:
    """Append-only JSON-lines file in ``out_dir`` (created unless ``create=False``: a reader that
    must not make folders). Records are written as strict JSON (:func:`theory.cli_support.dumps`:
    a non-finite number is null with its value in ``<key>_nonfinite``), the form the worker
    processes of a parallel run report in, so a record has one shape whichever way it ran.

    Every append is one whole line that starts on a line of its own (after a line cut by an
    interrupted write, which is kept and skipped when read), written under an exclusive lock on
    the file, so that writers in several processes lose nothing; readers take a shared lock.

    >>> import tempfile
    >>> store = ResultStore(tempfile.mkdtemp())
    >>> store.append({"id": "x", "n_c": float("inf"), "trace": [1.0, float("inf")]})
    >>> store.records()
    [{'id': 'x', 'n_c': None, 'n_c_nonfinite': 'Infinity', 'trace': [1.0, 'Infinity']}]
    """

    def __init__(self, out_dir: str | os.PathLike, create: bool = True):
        self.dir = Path(out_dir)
        if create:
            self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / RESULTS_FILE

    def records(self) -> list[dict]:
        """Every record, oldest first (see :func:`parse_records` for the lines that are skipped
        or refused).

        >>> import tempfile
        >>> ResultStore(tempfile.mkdtemp()).records()
        []
        """
        data = self._read()
        return [] if data is None else parse_records(self.path, data)

    def _read(self) -> bytes | None:
        """The file's bytes, read under a shared lock; None when there is no file."""
        try:
            with self.path.open("rb") as fh:
                _lock(fh, exclusive=False)
                return fh.read()
        except FileNotFoundError:
            return None

    def _shared_records(self) -> list[dict]:
        """:meth:`records`, parsed once per process and then only the lines appended since
        (:func:`_parsed_rows`): the rows are shared between callers, to be read, not changed."""
        data = self._read()
        return [] if data is None else _parsed_rows(self.path, data)

    def latest(self) -> dict[str, dict]:
        """The newest record of every claim id.

        >>> import tempfile
        >>> store = ResultStore(tempfile.mkdtemp())
        >>> store.append({"id": "a", "v": 1}); store.append({"id": "a", "v": 2})
        >>> store.latest()
        {'a': {'id': 'a', 'v': 2}}
        """
        out = {}
        for row in self.records():
            out[row["id"]] = row
        return out

    def find(
        self, claim_id: str, scale: str, params: dict, seed: int, device: str, dtype: str, code: str
    ) -> dict | None:
        import copy

        key = params_key(params)
        for row in reversed(self._shared_records()):
            if (
                row.get("id") == claim_id
                and row.get("scale") == scale
                and params_key(row.get("params", {})) == key
                and row.get("seed") == seed
                and row.get("device") == device
                and row.get("dtype") == dtype
                and row.get("code") == code
                and row.get("status") != "error"
            ):
                return copy.deepcopy(row)  # the caller's own copy: the parsed rows are shared
        return None

    def _open_locked(self):
        """The results file opened for appending under an exclusive lock, reopened when another
        process replaced the file (:meth:`prune`) while this one waited for the lock."""
        self.dir.mkdir(parents=True, exist_ok=True)
        while True:
            fh = self.path.open("a+b")
            _lock(fh, exclusive=True)
            try:
                if os.stat(self.path).st_ino == os.fstat(fh.fileno()).st_ino:
                    return fh
            except FileNotFoundError:
                pass
            fh.close()

    def append(self, record: dict) -> None:
        """Append ``record`` (a dict with a string ``id``) as one strict-JSON line.

        >>> import tempfile
        >>> store = ResultStore(tempfile.mkdtemp())
        >>> _ = store.path.write_bytes(b'{"id": "a", "cut mid')  # an interrupted write
        >>> store.append({"id": "b"})
        >>> store.path.read_bytes()
        b'{"id": "a", "cut mid\\n{"id": "b"}\\n'
        """
        if not isinstance(record, dict) or not isinstance(record.get("id"), str):
            raise TypeError(f"a record must be a dict with a string 'id', not {type(record).__name__}")
        line = (dumps(record) + "\n").encode("utf-8")
        with self._open_locked() as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            if size:
                fh.seek(size - 1)
                if fh.read(1) != b"\n":
                    line = b"\n" + line  # never glue a record to a line cut by an interrupted write
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())

    def keep_newest(self, records: list[dict]) -> int:
        """Make each of ``records`` (one run's, resumed ones marked ``resumed``) its claim's newest
        stored record: a resumed record that an older or failed record follows in the file is
        appended again (without the mark), so that the report and the figures, which read the
        newest record of each claim, show what the run reported. Returns the number appended.

        >>> import tempfile
        >>> store = ResultStore(tempfile.mkdtemp())
        >>> store.append({"id": "a", "status": "pass"}); store.append({"id": "a", "status": "error"})
        >>> store.keep_newest([{"id": "a", "status": "pass", "resumed": True}])
        1
        >>> store.latest()["a"]["status"]
        'pass'
        """
        newest = self.latest()
        added = 0
        for record in records:
            if record.get("resumed"):
                plain = {k: v for k, v in record.items() if k != "resumed"}
                if newest.get(record["id"]) != plain:
                    self.append(plain)
                    added += 1
        return added

    def prune(self, keep, dry_run: bool = False) -> dict[str, int]:
        """Remove the records whose id is not in ``keep`` (the registered claims) and rewrite lines
        holding a bare NaN or Infinity as strict JSON (``<key>_nonfinite``); lines that cannot be
        read are left as they are. Returns the number of records removed per id (nothing is
        written when ``dry_run``). The file is replaced whole, under the writers' lock.

        >>> import tempfile
        >>> store = ResultStore(tempfile.mkdtemp())
        >>> store.append({"id": "a"}); store.append({"id": "gone"})
        >>> store.prune({"a"})
        {'gone': 1}
        >>> store.records()
        [{'id': 'a'}]
        """
        keep = set(keep)
        if not self.path.is_file():
            return {}
        removed: dict[str, int] = {}
        with self._open_locked() as fh:
            fh.seek(0)
            data = fh.read()
            out = []
            for raw in data.split(b"\n"):
                try:
                    row = json.loads(raw.decode("utf-8")) if raw.strip() else None
                except (UnicodeDecodeError, json.JSONDecodeError):
                    row = None
                if not isinstance(row, dict) or not isinstance(row.get("id"), str):
                    out.append(raw)
                elif row["id"] not in keep:
                    removed[row["id"]] = removed.get(row["id"], 0) + 1
                else:
                    try:
                        json.loads(raw, parse_constant=_refuse_constant)
                    except ValueError:
                        raw = dumps(row).encode("utf-8")
                    out.append(raw)
            new = b"\n".join(out)
            if dry_run or new == data:
                return removed
            tmp = self.path.with_name(self.path.name + ".prune-tmp")
            with tmp.open("wb") as new_fh:
                new_fh.write(new)
                new_fh.flush()
                os.fsync(new_fh.fileno())
            os.replace(tmp, self.path)
        return removed


def latest_records(scale: str, folders) -> dict[str, dict]:
    """The newest non-error record of each claim at ``scale`` (any seed or device) in the
    ``claims.jsonl`` of ``folders`` (later folders win; a folder without one is skipped).

    >>> latest_records("quick", ["/nonexistent"])
    {}
    """
    latest: dict[str, dict] = {}
    for folder in folders:
        if (Path(folder) / RESULTS_FILE).exists():
            # parsed once per process (the parallel runner and its progress line both read the
            # reference's 26 MB: 0.7 CPU-s a parse); the rows are shared, to be read only
            for row in ResultStore(folder, create=False)._shared_records():
                if row.get("scale") == scale and row.get("status") != "error":
                    latest[row["id"]] = row
    return latest


def _refuse_constant(token: str):
    raise ValueError(f"not strict JSON: {token}")


def non_strict_lines(path: str | os.PathLike) -> list[int]:
    """The numbers of the lines of ``path`` that hold a bare NaN, Infinity or -Infinity (JSON
    that ``json.loads`` reads but strict JSON refuses).

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "claims.jsonl"
    >>> _ = path.write_text('{"id": "a", "x": Infinity}\\n{"id": "b"}\\n')
    >>> non_strict_lines(path)
    [1]
    """
    bad = []
    for number, raw in enumerate(Path(path).read_bytes().split(b"\n"), 1):
        if raw.strip():
            try:
                json.loads(raw, parse_constant=_refuse_constant)
            except ValueError as exc:
                if "not strict JSON" in str(exc):
                    bad.append(number)
    return bad


#: relative and absolute tolerance of an identity claim's measured numbers between machines (its two
#: computations agree up to rounding, and float64 rounding differs between processors in the last
#: bits; many identities measure an error that is 0 or 1e-16 depending on the order of a sum)
IDENTITY_RTOL, IDENTITY_ATOL = 1e-9, 1e-12


def verdict_differences(reference: dict, new: dict) -> list[str]:
    """How the record ``new`` of a claim differs from its ``reference`` record made on another
    machine, judged as records from two processors may be: by status (the verdict may not differ),
    and for an identity claim by its numbers within :data:`IDENTITY_RTOL` and
    :data:`IDENTITY_ATOL`; an empirical claim's numbers may differ in the last bits (float32
    training sums in another order), so they are compared through its verdict only, never bit
    for bit. Records of other parameters, seed,
    scale, device or dtype are not comparable (a one-item list says so); skipped ones have
    nothing to compare.

    >>> ref = {"id": "a", "status": "pass", "kind": "identity", "measured": 1.0, "seed": 0}
    >>> verdict_differences(ref, dict(ref, measured=1.0 + 1e-12))
    []
    >>> verdict_differences(ref, dict(ref, status="fail"))
    ['a: status fail, the reference has pass']
    """
    keys = ("scale", "seed", "device", "dtype")
    if any(reference.get(k) != new.get(k) for k in keys) or params_key(
        reference.get("params", {})
    ) != params_key(new.get("params", {})):
        return [f"{new.get('id')}: not comparable (other parameters, seed, scale, device or dtype)"]
    if "skipped" in (reference.get("status"), new.get("status")):
        return []
    out = []
    if reference.get("status") != new.get("status"):
        out.append(
            f"{new.get('id')}: status {new.get('status')}, the reference has {reference.get('status')}"
        )
    if new.get("kind") == "identity":
        a, b = _numbers(reference.get("measured")), _numbers(new.get("measured"))
        if len(a) != len(b) or not np.allclose(a, b, rtol=IDENTITY_RTOL, atol=IDENTITY_ATOL):
            out.append(f"{new.get('id')}: an identity claim's measured numbers differ beyond its tolerance")
    return out


def _numbers(value) -> list[float]:
    """The numbers of a measured value, in a fixed order (dict keys sorted)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, dict):
        return [x for k in sorted(value) for x in _numbers(value[k])]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _numbers(v)]
    return []


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_fmt(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value[:8]) + (", ..." if len(value) > 8 else "") + "]"
    return str(value)


def write_report(records: list[dict], path: str | os.PathLike, summary: list[str] | None = None) -> Path:
    """Markdown report: the lines of ``summary`` (what a reader acts on first; the command line
    writes :func:`verify.commands.report_summary`), then every claim with predicted, measured,
    status and provenance.

    >>> import tempfile
    >>> out = write_report([], Path(tempfile.mkdtemp()) / "report.md", ["Start here."])
    >>> out.read_text().splitlines()[:3]
    ['# recall-bounds report', '', 'Start here.']
    """
    path = Path(path)
    lines = ["# recall-bounds report", ""]
    if summary:
        lines += [*summary, "", "## Every claim", ""]
    lines += [
        f"{len(records)} claims; status counts: "
        + ", ".join(f"{k} {v}" for k, v in sorted(_count(records).items())),
        "",
        "Controls are the same check run where the claim must not hold; each must fail "
        '("fails as required"), otherwise the claim is vacuous.',
        "",
        "| claim | kind | provenance | predicted | measured | controls | status | resolution | seconds |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        status = r["status"]
        if r.get("ledger"):
            status += f" (ledger: {r['ledger']})"
        if r.get("error"):
            status += f" ({r['error']})"
        if r.get("skipped"):
            status += f" ({r['skipped']})"
        if r.get("inconclusive"):
            status += f" ({r['inconclusive']})"
        controls = (
            "; ".join(
                f"{c['name']}: {c['status']} ({_fmt(c.get('measured'))})" for c in r.get("controls") or []
            )
            or "-"
        )
        lines.append(
            f"| `{r['id']}` | {r.get('kind', '')} | {r['provenance']} | {_fmt(r.get('predicted'))} | "
            f"{_fmt(r.get('measured'))} | {controls.replace('|', '/')} | {status} | "
            f"{_resolution_cell(r.get('resolution'))} | {r.get('seconds', 0):.1f} |"
        )
    undecided = [r for r in records if r["status"] == "inconclusive"]
    if undecided:
        lines += ["", "## Inconclusive: this budget cannot decide", ""]
        lines += [f"- `{r['id']}`: {r.get('inconclusive', '')}" for r in undecided]
    if records:
        r0 = records[0]
        lines += [
            "",
            f"seed {r0.get('seed')}, device {r0.get('device')}, dtype {r0.get('dtype')}, "
            f"git {r0.get('git')}, versions {json.dumps(r0.get('versions'))}",
        ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _resolution_cell(resolution) -> str:
    """A record's resolution in one table cell ("-" where its criterion is not an object)."""
    if not resolution:
        return "- (not computed)"
    text = str(resolution.get("text", "")).replace("|", "/").replace("\n", " ")
    return ("coarse: " if resolution.get("coarse") else "") + text


def _count(records):
    counts: dict[str, int] = {}
    for r in records:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return counts


def jsonable(value):
    """Convert numpy scalars/arrays (and tuples) to JSON types; NaN raises ValueError."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        value = float(value)
        if value != value:
            raise ValueError("NaN in a claim result")
        return value
    if value is None or isinstance(value, (str, int)):
        return value
    try:  # torch tensors and other array-likes
        return jsonable(np.asarray(value).tolist())
    except Exception:  # noqa: BLE001
        return str(value)
