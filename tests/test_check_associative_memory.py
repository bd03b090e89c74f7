"""verify.testing.check_associative_memory: a modern Hopfield memory in the theory's regime retrieves
every pattern and R1, D1 and R4 apply and hold; the same memory at too small a beta is reported
with the hypotheses that fail and the patterns it misses; torch modules (float32 and float64) and
plain callables, in either layout, give the same report; layouts that disagree with the shapes,
and arguments out of range, are refused naming the parameter."""

from __future__ import annotations

import math

import numpy as np
import pytest

from constructions.hopfield.networks import clustered_patterns, sphere_patterns, update
from constructions.seeding import rng_for
from theory.hopfield.derived import separation, ungated_error_bound
from theory.hopfield.reference import capacity, sphere_radius, well_separated_threshold
from verify.memory_check import AssociativeMemoryReport, BoundCheck, Hypothesis
from verify.testing import check_associative_memory

torch = pytest.importorskip("torch")

N, D, M = 16, 32, 3 * math.sqrt(31)  # the R4 setting of docs/hopfield.md: M = 3 sqrt(d - 1)
COLUMNS = sphere_patterns(N, D, M, rng_for(0))  # (d, N), the theory's layout
ROWS = np.ascontiguousarray(COLUMNS.T)  # (N, d)
#: beta at which every hypothesis holds; beta at which none of the patterns is well separated
#: and some of them are not retrieved (9 of 16 are, at this draw)
BETA, SMALL_BETA = 1.0, 0.03


def numpy_memory(beta: float, patterns: np.ndarray = ROWS):
    """A plain callable: rows in, rows out (softmax retrieval)."""

    def memory(queries: np.ndarray) -> np.ndarray:
        logits = beta * queries @ patterns.T
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        return (p / p.sum(axis=1, keepdims=True)) @ patterns

    return memory


def columns_memory(beta: float):
    """A plain callable in the theory's layout: columns in, columns out (X softmax(beta X^T xi))."""

    def memory(queries: np.ndarray) -> np.ndarray:
        return np.stack([update(COLUMNS, q, beta) for q in queries.T], axis=1)

    return memory


class SoftmaxMemory(torch.nn.Module):
    """A modern Hopfield layer: softmax(beta xi X^T) X for each query row xi."""

    def __init__(self, patterns, beta: float, dtype=torch.float32):
        super().__init__()
        self.register_buffer("patterns", torch.as_tensor(patterns, dtype=dtype))
        self.beta = beta

    def forward(self, queries):
        return torch.softmax(self.beta * queries @ self.patterns.T, dim=-1) @ self.patterns


def labels(report: AssociativeMemoryReport) -> dict[str, tuple[bool, bool | None]]:
    return {b.label: (b.applies, b.holds) for b in report.bounds}


# --- in the regime ---------------------------------------------------------------------------
def test_in_the_regime_every_pattern_is_retrieved_and_every_bound_applies_and_holds():
    report = check_associative_memory(numpy_memory(BETA), ROWS, layout="rows", beta=BETA)
    assert isinstance(report, AssociativeMemoryReport) and report.ok and report.problems == ()
    assert report.all_retrieved and report.n_retrieved == N and report.retrieved.all()
    assert labels(report) == {"R1": (True, True), "D1": (True, True), "R4": (True, True)}
    assert all(isinstance(b, BoundCheck) for b in report.bounds)
    assert all(isinstance(h, Hypothesis) and h.holds for b in report.bounds for h in b.hypotheses)
    # the theory's numbers, from the registered functions
    assert (report.n_patterns, report.dim, report.beta, report.layout) == (N, D, BETA, "rows")
    assert report.norm_bound == pytest.approx(M, rel=1e-12) and report.on_sphere
    assert report.radius == sphere_radius(BETA, N, report.norm_bound)
    assert report.threshold == well_separated_threshold(BETA, N, report.norm_bound)
    assert report.r4_capacity == pytest.approx(capacity(BETA, 3.0, D, 0.001), rel=1e-9)
    assert N <= report.r4_capacity  # R4 predicts: these 16 patterns are storable
    np.testing.assert_allclose(
        report.separations, [separation(COLUMNS, i) for i in range(N)], rtol=0, atol=1e-10
    )
    assert report.well_separated.all() and (report.separations >= report.threshold).all()
    # the default queries lie on R1's sphere, and every error is within D1 and within the radius
    np.testing.assert_allclose(report.query_distances, report.radius, rtol=1e-9)
    assert (report.errors <= report.radius).all() and (report.errors <= report.d1_bounds + report.atol).all()
    i = 5
    assert report.d1_bounds[i] == pytest.approx(
        ungated_error_bound(BETA, N, report.norm_bound, report.separations[i], report.query_distances[i]),
        rel=1e-12,
    )
    assert report.update_deviation <= report.atol
    report.assert_retrieves()
    assert report.bound("hopfield.capacity") is report.bound("R4")


