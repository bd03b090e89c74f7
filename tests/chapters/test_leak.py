"""Unit test of the leak experiment's variant table (verify.chapters.leak.variant_table)."""

import math

import pytest

from verify.chapters.leak import LEAK, variant_table

TINY = dict(LEAK, steps=2, batch=4, eval_size=16, eval_every=1, half=3, n_symbols=4)


def test_variant_table_rows_and_causal_prefix_variant():
    rows = variant_table([0], ["selection_only", "prefix"], TINY)
    assert [(r["seed"], r["variant"]) for r in rows] == [(0, "selection_only"), (0, "prefix")]
    assert all(math.isfinite(r["full_sequence"]) and math.isfinite(r["prefix_only"]) for r in rows)
    # the causal router sees only the prefix in training's view too: both evaluations agree
    prefix = rows[1]
    assert prefix["full_sequence"] == pytest.approx(prefix["prefix_only"], rel=1e-5)
