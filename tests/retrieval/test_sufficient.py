"""Tests of the corrected retrieval statements (theory/retrieval/sufficient.py): the sufficient
condition for exact recall, the N -> infinity plateau and the coupon bounds, each against an
independent computation or a simulation."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from theory.retrieval import bounds as th
from theory.retrieval import sufficient as ts
from verify.retrieval.capacity_setup import draw_accuracies


def _theory_eval(name, **params):
    args = [f"{k}={v}" for k, v in params.items()]
    out = subprocess.run(
        [sys.executable, "-m", "theory", "eval", name, *args, "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)["value"]


# Grid: d about 2 ln V and 4 ln V (V=32: 6.9, 13.9), a moderate d, d >> V, and orthogonal.
GRID = [(32, 7, 4), (32, 14, 4), (32, 128, 4), (32, 1024, 4), (32, 4096, 2)]


@pytest.mark.parametrize("V, d, L", GRID)
def test_sufficient_condition_agrees_with_simulation(V, d, L):
    """`python -m theory eval retrieval.n_sufficient` against simulation: finite -> every one of
    12 draws exact at that N; +inf (small d) -> the plateau at N=1e9 is below 1 on average, as
    plateau_accuracy predicts, and the F1 heuristic is finite there (it was a false guarantee)."""
    value = _theory_eval("retrieval.n_sufficient", vocab_size=V, d_model=d, seq_len=L, delta=0.1)
    if d <= 4 * math.log(V) + 1:
        assert value is None or math.isinf(float(value)) or str(value) in ("Infinity", "inf")
        accs = draw_accuracies(V, d, L, 10**9, seed=11, n_draws=12)
        assert np.mean(accs) < 1.0
        assert np.mean(accs) == pytest.approx(ts.plateau_accuracy(V, d), abs=0.06)
        assert math.isfinite(th.nc_pred(V, d, L)) or d <= 2 * math.log(V)
    else:
        N = float(value)
        assert math.isfinite(N) and N >= th.coupon_floor(V, 0.1)
        accs = draw_accuracies(V, d, L, int(N), seed=11, n_draws=12)
        assert all(a == 1.0 for a in accs)


def test_orthogonal_sufficient_condition_agrees_with_simulation():
    N = ts.n_sufficient_orthogonal(32, 4, 0.1)
    assert math.isfinite(N)
    assert all(
        a == 1.0 for a in draw_accuracies(32, 32, 4, int(N), seed=5, n_draws=12, embedding="orthogonal")
    )


def test_n_sufficient_shape():
    V, L = 256, 8
    # +inf near 2 ln V and 4 ln V, finite for large d, non-increasing in d with a finite plateau
    assert math.isinf(ts.n_sufficient(V, 12, L)) and math.isinf(ts.n_sufficient(V, 23, L))
    values = [ts.n_sufficient(V, d, L) for d in (128, 256, 1024, 4096, 65536)]
    assert all(math.isfinite(v) for v in values)
    assert all(b <= a for a, b in zip(values, values[1:]))
    assert values[-1] >= ts.n_sufficient_orthogonal(V, L) * 0.5
    # stricter delta asks more; longer sequences ask more
    assert ts.n_sufficient(V, 1024, L, 0.01) > ts.n_sufficient(V, 1024, L, 0.1)
    assert ts.n_sufficient(V, 1024, 32) > ts.n_sufficient(V, 1024, 4)
    # the margin bound increases in N (bisection relies on it)
    ns = np.geomspace(1e3, 1e9, 40)
    margins = [ts.margin_lower_bound(n, V, 1024, L, 0.1) for n in ns]
    assert all(b >= a for a, b in zip(margins, margins[1:]))


@pytest.mark.parametrize(
    "call, word",
    [
        (lambda: ts.n_sufficient(1, 32, 4), "vocab_size >= 2"),
        (lambda: ts.n_sufficient(64, 32, 4, delta=1.0), "delta"),
        (lambda: ts.n_sufficient(64, 32, 4, embedding="orthogonal"), "orthogonal embeddings need"),
        (lambda: ts.n_sufficient(64, 32, 4, embedding="sparse"), "embedding"),
        (lambda: ts.plateau_accuracy(64, 0), "d_model >= 1"),
        (lambda: ts.plateau_dimension(64, 1.0), "target"),
    ],
)
def test_bad_input_names_hypothesis(call, word):
    with pytest.raises(ValueError, match=word):
        call()


@given(st.integers(1, 4000))
def test_mean_chi_lower_bound_used_in_the_proof(d):
    """E chi_d = sqrt(2) Gamma((d+1)/2) / Gamma(d/2) >= d / sqrt(d + 1) (step (1) of the sketch)."""
    from scipy.special import gammaln

    mean_chi = math.sqrt(2.0) * math.exp(gammaln((d + 1) / 2) - gammaln(d / 2))
    assert mean_chi >= d / math.sqrt(d + 1.0) * (1 - 1e-12)


@pytest.mark.parametrize("V, d", [(16, 6), (64, 12), (256, 20)])
def test_plateau_formula_matches_monte_carlo(V, d):
    """E[Phi(chi_d)^(V-1)] by quadrature vs the defining event simulated directly: for a Gaussian
    e_x and V-1 independent Gaussian e_x', ||e_x||^2 > max <e_x', e_x>."""
    rng = np.random.default_rng([V, d])
    reps = 20000
    ex = rng.standard_normal((reps, d))
    norm2 = (ex**2).sum(1)
    cross = rng.standard_normal((reps, V - 1)) * np.sqrt(norm2)[:, None]  # <g', g> given g
    hits = float(np.mean(norm2 > cross.max(1)))
    assert ts.plateau_accuracy(V, d) == pytest.approx(hits, abs=4 * math.sqrt(0.25 / reps))


def test_plateau_dimension_is_the_crossing():
    d_star = ts.plateau_dimension(256, 0.9)
    assert ts.plateau_accuracy(256, math.floor(d_star)) < 0.9 <= ts.plateau_accuracy(256, math.ceil(d_star))
    assert 2 * math.log(256) < d_star < 4 * math.log(256)


@pytest.mark.parametrize("V, N", [(5, 8), (6, 20), (8, 30)])
def test_all_seen_upper_bounds_exact_probability(V, N):
    """P(all V seen in N draws) by inclusion-exclusion is at most 1/mu, and the sufficient floor
    V (ln V + ln 1/delta) gives P(all seen) >= 1 - delta."""
    exact = sum((-1) ** k * math.comb(V, k) * (1 - k / V) ** N for k in range(V + 1))
    assert exact <= ts.all_seen_upper(V, N) + 1e-12
    n_floor = math.ceil(th.coupon_floor(V, 0.1))
    p_floor = sum((-1) ** k * math.comb(V, k) * (1 - k / V) ** n_floor for k in range(V + 1))
    assert p_floor >= 0.9


def test_theory_registers_the_corrected_statements():
    from theory.registry import load_all

    bounds = load_all()
    for name in ("retrieval.n_sufficient", "retrieval.plateau_accuracy", "retrieval.all_seen_upper"):
        assert bounds[name].provenance == "derived"
    assert "sufficient" in bounds["retrieval.coupon_floor"].statement
    assert "heuristic" in bounds["retrieval.nc_pred"].statement


def test_gd_capacity_bisection_on_nested_samples():
    """The GD-capacity bisection (verify/retrieval/gd_capacity.py) trains on nested prefixes of one
    pool, brackets the target, and never reaches it at initialisation (all ties are errors)."""
    from verify.claims import Context
    from verify.retrieval.gd_capacity import critical_n_gd, gd_accuracy

    ctx = Context(seed=7)
    out = critical_n_gd(ctx, 16, 32, 2, seed=7, target=0.5, n_draws=1)
    assert math.isfinite(out["n_c"])
    below = [a for n, a in out["trace"] if n < out["n_c"]]
    assert all(a < 0.5 for a in below)
    assert gd_accuracy(ctx, 16, 32, 2, out["n_c"], 7, n_draws=1) >= 0.5
    assert math.isinf(critical_n_gd(ctx, 16, 32, 2, seed=7, target=0.5, init=True, n_draws=1)["n_c"])
