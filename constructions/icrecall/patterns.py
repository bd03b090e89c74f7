"""Hand-set attention patterns and the pairwise-pattern metrics (docs/icrecall.md) [derived].

Positions of a prompt [s_1, a_1, ..., s_n, a_n, s_q]: 2i is subject i, 2i + 1 its answer,
T - 1 = 2n the query. Everything is numpy; the trained models in
:mod:`constructions.icrecall.model` report their attention in the same layout.
"""

from __future__ import annotations

import math

import numpy as np

from constructions.icrecall.world import Prompts, TripletMLP, _strict_argmax
from theory.validate import require_int

PATTERNS = ("pairwise", "query_only", "subjects_only", "answers_only", "uniform")


def handset_pattern(name: str, n_pairs: int) -> np.ndarray:
    """alpha (T,) of a hand-set pattern (docs/icrecall.md#setting) [derived]: pairwise = 1/(2n) on every
    context token and 0 on the query; query_only; subjects_only = 1/n on each s_i; answers_only = 1/n
    on each a_i; uniform = 1/T."""
    n = require_int("n_pairs", n_pairs, 1)
    T = 2 * n + 1
    alpha = np.zeros(T)
    if name == "pairwise":
        alpha[:-1] = 1.0 / (2 * n)
    elif name == "query_only":
        alpha[-1] = 1.0
    elif name == "subjects_only":
        alpha[0:-1:2] = 1.0 / n
    elif name == "answers_only":
        alpha[1:-1:2] = 1.0 / n
    elif name == "uniform":
        alpha[:] = 1.0 / T
    else:
        raise ValueError(f"unknown pattern {name!r}; expected one of {PATTERNS}")
    return alpha


def token_embeddings(world, prompts: Prompts, slots: bool = False) -> np.ndarray:
    """X (K, T, d): rows e_{s_1}, e_{a_1}, ..., e_{s_n}, e_{a_n}, e_{s_q}; with ``slots`` each row
    also carries its slot embedding p_SUBJ / p_ANS / p_QUERY (P-full, docs/icrecall.md).

    One gather from the table of every row a token can have (subjects, answers, and with slots
    subjects + p_SUBJ, answers + p_ANS, subjects + p_QUERY): each row holds the same floats as
    the token's embedding plus its slot embedding added in place, in one pass over X."""
    K, n = prompts.subjects.shape
    S = world.subj.shape[0]
    if slots:
        table = np.concatenate(
            [world.subj + world.slot[0], world.ans + world.slot[1], world.subj + world.slot[2]]
        )
        query_offset = S + world.ans.shape[0]
    else:
        table = np.concatenate([world.subj, world.ans])
        query_offset = 0
    ids = np.empty((K, 2 * n + 1), dtype=np.int64)
    ids[:, 0:-1:2] = prompts.subjects
    ids[:, 1:-1:2] = prompts.answers + S
    ids[:, -1] = prompts.query + query_offset
    return table[ids]


