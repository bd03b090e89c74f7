"""Tests of the retrieval lower bound (theory/retrieval/lower.py) and its pooled-state sampler
(constructions/retrieval/lower.py): the symbolic form, the exactness of the two-token genie bound,
and each bound against simulation."""

import dataclasses
import math

import numpy as np
import pytest
import sympy

from constructions.retrieval.lower import mle_bijection, one_step_memory, sample_label_sums
from theory.retrieval import lower as tl


def test_fano_bound_depends_on_L_and_d_only_through_their_ratio():
    expr = tl.fano_n_lower_symbolic()
    V, d, L, p, S, r = sympy.symbols("V d L p S r", positive=True)
    on_ratio = sympy.simplify(expr.subs(L, 1 + r * d))
    assert d not in on_ratio.free_symbols
    value = float(expr.subs({V: 64, d: 32, L: 129, p: sympy.Rational(1, 2), S: 1}))
    assert value == pytest.approx(tl.fano_n_lower(64, 32, 129, 0.5, 1.0), rel=1e-12)
    # doubling L - 1 doubles the bound; doubling d halves it
    assert tl.fano_n_lower(64, 32, 257) == pytest.approx(2 * tl.fano_n_lower(64, 32, 129), rel=1e-12)
    assert tl.fano_n_lower(64, 64, 129) == pytest.approx(tl.fano_n_lower(64, 32, 129) / 2, rel=1e-12)


def test_sampler_statistics_match_summed_pooled_states():
    """The per-label sums have mean n_y (e_x + z) and per-coordinate variance n_y (L-1)/d."""
    V, d, L, N = 4, 8, 9, 40000
    rng = np.random.default_rng(3)
    E = rng.standard_normal((V, d)) / np.sqrt(d)
    draws = [sample_label_sums(V, d, L, N, np.random.default_rng([3, k]), emb=E) for k in range(300)]
    resid = np.concatenate(
        [
            (dr["sums"] - dr["counts"][:, None] * (E[np.argsort(dr["label_perm"])] + dr["trigger"]))
            / np.sqrt(dr["counts"])[:, None]
            for dr in draws
        ]
    )
    assert resid.mean() == pytest.approx(0.0, abs=0.05)
    assert resid.var() == pytest.approx((L - 1) / d, rel=0.05)


def test_two_token_genie_bound_is_the_bayes_success_probability():
    """V=2: one pair, so the genie reveals nothing and prod Phi(D/2) is exactly the best success
    probability given the counts; the MLE attains it (4000 draws, 4 standard errors)."""
    V, d, L, N = 2, 4, 41, 6
    hits, bounds = [], []
    for k in range(4000):
        dr = sample_label_sums(V, d, L, N, np.random.default_rng([11, k]))
        E = dr["emb"]
        hits.append(np.array_equal(mle_bijection(dr), dr["label_perm"]))
        bounds.append(tl.swap_exact_upper([((E[0] - E[1]) ** 2).sum()], [dr["counts"].sum()], dr["sigma2"]))
    se = math.sqrt(0.25 / 4000)
    assert np.mean(hits) == pytest.approx(np.mean(bounds), abs=4 * se)
    assert 0.55 < np.mean(hits) < 0.95  # the test sits where the bound is informative


def test_bounds_bracket_the_maximum_likelihood_rate():
    """Below the genie and Fano bounds the MLE is exact on < 1/2 of draws; at the decoder's
    sufficient N the decoder (per-label nearest codeword) fails on <= 1/2 of draws."""
    V, d, L = 32, 16, 33
    rng = np.random.default_rng(5)
    E = rng.standard_normal((V, d)) / np.sqrt(d)
    n_swap, n_suff = tl.swap_n_lower(E, L, 0.5), tl.n_sufficient_decoder(E, L, 0.5)
    fano = tl.fano_n_lower(V, d, L, 0.5, float(((E - E.mean(0)) ** 2).sum(1).mean()))
    assert fano < n_swap < n_suff
    low = [
        sample_label_sums(V, d, L, int(n_swap) - 1, np.random.default_rng([5, k]), emb=E) for k in range(60)
    ]
    assert np.mean([np.array_equal(mle_bijection(dr), dr["label_perm"]) for dr in low]) < 0.5
    high = [sample_label_sums(V, d, L, int(n_suff), np.random.default_rng([6, k]), emb=E) for k in range(60)]

    def decoder_exact(dr):
        centred = dr["sums"] / np.maximum(dr["counts"], 1)[:, None] - dr["trigger"]
        dist = ((centred[:, None, :] - E[None, :, :]) ** 2).sum(2)  # [label, token]
        return np.array_equal(np.argmin(dist, axis=1), np.argsort(dr["label_perm"]))

    assert np.mean([decoder_exact(dr) for dr in high]) >= 0.5
    assert np.mean([np.array_equal(mle_bijection(dr), dr["label_perm"]) for dr in high]) >= 0.5
    # the one-step memory (no bijection constraint) is below the MLE at the low point
    assert np.mean([np.mean(one_step_memory(dr) == dr["label_perm"]) for dr in low]) < 1.0


def test_fano_upper_is_a_probability_and_grows_with_n():
    vals = [tl.fano_exact_upper(n, 64, 32, 129) for n in (0, 100, 1000, 10**6)]
    assert vals[0] == pytest.approx(math.log(2) / math.lgamma(65))
    assert all(b >= a for a, b in zip(vals, vals[1:])) and vals[-1] == 1.0


@pytest.mark.parametrize(
    "call, word",
    [
        (lambda: tl.pooled_noise_variance(8, 1), "seq_len >= 2"),
        (lambda: tl.fano_n_lower(1, 8, 4), "vocab_size >= 2"),
        (lambda: tl.fano_n_lower(8, 8, 4, p=0.0), "p"),
        (lambda: tl.swap_exact_upper([1.0, 2.0], [3.0], 1.0), "same shape"),
        (lambda: tl.n_sufficient_decoder(np.ones((4, 2)), 4, 1.5), "delta"),
        (lambda: sample_label_sums(4, 2, 4, 10, np.random.default_rng(0), emb=np.ones((3, 2))), "shape"),
    ],
)
def test_bad_input_names_hypothesis(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_identical_embeddings_need_infinitely_many_samples():
    assert math.isinf(tl.n_sufficient_decoder(np.ones((4, 2)), 4, 0.5))


def test_registered_as_derived():
    from theory.registry import load_all

    assert load_all()["retrieval.fano_n_lower"].provenance == "derived"


def test_lower_bound_figure_draws_from_the_claim_record():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from paper_figs.registry import load_all as load_figures
    from verify.claims import Context, load_all
    from verify.runner import run_claim

    claim = load_all()["retrieval.lower.intrinsic"]
    quick = dict(claim.quick, n_draws=4, configs=[[16, 65]])
    record = run_claim(dataclasses.replace(claim, quick=quick), Context(seed=3))
    assert record["status"] == "pass"
    fig = load_figures()["retrieval.fig_lower"].draw({"retrieval.lower.intrinsic": record})
    assert fig.axes[0].get_xlabel() and len(fig.axes[0].lines) >= 4
    plt.close(fig)
