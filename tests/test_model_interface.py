"""The measurement interface shared by the block model and the fact MLP (constructions/measure.py):
``decode`` (value index per fact, -1 for a tie), ``accuracy`` and ``margins`` agree with each
other, with the decode kernel and with the measurements the claims make; FactMLP.decode() without
an argument still returns (accuracy, min margin)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from constructions import (
    BlockModel,
    FactMLP,
    FactModel,
    FactSet,
    build_block_model,
    build_encoder_decoder,
    fact_set,
    make_bijections,
    single_hop_dataset,
)
from constructions.decode import decode, predict
from constructions.measure import fact_targets, smallest_storing_size
from verify.testing import bijections, rng_from, seeds

QUICK = settings(max_examples=20, deadline=None)


@QUICK
@given(
    h_seed=seeds,
    n=st.integers(1, 60),
    v=st.integers(2, 30),
    d=st.integers(1, 6),
    chunk=st.integers(1, 17),
    float32=st.booleans(),
)
def test_predict_agrees_with_the_decode_kernel(h_seed, n, v, d, chunk, float32):
    rng = rng_from(h_seed)
    H = rng.standard_normal((n, d))
    U = rng.standard_normal((v, d))
    if d <= 2:  # exact repeats make ties
        U[1] = U[0]
    if float32:
        H, U = H.astype(np.float32), U.astype(np.float32)
    targets = rng.integers(0, v, n)
    pred = predict(H, U, chunk=chunk)
    res = decode(H, U, targets, chunk=chunk, return_margins=True)
    assert np.array_equal(pred == targets, res.margins > res.tie_tolerance * 0 + _tolerances(H, U))
    assert res.n_correct == int(np.sum(pred == targets))
    winners = np.argmax(H.astype(np.float64) @ U.T.astype(np.float64), axis=1)
    assert np.all((pred == -1) | (pred == winners) | float32)


def _tolerances(H, U):
    from constructions.decode import TIE_ULPS

    eps = np.finfo(H.dtype).eps
    return TIE_ULPS * eps * np.linalg.norm(U, axis=1).max() * np.linalg.norm(H.astype(np.float64), axis=1)


def test_predict_marks_ties_and_checks_its_input():
    assert predict(np.array([[1.0, 1.0], [2.0, 0.0]]), np.eye(2)).tolist() == [-1, 0]
    with pytest.raises(ValueError, match="at least 2 candidates"):
        predict(np.ones((3, 2)), np.ones((1, 2)))
    with pytest.raises(ValueError, match="same d"):
        predict(np.ones((3, 2)), np.ones((4, 3)))
    with pytest.raises(ValueError, match="NaN"):
        predict(np.array([[np.nan, 0.0]]), np.eye(2))


@QUICK
@given(data=bijections(n=st.integers(2, 40), r=st.integers(1, 3)), d0=st.integers(1, 8), code_seed=seeds)
def test_block_model_interface_is_consistent(data, d0, code_seed):
    perms, _ = data
    model = build_block_model(perms, d0, code_kind="rademacher", rng=rng_from(code_seed))
    assert isinstance(model, FactModel)
    targets = single_hop_dataset(perms)[2]
    decoded, margins, acc = model.decode(perms), model.margins(perms), model.accuracy(perms)
    assert decoded.shape == margins.shape == targets.shape
    assert acc == np.mean(decoded == targets)
    assert np.array_equal(decoded == targets, margins > 1e-10)  # a tie or a loss: margin <= 0
    assert np.array_equal(model.decode(perms, chunk=7), decoded)
    np.testing.assert_allclose(model._decoding(perms, True, chunk=5).margins, margins, rtol=0, atol=1e-12)
    assert model.accuracy() == acc and np.array_equal(model.decode(), decoded)


def test_block_model_agrees_with_the_claims_measurement():
    from verify.geometric.single_hop_setup import model_decoding

    perms = make_bijections(300, 3, np.random.default_rng(0))
    for d0 in (6, 10, 20):
        model = build_block_model(perms, d0, rng=np.random.default_rng(d0))
        ref = model_decoding(model)
        assert model.accuracy() == ref.accuracy
        assert model.margins().min() == pytest.approx(ref.min_margin, abs=1e-12)


def test_block_model_fact_forms():
    perms = make_bijections(10, 2, np.random.default_rng(0))
    model = build_block_model(perms, 8, rng=np.random.default_rng(1))
    subj, rel, target = single_hop_dataset(perms)
    triple = (subj[::3], rel[::3], target[::3])
    assert np.array_equal(model.decode(triple), model.decode(perms)[::3])
    assert np.array_equal(model.margins(triple), model.margins(perms)[::3])
    assert np.array_equal(fact_targets(triple), target[::3])
    with pytest.raises(ValueError, match="must match the model's"):
        model.accuracy(make_bijections(10, 3, np.random.default_rng(0)))
    with pytest.raises(ValueError, match="not a bijection"):
        model.accuracy(np.zeros((2, 10), dtype=int))
    with pytest.raises(ValueError, match="relations must lie in"):
        model.accuracy((np.array([0]), np.array([5]), np.array([0])))
    with pytest.raises(ValueError, match="1-D arrays of one length"):
        model.accuracy((np.array([0, 1]), np.array([0]), np.array([0])))


@QUICK
@given(seed=seeds, n_facts=st.integers(2, 40), n_values=st.integers(2, 8), code_dim=st.integers(1, 12))
def test_fact_mlp_interface_is_consistent(seed, n_facts, n_values, code_dim):
    facts = fact_set(n_facts, n_values, 8, rng_from(seed))
    mlp = build_encoder_decoder(facts, code_dim, rng_from(seed + 1))
    assert isinstance(mlp, FactModel)
    decoded, margins, acc = mlp.decode(facts), mlp.margins(facts), mlp.accuracy(facts)
    assert acc == np.mean(decoded == facts.fact_map)
    assert np.array_equal(decoded == facts.fact_map, margins > 1e-10)
    legacy = mlp.decode()  # unchanged: (accuracy, min margin) over its own facts
    assert legacy == (acc, float(margins.min()))
    assert mlp.accuracy() == acc and np.array_equal(mlp.margins(), margins)


def test_fact_mlp_measures_other_fact_sets():
    facts = fact_set(30, 5, 8, np.random.default_rng(0))
    mlp = build_encoder_decoder(facts, 8, np.random.default_rng(1))
    shifted = FactSet(facts.keys, facts.values, (facts.fact_map + 1) % 5)
    assert mlp.accuracy(facts) == 1.0 and mlp.accuracy(shifted) == 0.0
    assert np.all(mlp.margins(shifted) < 0)
    assert np.array_equal(mlp.decode(shifted), facts.fact_map)
    with pytest.raises(TypeError, match="must be a FactSet"):
        mlp.accuracy(np.zeros((2, 3)))
    broken = FactMLP("nan", lambda x: np.full(x.shape, np.nan), 0, 0, facts)
    with pytest.raises(ValueError, match="NaN in the MLP outputs"):
        broken.margins()


def test_smallest_storing_size():
    perms = make_bijections(64, 2, np.random.default_rng(0))
    calls = []

    def build(d0):
        calls.append(d0)
        return build_block_model(perms, d0, code_kind="rademacher_distinct", rng=np.random.default_rng(d0))

    assert smallest_storing_size(build, range(1, 33)) == 6  # 64 distinct sign patterns need d0 = 6
    assert len(calls) <= 6  # a binary search
    assert smallest_storing_size(build, [1, 2, 3]) is None
    shuffled = make_bijections(64, 2, np.random.default_rng(9))
    assert smallest_storing_size(build, [6, 8], facts=shuffled) is None


def test_block_model_still_a_dataclass_of_its_weights():
    model = build_block_model(
        make_bijections(5, 2, np.random.default_rng(0)), 4, rng=np.random.default_rng(1)
    )
    assert isinstance(model, BlockModel) and isinstance(model.transformer.unembed, torch.Tensor)
    assert set(model.__dataclass_fields__) == {"perms", "codes", "selector", "transformer"}
