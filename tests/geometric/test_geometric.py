"""Geometric single-hop: property tests over random bijections, bad input, theory values."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from constructions.geometric.rotation import build_rotation_model
from constructions.geometric.single_hop import (
    attribute_codes,
    build_block_model,
    build_selector,
    swap_bijections,
)
from constructions.tasks import check_bijections, make_bijections, single_hop_dataset
from tests.strategies import bijections, rng_from, seeds
from theory.geometric import single_hop as B
from verify.geometric.single_hop_setup import model_decoding
from verify.measure import decode, min_pairwise_gap


@given(data=bijections(n=st.integers(2, 120), r=st.integers(1, 4)), extra=st.integers(0, 8), code_seed=seeds)
def test_sufficient_dim_gives_accuracy_one_and_predicted_margin(data, extra, code_seed):
    perms, _ = data
    n = perms.shape[1]
    d0 = math.ceil(B.d0_sufficient(n, 1.0, 0.01)) + extra
    model = build_block_model(
        perms, d0, code_kind="rademacher", rng=rng_from(code_seed), guarantee=(1.0, 0.01)
    )
    res = model_decoding(model)
    predicted = min_pairwise_gap(model.codes)  # margin predicted from the realised coherence
    if predicted > 0:
        assert res.accuracy == 1.0
    assert res.min_margin >= predicted - 1e-12


@given(
    data=bijections(n=st.integers(2, 80), r=st.integers(1, 4)), d0=st.integers(1, 6), chunk=st.integers(1, 40)
)
def test_model_decoding_in_chunks_equals_one_pass(data, d0, chunk):
    """The chunked decoding (memory bound at full scale) gives the counts of decoding
    every fact at once, and its minimum margin and tie tolerance up to float64 rounding (a chunk of
    one row runs a matrix-vector product, whose last bit may differ from the matrix product's;
    chunks of 4096 rows gave identical records at N = 10^4, R = 8)."""
    perms, seed = data
    model = build_block_model(perms, d0, rng=rng_from(seed))
    subj, rel, target = single_hop_dataset(model.perms)
    whole = decode(model.final_hidden(subj, rel), model.transformer.unembed, target)
    parts = model_decoding(model, chunk=chunk)
    assert (parts.n_correct, parts.n_queries, parts.accuracy) == (
        whole.n_correct,
        whole.n_queries,
        whole.accuracy,
    )
    np.testing.assert_allclose(parts.min_margin, whole.min_margin, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(parts.tie_tolerance, whole.tie_tolerance, rtol=1e-12, atol=0)
    # one chunk: since model_decoding reads only the unembedding's nonzero columns,
    # its GEMM has a different shape, so equal to the last bit is no longer guaranteed
    np.testing.assert_allclose(model_decoding(model).min_margin, whole.min_margin, rtol=1e-12, atol=1e-15)


@given(data=bijections(n=st.integers(2, 80), r=st.integers(1, 5)), d0=st.integers(1, 12), code_seed=seeds)
def test_selector_is_exact(data, d0, code_seed):
    perms, _ = data
    model = build_block_model(perms, d0, rng=rng_from(code_seed))
    subj, rel, target = single_hop_dataset(perms)
    np.testing.assert_allclose(
        model.selector(model.subject_embeddings[subj], rel), model.codes[target], rtol=0, atol=1e-12
    )


@given(n=st.integers(2, 60), r=st.integers(1, 5), d0=st.integers(1, 10), s1=seeds, s2=seeds)
def test_mlp_weights_do_not_depend_on_bijections(n, r, d0, s1, s2):
    a = build_block_model(make_bijections(n, r, rng_from(s1)), d0, rng=rng_from(7))
    b = build_block_model(make_bijections(n, r, rng_from(s2)), d0, rng=rng_from(7))
    ta, tb = a.transformer.tensors(), b.transformer.tensors()
    for name in ta:
        if name != "embed":
            assert np.array_equal(ta[name].numpy(), tb[name].numpy()), name
    assert np.array_equal(ta["embed"][n:].numpy(), tb["embed"][n:].numpy())


def test_selector_not_exact_when_gate_bias_too_small():
    """The exactness lemma's hypothesis beta > max|x_i| is needed: violating it is refused."""
    perms = make_bijections(20, 2, rng_from(0))
    with pytest.raises(ValueError, match="gate bias beta=0.1 must exceed"):
        build_block_model(perms, 4, rng=rng_from(1), gate_bias=0.1)


