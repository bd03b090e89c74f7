import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from verify.measure import decode, decode_naive


@given(
    n=st.integers(2, 60),
    v=st.integers(2, 40),
    d=st.integers(1, 8),
    chunk=st.integers(1, 70),
    seed=st.integers(0, 2**31 - 1),
)
def test_chunked_equals_naive(n, v, d, chunk, seed):
    rng = np.random.default_rng(seed)
    H, U = rng.normal(size=(n, d)), rng.normal(size=(v, d))
    t = rng.integers(0, v, size=n)
    a, b = decode(H, U, t, chunk=chunk, return_margins=True), decode_naive(H, U, t)
    np.testing.assert_allclose(a.margins, b.margins, rtol=1e-12, atol=1e-12)
    assert a.n_correct == b.n_correct


def test_ties_are_errors():
    U = np.eye(3)
    H = np.array([[1.0, 1.0, 0.0]])  # ties between candidates 0 and 1
    res = decode(H, U, np.array([0]))
    assert res.accuracy == 0.0 and res.min_margin == 0.0


def test_bad_input():
    with pytest.raises(ValueError, match="NaN"):
        decode(np.array([[np.nan, 1.0]]), np.eye(2), np.array([0]))
    with pytest.raises(ValueError, match="same d"):
        decode(np.ones((2, 3)), np.eye(2), np.array([0, 1]))
    with pytest.raises(ValueError, match="targets"):
        decode(np.ones((2, 2)), np.eye(2), np.array([0, 5]))
    with pytest.raises(ValueError, match="targets shape"):
        decode(np.ones((2, 2)), np.eye(2), np.array([0]))


def test_float32_tensor_input():
    g = torch.Generator().manual_seed(1)
    H, U = torch.randn(100, 16, generator=g), torch.randn(50, 16, generator=g)
    t = torch.randint(0, 50, (100,), generator=g)
    a, b = decode(H, U, t, chunk=7, return_margins=True), decode_naive(H, U, t)
    # float32 logits: the tolerance follows the dtype (a few ulps of the logit scale), not float64's
    scale = float(H.norm(dim=1).max() * U.norm(dim=1).max())
    eps32 = torch.finfo(torch.float32).eps
    torch.testing.assert_close(
        torch.from_numpy(a.margins), torch.from_numpy(b.margins), rtol=16 * eps32, atol=16 * eps32 * scale
    )


def test_ties_are_errors_even_with_rounding_margin():
    """Two candidates equal up to rounding: a margin of +1e-16 must not count as correct."""
    u = np.array([0.6, 0.8, 0.0])
    U = np.stack([u, u + np.array([1e-16, -1e-16, 0.0]), np.array([0.0, 0.0, 1.0])])
    H = U[:2].copy()
    res = decode(H, U, np.array([0, 1]), return_margins=True)
    assert np.all(np.abs(res.margins) < 1e-15)
    assert res.accuracy == 0.0 and res.tie_tolerance > 1e-15
    ok = decode(np.eye(3), np.eye(3), np.arange(3))
    assert ok.accuracy == 1.0  # a genuine margin of 1 is far above the tolerance


def test_default_chunk_holds_at_most_its_bytes():
    """A default chunk of logits stays within DEFAULT_CHUNK_BYTES (16 MiB: 256 float32
    rows at V = 16384) and is at least one row."""
    from verify.measure import DEFAULT_CHUNK_BYTES, chunk_rows

    for v, size in [(16384, 4), (1000, 8), (10**9, 4)]:
        rows = chunk_rows(v, size)
        assert rows >= 1 and (rows == 1 or rows * v * size <= DEFAULT_CHUNK_BYTES)
    assert chunk_rows(16384, 4) * 16384 * 4 == DEFAULT_CHUNK_BYTES
