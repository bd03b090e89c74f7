"""verify.testing: the hypothesis strategies (sizes and seeds drawn, arrays built from a seeded
Generator) and the assertions, with their failure messages."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constructions import FactSet, build_block_model, build_encoder_decoder, make_bijections
from theory import decodability, get_bound
from verify import testing
from verify.testing import (
    assert_bound_holds,
    assert_margin_at_least,
    assert_stores,
    bijections,
    fact_sets,
    relation_tables,
    rng_from,
    spherical_codes,
    value_tables,
)

QUICK = settings(max_examples=15, deadline=None)


# --- strategies ------------------------------------------------------------------------------
@QUICK
@given(data=bijections(n=st.integers(2, 30), r=st.integers(1, 4)))
def test_bijections_are_rebuilt_from_their_seed(data):
    perms, seed = data
    assert perms.dtype == np.int64 and 1 <= perms.shape[0] <= 4 and 2 <= perms.shape[1] <= 30
    assert all(np.array_equal(np.sort(row), np.arange(perms.shape[1])) for row in perms)
    assert np.array_equal(perms, make_bijections(perms.shape[1], perms.shape[0], rng_from(seed)))


def test_the_suite_strategies_are_the_shared_ones():
    import tests.strategies as suite

    for name in ("bijections", "seeds", "n_subjects", "n_relations", "block_dims", "rng_from"):
        assert getattr(suite, name) is getattr(testing, name)


@QUICK
@given(table=relation_tables(n=st.integers(2, 20), r=3))
def test_relation_tables_of_bijections(table):
    assert table.shape[0] == 3 and all(
        np.array_equal(np.sort(row), np.arange(table.shape[1])) for row in table
    )


@QUICK
@given(table=relation_tables(n=50, r=st.integers(1, 3), n_values=st.integers(1, 4)))
def test_relation_tables_of_arbitrary_maps(table):
    assert table.shape[1] == 50 and table.dtype == np.int64
    assert table.min() >= 0 and table.max() < 4


def test_a_size_must_be_an_int_or_a_strategy():
    with pytest.raises(TypeError, match="n must be an int or a hypothesis strategy"):
        bijections(n=2.5)


@QUICK
@given(facts=fact_sets(n_facts=st.integers(1, 30), n_values=st.integers(2, 6), d=st.integers(4, 12)))
def test_fact_sets_are_valid_fact_sets(facts):
    assert isinstance(facts, FactSet)
    assert 1 <= facts.n_facts <= 30 and 2 <= facts.n_values <= 6 and 4 <= facts.d_model <= 12
    assert np.allclose(np.linalg.norm(facts.keys, axis=1), 1.0)


@QUICK
@given(facts=fact_sets(n_values=st.integers(2, 8), d=8, tied=True))
def test_tied_fact_sets(facts):
    assert facts.keys is facts.values and np.array_equal(np.sort(facts.fact_map), np.arange(facts.n_values))


@QUICK
@given(facts=fact_sets(n_facts=10, n_values=st.integers(2, 10), d=st.integers(6, 12), min_decodability=0.25))
def test_fact_sets_with_a_minimum_decodability(facts):
    assert decodability(facts.values).rho >= 0.25


@QUICK
@given(values=value_tables(n_values=st.integers(2, 12), d=st.integers(6, 16), min_decodability=0.3))
def test_value_tables_meet_their_minimum_decodability(values):
    assert 2 <= values.shape[0] <= 12 and 6 <= values.shape[1] <= 16
    assert np.allclose(np.linalg.norm(values, axis=1), 1.0)
    assert decodability(values).rho >= 0.3


@QUICK
@given(codes=spherical_codes(n=st.integers(2, 20), d=st.integers(1, 8)))
def test_spherical_codes_are_unit_rows(codes):
    assert 2 <= codes.shape[0] <= 20 and 1 <= codes.shape[1] <= 8
    assert np.allclose(np.linalg.norm(codes, axis=1), 1.0)


@QUICK
@given(codes=spherical_codes(n=8, d=st.integers(1, 6), kind="rademacher"))
def test_rademacher_codes(codes):
    assert np.allclose(np.abs(codes), 1.0 / np.sqrt(codes.shape[1]))


# --- assert_stores ---------------------------------------------------------------------------
PERMS = np.array([[1, 0, 2], [2, 1, 0]])


def _identity_model():
    return build_block_model(PERMS, 3, codes=np.eye(3))  # margins exactly 1 on its own facts


def test_assert_stores_passes_on_stored_facts():
    model = _identity_model()
    assert_stores(model, PERMS)
    assert_stores(model)  # the model's own facts by default


def test_assert_stores_names_the_failing_facts_and_margins():
    model = _identity_model()
    wrong = np.array([[0, 1, 2], [2, 1, 0]])  # relation 0 changed on subjects 0 and 1
    with pytest.raises(AssertionError) as err:
        assert_stores(model, wrong)
    msg = str(err.value)
    assert msg.startswith("the model does not store 2 of 6 facts (accuracy 0.666667); first failures: ")
    assert "fact 0 (subject 0, relation 0): value 0 expected, decoded 1, margin -1" in msg
    assert "fact 2 (subject 1, relation 0): value 1 expected, decoded 0, margin -1" in msg


def test_assert_stores_shows_a_few_and_counts_the_rest():
    perms = make_bijections(20, 2, np.random.default_rng(0))
    model = build_block_model(perms, 8, rng=np.random.default_rng(1))
    shuffled = make_bijections(20, 2, np.random.default_rng(2))
    with pytest.raises(AssertionError, match=r"first failures: (fact \d+ .*){2}; and \d+ more$"):
        assert_stores(model, shuffled, show=2)


def test_assert_stores_reports_a_tie():
    codes = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])  # attributes 0 and 1 share a code
    model = build_block_model(np.array([[0, 1, 2]]), codes=codes)
    with pytest.raises(AssertionError, match=r"value 0 expected, decoded a tie \(-1\), margin 0"):
        assert_stores(model)


def test_assert_stores_on_a_fact_mlp_names_keys():
    rng = np.random.default_rng(0)
    keys = rng.standard_normal((12, 8))
    values = np.eye(8)[:4]
    facts = FactSet(keys, values, rng.integers(0, 4, 12))
    mlp = build_encoder_decoder(facts, 8, np.random.default_rng(1))
    assert_stores(mlp, facts)
    assert_stores(mlp)
    other = FactSet(keys, values, (facts.fact_map + 1) % 4)
    with pytest.raises(
        AssertionError,
        match=r"does not store 12 of 12 facts \(accuracy 0\); first failures: fact 0 \(keys\[0\]\)",
    ):
        assert_stores(mlp, other)


def test_assertions_take_any_model_with_the_interface():
    class Table:
        """A user's own model: decodes fact i to answers[i] with margin +1 or -1."""

        def __init__(self, answers):
            self.answers = np.asarray(answers)

        def decode(self, facts):
            return self.answers

        def accuracy(self, facts=None):
            return float(np.mean(self.answers == facts.fact_map))

        def margins(self, facts=None):
            return np.where(self.answers == facts.fact_map, 1.0, -1.0)

    facts = FactSet(np.eye(3), np.eye(3), np.array([0, 1, 2]))
    assert_stores(Table([0, 1, 2]), facts)
    with pytest.raises(
        AssertionError, match=r"1 of 3 facts .* fact 2 \(keys\[2\]\): value 2 expected, decoded 0, margin -1$"
    ):
        assert_stores(Table([0, 1, 0]), facts)
    with pytest.raises(ValueError, match="give the facts to check"):
        assert_stores(Table([0]))


