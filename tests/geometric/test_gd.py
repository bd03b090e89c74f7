"""Geometric GD: the trained model of docs/geometric.md (determinism, freezing, fit on a tiny task), the
probes on exact superpositions, the threshold sweep point through the shared sweep runner, bad input."""

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from constructions.geometric.train import init_params, train_accuracy, train_model
from constructions.tasks import make_bijections
from tests.strategies import rng_from, seeds
from verify.geometric.gd_setup import attribute_features, probe_r2, r2_score, ridge_fit, train_margin
from verify.geometric.gd_threshold import threshold_point, trained_threshold
from verify.sweep import run_grid


def _gen(seed):
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def test_training_is_deterministic_and_fits_a_small_task():
    perms = make_bijections(32, 2, rng_from(0))
    a = train_model(perms, 8, 32, steps=150, lr=3e-2, generator=_gen(1), record_every=50)
    b = train_model(perms, 8, 32, steps=150, lr=3e-2, generator=_gen(1), record_every=50)
    for name in a.params:
        assert torch.equal(a.params[name], b.params[name]), name
    assert a.params["subject"].dtype == torch.float64
    assert train_accuracy(a) == 1.0
    assert a.history["step"] == [0, 50, 100, 150] and len(a.snapshots) == 4


@pytest.mark.parametrize("steps", [1, 10, 150])
def test_train_margin_is_positive_exactly_at_train_accuracy_one(steps):
    """gd.fit's per-seed quantity decides what train_accuracy == 1 decides, at and away from a fit."""
    perms = make_bijections(32, 2, rng_from(0))
    model = train_model(perms, 8, 32, steps=steps, lr=3e-2, generator=_gen(1), record_every=50)
    assert (train_margin(model) > 0) == (train_accuracy(model) == 1.0)
    if steps == 150:
        assert train_margin(model) > 0


def test_frozen_subject_embeddings_do_not_move():
    perms = make_bijections(16, 2, rng_from(3))
    init = init_params(16, 2, 4, 8, _gen(5))
    model = train_model(perms, 4, 8, steps=20, generator=_gen(5), freeze_subject=True)
    assert torch.equal(model.params["subject"], init["subject"])
    assert not torch.equal(model.params["unembed"], init["unembed"])


@given(n=st.integers(50, 90), r=st.integers(1, 4), d=st.integers(2, 6), seed=seeds)
def test_probe_recovers_an_exact_superposition(n, r, d, seed):
    rng = rng_from(seed)
    perms = make_bijections(n, r, rng)
    u = rng.standard_normal((n, d))
    w = rng.standard_normal((r * d, d))
    e = attribute_features(u, perms) @ w
    assert probe_r2(e, u, perms, 1e-9, rng_from(seed + 1)) == pytest.approx(1.0, abs=1e-6)
    fit, xm, ym = ridge_fit(attribute_features(u, perms), e, 1e-9)
    assert r2_score(e, (attribute_features(u, perms) - xm) @ fit + ym) == pytest.approx(1.0, abs=1e-9)


def test_threshold_point_through_the_sweep_runner_matches_a_direct_call():
    params = {
        "n_subjects": 24,
        "n_relations": 2,
        "dim": 4,
        "mlp_width": 16,
        "steps": 60,
        "lr": 3e-2,
        "record_every": 20,
    }
    direct = threshold_point(params, 3)
    [record] = run_grid(threshold_point, [params], seeds=[3], workers=1)
    assert record["result"] == direct


def test_trained_threshold_bisection_is_consistent():
    p = {"n_relations": 2, "mlp_width": 16, "steps": 80, "lr": 3e-2, "record_every": 20, "d_max": 8}
    d_star, tried = trained_threshold(24, p, 0)
    assert 1 <= d_star <= 8
    assert all(t["accuracy"] == 1.0 for t in tried if t["dim"] >= d_star)
    assert all(t["accuracy"] < 1.0 for t in tried if t["dim"] < d_star)


def test_bad_input():
    perms = make_bijections(8, 2, rng_from(0))
    with pytest.raises(ValueError, match="dim=0 violates the hypothesis dim >= 1"):
        train_model(perms, 0, 4, steps=5, generator=_gen(0))
    with pytest.raises(ValueError, match="torch.Generator"):
        train_model(perms, 4, 4, steps=5, generator=np.random.default_rng(0))
    with pytest.raises(ValueError, match="steps=0"):
        train_model(perms, 4, 4, steps=0, generator=_gen(0))
    with pytest.raises(ValueError, match="lr=-1"):
        train_model(perms, 4, 4, steps=5, lr=-1, generator=_gen(0))
    with pytest.raises(ValueError, match="not a bijection"):
        train_model(np.array([[0, 0, 1]]), 4, 4, steps=5, generator=_gen(0))


def test_gate_relation_share_extremes():
    from verify.geometric.gd import gate_relation_share

    rng = rng_from(0)
    # gates set by the relation alone (closed blocks): share 1; gates independent of r: share about 0
    by_rel = np.repeat(np.array([[1.0, -1.0], [-1.0, 1.0]])[:, None, :], 50, axis=1)
    np.testing.assert_allclose(gate_relation_share(by_rel), 1.0)
    noise = rng.standard_normal((4, 400, 30))
    assert np.median(gate_relation_share(noise)) < 0.02
