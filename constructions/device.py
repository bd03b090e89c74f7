"""Device choice, made once: ``--device``, else ``RECALL_DEVICE``, else cuda when available, else cpu.

Library code never hard-codes a cuda call; it receives a device string from here.
"""

from __future__ import annotations

import os

VALID = ("auto", "cpu", "cuda")


def resolve_device(requested: str | None = None) -> str:
    """Return "cpu" or "cuda" (or "cuda:N"). An unknown value, or cuda without a GPU, fails loudly."""
    source = "--device"
    if requested is None or requested == "auto":
        env = os.environ.get("RECALL_DEVICE")
        if env:
            requested, source = env, "RECALL_DEVICE"
        else:
            requested = "auto"
    requested = requested.strip().lower()
    base = requested.split(":", 1)[0]
    if base not in VALID:
        raise ValueError(f"{source}={requested!r} is not a device; expected one of {VALID}")
    import torch

    if base == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if base == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"{source}={requested!r} but no CUDA device is available here")
    return requested


def default_dtype(device: str) -> str:
    """float64 on CPU (exact theory checks), float32 on GPU (tolerances stated at each check)."""
    return "float64" if device == "cpu" else "float32"
