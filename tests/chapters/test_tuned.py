"""Unit tests of the learning-rate tuning of the fact-storage comparison (verify.chapters.tuned)."""

import pytest

from verify.chapters import tuned as ct
from verify.claims import Context

#: A tiny schedule (6 steps on 32 facts) so each run costs a fraction of a second.
TINY = dict(
    ct.TUNED_QUICK,
    n_facts=32,
    n_values=16,
    n_phase2=32,
    batch=8,
    steps1=6,
    steps2=2,
    compare_step=4,
    eval_every=2,
    seeds=2,
    tune_step=2,
    lr_grid=[1e-3, 3e-3],
    retune=True,
)


def test_recipe_rate_reuses_the_recipe_run_and_early_stop_matches_it():
    ctx = Context(seed=0, dtype="float32")
    recipe = ct.grid_run(TINY, ctx, 0, "moc", TINY["lr"], TINY["compare_step"])
    assert recipe["eval_steps"][-1] == TINY["steps1"]  # the full recipe run, cached
    assert recipe is ct.phase1(TINY, ctx, 0, "moc")[0]
    # a run stopped early on the same schedule repeats the first steps exactly
    stopped = ct.phase1(TINY, ctx, 0, "moc", steps=TINY["compare_step"])[0]
    assert stopped["loss"] == recipe["loss"][: TINY["compare_step"]]
    i = recipe["eval_steps"].index(TINY["compare_step"])
    assert stopped["acc"][0][-1] == recipe["acc"][0][i]


def test_tuning_tries_every_grid_point_and_keeps_the_best():
    ctx = Context(seed=0, dtype="float32")
    rows, best = ct.tune(TINY, ctx, "dense")
    assert [r["lr"] for r in rows] == TINY["lr_grid"]
    assert all(r["lr_memory"] == 2 * r["lr"] and r["warmup"] == 50 for r in rows)
    assert best == max(rows, key=lambda r: (r["acc"], -r["loss"]))


def test_tuning_seed_must_not_be_judged():
    ctx = Context(seed=999, dtype="float32")  # judged seeds 999, 1000
    with pytest.raises(ValueError, match="tuning seed"):
        ct.check_fact_storage_tuned(TINY, ctx)


def test_recorded_quick_tuning_trains_nothing_and_keeps_its_picks():
    ctx = Context(seed=0, dtype="float32")
    rows, best = ct.tune(ct.TUNED_QUICK, ctx, "moc")
    assert ctx.cache == {}
    assert [r["lr"] for r in rows] == ct.TUNED_QUICK["lr_grid"] and best["lr"] == 1e-2
    assert ct.tune(ct.TUNED_QUICK, ctx, "dense")[1]["lr"] == ct.TUNED_QUICK["lr"]  # the recipe's
    with pytest.raises(ValueError, match="recorded tuning"):
        ct.tune(dict(ct.TUNED_QUICK, tune_step=25), ctx, "moc")


def test_choice_breaks_accuracy_ties_by_the_lower_loss():
    rows = [
        {"lr": 1.0, "acc": 0.5, "loss": 2.0},
        {"lr": 2.0, "acc": 0.5, "loss": 1.0},
        {"lr": 3.0, "acc": 0.4, "loss": 0.1},
    ]
    assert ct.choose(rows)["lr"] == 2.0


@pytest.mark.slow
def test_recorded_quick_tuning_is_what_the_tuning_run_gives():
    """The rows CI reuses (RECORDED_QUICK_TUNING) are reproduced by rerunning the quick tuning on
    its seed (about 40 CPU-s, hence slow): same accuracies, losses to float32 tolerance, same picks."""
    for kind in ("moc", "dense"):
        rows, best = ct.tune(dict(ct.TUNED_QUICK, retune=True), Context(seed=0, dtype="float32"), kind)
        recorded = ct.RECORDED_QUICK_TUNING[kind]
        assert [r["lr"] for r in rows] == [lr for lr, _, _ in recorded]
        for r, (_, acc, loss) in zip(rows, recorded):
            assert r["acc"] == pytest.approx(acc, abs=1e-9) and r["loss"] == pytest.approx(loss, rel=1e-4)
        assert best == ct.choose([ct._row(ct.TUNED_QUICK, *rec) for rec in recorded])
