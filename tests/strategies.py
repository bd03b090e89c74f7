"""Hypothesis strategies of the test suite: the shared ones of :mod:`verify.testing` (draw small
scalars, build arrays from a seeded Generator), re-exported under the names the tests import."""

from __future__ import annotations

from verify.testing import (  # noqa: F401  (re-exported)
    bijections,
    block_dims,
    fact_sets,
    n_relations,
    n_subjects,
    relation_tables,
    rng_from,
    seeds,
    spherical_codes,
    value_tables,
)
