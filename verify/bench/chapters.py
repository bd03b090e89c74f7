"""``python -m verify bench chapters_memory``: routed against dense memory attention (Mixture of
Chapters, 2603.21096; the layer is described in docs/chapters.md) at bank sizes 2^12..2^18
tokens, d = 64, forward + backward, with the FLOP ratio of
:func:`theory.chapters.flops.flops_memory_attention` beside the measured time ratios.

Variants, each one forward + backward of one memory read (64 queries, batch 1, float32):

* ``dense``: attention over the whole RMS-normalised bank;
* ``routed``: router over all chapters, gather of the selected chapters' rows, weighting,
  attention; the bank gradient is dense (bank-sized), as plain indexing writes it and as the
  training loops use it;
* ``routed_sparse``: the same step with the sparse bank gradient of
  :func:`constructions.chapters.memory.gather_chapters` (only the selected chapters' rows): the
  routed step's own work, without allocating and zero-filling a bank-sized buffer.

Every step starts with all gradients set to None (bank, hidden state and the layer's parameters,
as after ``zero_grad(set_to_none=True)``) and sets them to None again before it returns: each step
allocates and frees its own gradients, and no step is charged for freeing another variant's
(bank-sized) buffers.

How it is measured: on CPU the timed region runs with ``torch.set_num_threads(threads)``
(default 1, restored afterwards). One thread is the fair setting for this comparison: the routed
step is a chain of ~250 small operator calls that a second thread cannot speed up, while on a
shared machine every parallel region of a two-thread pool waits for, and spins on, a descheduled
worker (routed steps of ~300 ms instead of ~3 ms were seen); with one thread both sides do the
one-core work the FLOP ratio counts (the dense step's CPU seconds are about the same with one or
two threads). The three variants run in turn in each of ``pairs`` interleaved rounds (order
rotating, one warm-up round), timed by wall clock and by process CPU time
(``time.process_time``); each row states both medians per variant, each variant's per-round CPU
times, the medians and ranges of the per-round ratios on both clocks, and the 1-minute load
average at the start and end of the row. CPU time does not count the time the process waits for
a core, so it is the clock that load from other processes disturbs least.

Verdict: ``ratio_target_met@2^K`` at the largest bank measured (2^18 by default) is true when the
median over rounds of the per-round CPU-time ratio dense / routed_sparse reaches ``target_ratio``
(200; the FLOP ratio there is ~748). The dense-gradient ``routed`` ratios are stated beside it:
that step also allocates, zero-fills and frees a bank-sized gradient (64 MiB at 2^18; above
glibc's largest mmap threshold, 32 MiB, so every step maps fresh pages and faults them in), which
caps its ratio well below the FLOP ratio.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from constructions.seeding import torch_generator
from verify.bench.core import bench_case, interleaved_times, ratio_summary

_PEAK_SCRIPT = """
import json, sys
from verify.bench.chapters import _layer_and_inputs, routed_step, routed_sparse_step, dense_step
args = json.loads(sys.argv[1])
step = {"routed": routed_step, "routed_sparse": routed_sparse_step, "dense": dense_step}[args.pop("variant")]
layer, bank, hidden = _layer_and_inputs(device="cpu", **args)
def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field):
            return int(line.split()[1]) * 1024
with open("/proc/self/clear_refs", "w") as fh:
    fh.write("5")  # reset the peak RSS (VmHWM) to the current RSS
