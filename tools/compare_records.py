"""Compare the claim records of two result files field by field (the newest record per claim id),
ignoring what may differ between identical runs: timings (``seconds``, ``cpu_s``, ``profile``),
the revision (``git``, ``code``), ``versions``, memory peaks and resume bookkeeping.

    python tools/compare_records.py REF.jsonl NEW.jsonl [GLOB]

Prints every differing field (tolerance 0) and ``N compared, M differ``; exit status 1 when a
record differs or is missing. A refactor that must keep every record (docs/contributing.md) is
checked with it: ``python -m verify run '*' --seed S --jobs 2 --fresh --out DIR`` at the reference
revision and at the new one, then this script on the two ``claims.jsonl``.
"""

from __future__ import annotations

import fnmatch
import json
import sys
from typing import Any

IGNORED = {
    "seconds",
    "cpu_s",
    "profile",
    "git",
    "code",
    "versions",
    "peak_rss_bytes",
    "peak_rss_scope",
    "load_seconds",
    "cold_load",
    "resumed",
}


def newest(path: str) -> dict[str, dict]:
    """Claim id -> its last record in a JSON-lines file."""
    out = {}
    with open(path) as handle:
        for line in handle:
            if line.strip():
                record = json.loads(line)
                out[record["id"]] = record
    return out


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Every place where ``a`` and ``b`` differ (ignored keys left out), as 'path: a != b'.

    >>> differences({"x": [1, 2], "seconds": 3}, {"x": [1, 2.5], "seconds": 4})
    ['.x[1]: 2 != 2.5']
    >>> differences({"x": 1}, {"y": 1})
    ['.x: only in the reference', '.y: only in the new record']
    """
    numbers = (int, float)
    if type(a) is not type(b) and not (isinstance(a, numbers) and isinstance(b, numbers)):
        return [f"{path}: {str(a)[:80]} != {str(b)[:80]}"]
    if isinstance(a, dict):
        out = []
        for key in sorted((set(a) | set(b)) - IGNORED):
            if key not in b:
                out.append(f"{path}.{key}: only in the reference")
            elif key not in a:
                out.append(f"{path}.{key}: only in the new record")
            else:
                out += differences(a[key], b[key], f"{path}.{key}")
        return out
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {str(a)[:80]} != {str(b)[:80]}"]


def main(argv: list[str]) -> int:
    ref, new = newest(argv[0]), newest(argv[1])
    pattern = argv[2] if len(argv) > 2 else "*"
    compared = differ = 0
    for cid in sorted(c for c in ref if fnmatch.fnmatchcase(c, pattern)):
        if cid not in new:
            print(f"MISSING {cid}")
            differ += 1
            continue
        compared += 1
        found = differences(ref[cid], new[cid])
        if found:
            differ += 1
            print(f"DIFF {cid}:")
            for line in found[:8]:
                print("   ", line)
    for cid in sorted(c for c in new if fnmatch.fnmatchcase(c, pattern) and c not in ref):
        print(f"EXTRA {cid}")
    print(f"{compared} compared, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
