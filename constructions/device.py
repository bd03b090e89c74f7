"""Device choice, made once: ``--device``, else ``RECALL_DEVICE``, else cuda when available, else cpu.

Library code never hard-codes a cuda call; it receives a device string from here.
"""

from __future__ import annotations

import contextlib
import os

VALID = ("auto", "cpu", "cuda")


def resolve_device(requested: str | None = None, name: str = "--device") -> str:
    """Return "cpu" or "cuda" (or "cuda:N"). An unknown value (a ValueError), one that is not a
    string (a TypeError), or cuda without a GPU, fails loudly, naming ``name`` (the flag or
    parameter it came from) or RECALL_DEVICE.

    >>> resolve_device("cpu")
    'cpu'
    >>> resolve_device("tpu", "device")
    Traceback (most recent call last):
    ...
    ValueError: device='tpu' is not a device; expected one of ('auto', 'cpu', 'cuda')
    """
    source = name
    if requested is None or requested == "auto":
        env = os.environ.get("RECALL_DEVICE")
        if env:
            requested, source = env, "RECALL_DEVICE"
        else:
            requested = "auto"
    if not isinstance(requested, str):
        raise TypeError(
            f"{source}={requested!r} must be a device name, one of {VALID}, not {type(requested).__name__}"
        )
    requested = requested.strip().lower()
    base, _, index = requested.partition(":")
    if base not in VALID or (index and (base != "cuda" or not index.isdigit())):
        raise ValueError(
            f"{source}={requested!r} is not a device; expected one of {VALID}"
            + (" (or cuda:N)" if index else "")
        )
    import torch

    if base == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if base == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"{source}={requested!r} but no CUDA device is available here")
    return requested


def default_dtype(device: str) -> str:
    """float64 on CPU (exact theory checks), float32 on GPU (tolerances stated at each check)."""
    return "float64" if device == "cpu" else "float32"


@contextlib.contextmanager
def one_thread():
    """Run the block on one intra-op torch thread, restoring the caller's setting afterwards.

    For small float32 training loops whose result must not depend on the machine's thread count:
    the order of a threaded reduction can move the last bits of a loss, and a search that stops at
    the first storing step can then land on a different size (measured for the chapters_bank
    search at F = 64: C* [16, 8, 4] at one thread against [8, 8, 4] at two, seed 0)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
