"""IC-recall: generators, memories, patterns, model and bad input (spec icrecall.md)."""
import dataclasses
import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from constructions.icrecall import (direct_recall_accuracy, linear_memory, make_world,
                                    sample_direct, sample_icrecall, triplet_mlp)
from constructions.icrecall_model import ICAttention, TripletMemory, finetune
from constructions.icrecall_patterns import (PATTERNS, handset_pattern, pattern_accuracy,
                                             pattern_metrics)
from theory.icrecall import (fit_sample_complexity, min_context_pairs, mlp_params,
                             mlp_guarantee_dim, pairwise_margin, relation_chance_ceiling)

seeds = st.integers(0, 2**32 - 1)
RHO = 1 / math.sqrt(2)


def world(S=30, R=3, D=4, d=64, rho=RHO, seed=0):
    return make_world(S, R, D, d, rho, np.random.default_rng(seed))


@given(S=st.integers(2, 30), R=st.integers(1, 4), D=st.integers(1, 5), seed=seeds)
def test_memory_recalls_every_fact_at_its_dimension(S, R, D, seed):
    d = math.ceil(mlp_guarantee_dim(S, R, 1e-3))
    w = make_world(S, R, D, d, RHO, np.random.default_rng(seed))
    mlp = triplet_mlp(w, require_guarantee=True)
    s, r = np.divmod(np.arange(S * R), R)
    assert direct_recall_accuracy(mlp, s, r) == 1.0


@given(S=st.integers(3, 40), R=st.integers(1, 4), n=st.integers(1, 8), seed=seeds,
       mode=st.sampled_from(["single", "mixed"]))
def test_prompts_are_well_formed(S, R, n, seed, mode):
    n = min(n, S - 1)
    w = world(S=S, R=R, seed=seed)
    P = sample_icrecall(w, n, 50, np.random.default_rng(seed), relation_mode=mode)
    assert P.subjects.shape == (50, n) and len(P) == 50
    for k in range(50):
        assert len(set(P.subjects[k])) == n and P.query[k] not in P.subjects[k]
    np.testing.assert_array_equal(P.answers, w.answer[P.subjects, P.pair_rel])
    np.testing.assert_array_equal(P.target, w.answer[P.query, P.relation])
    if mode == "single":
        np.testing.assert_array_equal(P.pair_rel, P.relation[:, None].repeat(n, 1))
    assert np.all(w.ans_rel[P.target] == P.relation)


def relation_leak(P: "Prompts", R: int) -> float:
    """Accuracy of the best context-only guess of the target relation: the most frequent pair
    relation of the context. Relation chance 1/R when the context holds no information on r."""
    guess = np.array([np.bincount(row, minlength=R).argmax() for row in P.pair_rel])
    return float(np.mean(guess == P.relation))


@given(S=st.integers(10, 40), R=st.integers(2, 5), seed=seeds)
def test_mixed_context_carries_no_relation(S, R, seed):
    """Mixed mode draws every pair's relation independently of r: a guess of r from the context
    is right at relation chance (binomial tolerance, 4000 prompts); single mode reveals r."""
    w = world(S=S, R=R, seed=seed)
    K = 4000
    P = sample_icrecall(w, min(4, S - 1), K, np.random.default_rng(seed), relation_mode="mixed")
    tol = 4 * math.sqrt((1 / R) * (1 - 1 / R) / K)
    assert abs(relation_leak(P, R) - 1 / R) <= tol
    # the pair relations themselves are uniform whatever r: P(pair_rel = r | r) = 1/R
    assert abs(np.mean(P.pair_rel == P.relation[:, None]) - 1 / R) <= tol
    single = sample_icrecall(w, min(4, S - 1), 200, np.random.default_rng(seed))
    assert relation_leak(single, R) == 1.0


def test_relation_leak_detects_a_leaking_generator():
    """The statistic above is not a tautology: a generator that lets one pair carry r is caught."""
    w = world(S=30, R=4, seed=1)
    P = sample_icrecall(w, 3, 4000, np.random.default_rng(2), relation_mode="mixed")
    leaky = P.pair_rel.copy()
    leaky[:, 0] = P.relation
    leaky[:, 1] = P.relation
    P_leak = dataclasses.replace(P, pair_rel=leaky)
    assert relation_leak(P_leak, 4) > 1 / 4 + 4 * math.sqrt(0.1875 / 4000)


