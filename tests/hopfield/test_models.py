"""Hopfield models (docs/hopfield.md#setting): energy descent, fixed point, approximations, bad input."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from constructions.hopfield import fixed_point as F
from constructions.hopfield import networks as H
from theory.hopfield.derived import contraction_bound, norm_bound

seeds = st.integers(0, 2**31)


@given(
    seed=seeds,
    n=st.integers(1, 40),
    d=st.integers(1, 16),
    beta=st.floats(0.01, 30),
    g_min=st.floats(1e-6, 1.0),
)
def test_energy_never_increases(seed, n, d, beta, g_min):
    gen = np.random.default_rng(seed)
    X = gen.standard_normal((d, n)) * float(gen.uniform(0.1, 3))
    u = H.log_gates_from_gates(gen.uniform(g_min, 1.0, n) if g_min < 1 else np.ones(n))
    xi = gen.standard_normal(d)
    xg = xi.copy()
    for _ in range(8):
        new, new_g = H.update(X, xi, beta), H.gated_update(X, xg, beta, u)
        scale = 1e-9 * (1 + abs(H.energy(X, xi, beta)))
        assert H.energy(X, new, beta) <= H.energy(X, xi, beta) + scale
        assert H.gated_energy(X, new_g, beta, u) <= H.gated_energy(X, xg, beta, u) + scale
        xi, xg = new, new_g


def test_gated_with_open_gates_is_ungated():
    gen = np.random.default_rng(0)
    X = H.sphere_patterns(20, 6, 1.0, gen)
    xi = gen.standard_normal(6)
    np.testing.assert_allclose(H.gated_update(X, xi, 3.0, np.zeros(20)), H.update(X, xi, 3.0))
    # E = E_g(u = 0) + log N / beta + M^2 / 2
    e, eg = H.energy(X, xi, 3.0), H.gated_energy(X, xi, 3.0, np.zeros(20))
    assert e == pytest.approx(eg + math.log(20) / 3.0 + 0.5 * norm_bound(X) ** 2)


def test_hard_gate_removes_memory():
    X = np.eye(3)
    u = np.array([0.0, -np.inf, 0.0])
    p = H.retrieval_distribution(X, np.array([0.0, 5.0, 0.0]), 1.0, u)
    assert p[1] == 0 and p.sum() == pytest.approx(1)


def test_generators():
    gen = np.random.default_rng(1)
    X = H.sphere_patterns(30, 5, 2.5, gen)
    np.testing.assert_allclose(np.linalg.norm(X, axis=0), 2.5)
    q = H.noisy_query(X, 3, 0.1, gen)
    assert np.linalg.norm(q - X[:, 3]) == pytest.approx(0.1)
    u, active = H.context_gates(30, 7, 5, 2.0, gen)
    assert 7 in active and len(active) == 5 and np.sum(u == 0) == 5 and np.all(u[u < 0] == -2.0)
    a = H.logits_from_log_gates(u)
    np.testing.assert_allclose(1 / (1 + np.exp(-a[u < 0])), np.exp(-2.0))
    assert H.gaussian_patterns(10, 4, gen).shape == (4, 10)


@pytest.mark.parametrize(
    "call",
    [
        lambda: H.update(np.eye(3), np.ones(3), 0.0),
        lambda: H.update(np.eye(3), np.ones(3), -1.0),
        lambda: H.gated_update(np.eye(3), np.ones(3), 1.0, np.array([0.0, 0.1, 0.0])),
        lambda: H.log_gates_from_gates([0.5, 0.0, 1.0]),
        lambda: H.log_gates_from_gates([0.5, 1.2]),
        lambda: H.log_gates_from_gates([np.nan, 0.5]),
        lambda: H.gated_energy(np.eye(3), np.ones(3), 1.0, np.full(3, -np.inf)),
        lambda: H.energy(np.array([[1.0, np.nan]]), np.ones(1), 1.0),
        lambda: H.energy(np.eye(3), np.ones(2), 1.0),
        lambda: H.update(np.eye(3), np.array([1.0, np.nan, 0.0]), 1.0),
        lambda: H.gated_update(np.eye(3), np.ones(3), 1.0, np.zeros(4)),
        lambda: H.context_gates(10, 12, 3, 1.0, np.random.default_rng(0)),
        lambda: F.picard(np.eye(2), np.ones(2), 1.0, np.zeros(2), -0.5),
        lambda: F.picard(np.eye(2), np.ones(2), 1.0, np.zeros(3), 0.5),
        lambda: F.picard(np.eye(2), np.ones(2), 0.0, np.zeros(2), 0.5),
    ],
)
def test_bad_input_raises(call):
    with pytest.raises(ValueError):
        call()


@given(seed=seeds, lam_m2=st.floats(0.0, 0.95), beta=st.floats(0.1, 10))
def test_below_contraction_bound_unique_fixed_point(seed, lam_m2, beta):
    gen = np.random.default_rng(seed)
    X = H.sphere_patterns(12, 6, float(gen.uniform(0.3, 2)), gen)
    lam = lam_m2 / norm_bound(X) ** 2
    a = 2 * gen.standard_normal(12)
    q = gen.standard_normal(6)
    starts = 3 * gen.standard_normal((6, 8))
    states, conv, _ = F.picard_many(X, q, beta, a, lam, starts, max_steps=5000)
    assert conv.all()
    assert np.max(np.abs(states - states[:, [0]])) < 1e-8
    J = F.feedback_jacobian(X, states[:, 0], q, beta, a, lam)
    assert np.linalg.norm(J, 2) <= contraction_bound(lam, norm_bound(X)) + 1e-12
    res = F.picard(X, q, beta, a, lam)
    assert res.contraction_rate <= contraction_bound(lam, norm_bound(X)) + 1e-6
    np.testing.assert_allclose(res.xi, F.feedback_map(X, res.xi, q, beta, a, lam), atol=1e-10)


def test_jacobian_matches_finite_differences():
    gen = np.random.default_rng(3)
    X = H.sphere_patterns(10, 4, 1.0, gen)
    a, q, xi = gen.standard_normal(10), gen.standard_normal(4), gen.standard_normal(4) * 0.3
    J = F.feedback_jacobian(X, xi, q, 2.0, a, 0.7)
    h = 1e-6
    num = np.stack(
        [
            (F.feedback_map(X, xi + h * e, q, 2.0, a, 0.7) - F.feedback_map(X, xi - h * e, q, 2.0, a, 0.7))
            / (2 * h)
            for e in np.eye(4)
        ],
        1,
    )
    np.testing.assert_allclose(J, num, atol=1e-8)


def test_approximations_exact_at_zero_feedback():
    gen = np.random.default_rng(4)
    X = H.sphere_patterns(16, 5, 1.0, gen)
    a, q = gen.standard_normal(16), gen.standard_normal(5)
    star = F.picard(X, q, 2.0, a, 0.0)
    approx = F.approximations(X, q, 2.0, a, 0.0)
    np.testing.assert_allclose(star.xi, approx["xi1"], atol=1e-14)
    np.testing.assert_allclose(approx["xi1"], approx["xi2"], atol=1e-14)
    assert star.steps <= 2


def test_effective_rank():
    assert F.effective_rank(np.eye(5)) == pytest.approx(5)
    assert F.effective_rank(np.diag([1.0, 0, 0])) == pytest.approx(1)
    with pytest.raises(ValueError):
        F.effective_rank(np.zeros((3, 3)))


def test_clustered_patterns_norm_and_cluster():
    gen = np.random.default_rng(0)
    X = H.clustered_patterns(50, 20, 3.0, 0.3, gen)
    np.testing.assert_allclose(np.linalg.norm(X, axis=0), 3.0, rtol=1e-12)
    cos = (X.T @ X) / 9.0
    assert cos[np.triu_indices(50, 1)].min() > 0.5  # far from uniform on the sphere
    with pytest.raises(ValueError, match="spread"):
        H.clustered_patterns(5, 3, 1.0, -0.1, gen)


def test_capacity_crossing():
    from verify.hopfield.capacity import crossing

    grid = [16, 32, 64, 128]
    assert crossing(grid, [1.0, 0.9, 0.3, 0.0]) == pytest.approx(2 ** (5 + 0.4 / 0.6))
    assert crossing(grid, [0.4, 0.3, 0.2, 0.1]) is None  # starts below the level
    assert crossing(grid, [1.0, 1.0, 0.9, 0.6]) is None  # never falls below it on the grid


@pytest.mark.parametrize("step", [1, 7, 64])
def test_retrieval_errors_in_target_blocks_equal_one_batch(step):
    """hopfield.capacity.empirical evaluates its targets in blocks (memory bound at full
    scale); each target's error depends only on its own row of logits, so blocks agree with one
    batch up to float64 rounding."""
    X = H.sphere_patterns(64, 12, math.sqrt(11), np.random.default_rng(5))
    whole = H.retrieval_errors_batch(X, np.arange(64), 1.0)
    blocks = np.concatenate(
        [H.retrieval_errors_batch(X, np.arange(at, min(at + step, 64)), 1.0) for at in range(0, 64, step)]
    )
    np.testing.assert_allclose(blocks, whole, rtol=1e-12, atol=1e-15)
    assert whole.max() > 0
