"""issue 17.3: the float32 CPU decode kernel's transposed chunks give the row layout's margins."""

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
    torch.set_num_threads(1)  # the transposed layout is the one-thread float32 CPU kernel
    try:
        assert dec._transposed(H)
        new = dec.decode(H, U, t, chunk=chunk, return_margins=True)
    finally:
        torch.set_num_threads(threads)
    monkeypatch.setattr(dec, "_transposed", lambda H: False)
    old = dec.decode(H, U, t, chunk=chunk, return_margins=True)
    np.testing.assert_array_equal(new.margins, old.margins)  # bitwise: same GEMM sums, exact max
    assert (new.n_correct, new.min_margin, new.tie_tolerance) == (
        old.n_correct,
        old.min_margin,
        old.tie_tolerance,
    )
    assert new.n_correct < n  # the tie row is an error


def test_column_max_is_the_max_over_dim_0():
    g = torch.Generator().manual_seed(0)
    for rows in (1, 2, 3, 7, 64, 1001):
        x = torch.randn(rows, 5, generator=g)
        assert torch.equal(dec._column_max(x.clone()), x.amax(dim=0))
