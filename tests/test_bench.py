"""Benchmark helpers (verify.bench): interleaved rounds and per-round ratio summaries."""
import pytest

from verify.bench import interleaved_times, ratio_summary


def test_interleaved_rounds_rotate_the_order():
    calls = []
    fns = {k: (lambda k=k: calls.append(k)) for k in "abc"}
    times = interleaved_times(fns, pairs=4, warmup=1)
    assert {k: len(v) for k, v in times.items()} == {"a": 4, "b": 4, "c": 4}
    assert calls[:3] == ["a", "b", "c"]                 # warm-up round
    rounds = [calls[3 + 3 * r: 6 + 3 * r] for r in range(4)]
    assert rounds == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"], ["a", "b", "c"]]
    assert all(t >= 0 for v in times.values() for t in v)


def test_ratio_summary_is_per_round():
    s = ratio_summary([1.0, 2.0, 3.0, 40.0], [1.0, 1.0, 1.0, 10.0])
    assert s["median"] == pytest.approx(2.5) and s["min"] == 1.0 and s["max"] == 4.0
    assert s["pairs"] == 4 and s["q1"] <= s["median"] <= s["q3"]
