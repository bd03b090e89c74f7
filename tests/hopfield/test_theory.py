"""Bounds R1-R4 and D1-D5 of the hopfield area (docs/hopfield.md#statements-and-proof-sketches): values, sympy
forms, CLI, bad input."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from theory.hopfield import derived as D
from theory.hopfield import reference as R
from theory.registry import get_bound


def test_capacity_worked_values():
    c1 = R.capacity_constants(1, 3, 20, 0.001)
    c2 = R.capacity_constants(1, 1, 75, 0.001)
    assert abs(c1["c"] - 3.15461) < 1e-5 and abs(c1["a_plus_log_b"] - 1.2733) < 1e-4
    assert abs(c2["c"] - 1.37188) < 1e-5 and abs(c2["a_plus_log_b"] + 0.9409) < 1e-4


def test_capacity_symbolic_matches_numeric():
    values = {R.beta_s: 1, R.K_s: 1, R.d_s: 75, R.p_s: sp.Rational(1, 1000)}
    assert float(sp.N(R.capacity_symbolic().subs(values))) == pytest.approx(
        R.capacity(1, 1, 75, 0.001), rel=1e-10
    )
    assert any(isinstance(a, sp.LambertW) for a in sp.preorder_traversal(R.capacity_c_symbolic()))


def test_capacity_hypothesis_violated():
    with pytest.raises(ValueError, match="R4 hypothesis"):
        R.capacity(1, 0.5, 5, 0.5)


def test_r1_symbolic_and_numeric_agree():
    expr = R.well_separated_symbolic().subs({R.beta_s: 2, R.N_s: 64, R.M_s: 3})
    assert float(expr) == pytest.approx(R.well_separated_threshold(2, 64, 3))


def test_d3_symbolic_and_numeric_agree():
    expr = D.capacity_shift_symbolic().subs({D.beta_s: 4, D.N_s: 4096, D.Neff_s: 16, D.kappa_s: 2})
    assert float(expr) == pytest.approx(D.capacity_shift(4, 4096, 16, 2))
    assert D.capacity_shift(4, 64, 64, 0) == 0.0


def test_r3_reduces_to_r2_shape():
    # R2 / R3 = beta N M at the same arguments
    r2 = R.jacobian_norm_bound(2, 10, 1.5, 1.0, 0.1)
    r3 = R.retrieval_error_bound(2, 10, 1.5, 1.0, 0.1)
    assert r2 / r3 == pytest.approx(2 * 10 * 1.5)


@pytest.mark.parametrize(
    "name,params",
    [
        ("hopfield.well_separated", {"beta": 0, "N": 10, "M": 1}),
        ("hopfield.well_separated", {"beta": 1, "N": 1, "M": 1}),
        ("hopfield.capacity", {"beta": -1, "K": 1, "d": 75, "p": 0.001}),
        ("hopfield.capacity", {"beta": 1, "K": 1, "d": 75, "p": 0}),
        ("hopfield.capacity_shift", {"beta": 1, "N": 10, "N_eff": 20, "kappa": 0}),
        ("hopfield.contraction", {"lam": -0.1, "M": 1}),
        ("hopfield.gated_error", {"beta": 1, "N_eff": 4, "M": 1, "Delta": 1, "r": 0, "kappa": -1}),
    ],
)
def test_bad_bound_input(name, params):
    with pytest.raises(ValueError):
        get_bound(name).evaluate(**params)


def test_cli_eval_json():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "theory",
            "eval",
            "hopfield.capacity_c",
            "beta=1",
            "K=3",
            "d=20",
            "p=0.001",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    row = json.loads(out.stdout)
    assert abs(row["value"] - 3.15461) < 1e-5 and "W" in row["latex"]
    for name in ("hopfield.well_separated", "hopfield.capacity_shift", "hopfield.contraction"):
        assert get_bound(name).latex()


@given(
    seed=st.integers(0, 2**31),
    n=st.integers(2, 40),
    d=st.integers(2, 24),
    beta=st.floats(0.1, 20),
    noise=st.floats(0, 1.0),
)
def test_d1_and_d2_hold(seed, n, d, beta, noise):
    from constructions.hopfield.networks import (
        noisy_query,
        retrieval_distribution,
        retrieval_error,
        sphere_patterns,
    )

    gen = np.random.default_rng(seed)
    X = sphere_patterns(n, d, float(gen.uniform(0.5, 3)), gen)
    i = int(gen.integers(n))
    xi = noisy_query(X, i, noise, gen)
    m = D.norm_bound(X)
    eps = D.epsilon_ungated(X, xi, i, beta)
    p = retrieval_distribution(X, xi, beta)
    assert 1 - p[i] <= eps * (1 + 1e-9) + 1e-15
    assert retrieval_error(X, xi, i, beta) <= D.error_bound(eps, m) * (1 + 1e-9)
    g = gen.uniform(1e-3, 1.0, n)
    g[i] = 1.0
    u = np.log(g)
    eps_g = D.epsilon_gated(X, xi, i, beta, u)
    assert eps_g <= eps * (1 + 1e-12)
    assert retrieval_error(X, xi, i, beta, u) <= D.error_bound(eps_g, m) * (1 + 1e-9)
    assert D.gated_separation(X, i, beta, u) >= D.separation(X, i) - 1e-12


@given(seed=st.integers(0, 2**31), n=st.integers(2, 30), k=st.integers(1, 30))
def test_d5_pr_bound(seed, n, k):
    from constructions.hopfield.networks import context_gates, retrieval_distribution, sphere_patterns

    k = min(k, n)
    gen = np.random.default_rng(seed)
    X = sphere_patterns(n, 8, 1.0, gen)
    u, active = context_gates(n, 0, k, math.inf, gen)
    p = retrieval_distribution(X, gen.standard_normal(8), float(gen.uniform(0.01, 5)), u)
    assert 1 - 1e-12 <= D.participation_ratio(p) <= D.pr_bound(k) * (1 + 1e-12)
    assert np.all(p[np.setdiff1d(np.arange(n), active)] == 0)


def test_derived_bad_input():
    X = np.eye(3)
    with pytest.raises(ValueError, match="g_i > 0"):
        D.epsilon_gated(X, X[:, 0], 0, 1.0, np.array([-np.inf, 0, 0]))
    with pytest.raises(ValueError, match="NaN"):
        D.separation(np.array([[1.0, np.nan], [0, 1]]), 0)
    with pytest.raises(ValueError, match="shape"):
        D.epsilon_ungated(X, np.ones(2), 0, 1.0)
    with pytest.raises(ValueError, match="beta"):
        D.epsilon_ungated(X, X[:, 0], 0, 0.0)
    with pytest.raises(ValueError):
        D.participation_ratio([0.5, 0.6])


VALID = {
    "hopfield.well_separated": {"beta": 2, "N": 64, "M": 3},
    "hopfield.sphere_radius": {"beta": 2, "N": 64, "M": 3},
    "hopfield.jacobian_norm": {"beta": 2, "N": 64, "M": 1, "Delta": 1.0, "r": 0.01},
    "hopfield.retrieval_error": {"beta": 2, "N": 64, "M": 1, "Delta": 1.0, "r": 0.01},
    "hopfield.capacity": {"beta": 1, "K": 1, "d": 75, "p": 0.001},
    "hopfield.capacity_c": {"beta": 1, "K": 3, "d": 20, "p": 0.001},
    "hopfield.ungated_error": {"beta": 2, "N": 64, "M": 1, "Delta": 1.0, "r": 0.01},
    "hopfield.gated_error": {"beta": 2, "N_eff": 16, "M": 1, "Delta": 1.0, "r": 0.01, "kappa": 2},
    "hopfield.capacity_shift": {"beta": 2, "N": 64, "N_eff": 16, "kappa": 2},
    "hopfield.contraction": {"lam": 0.5, "M": 1},
    "hopfield.pr_hard_gates": {"N_eff": 16},
}


def test_every_hopfield_bound_evaluates():
    from theory.registry import load_all

    names = {n for n in load_all() if n.startswith("hopfield.")}
    assert names == set(VALID)
    for name, params in VALID.items():
        assert math.isfinite(get_bound(name).evaluate(**params))
    # D2 at kappa is exp(-kappa) times D1 with N_eff in place of N (before the min(1, .) cap)
    d1 = get_bound("hopfield.ungated_error").evaluate(beta=2, N=16, M=1, Delta=3.0, r=0)
    d2 = get_bound("hopfield.gated_error").evaluate(beta=2, N_eff=16, M=1, Delta=3.0, r=0, kappa=2)
    assert d2 == pytest.approx(math.exp(-2) * d1)


def test_context_competitors_limits_and_shift():
    assert D.context_competitors(64, 16, 0.0) == pytest.approx(63)
    assert D.context_competitors(64, 16, math.inf) == pytest.approx(15)
    # at kappa = inf the context form of D3 is D3's hard-gate shift (kappa term 0 there)
    assert D.context_capacity_shift(4, 4096, 16, math.inf) == pytest.approx(D.capacity_shift(4, 4096, 16, 0))
    assert D.context_capacity_shift(4, 4096, 16, 0.0) == pytest.approx(0.0, abs=1e-15)
    assert D.gated_capacity_prediction(57.0, 16, 0.0) == pytest.approx(57.0)
    assert D.gated_capacity_prediction(57.0, 16, 4.0) == pytest.approx(16 + 41 * math.exp(4))
    with pytest.raises(ValueError, match="N_u > N_eff"):
        D.gated_capacity_prediction(10.0, 16, 4.0)
    with pytest.raises(ValueError, match="N_eff <= N"):
        D.context_competitors(8, 9, 1.0)


def test_context_competitors_is_the_exact_mean_over_contexts():
    """E over every context (active set of N_eff - 1 others, target open, rest at -kappa) of eps_g
    at r = 0 equals C_g / (N - 1) times the ungated eps: exact enumeration at N = 6, N_eff = 3."""
    from itertools import combinations

    gen = np.random.default_rng(3)
    n, ne, kappa, beta, i = 6, 3, 1.7, 2.0, 0
    X = gen.standard_normal((4, n))
    eps = D.epsilon_ungated(X, X[:, i], i, beta)
    vals = []
    for others in combinations(range(1, n), ne - 1):
        u = np.full(n, -kappa)
        u[[i, *others]] = 0.0
        vals.append(D.epsilon_gated(X, X[:, i], i, beta, u))
    assert np.mean(vals) == pytest.approx(D.context_competitors(n, ne, kappa) / (n - 1) * eps, rel=1e-12)


@given(delta=st.floats(0.5, 50.0), n=st.integers(2, 256), m=st.floats(0.5, 5.0))
def test_r1_beta_is_where_r1_starts_to_hold(delta, n, m):
    """violated_fails reads each pattern's R1 boundary in beta: R1 holds there and above, not below."""
    from verify.hopfield.separation import r1_beta

    b = r1_beta(delta, n, m)
    grid = np.geomspace(1e-3, 1e3, 200)
    holds = [R.well_separated_threshold(x, n, m) <= delta for x in grid]
    assert all(h for x, h in zip(grid, holds) if x > b * (1 + 1e-9))
    if b > 0:
        assert R.well_separated_threshold(b * (1 - 1e-6), n, m) > delta
        assert R.well_separated_threshold(b * (1 + 1e-6), n, m) <= delta


def test_measured_beta_is_the_last_entry_into_retrieval():
    from verify.hopfield.separation import measured_beta

    grid = np.array([0.5, 1.0, 2.0, 4.0])
    assert measured_beta(grid, np.array([False, True, False, True])) == 4.0
    assert measured_beta(grid, np.array([True, True, True, True])) == 0.5
    assert measured_beta(grid, np.array([True, True, True, False])) is None
