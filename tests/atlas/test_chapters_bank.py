"""The chapters bank family of the capacity atlas: grid, parameter count, training, search, points."""

from __future__ import annotations

import pytest

from verify.atlas.chapters_bank_setup import (
    QUICK,
    build,
    chapters_grid,
    n_params,
    search,
    task,
    train_accuracy,
)
from verify.atlas.sources import family, family_points

SMALL = {**QUICK, "sizes": [8, 16, 32], "grid": [1 / 8, 1 / 4], "draws": 1, "steps": 40, "lr": 0.02}


def test_chapters_grid_is_relative_ascending_and_at_least_top_k():
    assert chapters_grid(32, [1 / 16, 1 / 8, 1 / 4], 2) == [2, 4, 8]
    assert chapters_grid(128, [1 / 16, 1 / 8, 1 / 4], 2) == [8, 16, 32]
    assert chapters_grid(8, [1 / 16, 1 / 8, 1 / 4], 2) == [2]  # rounded up to top_k, duplicates dropped
    with pytest.raises(ValueError, match="ascending"):
        chapters_grid(32, [1 / 4, 1 / 8], 2)
    with pytest.raises(ValueError, match="facts"):
        chapters_grid(0, [1 / 4], 2)


@pytest.mark.parametrize("n_chapters", [2, 8])
def test_n_params_counts_every_trained_parameter_of_the_layer(n_chapters):
    layer, bank = build(n_chapters, QUICK, seed=0, draw=0, n_facts=32)
    assert n_params(n_chapters, QUICK) == sum(w.numel() for w in layer.parameters()) + bank.numel()
    assert float(layer.attention.wo.weight.detach().abs().max()) == 0.0  # the paper's zero W_O


def test_task_is_a_function_of_seed_draw_and_size():
    a, b = task(16, QUICK, 3, 1), task(16, QUICK, 3, 1)
    assert all(bool((x == y).all()) for x, y in zip(a, b))
    assert not bool((task(16, QUICK, 3, 2)[0] == a[0]).all())
    assert a[2].min() >= 0 and a[2].max() < QUICK["n_values"]


def test_untrained_layer_does_not_store_and_training_does():
    acc0, at0 = train_accuracy(16, 4, QUICK, 0, 0, steps=0)
    assert at0 is None and acc0 < 1.0  # W_O = 0: every logit 0, argmax is value 0
    acc, at = train_accuracy(16, 4, QUICK, 0, 0, steps=300)
    assert acc == 1.0 and 0 < at <= 300


def test_search_finds_the_first_storing_grid_size_and_points_follow():
    found = search(SMALL, seed=5)
    for row in found["rows"]:
        grid, c = row["chapters_grid"], row["c_star"][0]
        trace = row["accuracy_trace"][0]
        if c is None:
            assert len(trace) == len(grid) and max(trace) < 1.0
        else:  # stored at C*, at no smaller grid size
            assert trace[-1] == 1.0 and all(a < 1.0 for a in trace[:-1]) and grid[len(trace) - 1] == c
    rows = [dict(r, c_star=[2], params=[n_params(2, SMALL)]) for r in found["rows"]]
    rec = {"id": "atlas.chapters_bank.smallest_bank", "params": SMALL, "details": {"rows": rows}}
    pts = family_points(family("chapters_bank"), rec)
    assert [pt["info_bits"][0] for pt in pts] == [8 * 4.0, 16 * 4.0, 32 * 4.0]  # F log2 16
    assert pts[0]["params"] == [float(n_params(2, SMALL))]
    rows[1]["c_star"] = [None]
    with pytest.raises(ValueError, match="stores at no grid size"):
        family_points(family("chapters_bank"), rec)
    with pytest.raises(ValueError, match="untrained"):
        family_points(family("chapters_bank"), {**rec, "params": {**SMALL, "steps": 0}})