def test_transfer_keeps_all_but_subject_rows():
    model = build_block_model(make_bijections(50, 3, rng_from(0)), 12, rng=rng_from(1))
    new = swap_bijections(model, make_bijections(50, 3, rng_from(2)))
    assert model_decoding(new).accuracy == 1.0
    assert new.transformer.w_in is model.transformer.w_in


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.array([[0, 0, 1]]), "not a bijection"),
        (np.array([[0]]), "N >= 2"),
        (np.zeros((0, 5), dtype=int), "R >= 1"),
        (np.array([0, 1, 2]), r"shape \(R, N\)"),
    ],
)
def test_bad_relation_tables(bad, match):
    with pytest.raises(ValueError, match=match):
        check_bijections(bad)


def test_bad_inputs():
    rng = rng_from(0)
    with pytest.raises(ValueError, match="N >= 2"):
        make_bijections(1, 2, rng)
    with pytest.raises(ValueError, match="R >= 1"):
        make_bijections(5, 0, rng)
    with pytest.raises(ValueError, match="d0 >= 1"):
        attribute_codes(10, 0, "spherical", rng)
    with pytest.raises(ValueError, match="d0 >= 1"):
        build_selector(2, 0)
    codes = attribute_codes(10, 4, "spherical", rng)
    codes[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        build_block_model(make_bijections(10, 2, rng), codes=codes)
    with pytest.raises(ValueError, match=r"dim=10 is below the sufficient dimension 38\.2 for N=1000"):
        build_block_model(make_bijections(1000, 1, rng), 10, rng=rng, guarantee=(1.0, 0.01))
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        make_bijections(5, 1, 3)
    with pytest.raises(ValueError, match="dim d=1"):
        build_rotation_model(make_bijections(5, 1, rng), 1, rng)


def test_theory_reference_values():
    assert abs(B.info_bits(1000, 4) - 34117.6) < 0.1
    assert abs(B.d0_sufficient(1000, 1.0, 0.01) - 38.23) < 0.01
    assert abs(B.d0_sufficient(1000, 0.5, 0.01) - 152.91) < 0.01
    assert abs(B.d0_sufficient(10**4, 1.0, 0.01) - 47.44) < 0.01
    assert abs(B.d0_necessary(1000, 0.5) - 6.29) < 0.01
    assert math.isfinite(B.info_bits(10**9, 4)) and B.info_bits(10**18, 1) > 0
    with pytest.raises(ValueError, match="t <= 1"):
        B.d0_sufficient(100, 1.5, 0.01)
    with pytest.raises(ValueError, match="delta"):
        B.d0_sufficient(100, 0.5, 0.0)


@given(n=st.integers(2, 10**6), r=st.integers(1, 20))
def test_info_bound_matches_sympy_form(n, r):
    from theory.registry import get_bound

    bound = get_bound("geometric.info_bits")
    assert bound.evaluate(N=n, R=r) == pytest.approx(r * math.lgamma(n + 1) / math.log(2), rel=1e-12)
    if n < 2000:
        assert float(bound.expression().subs({B.N: n, B.R: r}).evalf(20)) == pytest.approx(
            bound.evaluate(N=n, R=r), rel=1e-10
        )


def test_theory_cli_json():
    import json
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "theory", "eval", "geometric.info_bits", "N=1000", "R=4", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    row = json.loads(out.stdout)
    assert row["name"] == "geometric.info_bits" and row["params"] == {"n_subjects": 1000, "n_relations": 4}
    assert abs(row["value"] - 34117.6) < 0.1
    bad = subprocess.run(
        [sys.executable, "-m", "theory", "eval", "geometric.info_bits", "N=1", "R=4"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "N >= 2" in bad.stderr


def test_rotation_variant_crosstalk_shrinks_with_dim():
    perms = make_bijections(128, 3, rng_from(0))
    subj, rel, target = single_hop_dataset(perms)
    from verify.measure import decode

    accs = [
        decode(
            build_rotation_model(perms, d, rng_from(d)).selector_output(subj, rel),
            build_rotation_model(perms, d, rng_from(d)).codes,
            target,
        ).accuracy
        for d in (6, 80)
    ]
    assert accs[0] < accs[1]


# --- formerly claims (a formula against its own constant is a unit test) ---------------------------
def test_info_bits_reference_values_and_sympy():
    """Was geometric.single_hop.info_bound: B1 = R log2(N!) against recorded reference values."""
    import sympy as sp

    for n, r, ref in ((256, 4, 6736.0), (1000, 4, 34117.6), (10000, 8, 947665.1)):
        assert abs(B.info_bits(n, r) - ref) <= 0.1
        assert B.info_bits(n, r) == pytest.approx(float((r * sp.log(sp.factorial(n), 2)).evalf(30)), rel=1e-9)


def test_selector_param_count_is_fact_independent():
    """Was geometric.single_hop.param_count: 2d^2 + 2d + 2d d0 parameters, the same weights for any perms."""
    a = build_block_model(make_bijections(1000, 4, rng_from(1)), 28, rng=rng_from(2))
    b = build_block_model(make_bijections(1000, 4, rng_from(3)), 28, rng=rng_from(2))
    d = 112
    assert a.selector.param_count() == b.selector.param_count() == 2 * d * d + 2 * d + 2 * d * 28 == 31584
    for f in ("w_in", "gate_bias", "w_out"):
        assert np.array_equal(getattr(a.selector, f), getattr(b.selector, f))


def test_model_threshold_equals_code_threshold_for_every_R():
    """Was geometric.single_hop.dim_indep_R (its code threshold ignores R by construction): the built
    model's margin over all N*R facts equals the code gap whatever R, so no crosstalk moves it."""
    from verify.geometric.scaling_setup import code_threshold

    d0, _ = code_threshold(128, 0.25, 0, range(2, 80))
    codes_hi = attribute_codes(128, d0, "spherical", np.random.default_rng([0, 2, 128, d0, 0]))
    codes_lo = attribute_codes(128, d0 - 1, "spherical", np.random.default_rng([0, 2, 128, d0 - 1, 0]))
    for r in (2, 4, 8):
        perms = make_bijections(128, r, rng_from(r))
        hi = model_decoding(build_block_model(perms, codes=codes_hi)).min_margin
        lo = model_decoding(build_block_model(perms, codes=codes_lo)).min_margin
        assert hi == pytest.approx(min_pairwise_gap(codes_hi), abs=1e-12) and hi >= 0.25
        assert lo == pytest.approx(min_pairwise_gap(codes_lo), abs=1e-12) and lo < 0.25


def test_volumetric_bound_is_below_the_demonstrations():
    """Was the symbolic half of margin_nec: d0 = 6 < d0_nec(1000, 0.5) = 6.29 < 7."""
    assert 6 < B.d0_necessary(1000, 0.5) < 7


def test_margin_nec_measures_b3_looseness_instead_of_a_bracket():
    """B3 is only necessary: margin_nec is empirical, reports d0*/d0_nec, and its over-claiming
    control (a bound 20x B3) fails; the boundary it measures is at or above B3 (the theorem)."""
    from verify.claims import Context, load_all

    claim = load_all()["geometric.single_hop.margin_nec"]
    assert claim.kind == "empirical" and not claim.demonstrates_failure
    p = {**claim.params("quick"), "n_subjects": 100, "seeds": 3, "d0_max": 64}
    out = claim.check(p, Context(seed=0))
    assert all(d >= out.details["d0_nec"] for d in out.details["d0_star"])
    assert out.passed and out.resolution["rule"] == "threshold"
    assert not claim.check({**p, "bound_scale": 20.0}, Context(seed=0)).passed


@given(d0=st.integers(1, 14), seed=seeds)
def test_rademacher_distinct_codes_collide_only_when_forced(d0, seed):
    codes = attribute_codes(600, d0, "rademacher_distinct", rng_from(seed))
    distinct = len(np.unique(codes, axis=0))
    assert distinct == min(600, 2**d0)
    np.testing.assert_allclose(np.abs(codes), 1 / math.sqrt(d0))


def test_threshold_bisect_is_a_crossing():
    from verify.geometric.scaling_setup import code_gap, threshold_bisect

    d_star, probed = threshold_bisect(300, 0.25, 3, 64)
    assert code_gap(300, d_star, 3) >= 0.25 > code_gap(300, d_star - 1, 3)
    with pytest.raises(ValueError, match="d0_max"):
        threshold_bisect(300, 0.25, 3, 8)
