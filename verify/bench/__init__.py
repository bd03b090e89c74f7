"""``python -m verify bench``: timings of the measurement kernels and of the registry, in a room of
their own (docs/performance.md). Benchmarks, not tests: they print numbers and assert nothing.

:mod:`verify.bench.core` holds the bench registry (:data:`BENCHES`, :func:`bench_case`), the timing
helpers and the ``measure`` rows; :mod:`verify.bench.fact_mlp` and :mod:`verify.bench.chapters`
add their areas' kernels, :mod:`verify.bench.profile` the ``registry`` row and a record's time
profile. :func:`load_benches` imports them all, so every row is registered.
"""

from __future__ import annotations

from theory.registry import Registry
from verify.bench.core import (
    BENCHES,
    EXPLICIT_ONLY,
    bench_case,
    bench_measure,
    bench_measure_chunks,
    best_time,
    interleaved_times,
    load_average,
    peak_extra_bytes,
    ratio_summary,
)

__all__ = [
    "BENCHES",
    "EXPLICIT_ONLY",
    "bench_case",
    "bench_measure",
    "bench_measure_chunks",
    "best_time",
    "interleaved_times",
    "load_average",
    "load_benches",
    "peak_extra_bytes",
    "ratio_summary",
]


def load_benches() -> Registry:
    """Import every bench module, so each registers its rows; returns :data:`BENCHES`.

    >>> {"measure", "registry"} <= set(load_benches())
    True
    """
    import verify.bench.chapters  # noqa: F401
    import verify.bench.fact_mlp  # noqa: F401
    import verify.bench.profile  # noqa: F401

    return BENCHES
