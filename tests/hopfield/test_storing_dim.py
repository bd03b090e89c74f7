"""hopfield.storing_dim (the capacity atlas's hopfield family): its set-up, search and R4 dimension."""

from __future__ import annotations

import math

import numpy as np
import pytest

from constructions.hopfield.networks import context_gates, retrieval_errors_batch, sphere_patterns
from theory.hopfield.reference import capacity, sphere_radius
from verify.claims import Context, rng_for
from verify.hopfield.storing_dim_setup import (
    QUICK,
    STREAM,
    r4_dimension,
    shared_search,
    smallest_storing_dim,
    stores,
)


def test_r4_dimension_is_the_first_d_whose_r4_capacity_reaches_n():
    for n in (16, 1024):
        d = r4_dimension(n, 1.0, 3.0, 0.001)
        assert capacity(1.0, 3.0, d, 0.001) >= n
        for e in range(2, d):  # below it R4 either guarantees fewer or says nothing
            try:
                assert capacity(1.0, 3.0, e, 0.001) < n
            except ValueError:
                pass
    with pytest.raises(ValueError, match="N=0"):
        r4_dimension(0, 1.0, 3.0, 0.001)


def _stores_one_pass(n, dim, seed, k, gated):
    """The storing test without the chunked early exit: every target in one batch."""
    gen = rng_for(seed, STREAM, k, n, dim)
    radius = 3.0 * math.sqrt(dim - 1)
    X = sphere_patterns(n, dim, radius, gen)
    t = np.arange(n)
    U = np.stack([context_gates(n, int(i), min(16, n), 4.0, gen)[0] for i in t]) if gated else None
    return bool(np.all(retrieval_errors_batch(X, t, 1.0, U) <= sphere_radius(1.0, n, radius)))


@pytest.mark.parametrize("gated", [False, True])
def test_chunked_early_exit_gives_the_one_pass_verdict(gated):
    for n, dims in ((16, range(4, 9)), (130, range(8, 12))):  # 130 > CHUNK: a partial last chunk
        for d in dims:
            assert stores(n, d, 1.0, 3.0, (5, 0), gated, 4.0, 16) == _stores_one_pass(n, d, 5, 0, gated)


def test_smallest_storing_dim_is_the_first_storing_d():
    d = smallest_storing_dim(32, 30, 1.0, 3.0, (3, 1), False, 4.0, 16)
    assert d is not None and stores(32, d, 1.0, 3.0, (3, 1), False, 4.0, 16)
    assert not any(stores(32, e, 1.0, 3.0, (3, 1), False, 4.0, 16) for e in range(2, d))
    assert smallest_storing_dim(32, 2, 1.0, 3.0, (3, 1), False, 4.0, 16) is None


def test_search_stops_at_the_first_miss_and_records_it():
    small = {**QUICK, "sizes": [16, 64], "draws": 2}
    found = shared_search(small, Context(seed=0))
    assert found["stopped_at"] is None
    for row in found["rows"]:
        assert all(d is not None and d <= row["d_R4"] for d in row["d_star_ungated"])
        assert len(row["d_star_gated"]) == 2
    clustered = shared_search({**small, "spread": 0.25}, Context(seed=0))
    assert clustered["stopped_at"] == {"N": 16, "draw": 0}
    assert clustered["rows"] == [{"N": 16, "d_R4": 23, "d_star_ungated": [None], "d_star_gated": []}]


def test_claim_passes_on_uniform_patterns_and_fails_on_its_clustered_control():
    from verify.claims import CLAIMS, load_all

    load_all()
    c = CLAIMS["hopfield.storing_dim.r4_sufficient"]
    small = {**c.quick, "sizes": [16, 64]}
    out = c.check(small, Context(seed=0))
    assert out.passed and out.details["stopped_at"] is None
    assert all(r["r4_slack"] > 1 for r in out.details["rows"])
    control = c.controls[0].apply(small)
    assert control["spread"] == 0.25
    bad = c.check(control, Context(seed=0))
    assert not bad.passed and bad.details["stopped_at"] == {"N": 16, "draw": 0}
