"""The float32 CPU decode kernel's transposed chunks give the row layout's margins."""

import numpy as np
import pytest
import torch

import constructions.decode as dec


@pytest.mark.parametrize(
    "n, v, d, chunk",
    [(300, 257, 16, 64), (1000, 3000, 64, None), (77, 5, 3, 10), (40, 2, 8, 1), (513, 1031, 128, 100)],
)
def test_transposed_chunks_give_the_row_layout_margins(monkeypatch, n, v, d, chunk):
    g = torch.Generator().manual_seed(n + v + d)
    H, U = torch.randn(n, d, generator=g), torch.randn(v, d, generator=g)
    t = torch.randint(0, v, (n,), generator=g)
    H[1] = U[t[1]]  # an exact self-match and a tie: the same decisions in both layouts
    U[(int(t[2]) + 1) % v] = U[t[2]]
    threads = torch.get_num_threads()
    # the transposed layout is the one-thread float32 CPU kernel; the row layout is compared at the
    # same thread count (a GEMM's sums may differ between thread counts: on the idle 2-core machine
    # the 2-thread row layout differed from it in the last bit at n = 77, d = 3)
    torch.set_num_threads(1)
    try:
        assert dec._transposed(H)
        new = dec.decode(H, U, t, chunk=chunk, return_margins=True)
        monkeypatch.setattr(dec, "_transposed", lambda H: False)
        old = dec.decode(H, U, t, chunk=chunk, return_margins=True)
    finally:
        torch.set_num_threads(threads)
    # The two layouts' GEMM sums were bitwise equal on the AMD EPYC machine the kernel was tuned on;
    # on an Intel Xeon they differ in the last bits (3.6e-7 at n = 77, d = 3). The margins must agree
    # to float32 rounding, well inside the tie tolerance, and every decision must be the same.
    scale = float(H.norm(dim=1).max() * U.norm(dim=1).max())
    np.testing.assert_allclose(new.margins, old.margins, rtol=0, atol=8 * d * 2**-24 * scale)
    assert np.array_equal(new.margins > new.tie_tolerance, old.margins > old.tie_tolerance)
    assert (new.n_correct, new.tie_tolerance) == (old.n_correct, old.tie_tolerance)
    assert abs(new.min_margin - old.min_margin) <= 8 * d * 2**-24 * scale
    assert new.n_correct < n  # the tie row is an error


def test_column_max_is_the_max_over_dim_0():
    g = torch.Generator().manual_seed(0)
    for rows in (1, 2, 3, 7, 64, 1001):
        x = torch.randn(rows, 5, generator=g)
        assert torch.equal(dec._column_max(x.clone()), x.amax(dim=0))
