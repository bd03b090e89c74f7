"""The chapters_toy family of the capacity atlas: grid, parameter count, stopping, search, points."""

from __future__ import annotations

import pytest

from verify.atlas.chapters_toy_setup import (
    QUICK,
    chapter_floor,
    chapters_grid,
    config,
    n_params,
    parameter_groups,
    search,
    train_store,
)
from verify.atlas.sources import family, family_points

SMALL = {**QUICK, "sizes": [8, 16, 32], "draws": 1, "steps": 60}


def test_grid_starts_at_the_routers_floor_then_follows_the_relative_grid():
    assert chapter_floor() == 5  # 1 shared + top-4 routed
    assert chapters_grid(128, [1 / 16, 1 / 8, 1 / 4], 5) == [5, 8, 16, 32]
    assert chapters_grid(32, [1 / 16, 1 / 8, 1 / 4], 5) == [5, 8]  # 2, 4 raised to the floor
    assert chapters_grid(16, [1 / 16, 1 / 8, 1 / 4], 5) == [5]
    with pytest.raises(ValueError, match="ascending"):
        chapters_grid(32, [1 / 4, 1 / 8], 5)
    with pytest.raises(ValueError, match="facts"):
        chapters_grid(0, [1 / 4], 5)
    with pytest.raises(ValueError, match="top_k"):
        config(32, 4, QUICK)


@pytest.mark.parametrize("n_facts,n_chapters", [(16, 5), (64, 16), (2048, 512)])
def test_n_params_matches_the_models_own_count(n_facts, n_chapters):
    assert n_params(n_facts, n_chapters, QUICK) == parameter_groups(n_facts, n_chapters, QUICK)
    groups = n_params(n_facts, n_chapters, QUICK)
    assert groups["backbone"] == 98_624 and groups["memory_attention"] == 4 * 64 * 64 + 64
    assert groups["embedding"] == (4 + n_facts + 16) * 64


def test_untrained_model_does_not_store_and_training_stops_at_the_first_storing_evaluation():
    out0 = train_store(16, 5, QUICK, 0, 0, steps=0)
    assert out0["stored_at"] is None and out0["accuracy"] < 1.0
    out = train_store(16, 5, QUICK, 0, 0, steps=120)
    assert (
        out["accuracy"] == 1.0 and 0 < out["stored_at"] <= 120 and out["stored_at"] % QUICK["eval_every"] == 0
    )
    backbone = train_store(16, 0, QUICK, 0, 0, steps=0)  # C = 0: no memory layer
    assert backbone["stored_at"] is None


def test_search_finds_the_first_storing_grid_size_and_points_follow():
    found = search(SMALL, seed=7)
    for row in found["rows"]:
        grid, c = row["chapters_grid"], row["c_star"][0]
        trace = row["accuracy_trace"][0]
        if c is None:
            assert len(trace) == len(grid) and max(trace) < 1.0
        else:  # stored at C*, at no smaller grid size
            assert trace[-1] == 1.0 and all(a < 1.0 for a in trace[:-1]) and grid[len(trace) - 1] == c
    rows = [dict(r, c_star=[5]) for r in found["rows"]]
    rec = {"id": "atlas.chapters_toy.smallest_bank", "params": SMALL, "details": {"rows": rows}}
    pts = family_points(family("chapters_toy"), rec)
    assert [pt["info_bits"][0] for pt in pts] == [8 * 4.0, 16 * 4.0, 32 * 4.0]  # F log2 16
    assert pts[0]["params"] == [float(n_params(8, 5, SMALL)["total"])]
    rows[1]["c_star"] = [None]
    with pytest.raises(ValueError, match="stores at no grid size"):
        family_points(family("chapters_toy"), rec)
    with pytest.raises(ValueError, match="untrained"):
        family_points(family("chapters_toy"), {**rec, "params": {**SMALL, "steps": 0}})


def test_train_stops_only_when_asked_and_needs_an_evaluation_set():
    import numpy as np

    from constructions.chapters.train import build, make_fact_dataset, make_mixed_batches, train
    from verify.atlas.chapters_toy_setup import config

    facts = make_fact_dataset(8, 16, np.random.default_rng(0))
    with pytest.raises(ValueError, match="evaluation set"):
        train(
            build(config(8, 5, QUICK), 0),
            make_mixed_batches([facts], 8, np.random.default_rng(1)),
            5,
            stop_accuracy=1.0,
        )
    hists = {}
    for stop in (None, 1.0):
        model = build(config(8, 5, QUICK), 0)
        batches = make_mixed_batches([facts], 64, np.random.default_rng(1))
        hists[stop] = train(model, batches, 80, eval_sets=[facts], eval_every=5, stop_accuracy=stop)
    full, stopped = hists[None], hists[1.0]
    assert full["stopped_at"] is None and full["eval_steps"][-1] == 80  # no stop: the whole run
    at = stopped["stopped_at"]
    assert at is not None and stopped["eval_steps"][-1] == at and stopped["acc"][0][-1] == 1.0
    # the same run up to the stop: identical accuracies, and no earlier evaluation stored every fact
    n = len(stopped["eval_steps"])
    assert full["acc"][0][:n] == stopped["acc"][0] and max(stopped["acc"][0][:-1]) < 1.0
    assert len(stopped["loss"]) == at
