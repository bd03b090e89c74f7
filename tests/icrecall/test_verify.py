"""IC-recall: theory thresholds, the helpers behind the claims and the moved parameter count."""

import math

import numpy as np
import pytest

from constructions.icrecall.patterns import (
    context_neuron_firing,
    handset_pattern,
    mixed_input,
    pattern_accuracy,
)
from constructions.icrecall.world import make_world, sample_icrecall, triplet_mlp
from theory.icrecall import (
    min_context_pairs,
    min_recall_pairs,
    mlp_params,
    pairwise_margin,
    pairwise_preactivations,
    relation_signal_boundary,
)
from verify.icrecall.finetune_setup import pattern_judgement, pattern_verdict
from verify.icrecall.memories import _shuffled_table, _unit_directions, max_off_diagonal_inner
from verify.icrecall.sample import exponent_interval, interpolated_need, seed_exponent

RHO = 1 / math.sqrt(2)


def test_mlp_param_count_at_the_default_size():
    """Formerly the claim icrecall.mlp.params (a formula against array sizes: a unit test)."""
    w = make_world(200, 5, 20, 128, RHO, np.random.default_rng(0))
    W1, b1, W2 = triplet_mlp(w).explicit_weights()
    assert W1.shape == (1000, 128) and b1.shape == (1000,) and W2.shape == (128, 1000)
    assert W1.size + b1.size + W2.size == mlp_params(200, 5, 128) == 257000


def test_context_thresholds():
    """Recall from n > 1/rho, no wrong neuron from n > 1/(rho (theta - 1)); the margin is negative
    at n = 2 although the correct neuron still wins there."""
    assert min_recall_pairs(RHO) == 2 and min_context_pairs(RHO) == 3
    pre = pairwise_preactivations(2, RHO)
    assert pairwise_margin(2, RHO) == pytest.approx(-0.2071, abs=1e-4)
    assert pre["context_subject"] - 1.5 < pre["correct"] - 1.5  # 0.207 < 0.5
    pre1 = pairwise_preactivations(1, RHO)
    assert pre1["context_subject"] > pre1["correct"]
    assert min_context_pairs(RHO, 1.25) == 6 and min_context_pairs(RHO, 1.75) == 2
    assert relation_signal_boundary(RHO, 1.5) == pytest.approx(0.5 * RHO)
    with pytest.raises(ValueError, match="rho"):
        min_recall_pairs(0.0)


def test_firing_follows_the_noise_free_threshold_at_large_d():
    """At d = 4096 the inner-product noise is ~1/64: the context-subject neurons fire at n = 2
    (pre-activation 1.71) and not at n = 4 (1.35), as 1/(rho (theta - 1)) = 2.83 predicts; the
    mean pre-activation matches 1 + 1/(n rho)."""
    w = make_world(40, 3, 5, 4096, RHO, np.random.default_rng(5))
    mlp = triplet_mlp(w)
    for n, expect in ((2, 1.0), (4, 0.0)):
        P = sample_icrecall(w, n, 200, np.random.default_rng(n))
        alpha = handset_pattern("pairwise", n)
        assert context_neuron_firing(mlp, P, alpha, 2 / RHO) == expect
        z = mixed_input(mlp, P, alpha, 2 / RHO)
        pre = (
            np.einsum("kd,knd->kn", z, w.subj[P.subjects])
            + np.einsum("kd,kd->k", z, w.rel[P.relation])[:, None]
        )
        assert pre.mean() == pytest.approx(1 + 1 / (n * RHO), abs=0.02)


def test_shuffled_table_keeps_answers_per_relation():
    w = make_world(50, 3, 4, 32, RHO, np.random.default_rng(0))
    sh = _shuffled_table(w, np.random.default_rng(1))
    for r in range(3):
        assert sorted(sh.answer[:, r]) == sorted(w.answer[:, r])
    assert np.mean(sh.answer == w.answer) < 0.6


def test_exponent_interval():
    x = [100, 100, 1000, 1000, 10000, 10000]
    exact = exponent_interval(x, [n**0.5 for n in x])
    assert exact["exponent"] == pytest.approx(0.5) and exact["high"] - exact["low"] < 1e-9
    noisy = exponent_interval(x, [4, 8, 8, 16, 8, 16])
    assert noisy["low"] < noisy["exponent"] < noisy["high"]
    with pytest.raises(ValueError, match="distinct"):
        exponent_interval([100, 100, 100], [1, 2, 3])


