"""The batched GD trainer (constructions.fact_mlp.gd_batch) against the single-draw trainer."""

from __future__ import annotations

import numpy as np
import pytest

from constructions.fact_mlp.baselines import smallest_size, train_gated_mlp
from constructions.fact_mlp.gd_batch import smallest_sizes_batch, train_gated_mlp_batch
from verify.fact_mlp.usability_setup import gd_facts


def test_batched_draws_follow_the_single_draw_trainer():
    # three draws, own fact sets and seeds, different widths (padding), one stopping early
    seeds, widths, F, d = [100, 101, 102], [16, 2, 8], 8, 8
    facts = [gd_facts(F, d, F, s) for s in seeds]
    single = [train_gated_mlp(f, m, s, epochs=400) for f, m, s in zip(facts, widths, seeds)]
    batch = train_gated_mlp_batch(facts, widths, seeds, epochs=400)
    for a, b in zip(single, batch):
        assert a.params_standard == b.params_standard and a.info["epochs"] == b.info["epochs"]
        for k in a.gated:  # float32 training: equal up to float32 round-off
            assert a.gated[k].shape == b.gated[k].shape
            np.testing.assert_allclose(b.gated[k], a.gated[k], rtol=0, atol=1e-4)
        np.testing.assert_allclose(b.info["final_loss"], a.info["final_loss"], rtol=1e-4)
        assert a.decode()[0] == b.decode()[0]
    assert len({m.info["epochs"] for m in batch}) > 1  # the draws stopped at different epochs


def test_batched_search_finds_the_single_draw_widths():
    seeds, F, d, grid = [100, 101], 16, 8, [2, 3, 4, 6, 8, 12]
    facts = [gd_facts(F, d, F, s) for s in seeds]
    one = [
        smallest_size(lambda m, f=f, s=s: train_gated_mlp(f, m, s, epochs=300), grid)
        for f, s in zip(facts, seeds)
    ]

    def build(draws, ms):
        return train_gated_mlp_batch([facts[b] for b in draws], ms, [seeds[b] for b in draws], epochs=300)

    both = smallest_sizes_batch(build, grid, len(seeds))
    for (m1, t1), (m2, t2) in zip(one, both):
        assert m1 == m2
        assert [r["size"] for r in t1] == [r["size"] for r in t2]
        assert [r["stored"] for r in t1] == [r["stored"] for r in t2]


def test_epochs_zero_is_the_initialisation_and_inputs_are_validated():
    f = gd_facts(8, 4, 8, 100)
    a = train_gated_mlp(f, 5, 100, epochs=0)
    (b,) = train_gated_mlp_batch([f], [5], [100], epochs=0)
    for k in a.gated:
        np.testing.assert_array_equal(a.gated[k], b.gated[k])
    assert b.info["epochs"] == 0
    np.testing.assert_allclose(b.info["final_loss"], a.info["final_loss"], rtol=1e-5)
    with pytest.raises(ValueError, match="share"):
        train_gated_mlp_batch([f, gd_facts(16, 4, 16, 101)], [5, 5], [0, 1], epochs=1)
    with pytest.raises(ValueError, match="one width and one seed"):
        train_gated_mlp_batch([f], [5, 6], [0], epochs=1)
    with pytest.raises(ValueError, match="m >= 1"):
        train_gated_mlp_batch([f], [0], [0], epochs=1)
    with pytest.raises(ValueError, match="epochs >= 0"):
        train_gated_mlp_batch([f], [3], [0], epochs=-1)
    with pytest.raises(ValueError, match="n_draws"):
        smallest_sizes_batch(lambda draws, ms: [], [1, 2], 0)


def test_equal_widths_give_the_single_draw_weights_exactly():
    """gd.gd_fits trains its seeds at one width as one batch: no padding; here each draw's weights
    and epoch count are bitwise those of the single-draw trainer (observed on this BLAS, not a
    guarantee: other shapes may differ by float round-off, as the padded test allows)."""
    seeds = [100, 101, 102]
    facts = [gd_facts(8, 8, 8, s) for s in seeds]
    single = [train_gated_mlp(f, 8, s, epochs=120) for f, s in zip(facts, seeds)]
    batch = train_gated_mlp_batch(facts, [8, 8, 8], seeds, epochs=120)
    for a, b in zip(single, batch):
        assert a.info["epochs"] == b.info["epochs"]
        for k in a.gated:
            np.testing.assert_array_equal(a.gated[k], b.gated[k])


@pytest.mark.parametrize(
    "seeds, widths, F, d, epochs",
    [
        ([100, 101, 102], [16, 2, 8], 8, 8, 400),  # padding, draws stopping at different epochs
        ([3, 4], [6, 6], 32, 8, 300),
        ([5], [3], 16, 4, 0),
    ],
)
def test_manual_batch_epoch_is_bitwise_the_autograd_epoch(seeds, widths, F, d, epochs):
    facts = [gd_facts(F, d, F, s) for s in seeds]
    a = train_gated_mlp_batch(facts, widths, seeds, epochs=epochs, manual_gradient=False)
    b = train_gated_mlp_batch(facts, widths, seeds, epochs=epochs, manual_gradient=True)
    for x, y in zip(a, b):
        assert x.info == y.info  # epochs run and final loss, exactly
        for k in x.gated:
            np.testing.assert_array_equal(x.gated[k], y.gated[k])


@pytest.mark.parametrize("biases", [True, False])
def test_manual_single_draw_epoch_is_bitwise_the_autograd_epoch(biases):
    for F, d, m, epochs in ((8, 8, 8, 400), (24, 6, 5, 300), (8, 4, 3, 0)):
        f = gd_facts(F, d, F, 100)
        a = train_gated_mlp(f, m, 100, epochs=epochs, biases=biases, manual_gradient=False)
        b = train_gated_mlp(f, m, 100, epochs=epochs, biases=biases, manual_gradient=True)
        assert a.info == b.info and a.params_standard == b.params_standard
        for k in a.gated:
            np.testing.assert_array_equal(a.gated[k], b.gated[k])