def pattern_accuracy(
    mlp: TripletMLP,
    prompts: Prompts,
    alpha: np.ndarray,
    omega: float,
    logit_scale: float = 10.0,
    max_elements: int = 1 << 24,
    X: np.ndarray | None = None,
) -> float:
    """Accuracy of the one-layer model with a fixed pattern (docs/icrecall.md#the-fine-tuned-model) [derived]:
    z = x_T + omega sum_j alpha_j x_j, prediction argmax_a gamma u_a^T F(z) (ties are errors).
    ``X``: :func:`token_embeddings` of ``prompts`` (without slots) when the caller holds it, so
    that several patterns on the same prompts embed them once."""
    alpha = np.asarray(alpha, float)
    T = 2 * prompts.n_pairs + 1
    if alpha.shape not in ((T,), (len(prompts), T)):
        raise ValueError(f"alpha must have shape ({T},) or ({len(prompts)}, {T})")
    if np.any(alpha < 0) or not np.allclose(alpha.sum(axis=-1), 1.0):
        raise ValueError("alpha must be a probability vector over the T positions")
    X = token_embeddings(mlp.world, prompts) if X is None else X
    mix = np.einsum("t,ktd->kd", alpha, X) if alpha.ndim == 1 else np.einsum("kt,ktd->kd", alpha, X)
    z = X[:, -1] + omega * mix
    # prompts in blocks of at most 2^24 hidden entries (the (K, N R) hidden layer is
    # 1.6 GB per copy at N = 2 10^4, R = 5, K = 2000); one block at quick scale
    if not len(z):
        raise ValueError("pattern accuracy needs at least one prompt")
    rows = max(1, max_elements // max(mlp.width, 1))
    correct = 0
    for at in range(0, len(z), rows):
        logits = logit_scale * mlp(z[at : at + rows]) @ mlp.world.unemb.T
        correct += int(np.sum(_strict_argmax(logits) == prompts.target[at : at + rows]))
    return float(correct / len(z))


def mixed_input(
    mlp: TripletMLP, prompts: Prompts, alpha: np.ndarray, omega: float, X: np.ndarray | None = None
) -> np.ndarray:
    """z (K, d) = x_T + omega sum_j alpha_j x_j for a fixed pattern alpha (T,) (docs/icrecall.md);
    ``X`` as in :func:`pattern_accuracy`."""
    X = token_embeddings(mlp.world, prompts) if X is None else X
    return X[:, -1] + omega * np.einsum("t,ktd->kd", np.asarray(alpha, float), X)


def context_neuron_firing(
    mlp: TripletMLP, prompts: Prompts, alpha: np.ndarray, omega: float, z: np.ndarray | None = None
) -> float:
    """Fraction of prompts in which some context-subject neuron (s_i, r) of the target relation is
    active, ReLU(<e_{s_i}, z> + <e_r, z> - theta) > 0, under the fixed pattern alpha [derived];
    ``z``: :func:`mixed_input` of the same arguments when the caller holds it.

    Under the pairwise pattern with omega = 2/rho its noise-free pre-activation is
    1 + 1/(n rho) (theory ``pairwise_preactivations``): it fires iff n < 1/(rho (theta - 1)).
    """
    z = mixed_input(mlp, prompts, alpha, omega) if z is None else z
    w = mlp.world
    pre = (
        np.einsum("kd,knd->kn", z, w.subj[prompts.subjects])
        + np.einsum("kd,kd->k", z, w.rel[prompts.relation])[:, None]
        - mlp.theta
    )
    return float(np.mean((pre > 0).any(axis=1)))


def pattern_metrics(alpha) -> dict:
    """Pairwise-pattern metrics of attention alpha (K, T) or (T,) [derived].

    imbalance: mean over sequences and pairs of |alpha_{s_i} - alpha_{a_i}| / (alpha_{s_i} +
    alpha_{a_i}); pair_uniformity H_p: entropy of the normalised pair masses divided by log n
    (1 for n = 1), averaged over sequences; query_share: mean alpha_T. Also the mean attention per
    position and the mean subject and answer shares.
    """
    a = np.atleast_2d(np.asarray(alpha, float))
    T = a.shape[1]
    if T < 3 or T % 2 == 0:
        raise ValueError(f"attention over T={T} positions is not a prompt of n >= 1 pairs")
    n = (T - 1) // 2
    sub, ans = a[:, 0:-1:2], a[:, 1:-1:2]
    mass = sub + ans
    tiny = np.finfo(float).tiny
    imbalance = np.abs(sub - ans) / np.maximum(mass, tiny)
    p = mass / np.maximum(mass.sum(axis=1, keepdims=True), tiny)
    ent = -(p * np.log(np.maximum(p, tiny))).sum(axis=1)
    hp = ent / math.log(n) if n > 1 else np.ones(a.shape[0])
    return {
        "imbalance": float(imbalance.mean()),
        "pair_uniformity": float(hp.mean()),
        "query_share": float(a[:, -1].mean()),
        "subject_share": float(sub.sum(axis=1).mean()),
        "answer_share": float(ans.sum(axis=1).mean()),
        "mean_alpha": a.mean(axis=0).tolist(),
    }
