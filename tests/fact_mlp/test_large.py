"""The bucketed fact-MLP builder (constructions.fact_mlp.large)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from constructions.fact_mlp.facts import decode_numpy, fact_set, gated_forward
from constructions.fact_mlp.large import build_large


def _facts(F, n_v, d, seed):
    return fact_set(F, n_v, d, np.random.default_rng(seed))


@given(seed=st.integers(0, 2**31 - 1), d=st.integers(4, 24), F=st.integers(1, 400), n_v=st.integers(2, 40))
def test_exact_on_every_key(seed, d, F, n_v):
    """Every fact decoded, codes equal to the targets, slabs tile the keys with sizes <= d."""
    fs = _facts(F, n_v, d, seed)
    mlp = build_large(fs.keys, fs.values, fs.fact_map, seed=seed)
    code = mlp.code(fs.keys)
    np.testing.assert_allclose(code, mlp.info["value_codes"][fs.fact_map], atol=1e-9, rtol=0)
    acc, margin = decode_numpy(mlp.forward(fs.keys), fs.values, fs.fact_map)
    assert acc == 1.0 and margin > 0
    assert mlp.info["bucket_max"] <= d
    assert mlp.encoder.shape[0] == len(mlp.ramps) + 1
    assert mlp.n_buckets * mlp.info["bucket_min"] <= F + d  # no empty slab


def test_torch_in_torch_out_and_numpy_agree():
    import torch

    fs = _facts(300, 16, 8, 1)
    mlp = build_large(fs.keys, fs.values, fs.fact_map, seed=3)
    out = mlp.forward(torch.as_tensor(fs.keys, dtype=torch.float32))
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64 and out.shape == (300, 8)
    np.testing.assert_allclose(out.numpy(), mlp.forward(fs.keys.astype(np.float32).astype(float)))


def test_gated_relu_form_matches_on_random_queries():
    """The telescoped ReLU-gated MLP computes the same map, also between slabs (in the ramps)."""
    fs = _facts(200, 16, 8, 2)
    mlp = build_large(fs.keys, fs.values, fs.fact_map, seed=0)
    X = np.random.default_rng(5).standard_normal((500, 8))
    t = X @ mlp.direction
    lo, hi = mlp.ramps[0]
    X = np.vstack([X, X[:1] + ((lo + hi) / 2 - t[0]) * mlp.direction])  # a query inside a ramp
    g = mlp.gated()
    ref = mlp.forward(X)
    np.testing.assert_allclose(gated_forward(g, X), ref, rtol=1e-6, atol=1e-6 * np.abs(ref).max())
    assert g["W_up"].shape[0] * 3 * 8 + g["W_up"].shape[0] == mlp.n_params_relu


def test_gate_weights_are_a_partition_of_unity():
    fs = _facts(500, 16, 12, 4)
    mlp = build_large(fs.keys, fs.values, fs.fact_map, seed=1)
    t = np.linspace(-2, 2, 10001)
    slab, w = mlp.gate_weights(t)
    np.testing.assert_allclose(w.sum(1), 1.0)
    assert np.all(w >= 0) and np.all(slab >= 0) and np.all(slab < mlp.n_buckets)
    slab_k, w_k = mlp.gate_weights(fs.keys @ mlp.direction)  # keys: exactly one slab open
    assert np.all(np.max(w_k, 1) == 1.0)


def test_parameter_count():
    fs = _facts(1000, 32, 16, 0)
    mlp = build_large(fs.keys, fs.values, fs.fact_map, seed=0)
    J, d, m_c = mlp.encoder.shape
    assert mlp.n_params == d + 2 * (J - 1) + J * d * m_c + m_c * d
    assert 1000 / 16 <= J <= 1000 / 14 + 1  # slabs of 14..16 keys (default window)


def test_code_dim_random_projection_decoder():
    fs = _facts(400, 32, 32, 6)
    mlp = build_large(fs.keys, fs.values, fs.fact_map, seed=0, code_dim=24)
    assert mlp.projection.shape == (24, 32) and mlp.encoder.shape[2] == 24
    np.testing.assert_allclose(mlp.code(fs.keys), mlp.info["value_codes"][fs.fact_map], atol=1e-9)


def test_overfull_buckets_are_refused_unless_asked_and_then_inexact():
    fs = _facts(2000, 64, 16, 0)
    with pytest.raises(ValueError, match="bucket"):
        build_large(fs.keys, fs.values, fs.fact_map, bucket=32)
    mlp = build_large(fs.keys, fs.values, fs.fact_map, bucket=32, allow_overfull=True)
    assert mlp.info["max_fit_error"] > 1e-3


def test_bad_input():
    fs = _facts(50, 8, 4, 0)
    K = fs.keys.copy()
    K[7] = K[3]
    with pytest.raises(ValueError, match="same projection|dependent"):
        build_large(K, fs.values, fs.fact_map)
    K[7, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        build_large(K, fs.values, fs.fact_map)
    V = np.vstack([fs.values, (fs.values[0] + fs.values[1]) / 2])
    f = fs.fact_map.copy()
    f[0] = len(V) - 1
    with pytest.raises(ValueError, match="convex hull"):
        build_large(fs.keys, V, f)
    with pytest.raises(ValueError, match="min_bucket"):
        build_large(fs.keys, fs.values, fs.fact_map, bucket=3, min_bucket=4)


def test_build_large_reexported_from_fact_mlp():
    """The documented entry point constructions.fact_mlp.build_large, importable whichever module
    is imported first; constructions.fact_mlp.facts does not import large.py (no import circle)."""
    import subprocess
    import sys

    for first in ("constructions.fact_mlp.facts", "constructions.fact_mlp.large"):
        code = (
            f"import {first}\nfrom constructions.fact_mlp import build_large\n"
            "import constructions.fact_mlp.large as m\nassert build_large is m.build_large"
        )
        root = __import__("pathlib").Path(__file__).resolve().parents[2]
        subprocess.run([sys.executable, "-c", code], check=True, cwd=root)
    import constructions.fact_mlp.facts as fm

    assert not hasattr(fm, "build_large")
