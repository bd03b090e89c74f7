"""Benchmark rows of the fact_mlp area (``python -m verify bench fact_mlp_decodability``).

The decodability row times :func:`theory.fact_mlp.rho.decodability` (exact NNLS-LDP
with column generation and a primal-dual certificate) against an in-house ADMM baseline
(:func:`inhouse_admm_decodability`) on the same max-min problem, run for a fixed 300 iterations.
The baseline is this benchmark's own algorithm (a Woodbury x-step and a simplex-projection
z-step), written here and not a library function; it is not the public reference code of the
fact-MLP paper and does not compute rho the way that code does, so its timings say nothing about
that code (docs/performance.md, "The decodability bench", reports a comparison with it made
outside this repository). Both solve, for every value i, the minimum-norm point of
conv{w_ij : j != i}.
"""

from __future__ import annotations

import time

import numpy as np

from constructions.seeding import rng_for
from verify.bench.core import bench_case


def _project_simplex(x):
    """Euclidean projection of each row of x (B, m) onto the probability simplex (sort-based)."""
    import torch

    s, _ = torch.sort(x, dim=1, descending=True)
    css = s.cumsum(dim=1) - 1.0
    idx = torch.arange(1, x.shape[1] + 1, device=x.device, dtype=x.dtype)
    cond = s - css / idx > 0
    k = cond.to(x.dtype).cumsum(dim=1).argmax(dim=1, keepdim=True)  # last True position
    theta = css.gather(1, k) / (k + 1).to(x.dtype)
    return torch.clamp(x - theta, min=0.0)


def inhouse_admm_decodability(
    values, iterations: int = 300, sigma: float = 1.0, batch: int = 128, device: str = "cpu", rows=None
):
    """The in-house batched ADMM baseline (this benchmark's own algorithm, not the public reference
    code): min_lam 1/2 ||W_i^T lam||^2 s.t. lam in the simplex, per value i, split as x
    (quadratic, solved by Woodbury with the (d x d) Gram) and z (simplex projection), for a fixed
    number of iterations and no optimality check. Returns (rho_dual, rho_primal)."""
    import torch

    V = torch.as_tensor(np.asarray(values), dtype=torch.float64, device=device)
    n, d = V.shape
    dual = np.zeros(n)
    primal = np.zeros(n)
    eye = torch.eye(d, dtype=V.dtype, device=device)
    todo = np.arange(n) if rows is None else np.asarray(rows)
    for start in range(0, len(todo), batch):
        rows = torch.as_tensor(todo[start : start + batch], device=device)
        b = len(rows)
        # W[a, j] = (v_i - v_j)/||v_i - v_j|| over all j, with the j = i row zeroed (masked)
        W = V[rows, None, :] - V[None, :, :]
        norms = W.norm(dim=2, keepdim=True)
        self_mask = norms < 1e-300
        W = torch.where(self_mask, torch.zeros_like(W), W / norms.clamp_min(1e-300))
        big = torch.where(
            self_mask.squeeze(2),
            torch.full((), 1e30, dtype=V.dtype, device=device),
            torch.zeros((), dtype=V.dtype, device=device),
        )
        inner = torch.linalg.inv(sigma * eye + W.transpose(1, 2) @ W)  # (b, d, d)
        z = torch.full((b, n), 1.0 / (n - 1), dtype=V.dtype, device=device)
        z = torch.where(self_mask.squeeze(2), torch.zeros_like(z), z)
        y = torch.zeros_like(z)
        for _ in range(iterations):
            rhs = sigma * (z - y)
            wt = torch.bmm(rhs[:, None, :], W)  # (b, 1, d)
            x = (rhs - torch.bmm(W, torch.bmm(wt, inner).transpose(1, 2)).squeeze(2)) / sigma
            z = _project_simplex(x + y - big)  # the self column is pushed out of the support
            y = y + x - z
        p = torch.einsum("bnd,bn->bd", W, z)
        pn = p.norm(dim=1)
        u = p / pn.clamp_min(1e-300)[:, None]
        vals = torch.einsum("bnd,bd->bn", W, u) + big
        dual[todo[start : start + b]] = pn.cpu().numpy()
        primal[todo[start : start + b]] = vals.min(dim=1).values.clamp_min(0).cpu().numpy()
    return dual[todo], primal[todo]


