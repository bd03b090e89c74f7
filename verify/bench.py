"""``python -m verify bench``: performance of the measurement kernels.

Rows are registered with :func:`bench_case`; area modules may add their own rows (imported
through ``verify.claims.load_all``). The ``measure`` row times :func:`verify.measure.decode`
against a plain matrix product of the same shape and against the naive full-logits version.
This is a benchmark, not a test: it prints numbers, it asserts nothing.
"""
from __future__ import annotations

import json
import sys
import time
from typing import Callable

BENCHES: dict[str, Callable[..., dict]] = {}


def bench_case(name: str):
    def wrap(fn):
        if name in BENCHES:
            raise ValueError(f"bench {name} registered twice")
        BENCHES[name] = fn
        return fn

    return wrap


def best_time(fn, repeats: int = 5, warmup: int = 1) -> float:
    """Best wall time over ``repeats`` runs after ``warmup`` runs (seconds)."""
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


_PEAK_SCRIPT = """
import sys, torch
from verify.measure import decode, decode_naive
def hwm():  # peak resident set of this process (VmHWM; unlike ru_maxrss it is not inherited over exec)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
F, V, d = (int(a) for a in sys.argv[2:5])
g = torch.Generator().manual_seed(0)
H, U = torch.randn(F, d, generator=g), torch.randn(V, d, generator=g)
t = torch.randint(0, V, (F,), generator=g)
decode(H[:8], U[:64], t[:8] % 64)  # load kernels before the baseline
base = hwm()
{"chunked": decode, "naive": decode_naive}[sys.argv[1]](H, U, t)
print(hwm() - base)
"""


def peak_extra_bytes(kernel: str, n_queries: int, n_candidates: int, dim: int) -> int:
    """Peak resident memory the kernel adds beyond its inputs, measured in a fresh process (CPU)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _PEAK_SCRIPT, kernel, str(n_queries), str(n_candidates),
                          str(dim)], capture_output=True, text=True, check=True)
    return int(out.stdout.strip().splitlines()[-1])


@bench_case("measure")
def bench_measure(device: str = "cpu", n_queries: int = 16384, n_candidates: int = 16384,
                  dim: int = 128) -> dict:
    import torch

    from verify.measure import chunk_rows, decode, decode_naive

    gen = torch.Generator().manual_seed(0)
    H = torch.randn(n_queries, dim, generator=gen, dtype=torch.float32).to(device)
    U = torch.randn(n_candidates, dim, generator=gen, dtype=torch.float32).to(device)
    t = torch.randint(0, n_candidates, (n_queries,), generator=gen).to(device)
    out = torch.empty(n_queries, n_candidates, dtype=torch.float32, device=device)
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)

    def matmul():
        torch.mm(H, U.t(), out=out)
        sync()

    def chunked():
        decode(H, U, t)
        sync()

    def naive():
        decode_naive(H, U, t)
        sync()

    flops = 2.0 * n_queries * n_candidates * dim
    t_mm, t_ch, t_nv = best_time(matmul, 3), best_time(chunked, 3), best_time(naive, 2)
    del out
    row = {"name": "measure", "device": device, "shape": f"F={n_queries} V={n_candidates} d={dim}",
           "dtype": "float32",
           "matmul_s": t_mm, "chunked_s": t_ch, "naive_s": t_nv,
           "matmul_gflops": flops / t_mm / 1e9, "chunked_gflops": flops / t_ch / 1e9,
           "naive_gflops": flops / t_nv / 1e9,
           "ratio_to_matmul": t_mm / t_ch, "target_ratio": 0.85,
           "full_logits_bytes": n_queries * n_candidates * 4}
    if device == "cpu":
        row["chunk_bytes"] = chunk_rows(n_candidates, 4) * n_candidates * 4
        row["chunked_peak_extra_bytes"] = peak_extra_bytes("chunked", n_queries, n_candidates, dim)
        row["naive_peak_extra_bytes"] = peak_extra_bytes("naive", n_queries, n_candidates, dim)
    return row


def main(args) -> int:
    from constructions.device import resolve_device
    from verify.claims import load_all

    load_all()  # areas may register rows
    device = resolve_device(getattr(args, "device", None))
    names = args.names or list(BENCHES)
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        raise ValueError(f"unknown bench {unknown}; available: {list(BENCHES)}")
    rows = []
    for name in names:
        row = BENCHES[name](device=device)
        rows.append(row)
        if args.json:
            print(json.dumps(row), flush=True)
        else:
            print(f"[{name}]")
            for key, value in row.items():
                if key == "name":
                    continue
                text = f"{value:.4g}" if isinstance(value, float) else str(value)
                print(f"  {key:<26} {text}")
            sys.stdout.flush()
    return 0
