"""The one-layer attention model of IC-recall in torch (docs/icrecall.md#the-fine-tuned-model); its
pretraining and fine-tuning are in :mod:`constructions.icrecall.train`.

[derived] formalisation: scores s_j = x_T^T W_KQ x_j over the T = 2n + 1 positions (the query
attends to itself), alpha = softmax(s), z = x_T + omega sum_j alpha_j x_j, logits
gamma u_a^T F(z) over all R D answers, cross-entropy on a*(s_q, r); F is frozen.

Parametrisations of W_KQ:
- ``"full"`` (P-full, the model class the paper analyses): W_KQ in R^{d x d}, init 4 I, trained;
  with ``slots=True`` every token carries its slot embedding p_SUBJ / p_ANS / p_QUERY.
- ``"struct"`` (P-struct): s_j = beta <x_T, x_j> + b_{slot(j)}, four trainable numbers,
  init (4, 0, 0, 0).
omega is fixed (2 / rho by default) or, with ``train_omega``, log omega is trained.

Randomness only through explicit torch / numpy Generators; the device is a string from the caller.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from constructions.icrecall.patterns import token_embeddings
from constructions.icrecall.world import Prompts, TripletMLP, World
from theory.validate import require_int

PARAMETRISATIONS = ("full", "struct")


class TripletMemory:
    """The constructed triplet MLP in torch, frozen (docs/icrecall.md#setting) [derived].

    logits(z) = gamma U F(z) = gamma c(z) G with c_a(z) = sum_{f: a*(f) = a} ReLU(<e_s, z> +
    <e_r, z> - theta) and G = U U^T: the same function as the explicit m-neuron MLP, in
    O((S + R) d + S R + V^2) per input (the pre-activation factorises because w_f = e_s + e_r).
    """

    def __init__(self, mlp: TripletMLP, logit_scale: float, device="cpu", dtype=torch.float64):
        w = mlp.world
        kw = dict(device=device, dtype=dtype)
        self.subj = torch.as_tensor(w.subj, **kw)
        self.rel = torch.as_tensor(w.rel, **kw)
        self.theta = float(mlp.theta)
        self.index = torch.as_tensor(w.answer.reshape(-1), device=device)
        self.n_ans = w.n_ans
        unemb = torch.as_tensor(w.unemb, **kw)
        self.gram = logit_scale * unemb @ unemb.T

    def logits(self, z: torch.Tensor) -> torch.Tensor:
        h = torch.relu((z @ self.subj.T)[:, :, None] + (z @ self.rel.T)[:, None, :] - self.theta)
        h = h.reshape(z.shape[0], -1)
        c = torch.zeros(z.shape[0], self.n_ans, dtype=z.dtype, device=z.device)
        c = c.index_add(1, self.index, h)
        return c @ self.gram


class TrainedMemory(torch.nn.Module):
    """A ReLU MLP F(z) = W2 ReLU(W1 z + b1) with logits gamma u_a^T F(z) [derived]."""

    def __init__(
        self,
        world: World,
        width: int,
        logit_scale: float,
        gen: torch.Generator,
        device="cpu",
        dtype=torch.float64,
    ):
        super().__init__()
        width = require_int("width", width, 1)
        d = world.dim
        kw = dict(dtype=dtype)
        self.W1 = torch.nn.Parameter((torch.randn(width, d, generator=gen, **kw) / math.sqrt(d)).to(device))
        self.b1 = torch.nn.Parameter(torch.zeros(width, dtype=dtype, device=device))
        self.W2 = torch.nn.Parameter(
            (torch.randn(d, width, generator=gen, **kw) / math.sqrt(width)).to(device)
        )
        self.register_buffer("unemb", torch.as_tensor(world.unemb, dtype=dtype, device=device))
        self.logit_scale = float(logit_scale)

    def logits(self, z: torch.Tensor) -> torch.Tensor:
        f = torch.relu(z @ self.W1.T + self.b1) @ self.W2.T
        return self.logit_scale * f @ self.unemb.T


def strict_accuracy(logits: torch.Tensor, target: torch.Tensor) -> float:
    """Fraction of rows whose target logit strictly beats every other (ties are errors)."""
    if torch.isnan(logits).any():
        raise ValueError("NaN in the logits")
    correct = logits.gather(1, target[:, None]).squeeze(1)
    others = logits.scatter(1, target[:, None], float("-inf")).amax(dim=1)
    return float((correct > others).double().mean())


class ICAttention(torch.nn.Module):
    """One-layer attention over the prompt with a frozen memory (docs/icrecall.md#the-fine-tuned-model)
    [derived]."""

    def __init__(
        self,
        world: World,
        memory,
        param: str = "full",
        slots: bool = True,
        omega: float | None = None,
        train_omega: bool = False,
        kq_init: float = 4.0,
        slot_values: bool = True,
        device="cpu",
        dtype=torch.float64,
    ):
        super().__init__()
        if param not in PARAMETRISATIONS:
            raise ValueError(f"param={param!r} must be one of {PARAMETRISATIONS}")
        if omega is None:
            if world.rho <= 0:
                raise ValueError("omega = 2/rho needs rho > 0; pass omega explicitly")
            omega = 2.0 / world.rho
        if omega <= 0:
            raise ValueError(f"omega={omega} violates the hypothesis omega > 0")
        self.world, self.memory, self.param = world, memory, param
        self.slots = bool(slots) and param == "full"
        self.slot_values = bool(slot_values)
        self.register_buffer("slot_emb", torch.as_tensor(world.slot, dtype=dtype, device=device))
        self.device, self.dtype = device, dtype
        kw = dict(dtype=dtype, device=device)
        if param == "full":
            self.W_KQ = torch.nn.Parameter(kq_init * torch.eye(world.dim, **kw))
        else:
            self.beta = torch.nn.Parameter(torch.tensor(kq_init, **kw))
            self.bias = torch.nn.Parameter(torch.zeros(3, **kw))
        log_omega = torch.tensor(math.log(omega), **kw)
        if train_omega:
            self.log_omega = torch.nn.Parameter(log_omega)
        else:
            self.register_buffer("log_omega", log_omega)

    @property
    def omega(self) -> float:
        return float(self.log_omega.detach().exp())

    def embed(self, prompts: Prompts) -> torch.Tensor:
        X = token_embeddings(self.world, prompts, slots=self.slots)
        return torch.as_tensor(X, dtype=self.dtype, device=self.device)

    def values(self, X: torch.Tensor) -> torch.Tensor:
        """The rows fed to the memory: X, or X without its slot embeddings (``slot_values=False``)."""
        return X if self.slot_values or not self.slots else X - self._slot_rows(X.shape[1])

    def embed_prompts(self, prompts: Prompts, chunk: int = 2048) -> EmbeddedPrompts:
        """``prompts`` with X and V of every ``chunk`` sequences computed once (see
        :class:`EmbeddedPrompts`): the same tensors :meth:`embed` and :meth:`values` give."""
        chunks = []
        for start in range(0, len(prompts), chunk):
            sl = slice(start, start + chunk)
            part = Prompts(*(getattr(prompts, f)[sl] for f in Prompts.__dataclass_fields__))
            X = self.embed(part)
            chunks.append((X, self.values(X), torch.as_tensor(part.target, device=X.device)))
        return EmbeddedPrompts(prompts, self.embedding_key(), chunk, tuple(chunks))

    def embedding_key(self) -> tuple:
        """What the embedded inputs depend on besides the world and the prompts."""
        return (self.slots, self.slot_values, self.dtype, str(self.device))

    def _slot_rows(self, T: int) -> torch.Tensor:
        """(T, d): the slot embedding of each position."""
        slot = torch.zeros(T, dtype=torch.long, device=self.slot_emb.device)
        slot[1:-1:2] = 1
        slot[-1] = 2
        return self.slot_emb[slot]

    def attention(self, X: torch.Tensor) -> torch.Tensor:
        xq = X[:, -1]
        if self.param == "full":
            scores = torch.einsum("kd,ktd->kt", xq @ self.W_KQ, X)
        else:
            T = X.shape[1]
            slot = torch.zeros(T, dtype=torch.long, device=X.device)
            slot[1:-1:2] = 1
            slot[-1] = 2
            scores = self.beta * torch.einsum("kd,ktd->kt", xq, X) + self.bias[slot]
        return torch.softmax(scores, dim=1)

    def forward(self, X: torch.Tensor, V: torch.Tensor | None = None):
        """(logits, attention) of the prompts X (K, T, d); ``V`` = :meth:`values` of X when the
        caller holds it already (fixed inputs: training set, test set), else computed here."""
        alpha = self.attention(X)
        V = self.values(X) if V is None else V
        z = V[:, -1] + self.log_omega.exp() * torch.einsum("kt,ktd->kd", alpha, V)
        return self.memory.logits(z), alpha


@dataclass(frozen=True)
class EmbeddedPrompts:
    """Prompts with their model inputs computed once: per chunk of ``chunk`` sequences the token
    embeddings X, the values V (:meth:`ICAttention.values`) and the targets as a tensor.

    Evaluating a model on the same prompts many times (init, every checkpoint, the end, and every
    run that shares the world and the test set) then embeds them once; ``key`` is the model's
    :meth:`ICAttention.embedding_key` they were built for, checked by :func:`evaluate`.
    """

    prompts: Prompts
    key: tuple
    chunk: int
    chunks: tuple

    def __len__(self) -> int:
        return len(self.prompts)