@bench_case("fact_mlp_decodability")
def bench_decodability(
    device: str = "cpu",
    n_values: int = 1024,
    dim: int = 64,
    iterations: int = 300,
    admm_values: int | None = None,
) -> dict:
    """Ours on all n_values; the in-house ADMM baseline (:func:`inhouse_admm_decodability`, not
    the public reference code) on ``admm_values`` of them (each still against all n_values - 1
    others), extrapolated linearly to n_values: the per-value problems are independent and the
    ADMM's cost per value is fixed (300 iterations). On CPU the default subset is 128 values, so
    the row runs in about a minute; on CUDA every value is timed. ``speedup`` is against this
    baseline; the row's ``baseline`` says so."""
    from theory.fact_mlp.rho import decodability

    rng = rng_for(0)
    V = rng.standard_normal((n_values, dim))
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    t0 = time.perf_counter()
    ours = decodability(V)
    t_ours = time.perf_counter() - t0
    if admm_values is None:
        admm_values = n_values if device.startswith("cuda") else 128
    subset = np.arange(min(n_values, admm_values))
    t0 = time.perf_counter()
    dual, primal = inhouse_admm_decodability(V, iterations=iterations, device=device, rows=subset)
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()
    t_admm_measured = time.perf_counter() - t0
    t_admm = t_admm_measured * n_values / len(subset)
    return {
        "name": "fact_mlp_decodability",
        "device": device,
        "shape": f"n_V={n_values} d={dim}",
        "dtype": "float64",
        "exact_s": t_ours,
        "baseline": "in-house ADMM (this benchmark's own; not the public reference code)",
        "admm_values_timed": len(subset),
        "admm_measured_s": t_admm_measured,
        "admm_s": t_admm,
        "speedup": t_admm / t_ours,
        "target_speedup": 30.0,
        "exact_rho": ours.rho,
        "exact_certificate_gap": ours.gap,
        "admm_iterations": iterations,
        "admm_rho_dual": float(dual.min()),
        "admm_rho_primal": float(primal.min()),
        "admm_max_gap": float(np.max(dual - primal)),
        "admm_max_abs_error": float(np.max(np.abs(dual - ours.per_value[subset]))),
    }


_BUILD_SCRIPT = """
import json, math, resource, sys, time
import numpy as np
from constructions.fact_mlp.facts import decode_numpy, fact_set
from constructions.fact_mlp.large import build_large
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
F, n_v, d, seed = (int(a) for a in sys.argv[1:5])
facts = fact_set(F, n_v, d, np.random.default_rng(seed))
c0, w0 = cpu(), time.perf_counter()
mlp = build_large(facts.keys, facts.values, facts.fact_map, seed=seed)
c1, w1 = cpu(), time.perf_counter()
out = mlp.forward(facts.keys)
acc, margin = decode_numpy(out, facts.values, facts.fact_map)
err = float(np.max(np.abs(mlp.code(facts.keys) - mlp.info["value_codes"][facts.fact_map])))
c2, w2 = cpu(), time.perf_counter()
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        peak = int(line.split()[1]) * 1024
print(json.dumps({"build_cpu_s": c1 - c0, "build_wall_s": w1 - w0, "verify_cpu_s": c2 - c1,
                  "verify_wall_s": w2 - w1, "peak_rss_bytes": peak, "n_params": mlp.n_params,
                  "n_params_relu_form": mlp.n_params_relu, "n_buckets": mlp.n_buckets,
                  "accuracy": acc, "min_margin": margin, "max_code_error": err,
                  "bits_per_param": F * math.log2(n_v) / mlp.n_params}))
"""


