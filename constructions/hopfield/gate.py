"""The first-order context gate on a language model's next-token distribution (docs/hopfield.md)
[derived].

Our formalisation of the hopfield paper's gates u acting on the query's evidence: the query's
zero-shot log distribution log p0 over the vocabulary plus u = log m on the relation's candidate
tokens C and log(1 - m) elsewhere, m being the context-only pass's probability mass on C. The
prediction is argmax_V(log p0 + u); :func:`gate_split` keeps the four numbers of log p0 that this
argmax needs for any m, so a gate of another relation can be evaluated later without the whole
distribution.
"""

from __future__ import annotations

import math

import numpy as np


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """log softmax over the whole vector (float64).

    >>> np.round(np.exp(log_softmax(np.array([0.0, np.log(3.0)]))), 6).tolist()
    [0.25, 0.75]
    """
    z = np.asarray(logits, dtype=float) - np.max(logits)
    return z - np.log(np.exp(z).sum())


def gate_split(log_p: np.ndarray, cand: list) -> tuple[int, float, int, float]:
    """(best token in C, its log p, best token outside C, its log p) of one log distribution: all
    that the gated prediction argmax_V(log p + u) needs for any gate value m (:func:`gated_token`).

    >>> gate_split(np.log(np.array([0.5, 0.3, 0.2])), [1, 2])[0::2]
    (1, 0)
    """
    inside = np.asarray(cand)
    k = int(inside[np.argmax(log_p[inside])])
    masked = np.array(log_p, dtype=float)
    masked[inside] = -np.inf
    j = int(np.argmax(masked))
    return k, float(log_p[k]), j, float(masked[j])


def gated_token(split: tuple[int, float, int, float], m: float) -> int:
    """argmax_V of l1 = log p0 + u, u = log m on C and log(1 - m) elsewhere (the first-order gate
    of the context: m is the context-only pass's probability mass on C), from :func:`gate_split`.
    [derived]: our formalisation of the hopfield paper's gates u acting on the query's evidence.

    >>> split = (7, np.log(0.2), 3, np.log(0.5))
    >>> gated_token(split, 0.9), gated_token(split, 0.1), gated_token(split, 1.0)
    (7, 3, 7)
    """
    if not 0.0 <= m <= 1.0 or not math.isfinite(m):
        raise ValueError(f"gate mass m = {m} must lie in [0, 1]")
    k, in_val, j, out_val = split
    with np.errstate(divide="ignore"):
        a, b = in_val + np.log(m), out_val + np.log1p(-m)
    return int(k if a >= b else j)
