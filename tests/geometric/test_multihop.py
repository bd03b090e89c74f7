"""Geometric multi-hop: no-CoT and CoT constructions over random bijections, the k-hop lower bound
(brute force on tiny cases, monotonicity, sympy form), bad input."""

import itertools
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from constructions.geometric.multihop import (
    all_chains,
    all_multi_hop_queries,
    build_nocot_model,
    compose,
    cot_trace,
    multi_hop_queries,
    run_cot,
)
from constructions.geometric.single_hop import build_block_model
from constructions.tasks import make_bijections
from tests.strategies import bijections, rng_from, seeds
from theory.geometric import multihop as M
from theory.registry import get_bound
from verify.measure import decode


@given(data=bijections(n=st.integers(2, 40), r=st.integers(1, 3)), k=st.integers(1, 3), code_seed=seeds)
def test_nocot_answers_every_chain(data, k, code_seed):
    perms, _ = data
    n, r = perms.shape[1], perms.shape[0]
    d0 = max(2, math.ceil(3 * math.log(n)))
    model = build_nocot_model(perms, k, d0, rng=rng_from(code_seed))
    assert model.dim == M.dim_nocot(r, k, d0)
    start, chains, target = all_multi_hop_queries(perms, k)
    assert len(target) == n * r**k
    out = model.selector_output(start, chains)
    np.testing.assert_allclose(out, model.codes[target], rtol=0, atol=1e-12)
    if decode(model.codes, model.codes, np.arange(n)).min_margin > 0:  # distinct codes
        assert decode(out, model.codes, target).accuracy == 1.0


@given(data=bijections(n=st.integers(2, 60), r=st.integers(1, 4)), k=st.integers(1, 20), q_seed=seeds)
def test_cot_answers_long_chains(data, k, q_seed):
    perms, _ = data
    n = perms.shape[1]
    d0 = max(3, math.ceil(3 * math.log(n)) + 2)
    model = build_block_model(perms, d0, rng=rng_from(q_seed))
    start, chains, target = multi_hop_queries(perms, k, 30, rng_from(q_seed + 1))
    res = run_cot(model, start, chains)
    if decode(model.codes, model.codes, np.arange(n)).min_margin > 0:
        assert np.array_equal(res.final, target)
        assert np.all(res.min_margin > 0)
        for i in range(5):
            assert list(res.steps[i]) == cot_trace(start[i], chains[i], perms)


def test_cot_trace_and_compose_agree():
    perms = make_bijections(30, 3, rng_from(4))
    start, chains, target = multi_hop_queries(perms, 4, 50, rng_from(5))
    assert [cot_trace(x, c, perms)[-1] for x, c in zip(start, chains)] == list(target)
    assert np.array_equal(compose(perms, chains, start), target)
    assert all_chains(3, 2).tolist()[:4] == [[0, 0], [0, 1], [0, 2], [1, 0]]


def _tuple_count(n, r, k):
    tuples = set()
    for perms in itertools.product(itertools.permutations(range(n)), repeat=r):
        tuples.add(tuple(_follow(perms, ch) for ch in itertools.product(range(r), repeat=k)))
    return len(tuples)


def _follow(perms, chain):
    y = 0
    for rel in chain:
        y = perms[rel][y]
    return y


@pytest.mark.parametrize("n,r,k", [(4, 2, 1), (4, 2, 2), (5, 2, 2), (3, 2, 2), (4, 1, 3), (4, 3, 1)])
def test_khop_bits_is_below_the_brute_force_tuple_count(n, r, k):
    """The theorem's step (2) on tiny cases: log2 |T_k| >= R^k log2(N + 1 - I_k) (exact at k = 1)."""
    exact = math.log2(_tuple_count(n, r, k))
    assert M.khop_bits(n, r, k) <= exact + 1e-12
    if k == 1:
        assert M.khop_bits(n, r, k) == pytest.approx(exact)


