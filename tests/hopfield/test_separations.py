"""The vectorised separations Delta_i and D1 bounds of theory/hopfield/derived.py, and R1's radius as
the registered bound hopfield.sphere_radius (docs/hopfield.md#statements-and-proof-sketches)."""

import json
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp

import theory
from constructions.hopfield.networks import clustered_patterns, gaussian_patterns, sphere_patterns
from constructions.seeding import rng_for
from theory.hopfield import derived as D
from theory.hopfield import reference as R
from theory.registry import get_bound


@pytest.mark.parametrize(
    "make",
    [
        lambda gen: sphere_patterns(40, 16, 3.0, gen),
        lambda gen: gaussian_patterns(7, 3, gen),
        lambda gen: clustered_patterns(30, 8, 2.0, 0.1, gen),
        lambda gen: gen.integers(-2, 3, size=(4, 12)).astype(float),  # ties: repeated patterns
    ],
    ids=["sphere", "gaussian", "clustered", "integer_ties"],
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_separations_equal_the_one_pattern_function(make, seed):
    X = make(rng_for(seed))
    one_by_one = np.array([D.separation(X, i) for i in range(X.shape[1])])
    scale = max(1.0, float(np.max(np.abs(X.T @ X))))
    np.testing.assert_allclose(D.separations(X), one_by_one, rtol=0, atol=1e-12 * scale)


def test_separations_in_blocks_equal_one_block(monkeypatch):
    """The Gram matrix is built a block of rows at a time; the block size changes nothing."""
    X = sphere_patterns(50, 8, 2.0, rng_for(3))
    whole = D.separations(X)
    monkeypatch.setattr(D, "GRAM_ELEMENTS", 7 * 50)  # blocks of 7 rows, the last one shorter
    np.testing.assert_allclose(D.separations(X), whole, rtol=0, atol=1e-12)  # only rounding differs


def test_separations_of_two_patterns_and_bad_input():
    X = np.array([[1.0, 0.0], [0.0, 2.0]])
    assert D.separations(X).tolist() == [1.0, 4.0]
    with pytest.raises(ValueError, match=r"shape \(d, N\) with N >= 2"):
        D.separations(np.ones((3, 1)))
    with pytest.raises(ValueError, match="NaN or inf"):
        D.separations(np.array([[1.0, np.nan], [0.0, 1.0]]))


def test_vectorised_d1_equals_the_registered_bound():
    gen = rng_for(4)
    delta = gen.uniform(-1.0, 20.0, 25)
    radii = gen.uniform(0.0, 0.5, 25)
    for beta, n, m in [(0.5, 25, 2.0), (2.0, 10, 1.0), (8.0, 3, 0.7)]:
        got = D.ungated_error_bounds(beta, n, m, delta, radii)
        want = [
            theory.evaluate("hopfield.ungated_error", beta=beta, N=n, M=m, Delta=dl, r=r)
            for dl, r in zip(delta, radii)
        ]
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=0)
    # one radius for all; N = 1 has no competitor; a huge exponent saturates at 2 M
    assert D.ungated_error_bounds(1.0, 4, 1.0, np.array([0.0, 1.0]), 0.0).shape == (2,)
    assert D.ungated_error_bounds(1.0, 1, 1.0, np.array([3.0]), 0.1).tolist() == [0.0]
    assert D.ungated_error_bounds(1.0, 4, 1.0, np.array([-1e4]), 0.0).tolist() == [2.0]


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"beta": 0.0}, "beta"),
        ({"n_patterns": 0}, "N"),
        ({"norm_bound": -1.0}, "M"),
        ({"separations": np.array([np.nan])}, "separations"),
        ({"radii": -0.1}, "radii"),
    ],
)
def test_vectorised_d1_bad_input(kwargs, match):
    args = {"beta": 1.0, "n_patterns": 4, "norm_bound": 1.0, "separations": np.array([1.0]), "radii": 0.0}
    with pytest.raises(ValueError, match=match):
        D.ungated_error_bounds(**{**args, **kwargs})


def test_sphere_radius_is_a_registered_reference_bound():
    bound = get_bound("hopfield.sphere_radius")
    assert bound.provenance == "reference" and bound.label == "R1" and bound.numeric is R.sphere_radius
    for beta, n, m in [(1.0, 16, 1.0), (0.3, 100, 3 * 31**0.5), (4.0, 2, 0.25)]:
        value = theory.evaluate("hopfield.sphere_radius", beta=beta, N=n, M=m)
        assert value == R.sphere_radius(beta, n, m) == pytest.approx(1.0 / (beta * n * m), rel=1e-15)
        expr = bound.expression().subs({R.beta_s: beta, R.N_s: n, R.M_s: m})
        assert float(expr) == pytest.approx(value, rel=1e-12)
    assert isinstance(bound.expression(), sp.Expr)
    # the package's re-export is the same function, so the claims' callers keep their numbers
    from theory.hopfield import sphere_radius

    assert sphere_radius is R.sphere_radius


def test_sphere_radius_is_r1s_radius():
    """At r = R1's radius, a pattern exactly at R1's separation threshold gets a D1 bound equal to
    the radius: the two statements describe the same sphere."""
    beta, n, m = 2.0, 16, 1.5
    radius = R.sphere_radius(beta, n, m)
    threshold = R.well_separated_threshold(beta, n, m)
    assert D.ungated_error_bound(beta, n, m, threshold, radius) == pytest.approx(radius, rel=1e-12)


@pytest.mark.parametrize(
    "params", [{"beta": 0, "N": 10, "M": 1}, {"beta": 1, "N": 1, "M": 1}, {"beta": 1, "N": 4, "M": 0}]
)
def test_sphere_radius_bad_input(params):
    with pytest.raises(ValueError, match="hopfield.sphere_radius"):
        get_bound("hopfield.sphere_radius").evaluate(**params)


def test_sphere_radius_from_the_command_line():
    out = subprocess.run(
        [sys.executable, "-m", "theory", "eval", "hopfield.sphere_radius", "beta=1", "N=16", "M=1", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout)["value"] == 0.0625