def test_the_report_is_frozen_and_its_arrays_read_only():
    report = check_associative_memory(numpy_memory(BETA), ROWS, layout="rows", beta=BETA)
    with pytest.raises(AttributeError):
        report.beta = 2.0
    with pytest.raises(ValueError, match="read-only"):
        report.errors[0] = 1.0
    with pytest.raises(KeyError, match="no bound 'R9'"):
        report.bound("R9")


def test_str_is_readable():
    text = str(check_associative_memory(numpy_memory(BETA), ROWS, layout="rows", beta=BETA))
    lines = text.splitlines()
    assert lines[0].startswith("associative memory: N=16 patterns in d=32 (layout='rows'), beta=1, M=16.7033")
    assert lines[1].startswith("retrieved: 16 of 16 patterns within R1's radius 0.00374178")
    assert "R1 needs 11.93: 16 of 16 well separated" in lines[2]
    for head in (
        "R1 [reference] (hopfield.well_separated, hopfield.sphere_radius): applies; holds",
        "D1 [derived] (hopfield.ungated_error): applies; holds",
        "R4 [reference] (hopfield.capacity): applies; holds",
    ):
        assert head in lines
    assert "  predicted: N = 16 <= sqrt(p) c^((d-1)/4) = 205.468: with probability >= 1 - p = 0.999" in text
    assert lines[-1] == "problems: none"


# --- beta too small --------------------------------------------------------------------------
def test_beta_too_small_reports_the_failed_hypotheses_and_the_missed_patterns():
    report = check_associative_memory(
        numpy_memory(SMALL_BETA), ROWS, layout="rows", beta=SMALL_BETA, raise_on_failure=False
    )
    assert not report.ok and not report.all_retrieved
    assert 0 < report.n_retrieved < N  # retrieval fails for some patterns, not all
    assert not report.well_separated.any() and (report.separations < report.threshold).all()
    r1, d1, r4 = report.bound("R1"), report.bound("D1"), report.bound("R4")
    assert not r1.applies and r1.holds is None  # no pattern meets R1's hypothesis: no prediction
    assert [h.statement.split(":")[0] for h in r1.failed_hypotheses] == ["every pattern well separated"]
    assert "0 of 16 patterns" in r1.failed_hypotheses[0].detail
    assert not r4.applies and r4.holds is None and report.r4_capacity is None
    assert [h.statement for h in r4.failed_hypotheses] == [
        "c = b / W0(exp(a + ln b)) >= (2/sqrt p)^(4/(d-1))"
    ]
    assert d1.applies and d1.holds  # D1 has no separation hypothesis: it holds, and is loose
    assert (report.d1_bounds > report.radius).all()
    assert len(report.problems) == 1 and report.problems[0].startswith(
        f"{N - report.n_retrieved} of 16 patterns are not retrieved within R1's radius"
    )
    missed = int(np.flatnonzero(~report.retrieved)[0])
    assert report.errors[missed] > report.radius
    with pytest.raises(
        AssertionError,
        match=r"patterns are not retrieved .* hypotheses that fail: every pattern well separated",
    ) as info:
        report.assert_retrieves()
    assert f"pattern {missed}: error" in str(info.value) and "c = b / W0" in str(info.value)


def test_beta_too_small_raises_by_default():
    with pytest.raises(
        AssertionError, match=r"^the associative memory fails 1 check: \d of 16 patterns are not retrieved"
    ):
        check_associative_memory(numpy_memory(SMALL_BETA), ROWS, layout="rows", beta=SMALL_BETA)


def test_a_memory_that_is_not_the_softmax_update_contradicts_the_bounds():
    """A memory that answers every query with the pattern next to the right one: the update
    hypothesis fails (so no bound applies) and every pattern is missed."""

    def shifted(queries: np.ndarray) -> np.ndarray:
        return np.roll(numpy_memory(BETA)(queries), 1, axis=0)

    report = check_associative_memory(shifted, ROWS, layout="rows", beta=BETA, raise_on_failure=False)
    assert report.n_retrieved == 0 and report.update_deviation > 1.0
    assert {b.label: b.holds for b in report.bounds} == {"R1": None, "D1": None, "R4": None}
    assert all(b.failed_hypotheses[0].statement.startswith("the memory computes") for b in report.bounds)