before = status("VmRSS")
step(layer, bank, hidden)
print(status("VmHWM") - before)
"""


def peak_rss_bytes(variant, **kwargs) -> int:
    """Peak resident memory one forward+backward adds beyond its inputs, in a fresh process (CPU, Linux:
    VmHWM after resetting it through /proc/self/clear_refs; page resolution)."""
    out = subprocess.run(
        [sys.executable, "-c", _PEAK_SCRIPT, json.dumps(dict(kwargs, variant=variant))],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout.strip().splitlines()[-1])


def _layer_and_inputs(bank_tokens, d_model, n_heads, top_k, tokens_per_chapter, seq_len, batch, device):
    import torch

    from constructions.chapters.layer import MemoryLayer

    gen = torch_generator(0)
    n_chapters = bank_tokens // tokens_per_chapter
    layer = MemoryLayer(d_model, n_heads, n_chapters, 1, top_k, device=device)
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(torch.randn(p.shape, generator=gen).to(device) * 0.02)
    bank = (torch.randn(bank_tokens, d_model, generator=gen) * 0.02).to(device).requires_grad_()
    hidden = torch.randn(batch, seq_len, d_model, generator=gen).to(device).requires_grad_()
    return layer, bank, hidden


def _clear_grads(layer, bank, hidden):
    """All gradients to None, as ``zero_grad(set_to_none=True)`` does. Every step calls it first and
    last: it allocates its own gradients and frees them before it returns, so freeing a previous
    step's (possibly bank-sized) gradient is never charged to the next variant in a round."""
    bank.grad = None
    hidden.grad = None
    for p in layer.parameters():
        p.grad = None


def routed_step(layer, bank, hidden):
    """Forward + backward of routed memory attention: router, gather, weighting, attention; the
    bank gradient is dense (bank-sized), as plain indexing writes it."""
    _clear_grads(layer, bank, hidden)
    layer.sparse_bank_grad = False
    read, _ = layer(hidden, hidden, bank)
    read.sum().backward()
    _clear_grads(layer, bank, hidden)


def routed_sparse_step(layer, bank, hidden):
    """The same forward + backward with the sparse bank gradient of
    :func:`constructions.chapters.layer.gather_chapters` (only the selected chapters' rows)."""
    _clear_grads(layer, bank, hidden)
    layer.sparse_bank_grad = True
    try:
        read, _ = layer(hidden, hidden, bank)
        read.sum().backward()
    finally:
        layer.sparse_bank_grad = False
    _clear_grads(layer, bank, hidden)


def dense_step(layer, bank, hidden):
    """Forward + backward of memory attention over the whole (RMS-normalised) bank."""
    from constructions.chapters.layer import rms_normalise

    _clear_grads(layer, bank, hidden)
    normed = rms_normalise(bank)
    att = layer.attention
    keys = att.wk(normed).expand(hidden.shape[0], -1, -1)
    values = att.wv(normed).expand(hidden.shape[0], -1, -1)
    att(hidden, keys, values).sum().backward()
    _clear_grads(layer, bank, hidden)


VARIANTS = {"routed": routed_step, "routed_sparse": routed_sparse_step, "dense": dense_step}
#: the routed variant whose CPU-time ratio to ``dense`` decides ``ratio_target_met``
VERDICT_VARIANT = "routed_sparse"


def _load_1min() -> float:
    import os

    return round(os.getloadavg()[0], 2)


