"""Property tests of a construction of your own, with recall-bounds' strategies and assertions.

Copy this file next to your code and run ``python -m pytest -q`` (it needs recall-bounds and
hypothesis installed: ``pip install -e ".[dev]"`` in the recall-bounds checkout). It tests:

- ``lookup_mlp``, a fact-storing MLP written here (one ReLU unit per key, opened by its own key
  only, writing that fact's value): it stores every fact set with distinct unit keys, its margin
  is at least 1 - (the coherence of the values), and its parameter count stays above the
  information bound ``fact_mlp.min_params``;
- the toolkit's geometric block model on drawn bijections: it stores them, and a shuffled table
  is not stored (a check that could not fail would test nothing).

``verify.testing`` draws only sizes and a seed with hypothesis and builds every array from a
seeded numpy Generator, so a failing example shrinks to small sizes and reproduces from its seed.
The assertions name the failing facts with their margins, or the bound with its value and
parameters. README.md ("Use it from Python") and docs/README.md describe the rest of the API.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from constructions import FactMLP, FactSet, build_block_model
from theory import decodability
from theory.fact_mlp.rho import coherence
from verify.testing import (
    assert_bound_holds,
    assert_margin_at_least,
    assert_stores,
    bijections,
    fact_sets,
    rng_from,
    seeds,
    value_tables,
)

# no deadline: the first example of a session also pays for importing torch
FAST = settings(max_examples=20, deadline=None)


def lookup_mlp(facts: FactSet) -> FactMLP:
    """One ReLU unit per key: unit i computes ReLU(<k_i, x> - tau) and writes v_f(i) / (1 - tau).

    With unit keys and tau above every cross inner product of the keys, key i opens unit i alone,
    so the output on key i is exactly v_f(i) (decoded by argmax_j <output, v_j>)."""
    K = facts.keys / np.linalg.norm(facts.keys, axis=1, keepdims=True)
    gram = K @ K.T
    np.fill_diagonal(gram, -1.0)
    tau = (1.0 + max(float(gram.max()), 0.0)) / 2.0  # between the largest cross product and 1
    W_out = facts.targets.T / (1.0 - tau)  # (d, F)

    def forward(X: np.ndarray) -> np.ndarray:
        return np.maximum(np.asarray(X) @ K.T - tau, 0.0) @ W_out.T

    n_params = K.size + 1 + W_out.size  # W_in, the shared threshold, W_out
    return FactMLP("lookup", forward, n_params, n_params, facts, info={"tau": tau})


@FAST
@given(facts=fact_sets(n_facts=st.integers(2, 40), n_values=st.integers(2, 10), d=st.integers(8, 24)))
def test_lookup_stores_every_fact(facts):
    assert_stores(lookup_mlp(facts), facts)


@FAST
@given(values=value_tables(n_values=st.integers(2, 12), d=st.integers(8, 24)), seed=seeds)
def test_lookup_margin_is_one_minus_value_coherence(values, seed):
    rng = rng_from(seed)
    keys = rng.standard_normal((30, values.shape[1]))
    facts = FactSet(
        keys / np.linalg.norm(keys, axis=1, keepdims=True), values, rng.integers(0, len(values), 30)
    )
    assert_margin_at_least(lookup_mlp(facts), facts, 1.0 - coherence(values) - 1e-9)


@FAST
@given(facts=fact_sets(n_facts=st.integers(2, 40), n_values=st.integers(2, 10), d=st.integers(8, 24)))
def test_lookup_parameters_above_the_information_bound(facts):
    mlp = lookup_mlp(facts)
    assert_bound_holds(
        "fact_mlp.min_params",
        mlp.params_standard,
        n_facts=facts.n_facts,
        n_values=facts.n_values,
        bits_per_param=64,
    )


@FAST
@given(values=value_tables(n_values=8, d=8, min_decodability=0.3))
def test_drawn_values_meet_the_minimum_decodability(values):
    assert decodability(values).rho >= 0.3


@FAST
@given(data=bijections(n=st.integers(2, 60), r=st.integers(1, 3)), code_seed=seeds)
def test_block_model_stores_its_bijections_and_not_shuffled_ones(data, code_seed):
    perms, seed = data
    model = build_block_model(perms, 16, code_kind="rademacher_distinct", rng=rng_from(code_seed))
    assert_stores(model, perms)
    shuffled = np.stack([np.roll(row, 1) for row in perms])  # every fact moved to another value
    with pytest.raises(AssertionError, match="does not store"):
        assert_stores(model, shuffled)
