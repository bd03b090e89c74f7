"""Tests of the retrieval area (2603.15923): bounds, task generator, closed-form GD vs autograd."""

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from constructions.retrieval.gd import hebbian_step_one, three_steps_autograd, three_steps_closed_form
from constructions.retrieval.task import (
    cooccurrence_counts,
    make_retrieval_data,
    make_retrieval_task,
    oracle_accuracy,
    sample_cooccurrence_counts,
    sample_sequences,
    value_memory,
)
from theory.retrieval import bounds as th

# ------------------------------------------------------------------ theory


def test_reference_values_of_bounds():
    assert th.coupon_floor(256, 0.1) == pytest.approx(2009.03, abs=0.01)
    assert th.coupon_floor(128, 0.1) == pytest.approx(916, abs=0.5)
    assert th.param_floor(1024, 32) == pytest.approx(0.268, abs=5e-4)
    assert th.nc_pred(256, 32, 8) == pytest.approx(
        4 * 256 * 8 * math.log(256) / (32 * (1 - math.sqrt(2 * math.log(256) / 32)) ** 2)
    )
    assert th.nc_pred(256, 8, 4) == math.inf  # d <= 2 ln V


@given(st.integers(2, 2000), st.integers(1, 256), st.integers(1, 64))
def test_nc_pred_matches_symbolic(V, d, L):

    value = th.nc_pred(V, d, L)
    if math.isinf(value):
        assert d <= 2 * math.log(V)
        return
    sV, sd, sL, *_ = th._symbols()
    sym = float(th.nc_pred_symbolic().subs({sV: V, sd: d, sL: L}))
    assert value == pytest.approx(sym, rel=1e-10)


@given(st.floats(10, 1e8), st.integers(16, 256), st.integers(1, 64))
def test_v_max_is_root_and_monotone(N, d, L):
    V = th.v_max(N, d, L)
    if V > 1.01:
        t = math.log(V)
        nc = 4 * V * L * t / (d * (1 - math.sqrt(2 * t / d)) ** 2)
        assert nc == pytest.approx(N, rel=1e-8)
    assert th.v_max(N * 1.5, d, L) > V
    assert th.v_max(N, d + 1, L) > V
    assert th.v_max(N, d, L + 1) < V


def test_v_max_sympy_agrees_with_brentq():
    assert th.v_max_sympy(1e4, 64, 8) == pytest.approx(th.v_max(1e4, 64, 8), rel=1e-10)


def test_v_max_gradient_signs_and_finite_differences():
    """Formerly the claim retrieval.theory.capacity_solve (a formula checked against itself, so a
    unit test): at N=1e4, d=64, L=8 implicit differentiation (sympy) and central finite
    differences of the brentq root agree in sign: dV/dN > 0, dV/dd > 0, dV/dL < 0."""
    N, d, L = 1e4, 64, 8
    grad = th.v_max_gradient(N, d, L)
    fd = {
        "n_samples": (th.v_max(N * 1.001, d, L) - th.v_max(N / 1.001, d, L)) / (N * 1.001 - N / 1.001),
        "d_model": (th.v_max(N, d + 1, L) - th.v_max(N, d - 1, L)) / 2.0,
        "seq_len": (th.v_max(N, d, L + 1) - th.v_max(N, d, L - 1)) / 2.0,
    }
    assert grad["n_samples"] > 0 and grad["d_model"] > 0 and grad["seq_len"] < 0
    for key in grad:
        assert np.sign(fd[key]) == np.sign(grad[key])
    assert grad["n_samples"] == pytest.approx(fd["n_samples"], rel=1e-3)


def test_param_floor_lgamma_equals_exact_sum():
    """Formerly the claim retrieval.theory.info_floor: F4 by lgamma vs the exact sum of log2 k."""
    exact = math.fsum(math.log2(k) for k in range(2, 1025)) / (1024 * 32)
    assert th.param_floor(1024, 32) == pytest.approx(exact, rel=1e-12)
    assert th.param_floor(1024, 32) == pytest.approx(0.268, abs=5e-4)


