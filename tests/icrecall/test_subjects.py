"""Unit tests of verify.icrecall.subjects: the N* scan and the two halves of the S-criterion."""

import math

import pytest

import verify.icrecall.subjects as subj
from verify.claims import Context, load_all
from verify.icrecall.subjects import half_verdict, n_star


def test_growth_half_needs_a_doubling_or_a_censored_larger_world():
    assert half_verdict(8, 16, grows=True)
    assert half_verdict(8, None, grows=True)  # N*(S_max) above every point <= 8, i.e. >= 16
    assert not half_verdict(8, 8, grows=True)
    assert not half_verdict(8, 4, grows=True)
    assert not half_verdict(None, None, grows=True)  # N*(S_min) off the grid decides nothing


def test_no_growth_half_needs_the_larger_world_on_the_scanned_points():
    assert half_verdict(8, 8, grows=False)
    assert half_verdict(8, 2, grows=False)
    assert not half_verdict(8, None, grows=False)
    assert not half_verdict(8, 16, grows=False)
    assert not half_verdict(None, 2, grows=False)


def test_n_star_is_the_first_grid_point_and_stops_at_upto(monkeypatch):
    acc = {2: 0.95, 4: 0.5, 8: 0.92, 16: 0.99, 32: 0.99}  # non-monotone on purpose
    calls = []

    def fake_run(q, ctx, slots, n_train, seed):
        calls.append((q["n_subj"], n_train))
        return {"acc": acc[n_train] if q["n_subj"] == 6 else 0.5 + 0.01 * n_train}

    monkeypatch.setattr(subj, "train_run", fake_run)
    p = dict(subj.QUICK, grid=[2, 4, 8, 16, 32])
    assert n_star(p, None, 6, 0, True)["n_star"] == 2
    res = n_star(p, None, 24, 0, True, upto=8)
    assert res["n_star"] is None and res["censored_above"] == 8
    assert [n for s, n in calls if s == 24] == [2, 4, 8]


def test_quick_dimension_is_the_memory_heuristic_of_the_larger_world():
    p = subj.QUICK
    assert p["dim"] == math.ceil(32 * math.log(p["subjects"][-1] * p["n_rel"]))
    assert p["subjects"][0] > p["n_pairs"] + 1


def test_subject_sizes_must_be_ordered():
    c = load_all()["icrecall.finetune.n_star_vs_subjects"]
    with pytest.raises(ValueError, match="S_min <= S_max"):
        c.check(dict(c.quick, subjects=[24, 6]), Context(seed=0))


@pytest.mark.parametrize(
    "halves",
    [
        # (no_slots N*[S_min, S_max], slots N*[S_min, S_max]) per seed
        [([32, None], [16, 16]), ([16, None], [8, 8])],  # both halves hold
        [([32, None], [16, 16]), ([32, None], [2, None])],  # the slotted half fails at one seed
        [([32, 32], [16, 8]), ([16, None], [8, 8])],  # the growth half fails at one seed
        [([None, None], [None, 4]), ([None, 64], [None, None])],  # N*(S_min) off the grid
        [([8, None], [None, 4]), ([16, None], [8, 4])],  # one half off the grid at one seed
    ],
)
def test_criterion_objects_give_the_per_seed_rule(halves):
    """The criterion of icrecall.finetune.n_star_vs_subjects passes exactly when half_verdict
    passes both halves on every seed."""
    rows = [
        {"seed": k, "no_slots": {"n_star": list(ns)}, "slots": {"n_star": list(sl)}}
        for k, (ns, sl) in enumerate(halves)
    ]
    expect = all(half_verdict(*ns, grows=True) and half_verdict(*sl, grows=False) for ns, sl in halves)
    assert subj._halves_judgement(rows).passed == expect
