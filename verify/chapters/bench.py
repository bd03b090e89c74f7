"""``python -m verify bench chapters_memory``: routed against dense memory attention (Mixture of
Chapters, 2603.21096) at bank sizes 2^12..2^18 tokens, d = 64, forward + backward, with the FLOP
ratio of :func:`theory.chapters.flops.flops_memory_attention` beside the measured time ratio.
Three variants: dense (attention over the whole bank), routed with the dense bank gradient of
plain indexing, and routed with the sparse bank gradient (``routed_sparse``, issue 17 item 2).
Every step starts from ``bank.grad = None`` (as after ``zero_grad(set_to_none=True)``). Times are
medians over ``pairs`` interleaved rounds of the three variants; ratios are medians of per-round
ratios, with their range.
Exploratory: no acceptance threshold (spec §7, timing note).
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

from verify.bench import bench_case, interleaved_times, ratio_summary

_PEAK_SCRIPT = """
import json, sys
from verify.chapters.bench import _layer_and_inputs, routed_step, routed_sparse_step, dense_step
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

    gen = torch.Generator().manual_seed(0)
    n_chapters = bank_tokens // tokens_per_chapter
    layer = MemoryLayer(d_model, n_heads, n_chapters, 1, top_k, device=device)
    with torch.no_grad():
        for p in layer.parameters():
            p.copy_(torch.randn(p.shape, generator=gen).to(device) * 0.02)
    bank = (torch.randn(bank_tokens, d_model, generator=gen) * 0.02).to(device).requires_grad_()
    hidden = torch.randn(batch, seq_len, d_model, generator=gen).to(device).requires_grad_()
    return layer, bank, hidden


def routed_step(layer, bank, hidden):
    """Forward + backward of routed memory attention: router, gather, weighting, attention; the
    bank gradient is dense (bank-sized), as plain indexing writes it."""
    bank.grad = None  # as after optimizer.zero_grad(set_to_none=True): each step allocates it
    layer.sparse_bank_grad = False
    read, _ = layer(hidden, hidden, bank)
    read.sum().backward()


def routed_sparse_step(layer, bank, hidden):
    """The same forward + backward with the sparse bank gradient of
    :func:`constructions.chapters.layer.gather_chapters` (only the selected chapters' rows)."""
    bank.grad = None
    layer.sparse_bank_grad = True
    try:
        read, _ = layer(hidden, hidden, bank)
        read.sum().backward()
    finally:
        layer.sparse_bank_grad = False


def dense_step(layer, bank, hidden):
    """Forward + backward of memory attention over the whole (RMS-normalised) bank."""
    from constructions.chapters.layer import rms_normalise

    bank.grad = None
    normed = rms_normalise(bank)
    att = layer.attention
    keys = att.wk(normed).expand(hidden.shape[0], -1, -1)
    values = att.wv(normed).expand(hidden.shape[0], -1, -1)
    att(hidden, keys, values).sum().backward()


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
) -> dict:
    import torch

    from theory.chapters.flops import flops_memory_attention

    sync = torch.cuda.synchronize if str(device).startswith("cuda") else (lambda: None)
    rows = []
    for log2 in log2_sizes:
        n = 2 ** int(log2)
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
        steps = {"routed": routed_step, "routed_sparse": routed_sparse_step, "dense": dense_step}

        def runner(step):
            def run():
                step(layer, bank, hidden)
                sync()

            return run

        times = interleaved_times({k: runner(v) for k, v in steps.items()}, pairs=pairs)
        for name in steps:
            row[f"{name}_s"] = float(np.median(times[name]))
            if str(device) == "cpu":
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
                runner(steps[name])()
                row[f"{name}_peak_bytes"] = int(torch.cuda.max_memory_allocated())
        for name in ("routed", "routed_sparse"):
            summary = ratio_summary(times["dense"], times[name])
            row[f"time_ratio_dense_over_{name}"] = summary["median"]
            row[f"time_ratio_dense_over_{name}_min_max"] = [summary["min"], summary["max"]]
        rows.append(row)
    out = {
        "name": "chapters_memory",
        "device": device,
        "shape": f"d={d_model} heads={n_heads} L={seq_len} B={batch} T={tokens_per_chapter} "
        f"k={top_k}+1 shared, forward+backward, float32",
    }
    for row in rows:  # flat keys, one group per bank size, so the table stays readable
        tag = f"@2^{int(row['bank_tokens']).bit_length() - 1}"
        for key, value in row.items():
            if key != "bank_tokens":
                out[key + tag] = value
    return out