@given(n=st.integers(2, 10**6), r=st.integers(1, 6), k=st.integers(1, 6))
def test_khop_bits_monotone(n, r, k):
    inner = M.internal_nodes(r, k)
    if r >= 2 and n < inner:
        with pytest.raises(ValueError, match="violates the hypothesis N >= I_k"):
            M.khop_bits(n, r, k)
        return
    b = M.khop_bits(n, r, k)
    assert M.khop_bits(n + 1, r, k) >= b
    if r == 1:
        assert b == pytest.approx(math.log2(n))  # exact: pi^k(x) can be any entity
    if r >= 2 and n > r**k:
        assert b >= r**k * math.log2(n - r**k) - 1e-9
    if n >= 2 * (r + 1) ** (k + 1):  # the domain stated in the docstring
        assert M.khop_bits(n, r, k + 1) >= b
        assert M.khop_bits(n, r + 1, k) >= b


@given(n=st.integers(40, 5000), r=st.integers(2, 5), k=st.integers(1, 3))
def test_khop_bits_matches_sympy(n, r, k):

    expr = get_bound("geometric.khop_bits").expression()
    value = float(expr.subs({M.N: n, M.R: r, M.k: k}).evalf(30))
    assert value == pytest.approx(M.khop_bits(n, r, k), rel=1e-9)


def test_k_max_and_dimensions():
    assert [M.k_max(d, 19, 3) for d in (18, 57, 170, 171, 513, 1538, 1539)] == [0, 1, 1, 2, 3, 3, 4]
    assert M.dim_nocot(3, 2, 19) == 171 and M.dim_cot(3, 19) == 57
    ratios = [M.construction_to_bound_ratio(1024, 2, k, 21) for k in range(1, 6)]
    assert max(ratios) / min(ratios) < 1.01


def test_theory_cli():
    out = subprocess.run(
        [sys.executable, "-m", "theory", "eval", "geometric.khop_bits", "N=1000", "R=3", "k=3", "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    row = json.loads(out)
    assert row["value"] == pytest.approx(27 * math.log2(1000 + 1 - 13))
    assert row["provenance"] == "derived"


def test_bad_input():
    perms = make_bijections(10, 2, rng_from(0))
    with pytest.raises(ValueError, match="k >= 1"):
        multi_hop_queries(perms, 0, 5, rng_from(1))
    with pytest.raises(ValueError, match="k >= 1"):
        build_nocot_model(perms, 0, 4, rng=rng_from(1))
    with pytest.raises(ValueError, match="k >= 1"):
        M.khop_bits(100, 2, 0)
    with pytest.raises(ValueError, match="unknown relation 2"):
        cot_trace(0, [0, 2], perms)
    with pytest.raises(ValueError, match="unknown relation -1"):
        compose(perms, [[0, -1]], [0])
    model = build_block_model(perms, 4, rng=rng_from(2))
    with pytest.raises(ValueError, match="unknown relation 5"):
        run_cot(model, [0], [[5, 0]])
    with pytest.raises(ValueError, match="below the no-CoT dimension R\\^k d0 = 16"):
        build_nocot_model(perms, 2, 4, rng=rng_from(1), dim_budget=15)
    nocot = build_nocot_model(perms, 2, 4, rng=rng_from(1))
    with pytest.raises(ValueError, match="answers 2-hop chains, got 3 hops"):
        nocot.selector_output([0], [[0, 1, 1]])
    with pytest.raises(ValueError, match="R >= 2"):
        M.k_max(100, 10, 1)


def test_depth_tradeoff_construction_at_k_max_and_refused_above():
    """Was geometric.multihop.depth_tradeoff (k_max against a typed-in list): a unit test of B5."""
    perms = make_bijections(60, 3, rng_from(1))
    for d, k in ((57, 1), (171, 2), (513, 3)):
        assert M.k_max(d, 19, 3) == k
        model = build_nocot_model(perms, k, 19, rng=rng_from(2), dim_budget=d)
        start, chains, target = all_multi_hop_queries(perms, k)
        out = model.selector_output(start, chains)
        assert np.max(np.abs(out - model.codes[target])) < 1e-9
        with pytest.raises(ValueError, match="k_max"):
            build_nocot_model(perms, k + 1, 19, rng=rng_from(2), dim_budget=d)


def test_construction_to_bound_ratio_is_d0_p_over_log2():
    """Was geometric.multihop.bound_ratio (a formula divided by a formula)."""
    for k in range(1, 6):
        ratio = M.construction_to_bound_ratio(1024, 2, k, 21, 32)
        assert ratio == pytest.approx(21 * 32 / math.log2(1024 + 1 - M.internal_nodes(2, k)), rel=1e-12)
        assert ratio >= 1