@pytest.mark.parametrize(
    "call, word",
    [
        (lambda: th.nc_pred(256, 0, 8), "d_model >= 1"),
        (lambda: th.nc_pred(256, 32, 0), "seq_len >= 1"),
        (lambda: th.coupon_floor(256, 1.5), "delta"),
        (lambda: th.orth_scale(256, 64), "orthogonal embeddings need d_model >= vocab_size"),
        (lambda: th.param_floor(1024, 0), "bits > 0"),
        (lambda: th.v_max(-1, 64, 8), "n_samples > 0"),
    ],
)
def test_theory_bad_input_names_hypothesis(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_theory_cli_eval():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "theory",
            "eval",
            "retrieval.coupon_floor",
            "vocab_size=256",
            "delta=0.1",
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert '"value": 2009.02' in out


# ------------------------------------------------------------------ task generator


@pytest.mark.parametrize(
    "kwargs, word",
    [
        (dict(vocab_size=16, d_model=0, seq_len=4, n_samples=8), "d_model >= 1"),
        (dict(vocab_size=16, d_model=8, seq_len=0, n_samples=8), "seq_len >= 1"),
        (dict(vocab_size=16, d_model=8, seq_len=4, n_samples=0), "n_samples >= 1"),
        (
            dict(vocab_size=16, d_model=8, seq_len=4, n_samples=8, embedding="orthogonal"),
            "orthogonal embeddings need d_model >= vocab_size",
        ),
        (dict(vocab_size=16, d_model=8, seq_len=4, n_samples=8, embedding="sparse"), "embedding"),
    ],
)
def test_generator_bad_input_names_hypothesis(kwargs, word):
    with pytest.raises(ValueError, match=word):
        make_retrieval_data(rng=np.random.default_rng(0), **kwargs)


@given(
    st.integers(2, 40),
    st.integers(2, 24),
    st.integers(1, 9),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["gaussian", "orthogonal"]),
)
def test_generator_structure(V, d, L, seed, embedding):
    if embedding == "orthogonal":
        d = max(d, V)
    data = make_retrieval_data(V, d, L, 50, np.random.default_rng(seed), embedding)
    task = data.task
    assert data.tokens.shape == (50, L) and data.tokens.min() >= 0 and data.tokens.max() < V
    np.testing.assert_array_equal(np.sort(task.label_perm), np.arange(V))
    info = data.tokens[np.arange(50), data.info_pos]
    np.testing.assert_array_equal(task.label_perm[info], data.labels)
    assert abs(np.linalg.norm(task.trigger) - 1) < 1e-12 and abs(np.linalg.norm(task.eos) - 1) < 1e-12
    assert abs(task.trigger @ task.eos) < 1e-12
    if embedding == "orthogonal":
        np.testing.assert_allclose(task.emb @ task.emb.T, np.eye(V), atol=0)
    h = data.hidden()
    np.testing.assert_allclose(
        h[np.arange(50), data.info_pos] - task.emb[info], np.tile(task.trigger, (50, 1))
    )


def test_same_seed_same_data():
    a = make_retrieval_data(20, 8, 4, 30, np.random.default_rng(3))
    b = make_retrieval_data(20, 8, 4, 30, np.random.default_rng(3))
    np.testing.assert_array_equal(a.tokens, b.tokens)
    np.testing.assert_array_equal(a.task.emb, b.task.emb)


def test_sampled_counts_have_the_law_of_explicit_counts():
    """Mean and variance of C over many draws agree between the two samplers."""
    task = make_retrieval_task(6, 4, np.random.default_rng(0))
    L, N, reps = 3, 40, 3000
    explicit = np.stack(
        [
            cooccurrence_counts(sample_sequences(task, L, N, np.random.default_rng([1, r])))[1]
            for r in range(reps)
        ]
    ).astype(float)
    direct = np.stack(
        [sample_cooccurrence_counts(task, L, N, np.random.default_rng([2, r]))[1] for r in range(reps)]
    ).astype(float)
    np.testing.assert_allclose(explicit.mean(0), direct.mean(0), atol=0.25)
    np.testing.assert_allclose(explicit.std(0), direct.std(0), atol=0.25)
    assert direct.sum(axis=(1, 2)).tolist() == [N * L] * reps


# ------------------------------------------------------------------ GD: closed form vs autograd


