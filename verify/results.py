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
from functools import lru_cache
from pathlib import Path

import numpy as np

from theory.cli_support import dumps

RESULTS_FILE = "claims.jsonl"
REPORT_FILE = "report.md"
#: environment variable naming the results folder when no ``--results``/``--out`` is given
RESULTS_ENV = "RECALL_RESULTS"
REPO = Path(__file__).resolve().parent.parent  # the repository root when run from a checkout


def default_results_root() -> Path:
    """The results folder used when neither ``--results`` nor RECALL_RESULTS says otherwise: the
    checkout's ``results/`` (found from this package's location, whatever the working directory),
    or ``./results`` for an installed copy that has no checkout around it.

    >>> default_results_root().name
    'results'
    """
    if (REPO / "pyproject.toml").is_file() and (REPO / "verify").is_dir():
        return REPO / "results"
    return Path.cwd() / "results"


def results_root(folder: str | os.PathLike | None = None) -> Path:
    """The one results folder of the command lines, as an absolute path: ``folder`` when given
    (relative to the working directory), else the environment variable RECALL_RESULTS, else
    :func:`default_results_root`. The README's "Command line" section describes it.

    >>> results_root("/tmp/res") == Path("/tmp/res")
    True
    """
    if folder is None or str(folder) == "":
        env = os.environ.get(RESULTS_ENV, "")
        if not env:
            return default_results_root()
        folder = env
    return Path(os.path.abspath(os.path.expanduser(str(folder))))


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


class ResultStore:
    """Append-only JSON-lines file in ``out_dir`` (created unless ``create=False``: a reader that
    must not make folders). Records are written as strict JSON (:func:`theory.cli_support.dumps`:
    a non-finite number is null with its value in ``<key>_nonfinite``), the form the worker
    processes of a parallel run report in, so a record has one shape whichever way it ran.

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
        if not self.path.exists():
            return []
        rows = []
        with self.path.open() as fh:
            for line in fh:
                line = line.strip()
                if line:
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError:
                        continue  # a line cut by an interrupted write: ignore it
        return rows

    def latest(self) -> dict[str, dict]:
        """The newest record of every claim id."""
        out = {}
        for row in self.records():
            out[row["id"]] = row
        return out

    def find(
        self, claim_id: str, scale: str, params: dict, seed: int, device: str, dtype: str, code: str
    ) -> dict | None:
        key = params_key(params)
        for row in reversed(self.records()):
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
                return row
        return None

    def append(self, record: dict) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        with self.path.open("a") as fh:
            fh.write(dumps(record) + "\n")
            fh.flush()
            os.fsync(fh.fileno())


def _fmt(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_fmt(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value[:8]) + (", ..." if len(value) > 8 else "") + "]"
    return str(value)


def write_report(records: list[dict], path: str | os.PathLike) -> Path:
    """Markdown table: every claim with predicted, measured, status and provenance."""
    path = Path(path)
    lines = [
        "# recall-bounds report",
        "",
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
