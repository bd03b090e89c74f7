"""In-context factual recall (IC-recall): world, prompt generators and the two memories.

Paper: Huang, Nichani, Lee, Ge, *Fine-Tuning Dynamics of In-Context Factual Recall in
Transformers*, arXiv 2605.27774 (docs/icrecall.md). Everything here except the linear memory is
this project's formalisation [derived]: the paper's construction could not be read.

Randomness only through an explicit ``numpy.random.Generator`` passed by the caller.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from constructions.tasks import check_generator
from theory.icrecall import mlp_guarantee_dim
from theory.validate import require_int

#: slot ids of the T = 2n + 1 positions: subject, answer, query.
SUBJ, ANS, QUERY = 0, 1, 2


def _unit_rows(rng: np.random.Generator, rows: int, dim: int) -> np.ndarray:
    x = rng.standard_normal((rows, dim))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@dataclass(frozen=True)
class World:
    """A world of S subjects, R relations and R*D answers (docs/icrecall.md#setting) [derived].

    subj (S, d) e_s; rel (R, d) e_r; ans_noise (V, d) the ẽ_a; ans (V, d) the answer embeddings
    e_a = sqrt(1 - rho^2) ẽ_a + rho e_{r(a)} (not renormalised); unemb (V, d) the u_a; slot (3, d)
    p_SUBJ, p_ANS, p_QUERY (used by P-full only); ans_rel (V,) the relation r(a) = a // D;
    answer (S, R) the table a*(s, r), a uniformly random element of A_r = [r D, (r+1) D).
    """

    subj: np.ndarray
    rel: np.ndarray
    ans_noise: np.ndarray
    ans: np.ndarray
    unemb: np.ndarray
    slot: np.ndarray
    ans_rel: np.ndarray
    answer: np.ndarray
    rho: float

    @property
    def n_subj(self) -> int:
        return self.subj.shape[0]

    @property
    def n_rel(self) -> int:
        return self.rel.shape[0]

    @property
    def n_ans(self) -> int:
        return self.ans.shape[0]

    @property
    def n_ans_per_rel(self) -> int:
        return self.n_ans // self.n_rel

    @property
    def dim(self) -> int:
        return self.subj.shape[1]

    @property
    def n_facts(self) -> int:
        return self.n_subj * self.n_rel


def make_world(
    n_subj: int, n_rel: int, n_ans_per_rel: int, dim: int, rho: float, gen: np.random.Generator
) -> World:
    """Draw a world (docs/icrecall.md#setting) [derived].

    Draw order (so that a seed fixes everything): e_s, e_r, ẽ_a, u_a, the answer table, then the
    slot embeddings p. Hypotheses: S >= 2, R >= 1, D >= 1 (every relation has answers), d >= 2,
    0 <= rho <= 1.
    """
    check_generator(gen)
    for name, value, low in (
        ("n_subj", n_subj, 2),
        ("n_rel", n_rel, 1),
        ("n_ans_per_rel", n_ans_per_rel, 1),
        ("dim", dim, 2),
    ):
        require_int(name, value)
        if value < low:
            extra = " (a relation without answers)" if name == "n_ans_per_rel" else ""
            raise ValueError(f"{name}={value} violates the hypothesis {name} >= {low}{extra}")
    rho = float(rho)
    if not 0.0 <= rho <= 1.0:
        raise ValueError(f"rho={rho} violates the hypothesis 0 <= rho <= 1")
    S, R, D, d = int(n_subj), int(n_rel), int(n_ans_per_rel), int(dim)
    subj = _unit_rows(gen, S, d)
    rel = _unit_rows(gen, R, d)
    ans_noise = _unit_rows(gen, R * D, d)
    unemb = _unit_rows(gen, R * D, d)
    ans_rel = np.repeat(np.arange(R), D)
    answer = (np.arange(R)[None, :] * D + gen.integers(0, D, size=(S, R))).astype(np.int64)
    slot = _unit_rows(gen, 3, d)
    ans = np.sqrt(1.0 - rho**2) * ans_noise + rho * rel[ans_rel]
    return World(subj, rel, ans_noise, ans, unemb, slot, ans_rel, answer, rho)


@dataclass(frozen=True)
class Prompts:
    """K IC-recall sequences: subjects (K, n) s_i, answers (K, n) a_i, query (K,) s_q,
    relation (K,) the target relation r, pair_rel (K, n) the relation that generated each pair
    (= r in single mode), target (K,) a*(s_q, r)."""

    subjects: np.ndarray
    answers: np.ndarray
    query: np.ndarray
    relation: np.ndarray
    pair_rel: np.ndarray
    target: np.ndarray

    def __len__(self) -> int:
        return int(self.query.shape[0])

    @property
    def n_pairs(self) -> int:
        return int(self.subjects.shape[1])


def sample_icrecall(
    world: World, n_pairs: int, n_seq: int, gen: np.random.Generator, relation_mode: str = "single"
) -> Prompts:
    """K IC-recall prompts [s_1, a_1, ..., s_n, a_n, s_q] -> a*(s_q, r) [derived].

    Per sequence: r ~ U[R]; s_q ~ U[S]; n distinct context subjects from [S] minus {s_q};
    a_i = a*(s_i, r) ("single"), or a*(s_i, r_i) with r_i ~ U[R] independent ("mixed").
    Hypotheses: 1 <= n <= S - 1, K >= 1, relation_mode in {"single", "mixed"}.
    """
    check_generator(gen)
    S, R = world.n_subj, world.n_rel
    n_pairs = require_int("n_pairs", n_pairs, 1)
    if n_pairs > S - 1:
        raise ValueError(
            f"n_pairs={n_pairs} violates the hypothesis n_pairs <= n_subj - 1 = {S - 1} "
            "(the context subjects are distinct and differ from the query)"
        )
    n_seq = require_int("n_seq", n_seq, 1)
    if relation_mode not in ("single", "mixed"):
        raise ValueError(f"relation_mode={relation_mode!r} must be 'single' or 'mixed'")
    n, K = int(n_pairs), int(n_seq)
    relation = gen.integers(0, R, size=K)
    query = gen.integers(0, S, size=K)
    # n distinct subjects from [S] \ {s_q}: the n smallest of S-1 uniform keys, shifted past s_q
    keys = gen.random((K, S - 1))
    ranks = np.argpartition(keys, n - 1, axis=1)[:, :n] if n < S - 1 else np.argsort(keys, axis=1)
    subjects = ranks + (ranks >= query[:, None])
    if relation_mode == "single":
        pair_rel = np.repeat(relation[:, None], n, axis=1)
    else:
        pair_rel = gen.integers(0, R, size=(K, n))
    answers = world.answer[subjects, pair_rel]
    target = world.answer[query, relation]
    return Prompts(
        subjects.astype(np.int64),
        answers.astype(np.int64),
        query.astype(np.int64),
        relation.astype(np.int64),
        pair_rel.astype(np.int64),
        target.astype(np.int64),
    )


def sample_direct(world: World, n_samples: int, gen: np.random.Generator):
    """(s, r) -> a*(s, r) pairs for MLP pretraining [derived]: s ~ U[S], r ~ U[R]."""
    check_generator(gen)
    n_samples = require_int("n_samples", n_samples, 1)
    s = gen.integers(0, world.n_subj, size=n_samples)
    r = gen.integers(0, world.n_rel, size=n_samples)
    return s, r, world.answer[s, r]


# ----------------------------------------------------------------------------------------------
# Memories


@dataclass(frozen=True)
class TripletMLP:
    """The constructed triplet MLP (docs/icrecall.md#setting) [derived]: one neuron per fact f = (s, r),
    first-layer row w_f = e_s + e_r, bias -theta, ReLU, second-layer column u_{a*(s,r)}.

    F(z) = sum_f u_{a*(f)} ReLU(w_f^T z - theta). Because w_f = e_s + e_r, the pre-activation
    factorises: w_f^T z = <e_s, z> + <e_r, z>, so F is evaluated in O((S + R) d + S R + V d) per
    input instead of O(S R d), exactly (:meth:`explicit_weights` gives the plain matrices).
    """

    world: World
    theta: float

    @property
    def width(self) -> int:
        return self.world.n_facts

    @property
    def n_params(self) -> int:
        """2 m d + m: first layer m x d, biases m, second layer d x m."""
        m, d = self.width, self.world.dim
        return 2 * m * d + m

    def explicit_weights(self):
        """(W1 (m, d), b1 (m,), W2 (d, m)), neurons ordered s major, r minor."""
        w = self.world
        W1 = (w.subj[:, None, :] + w.rel[None, :, :]).reshape(-1, w.dim)
        b1 = np.full(self.width, -self.theta)
        W2 = w.unemb[w.answer.reshape(-1)].T
        return W1, b1, W2

    def hidden(self, z: np.ndarray) -> np.ndarray:
        """ReLU(w_f^T z - theta) for z (K, d): (K, S, R)."""
        a = z @ self.world.subj.T
        b = z @ self.world.rel.T
        h = a[:, :, None] + b[:, None, :]
        h -= self.theta  # in place: the values of the plain expression without its temporaries
        return np.maximum(h, 0.0, out=h)

    @functools.cached_property
    def _answer_onehot(self) -> np.ndarray:
        """(m, V): row f is the indicator of the answer a*(f), built once per memory."""
        onehot = np.zeros((self.width, self.world.n_ans))
        onehot[np.arange(self.width), self.world.answer.reshape(-1)] = 1.0
        return onehot

    def answer_weights(self, z: np.ndarray) -> np.ndarray:
        """c (K, V): c_a = sum of the hidden activations of the facts whose answer is a."""
        h = self.hidden(z).reshape(z.shape[0], -1)
        return h @ self._answer_onehot

    def __call__(self, z: np.ndarray) -> np.ndarray:
        """F(z) (K, d)."""
        return self.answer_weights(z) @ self.world.unemb


def triplet_mlp(
    world: World, theta: float = 1.5, require_guarantee: bool = False, fail_prob: float = 1e-3
) -> TripletMLP:
    """Build the triplet MLP [derived]. Hypotheses: 1 < theta < 2 (the correct
    neuron at 2 passes, the neurons sharing s or r at 1 do not); with ``require_guarantee`` also
    theta = 1.5 and d >= 72 ln((S + R)^2 / delta) (theory ``icrecall.mlp_guarantee_dim``: every
    fact recalled with probability >= 1 - delta)."""
    theta = float(theta)
    if not 1.0 < theta < 2.0:
        raise ValueError(f"theta={theta} violates the hypothesis 1 < theta < 2")
    if require_guarantee:
        if theta != 1.5:
            raise ValueError(f"theta={theta}: the recall guarantee is stated for theta = 1.5")
        need = mlp_guarantee_dim(world.n_subj, world.n_rel, fail_prob)
        if world.dim < need:
            raise ValueError(
                f"dim={world.dim} is below the sufficient dimension {need:.1f} = "
                f"72 ln((S+R)^2/delta) for S={world.n_subj}, R={world.n_rel}, "
                f"delta={fail_prob}"
            )
    return TripletMLP(world, theta)


def direct_recall_accuracy(
    mlp: TripletMLP, subj: np.ndarray, rel: np.ndarray, max_elements: int = 1 << 24
) -> float:
    """Accuracy of argmax_a u_a^T F(e_s + e_r) against a*(s, r) [derived], over the queries in
    blocks whose hidden layer holds at most ``max_elements`` entries (at least one query): the
    hidden layer is (queries, N R), 16 GB at N = 2 10^4, R = 5, 2 10^4 queries."""
    w = mlp.world
    subj, rel = np.asarray(subj), np.asarray(rel)
    rows = max(1, max_elements // max(mlp.width, 1))
    correct = 0
    for at in range(0, len(subj), rows):
        s_, r_ = subj[at : at + rows], rel[at : at + rows]
        logits = mlp(w.subj[s_] + w.rel[r_]) @ w.unemb.T
        correct += int(np.sum(_strict_argmax(logits) == w.answer[s_, r_]))
    if not len(subj):
        raise ValueError("direct recall accuracy needs at least one query")
    return float(correct / len(subj))


def _strict_argmax(logits: np.ndarray) -> np.ndarray:
    """argmax per row, -1 where the maximum is tied (a tie is an error, never a lucky pick)."""
    best = logits.argmax(axis=1)
    top = logits.max(axis=1, keepdims=True)
    tied = (logits == top).sum(axis=1) > 1
    return np.where(tied, -1, best)


def linear_memory(keys: np.ndarray, values: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Linear associative memory W = sum_i u_{y_i} e_{x_i}^T [reference: Nichani,
    Lee & Bietti 2024]. keys (N, d) the e_{x_i}; values (V, d) the u_y; targets (N,) the y_i."""
    keys, values = np.asarray(keys, float), np.asarray(values, float)
    targets = np.asarray(targets)
    if keys.ndim != 2 or values.ndim != 2 or keys.shape[1] != values.shape[1]:
        raise ValueError("keys (N, d) and values (V, d) must share d")
    if targets.shape != (keys.shape[0],) or targets.min() < 0 or targets.max() >= values.shape[0]:
        raise ValueError("targets must be N ids in [0, V)")
    return values[targets].T @ keys
