"""fact_mlp constructions and bounds (docs/fact_mlp.md): exact storage, parameter counts, bad input."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from constructions.fact_mlp.baselines import hebbian_readout, linear_memory, ntk_memory, smallest_size
from constructions.fact_mlp.encoder import build_encoder_decoder, feature_rank, fit_error
from constructions.fact_mlp.facts import (
    FactSet,
    decode_numpy,
    fact_set,
    feasibility,
    gated_forward,
    interior_value,
    spherical,
    spike,
)
from theory.registry import get_bound


def test_info_bound_numbers():
    assert abs(get_bound("fact_mlp.info_bits").evaluate(n_facts=1000, n_values=1000) - 9965.78) < 0.01
    assert abs(get_bound("fact_mlp.info_bits_tied").evaluate(n_facts=1000) - 8529.4) < 0.1
    assert (
        abs(get_bound("fact_mlp.min_params").evaluate(n_facts=1000, n_values=1000, bits_per_param=2) - 4982.9)
        < 0.1
    )
    assert abs(get_bound("fact_mlp.jl_code_dim").evaluate(n_values=512, rho=0.663) - 113.5) < 0.5


def test_symbolic_matches_numeric():
    import sympy

    b = get_bound("fact_mlp.construction_params")
    expr = b.expression()
    values = {"code_dim": 48, "d_model": 128, "n_facts": 2048}
    val = expr.subs({s: values[s.name] for s in expr.free_symbols})
    assert float(val) == b.evaluate(n_facts=2048, d_model=128, code_dim=48) == 294912
    assert (
        sympy.simplify(
            get_bound("fact_mlp.gated_mlp_params")
            .expression()
            .subs({sympy.Symbol("d_model", positive=True): 64, sympy.Symbol("hidden", positive=True): 256})
        )
        == 49728
    )


def test_bounds_reject_bad_input():
    with pytest.raises(ValueError, match="rho"):
        get_bound("fact_mlp.jl_code_dim").evaluate(n_values=10, rho=0.0)
    with pytest.raises(ValueError, match="n_values"):
        get_bound("fact_mlp.info_bits").evaluate(n_facts=10, n_values=1)


@given(
    seed=st.integers(0, 2**31 - 1), d=st.integers(4, 16), ratio=st.integers(1, 4), n_values=st.integers(4, 40)
)
def test_every_feasible_set_is_stored_exactly(seed, d, ratio, n_values):
    """Encoder-decoder with the orthogonal decoder (m_c = d, Rp^T Rp = I): every feasible fact
    set is stored, with margin >= rho * min ||v_i - v_j||."""
    rng = np.random.default_rng(seed)
    facts = fact_set(ratio * d, n_values, d, rng)
    feasible, _ = feasibility(facts.values, facts.fact_map)
    assert feasible
    mlp = build_encoder_decoder(facts, d, rng, orthogonal=True)
    acc, margin = mlp.decode()
    assert fit_error(mlp) < 1e-8
    assert acc == 1.0 and margin > 0
    X = facts.keys[:5]
    np.testing.assert_allclose(gated_forward(mlp.gated, X), mlp.forward(X), atol=1e-9)


def test_reference_counts_and_rank():
    rng = np.random.default_rng(0)
    facts = fact_set(256, 64, 32, rng)
    mlp = build_encoder_decoder(facts, 16, rng)
    H = math.ceil(256 / 32)
    assert mlp.size["n_gates"] == H
    assert mlp.params_standard == 3 * 32 * H * 16
    assert mlp.params_unique == H * 32 + H * 32 * 16 + 16 * 32
    assert feature_rank(mlp) == 256


def test_torch_module_matches_forward():
    import torch

    rng = np.random.default_rng(1)
    facts = fact_set(64, 16, 16, rng)
    mlp = build_encoder_decoder(facts, 16, rng)
    module = mlp.torch_module()
    out = module(torch.as_tensor(facts.keys)).detach().numpy()
    np.testing.assert_allclose(out, mlp.forward(facts.keys), atol=1e-9)
    ntk = ntk_memory(facts, 64, rng)
    np.testing.assert_allclose(
        ntk.torch_module()(torch.as_tensor(facts.keys)).detach().numpy(), ntk.forward(facts.keys), atol=1e-9
    )


def test_baselines_run_and_count():
    rng = np.random.default_rng(2)
    facts = fact_set(64, 64, 32, rng)
    assert linear_memory(facts).params_standard == 32 * 32
    whitened = hebbian_readout(facts, 128, rng, whitened=True)
    assert whitened.decode()[0] == 1.0 and whitened.params_standard == 3 * 32 * 128
    best, trace = smallest_size(
        lambda m: ntk_memory(facts, m, np.random.default_rng(0)), [64, 256, 1024, 4096]
    )
    assert best is not None and best in [64, 256, 1024, 4096]
    stored = [t["size"] for t in trace if t["stored"]]
    assert min(stored) == best and all(t["accuracy"] < 1.0 for t in trace if t["size"] < best)


def test_interior_value_cannot_be_decoded():
    rng = np.random.default_rng(3)
    V = interior_value(spherical(20, 32, rng))
    keys = spherical(21, 32, rng)
    facts = FactSet(keys, V, np.arange(21))
    mlp = build_encoder_decoder(facts, 32, rng, allow_undecodable=True)
    acc, _ = decode_numpy(mlp.forward(keys[20:]), V, [20])
    assert acc == 0.0
    with pytest.raises(ValueError, match=r"values\[20\] lies in the convex hull"):
        build_encoder_decoder(facts, 32, rng)


def test_spike_lowers_rho():
    from theory.fact_mlp.rho import decodability

    rng = np.random.default_rng(0)
    V = spherical(128, 16, rng)
    u = spherical(1, 16, rng)[0]
    assert decodability(spike(V, 3.0, u)).rho < decodability(V).rho


@pytest.mark.parametrize(
    "kwargs, pattern",
    [
        (dict(keys=np.zeros((4, 3)), values=np.zeros((5, 2)), fact_map=np.zeros(4, int)), "same d"),
        (dict(keys=np.zeros((4, 3)), values=np.eye(3), fact_map=np.zeros(3, int)), r"fact_map shape"),
        (dict(keys=np.full((2, 3), np.nan), values=np.eye(3), fact_map=np.zeros(2, int)), r"keys\[0\]"),
        (dict(keys=np.zeros((2, 3)), values=np.eye(3), fact_map=np.array([0, 3])), r"\[0, 3\)"),
    ],
)
def test_fact_set_bad_input(kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        FactSet(**kwargs)


def test_construction_rejects_nan_keys_and_bad_shapes():
    rng = np.random.default_rng(5)
    V = spherical(5, 8, rng)
    K = spherical(6, 8, rng)
    K[2, 3] = np.nan
    with pytest.raises(ValueError, match=r"keys\[2\]"):
        FactSet(K, V, np.arange(6) % 5)
    with pytest.raises(ValueError, match=r"\(6, 8\).*\(5, 7\)"):
        FactSet(spherical(6, 8, rng), spherical(5, 7, rng), np.arange(6) % 5)


def test_construction_rejects_duplicate_values():
    rng = np.random.default_rng(4)
    V = spherical(5, 8, rng)
    V[3] = V[1]
    with pytest.raises(ValueError, match=r"values\[1\] and values\[3\]"):
        build_encoder_decoder(FactSet(spherical(8, 8, rng), V, np.arange(8) % 5), 8, rng)


@pytest.mark.parametrize("c, m", [(0.2, 2), (0.5, 4), (0.8, 8), (1.0, 3)])
def test_pair_failure_bound_dominates_exact_probability(c, m):
    """B2's one-pair tail: the exact P(<Rp u, Rp w> <= 0) = E[Phi(-(c/s) sqrt(A))], A ~ chi2_m
    (quadrature, independent of the closed form), never exceeds (1/2)(1 - c^2)^(m/2)."""
    from scipy import integrate, stats

    from theory.fact_mlp.bounds import pair_failure_bound

    bound = pair_failure_bound(c, m)
    if c == 1.0:
        assert bound == 0.0
        return
    s = math.sqrt(1 - c * c)
    exact = integrate.quad(
        lambda a: stats.norm.cdf(-(c / s) * math.sqrt(a)) * stats.chi2.pdf(a, m), 0, np.inf
    )[0]
    assert 0 < exact <= bound
    if (c, m) == (0.8, 8):  # the competing rate with twice the exponent is wrong here
        assert exact > 0.5 * (1 - c * c) ** m


def test_jl_code_dim_delta_and_constant_eight():
    from theory.fact_mlp.bounds import jl_code_dim, jl_code_dim_delta

    # union bound at m_c = 8 ln n_V / rho^2: n_V^2/2 * exp(-m rho^2 / 2) = 1/(2 n_V^2)
    n, rho = 512, 0.663
    m = jl_code_dim(n, rho)
    assert n * (n - 1) / 2 * math.exp(-m * rho**2 / 2) <= 1 / (2 * n**2)
    assert jl_code_dim_delta(n, rho, 0.5) <= 4 * math.log(n) / rho**2
    assert jl_code_dim_delta(n, rho, 1e-3) > jl_code_dim_delta(n, rho, 0.5)
    with pytest.raises(ValueError, match="delta"):
        jl_code_dim_delta(n, rho, 0.0)


def test_active_set_rho_matches_nnls():
    from theory.fact_mlp.rho import decodability
    from verify.fact_mlp.decodability import active_set_rho

    V = spherical(12, 3, np.random.default_rng(7))
    res = decodability(V)
    for i in range(len(V)):
        W = V[i] - np.delete(V, i, 0)
        W /= np.linalg.norm(W, axis=1, keepdims=True)
        assert abs(active_set_rho(W, 3) - res.per_value[i]) < 1e-9


def test_duplicate_keys_detected_up_front_and_consistent_ones_stored():
    from constructions.fact_mlp.encoder import unique_keys

    rng = np.random.default_rng(11)
    facts = fact_set(40, 16, 8, rng)
    K = np.vstack([facts.keys, facts.keys[[3, 7]]])
    consistent = FactSet(K, facts.values, np.concatenate([facts.fact_map, facts.fact_map[[3, 7]]]))
    order, rep = unique_keys(consistent.keys, consistent.fact_map)
    assert len(order) == 40 and rep[40] == 3 and rep[41] == 7
    mlp = build_encoder_decoder(consistent, 8, rng, orthogonal=True)
    assert mlp.size["n_gates"] == math.ceil(40 / 8) and mlp.size["extra_gates"] == 0
    assert mlp.decode()[0] == 1.0 and fit_error(mlp) < 1e-8
    clash = consistent.fact_map.copy()
    clash[41] = (clash[7] + 1) % 16
    with pytest.raises(ValueError, match=r"keys\[7\] and keys\[41\] are equal"):
        build_encoder_decoder(FactSet(K, facts.values, clash), 8, rng)


def test_hall_condition_counterexample_d2_h3():
    """Three keys opening only gate 0 (d = 2): their features share a 2-dimensional block, so
    rank(Phi) <= 5 < 6 = F although H d = F (the docstring's necessary condition fails)."""
    from constructions.fact_mlp.encoder import gate_features

    G = np.array([[1.0, 0.0], [-1.0, 0.2], [-1.0, -0.2]])
    angles = np.array([-0.3, 0.0, 0.3, 2.0, -2.0, np.pi])
    K = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    only_gate0 = [i for i in range(6) if list(K[i] @ G.T > 0) == [True, False, False]]
    assert len(only_gate0) == 3
    assert np.linalg.matrix_rank(gate_features(K, G)) <= 5


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_pinned_rank_case_f8_d4(seed):
    """The case the CI profile found (F=8, d=4, H=2: more than d keys may open one gate only):
    the builder adds gates until the fit is exact, and counts them."""
    rng = np.random.default_rng(seed)
    facts = fact_set(8, 8, 4, rng)
    mlp = build_encoder_decoder(facts, 4, rng, orthogonal=True)
    assert mlp.size["n_gates"] >= 2 + mlp.size["extra_gates"]  # covering may add gates too
    assert fit_error(mlp) < 1e-8 and mlp.decode()[0] == 1.0 and feature_rank(mlp) == 8


@given(seed=st.integers(0, 2**31 - 1), d=st.integers(3, 10), n_values=st.integers(3, 16))
def test_random_projection_decoder_decodes_at_b2_dimension(seed, d, n_values):
    """Property of the random-projection decoder used by every claim: at
    m_c = jl_code_dim_delta(n_V, rho, 1e-6) (B2 with failure probability 1e-6, proved in
    theory.fact_mlp.bounds) the decoder Rp^T Rp u*_j decodes every value j."""
    from constructions.fact_mlp.encoder import random_projection
    from theory.fact_mlp.bounds import jl_code_dim_delta
    from theory.fact_mlp.rho import decodability

    rng = np.random.default_rng(seed)
    V = spherical(n_values, d, rng)
    res = decodability(V)
    m_c = math.ceil(jl_code_dim_delta(n_values, min(res.rho, 0.999), 1e-6))
    Rp = random_projection(m_c, d, rng)
    acc, margin = decode_numpy(res.separators @ Rp.T @ Rp, V, np.arange(n_values))
    assert acc == 1.0 and margin > 0


def test_half_success_dim_is_below_b2_and_absent_for_random_codes():
    """jl_too_small's measurement: the smallest m_c decoding every value in half the draws of Rp
    lies at or below B2 for failure probability 1/2; random codes decode at no m_c up to 2x B2."""
    from theory.fact_mlp.bounds import jl_code_dim_delta
    from theory.fact_mlp.rho import decodability
    from verify.fact_mlp.decoder_setup import half_success_dim

    rng = np.random.default_rng(5)
    V = spherical(16, 8, rng)
    res = decodability(V)
    m_b2 = jl_code_dim_delta(16, res.rho, 0.5)
    m = half_success_dim(V, res.separators, 20, np.random.default_rng(6), math.ceil(2 * m_b2))
    assert m is not None and m <= m_b2
    codes = spherical(16, 8, np.random.default_rng(7))
    assert half_success_dim(V, codes, 20, np.random.default_rng(6), math.ceil(2 * m_b2)) is None


def test_cover_counting_and_the_separability_bracket():
    """Cover's count C(n, d+1) = 2 sum_{k<=d} C(n-1, k) of affinely separable dichotomies; the
    attention_separability_fails bracket straddles its boundary (n - 1)/2 within 1.5x."""
    from theory.fact_mlp.bounds import separability_dim, separable_fraction
    from verify.claims import load_all
    from verify.fact_mlp.transformer_fails import separability_bracket

    assert separable_fraction(3, 1) == 6 / 8  # 3 points on a line: not the middle one alone
    assert separable_fraction(4, 2) == 14 / 16  # 4 points in the plane: not the two diagonals
    assert separable_fraction(5, 1) == 10 / 32 and separable_fraction(5, 4) == 1.0
    assert separable_fraction(81, 40) > 0.5 > separable_fraction(81, 39)
    assert separability_dim(81) == 40.0
    claim = load_all()["fact_mlp.transformer.attention_separability_fails"]
    for scale in ("quick", "full"):
        bracket = separability_bracket(claim.params(scale))
        assert bracket.boundary == 40.0 and bracket.straddles and bracket.factor == 1.5
