"""The chapters_memory bench (verify.bench.chapters) at a tiny size: every row states wall and
process CPU time per variant, load averages, and a verdict taken from the CPU-time ratio."""

import math

import numpy as np

from verify.bench.chapters import VARIANTS, VERDICT_VARIANT, bench_chapters_memory


def _finite_positive(x) -> bool:
    return isinstance(x, float) and math.isfinite(x) and x > 0


def test_tiny_row_has_cpu_times_load_and_a_cpu_time_verdict():
    rows = [
        bench_chapters_memory(log2_sizes=[12], pairs=2, peak_memory=False),
        bench_chapters_memory(log2_sizes=[12], pairs=2, peak_memory=False, target_ratio=1e-9),
    ]
    for row in rows:
        tag = "@2^12"
        assert row["ratio_verdict_variant"] == VERDICT_VARIANT == "routed_sparse"
        assert row["ratio_verdict_clock"] == "cpu"
        assert row["torch_threads" + tag] == 1
        for name in VARIANTS:
            assert _finite_positive(row[f"{name}_s{tag}"])
            assert _finite_positive(row[f"{name}_cpu_s{tag}"])
            rounds = row[f"{name}_cpu_rounds{tag}"]
            assert len(rounds) == 2 and all(_finite_positive(t) for t in rounds)
            assert row[f"{name}_cpu_s{tag}"] == np.median(rounds)
        for key in ("loadavg_start", "loadavg_end"):
            assert isinstance(row[key + tag], float) and math.isfinite(row[key + tag]) and row[key + tag] >= 0
        dense = np.asarray(row["dense_cpu_rounds" + tag])
        for name in ("routed", "routed_sparse"):
            per_round = dense / np.asarray(row[f"{name}_cpu_rounds{tag}"])
            ratio = row[f"time_ratio_cpu_dense_over_{name}{tag}"]
            assert _finite_positive(ratio) and ratio == np.median(per_round)
            assert row[f"time_ratio_cpu_dense_over_{name}_min_max{tag}"] == [per_round.min(), per_round.max()]
            assert _finite_positive(row[f"time_ratio_dense_over_{name}{tag}"])  # wall clock, as before
        per_round = dense / np.asarray(row[f"{VERDICT_VARIANT}_cpu_rounds{tag}"])
        verdict = row["ratio_target_met" + tag]
        assert isinstance(verdict, bool)
        assert verdict == bool(np.median(per_round) >= row["target_ratio"])
    assert rows[0]["target_ratio"] == 200.0
    assert rows[1]["ratio_target_met@2^12"] is True  # any positive ratio meets a target of 1e-9
