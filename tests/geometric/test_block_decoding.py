"""model_decoding's exact shortcuts: reading only the unembedding's nonzero columns
and decoding each distinct (hidden state, target) pair once gives decode()'s counts, minimum margin and
tie tolerance on the full-width hidden states of every fact."""

import numpy as np
import pytest
import torch

from constructions.geometric.single_hop import attribute_codes, build_block_model
from constructions.tasks import make_bijections, single_hop_dataset
from tests.strategies import rng_from
from verify.geometric.single_hop_setup import decoding_clearance, model_decoding
from verify.measure import decode


def _full_width(model):
    subj, rel, target = single_hop_dataset(model.perms)
    return decode(model.final_hidden(subj, rel), model.transformer.unembed, target)


@pytest.mark.parametrize(
    ("n", "r", "d0", "kind"),
    [
        (300, 4, 3, "spherical"),
        (1000, 4, 21, "spherical"),  # the quick setting of block_accuracy
        (500, 6, 2, "spherical"),  # margins near float64 rounding
        (200, 3, 1, "spherical"),  # +-1 codes: ties, accuracy < 1
        (256, 2, 7, "rademacher_distinct"),  # two attributes per code: ties
        (700, 1, 40, "rademacher"),
    ],
)
def test_support_and_dedup_decoding_equals_full_width_decode(n, r, d0, kind):
    perms = make_bijections(n, r, rng_from(n + r))
    model = build_block_model(perms, d0, code_kind=kind, rng=rng_from(d0))
    whole, fast = _full_width(model), model_decoding(model)
    assert (fast.n_correct, fast.n_queries) == (whole.n_correct, whole.n_queries)
    np.testing.assert_allclose(fast.min_margin, whole.min_margin, rtol=1e-12, atol=1e-15)
    assert fast.tie_tolerance == whole.tie_tolerance
    if d0 == 1 or kind == "rademacher_distinct":
        assert fast.accuracy < 1  # the comparison includes tied facts


def test_dedup_keeps_distinct_hidden_states_apart():
    """Hidden states that differ (here: a perturbed answer channel of one relation) are decoded apart."""
    perms = make_bijections(50, 3, rng_from(1))
    codes = attribute_codes(50, 4, "spherical", rng_from(2))
    model = build_block_model(perms, codes=codes)
    w_out = model.transformer.w_out  # answer rows; columns [0, 4) and [12, 16): block 0's +-ReLU pair
    w_out[-4:, 0:4] *= 1.5
    w_out[-4:, 12:16] *= 1.5  # relation 0 answers 1.5 u_t, the others u_t
    whole, fast = _full_width(model), model_decoding(model)
    assert fast.n_correct == whole.n_correct
    np.testing.assert_allclose(fast.min_margin, whole.min_margin, rtol=1e-12, atol=1e-15)


def test_non_finite_hidden_state_is_an_error():
    perms = make_bijections(20, 2, rng_from(3))
    model = build_block_model(perms, 3, rng=rng_from(4))
    model.transformer.embed[0, 0] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        model_decoding(model)
    assert torch.isnan(model.transformer.embed).any()


@pytest.mark.parametrize(
    ("n", "r", "d0", "kind"),
    [
        (300, 4, 3, "spherical"),
        (200, 3, 1, "spherical"),
        (256, 2, 7, "rademacher_distinct"),
        (500, 6, 2, "spherical"),
    ],
)
def test_tie_clearance_is_positive_exactly_at_accuracy_one(n, r, d0, kind):
    """block_accuracy's per-seed quantity (log10 of the smallest margin / tie tolerance) decides what
    accuracy 1 decides, ties included."""
    perms = make_bijections(n, r, rng_from(n + r))
    model = build_block_model(perms, d0, code_kind=kind, rng=rng_from(d0))
    res, decades = decoding_clearance(model)
    assert res == model_decoding(model)
    assert (decades > 0) == (res.accuracy == 1.0)
