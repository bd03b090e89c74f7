"""The shared smallest-size search (constructions.search): its bisection makes exactly the probes
of the two hand-written forms it replaced, finds the smallest storing size of any monotone
predicate, and rejects bad input."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from constructions.search import Bisection, smallest_size, smallest_size_geometric


def _classic(sizes, stores):
    """The index form the fact_mlp searches used: lo, hi inclusive, best so far."""
    probes, lo, hi, best = [], 0, len(sizes) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        probes.append(sizes[mid])
        if stores(sizes[mid]):
            best, hi = sizes[mid], mid - 1
        else:
            lo = mid + 1
    return best, probes


def _open_interval(lo, hi, stores):
    """The value form of the geometric threshold search: lo fails, hi assumed, checked last."""
    probes, top = [], hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        probes.append(mid)
        lo, hi = (lo, mid) if stores(mid) else (mid, hi)
    if hi == top:
        probes.append(hi)
        if not stores(hi):
            return None, probes
    return hi, probes


def _geometric(lo, hi, stores, ratio):
    """The form of the retrieval N_c searches: hi, lo, then rounded geometric midpoints."""
    probes = [hi]
    if not stores(hi):
        return None, hi, probes
    probes.append(lo)
    if stores(lo):
        return lo, None, probes
    while hi / lo > ratio:
        mid = int(round(math.sqrt(lo * hi)))
        if mid in (lo, hi):
            break
        probes.append(mid)
        lo, hi = (lo, mid) if stores(mid) else (mid, hi)
    return hi, lo, probes


@given(
    lo=st.integers(1, 200),
    factor=st.integers(2, 10**5),
    threshold=st.integers(1, 10**8),
    ratio=st.sampled_from([1.05, 1.1, 1.2, 2.0]),
)
def test_geometric_search_matches_the_retrieval_form(lo, factor, threshold, ratio):
    hi = lo * factor
    stores = lambda n: n >= threshold  # noqa: E731
    size, below, probes = _geometric(lo, hi, stores, ratio)
    found = smallest_size_geometric(lo, hi, stores, ratio)
    assert (found.size, list(found.probed)) == (size, probes)
    assert found.below == (hi if size is None else below)
    if size is not None and below is not None:
        assert below < threshold <= size


def test_geometric_search_rejects_a_bad_range():
    for args in ((0, 10, 1.1), (10, 10, 1.1), (10, 100, 1.0)):
        with pytest.raises(ValueError, match="0 < low < high and ratio > 1"):
            smallest_size_geometric(args[0], args[1], lambda n: True, args[2])


@given(n=st.integers(1, 60), first=st.integers(0, 70), start=st.integers(1, 5))
def test_bisection_matches_the_index_form(n, first, start):
    sizes = list(range(start, start + n))
    stores = lambda s: s >= start + first  # noqa: E731  (monotone; may store nowhere)
    best, probes = _classic(sizes, stores)
    found = smallest_size(sizes, stores)
    assert found.size == best and list(found.probed) == probes


@given(lo=st.integers(0, 30), width=st.integers(2, 60), first=st.integers(0, 70))
def test_top_assumed_bisection_matches_the_value_form(lo, width, first):
    hi = lo + width
    stores = lambda s: s >= lo + 1 + first  # noqa: E731
    best, probes = _open_interval(lo, hi, stores)
    found = smallest_size(range(lo + 1, hi + 1), stores, top_stores=True)
    assert found.size == best and list(found.probed) == probes


@given(flags=st.lists(st.booleans(), min_size=1, max_size=30))
def test_scan_stops_at_the_first_storing_size(flags):
    found = smallest_size(range(len(flags)), lambda s: flags[s], strategy="scan")
    first = flags.index(True) if True in flags else None
    assert found.size == first
    assert len(found.tried) == (first + 1 if first is not None else len(flags))


def test_stepwise_bisections_agree_with_the_one_shot_search():
    """Several searches advanced in lock-step (as a batched model runs them) end where each alone
    does."""
    thresholds = [3, 17, 40, 1]
    searches = [Bisection(range(1, 33)) for _ in thresholds]
    while any(b.probe is not None for b in searches):
        for b, t in zip(searches, thresholds):
            if b.probe is not None:
                b.record(b.probe >= t)
    for b, t in zip(searches, thresholds):
        alone = smallest_size(range(1, 33), lambda s, t=t: s >= t)
        assert (b.size, tuple(b.tried)) == (alone.size, alone.tried)


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        ({"sizes": [], "stores": bool}, "at least one candidate"),
        ({"sizes": [2, 2, 3], "stores": bool}, "distinct"),
        ({"sizes": [1, 2], "stores": bool, "strategy": "grid"}, "strategy must be one of"),
        ({"sizes": [1, 2], "stores": bool, "strategy": "scan", "top_stores": True}, "bisection's assumption"),
    ],
)
def test_bad_input(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        smallest_size(**kwargs)


def test_a_finished_bisection_takes_no_more_outcomes():
    b = Bisection([4])
    b.record(True)
    with pytest.raises(ValueError, match="finished"):
        b.record(True)
    with pytest.raises(ValueError, match="not finished"):
        _ = Bisection([1, 2]).size