def test_factorised_mlp_matches_explicit_weights_and_torch():
    w = world(d=48)
    mlp = triplet_mlp(w)
    z = np.random.default_rng(1).standard_normal((7, 48))
    W1, b1, W2 = mlp.explicit_weights()
    np.testing.assert_allclose(mlp(z), np.maximum(z @ W1.T + b1, 0) @ W2.T, atol=1e-12)
    assert W1.size + b1.size + W2.size == mlp.n_params == mlp_params(30, 3, 48)
    mem = TripletMemory(mlp, 10.0)
    np.testing.assert_allclose(mem.logits(torch.as_tensor(z)).numpy(), 10 * mlp(z) @ w.unemb.T,
                               atol=1e-10)


def test_linear_memory_recalls_few_pairs():
    rng = np.random.default_rng(0)
    E = rng.standard_normal((10, 128)); E /= np.linalg.norm(E, axis=1, keepdims=True)
    U = rng.standard_normal((10, 128)); U /= np.linalg.norm(U, axis=1, keepdims=True)
    W = linear_memory(E, U, np.arange(10))
    assert np.all((E @ W.T @ U.T).argmax(1) == np.arange(10))


def test_patterns_and_metrics():
    for name in PATTERNS:
        a = handset_pattern(name, 4)
        assert a.shape == (9,) and a.sum() == pytest.approx(1)
    m = pattern_metrics(handset_pattern("pairwise", 4))
    assert m["imbalance"] == 0 and m["pair_uniformity"] == pytest.approx(1) and m["query_share"] == 0
    m = pattern_metrics(handset_pattern("answers_only", 4))
    assert m["imbalance"] == pytest.approx(1) and m["answer_share"] == pytest.approx(1)


def test_theory_formulas():
    assert pairwise_margin(8, RHO) == pytest.approx(0.5 - 1 / (8 * RHO))
    assert min_context_pairs(RHO) == 3 and pairwise_margin(3, RHO) > 0 > pairwise_margin(2, RHO)
    assert relation_chance_ceiling(5, 1000) == pytest.approx(0.2 + 3 * math.sqrt(0.16 / 1000) + 0.01)
    fit = fit_sample_complexity([100, 1000, 10000], [8, 16, 24])
    assert fit["power_exponent"] < 0.5
    fit = fit_sample_complexity([100, 1000, 10000], [10, 100, 1000])
    assert fit["power_exponent"] == pytest.approx(1) and fit["sse_power"] < 1e-20


def test_bad_input_names_the_hypothesis():
    w = world(S=10)
    with pytest.raises(ValueError, match="n_pairs <= n_subj - 1"):
        sample_icrecall(w, 10, 5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="relation without answers"):
        make_world(10, 3, 0, 32, RHO, np.random.default_rng(0))
    with pytest.raises(ValueError, match="below the sufficient dimension"):
        triplet_mlp(make_world(200, 5, 20, 128, RHO, np.random.default_rng(0)), require_guarantee=True)
    with pytest.raises(ValueError, match="rho"):
        make_world(10, 3, 2, 32, 1.5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="theta"):
        triplet_mlp(w, theta=2.5)
    with pytest.raises(ValueError, match="Generator"):
        make_world(10, 3, 2, 32, RHO, 0)
    with pytest.raises(ValueError, match="relation_mode"):
        sample_icrecall(w, 2, 5, np.random.default_rng(0), relation_mode="other")
    with pytest.raises(ValueError, match="N_f > e"):
        fit_sample_complexity([1, 100], [2, 3])
    with pytest.raises(ValueError, match="param"):
        ICAttention(w, TripletMemory(triplet_mlp(w), 10.0), param="other")


def test_finetune_moves_attention_off_the_query():
    """A short P-struct run: the query share falls and accuracy rises above the init."""
    w = make_world(40, 3, 5, 96, RHO, np.random.default_rng(3))
    mem = TripletMemory(triplet_mlp(w), 10.0)
    test = sample_icrecall(w, 6, 300, np.random.default_rng(4))
    train = sample_icrecall(w, 6, 32, np.random.default_rng(5))
    res = finetune(ICAttention(w, mem, "struct"), train, test, steps=60, record_every=25)
    assert res.metrics["query_share"] < res.metrics_init["query_share"] - 0.2
    assert res.acc > res.acc_init + 0.3
    traj = res.extra["trajectory"]
    assert [t["step"] for t in traj] == [0, 25, 50, 60]
    assert traj[0]["acc"] == res.acc_init and traj[-1]["acc"] == res.acc
    assert traj[-1]["query_share"] == pytest.approx(res.metrics["query_share"])
    assert traj[-1]["loss"] == res.losses[-1]
    with pytest.raises(ValueError, match="record_every"):
        finetune(ICAttention(w, mem, "struct"), train, test, steps=5, record_every=0)
