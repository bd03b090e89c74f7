"""The pooled-state statistical problem of the retrieval lower bound (theory/retrieval/lower.py;
2603.15923) [derived]: a sampler of its sufficient statistics and two estimators
of the token-label bijection.

Given the label counts n_y, the sum of the pooled states of the samples labelled y is exactly
n_y (e_{pi^-1(y)} + z) + sqrt(n_y) sigma g_y with g_y ~ N(0, I_d), sigma^2 = (L - 1)/d (noise
tokens with fresh N(0, I_d/d) embeddings). Sampling these V sums is equivalent in distribution
to sampling the N pooled states and summing them, at O(V d) cost whatever N.
"""

from __future__ import annotations

import numpy as np

from theory.retrieval.lower import pooled_noise_variance
from theory.validate import require_int


def sample_label_sums(
    vocab_size: int, d_model: int, seq_len: int, n_samples: int, rng: np.random.Generator, emb=None
) -> dict:
    """One draw: Gaussian embeddings N(0, I_d/d) (unless ``emb`` is given), a unit trigger z, a
    uniform bijection pi (token -> label), multinomial label counts and the per-label sums."""
    V, d = require_int("vocab_size", vocab_size, 2), require_int("d_model", d_model, 1)
    seq_len, n_samples = require_int("seq_len", seq_len, 2), require_int("n_samples", n_samples, 0)
    sigma2 = pooled_noise_variance(d, seq_len)
    E = rng.standard_normal((V, d)) / np.sqrt(d) if emb is None else np.asarray(emb, dtype=float)
    if E.shape != (V, d):
        raise ValueError(f"emb must have shape (vocab_size, d_model) = {(V, d)}; got {E.shape}")
    z = rng.standard_normal(d)
    z /= np.linalg.norm(z)
    perm = rng.permutation(V)  # perm[x] = label of token x
    inv = np.argsort(perm)  # inv[y] = token of label y
    counts = rng.multinomial(n_samples, np.full(V, 1.0 / V))
    sums = counts[:, None] * (E[inv] + z) + np.sqrt(counts * sigma2)[:, None] * rng.standard_normal((V, d))
    return {"emb": E, "trigger": z, "label_perm": perm, "counts": counts, "sums": sums, "sigma2": sigma2}


def mle_bijection(draw: dict) -> np.ndarray:
    """Maximum-likelihood bijection (= MAP under the uniform prior): maximise
    sum_y [<S_y - n_y z, e_x> - n_y ||e_x||^2 / 2] over bijections y -> x (linear assignment)."""
    from scipy.optimize import linear_sum_assignment

    E, z, n, S = draw["emb"], draw["trigger"], draw["counts"], draw["sums"]
    gain = (S - n[:, None] * z) @ E.T - 0.5 * n[:, None] * (E * E).sum(1)[None, :]  # [y, x]
    rows, cols = linear_sum_assignment(-gain)
    perm = np.empty(len(E), dtype=int)
    perm[cols] = rows
    return perm


def one_step_memory(draw: dict) -> np.ndarray:
    """The one-step value memory (docs/retrieval.md#setting) on the pooled states: W_v = sum_y onehot(y)
    S_y^T, token x read out as argmax_y <S_y, e_x> (no bijection constraint)."""
    return np.argmax(draw["emb"] @ draw["sums"].T, axis=1)
