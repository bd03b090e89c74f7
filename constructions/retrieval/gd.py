"""Early-phase gradient descent (docs/retrieval.md#setting) for the attention-only model and
the fixed-random-MLP variant: closed form in numpy (chunked over samples) and autograd in torch.

Model [derived; architecture class from the abstract]: scores s_l = h_l^T W z_EOS,
a = softmax(s), o = sum_l a_l h_l, logits xi = W_v phi(o) (phi = identity, or ReLU(A o)/sqrt(m)
with A fixed), loss = mean cross-entropy at the label. Parameters W (d, d), W_v (V, d or m).

Three-step schedule [derived, in the style of Oymak-Rawat-Soltanolkotabi-Thrampoulidis 2023]:
  step 1  W_v^(1) = -eta   grad_{W_v} L(0, 0)          (uniform attention: a Hebbian sum)
  step 2  W^(1)   = -gamma grad_W   L(W_v^(1), 0)
  step 3  W_v^(2) = W_v^(1) - gamma3 grad_{W_v} L(W_v^(1), W^(1)),  gamma3 = gamma by default
          (our formalisation writes gamma for step 3; the defaults eta = gamma = V make the choice moot).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from constructions.retrieval.task import RetrievalData, RetrievalTask

CHUNK = 4096


def _softmax(x: np.ndarray, axis: int = -1, overwrite: bool = False) -> np.ndarray:
    x = np.subtract(x, x.max(axis=axis, keepdims=True), out=x if overwrite else None)
    np.exp(x, out=x)
    x /= x.sum(axis=axis, keepdims=True)
    return x


def attend(hidden: np.ndarray, w_kq: np.ndarray, eos: np.ndarray):
    """Scores s = h W z_EOS, attention a = softmax(s), attended state o = sum_l a_l h_l."""
    scores = hidden @ (w_kq @ eos)
    attn = _softmax(scores, axis=1)
    return scores, attn, np.einsum("nl,nld->nd", attn, hidden)


def _features_and_pullback(task: RetrievalTask, states: np.ndarray):
    """phi(o) and a function mapping dL/dphi to dL/do (the MLP's Jacobian transpose)."""
    if task.mlp is None:
        return states, (lambda g: g)
    m = task.mlp.shape[0]
    pre = states @ task.mlp.T
    mask = (pre > 0).astype(states.dtype)
    return np.maximum(pre, 0.0) / math.sqrt(m), (lambda g: (g * mask) @ task.mlp / math.sqrt(m))


def loss_and_grads(
    data: RetrievalData, w_out: np.ndarray, w_kq: np.ndarray, want_attn: bool = True, chunk: int = CHUNK
):
    """Closed-form mean cross-entropy and its gradients [derived]:

    grad_{W_v} = (1/N) sum_n (p_n - e_{y_n}) phi(o_n)^T,
    grad_W     = (1/N) sum_n sum_l a_{n,l} [(h_{n,l} - o_n)^T u_n] h_{n,l} z_EOS^T,
    u_n = J_phi(o_n)^T W_v^T (p_n - e_{y_n})  (J_phi = I for the attention-only model).
    Chunked over samples, never holding more than ``chunk`` sequences of hidden states.
    """
    task = data.task
    V, N = task.vocab_size, data.n_samples
    g_out = np.zeros_like(w_out)
    g_vec = np.zeros(task.d_model)
    loss = 0.0
    w_out_is_zero = not np.any(w_out)
    for start in range(0, N, chunk):
        stop = min(start + chunk, N)
        hidden = data.hidden(start, stop)
        _, attn, states = attend(hidden, w_kq, task.eos)
        feats, pullback = _features_and_pullback(task, states)
        if w_out_is_zero:  # uniform softmax output at W_v = 0 (step 1)
            probs = np.full((stop - start, V), 1.0 / V)
        else:
            probs = _softmax(feats @ w_out.T, overwrite=True)
        y = data.labels[start:stop]
        rows = np.arange(stop - start)
        loss += float(-np.log(probs[rows, y]).sum())
        resid = probs
        resid[rows, y] -= 1.0
        g_out += resid.T @ feats
        if want_attn:
            u = pullback(resid @ w_out)  # (n, d)
            coeff = attn * (np.einsum("nld,nd->nl", hidden, u) - np.einsum("nd,nd->n", states, u)[:, None])
            g_vec += np.einsum("nl,nld->d", coeff, hidden)
    g_kq = np.outer(g_vec, task.eos) / N if want_attn else None
    return loss / N, g_out / N, g_kq


@dataclass(frozen=True)
class ThreeSteps:
    """Iterates of the three-step schedule and the step sizes used."""

    w_out_1: np.ndarray
    w_kq_1: np.ndarray
    w_out_2: np.ndarray
    lr_value: float
    lr_attn: float
    lr_value_final: float


def three_steps_closed_form(
    data: RetrievalData, lr_value: float, lr_attn: float, lr_value_final: float | None = None
) -> ThreeSteps:
    """The three steps in closed form (numpy, float64) [derived]."""
    task = data.task
    width = task.d_model if task.mlp is None else task.mlp.shape[0]
    gamma3 = lr_attn if lr_value_final is None else lr_value_final
    w_out_0 = np.zeros((task.vocab_size, width))
    w_kq_0 = np.zeros((task.d_model, task.d_model))
    _, g_out, _ = loss_and_grads(data, w_out_0, w_kq_0, want_attn=False)
    w_out_1 = -lr_value * g_out
    _, _, g_kq = loss_and_grads(data, w_out_1, w_kq_0)
    w_kq_1 = -lr_attn * g_kq
    _, g_out, _ = loss_and_grads(data, w_out_1, w_kq_1, want_attn=False)
    w_out_2 = w_out_1 - gamma3 * g_out
    return ThreeSteps(w_out_1, w_kq_1, w_out_2, float(lr_value), float(lr_attn), float(gamma3))


def hebbian_step_one(data: RetrievalData, lr_value: float) -> np.ndarray:
    """Step 1 at zero initialisation: W_v^(1) = (eta/N) sum_n (e_{y_n} - 1/V) phi(o_n)^T with
    o_n = (1/L) sum_l h_{n,l} (uniform attention, uniform softmax output) [derived]."""
    task = data.task
    feats = task.features(data.hidden().mean(axis=1))
    onehot = np.eye(task.vocab_size)[data.labels] - 1.0 / task.vocab_size
    return lr_value * onehot.T @ feats / data.n_samples


def three_steps_autograd(
    data: RetrievalData,
    lr_value: float,
    lr_attn: float,
    lr_value_final: float | None = None,
    device: str = "cpu",
    dtype=None,
) -> ThreeSteps:
    """The same three steps with torch autograd on the same model, with or without the MLP (full batch)."""
    import torch

    dtype = torch.float64 if dtype is None else dtype
    task = data.task
    gamma3 = lr_attn if lr_value_final is None else lr_value_final

    def t(x):
        return torch.as_tensor(np.ascontiguousarray(x), dtype=dtype, device=device)

    hidden, eos, labels = t(data.hidden()), t(task.eos), torch.as_tensor(data.labels, device=device)
    mlp = None if task.mlp is None else t(task.mlp)
    width = task.d_model if mlp is None else mlp.shape[0]

    def loss_fn(w_out, w_kq):
        attn = torch.softmax(hidden @ (w_kq @ eos), dim=1)
        states = torch.einsum("nl,nld->nd", attn, hidden)
        feats = states if mlp is None else torch.relu(states @ mlp.T) / math.sqrt(mlp.shape[0])
        return torch.nn.functional.cross_entropy(feats @ w_out.T, labels)

    def grads(w_out, w_kq):
        w_out = w_out.detach().requires_grad_(True)
        w_kq = w_kq.detach().requires_grad_(True)
        return torch.autograd.grad(loss_fn(w_out, w_kq), (w_out, w_kq))

    w_out_0 = torch.zeros((task.vocab_size, width), dtype=dtype, device=device)
    w_kq_0 = torch.zeros((task.d_model, task.d_model), dtype=dtype, device=device)
    w_out_1 = -lr_value * grads(w_out_0, w_kq_0)[0]
    w_kq_1 = -lr_attn * grads(w_out_1, w_kq_0)[1]
    w_out_2 = w_out_1 - gamma3 * grads(w_out_1, w_kq_1)[0]
    out = [x.detach().cpu().numpy().astype(np.float64) for x in (w_out_1, w_kq_1, w_out_2)]
    return ThreeSteps(*out, float(lr_value), float(lr_attn), float(gamma3))


@dataclass(frozen=True)
class Evaluation:
    """Test metrics of a model (W_v, W) on fresh sequences."""

    accuracy: float  # full model: argmax W_v phi(o) = y, ties are errors
    mean_attn_info: float  # mean a_ell, the attention mass on the informative token
    score_gap: float  # mean over samples of s_ell - mean of the noise scores

    def as_dict(self) -> dict:
        return {"accuracy": self.accuracy, "mean_attn_info": self.mean_attn_info, "score_gap": self.score_gap}


def evaluate(data: RetrievalData, w_out: np.ndarray, w_kq: np.ndarray, chunk: int = CHUNK) -> Evaluation:
    """Full-model accuracy, attention on the informative token and score gap on ``data``."""
    task, N, L = data.task, data.n_samples, data.seq_len
    correct, attn_sum, gap_sum = 0, 0.0, 0.0
    for start in range(0, N, chunk):
        stop = min(start + chunk, N)
        hidden = data.hidden(start, stop)
        scores, attn, states = attend(hidden, w_kq, task.eos)
        logits = task.features(states) @ w_out.T
        rows = np.arange(stop - start)
        y = data.labels[start:stop]
        right = logits[rows, y]
        logits[rows, y] = -np.inf
        correct += int((right > logits.max(axis=1)).sum())
        pos = data.info_pos[start:stop]
        attn_sum += float(attn[rows, pos].sum())
        s_info = scores[rows, pos]
        noise_mean = (scores.sum(axis=1) - s_info) / max(L - 1, 1)
        gap_sum += float((s_info - noise_mean).sum())
    return Evaluation(correct / N, attn_sum / N, gap_sum / N)


def uniform_attention_accuracy(data: RetrievalData, w_out: np.ndarray) -> float:
    """Full-model accuracy with W = 0 (uniform attention), e.g. for W_v^(1) after step 1."""
    d = data.task.d_model
    return evaluate(data, w_out, np.zeros((d, d))).accuracy