def test_interpolated_need_and_seed_exponent():
    """N* between grid points is log-linear in N_train; a curve already above 1 - eps at its first
    point is the grid floor; a curve that never clears is None; an exponent needs two sizes."""
    curve = [{"n_train": 4, "acc": 0.6}, {"n_train": 8, "acc": 0.8}, {"n_train": 16, "acc": 1.0}]
    assert interpolated_need(curve, 0.1) == pytest.approx(2**3.5)
    assert interpolated_need(curve[:1], 0.5) == 4.0
    assert interpolated_need(curve[:2], 0.1) is None
    assert seed_exponent([1000, 10000], [4.0, 4.0 * 10**0.5]) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="distinct"):
        seed_exponent([1000, 1000], [4.0, 8.0])
    with pytest.raises(ValueError, match="positive"):
        seed_exponent([1000, 10000], [4.0, None])


def test_pattern_rule_fails_at_init_and_for_answers_only():
    init = {"query_share": 0.99, "imbalance": 0.3, "pair_uniformity": 0.99}
    pairwise = {"query_share": 0.2, "imbalance": 0.1, "pair_uniformity": 0.99}
    answers = {"query_share": 0.2, "imbalance": 0.9, "pair_uniformity": 0.99}
    assert pattern_verdict(init, pairwise)["passed"]
    assert not pattern_verdict(init, init)["passed"]
    assert not pattern_verdict(init, answers)["passed"]


@pytest.mark.parametrize("share", [0.2, 0.35, 0.36, 0.7])
@pytest.mark.parametrize("imbalance", [0.1, 0.4, 0.41])
def test_pattern_judgement_is_pattern_verdict_on_every_seed(share, imbalance):
    """The criterion objects of the pattern claims pass exactly when pattern_verdict passes on
    every seed (boundary values included)."""
    init = {"query_share": 0.99, "imbalance": 0.3, "pair_uniformity": 0.99}
    good = {"query_share": 0.2, "imbalance": 0.1, "pair_uniformity": 0.99}
    other = {"query_share": share, "imbalance": imbalance, "pair_uniformity": 0.99}
    finals = [good, other, good]
    expect = all(pattern_verdict(init, m)["passed"] for m in finals)
    assert pattern_judgement([init] * 3, finals, [0, 1, 2]).passed == expect
    with pytest.raises(ValueError, match="one each per seed"):
        pattern_judgement([init] * 2, finals, [0, 1, 2])


def test_context_length_between_part_is_an_interval_against_a_fixed_bar():
    """icrecall.context.length judges n = 2 on the 95% Student-t interval of the mean accuracy over
    seeds against 1/2, a bar no measured seed sets: the same bar at every base seed, and the
    part is inconclusive (not a fail) when the interval straddles it."""
    from verify.claims import Context
    from verify.icrecall.handset_context import ACC_BETWEEN, CONTEXT, _context_length

    assert ACC_BETWEEN == 0.5 and "calibration_seed" not in CONTEXT
    small = dict(CONTEXT, n_subj=30, dim=48, n_queries=100, n_list=[1, 2, 3], n_above=[3])
    for seed in (0, 5):
        judgement, details = _context_length(small, Context(seed=seed, cache={}))
        assert "calibration" not in details
        (quantity, bar), *_ = judgement.predicted["acc_between_n2"].items()
        assert bar == ">= 0.5" and "95% interval" in quantity
        lo, hi = judgement.measured["acc_between_n2"][quantity]
        assert lo < hi


@pytest.mark.parametrize("max_elements", [1, 7 * 300, 1 << 24])
def test_max_off_diagonal_inner_is_blocked_and_equals_the_full_gram(max_elements):
    """The incoherence maximum of icrecall.incoherence.max_inner, computed in blocks of rows (1 row,
    7 rows, one block), equals the maximum over the full Gram matrix with its diagonal removed."""
    E = _unit_directions(np.random.default_rng(3), 300, 16)
    G = E @ E.T
    np.fill_diagonal(G, 0.0)
    np.testing.assert_allclose(max_off_diagonal_inner(E, max_elements), np.abs(G).max(), rtol=1e-12)
    assert max_off_diagonal_inner(E, max_elements) < 1.0


