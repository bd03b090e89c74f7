"""The restated lm statements (verify/hopfield/lm_statements.py) and the first-order gate
(constructions/hopfield/lm.py): three-valued verdicts from paired bootstrap intervals over
prompts, the gate's argmax against a brute-force one, and the judgement across models. No
language model is loaded."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from constructions.hopfield.gate import gate_split, gated_token, log_softmax
from verify.hopfield.lm_statements import (
    Part,
    across_models,
    bootstrap_indices,
    first_order_parts,
    judge_draws,
    judge_parts,
    kth_largest,
    margin_parts,
    mean_interval,
    override_margin_judgement,
    override_parts,
    per_draw_means,
    zero_shot_parts,
)


@given(
    seed=st.integers(0, 2**16),
    vocab=st.integers(3, 40),
    size=st.integers(1, 10),
    m=st.floats(0.0, 1.0),
)
def test_gated_token_is_the_argmax_of_log_p_plus_the_gate(seed, vocab, size, m):
    gen = np.random.default_rng(seed)
    lp = log_softmax(gen.normal(size=vocab) * 3)
    cand = sorted(gen.choice(vocab, size=min(size, vocab - 1), replace=False).tolist())
    with np.errstate(divide="ignore"):
        u = np.full(vocab, np.log1p(-m))
        u[cand] = np.log(m)
    brute = lp + u
    got = gated_token(gate_split(lp, cand), m)
    assert brute[got] == pytest.approx(brute.max(), abs=1e-12)  # ties may pick either token


def test_gated_token_rejects_a_mass_outside_0_1():
    with pytest.raises(ValueError, match="must lie in"):
        gated_token((0, -1.0, 1, -2.0), 1.5)


def test_three_verdicts_and_a_budget_in_prompts():
    clear = judge_parts({Part("acc", 0.5): [1.0] * 30 + [0.0] * 5}, seed=0)
    miss = judge_parts({Part("acc", 0.5): [0.0] * 30 + [1.0] * 5}, seed=0)
    near = judge_parts({Part("acc", 0.5): [1.0, 0.0] * 15 + [1.0] * 2}, seed=0)
    assert (clear.verdict, miss.verdict, near.verdict) == ("pass", "fail", "inconclusive")
    assert near.budget and near.budget.endswith("prompts")
    lo, hi = near.measured["acc"]["acc"]
    assert lo < 0.5 < hi
    at_most = judge_parts({Part("rate", 0.25, "<="): [0.0] * 20}, seed=0)
    assert at_most.verdict == "pass"


def test_bootstrap_is_paired_and_reproducible():
    a, b = bootstrap_indices(12, 3), bootstrap_indices(12, 3)
    assert np.array_equal(a, b) and not np.array_equal(a, bootstrap_indices(12, 4))
    x = np.arange(12.0)
    mean, lo, hi = mean_interval(x, a)
    assert mean == pytest.approx(5.5) and lo < mean < hi
    with pytest.raises(ValueError, match="at least 2 prompts"):
        bootstrap_indices(1, 0)
    with pytest.raises(ValueError, match="not finite"):
        mean_interval([np.nan] * 12, a)
    with pytest.raises(ValueError, match="same prompts"):
        judge_parts({Part("a", 0.0): [1.0] * 3, Part("b", 0.0): [1.0] * 4}, seed=0)


def test_statement_parts_read_the_named_columns():
    rows = {
        "acc1_V": [1.0, 0.0],
        "accf_V": [1.0, 1.0],
        "acc0_V": [0.0, 0.0],
        "acc0_C": [1.0, 1.0],
        "acc0_C_shuffled": [0.0, 0.0],
        "chance3": [0.25, 0.25],
    }
    fo = {p.quantity: v.tolist() for p, v in first_order_parts(rows).items()}
    assert fo == {"acc1_V - accf_V": [0.0, -1.0], "acc1_V - acc0_V": [1.0, 0.0]}
    zs = {p.quantity: v.tolist() for p, v in zero_shot_parts(rows, "acc0_C_shuffled").items()}
    assert zs["acc0_C - 3/|C|"] == [-0.25, -0.25] and zs["acc0_C - accf_V"] == [-1.0, -1.0]
    override = [
        {"n": 0, "follows": False, "predicted": False},
        {
            "n": 4,
            "follows": True,
            "predicted": False,
            "follows_other_context": False,
            "predicted_other_context": True,
        },
        {"n": 4, "follows": True, "predicted": True},
    ]
    parts = override_parts(override)
    assert [v.tolist() for v in parts.values()] == [[1.0, 1.0], [0.0, 1.0]]
    with pytest.raises(ValueError, match="follows_other_context"):
        override_parts(override, "follows_other_context", "predicted_other_context")


def test_a_statement_passes_only_where_every_judged_model_passes():
    good = judge_parts({Part("acc", 0.5): [1.0] * 20}, seed=0)
    bad = judge_parts({Part("acc", 0.5): [0.0] * 20}, seed=0)
    assert across_models({"gemma3-270m": good, "smollm2": bad}, ["gemma3-270m"]).verdict == "pass"
    assert across_models({"gemma3-270m": good, "smollm2": bad}, ["gemma3-270m", "smollm2"]).verdict == "fail"
    with pytest.raises(ValueError, match="none of the judged models"):
        across_models({"smollm2": good}, ["gemma3-270m"])


def test_judge_draws_is_a_student_t_interval_over_the_draws():
    from verify.measure import t_interval

    draws = [0] * 4 + [1] * 4 + [2] * 4 + [3] * 4
    values = [1, 1, 1, 0] + [1, 1, 0, 0] + [1, 1, 1, 1] + [1, 1, 1, 0]
    j = judge_draws({Part("acc", 0.5): values}, draws)
    means = [0.75, 0.5, 1.0, 0.75]
    assert j.measured["acc"]["per_draw"] == means and j.measured["acc"]["draws"] == [0, 1, 2, 3]
    assert j.measured["acc"]["acc"] == pytest.approx(list(t_interval(means)))
    assert j.verdict == "inconclusive" and j.budget.endswith("draws")
    assert judge_draws({Part("acc", 0.2): values}, draws).verdict == "pass"
    assert judge_draws({Part("acc", 0.99): [0.0] * 16}, draws).verdict == "fail"  # no spread: a point
    with pytest.raises(ValueError, match="at least 2 draws"):
        judge_draws({Part("acc", 0.5): [1.0, 0.0]}, [0, 0])
    with pytest.raises(ValueError, match="not finite"):
        per_draw_means([np.nan, 1.0], [0, 1])
    with pytest.raises(ValueError, match="same prompts"):
        judge_draws({Part("a", 0.0): [1.0] * 3}, [0, 1])


def test_margin_parts_are_the_rates_indicators():
    rows = {
        "margin0": [0.0, 1.0, 2.0],
        "marginf": [1.0, 1.0, 3.0],
        "mass0": [0.1] * 3,
        "massf": [0.2, 0.0, 0.3],
    }
    got = {p.quantity: v.tolist() for p, v in margin_parts(rows).items()}
    assert got == {"margin_up_rate": [1.0, 0.0, 1.0], "mass_up_rate": [1.0, 0.0, 1.0]}


def test_override_margins_decide_the_rates_on_each_draw():
    gen = np.random.default_rng(0)
    for _ in range(200):
        n = int(gen.integers(1, 12))
        follows, predicted = gen.normal(size=n), gen.normal(size=n) - 0.5
        rows = [
            {"n": 4, "seed": 7, "follows_margin": float(f), "predicted_margin": float(p)}
            for f, p in zip(follows, predicted)
        ]
        j = override_margin_judgement(rows + [{"n": 0, "seed": 7}])
        rate_ok = np.mean(follows > 0) >= 0.5
        pred_ok = np.mean(predicted > 0) <= 0.25
        assert (j.verdict == "pass") == (rate_ok and pred_ok)
    assert kth_largest([3.0, 1.0, 2.0], 1) == 3.0
    with pytest.raises(ValueError, match="does not exist"):
        kth_largest([1.0], 2)
    with pytest.raises(ValueError, match="found none"):
        override_margin_judgement([{"n": 4, "seed": 0, "follows": True}])
