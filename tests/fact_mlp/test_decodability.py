"""fact_mlp decodability (docs/fact_mlp.md#setting): exactness, certificate, invariances, bad input."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from theory.fact_mlp.rho import coherence, decodability, is_feasible, rho_lower_bound


def spherical(n, d, seed):
    X = np.random.default_rng(seed).standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def test_reference_value_d32_n256():
    """Recorded reference: d=32, n_V=256, seed 0 gives rho = 0.551, mu = 0.621."""
    V = spherical(256, 32, 0)
    res = decodability(V)
    assert abs(res.rho - 0.551) < 1e-3
    assert abs(coherence(V) - 0.621) < 1e-3
    assert res.gap < 1e-6
    assert res.rho >= rho_lower_bound(coherence(V))


def test_matches_full_nnls_without_column_generation():
    V = spherical(80, 6, 3)
    small = decodability(V, working_set=2)
    full = decodability(V, working_set=79)
    np.testing.assert_allclose(small.per_value, full.per_value, atol=1e-9)


def test_brute_force_2d():
    """In d = 2 the max over the unit circle is found by a fine angle grid."""
    V = spherical(7, 2, 5)
    res = decodability(V)
    ang = np.linspace(0, 2 * np.pi, 200001)
    U = np.stack([np.cos(ang), np.sin(ang)], 1)
    for i in range(len(V)):
        W = V[i] - np.delete(V, i, 0)
        W /= np.linalg.norm(W, axis=1, keepdims=True)
        brute = max(0.0, float((U @ W.T).min(axis=1).max()))
        assert abs(brute - res.per_value[i]) < 1e-4


@given(seed=st.integers(0, 2**31 - 1), n=st.integers(3, 40), d=st.integers(2, 12), scale=st.floats(0.1, 10.0))
def test_certificate_and_invariance(seed, n, d, scale):
    V = spherical(n, d, seed)
    res = decodability(V)
    assert res.gap < 1e-6
    assert np.all(res.per_value >= 0) and res.rho <= 1.0 + 1e-12
    Q, _ = np.linalg.qr(np.random.default_rng(seed + 1).standard_normal((d, d)))
    for W in (scale * V, V @ Q):
        np.testing.assert_allclose(decodability(W).per_value, res.per_value, atol=1e-8)


def test_stretch_is_not_a_similarity():
    """The converse of the invariance: a diagonal stretch V D (entries in [0.5, 2]) changes rho,
    so the invariance test above can fail."""
    V = spherical(64, 16, 4)
    D = np.diag(np.random.default_rng(5).uniform(0.5, 2.0, 16))
    assert np.max(np.abs(decodability(V @ D).per_value - decodability(V).per_value)) > 1e-3


def test_interior_value_has_rho_zero():
    V = spherical(20, 32, 0)
    V = np.vstack([V, (V[0] + V[1]) / 2])
    res = decodability(V)
    assert res.per_value[-1] < 1e-8
    assert not np.any(res.separators[-1])
    feasible, bad = is_feasible(V, np.arange(21))
    assert not feasible and bad == [20]


@pytest.mark.parametrize(
    "values, pattern",
    [
        (np.zeros((3,)), "shape"),
        (np.ones((1, 4)), "n_values >= 2"),
        (np.array([[1.0, 0.0], [np.nan, 1.0]]), r"values\[1\].*NaN"),
        (np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]]), r"values\[0\] and values\[2\].*duplicate"),
    ],
)
def test_bad_input(values, pattern):
    with pytest.raises(ValueError, match=pattern):
        decodability(values)


def test_rho_lower_bound_rejects_bad_mu():
    with pytest.raises(ValueError, match="mu"):
        rho_lower_bound(1.5)


@pytest.mark.parametrize("scale", [1e-6, 1e-3, 1e3, 1e6])
def test_scale_invariance_far_from_one(scale):
    """rho is scale invariant also far below and above norm 1 (1e-6 * V used
    to raise 'duplicate values')."""
    V = spherical(40, 6, 11)
    ref = decodability(V)
    res = decodability(scale * V)
    np.testing.assert_allclose(res.per_value, ref.per_value, atol=1e-10)
    assert res.gap < 1e-9


def test_near_duplicates_translation_invariant_and_certified():
    """Two values 1e-6 apart: the pair's direction is found from the difference vector, so rho is
    unchanged by translating the table (the w_ij are), and the primal value recomputed directly
    from the differences equals per_value (the old norm expansion was off by ~4e-6)."""
    V = spherical(30, 5, 2)
    e = np.random.default_rng(3).standard_normal(5)
    V[1] = V[0] + 1e-6 * e / np.linalg.norm(e)
    res = decodability(V)
    shifted = decodability(V + 10.0)
    np.testing.assert_allclose(shifted.per_value, res.per_value, atol=1e-9)
    for i in range(len(V)):
        W = V[i] - np.delete(V, i, 0)
        W /= np.linalg.norm(W, axis=1, keepdims=True)
        np.testing.assert_allclose(float((W @ res.separators[i]).min()), res.per_value[i], atol=1e-12)
    assert res.gap < 1e-9


def test_duplicates_relative_to_the_largest_norm():
    V = spherical(10, 4, 0) * 1e-8
    with pytest.raises(ValueError, match="duplicate"):
        decodability(np.vstack([V, V[3]]))
    with pytest.raises(ValueError, match="all zero"):
        decodability(np.zeros((3, 2)))


def test_coherence_requires_unit_norm_unless_asked():
    """coherence() no longer normalises silently (rho_lower_bound(coherence(V))
    exceeded rho for non-unit values)."""
    V = np.random.default_rng(0).standard_normal((30, 8))
    with pytest.raises(ValueError, match="unit-norm"):
        coherence(V)
    U = V / np.linalg.norm(V, axis=1, keepdims=True)
    assert coherence(V, normalise=True) == pytest.approx(coherence(U), abs=1e-12)


def test_decodability_exported_from_theory_fact_mlp():
    """The documented entry point."""
    import theory.fact_mlp.bounds as fm
    import theory.fact_mlp.rho as fd

    assert fm.decodability is fd.decodability


@pytest.mark.parametrize(
    "n, d, gram_bytes",
    [(300, 300, 2**30), (300, 300, 0), (40, 64, 2**30), (120, 50, 2**30), (400, 600, 2**30)],
)
def test_pivoting_matches_active_set_reference(n, d, gram_bytes):
    """The block-pivoting solver on the normal equations (from the value Gram matrix,
    or per working set with gram_bytes=0) gives the rho_i of the scipy active-set path, with a
    certificate as tight."""
    V = spherical(n, d, n + d)
    ref = decodability(V, solver="active_set")
    res = decodability(V, gram_bytes=gram_bytes)
    np.testing.assert_allclose(res.per_value, ref.per_value, atol=1e-10)
    assert res.gap < 1e-9 and ref.gap < 1e-9


def test_pivoting_with_an_interior_value_and_near_pair():
    """The pivoting path falls back where it must: rho = 0 for a midpoint (the min-norm point is
    0) and near-duplicate rows (not well separated: directions from differences)."""
    V = spherical(200, 300, 1)
    V = np.vstack([V, (V[0] + V[1]) / 2])
    V[5] = V[4] + 1e-7 * spherical(1, 300, 2)[0]
    ref = decodability(V, solver="active_set")
    res = decodability(V)
    np.testing.assert_allclose(res.per_value, ref.per_value, atol=1e-9)
    assert res.per_value[-1] < 1e-8


def test_bad_solver_name():
    with pytest.raises(ValueError, match="solver"):
        decodability(spherical(5, 3, 0), solver="simplex")


@pytest.mark.parametrize("n, d, factor", [(300, 8, 1.0), (200, 300, 1.0), (250, 16, 3e5), (250, 16, 1e-5)])
def test_float32_screening_matches_the_float64_reference(n, d, factor):
    """Float32 screening of the n_V^2 distances and checks (used by default for large
    tables) with the exact float64 re-check gives the reference rho_i, also with an interior
    value, a near-duplicate pair and far-from-one scales (float32 runs on the rescaled table)."""
    V = spherical(n, d, n + d)
    V = np.vstack([V, (V[0] + V[1]) / 2])
    V[5] = V[4] + 1e-7 * spherical(1, d, 2)[0]
    ref = decodability(V, solver="active_set", screen=False)
    res = decodability(factor * V, screen=True)
    np.testing.assert_allclose(res.per_value, ref.per_value, atol=1e-9)
    assert res.per_value[-1] < 1e-8 and res.gap < 1e-9


def test_initial_working_sets_of_long_rows():
    """Rows longer than 16384 pick their initial working set below a threshold read from a
    strided sample (no full argpartition): at most k columns, and where k were found they are
    exactly the k smallest scores."""
    from theory.fact_mlp.rho import _nearest

    score = np.random.default_rng(0).random((6, 40000))
    sets = _nearest(score, 50)
    assert len(sets) == 6 and all(1 <= len(s) <= 50 for s in sets)
    full = sum(len(s) == 50 for s in sets)
    assert full >= 4
    for a, s in enumerate(sets):
        if len(s) == 50:
            assert set(s) == set(np.argsort(score[a])[:50])


@pytest.mark.parametrize("n, d, factor", [(300, 8, 1.0), (260, 40, 1e-4)])
def test_screened_path_with_a_pool_too_small_matches_the_reference(monkeypatch, n, d, factor):
    """The screened path's column generation runs inside a pool of likely columns and
    its final float32-screened check adds any violator from outside the pool. With a pool of a few
    columns (so the outside violators are the rule) it still gives the reference rho_i and a tight
    certificate, with an interior value and a near-duplicate pair."""
    import theory.fact_mlp.screen as screen

    monkeypatch.setattr(screen, "POOL_MIN", 3)
    monkeypatch.setattr(screen, "POOL_FACTOR", 1)
    V = spherical(n, d, 7 * n + d)
    V = np.vstack([V, (V[0] + V[1]) / 2])
    V[5] = V[4] + 1e-7 * spherical(1, d, 3)[0]
    ref = decodability(V, solver="active_set", screen=False)
    res = decodability(factor * V, screen=True, working_set=2)
    np.testing.assert_allclose(res.per_value, ref.per_value, atol=1e-9)
    assert res.per_value[-1] < 1e-8 and res.gap < 1e-9
    assert res.working_set.max() > 3  # the final check did add columns from outside the pool


def test_screened_workers_match_one_process():
    """The screened path split over two forked processes gives the one-process
    result (the per-value problems are independent); workers < 1 is rejected."""
    V = spherical(700, 12, 11)
    one = decodability(V, screen=True, chunk=128)
    two = decodability(V, screen=True, chunk=128, workers=2)
    np.testing.assert_allclose(two.per_value, one.per_value, atol=1e-12)
    np.testing.assert_allclose(two.separators, one.separators, atol=1e-9)
    assert two.gap < 1e-9
    with pytest.raises(ValueError, match="workers"):
        decodability(V, workers=0)


def test_decodability_is_exported_from_the_package():
    """The documented entry point is the function, not a submodule of the same name."""
    import numpy as np

    from theory.fact_mlp import decodability as exported
    from theory.fact_mlp.rho import decodability as direct

    assert exported is direct
    # n orthonormal values: the nearest point of the hull of (e_i - e_j)/sqrt(2), j != i, is their
    # mean, of norm sqrt((1 + 1/(n - 1))/2): sqrt(3)/2 at n = 3
    assert abs(exported(np.eye(3)).rho - np.sqrt(3) / 2) < 1e-12


@pytest.mark.parametrize("n, d, factor", [(700, 10, 1.0), (600, 24, 2e3)])
def test_screened_column_blocks_and_strided_sample_match_the_reference(monkeypatch, n, d, factor):
    """The screened passes run in column blocks (the last one partial) with the pool
    threshold read from a strided sample of columns; with small blocks, a sample of every 4th
    column and a small pool they still give the reference rho_i, with an interior value and a
    near-duplicate pair."""
    import theory.fact_mlp.screen as screen

    monkeypatch.setattr(screen, "BLOCK", 96)
    monkeypatch.setattr(screen, "SAMPLE", n // 4)
    monkeypatch.setattr(screen, "POOL_MIN", 24)
    V = spherical(n, d, 3 * n + d)
    V = np.vstack([V, (V[0] + V[1]) / 2])
    V[5] = V[4] + 1e-7 * spherical(1, d, 4)[0]
    ref = decodability(V, solver="active_set", screen=False)
    res = decodability(factor * V, screen=True, chunk=64)
    np.testing.assert_allclose(res.per_value, ref.per_value, atol=1e-9)
    assert res.per_value[-1] < 1e-8 and res.gap < 1e-9


def test_screened_path_with_tied_scores():
    """A cross-polytope (+-e_k): every score but the antipode's ties, so the pool threshold admits
    nearly every column and the pool keeps k of them; rho_i = 1/sqrt(2) for every value."""
    d = 12
    V = np.vstack([np.eye(d), -np.eye(d)])
    res = decodability(V, screen=True)
    np.testing.assert_allclose(res.per_value, np.full(2 * d, 2**-0.5), atol=1e-12)
    assert res.gap < 1e-12
