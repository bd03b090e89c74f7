"""The bench registry and its timing helpers (:mod:`verify.bench`).

Rows are registered with :func:`bench_case`; the other modules of :mod:`verify.bench` add their
own rows (:func:`verify.bench.load_benches` imports them). The ``measure`` row times :func:`verify.measure.decode`
against a plain matrix product of the same shape and against the naive full-logits version.
This is a benchmark, not a test: it prints numbers, it asserts nothing.
"""

from __future__ import annotations

import time

import numpy as np

from constructions.seeding import torch_generator
from theory.registry import Registry

BENCHES: Registry = Registry("bench")  # name -> Callable[..., dict]
#: rows that run only when named: ``registry`` runs every quick claim (minutes)
EXPLICIT_ONLY = ("registry",)


def bench_case(name: str):
    def wrap(fn):
        BENCHES.add(name, fn)
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


def interleaved_times(
    fns: dict, pairs: int = 7, warmup: int = 1, cpu: dict | None = None
) -> dict[str, list[float]]:
    """Wall times of every function in ``fns``, run in turn within each of ``pairs`` rounds (the
    order rotates from round to round), after ``warmup`` rounds. Load that comes and goes hits
    the sides of one round alike, so per-round ratios are robust where best-of-N of each side
    measured separately is not. A dict passed as ``cpu`` receives the same runs' process CPU
    times (on a loaded machine the fairer clock for one-thread kernels)."""
    names = list(fns)
    for _ in range(warmup):
        for name in names:
            fns[name]()
    times: dict[str, list[float]] = {name: [] for name in names}
    if cpu is not None:
        cpu.update({name: [] for name in names})
    for r in range(int(pairs)):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            c0, t0 = time.process_time(), time.perf_counter()
            fns[name]()
            times[name].append(time.perf_counter() - t0)
            if cpu is not None:
                cpu[name].append(time.process_time() - c0)
    return times


def ratio_summary(num: list[float], den: list[float]) -> dict:
    """Median, quartiles and range of the per-round ratios num_i / den_i."""
    r = np.asarray(num, dtype=float) / np.asarray(den, dtype=float)
    q1, med, q3 = np.quantile(r, [0.25, 0.5, 0.75])
    return {
        "median": float(med),
        "q1": float(q1),
        "q3": float(q3),
        "min": float(r.min()),
        "max": float(r.max()),
        "pairs": int(len(r)),
    }


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

    out = subprocess.run(
        [sys.executable, "-c", _PEAK_SCRIPT, kernel, str(n_queries), str(n_candidates), str(dim)],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.strip().splitlines()[-1])


def _kernel_inputs(n_queries: int, n_candidates: int, dim: int, device: str):
    """The decode benches' inputs, drawn from seed 0: queries H, candidates U, targets t, a logit
    buffer and the device's synchronisation (a no-op on CPU)."""
    import torch

    gen = torch_generator(0)
    H = torch.randn(n_queries, dim, generator=gen, dtype=torch.float32).to(device)
    U = torch.randn(n_candidates, dim, generator=gen, dtype=torch.float32).to(device)
    t = torch.randint(0, n_candidates, (n_queries,), generator=gen).to(device)
    out = torch.empty(n_queries, n_candidates, dtype=torch.float32, device=device)
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    return H, U, t, out, sync


