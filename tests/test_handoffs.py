"""Hand-offs that hold: what a public function computes lies inside the domain of the public
functions that take it (theory/fact_mlp/rho.py clips rho to [0, 1] and the coherence to [-1, 1],
where rounding could leave them by an ulp; the validators stay exact).

Each property feeds the output of one public function into another, on drawn inputs:

- ``theory.decodability(values).rho`` -> ``fact_mlp.jl_code_dim`` (rho was 1 + 2^-52 for 71 of
  200 random two-value tables, and jl_code_dim refused it);
- ``coherence(values)`` -> ``rho_lower_bound(mu)``, and the bound it gives lies below rho;
- ``decodability(values)`` -> ``build_encoder_decoder(..., decodability=...)``, with the code
  dimension that ``jl_code_dim`` gives (rounded up), storing every fact;
- ``geometric.d0_suff`` (rounded up) -> ``build_block_model(..., guarantee=(t, delta))``;
- ``geometric.k_max`` -> ``geometric.d_nocot``: the depth it gives fits the dimension, one more
  does not.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import theory
from theory.fact_mlp.rho import coherence, rho_lower_bound
from verify.testing import fact_sets, rng_from, seeds

FAST = settings(max_examples=40, deadline=None)


def test_rho_of_two_values_is_a_valid_rho_for_every_table():
    rhos = [theory.decodability(rng_from(s).standard_normal((2, 3))).rho for s in range(200)]
    assert max(rhos) == 1.0 and min(rhos) > 1.0 - 1e-12  # two values: rho = 1, 1 + 2^-52 clipped to 1
    for rho in set(rhos):
        assert theory.evaluate("fact_mlp.jl_code_dim", n_values=2, rho=rho) >= 8 * math.log(2)


@FAST
@given(seed=seeds, n=st.integers(2, 12), d=st.integers(1, 8), scale=st.sampled_from([1e-3, 1.0, 1e3]))
def test_decodability_feeds_jl_code_dim(seed, n, d, scale):
    res = theory.decodability(scale * rng_from(seed).standard_normal((n, d)))
    assert 0.0 <= res.rho <= 1.0 and np.all((res.primal >= 0) & (res.dual <= 1.0))
    if res.rho > 0:
        code_dim = theory.evaluate("fact_mlp.jl_code_dim", n_values=n, rho=res.rho)
        assert code_dim >= 8 * math.log(n)


@FAST
@given(seed=seeds, n=st.integers(2, 12), d=st.integers(2, 8), antipodal=st.booleans())
def test_coherence_feeds_rho_lower_bound(seed, n, d, antipodal):
    values = rng_from(seed).standard_normal((n, d))
    if antipodal:  # v and -v: the coherence of the pair is -1 up to rounding
        values = np.vstack([values[:1], -values[:1]])
    values /= np.linalg.norm(values, axis=1, keepdims=True)
    mu = coherence(values)
    assert -1.0 <= mu <= 1.0
    bound = rho_lower_bound(mu)
    assert theory.decodability(values).rho >= bound - 1e-12


@settings(max_examples=15, deadline=None)
@given(facts=fact_sets(n_facts=st.integers(2, 24), n_values=st.integers(2, 6), d=st.integers(8, 16)))
def test_decodability_and_jl_code_dim_feed_the_encoder_decoder(facts):
    from constructions import build_encoder_decoder

    res = theory.decodability(facts.values)
    if res.rho <= 0:  # an undecodable value: the builder refuses it, by design (B4)
        return
    code_dim = math.ceil(theory.evaluate("fact_mlp.jl_code_dim", n_values=facts.n_values, rho=res.rho))
    mlp = build_encoder_decoder(facts, code_dim, np.random.default_rng(0), decodability=res)
    assert mlp.accuracy(facts) == 1.0


@settings(max_examples=15, deadline=None)
@given(
    seed=seeds, n=st.integers(2, 40), t=st.sampled_from([0.5, 0.75, 1.0]), delta=st.sampled_from([0.01, 0.1])
)
def test_d0_suff_feeds_the_block_model_guarantee(seed, n, t, delta):
    from constructions import build_block_model, make_bijections

    d0 = math.ceil(theory.evaluate("geometric.d0_suff", N=n, t=t, delta=delta))
    perms = make_bijections(n, 2, rng_from(seed))
    model = build_block_model(perms, d0, rng=rng_from(seed + 1), guarantee=(t, delta))
    assert model.block_dim == d0


@FAST
@given(d=st.integers(1, 4096), d0=st.integers(1, 64), r=st.integers(2, 8))
def test_k_max_feeds_d_nocot(d, d0, r):
    k = theory.evaluate("geometric.k_max", d=d, d0=d0, R=r)
    assert k >= 0
    if k >= 1:
        assert theory.evaluate("geometric.d_nocot", R=r, k=k, d0=d0) <= d
    assert theory.evaluate("geometric.d_nocot", R=r, k=k + 1, d0=d0) > d
