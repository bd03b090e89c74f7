"""The line-crossing threshold of geometric.single_hop.log_scaling and the multi-hop matching bound's
pieces (verify.geometric.scaling_setup, verify.geometric.multihop_bound)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from constructions.geometric.single_hop import attribute_codes
from verify.geometric.multihop_bound import bound_dim
from verify.geometric.scaling_setup import code_gap, max_coherence_gap, window_threshold
from verify.geometric.single_hop_setup import _rng


def test_the_fast_gap_is_the_decoded_gap():
    for n, d0 in ((50, 12), (300, 20)):
        codes = attribute_codes(n, d0, "spherical", _rng(3, 2, n, d0, 0))
        assert max_coherence_gap(codes) == pytest.approx(code_gap(n, d0, 3), abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_line_crossing_lies_inside_its_window_and_repeats(seed):
    d0, d0b, gaps = window_threshold(100, 0.25, seed, 64, 6)
    assert min(gaps) <= d0 <= max(gaps) and len(gaps) == 13
    assert window_threshold(100, 0.25, seed, 64, 6)[0] == d0


def test_a_window_too_narrow_to_rise_is_an_error_naming_it():
    with pytest.raises(ValueError, match="half-width"):
        window_threshold(100, 0.25, 0, 64, 0)


def test_the_khop_bound_grows_with_r_to_the_k_and_the_control_bound_does_not():
    ratio_khop = bound_dim(1024, 3, 3, 32, "khop") / bound_dim(1024, 3, 1, 32, "khop")
    ratio_cot = bound_dim(1024, 3, 3, 32, "cot") / bound_dim(1024, 3, 1, 32, "cot")
    assert ratio_khop == pytest.approx(9 * math.log2(1024 + 1 - 13) / math.log2(1024), rel=1e-12)
    assert ratio_cot == 1.0
    with pytest.raises(ValueError, match="'khop' or 'cot'"):
        bound_dim(1024, 3, 3, 32, "table")
    assert np.isfinite(bound_dim(64, 2, 3, 32, "khop"))
