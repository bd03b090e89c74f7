"""Where the registry's time goes: ``python -m verify run ... --profile`` and
``python -m verify bench registry`` (README.md, "Cost of the registry").

Every claim record carries ``profile``: the seconds of the claim's own check (``check_s``), of its
controls (``controls_s``) and of the shared work the two triggered through ``Context.shared``
(``shared_s``: models and sweeps computed once per run and reused by later claims, so the claim
that first asks for them pays), and the process CPU time of the whole (``cpu_s``, every thread).
``check_s + controls_s + shared_s`` is the record's ``seconds`` up to rounding.
"""

from __future__ import annotations

import json
import os
import time
from typing import Iterable

from constructions.seeding import torch_generator
from verify.bench.core import bench_case, load_average

FIELDS = ("seconds", "check_s", "controls_s", "shared_s", "cpu_s")


def _row(record: dict) -> dict:
    prof = record.get("profile") or {}
    return {
        "seconds": float(record.get("seconds") or 0.0),
        **{k: float(prof.get(k) or 0.0) for k in FIELDS[1:]},
    }


def profile_summary(records: Iterable[dict], top: int = 10) -> dict:
    """Claim-seconds per area and for the ``top`` largest claims, split as in the module docstring.

    >>> recs = [{"id": "a.t.x", "seconds": 3.0, "profile": {"check_s": 1.0, "controls_s": 0.5,
    ...          "shared_s": 1.5, "cpu_s": 5.0}}, {"id": "b.t.y", "seconds": 1.0}]
    >>> s = profile_summary(recs, top=1)
    >>> s["total"]["seconds"], s["areas"]["a"]["shared_s"], [c["id"] for c in s["largest"]]
    (4.0, 1.5, ['a.t.x'])
    """
    recs = [r for r in records if not r.get("resumed")]
    areas: dict[str, dict] = {}
    total = dict.fromkeys(FIELDS, 0.0)
    for r in recs:
        row = _row(r)
        area = areas.setdefault(r["id"].split(".", 1)[0], dict.fromkeys(FIELDS, 0.0))
        for k in FIELDS:
            area[k] += row[k]
            total[k] += row[k]
    largest = sorted(recs, key=lambda r: -_row(r)["seconds"])[: int(top)]
    return {
        "claims": len(recs),
        "total": total,
        "areas": dict(sorted(areas.items(), key=lambda kv: -kv[1]["seconds"])),
        "largest": [{"id": r["id"], "status": r.get("status"), **_row(r)} for r in largest],
    }


def profile_text(records: Iterable[dict], top: int = 10, processor: str | None = None) -> str:
    """The summary of :func:`profile_summary` as a Markdown table (areas, then the largest claims).

    >>> print(profile_text([{"id": "a.t.x", "seconds": 2.0}], processor="test cpu").splitlines()[0])
    claim-seconds on test cpu (1 claims run here; resumed records are left out)
    """
    from verify.results import cpu_model

    s = profile_summary(records, top)
    head = "| {:<46} | {:>8} | {:>7} | {:>8} | {:>7} | {:>7} |".format(
        "area / claim", "seconds", "check", "controls", "shared", "CPU s"
    )
    lines = [
        f"claim-seconds on {processor or cpu_model()} ({s['claims']} claims run here; resumed "
        "records are left out)",
        "",
        head,
        "|" + "|".join("-" * (len(c)) for c in head.split("|")[1:-1]) + "|",
    ]

    def fmt(name, row):
        return "| {:<46} | {:>8.1f} | {:>7.1f} | {:>8.1f} | {:>7.1f} | {:>7.1f} |".format(
            name, row["seconds"], row["check_s"], row["controls_s"], row["shared_s"], row["cpu_s"]
        )

    lines += [fmt(area, row) for area, row in s["areas"].items()]
    lines.append(fmt("total", s["total"]))
    lines += [fmt(r["id"], r) for r in s["largest"]]
    return "\n".join(lines)


def reference_matmul_seconds(size: int = 1024, repeats: int = 5) -> float:
    """Best wall time of one float32 ``size x size`` matrix product on this process's threads: the
    machine's speed, stored beside the registry's claim-seconds so runs on different machines (or
    under different load) can be compared.

    >>> reference_matmul_seconds(size=64, repeats=2) > 0
    True
    """
    import torch

    gen = torch_generator(0)
    a = torch.randn(size, size, generator=gen)
    b = torch.randn(size, size, generator=gen)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(int(repeats)):
        t0 = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - t0)
    return best


@bench_case("registry")
def bench_registry(device: str = "cpu", patterns=("*",), seed: int = 0, out: str | None = None) -> dict:
    """Run the quick registry as the main job does (worker processes, whole areas each, fresh) and
    store its claim-seconds per claim and per area with the processor, the load average and a
    reference matmul time before and after, appended to ``<out>/bench_registry.jsonl``
    (``out`` defaults to the folder runs write to: RECALL_RESULTS, else the checkout's git-ignored
    runs/; the reference row is kept in results/bench_registry.jsonl).
    Not part of a plain ``bench``."""
    from verify.claims import Context, select
    from verify.parallel import run_claims_parallel
    from verify.results import cpu_model, git_revision, results_root

    claims = select(list(patterns))
    ctx = Context(seed=int(seed), device=device, dtype="float64" if device == "cpu" else "float32")
    areas = {c.area for c in claims}
    jobs = min(os.cpu_count() or 1, len(areas))
    ref_before, load_before = reference_matmul_seconds(), load_average()
    wall0, cpu0 = time.perf_counter(), os.times()
    records = run_claims_parallel(claims, ctx, None, jobs, resume=False)
    wall = time.perf_counter() - wall0
    cpu1 = os.times()
    s = profile_summary(records, top=len(records))
    row = {
        "name": "registry",
        "device": device,
        "processor": cpu_model(),
        "git": git_revision(),
        "seed": int(seed),
        "jobs": jobs,
        "claims": len(records),
        "wall_s": round(wall, 1),
        "children_cpu_s": round(
            (cpu1.children_user + cpu1.children_system) - (cpu0.children_user + cpu0.children_system), 1
        ),
        "claim_seconds": round(s["total"]["seconds"], 1),
        "claim_cpu_s": round(s["total"]["cpu_s"], 1),
        "areas": {a: round(v["seconds"], 1) for a, v in s["areas"].items()},
        "per_claim": {r["id"]: round(r["seconds"], 2) for r in s["largest"]},
        "statuses": {r["id"]: r["status"] for r in records},
        "reference_matmul_s": [round(ref_before, 5), round(reference_matmul_seconds(), 5)],
        "load_average": [load_before, load_average()],
    }
    path = results_root(out) / "bench_registry.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        fh.write(json.dumps(row) + "\n")
    row["stored_in"] = str(path)
    return row
