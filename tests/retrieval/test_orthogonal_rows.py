"""The orthogonal-embedding shortcut of constructions.retrieval.task: value_memory
and oracle_accuracy skip the products with I_d[:V] and must give the same floats as the plain
matrix products (the code they replaced, written out here)."""

import dataclasses

import numpy as np
import pytest

from constructions.retrieval.task import (
    make_retrieval_task,
    oracle_accuracy,
    orthogonal_rows,
    sample_cooccurrence_counts,
    value_memory,
)


def _value_memory_matmul(task, label_counts, counts, seq_len):
    N = int(label_counts.sum())
    sums = (counts @ task.emb + label_counts[:, None] * task.trigger[None, :]) / seq_len
    return sums * (1.0 / N)


def _oracle_accuracy_matmul(task, w_out):
    logits = task.features(task.emb) @ w_out.T
    V = task.vocab_size
    correct = logits[np.arange(V), task.label_perm]
    others = logits.copy()
    others[np.arange(V), task.label_perm] = -np.inf
    return float(np.mean(correct > others.max(axis=1)))


@pytest.mark.parametrize(
    "V, d, L, N, seed",
    [(8, 8, 4, 5, 0), (16, 40, 3, 30, 1), (64, 64, 4, 200, 2), (64, 96, 8, 5000, 3), (128, 128, 4, 2484, 4)],
)
def test_orthogonal_shortcut_gives_the_same_floats(V, d, L, N, seed):
    rng = np.random.default_rng(seed)
    task = make_retrieval_task(V, d, rng, "orthogonal")
    assert orthogonal_rows(task)
    label_counts, counts = sample_cooccurrence_counts(task, L, N, rng)
    fast = value_memory(task, label_counts, counts, L)
    slow = _value_memory_matmul(task, label_counts, counts, L)
    assert fast.shape == slow.shape == (V, d)
    assert np.array_equal(fast, slow)
    assert oracle_accuracy(task, fast) == _oracle_accuracy_matmul(task, slow)
    # a perturbed memory (ties and misses present) scores the same on both paths
    noisy = slow + np.random.default_rng(seed + 100).standard_normal(slow.shape) * np.abs(slow).mean()
    assert oracle_accuracy(task, noisy) == _oracle_accuracy_matmul(task, noisy)


def test_shortcut_only_for_the_identity_rows():
    rng = np.random.default_rng(5)
    task = make_retrieval_task(16, 16, rng, "orthogonal")
    permuted = dataclasses.replace(task, emb=task.emb[rng.permutation(16)])
    assert not orthogonal_rows(permuted)
    assert not orthogonal_rows(make_retrieval_task(16, 16, rng, "gaussian"))
    label_counts, counts = sample_cooccurrence_counts(permuted, 4, 100, rng)
    got = value_memory(permuted, label_counts, counts, 4)
    assert np.array_equal(got, _value_memory_matmul(permuted, label_counts, counts, 4))
    assert oracle_accuracy(permuted, got) == _oracle_accuracy_matmul(permuted, got)
    with_mlp = make_retrieval_task(16, 16, np.random.default_rng(6), "orthogonal", mlp_width=32)
    w = np.random.default_rng(7).standard_normal((16, 32))
    assert oracle_accuracy(with_mlp, w) == _oracle_accuracy_matmul(with_mlp, w)
