"""The decode kernel: accuracy and decoding margin over F queries and V candidates, in chunks.

It lives in the lowest torch layer: ``verify.measure`` re-exports it and
``constructions.fact_mlp.facts.decode_numpy`` calls it, so there is one kernel.

For queries H (F x d), candidates U (V x d) and targets t (F,), the logits are z = H U^T.
The decoding margin of query i is z[i, t_i] - max_{j != t_i} z[i, j].

**The tie rule** (one definition, used by this kernel, :func:`predict`, :func:`decode_logits` and
the contracts of ``verify.fact_check``; docs/testing.md, "Ties"): a margin at most
:func:`tie_tolerance` of its row is a tie, and a tie is an error (the fact is not stored;
:func:`clears_tie` is the test). The tolerance is ``TIE_ULPS * eps(dtype) * scale``, where
``scale`` bounds the magnitude of the row's logits: ``||h_i|| * max_j ||u_j||`` here (Cauchy-
Schwarz), ``max_j |z_ij|`` for logits given directly (:func:`logit_tolerances`). The reason: two
candidates whose exact scores are equal come out of floating-point arithmetic with a margin of a
few ulps of the logits, of either sign, so a margin that small cannot tell a stored fact from a
tie; a bound on the rounding error of a dot product is a small multiple of eps * d * ||h|| ||u||,
and 64 ulps of the norm product covers d up to a few thousand in practice (1.4e-14 for unit
float64 vectors, 7.6e-6 for float32, 0.0625 for float16, 0.5 for bfloat16). So ties count as
errors even when rounding leaves them a margin of +1e-16. The full F x V logit matrix is never
held: rows are processed ``chunk`` at a time, with one reused logits buffer (extra memory: one
chunk).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

#: The tie rule's width in units of the dtype's eps (module docstring): a margin within
#: ``TIE_ULPS * eps(dtype) * scale`` of zero is a tie.
TIE_ULPS = 64
#: One chunk of logits: 16 MiB (256 float32 rows at V = 16384). Chosen by `python -m verify bench
#: measure_chunks` on the shared 2-core CPU machine (load average ~12, one thread, 7 interleaved
#: rounds, F = V = 16384, d = 128): median matmul / chunked 0.71 at 8 MiB, 0.80 at 16 MiB, 0.77
#: at 32 MiB, 0.76 at 64 MiB; reduction overhead over the bare chunk GEMMs 3% / 0% / 5% / 20%.
#: The float32 CPU kernel now runs transposed chunks (:func:`_transposed`); interleaved CPU-time
#: rounds (load 11-12, same shape): 0.885 at 16 MiB, 0.94 at 32 MiB, the row layout 0.81 at 16 MiB.
DEFAULT_CHUNK_BYTES = 16 * 2**20


@dataclass(frozen=True)
class Decoding:
    accuracy: float
    min_margin: float
    n_correct: int
    n_queries: int
    margins: np.ndarray | None  # per-query margins (float64) when requested
    tie_tolerance: float = 0.0  # largest per-row tolerance a margin had to exceed to count as correct

    def as_dict(self) -> dict:
        return {
            "accuracy": self.accuracy,
            "min_margin": self.min_margin,
            "n_correct": self.n_correct,
            "n_queries": self.n_queries,
        }


def _as_tensor(x, device=None, dtype=None) -> torch.Tensor:
    if isinstance(x, np.ndarray):
        x = torch.from_numpy(np.ascontiguousarray(x))
    if not isinstance(x, torch.Tensor):
        x = torch.as_tensor(x)
    return x.to(device=device, dtype=dtype) if (device or dtype) else x


def rounding_eps(dtype: Any) -> float:
    """The machine epsilon of ``dtype`` (a torch or numpy dtype, or a Python type) that the tie
    rule scales by: 2^-52 for float64, 2^-23 for float32, 2^-10 for float16, 2^-7 for bfloat16;
    0 for integer and boolean dtypes (their arithmetic is exact, so only an exact tie is a tie).
    Anything else (a complex or object dtype) is a TypeError naming ``dtype``.

    >>> import numpy as np, torch
    >>> rounding_eps(np.float64) == 2.0**-52, rounding_eps(torch.float32) == 2.0**-23
    (True, True)
    >>> rounding_eps(torch.bfloat16), rounding_eps(np.int64)
    (0.0078125, 0.0)
    """
    if isinstance(dtype, torch.dtype):
        if dtype.is_floating_point:
            return float(torch.finfo(dtype).eps)
        if dtype.is_complex:
            raise TypeError(f"dtype={dtype} must be a real dtype (float, integer or bool), not complex")
        return 0.0
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype={dtype!r} must be a torch or numpy dtype") from None
    if dt.kind == "f":
        return float(np.finfo(dt).eps)
    if dt.kind in "iub":
        return 0.0
    raise TypeError(f"dtype={dt} must be a real dtype (float, integer or bool)")


def tie_tolerance(scale: Any, dtype: Any) -> Any:
    """The tie rule's tolerance (module docstring): ``TIE_ULPS * eps(dtype) * scale``, where
    ``scale`` bounds the magnitude of the row's logits (a float, a numpy array or a torch tensor;
    the result has its type). A margin at most this is a tie, and a tie is an error
    (:func:`clears_tie`).

    >>> import numpy as np
    >>> tie_tolerance(1.0, np.float64), tie_tolerance(1.0, np.float32)
    (1.4210854715202004e-14, 7.62939453125e-06)
    >>> tie_tolerance(np.array([1.0, 1e6]), np.float64).tolist()  # it scales with the logits
    [1.4210854715202004e-14, 1.4210854715202004e-08]
    """
    return TIE_ULPS * rounding_eps(dtype) * scale


def clears_tie(margins: Any, tolerances: Any) -> Any:
    """The tie rule's test: True where a margin exceeds its tolerance (the fact is stored), False
    for a tie or a loss (``margins <= tolerances``) and for a NaN margin. Arrays or tensors
    (elementwise, broadcast).

    >>> import numpy as np
    >>> clears_tie(np.array([1.0, 1e-16, -1e-16, 0.0, np.nan]), tie_tolerance(1.0, np.float64)).tolist()
    [True, False, False, False, False]
    """
    return margins > tolerances


#: Where a model's per-fact tolerances come from when they are :func:`kernel_tolerances` (the
#: ``tie_source`` of the toolkit's models, read by ``verify.fact_check.check_fact_model``).
KERNEL_TIE_SOURCE = (
    "the decode kernel's: tie_tolerance(||h_i|| max_j ||u_j||, dtype) (constructions/decode.py)"
)


def kernel_tolerances(queries: Any, candidates: Any) -> np.ndarray:
    """The tie tolerance :func:`decode` and :func:`predict` give each query (float64, one per
    row of ``queries``): ``tie_tolerance(max_j ||u_j||, dtype) * ||h_i||`` in the queries' dtype
    (the candidates are cast to it, as the kernel casts them), computed as the kernel computes it.

    >>> import numpy as np
    >>> kernel_tolerances(np.array([[3.0, 4.0], [0.0, 1.0]]), np.eye(2)).tolist()
    [7.105427357601002e-14, 1.4210854715202004e-14]
    """
    H = _as_tensor(queries)
    U = _as_tensor(candidates, device=H.device, dtype=H.dtype)
    unit = tie_tolerance(float(U.norm(dim=1).max()) if U.shape[0] else 0.0, H.dtype)
    return (unit * H.norm(dim=1).to(torch.float64)).cpu().numpy()


def logit_tolerances(logits: Any, dtype: Any = None) -> np.ndarray:
    """The tie tolerance of each row of ``logits`` (F, V) given directly, without the queries and
    candidates they came from: ``tie_tolerance(max_j |z_ij|, dtype)`` (float64), the logits'
    own magnitude standing for the kernel's bound ``||h_i|| max_j ||u_j||``. ``dtype``: the
    dtype the logits were computed in (default: theirs; give the coarser one when they were
    cast up after the computation).

    >>> import numpy as np
    >>> logit_tolerances(np.array([[1.0, -3.0], [0.5, 0.25]])).tolist()
    [4.263256414560601e-14, 7.105427357601002e-15]
    >>> logit_tolerances(np.array([[1.0, -3.0]], dtype=np.float32)).tolist()
    [2.288818359375e-05]
    """
    z = _as_tensor(logits)
    if z.ndim != 2:
        raise ValueError(f"logits must be a 2-D array (facts, candidates), got shape {tuple(z.shape)}")
    rounding = z.dtype if dtype is None else dtype
    scale = (
        z.to(torch.float64).abs().amax(dim=1) if z.shape[1] else torch.zeros(z.shape[0], dtype=torch.float64)
    )
    return tie_tolerance(scale, rounding).cpu().numpy()


@dataclass(frozen=True)
class LogitDecoding:
    """What :func:`decode_logits` gives for each fact: ``decoded`` (int64, -1 for a tie),
    ``margins`` (float64) and ``tolerances`` (float64, :func:`logit_tolerances`); a fact is
    stored exactly when ``decoded == target``, which is ``clears_tie(margins, tolerances)``."""

    decoded: np.ndarray
    margins: np.ndarray
    tolerances: np.ndarray


@torch.no_grad()
def decode_logits(logits: Any, targets: Any, *, dtype: Any = None) -> LogitDecoding:
    """The tie rule applied to logits given directly (F, V): the margin of each fact (its
    target's logit minus the best other, in float64), its tolerance (:func:`logit_tolerances`,
    ``dtype`` as there) and its decoded candidate (the argmax when the two best logits differ by
    more than the tolerance, else -1), so that ``decoded == target`` exactly when the margin
    clears the tolerance. Fewer than 2 candidates, targets outside [0, V) or of another length are
    a ValueError.

    >>> import numpy as np
    >>> z = np.array([[1.0, 0.5], [1.0, 1.0 + 2**-52], [1.0, 1.0 - 2**-53]])  # rounding-level ties
    >>> res = decode_logits(z, [0, 0, 0])
    >>> res.decoded.tolist(), bool(res.margins[2] > 0)
    ([0, -1, -1], True)
    """
    z = _as_tensor(logits)
    t = _as_tensor(targets, device=z.device).long()
    if z.ndim != 2:
        raise ValueError(f"logits must be a 2-D array (facts, candidates), got shape {tuple(z.shape)}")
    n, v = z.shape
    if v < 2:
        raise ValueError("a margin needs at least 2 candidates")
    if t.shape != (n,):
        raise ValueError(f"targets shape {tuple(t.shape)} must be ({n},)")
    if n and (t.min() < 0 or t.max() >= v):
        raise ValueError(f"targets must lie in [0, {v})")
    tolerances = torch.as_tensor(logit_tolerances(z, dtype), device=z.device)
    z64 = z.to(torch.float64)
    correct = z64.gather(1, t[:, None]).squeeze(1)
    others = z64.clone()
    others.scatter_(1, t[:, None], float("-inf"))
    margins = correct - others.amax(dim=1)
    top = torch.topk(z64, 2, dim=1)
    gap = top.values[:, 0] - top.values[:, 1]
    decoded = torch.where(
        clears_tie(gap, tolerances), top.indices[:, 0], torch.full_like(top.indices[:, 0], -1)
    )
    return LogitDecoding(decoded.cpu().numpy(), margins.cpu().numpy(), tolerances.cpu().numpy())


def chunk_rows(n_candidates: int, itemsize: int, chunk_bytes: int | None = None) -> int:
    chunk_bytes = DEFAULT_CHUNK_BYTES if chunk_bytes is None else chunk_bytes
    return max(1, min(65536, chunk_bytes // max(1, n_candidates * itemsize)))


def _transposed(H: torch.Tensor) -> bool:
    """float32 on the CPU: the chunk's logits are computed transposed, U @ H_chunk^T (V x r), and
    reduced over candidates by a pairwise maximum. With MKL this GEMM packs only the
    small chunk operand per call (the other layout re-packs all of U per chunk). Its logits were
    bitwise those of H @ U^T on the AMD EPYC machine it was tuned on; on an Intel Xeon they differ
    in the last bits (3.6e-7 at d = 3), so tests/test_decode_layout.py checks the margins against
    the row layout to float32 rounding and every correct/incorrect decision exactly (a maximum is
    exact in any order; the tie tolerance covers the rounding). float64 and
    other devices keep the row layout (float64 GEMMs of the two layouts differ in the last bit), and
    so do several threads (measured at 2 threads on the loaded 2-core machine: the row layout 0.36,
    transposed 0.27 of the full matmul; the per-chunk parallel regions dominate there)."""
    return H.dtype == torch.float32 and H.device.type == "cpu" and torch.get_num_threads() == 1


def _column_max(out: torch.Tensor) -> torch.Tensor:
    """Max over dim 0 of a (V, r) buffer by halving in place (elementwise maxima on contiguous
    halves; a reduction over the strided dim 0 costs ~2x more on the CPU). Destroys ``out``."""
    n = out.shape[0]
    while n > 1:
        h = n // 2
        torch.maximum(out[:h], out[n - h : n], out=out[:h])
        n -= h
    return out[0]


def chunk_gemms(queries: torch.Tensor, candidates: torch.Tensor, rows: int) -> None:
    """The GEMMs :func:`decode` runs for ``rows`` queries per chunk, same layout, no reduction
    (the benchmark's reference for the reduction overhead)."""
    H, U = queries, candidates
    n_q, n_c = H.shape[0], U.shape[0]
    rows = min(rows, max(n_q, 1))
    buf = torch.empty(rows * n_c, dtype=H.dtype, device=H.device)
    for start in range(0, n_q, rows):
        stop = min(start + rows, n_q)
        if _transposed(H):
            torch.mm(U, H[start:stop].t(), out=buf[: n_c * (stop - start)].view(n_c, stop - start))
        else:
            torch.mm(H[start:stop], U.t(), out=buf[: n_c * (stop - start)].view(stop - start, n_c))


@torch.no_grad()
def decode(
    queries, candidates, targets, *, chunk: int | None = None, return_margins: bool = False
) -> Decoding:
    """Chunked argmax accuracy and margins (ties are errors). Raises ValueError on NaN or shape errors."""
    H = _as_tensor(queries)
    U = _as_tensor(candidates, device=H.device, dtype=H.dtype)
    t = _as_tensor(targets, device=H.device).long()
    if H.ndim != 2 or U.ndim != 2 or H.shape[1] != U.shape[1]:
        raise ValueError(
            f"queries {tuple(H.shape)} and candidates {tuple(U.shape)} must be "
            "(F, d) and (V, d) with the same d"
        )
    if t.shape != (H.shape[0],):
        raise ValueError(f"targets shape {tuple(t.shape)} must be ({H.shape[0]},)")
    n_queries, n_cand = H.shape[0], U.shape[0]
    if n_cand < 2:
        raise ValueError("a margin needs at least 2 candidates")
    if n_queries and (t.min() < 0 or t.max() >= n_cand):
        raise ValueError(f"targets must lie in [0, {n_cand})")
    if torch.isnan(H).any() or torch.isnan(U).any():
        raise ValueError("NaN in queries or candidates")
    transposed = _transposed(H)
    rows = chunk or chunk_rows(n_cand, H.element_size())
    rows = min(rows, max(n_queries, 1))
    buf = torch.empty(rows * n_cand, dtype=H.dtype, device=H.device)
    Ut = U.t()
    margins = torch.empty(n_queries, dtype=torch.float64, device=H.device)
    tols = torch.empty(n_queries, dtype=torch.float64, device=H.device)
    u_scale = float(U.norm(dim=1).max()) if n_cand else 0.0
    unit = tie_tolerance(u_scale, H.dtype)  # the tie rule, scale ||h_i|| max_j ||u_j||
    neg_inf = torch.tensor(float("-inf"), dtype=H.dtype, device=H.device)
    for start in range(0, n_queries, rows):
        stop = min(start + rows, n_queries)
        r = stop - start
        if transposed:  # logits^T (V x r): one packing of the small operand per chunk
            out = buf[: n_cand * r].view(n_cand, r)
            torch.mm(U, H[start:stop].t(), out=out)
            cols = torch.arange(r, device=H.device)
            tgt = t[start:stop]
            correct = out[tgt, cols]
            out.index_put_((tgt, cols), neg_inf.expand(r))
            best_other = _column_max(out)
        else:
            out = buf[: r * n_cand].view(r, n_cand)
            torch.mm(H[start:stop], Ut, out=out)
            idx = t[start:stop, None]
            correct = out.gather(1, idx).squeeze(1)
            out.scatter_(1, idx, neg_inf.expand(r, 1))
            best_other = out.amax(dim=1)
        margins[start:stop] = (correct - best_other).to(torch.float64)
        tols[start:stop] = unit * H[start:stop].norm(dim=1).to(torch.float64)
    if torch.isnan(margins).any():
        raise ValueError("NaN in the logits")
    n_correct = int(clears_tie(margins, tols).sum())
    return Decoding(
        accuracy=n_correct / max(n_queries, 1),
        min_margin=float(margins.min()) if n_queries else float("inf"),
        n_correct=n_correct,
        n_queries=n_queries,
        margins=margins.cpu().numpy() if return_margins else None,
        tie_tolerance=float(tols.max()) if n_queries else 0.0,
    )


@torch.no_grad()
def decode_naive(queries, candidates, targets) -> Decoding:
    """Reference: the full F x V logits at once (used by tests and the benchmark only)."""
    H = _as_tensor(queries)
    U = _as_tensor(candidates, device=H.device, dtype=H.dtype)
    t = _as_tensor(targets, device=H.device).long()
    z = H @ U.t()
    correct = z.gather(1, t[:, None]).squeeze(1)
    z.scatter_(1, t[:, None], float("-inf"))
    margins = (correct - z.amax(dim=1)).double()
    tols = tie_tolerance(float(U.norm(dim=1).max()), H.dtype) * H.norm(dim=1).double()
    n_correct = int(clears_tie(margins, tols).sum())
    return Decoding(
        n_correct / len(t),
        float(margins.min()),
        n_correct,
        len(t),
        margins.cpu().numpy(),
        float(tols.max()) if len(t) else 0.0,
    )


@torch.no_grad()
def predict(
    queries: np.ndarray | torch.Tensor, candidates: np.ndarray | torch.Tensor, *, chunk: int | None = None
) -> np.ndarray:
    """The decoded candidate of every query, argmax_j <h_i, u_j>, in chunks; -1 for a tie.

    A query whose two largest logits lie within the tie tolerance of :func:`decode`
    (:func:`tie_tolerance` at scale ``||h_i|| * max_j ||u_j||``) has no decoded candidate and gets -1, so the
    prediction equals the target exactly when :func:`decode` counts the query as correct.
    The chunks and their layout are those of :func:`decode` (one reused logits buffer).

    >>> import numpy as np
    >>> predict(np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]), np.eye(2)).tolist()
    [0, 1, -1]
    """
    H = _as_tensor(queries)
    U = _as_tensor(candidates, device=H.device, dtype=H.dtype)
    if H.ndim != 2 or U.ndim != 2 or H.shape[1] != U.shape[1]:
        raise ValueError(
            f"queries {tuple(H.shape)} and candidates {tuple(U.shape)} must be "
            "(F, d) and (V, d) with the same d"
        )
    n_queries, n_cand = H.shape[0], U.shape[0]
    if n_cand < 2:
        raise ValueError("a prediction needs at least 2 candidates")
    if torch.isnan(H).any() or torch.isnan(U).any():
        raise ValueError("NaN in queries or candidates")
    transposed = _transposed(H)
    rows = chunk or chunk_rows(n_cand, H.element_size())
    rows = min(rows, max(n_queries, 1))
    buf = torch.empty(rows * n_cand, dtype=H.dtype, device=H.device)
    out_idx = torch.empty(n_queries, dtype=torch.int64, device=H.device)
    unit = tie_tolerance(float(U.norm(dim=1).max()), H.dtype)
    for start in range(0, n_queries, rows):
        stop = min(start + rows, n_queries)
        r = stop - start
        if transposed:
            out = buf[: n_cand * r].view(n_cand, r)
            torch.mm(U, H[start:stop].t(), out=out)
            top = torch.topk(out, 2, dim=0)
            best, second, idx = top.values[0], top.values[1], top.indices[0]
        else:
            out = buf[: r * n_cand].view(r, n_cand)
            torch.mm(H[start:stop], U.t(), out=out)
            top = torch.topk(out, 2, dim=1)
            best, second, idx = top.values[:, 0], top.values[:, 1], top.indices[:, 0]
        if torch.isnan(best).any():
            raise ValueError("NaN in the logits")
        tol = unit * H[start:stop].norm(dim=1).to(torch.float64)
        gap = (best - second).to(torch.float64)
        out_idx[start:stop] = torch.where(clears_tie(gap, tol), idx, torch.full_like(idx, -1))
    return out_idx.cpu().numpy()