@bench_case("chapters_memory")
def bench_chapters_memory(
    device: str = "cpu",
    log2_sizes=range(12, 19),
    d_model=64,
    n_heads=4,
    top_k=4,
    tokens_per_chapter=64,
    seq_len=64,
    batch=1,
    pairs=7,
    threads=1,
    target_ratio=200.0,
    peak_memory=True,
) -> dict:
    """One row per bank size 2^k (flat keys ``...@2^k``). ``threads``: torch threads in the timed
    region on CPU (None: leave as is); ``peak_memory``: also measure each variant's peak memory
    (on CPU one fresh process per variant and size)."""
    import torch

    from theory.chapters.flops import flops_memory_attention

    on_cpu = not str(device).startswith("cuda")
    sync = (lambda: None) if on_cpu else torch.cuda.synchronize
    log2_sizes = [int(k) for k in log2_sizes]
    rows = []
    for log2 in log2_sizes:
        n = 2**log2
        layer, bank, hidden = _layer_and_inputs(
            n, d_model, n_heads, top_k, tokens_per_chapter, seq_len, batch, device
        )
        cfg = {
            "d_model": d_model,
            "seq_len": seq_len,
            "n_layers": 1,
            "n_heads": n_heads,
            "n_kv_heads": n_heads,
            "head_dim": d_model // n_heads,
            "d_ff": 4 * d_model,
            "vocab": 1,
            "bank_tokens": n,
            "n_chapters": n // tokens_per_chapter,
            "n_shared": 1,
            "top_k": top_k,
            "mem_layers": [0],
        }
        flop_ratio = flops_memory_attention(cfg, dense_bank=True) / flops_memory_attention(cfg)
        row = {"bank_tokens": n, "flop_ratio_dense_over_routed": flop_ratio}

        def runner(step):
            def run():
                step(layer, bank, hidden)
                sync()

            return run

        before = torch.get_num_threads()
        row["loadavg_start"] = _load_1min()
        cpu: dict = {}
        try:
            if on_cpu and threads is not None:
                torch.set_num_threads(int(threads))
            row["torch_threads"] = torch.get_num_threads()
            times = interleaved_times({k: runner(v) for k, v in VARIANTS.items()}, pairs=pairs, cpu=cpu)
        finally:
            torch.set_num_threads(before)
        row["loadavg_end"] = _load_1min()
        for name in VARIANTS:
            row[f"{name}_s"] = float(np.median(times[name]))
            row[f"{name}_cpu_s"] = float(np.median(cpu[name]))
        for name in VARIANTS:
            row[f"{name}_cpu_rounds"] = [float(t) for t in cpu[name]]
        for name in ("routed", "routed_sparse"):
            wall = ratio_summary(times["dense"], times[name])
            row[f"time_ratio_dense_over_{name}"] = wall["median"]
            row[f"time_ratio_dense_over_{name}_min_max"] = [wall["min"], wall["max"]]
            on_cpu_clock = ratio_summary(cpu["dense"], cpu[name])
            row[f"time_ratio_cpu_dense_over_{name}"] = on_cpu_clock["median"]
            row[f"time_ratio_cpu_dense_over_{name}_min_max"] = [on_cpu_clock["min"], on_cpu_clock["max"]]
        if peak_memory:
            for name in VARIANTS:
                if on_cpu:
                    row[f"{name}_peak_bytes"] = peak_rss_bytes(
                        name,
                        bank_tokens=n,
                        d_model=d_model,
                        n_heads=n_heads,
                        top_k=top_k,
                        tokens_per_chapter=tokens_per_chapter,
                        seq_len=seq_len,
                        batch=batch,
                    )
                else:
                    torch.cuda.reset_peak_memory_stats()
                    runner(VARIANTS[name])()
                    row[f"{name}_peak_bytes"] = int(torch.cuda.max_memory_allocated())
        rows.append(row)
    out = {
        "name": "chapters_memory",
        "device": device,
        "shape": f"d={d_model} heads={n_heads} L={seq_len} B={batch} T={tokens_per_chapter} "
        f"k={top_k}+1 shared, forward+backward, float32",
        "method": f"{pairs} interleaved rounds of (routed, routed_sparse, dense), order rotating, "
        f"1 warm-up round; wall and process CPU time; torch threads "
        f"{threads if on_cpu and threads is not None else 'unchanged'} in the timed region; "
        "ratios are medians of per-round ratios",
        "target_ratio": float(target_ratio),
        "ratio_verdict_variant": VERDICT_VARIANT,
        "ratio_verdict_clock": "cpu",
    }
    for row in rows:  # flat keys, one group per bank size, so the table stays readable
        tag = f"@2^{int(row['bank_tokens']).bit_length() - 1}"
        for key, value in row.items():
            if key != "bank_tokens":
                out[key + tag] = value
    if rows:
        tag = f"@2^{max(log2_sizes)}"
        ratio = out[f"time_ratio_cpu_dense_over_{VERDICT_VARIANT}{tag}"]
        out[f"ratio_target_met{tag}"] = bool(ratio >= float(target_ratio))
    return out
