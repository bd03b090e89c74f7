"""hopfield.trained_dim (the capacity atlas's trained hopfield family): the trainer of
constructions.hopfield.trained, the windowed search and the claim with its untrained control."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from constructions.hopfield.networks import retrieval_errors_batch  # noqa: E402
from constructions.hopfield.trained import memories, problem, retrieval_errors, train  # noqa: E402
from theory.hopfield.reference import sphere_radius  # noqa: E402
from verify.claims import rng_for  # noqa: E402
from verify.hopfield.trained_dim_setup import (  # noqa: E402
    QUICK,
    construction_stores,
    draw,
    search_trained,
    shared_search,
)


def test_retrieval_errors_match_the_numpy_update_on_the_auto_associative_case():
    """Memories = cues, pi = identity: the errors are the construction's ||f(x_i) - x_i||,
    computed by the independent numpy code of constructions.hopfield.networks."""
    cues, _, _ = problem(40, 6, 3.0 * math.sqrt(5), rng_for(1, 2))
    want = retrieval_errors_batch(cues, np.arange(40), 1.0)
    t = torch.from_numpy(cues)[None]
    got = retrieval_errors(t, t, torch.arange(40)[None], 1.0)[0].numpy()
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_construction_on_the_draw_stores_at_step_zero_and_random_init_does_not():
    n, d = 16, 12
    cues, pi, w0 = draw(n, d, 3.0, 4, 0)
    radius = 3.0 * math.sqrt(d - 1)
    assert construction_stores(cues, pi, 1.0)
    X = np.empty_like(cues)
    X[:, pi] = cues
    out = train([(cues, pi, X), (cues, pi, w0)], [radius, radius], 1.0, 0, 0.5, 10)
    assert out["first_step"] == [0, None]
    assert out["error_over_tol"][0] <= 1.0 < out["error_over_tol"][1]


def test_padded_batch_trains_each_problem_as_alone_and_padding_stays_zero():
    small, big = draw(16, 4, 3.0, 7, 0), draw(16, 9, 3.0, 7, 0)
    radii = [3.0 * math.sqrt(3), 3.0 * math.sqrt(8)]
    both = train([small, big], radii, 1.0, 60, 0.5, 10)
    alone = train([small], radii[:1], 1.0, 60, 0.5, 10)
    assert both["first_step"][0] == alone["first_step"][0]
    np.testing.assert_allclose(both["final_ce"][0], alone["final_ce"][0], rtol=1e-9)
    W = torch.zeros(1, 9, 16, dtype=torch.float64)
    W[0, :4] = torch.from_numpy(small[2])  # a d = 4 problem padded to 9 coordinates
    X = memories(W, torch.tensor([2.0], dtype=torch.float64))
    np.testing.assert_allclose(X.norm(dim=1).numpy(), 2.0, rtol=1e-12)
    assert torch.all(X[0, 4:] == 0)


def test_training_stores_where_the_initialisation_does_not():
    cues, pi, w0 = draw(32, 8, 3.0, 3, 1)
    radius = 3.0 * math.sqrt(7)
    out = train([(cues, pi, w0)], [radius], 1.0, 400, 0.5, 10)
    assert out["first_step"][0] is not None and out["first_step"][0] > 0
    assert out["final_ce"][0] < 1e-3


def test_window_does_not_change_the_search_and_d_star_is_the_first_storing_d():
    p = {k: QUICK[k] for k in ("K", "beta", "steps", "lr", "check_every", "window")}
    by4 = search_trained(16, 23, 5, draws=2, **p)
    by1 = search_trained(16, 23, 5, draws=2, **{**p, "window": 1})
    assert by4 == by1 and all(d is not None for d in by4["d_star"])
    for k, d in enumerate(by1["d_star"]):
        below = [draw(16, e, 3.0, 5, k) for e in range(2, d)]
        radii = [3.0 * math.sqrt(e - 1) for e in range(2, d)]
        assert all(s is None for s in train(below, radii, 1.0, 400, 0.5, 10)["first_step"])


def test_bad_input_is_a_value_error():
    with pytest.raises(ValueError, match="N"):
        problem(1, 4, 1.0, rng_for(0))
    a, b = draw(16, 4, 3.0, 0, 0), draw(32, 4, 3.0, 0, 0)
    with pytest.raises(ValueError, match="same N"):
        train([a, b], [1.0, 1.0], 1.0, 1, 0.5, 1)
    with pytest.raises(ValueError, match="one radius per problem"):
        train([a], [1.0, 1.0], 1.0, 1, 0.5, 1)
    with pytest.raises(ValueError, match="lr"):
        train([a], [1.0], 1.0, 1, 0.0, 1)


def test_tolerance_is_r1_radius():
    """The storing tolerance of the trainer is R1's 1/(beta N M) (theory.hopfield.reference)."""
    cues, pi, _ = draw(16, 10, 3.0, 2, 0)
    X = np.empty_like(cues)
    X[:, pi] = cues
    err = retrieval_errors(
        torch.from_numpy(X)[None], torch.from_numpy(cues)[None], torch.from_numpy(pi)[None], 1.0
    )
    tol = sphere_radius(1.0, 16, 3.0 * 3.0)
    assert construction_stores(cues, pi, 1.0) == bool(err.max() <= tol)


def test_claim_passes_and_its_untrained_control_fails():
    from verify.claims import CLAIMS, Context, load_all

    load_all()
    c = CLAIMS["hopfield.trained_dim.stores_by_r4"]
    small = {**c.quick, "sizes": [16, 32]}
    out = c.check(small, Context(seed=0))
    assert out.passed and all(r["median_trained_over_construction"] <= 1 for r in out.details["rows"])
    control = c.controls[0].apply(small)
    bad = c.check(control, Context(seed=0))
    assert not bad.passed and all(d is None for r in bad.details["rows"] for d in r["d_star"])
    assert (
        shared_search(control, Context(seed=0))["rows"][0]["d_star_construction"]
        == out.details["rows"][0]["d_star_construction"]
    )