@bench_case("measure")
def bench_measure(
    device: str = "cpu", n_queries: int = 16384, n_candidates: int = 16384, dim: int = 128
) -> dict:
    import torch

    from constructions.decode import chunk_gemms as run_chunk_gemms
    from verify.measure import chunk_rows, decode, decode_naive

    H, U, t, out, sync = _kernel_inputs(n_queries, n_candidates, dim, device)

    def matmul():
        torch.mm(H, U.t(), out=out)
        sync()

    def chunked():
        decode(H, U, t)
        sync()

    def naive():
        decode_naive(H, U, t)
        sync()

    rows_per_chunk = chunk_rows(n_candidates, 4)

    def chunk_gemms():  # the chunked kernel's GEMMs alone, same shapes and layout, no reduction
        run_chunk_gemms(H, U, rows_per_chunk)
        sync()

    def chunked_x4():  # diagnostic: the same kernel with chunks 4x larger (64 MiB at the default)
        decode(H, U, t, chunk=4 * rows_per_chunk)
        sync()

    flops = 2.0 * n_queries * n_candidates * dim
    pairs = 9
    times = interleaved_times(
        {"matmul": matmul, "chunked": chunked, "chunk_gemms": chunk_gemms, "chunked_x4": chunked_x4},
        pairs=pairs,
    )
    t_nv = best_time(naive, 2)
    del out
    med = {k: float(sorted(v)[len(v) // 2]) for k, v in times.items()}
    vs_mm = ratio_summary(times["matmul"], times["chunked"])
    overhead = ratio_summary(times["chunked"], times["chunk_gemms"])
    row = {
        "name": "measure",
        "device": device,
        "shape": f"F={n_queries} V={n_candidates} d={dim}",
        "dtype": "float32",
        "method": f"interleaved rounds (matmul, chunked, chunk GEMMs alone, chunked x4), "
        f"{pairs} rounds after 1 warm-up; ratios per round",
        "matmul_s_median": med["matmul"],
        "chunked_s_median": med["chunked"],
        "chunk_gemms_s_median": med["chunk_gemms"],
        "naive_s_best_of_2": t_nv,
        "matmul_gflops": flops / med["matmul"] / 1e9,
        "chunked_gflops": flops / med["chunked"] / 1e9,
        "naive_gflops": flops / t_nv / 1e9,
        "ratio_to_matmul": vs_mm["median"],
        "ratio_to_matmul_q1_q3": [vs_mm["q1"], vs_mm["q3"]],
        "ratio_to_matmul_min_max": [vs_mm["min"], vs_mm["max"]],
        "target_ratio": 0.85,
        "reduction_overhead": overhead["median"] - 1.0,
        "reduction_overhead_q1_q3": [overhead["q1"] - 1.0, overhead["q3"] - 1.0],
        "target_reduction_overhead": 0.10,
        "chunk_gemms_ratio_to_matmul": ratio_summary(times["matmul"], times["chunk_gemms"])["median"],
        "chunked_x4_ratio_to_matmul": ratio_summary(times["matmul"], times["chunked_x4"])["median"],
        "full_logits_bytes": n_queries * n_candidates * 4,
        "chunk_bytes": rows_per_chunk * n_candidates * 4,
        "load_average": load_average(),
        "torch_threads": torch.get_num_threads(),
    }
    if device == "cpu":
        row["chunked_peak_extra_bytes"] = peak_extra_bytes("chunked", n_queries, n_candidates, dim)
        row["naive_peak_extra_bytes"] = peak_extra_bytes("naive", n_queries, n_candidates, dim)
    return row


def load_average() -> list[float]:
    """The machine's 1/5/15-minute load averages (os.getloadavg), stated in every kernel row."""
    import os

    return [round(x, 2) for x in os.getloadavg()]


@bench_case("measure_chunks")
def bench_measure_chunks(
    device: str = "cpu",
    n_queries: int = 16384,
    n_candidates: int = 16384,
    dim: int = 128,
    sizes_mib=(8, 16, 32, 64),
    threads=(1, 2),
    pairs: int = 7,
) -> dict:
    """The chunked margin kernel at several chunk sizes against one plain matrix
    product, interleaved in each round (so load hits every side of a round alike), with one and
    with two threads. Per size: the median and spread over rounds of matmul / chunked, and the
    reduction overhead chunked / (the same chunks' GEMMs alone) - 1."""
    import torch

    from constructions.decode import _transposed
    from constructions.decode import chunk_gemms as run_chunk_gemms
    from verify.measure import chunk_rows, decode

    H, U, t, out, sync = _kernel_inputs(n_queries, n_candidates, dim, device)
    Ut = U.t()
    fns = {"matmul": lambda: (torch.mm(H, Ut, out=out), sync())}
    for mib in sizes_mib:
        rows = chunk_rows(n_candidates, 4, int(mib) * 2**20)

        def chunked(rows=rows):
            decode(H, U, t, chunk=rows)
            sync()

        def gemms(rows=rows):  # the kernel's own chunk GEMMs (same layout), no reduction
            run_chunk_gemms(H, U, rows)
            sync()

        fns[f"chunked_{mib}MiB"] = chunked
        fns[f"gemms_{mib}MiB"] = gemms
    before = torch.get_num_threads()
    row = {
        "name": "measure_chunks",
        "device": device,
        "dtype": "float32",
        "shape": f"F={n_queries} V={n_candidates} d={dim}",
        "pairs": pairs,
        "method": "interleaved rounds (matmul, then chunked and its bare chunk GEMMs per size, "
        "order rotating), 1 warm-up round; ratios per round, median and quartiles",
        "target_ratio": 0.85,
        "target_reduction_overhead": 0.10,
        "by_threads": {},
    }
    try:
        for n_threads in threads:
            torch.set_num_threads(int(n_threads))
            load_before = load_average()
            cpu: dict = {}
            times = interleaved_times(fns, pairs=pairs, cpu=cpu)
            per = {}
            for mib in sizes_mib:
                vs = ratio_summary(times["matmul"], times[f"chunked_{mib}MiB"])
                over = ratio_summary(times[f"chunked_{mib}MiB"], times[f"gemms_{mib}MiB"])
                per[f"{mib}MiB"] = {
                    "ratio_to_matmul": vs["median"],
                    "ratio_q1_q3": [vs["q1"], vs["q3"]],
                    "ratio_min_max": [vs["min"], vs["max"]],
                    "reduction_overhead": over["median"] - 1.0,
                    "chunked_s_median": float(np.median(times[f"chunked_{mib}MiB"])),
                }
                if int(n_threads) == 1:  # one thread: CPU time is the load-robust clock
                    vs_cpu = ratio_summary(cpu["matmul"], cpu[f"chunked_{mib}MiB"])
                    over_cpu = ratio_summary(cpu[f"chunked_{mib}MiB"], cpu[f"gemms_{mib}MiB"])
                    per[f"{mib}MiB"]["cpu_ratio_to_matmul"] = vs_cpu["median"]
                    per[f"{mib}MiB"]["cpu_ratio_min_max"] = [vs_cpu["min"], vs_cpu["max"]]
                    per[f"{mib}MiB"]["cpu_reduction_overhead"] = over_cpu["median"] - 1.0
            best = max(per, key=lambda k: per[k]["ratio_to_matmul"])
            row["by_threads"][str(n_threads)] = {
                "kernel_layout": "transposed chunks U @ H_c^T" if _transposed(H) else "row chunks H_c @ U^T",
                "load_before": load_before,
                "load_after": load_average(),
                "matmul_s_median": float(np.median(times["matmul"])),
                "sizes": per,
                "best_size": best,
                "best_ratio": per[best]["ratio_to_matmul"],
                "short_of_target": max(0.0, 0.85 - per[best]["ratio_to_matmul"]),
            }
    finally:
        torch.set_num_threads(before)
    return row
