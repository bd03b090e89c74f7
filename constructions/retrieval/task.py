"""Token-retrieval task of *Learning to Recall with Transformers Beyond Orthogonal Embeddings*
(2603.15923) and its one-step value memory (docs/retrieval.md#setting).

The task [abstract; details derived]: each sequence has length L; one informative token x sits
at position ell and carries a trigger vector; the other L - 1 positions are noise tokens drawn
i.i.d. uniformly from the same vocabulary; the label is pi(x) for a fixed bijection pi. The
query vector is z_EOS. Embeddings are fixed: Gaussian (non-orthogonal when d < V) or orthogonal.

Everything random comes from an explicit ``numpy.random.Generator``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from theory.validate import require_int

EMBEDDINGS = ("gaussian", "orthogonal")


@dataclass(frozen=True)
class RetrievalTask:
    """Fixed part of the task: emb (V, d), label_perm pi (V,), trigger z_trig (d,), eos z_EOS (d,),
    and the optional fixed random MLP matrix mlp (m, d) (None: attention only)."""

    emb: np.ndarray
    label_perm: np.ndarray
    trigger: np.ndarray
    eos: np.ndarray
    embedding: str
    mlp: np.ndarray | None = None

    @property
    def vocab_size(self) -> int:
        return self.emb.shape[0]

    @property
    def d_model(self) -> int:
        return self.emb.shape[1]

    def features(self, states: np.ndarray) -> np.ndarray:
        """phi(o): identity for the attention-only model, ReLU(A o)/sqrt(m) with the MLP."""
        if self.mlp is None:
            return states
        return np.maximum(states @ self.mlp.T, 0.0) / math.sqrt(self.mlp.shape[0])


@dataclass(frozen=True)
class RetrievalData:
    """Sampled sequences: tokens (N, L), info_pos (N,), labels (N,), with their task."""

    task: RetrievalTask
    tokens: np.ndarray
    info_pos: np.ndarray
    labels: np.ndarray

    @property
    def n_samples(self) -> int:
        return self.tokens.shape[0]

    @property
    def seq_len(self) -> int:
        return self.tokens.shape[1]

    def hidden(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """h_l = e_{x_l} + 1[l = ell] z_trig for samples start:stop, shape (n, L, d)."""
        tok = self.tokens[start:stop]
        h = self.task.emb[tok]
        rows = np.arange(tok.shape[0])
        h[rows, self.info_pos[start:stop]] += self.task.trigger
        return h


def _unit(rng: np.random.Generator, d: int) -> np.ndarray:
    v = rng.standard_normal(d) / math.sqrt(d)
    return v / np.linalg.norm(v)


def check_sizes(vocab_size, d_model, seq_len=1, n_samples=1, embedding="gaussian") -> None:
    """Validate the hypotheses of the task; ValueError names the one violated."""
    for name, value, low in (
        ("vocab_size", vocab_size, 2),
        ("d_model", d_model, 1),
        ("seq_len", seq_len, 1),
        ("n_samples", n_samples, 1),
    ):
        require_int(name, value, low)
    if embedding not in EMBEDDINGS:
        raise ValueError(f"embedding={embedding!r} must be one of {EMBEDDINGS}")
    if embedding == "orthogonal" and d_model < vocab_size:
        raise ValueError(
            f"orthogonal embeddings need d_model >= vocab_size (V orthonormal vectors in "
            f"R^d); got d_model={d_model} < vocab_size={vocab_size}"
        )


def make_retrieval_task(
    vocab_size: int,
    d_model: int,
    rng: np.random.Generator,
    embedding: str = "gaussian",
    mlp_width: int | None = None,
    orthogonal_special: bool = True,
) -> RetrievalTask:
    """Embeddings, label bijection and special vectors [abstract task; derived details].

    gaussian: emb = N(0, I_d/d) rows; orthogonal: the first V rows of I_d (needs d >= V).
    z_trig, z_EOS: unit vectors drawn from N(0, I_d/d) and renormalised; by default z_EOS is made
    exactly orthogonal to z_trig (Gram-Schmidt, needs d >= 2), not to the token embeddings.
    mlp_width m: a fixed Gaussian (m, d) matrix A for phi(o) = ReLU(A o)/sqrt(m).
    """
    check_sizes(vocab_size, d_model, embedding=embedding)
    V, d = int(vocab_size), int(d_model)
    if orthogonal_special and d < 2:
        raise ValueError(f"d_model={d}: an EOS vector orthogonal to the trigger needs d_model >= 2")
    if embedding == "gaussian":
        emb = rng.standard_normal((V, d)) / math.sqrt(d)
    else:
        emb = np.eye(d)[:V].copy()
    label_perm = rng.permutation(V)
    trigger = _unit(rng, d)
    eos = _unit(rng, d)
    if orthogonal_special:
        eos = eos - (eos @ trigger) * trigger
        eos = eos / np.linalg.norm(eos)
    mlp = None
    if mlp_width is not None:
        mlp = rng.standard_normal((require_int("mlp_width", mlp_width, 1), d))
    return RetrievalTask(
        emb=emb, label_perm=label_perm, trigger=trigger, eos=eos, embedding=embedding, mlp=mlp
    )


def sample_sequences(
    task: RetrievalTask, seq_len: int, n_samples: int, rng: np.random.Generator
) -> RetrievalData:
    """N sequences: x ~ U[V], ell ~ U[L], noise tokens i.i.d. U[V], label pi(x)."""
    check_sizes(task.vocab_size, task.d_model, seq_len, n_samples)
    V, L, N = task.vocab_size, int(seq_len), int(n_samples)
    tokens = rng.integers(0, V, size=(N, L))
    info_tok = rng.integers(0, V, size=N)
    info_pos = rng.integers(0, L, size=N)
    tokens[np.arange(N), info_pos] = info_tok
    return RetrievalData(task=task, tokens=tokens, info_pos=info_pos, labels=task.label_perm[info_tok])


def make_retrieval_data(
    vocab_size: int,
    d_model: int,
    seq_len: int,
    n_samples: int,
    rng: np.random.Generator,
    embedding: str = "gaussian",
) -> RetrievalData:
    """``make_retrieval_data``: a task and N sequences; fields tokens, info_pos, labels,
    task.emb, task.label_perm (plus task.trigger, task.eos)."""
    check_sizes(vocab_size, d_model, seq_len, n_samples, embedding)
    task = make_retrieval_task(vocab_size, d_model, rng, embedding)
    return sample_sequences(task, seq_len, n_samples, rng)


# ---------------------------------------------------------------- one-step value memory


def orthogonal_rows(task: RetrievalTask) -> bool:
    """True when ``task.emb`` is exactly the first V rows of I_d (the orthogonal embedding). A
    product with it is then a column selection or a zero padding, with the same floats as the
    matrix product (every other term is an exact zero), in O(V d) instead of O(V^2 d)
    (V = d = 4096 at full scale)."""
    if task.embedding != "orthogonal":
        return False
    emb, V = task.emb, task.vocab_size
    return bool(
        V <= emb.shape[1] and np.count_nonzero(emb) == V and np.all(emb[np.arange(V), np.arange(V)] == 1.0)
    )


def cooccurrence_counts(data: RetrievalData) -> tuple[np.ndarray, np.ndarray]:
    """(label_counts n_y (V,), C (V, V)) with C[y, v] = number of positions holding token v in
    the sequences labelled y. The uniform-attention step 1 depends on the data only through these."""
    V = data.task.vocab_size
    label_counts = np.bincount(data.labels, minlength=V)
    rows = np.repeat(data.labels, data.seq_len)
    counts = np.zeros((V, V), dtype=np.int64)
    np.add.at(counts, (rows, data.tokens.ravel()), 1)
    return label_counts, counts


#: how the label counts n_y of N sequences are drawn: "multinomial" (x uniform, the task's law) or
#: "equal" (every label floor(N/V) or ceil(N/V) times, a balanced design [derived])
LABEL_COUNTS = ("multinomial", "equal")


def equal_label_counts(vocab_size: int, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """Balanced label counts [derived]: every label floor(N/V) times, and the remainder N mod V
    given once each to that many labels drawn uniformly without replacement, so the counts sum to
    N and differ by at most 1.

    >>> from constructions.seeding import rng_for
    >>> n = equal_label_counts(4, 10, rng_for(0, "retrieval.scaling.permutation"))
    >>> int(n.sum()), sorted(n.tolist())
    (10, [2, 2, 3, 3])
    """
    V, N = require_int("vocab_size", vocab_size, 2), require_int("n_samples", n_samples, 1)
    counts = np.full(V, N // V, dtype=np.int64)
    counts[rng.choice(V, N % V, replace=False)] += 1
    return counts


def sample_cooccurrence_counts(
    task: RetrievalTask,
    seq_len: int,
    n_samples: int,
    rng: np.random.Generator,
    label_counts: str = "multinomial",
) -> tuple[np.ndarray, np.ndarray]:
    """Draw (n_y, C) with exactly the law of :func:`cooccurrence_counts` on N sampled sequences,
    in O(V^2) time independent of N [derived].

    Why it is exact: n = (n_y) ~ Multinomial(N, 1/V) (x uniform, pi a bijection). Given n, the
    sequences labelled y hold x = pi^-1(y) once each and (L - 1) n_y i.i.d. uniform noise tokens,
    independent across y, so C[y] = n_y e_{pi^-1(y)} + Multinomial((L - 1) n_y, 1/V).
    ``label_counts="equal"`` replaces the multinomial n by :func:`equal_label_counts` (a balanced
    design; the noise tokens keep their law).
    """
    check_sizes(task.vocab_size, task.d_model, seq_len, n_samples)
    V, L = task.vocab_size, int(seq_len)
    uniform = np.full(V, 1.0 / V)
    if label_counts == "equal":
        label_counts = equal_label_counts(V, int(n_samples), rng)
    elif label_counts == "multinomial":
        label_counts = rng.multinomial(int(n_samples), uniform)
    else:
        raise ValueError(f"label_counts={label_counts!r} must be one of {LABEL_COUNTS}")
    counts = rng.multinomial((L - 1) * label_counts, uniform).astype(np.int64)
    inverse = np.argsort(task.label_perm)  # pi^-1(y)
    counts[np.arange(V), inverse] += label_counts
    return label_counts, counts


def value_memory(
    task: RetrievalTask,
    label_counts: np.ndarray,
    counts: np.ndarray,
    seq_len: int,
    lr_value: float = 1.0,
    centred: bool = False,
) -> np.ndarray:
    """Step 1 of the three-step GD under uniform attention, W_v^(1) = (eta/N) sum_n (e_{y_n} [- 1/V]) o_n^T,
    written through the counts: sum_{n: y_n = y} o_n = (C[y] emb + n_y z_trig)/L [derived].

    With ``centred`` the -1/V term is kept (the gradient step exactly); the one-step memory drops it since it
    shifts every row equally. Attention-only model only (o enters linearly).
    """
    if task.mlp is not None:
        raise ValueError("value_memory through counts needs the attention-only model (phi = identity)")
    N = int(label_counts.sum())
    if orthogonal_rows(task):  # counts @ I_d[:V]: the counts padded with zero columns, same floats
        by_token = np.zeros(task.emb.shape)
        by_token[:, : task.vocab_size] = counts
    else:
        by_token = counts @ task.emb
    sums = (by_token + label_counts[:, None] * task.trigger[None, :]) / seq_len
    w_out = sums * (lr_value / N)
    if centred:
        w_out = w_out - w_out.sum(axis=0, keepdims=True) / task.vocab_size
    return w_out


def oracle_accuracy(task: RetrievalTask, w_out: np.ndarray) -> float:
    """Oracle accuracy of the one-step memory: fraction of tokens x with argmax_y (W_v phi(e_x))_y = pi(x),
    i.e. perfect attention and no trigger. Ties count as errors."""
    V = task.vocab_size
    if task.mlp is None and orthogonal_rows(task):  # I_d[:V] @ w_out.T: a column selection
        logits = np.array(w_out[:, :V].T)
    else:
        logits = task.features(task.emb) @ w_out.T  # (x, y)
    correct = logits[np.arange(V), task.label_perm]  # a copy: the row maxima below exclude it
    logits[np.arange(V), task.label_perm] = -np.inf
    return float(np.mean(correct > logits.max(axis=1)))


def oracle_margin(task: RetrievalTask, w_out: np.ndarray) -> float:
    """The smallest decoding margin of the one-step memory under the oracle of
    :func:`oracle_accuracy`: min over tokens x of (W_v phi(e_x))_pi(x) - max_{y != pi(x)} (W_v phi(e_x))_y,
    divided by the largest |logit| (a scale-free number in [-2, 2]; 0 when every logit is 0).
    It is > 0 exactly when the oracle accuracy is 1 (ties count as errors in both), so a rule
    "margin > 0" decides exact recall, with a spread over draws that the 0/1 reading lacks.

    >>> import numpy as np
    >>> from constructions.seeding import rng_for
    >>> task = make_retrieval_task(8, 8, rng_for(0, "retrieval.early_gd.trained.rng", 8, 8, 4, 0, 0), "orthogonal")
    >>> w = np.eye(8)[np.argsort(task.label_perm)]  # row y = e_{pi^-1(y)}: every token decoded
    >>> oracle_margin(task, w), oracle_accuracy(task, w)
    (1.0, 1.0)
    >>> oracle_margin(task, np.zeros((8, 8))), oracle_accuracy(task, np.zeros((8, 8)))
    (0.0, 0.0)
    """
    V = task.vocab_size
    if task.mlp is None and orthogonal_rows(task):
        logits = np.array(w_out[:, :V].T)
    else:
        logits = task.features(task.emb) @ w_out.T  # (x, y)
    scale = float(np.abs(logits).max())
    correct = logits[np.arange(V), task.label_perm]
    logits[np.arange(V), task.label_perm] = -np.inf
    margin = float(np.min(correct - logits.max(axis=1)))
    if math.isnan(margin):
        raise ValueError("the decoding margin is NaN: the memory's logits hold a NaN")
    return margin / scale if scale > 0 else 0.0


def one_step_oracle_accuracy(
    vocab_size: int,
    d_model: int,
    seq_len: int,
    n_samples: int,
    rng: np.random.Generator,
    embedding: str = "gaussian",
) -> float:
    """Oracle accuracy of the one-step value memory on one fresh draw of task and data."""
    task = make_retrieval_task(vocab_size, d_model, rng, embedding)
    label_counts, counts = sample_cooccurrence_counts(task, seq_len, n_samples, rng)
    return oracle_accuracy(task, value_memory(task, label_counts, counts, seq_len))