@bench_case("fact_mlp_build")
def bench_fact_mlp_build(
    device: str = "cpu", log10_facts=(3, 4, 5, 6), n_values: int = 1024, dim: int = 64, seed: int = 0
) -> dict:
    """Build + verify the bucketed builder (:func:`constructions.fact_mlp.large.build_large`) at
    F = 10^3 .. 10^6 (d = 64, n_V = 1024, spherical), each F in a fresh process: CPU and wall
    seconds of the build (decodability included) and of the verification (forward on every key,
    argmax decode against all n_V values, code error), peak resident memory of the process
    (VmHWM, inputs included), parameters, parameters per fact against the joint construction's
    (formula :func:`theory.fact_mlp.bounds.construction_params_unique` at m_c = d), bits per parameter
    F log2 n_V / P, accuracy and minimum margin. CPU only (numpy); the 10^6 row is marked slow.
    Targets: F = 10^5 under 2 min, 10^6 under 15 min, peak under 8 GB."""
    import json as _json
    import subprocess
    import sys

    from theory.fact_mlp.bounds import construction_params_unique

    out = {
        "name": "fact_mlp_build",
        "device": "cpu",
        "shape": f"d={dim} n_V={n_values} m_c={dim}",
        "dtype": "float64",
        "note": "one process per F; cpu seconds are user+system of that process",
    }
    for e in log10_facts:
        F = 10 ** int(e)
        res = subprocess.run(
            [sys.executable, "-c", _BUILD_SCRIPT, str(F), str(n_values), str(dim), str(seed)],
            capture_output=True,
            text=True,
            check=True,
        )
        row = _json.loads(res.stdout.strip().splitlines()[-1])
        row["params_per_fact"] = row["n_params"] / F
        row["ratio_to_joint_per_fact"] = row["n_params"] / construction_params_unique(F, dim, dim)
        row["exact"] = bool(row["accuracy"] == 1.0 and row["min_margin"] > 0 and row["max_code_error"] < 1e-8)
        row["slow"] = F >= 10**6
        for key, value in row.items():
            out[f"{key}@F=1e{int(e)}"] = value
    return out


_DECODABILITY_SCRIPT = """
import json, resource, sys, time
import numpy as np
from theory.fact_mlp.rho import decodability
n, d, workers = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
V = rng.standard_normal((n, d))
V /= np.linalg.norm(V, axis=1, keepdims=True)
r0, w0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
res = decodability(V, workers=workers)
r1, w1 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        peak = int(line.split()[1]) * 1024
print(json.dumps({"wall_s": w1 - w0, "user_s": r1.ru_utime - r0.ru_utime, "sys_s": r1.ru_stime - r0.ru_stime,
                  "workers_cpu_s": c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime,
                  "workers_peak_rss_bytes": c1.ru_maxrss * 1024, "peak_rss_bytes": peak, "rho": res.rho, "certificate_gap": res.gap,
                  "working_set_mean": float(res.working_set.mean())}))
"""


@bench_case("fact_mlp_decodability_scale")
def bench_decodability_scale(
    device: str = "cpu", sizes=((100_000, 64), (10_000, 1024)), workers: int = 2
) -> dict:
    """Exact decodability (certificate in float64) at the full-scale sizes, each in a
    fresh process (spherical values, seed 0): wall, user and system seconds, peak resident memory
    (VmHWM, inputs included), rho and the certificate gap, with the machine's load average and the
    BLAS threads it ran with. Targets: n_V = 10^5, d = 64 under 120 s; 10^4, d = 1024 under 60 s
    (on 2 CPU cores; ``workers`` processes on the screened path, which n_V = 10^5 takes; the
    held-Gram path of 10^4 x 1024 runs in one). Minutes per row on a loaded machine."""
    import json as _json
    import os
    import subprocess
    import sys

    from verify.bench.core import load_average

    targets = {(100_000, 64): 120.0, (10_000, 1024): 60.0}
    out = {
        "name": "fact_mlp_decodability_scale",
        "device": "cpu",
        "dtype": "float64 (float32 screening where n_V >= 4096 and the Gram matrix is not held)",
        "omp_threads": os.environ.get("OMP_NUM_THREADS", "default"),
        "workers": int(workers),
        "note": "one process per size; user/sys: that process; workers_cpu_s: its forked workers",
    }
    for n, d in sizes:
        load = load_average()
        res = subprocess.run(
            [sys.executable, "-c", _DECODABILITY_SCRIPT, str(n), str(d), str(workers)],
            capture_output=True,
            text=True,
            check=True,
        )
        row = _json.loads(res.stdout.strip().splitlines()[-1])
        row["load_before"], row["load_after"] = load, load_average()
        row["target_s"] = targets.get((int(n), int(d)))
        for key, value in row.items():
            out[f"{key}@n_V={n},d={d}"] = value
    return out