@pytest.mark.parametrize("rows", [1, 13, 10_000])
def test_pattern_accuracy_in_blocks_equals_one_block(rows):
    """The hand-set pattern accuracy, computed in blocks of prompts (memory bound at full
    scale), counts the same correct prompts as one block, on a world where some prompts fail."""
    w = make_world(40, 3, 5, 24, RHO, np.random.default_rng(2))
    mlp = triplet_mlp(w)
    P = sample_icrecall(w, 4, 150, np.random.default_rng(3))
    alpha = handset_pattern("pairwise", 4)
    one = pattern_accuracy(mlp, P, alpha, 2 / RHO, max_elements=10_000 * mlp.width)
    assert pattern_accuracy(mlp, P, alpha, 2 / RHO, max_elements=rows * mlp.width) == one
    assert 0.0 < one < 1.0


def test_staged_rules_have_an_inconclusive_band():
    """The staged rules (unseen_facts_staged, sample_complexity.polylog, rho_zero_fails' reading)
    pass far inside their band, fail far outside and stay inconclusive where the mean sits on a
    threshold; a (seed, N_f) pair off the grid fails polylog whatever the exponents."""
    from verify.criteria import Bracket
    from verify.icrecall.finetune import gap_judgement
    from verify.icrecall.handset_setup import silence_judgement
    from verify.icrecall.sample import polylog_judgement

    assert gap_judgement([0.01, 0.0, -0.01], [0, 1, 2]).verdict == "pass"
    assert gap_judgement([0.06, 0.0, 0.09], [0, 1, 2]).verdict == "inconclusive"
    assert gap_judgement([0.2, 0.21, 0.19], [0, 1, 2]).verdict == "fail"
    assert polylog_judgement([0.4, 0.7, 0.5], [0, 1, 2], (3,), 0).verdict == "inconclusive"
    assert polylog_judgement([0.1, 0.2, 0.15], [0, 1, 2], (3,), 1).verdict == "fail"
    b = Bracket("rho", 0.354, 0.3, 0.4)
    pre = {0.3: [-0.01, 0.02, 0.0], 0.4: [0.06, 0.07, 0.065]}
    assert silence_judgement(b, pre, [0.3], 0.4, "below").verdict == "inconclusive"
    with pytest.raises(ValueError, match="NaN"):
        silence_judgement(b, {0.3: [float("nan")] * 3, 0.4: [0.1] * 3}, [0.3], 0.4, "below")


def test_pretrained_solves_measures_the_second_look_only_when_the_first_does_not_decide(monkeypatch):
    """pretrained.solves judges the means of the IC accuracy and the query-share drop in stages
    (6, then 12 seeds) and the pretraining on every seed (reached 0.99: 1 or 0): clear means stop
    at 6 runs, a mean drop near 0.3 draws 6 more, a seed whose pretraining stopped below 0.99
    fails."""
    import verify.icrecall.pretrained as pretrained
    from verify.claims import Context, load_all

    claim = load_all()["icrecall.pretrained.solves"]
    p = claim.params("quick")

    def run(drop, direct=lambda s: 1.0):
        seen = []

        def fake(ctx, memory, n_pairs, n_train, n_test, steps, lr, seed):
            seen.append(seed)
            d = drop(seed)
            return {
                "seed": seed,
                "direct_acc": direct(seed),
                "acc": 0.97,
                "acc_init": 0.1,
                "omega": 1.0,
                "metrics_init": {"query_share": 0.6},
                "metrics": {"query_share": 0.6 - d},
            }

        monkeypatch.setattr(pretrained, "pretrained_run", fake)
        return claim.check(p, Context(seed=100)), seen

    out, seen = run(lambda s: 0.42 + 0.01 * (s % 3))
    assert out.passed and seen == list(range(100, 106))
    (direct,) = [v for k, v in out.measured["direct"].items() if k != "seeds"]
    assert direct == [1.0] * 6  # the precondition as 0/1: the stop rule floors the accuracy at 0.99
    assert [r["query_drop"] for r in out.details["per_seed"]] == pytest.approx(
        [0.43, 0.44, 0.42, 0.43, 0.44, 0.42]
    )
    out, seen = run(lambda s: 0.3 + 0.1 * (-1) ** s)
    assert out.inconclusive and seen == list(range(100, 112))
    out, seen = run(lambda s: 0.2 + 0.01 * (s % 2))
    assert not out.passed and not out.inconclusive and seen == list(range(100, 106))
    out, seen = run(lambda s: 0.42 + 0.01 * (s % 3), direct=lambda s: 0.98 if s == 103 else 1.0)
    assert not out.passed and not out.inconclusive