# --- assert_margin_at_least ------------------------------------------------------------------
def test_assert_margin_at_least():
    model = _identity_model()
    assert_margin_at_least(model, PERMS, 1.0)
    with pytest.raises(AssertionError) as err:
        assert_margin_at_least(model, PERMS, 1.25, show=1)
    assert str(err.value) == (
        "6 of 6 facts have a margin below 1.25 (smallest 1 at fact 0 (subject 0, relation 0)); "
        "first: fact 0 (subject 0, relation 0): margin 1; and 5 more"
    )


def test_assert_margin_at_least_names_the_smallest():
    perms = make_bijections(30, 2, np.random.default_rng(0))
    model = build_block_model(perms, 12, rng=np.random.default_rng(1))
    m = model.margins(perms)
    worst = int(np.argmin(m))
    with pytest.raises(AssertionError, match=rf"smallest {m[worst]:.6g} at fact {worst} "):
        assert_margin_at_least(model, perms, float(np.median(m)))


# --- assert_bound_holds ----------------------------------------------------------------------
def test_assert_bound_holds_lower_bound():
    assert_bound_holds("geometric.d0_nec", 6.3, N=1000, gamma=0.5)
    with pytest.raises(AssertionError) as err:
        assert_bound_holds("geometric.d0_nec", 6, N=1000, gamma=0.5)
    msg = str(err.value)
    assert msg.startswith(
        "bound geometric.d0_nec = 6.28771 at N=1000, gamma=0.5: measured 6 is not >= 6.28771"
    )
    assert get_bound("geometric.d0_nec").statement in msg and "derived" in msg


def test_assert_bound_holds_upper_bound_tolerance_and_bound_objects():
    bound = get_bound("geometric.d0_nec")
    assert_bound_holds(bound, 6.0, sense="<=", N=1000, gamma=0.5)
    with pytest.raises(AssertionError, match=r"measured 7 is not <= 6.28771 \(rtol 0.1\)"):
        assert_bound_holds(bound, 7.0, sense="<=", rtol=0.1, N=1000, gamma=0.5)
    assert_bound_holds(bound, 6.0, rtol=0.05, N=1000, gamma=0.5)  # within 5% below
    with pytest.raises(ValueError, match="sense must be"):
        assert_bound_holds(bound, 6.0, sense=">", N=1000, gamma=0.5)


def test_assert_bound_holds_names_a_bad_parameter():
    with pytest.raises(ValueError, match="geometric.d0_nec"):
        assert_bound_holds("geometric.d0_nec", 6.0, N=1000)


def test_strategy_arrays_come_from_a_seeded_generator():
    """Hypothesis draws the sizes and a seed only; the arrays are the Generator's (the minimal
    example has seed 0, so it is exactly the fact set built from that seed)."""
    from hypothesis import find

    from constructions import fact_set

    facts = find(fact_sets(n_facts=200, n_values=50, d=64), lambda f: True)
    expected = fact_set(200, 50, 64, np.random.default_rng([0, 0]))
    assert np.array_equal(facts.keys, expected.keys) and np.array_equal(facts.fact_map, expected.fact_map)
    perms, seed = find(bijections(n=100, r=3), lambda x: True)
    assert seed == 0 and np.array_equal(perms, make_bijections(100, 3, rng_from(0)))