def test_a_wrong_beta_breaks_the_update_hypothesis():
    """Declared beta = 1 for a memory that runs at beta = 0.03: the memory is not the update the
    bounds are about, so none of them predicts anything; the missed patterns are still reported."""
    report = check_associative_memory(
        numpy_memory(SMALL_BETA), ROWS, layout="rows", beta=BETA, raise_on_failure=False
    )
    assert {b.label: b.holds for b in report.bounds} == {"R1": None, "D1": None, "R4": None}
    assert not report.bound("D1").applies and report.update_deviation > report.atol
    assert len(report.problems) == 1 and "are not retrieved" in report.problems[0]


def test_clustered_patterns_contradict_r4_whose_uniform_draw_is_not_checked():
    """Patterns on the sphere but clustered around one direction: every checked hypothesis of R4
    holds and N is below its count, yet no pattern is well separated; the report calls R4
    contradicted and names the hypothesis it cannot check."""
    X = clustered_patterns(N, D, M, 0.1, rng_for(1)).T
    report = check_associative_memory(
        numpy_memory(BETA, X), X, layout="rows", beta=BETA, raise_on_failure=False
    )
    r4 = report.bound("R4")
    assert r4.applies and r4.holds is False and report.on_sphere
    assert report.bound("D1").holds and report.bound("R1").holds is None
    assert report.n_retrieved == 0 and not report.well_separated.any()
    assert report.problems[1].startswith(
        "R4 [reference] is contradicted: predicted N = 16 <= sqrt(p) c^((d-1)/4)"
    )
    assert "drawn uniformly on the sphere, which the check cannot see" in report.problems[1]


def test_r4_predicts_nothing_above_its_count_and_off_the_sphere():
    report = check_associative_memory(
        numpy_memory(0.3), ROWS, layout="rows", beta=0.3, raise_on_failure=False
    )
    r4 = report.bound("R4")
    assert r4.applies and r4.holds is None and report.r4_capacity < N  # R4 guarantees about 4 of 16
    assert report.all_retrieved and "N / R4's count = 3.91" in r4.observed
    X = clustered_patterns(N, D, M, 0.5, rng_for(1)).T
    X[0] *= 0.5  # one pattern off the sphere
    off = check_associative_memory(numpy_memory(BETA, X), X, layout="rows", beta=BETA, raise_on_failure=False)
    assert not off.on_sphere
    assert [h.statement.split(" (")[0] for h in off.bound("R4").failed_hypotheses] == [
        "patterns on a sphere of radius M = K sqrt(d-1)"
    ]


# --- memories of every kind ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_a_torch_module_gives_the_report_of_the_plain_callable(dtype):
    module = SoftmaxMemory(ROWS, BETA, dtype)
    report = check_associative_memory(module, ROWS, layout="rows")  # beta read from the module
    plain = check_associative_memory(numpy_memory(BETA), ROWS, layout="rows", beta=BETA)
    assert report.ok and report.beta == BETA and labels(report) == labels(plain)
    np.testing.assert_array_equal(report.separations, plain.separations)
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    np.testing.assert_allclose(report.errors, plain.errors, atol=tol * M)
    assert report.atol == pytest.approx(16 * math.sqrt(D) * torch.finfo(dtype).eps * report.norm_bound)
    # patterns given as a tensor: the module gets tensors of their dtype
    assert check_associative_memory(module, torch.as_tensor(ROWS, dtype=dtype), layout="rows").ok


def test_a_torch_module_is_called_without_gradients_batch_by_batch():
    calls = []

    class Recording(SoftmaxMemory):
        def forward(self, queries):
            calls.append((tuple(queries.shape), queries.dtype, torch.is_grad_enabled()))
            return super().forward(queries)

    module = Recording(ROWS, BETA, torch.float64)
    module.patterns.requires_grad_(True)
    report = check_associative_memory(module, ROWS, layout="rows", batch_size=5)
    assert report.ok
    assert calls == [((5, D), torch.float64, False)] * 3 + [((1, D), torch.float64, False)]


def test_a_plain_callable_in_the_columns_layout():
    report = check_associative_memory(columns_memory(BETA), COLUMNS, layout="columns", beta=BETA)
    rows = check_associative_memory(numpy_memory(BETA), ROWS, layout="rows", beta=BETA)
    assert report.ok and report.layout == "columns" and labels(report) == labels(rows)
    np.testing.assert_allclose(report.errors, rows.errors, atol=1e-12)
    np.testing.assert_allclose(report.query_distances, rows.query_distances, rtol=1e-12)


