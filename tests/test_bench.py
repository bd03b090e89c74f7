"""Benchmark helpers (verify.bench): interleaved rounds and per-round ratio summaries."""

import pytest

from verify.bench import interleaved_times, ratio_summary


def test_interleaved_rounds_rotate_the_order():
    calls = []
    fns = {k: (lambda k=k: calls.append(k)) for k in "abc"}
    times = interleaved_times(fns, pairs=4, warmup=1)
    assert {k: len(v) for k, v in times.items()} == {"a": 4, "b": 4, "c": 4}
    assert calls[:3] == ["a", "b", "c"]  # warm-up round
    rounds = [calls[3 + 3 * r : 6 + 3 * r] for r in range(4)]
    assert rounds == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"], ["a", "b", "c"]]
    assert all(t >= 0 for v in times.values() for t in v)


def test_ratio_summary_is_per_round():
    s = ratio_summary([1.0, 2.0, 3.0, 40.0], [1.0, 1.0, 1.0, 10.0])
    assert s["median"] == pytest.approx(2.5) and s["min"] == 1.0 and s["max"] == 4.0
    assert s["pairs"] == 4 and s["q1"] <= s["median"] <= s["q3"]


def test_measure_chunks_row_on_a_small_shape():
    """The chunk-size sweep states per thread count the load, every size's ratio and
    reduction overhead, the best size and how far it falls short of the target."""
    from verify.bench import bench_measure_chunks

    row = bench_measure_chunks(
        n_queries=256, n_candidates=512, dim=16, sizes_mib=(1, 2), threads=(1,), pairs=2
    )
    one = row["by_threads"]["1"]
    assert set(one["sizes"]) == {"1MiB", "2MiB"} and len(one["load_before"]) == 3
    assert one["best_size"] in one["sizes"]
    assert one["short_of_target"] == pytest.approx(max(0.0, 0.85 - one["best_ratio"]))
    for size in one["sizes"].values():
        assert size["ratio_to_matmul"] > 0 and size["ratio_q1_q3"][0] <= size["ratio_q1_q3"][1]