@given(
    st.integers(2, 24),
    st.integers(2, 12),
    st.integers(1, 6),
    st.integers(1, 60),
    st.integers(0, 2**32 - 1),
    st.sampled_from([None, 5]),
)
def test_closed_form_equals_autograd(V, d, L, N, seed, mlp_width):
    rng = np.random.default_rng(seed)
    task = make_retrieval_task(V, d, rng, mlp_width=mlp_width)
    data = sample_sequences(task, L, N, rng)
    lr = float(V)
    ours = three_steps_closed_form(data, lr, lr)
    auto = three_steps_autograd(data, lr, lr)
    for a, b in ((ours.w_out_1, auto.w_out_1), (ours.w_kq_1, auto.w_kq_1), (ours.w_out_2, auto.w_out_2)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    np.testing.assert_allclose(hebbian_step_one(data, lr), ours.w_out_1, rtol=0, atol=1e-10)


def test_value_memory_from_counts_is_step_one():
    data = make_retrieval_data(30, 10, 5, 200, np.random.default_rng(4))
    label_counts, counts = cooccurrence_counts(data)
    np.testing.assert_allclose(
        value_memory(data.task, label_counts, counts, 5, 30.0, centred=True),
        three_steps_closed_form(data, 30.0, 30.0).w_out_1,
        atol=1e-12,
    )


def test_oracle_accuracy_is_one_with_orthogonal_embeddings_and_many_samples():
    rng = np.random.default_rng(5)
    task = make_retrieval_task(32, 32, rng, "orthogonal")
    label_counts, counts = sample_cooccurrence_counts(task, 4, 20000, rng)
    assert oracle_accuracy(task, value_memory(task, label_counts, counts, 4)) == 1.0


# ------------------------------------------------------------------ capacity measurement and fit


def test_fit_scaling_law_recovers_exponents():
    from verify.retrieval.scaling import fit_scaling_law

    rng = np.random.default_rng(0)
    grid = [[V, d, L] for V in (64, 128, 256) for d in (16, 32) for L in (2, 8)]
    n_c = [
        math.exp(
            1.0 + 1.2 * math.log(V) + 0.5 * math.log(L) - 0.9 * math.log(d) + 1e-3 * rng.standard_normal()
        )
        for V, d, L in grid
    ]
    fit = fit_scaling_law(grid, n_c)
    np.testing.assert_allclose(fit["coef"][1:], [1.2, 0.5, -0.9], atol=0.01)
    for (lo, hi), true in zip(fit["ci"][1:], (1.2, 0.5, -0.9)):
        assert lo < true < hi
    assert fit["b_plus_cprime_ci"][0] < -0.4 < fit["b_plus_cprime_ci"][1]
    with pytest.raises(ValueError, match="more than 4 points"):
        fit_scaling_law(grid[:4], n_c[:4])
    with pytest.raises(ValueError, match="finite N_c"):
        fit_scaling_law(grid, [math.inf] + n_c[1:])


QUICK_GRID = [[V, d, L] for V in (128, 256, 512) for d in (32, 64) for L in (4, 16)]


def _noisy(values, sd, seed=0):
    rng = np.random.default_rng(seed)
    return [v * math.exp(sd * rng.standard_normal()) for v in values]


def test_f1_exponent_criterion_tells_f1_from_its_competitors():
    """retrieval.scaling.fit's criterion: F1's own values (2% noise) pass and reject every named
    alternative; the margin-free law 4 V L ln V / d, a law half as steep in L, and shuffled values
    fail; NaN raises."""
    from verify.retrieval.scaling import f1_exponents_judgement

    f1 = [th.nc_pred(V, d, L) for V, d, L in QUICK_GRID]
    j, _, coef, _ = f1_exponents_judgement(QUICK_GRID, _noisy(f1, 0.02), 0.9)
    assert j.verdict == "pass", j.resolution["text"]
    assert coef[2] == pytest.approx(1.0) and all(
        not part["not_rejected"] for n, part in j.resolution["parts"].items() if n != "r2"
    )
    no_margin = [4 * V * L * math.log(V) / d for V, d, L in QUICK_GRID]
    sqrt_l = [q / math.sqrt(L) for q, (V, d, L) in zip(f1, QUICK_GRID)]
    for values in (no_margin, sqrt_l):
        assert f1_exponents_judgement(QUICK_GRID, _noisy(values, 0.02), 0.9)[0].verdict == "fail"
    shuffled = [f1[i] for i in np.random.default_rng(77).permutation(len(f1))]
    j = f1_exponents_judgement(QUICK_GRID, shuffled, 0.9)[0]
    assert j.verdict == "fail" and j.resolution["parts"]["r2"]["value"] == 0.0
    with pytest.raises(ValueError, match="finite N_c"):
        f1_exponents_judgement(QUICK_GRID, [math.nan] + f1[1:], 0.9)


def test_slope_criterion_of_the_capacity_claims():
    """nc_increases_v's criterion: F1's values over V (1% noise, 3 seeds) pass; V ln V, F3's
    orthogonal scale, fails; an infinite N_c fails on its own rule; NaN raises."""
    from verify.criteria import IntervalTest
    from verify.retrieval.capacity import slope_judgement
    from verify.retrieval.capacity_setup import loglog_slope

    Vs, d, L = [128, 256, 512], 32, 8
    f1 = [th.nc_pred(V, d, L) for V in Vs]
    v_ln_v = [V * math.log(V) for V in Vs]
    test = IntervalTest("slope", loglog_slope(Vs, f1), {"no growth": 0.0, "V ln V": loglog_slope(Vs, v_ln_v)})
    j, slopes = slope_judgement(Vs, [_noisy(f1, 0.01, s) for s in range(3)], test)
    assert j.verdict == "pass" and len(slopes) == 3, j.resolution["text"]
    assert slope_judgement(Vs, [_noisy(v_ln_v, 0.01, s) for s in range(3)], test)[0].verdict == "fail"
    j, slopes = slope_judgement(Vs, [f1, f1[:2] + [math.inf], f1], test)
    assert j.verdict == "fail" and slopes is None and j.resolution["rule"] == "threshold"
    with pytest.raises(ValueError, match="NaN"):
        slope_judgement(Vs, [f1, f1[:2] + [math.nan], f1], test)


def test_critical_n_brackets_the_target():
    from verify.retrieval.capacity_setup import critical_n, mean_oracle_accuracy

    out = critical_n(32, 32, 4, seed=0, embedding="orthogonal")
    assert out["hi"] / out["lo"] <= 1.1 + 1e-9
    assert mean_oracle_accuracy(32, 32, 4, out["hi"], 0, embedding="orthogonal") >= 0.9
    assert mean_oracle_accuracy(32, 32, 4, out["lo"], 0, embedding="orthogonal") < 0.9
    assert critical_n(64, 4, 4, seed=0)["n_c"] == math.inf  # d = 4 <= 2 ln 64: population margin < 0