def test_user_queries_seed_and_query_radius():
    seen = []

    def recording(queries: np.ndarray) -> np.ndarray:
        seen.append(queries.copy())
        return numpy_memory(BETA)(queries)

    for seed in (1, 1, 2):
        check_associative_memory(recording, ROWS, layout="rows", beta=BETA, seed=seed)
    np.testing.assert_array_equal(seen[0], seen[1])  # the queries come from the seed alone
    assert not np.array_equal(seen[0], seen[2])
    exact = check_associative_memory(numpy_memory(BETA), ROWS, layout="rows", beta=BETA, queries=ROWS)
    assert exact.ok and (exact.query_distances == 0).all()
    far = check_associative_memory(
        numpy_memory(BETA), ROWS, layout="rows", beta=BETA, query_radius=1.0, raise_on_failure=False
    )
    assert [h.statement for h in far.bound("R1").failed_hypotheses] == [
        "every query within R1's radius 1/(beta N M) of its pattern"
    ]
    assert far.bound("R1").holds is None and far.bound("D1").holds


# --- refused arguments -----------------------------------------------------------------------
def test_layout_errors_name_the_layout():
    memory = numpy_memory(BETA)
    with pytest.raises(ValueError, match=r"layout='cols' must be 'rows' .* or 'columns'"):
        check_associative_memory(memory, ROWS, layout="cols", beta=BETA)
    with pytest.raises(TypeError, match="layout"):
        check_associative_memory(memory, ROWS, beta=BETA)  # no default: an (N, N) array reads both ways
    # the row memory given column patterns: its product fails, the message says which layout to pass
    with pytest.raises(
        ValueError,
        match=r"memory failed on queries of shape \(32, 16\) \(layout='rows'.*pass layout='columns'",
    ):
        check_associative_memory(memory, COLUMNS, layout="rows", beta=BETA)
    # a memory that transposes: its output shape is named, and the other layout suggested
    with pytest.raises(
        ValueError,
        match=r"memory returned shape \(32, 16\) for queries of shape \(16, 32\).*pass layout='columns'",
    ):
        check_associative_memory(lambda q: memory(q).T, ROWS, layout="rows", beta=BETA)
    with pytest.raises(
        ValueError, match=r"queries have shape \(32, 16\) but the patterns \(16, 32\) \(layout='rows'\)"
    ):
        check_associative_memory(memory, ROWS, layout="rows", beta=BETA, queries=COLUMNS)
    with pytest.raises(
        ValueError, match=r"patterns must be a 2-D array \(d, N\), one per column \(layout='columns'\)"
    ):
        check_associative_memory(memory, ROWS[0], layout="columns", beta=BETA)
    with pytest.raises(ValueError, match="N=1 patterns .* need N >= 2"):
        check_associative_memory(memory, ROWS[:1], layout="rows", beta=BETA)


@pytest.mark.parametrize(
    "kwargs,error,match",
    [
        ({"beta": 0.0}, ValueError, "beta=0.0 violates the hypothesis beta > 0"),
        ({"beta": math.inf}, ValueError, "beta=inf must be finite"),
        ({"beta": "1"}, TypeError, "beta='1' must be a real number"),
        ({"beta": None}, TypeError, "beta= is required"),
        ({"fail_prob": 0.0}, ValueError, "fail_prob"),
        ({"seed": -1}, ValueError, "seed"),
        ({"batch_size": 0}, ValueError, "batch_size"),
        ({"atol": -1.0}, ValueError, "atol"),
        ({"query_radius": 0.1, "queries": ROWS}, ValueError, "not both"),
        ({"query_radius": -0.1}, ValueError, "query_radius"),
    ],
)
def test_arguments_out_of_range_are_refused(kwargs, error, match):
    args = {"layout": "rows", "beta": BETA, **kwargs}
    with pytest.raises(error, match=match):
        check_associative_memory(numpy_memory(BETA), ROWS, **args)


def test_non_memories_and_bad_patterns_are_refused():
    with pytest.raises(TypeError, match="memory must be a callable or a torch.nn.Module"):
        check_associative_memory(ROWS, ROWS, layout="rows", beta=BETA)
    with pytest.raises(ValueError, match="every pattern is zero"):
        check_associative_memory(lambda q: q, np.zeros((4, 3)), layout="rows", beta=BETA)
    with pytest.raises(ValueError, match="NaN or inf"):
        check_associative_memory(lambda q: q, np.full((4, 3), np.nan), layout="rows", beta=BETA)
    with pytest.raises(TypeError, match="one array"):
        check_associative_memory(lambda q: (q, q), ROWS, layout="rows", beta=BETA)
    with pytest.raises(ValueError, match="NaN or inf"):
        check_associative_memory(lambda q: q * np.nan, ROWS, layout="rows", beta=BETA)
