"""The balanced label counts of the equal-count capacity claims (verify/retrieval/equal_counts.py)."""

import numpy as np
import pytest

from constructions.retrieval.task import equal_label_counts, make_retrieval_task, sample_cooccurrence_counts
from constructions.seeding import rng_for
from verify.retrieval.early_gd import attention_step
from verify.retrieval.equal_counts import ld_exponents, read_fit


@pytest.mark.parametrize("V, N", [(4, 3), (16, 16), (16, 37), (256, 1000)])
def test_equal_counts_sum_to_n_and_differ_by_at_most_one(V, N):
    counts = equal_label_counts(V, N, rng_for(1, "retrieval.scaling.permutation"))
    assert counts.sum() == N and counts.max() - counts.min() <= (1 if N % V else 0)


def test_equal_counts_in_the_cooccurrence_draw():
    task = make_retrieval_task(16, 8, rng_for(2, "retrieval.scaling.permutation"))
    n, counts = sample_cooccurrence_counts(task, 4, 160, rng_for(3, "retrieval.scaling.permutation"), "equal")
    assert np.all(n == 10) and np.all(counts.sum(axis=1) == 4 * n)
    with pytest.raises(ValueError, match="label_counts"):
        sample_cooccurrence_counts(task, 4, 160, rng_for(3, "retrieval.scaling.permutation"), "uniform")


def test_ld_exponents_of_an_exact_l_over_d_law_sum_to_zero():
    pts = [(L, d) for d in (32, 128) for L in (8, 32)]
    b, c = ld_exponents(pts, [7.0 * L / d for L, d in pts])
    assert abs(b - 1) < 1e-12 and abs(c + 1) < 1e-12


def test_the_pilot_fit_names_pilot_seeds_only():
    fit = read_fit()
    assert min(fit["pilot_seeds"]) >= 100 and fit["ld_law"]["multinomial_mean"] < 0


def test_attention_step_shrinks_between_draws_with_n():
    """Two independent draws of N sequences give closer W^(1) at 16 N than at N (one task)."""
    rng = rng_for(5, "retrieval.early_gd.trained.rng", 32, 16, 4, 0, 0)
    task = make_retrieval_task(32, 16, rng)

    def gap(N):
        a, b = (
            attention_step(
                task, 4, N, 32.0, 32.0, rng_for(5, "retrieval.early_gd.trained.rng", 32, 16, 4, N, 0, r)
            )
            for r in (1, 2)
        )
        return np.linalg.norm(a - b)

    assert gap(4096) < gap(256) / 2
