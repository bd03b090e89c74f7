"""A fact-storing MLP inside a one-layer, one-head Transformer (docs/fact_mlp.md).

The synthetic recall task [reference: the Transformer task of HazyResearch/hebbian-mlps]:
a sequence is a junk prefix, one key token, a junk suffix and a query token; the target at the
query position is the key's value. The vocabulary is F keys + 16 junk tokens + 1 query token,
and the value of key i is key token f(i) with f a random permutation (tied keys and values).

The model [reference constraints; the exact parametrisation is ours, derived]:

* tied and frozen embeddings: token t enters as E[t] and the logits are y E^T with the same
  table E (F + 17, d), drawn spherical and never trained;
* one attention head read at the query position: scores s_t = <W_Q x_L, W_K x_t> / sqrt(d),
  a = sum_t softmax(s)_t x_t; value and output projections fixed to the identity, so a lies in
  the span of the sequence's embeddings; no residual connection anywhere;
* a frozen pre-MLP RMSNorm n = g * a / sqrt(mean(a^2) + eps) with gain g = 1/sqrt(d), so a
  unit-norm key passes unchanged (RMSNorm(k) = k up to eps) and the MLP sees the unit sphere it
  was built on;
* the MLP y = M(n), frozen, swappable (:func:`swap_mlp`); logits y E^T.

With these constraints a fact MLP built for the fact set (keys E[:F], values E, map f) recalls
key i exactly when the attention output, after the norm, lies close enough to k_i: the only error
source left is the junk the attention mixes in ("attention noise", :func:`attention_noise`).

Two schedules:
* ``"attention_first"``: attention is trained with the identity in place of the MLP on the copy
  target (the key token itself), then the fact MLP is inserted untouched [derived choice: the
  identity is the MLP every fact MLP composes with, so the attention learns to retrieve the key];
* ``"mlp_first"``: the fact MLP is inserted first, frozen, and the attention is trained on the
  recall target through it (claim fact_mlp.transformer.recall: AdamW on attention only).

Randomness only through explicit numpy / torch Generators; the device is a string from the caller.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from constructions.adam import adam_update
from constructions.fact_mlp.facts import FactMLP, FactSet, decode_numpy, spherical
from constructions.tasks import check_generator
from theory.validate import require_int

N_JUNK = 16
SCHEDULES = ("attention_first", "mlp_first")


@dataclass(frozen=True)
class RecallTask:
    """Embedding table E (F + n_junk + 1, d): rows [0, F) keys, [F, F + n_junk) junk, last the
    query token; ``fact_map`` (F,) gives the value token f(i) in [0, F) of key i."""

    embedding: np.ndarray
    fact_map: np.ndarray
    n_facts: int
    n_junk: int = N_JUNK

    def __post_init__(self):
        E, f = np.asarray(self.embedding), np.asarray(self.fact_map)
        if E.ndim != 2 or E.shape[0] != self.n_facts + self.n_junk + 1:
            raise ValueError(
                f"embedding {E.shape} must have F + n_junk + 1 = {self.n_facts + self.n_junk + 1} rows"
            )
        if f.shape != (self.n_facts,) or f.min() < 0 or f.max() >= self.n_facts:
            raise ValueError(f"fact_map must be (F,) = ({self.n_facts},) with entries in [0, F)")

    @property
    def d_model(self) -> int:
        return self.embedding.shape[1]

    @property
    def vocab_size(self) -> int:
        return self.embedding.shape[0]

    @property
    def query_token(self) -> int:
        return self.vocab_size - 1

    def facts(self, fact_map=None) -> FactSet:
        """The fact set an inserted MLP must store: keys E[:F], values the whole table E (the
        logits range over every token), map f (or an edited ``fact_map``)."""
        f = self.fact_map if fact_map is None else np.asarray(fact_map, dtype=np.int64)
        return FactSet(self.embedding[: self.n_facts], self.embedding, f)


def recall_task(n_facts: int, d_model: int, rng: np.random.Generator, n_junk: int = N_JUNK) -> RecallTask:
    """The Transformer task: E = spherical(F + n_junk + 1, d), f = rng.permutation(F).
    Hypotheses: F >= 2, d >= 2, n_junk >= 1, all integers (4.0 is 4, 2.5 a ValueError).

    >>> import numpy as np
    >>> task = recall_task(5, 8, np.random.default_rng(0), n_junk=3)
    >>> task.embedding.shape, task.n_facts
    ((9, 8), 5)
    """
    check_generator(rng)
    n_facts, d_model = require_int("n_facts", n_facts), require_int("d_model", d_model)
    n_junk = require_int("n_junk", n_junk)
    if n_facts < 2 or d_model < 2 or n_junk < 1:
        raise ValueError(
            f"recall task needs F >= 2, d >= 2, n_junk >= 1; got F={n_facts}, d={d_model}, n_junk={n_junk}"
        )
    E = spherical(n_facts + n_junk + 1, d_model, rng)
    return RecallTask(E, rng.permutation(n_facts).astype(np.int64), n_facts, n_junk)


def recall_sequences(task: RecallTask, key_ids, seq_len: int, rng: np.random.Generator) -> np.ndarray:
    """Token sequences (n, L): junk prefix, key k (position uniform in [0, L-2]), junk suffix,
    query token last. Junk tokens are i.i.d. uniform over the n_junk junk tokens.

    >>> import numpy as np
    >>> task = recall_task(5, 8, np.random.default_rng(0), n_junk=3)
    >>> recall_sequences(task, [0, 4], 6, np.random.default_rng(1)).shape
    (2, 6)
    """
    check_generator(rng)
    key_ids = np.asarray(key_ids, dtype=np.int64)
    seq_len = require_int("seq_len", seq_len)
    if seq_len < 2:
        raise ValueError(f"seq_len={seq_len} violates the hypothesis L >= 2 (key and query)")
    if key_ids.size and (key_ids.min() < 0 or key_ids.max() >= task.n_facts):
        raise ValueError(f"key ids must lie in [0, F={task.n_facts})")
    n = len(key_ids)
    tokens = task.n_facts + rng.integers(0, task.n_junk, (n, seq_len))
    pos = rng.integers(0, seq_len - 1, n)
    tokens[np.arange(n), pos] = key_ids
    tokens[:, -1] = task.query_token
    return tokens


class NumpyMLP(nn.Module):
    """A frozen FactMLP without a gated form, evaluated through its numpy ``forward``. It cannot
    be trained through (no gradient): :func:`train_attention` refuses it."""

    differentiable = False

    def __init__(self, mlp: FactMLP):
        super().__init__()
        self.fact_mlp = mlp

    def forward(self, x):
        out = self.fact_mlp.forward(x.detach().cpu().double().numpy())
        return torch.as_tensor(out, dtype=x.dtype, device=x.device)


class OneLayerRecallTransformer(nn.Module):
    """The constrained one-layer, one-head Transformer of the module docstring."""

    def __init__(
        self,
        task: RecallTask,
        gen: torch.Generator,
        device: str = "cpu",
        dtype=torch.float64,
        init_scale: float = 1.0,
        eps: float = 1e-12,
    ):
        super().__init__()
        d = task.d_model
        self.task = task
        self.register_buffer("embedding", torch.as_tensor(task.embedding, dtype=dtype, device=device))
        self.register_buffer("norm_gain", torch.full((d,), 1.0 / math.sqrt(d), dtype=dtype, device=device))
        self.eps = float(eps)
        self.query = nn.Linear(d, d, bias=False).to(device=device, dtype=dtype)
        self.key = nn.Linear(d, d, bias=False).to(device=device, dtype=dtype)
        with torch.no_grad():
            for lin in (self.query, self.key):
                w = torch.randn(d, d, generator=gen, dtype=dtype) * (init_scale / math.sqrt(d))
                lin.weight.copy_(w.to(device))
        self.mlp: nn.Module = nn.Identity()
        self.mlp_facts: FactSet | None = None

    def attention_parameters(self) -> dict[str, torch.Tensor]:
        return {"query.weight": self.query.weight, "key.weight": self.key.weight}

    def attend(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(a, alpha): attention output at the query position (identity value/output) and the
        attention weights over the L positions."""
        x = self.embedding[tokens]  # (n, L, d)
        q = self.query(x[:, -1])  # (n, d)
        k = self.key(x)  # (n, L, d)
        alpha = torch.softmax(torch.einsum("nld,nd->nl", k, q) / math.sqrt(x.shape[-1]), dim=-1)
        return torch.einsum("nl,nld->nd", alpha, x), alpha

    def normed(self, tokens: torch.Tensor) -> torch.Tensor:
        """Frozen RMSNorm of the attention output (the MLP's input)."""
        a, _ = self.attend(tokens)
        return self.norm_gain * a / torch.sqrt(a.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.mlp(self.normed(tokens)) @ self.embedding.T


def swap_mlp(model: OneLayerRecallTransformer, mlp: FactMLP, atol: float | None = None) -> FactMLP:
    """Insert (or swap in) a fact MLP, leaving attention, norm and embeddings untouched.

    The MLP must have been built for this model's embedding table: its keys must be E[:F] and its
    values the whole table E, equal to ``atol`` (default: exact in float64, 1e-6 when the model
    holds its table in float32 on a GPU); otherwise ValueError. Gated MLPs enter as a frozen torch
    module, the others through :class:`NumpyMLP`.
    """
    if atol is None:
        atol = 0.0 if model.embedding.dtype == torch.float64 else 1e-6
    E = model.embedding.detach().cpu().double().numpy()
    F = model.task.n_facts
    K, V = mlp.facts.keys, mlp.facts.values
    if V.shape != E.shape or K.shape != (F, E.shape[1]):
        raise ValueError(
            f"MLP {mlp.name!r} was built for keys {K.shape} and values {V.shape}, but "
            f"the model's embedding table is {E.shape} with F={F} keys"
        )
    dev = max(float(np.max(np.abs(V - E))), float(np.max(np.abs(K - E[:F]))))
    if dev > atol:
        raise ValueError(
            f"MLP {mlp.name!r} was built for a different embedding table (max |dE| = "
            f"{dev:.3g} > atol {atol}); build it for the model's table (task.facts())"
        )
    ref = model.embedding
    if mlp.gated is not None:
        module = mlp.torch_module(device=str(ref.device), dtype=ref.dtype)
        module.differentiable = True
    else:
        module = NumpyMLP(mlp)
    for p in module.parameters():
        p.requires_grad_(False)
    model.mlp = module
    model.mlp_facts = mlp.facts
    return mlp


def remove_mlp(model: OneLayerRecallTransformer) -> None:
    """Back to the identity in the MLP slot (used by the attention-first schedule)."""
    model.mlp = nn.Identity()
    model.mlp_facts = None


def train_attention(
    model: OneLayerRecallTransformer,
    target: str,
    rng: np.random.Generator,
    steps: int = 2000,
    lr: float = 3e-3,
    batch: int = 128,
    seq_len: int = 8,
    weight_decay: float = 0.0,
    eval_every: int = 50,
    patience: int = 2,
    stop_acc: float = 0.99,
    manual_gradient: bool = True,
) -> dict:
    """AdamW on the attention parameters only (claim fact_mlp.transformer.recall), cross-entropy at the
    query position; ``target`` is ``"value"`` (the recall target f(key)) or ``"key"`` (the copy
    target of the attention-first schedule, with the identity MLP). Every ``eval_every`` steps the
    batch accuracy is checked; training stops after ``patience`` checks in a row at accuracy
    >= ``stop_acc``. Returns {"steps", "loss", "batch_acc"} (histories at the checks).

    Runs on one torch thread (restored afterwards): these are tiny sequential steps, and intra-op
    threads only add contention on a loaded 2-core machine (4x slower measured).

    manual_gradient: with the identity or a gated MLP inserted, run
    :func:`_train_manual` (the
    same steps without the autograd graph and the optimiser's Python, bitwise equal); False, or
    another module: autograd and ``torch.optim.AdamW``."""
    check_generator(rng)
    if target not in ("value", "key"):
        raise ValueError(f"target must be 'value' or 'key', got {target!r}")
    if target == "value" and model.mlp_facts is None:
        raise ValueError("training on the value target needs an inserted fact MLP (swap_mlp)")
    if not getattr(model.mlp, "differentiable", isinstance(model.mlp, nn.Identity)):
        raise ValueError("the inserted MLP has no differentiable form; use the attention-first schedule")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        if manual_gradient and _manual_mlp(model.mlp) is not None:
            with torch.no_grad():
                return _train_manual(
                    model,
                    target,
                    rng,
                    steps,
                    lr,
                    batch,
                    seq_len,
                    weight_decay,
                    eval_every,
                    patience,
                    stop_acc,
                )
        return _train(
            model, target, rng, steps, lr, batch, seq_len, weight_decay, eval_every, patience, stop_acc
        )
    finally:
        torch.set_num_threads(threads)


def _check(hist: dict, step: int, logits, tgt, loss, streak: int, stop_acc: float) -> int:
    """Record a check of the batch accuracy at ``step`` in ``hist``; returns the new streak of
    checks at accuracy >= ``stop_acc`` (training stops once it reaches the patience)."""
    acc = float((logits.argmax(-1) == tgt).double().mean())
    hist["steps"].append(step)
    hist["loss"].append(loss.item())
    hist["batch_acc"].append(acc)
    return streak + 1 if acc >= stop_acc else 0


def _train(model, target, rng, steps, lr, batch, seq_len, weight_decay, eval_every, patience, stop_acc):
    fmap = model.mlp_facts.fact_map if target == "value" else np.arange(model.task.n_facts)
    params = list(model.attention_parameters().values())
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    dev = model.embedding.device
    hist = {"steps": [], "loss": [], "batch_acc": []}
    streak = 0
    for step in range(1, steps + 1):
        keys = rng.integers(0, model.task.n_facts, batch)
        tok = torch.as_tensor(recall_sequences(model.task, keys, seq_len, rng), device=dev)
        tgt = torch.as_tensor(fmap[keys], device=dev)
        logits = model(tok)
        loss = torch.nn.functional.cross_entropy(logits, tgt)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % eval_every == 0 or step == steps:
            streak = _check(hist, step, logits, tgt, loss, streak, stop_acc)
            if streak >= patience:
                break
    return hist


def evaluation_contexts(
    task: RecallTask, n_contexts: int, seq_len: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Every key in ``n_contexts`` fresh junk contexts: (tokens (F n_contexts, L), key ids)."""
    keys = np.tile(np.arange(task.n_facts), n_contexts)
    return recall_sequences(task, keys, seq_len, rng), keys


def mlp_inputs(model: OneLayerRecallTransformer, tokens) -> np.ndarray:
    """The MLP's inputs (normed attention outputs) as a float64 numpy array."""
    with torch.no_grad():
        n = model.normed(torch.as_tensor(tokens, device=model.embedding.device))
    return n.cpu().double().numpy()


def recall(model: OneLayerRecallTransformer, tokens, key_ids, fact_map=None) -> tuple[float, float]:
    """(recall accuracy, min margin) at the query position, argmax over the whole vocabulary, ties
    counted as errors; targets f(key) with the model's inserted map (or ``fact_map``)."""
    f = model.mlp_facts.fact_map if fact_map is None else np.asarray(fact_map)
    with torch.no_grad():
        tok = torch.as_tensor(tokens, device=model.embedding.device)
        out = model.mlp(model.normed(tok)).cpu().double().numpy()
    return decode_numpy(out, model.embedding.cpu().double().numpy(), f[np.asarray(key_ids)])


def attention_noise(model: OneLayerRecallTransformer, tokens, key_ids) -> np.ndarray:
    """||RMSNorm(a) - k||_2 per sequence: how far the attention moves the MLP's input off its key."""
    keys = model.task.embedding[np.asarray(key_ids)]
    return np.linalg.norm(mlp_inputs(model, tokens) - keys, axis=1)


def clone_model(model: OneLayerRecallTransformer) -> OneLayerRecallTransformer:
    """A deep copy (attention, norm, embeddings and the inserted MLP)."""
    return copy.deepcopy(model)


# ---------------------------------------------------------------------------------------------
# The written-out training step of the recall Transformer's attention
# (:func:`constructions.fact_mlp.transformer.train_attention`, docs/fact_mlp.md): each step's gradient
# and AdamW update without the autograd graph, bitwise equal to the autograd path, for the identity
# or a gated MLP inserted (a speed-up only; tests/fact_mlp/test_fast_paths.py compares the two).


def _manual_mlp(mlp: nn.Module) -> str | tuple | None:
    """The inserted module as ``"identity"`` or ``(gate, up, down)`` linear layers (the gated
    module of :meth:`FactMLP.torch_module`), or None when :func:`_train_manual` does not know it."""
    if isinstance(mlp, nn.Identity):
        return "identity"
    parts = tuple(getattr(mlp, name, None) for name in ("gate", "up", "down"))
    if type(mlp).__name__ == "_Gated" and all(isinstance(q, nn.Linear) for q in parts):
        return parts
    return None


def _train_manual(
    model, target, rng, steps, lr, batch, seq_len, weight_decay, eval_every, patience, stop_acc
) -> dict:
    """:func:`_train` with each step's gradient and AdamW update written out (no graph), with the
    kernels autograd and ``torch.optim.AdamW`` call on the same operands, so the attention weights
    and the history are bitwise those of :func:`_train` (tests/fact_mlp/test_fast_paths.py):

    - cross-entropy: the nll gradient is -1/batch at each target, then the log_softmax backward;
      logits y E^T: dy = dz E; gated MLP (frozen): dt = dy W_down, du = dt * ReLU(g),
      dg = threshold backward of dt * u, dn = du W_up + dg W_gate (identity: dn = dy);
    - norm n = (gain * a) / r, r = sqrt(mean(a^2) + eps): d(gain a) = dn / r,
      dr = sum_to(-dn * ((gain a / r) / r)), da = d(gain a) * gain + (dr / (2 r)).expand / d * (2 a^1);
    - the two einsums as the batched products they run, with the same views and permutations of
      the gradient (their backward), softmax backward between them, the 1/sqrt(d) scale;
    - dW_K = dk^T x, dW_Q = dq^T x_query (mm's backward for a transposed right operand);
    - AdamW: decoupled decay, lerp, mul/addcmul, sqrt/div/add, addcdiv per weight."""
    mlp = _manual_mlp(model.mlp)
    fmap = model.mlp_facts.fact_map if target == "value" else np.arange(model.task.n_facts)
    params = [model.query.weight, model.key.weight]
    exp_avg = [torch.zeros_like(q) for q in params]
    exp_avg_sq = [torch.zeros_like(q) for q in params]
    E, gain, eps = model.embedding, model.norm_gain, model.eps
    dev, dtype = E.device, E.dtype
    d = E.shape[1]
    scale = math.sqrt(d)
    hist = {"steps": [], "loss": [], "batch_acc": []}
    streak = 0
    gls = None
    for step in range(1, steps + 1):
        keys = rng.integers(0, model.task.n_facts, batch)
        tok = torch.as_tensor(recall_sequences(model.task, keys, seq_len, rng), device=dev)
        tgt = torch.as_tensor(fmap[keys], device=dev)
        # forward, as OneLayerRecallTransformer.forward computes it
        x = E[tok]
        xq = x[:, -1]
        q = torch.nn.functional.linear(xq, params[0])
        k = torch.nn.functional.linear(x, params[1])
        alpha = torch.softmax(torch.einsum("nld,nd->nl", k, q) / scale, dim=-1)
        a = torch.einsum("nl,nld->nd", alpha, x)
        num = gain * a
        r = torch.sqrt(a.pow(2).mean(-1, keepdim=True) + eps)
        n = num / r
        if mlp == "identity":
            y = n
        else:
            up, rg = mlp[1](n), torch.relu(mlp[0](n))
            t = up * rg
            y = mlp[2](t)
        logits = y @ E.T
        ls = torch.log_softmax(logits, 1)
        loss = torch.nn.functional.nll_loss(ls, tgt)
        # backward
        B, L = tok.shape
        if gls is None or gls.shape[0] != B:
            gls = torch.zeros_like(ls)
            share = -(
                torch.ones((), dtype=dtype, device=dev) / torch.tensor(float(B), dtype=dtype, device=dev)
            )
        else:
            gls.zero_()
        gls[torch.arange(B, device=dev), tgt] = share
        gy = torch._log_softmax_backward_data(gls, ls, 1, dtype).mm(E)
        if mlp == "identity":
            gn = gy
        else:
            gt = gy.mm(mlp[2].weight)
            gg = torch.ops.aten.threshold_backward(gt * up, rg, 0)
            gn = (gt * rg).mm(mlp[1].weight) + gg.mm(mlp[0].weight)
        g_num = gn / r
        g_r = (-gn * ((num / r) / r)).sum_to_size(r.shape)
        g_mean = (g_r / (2 * r)).expand(a.shape) / d
        ga = g_num * gain + g_mean * (2.0 * a.pow(1.0))
        g3 = ga.reshape(B, d, 1).permute(0, 2, 1).reshape(B, 1, d).bmm(x.transpose(1, 2))
        g_alpha = g3.reshape(B, L, 1).permute(0, 2, 1).permute(0, 2, 1).squeeze(2)
        gs = torch._softmax_backward_data(g_alpha, alpha, -1, dtype) / scale
        gs3 = gs.reshape(B, L, 1).permute(0, 1, 2).reshape(B, L, 1)
        q3 = q.unsqueeze(2)
        gk = gs3.bmm(q3.transpose(1, 2)).reshape(B, L, d).permute(0, 1, 2).permute(0, 1, 2).reshape(B * L, d)
        gq = k.transpose(1, 2).bmm(gs3).reshape(B, d, 1).permute(0, 2, 1).permute(0, 2, 1).squeeze(2)
        grads = [gq.t().mm(xq), gk.t().mm(x.reshape(B * L, d))]
        # AdamW step (torch.optim.AdamW's single-tensor path, foreach forms)
        if weight_decay != 0:
            torch._foreach_mul_(params, 1 - lr * weight_decay)
        adam_update(params, grads, exp_avg, exp_avg_sq, step, lr)
        if step % eval_every == 0 or step == steps:
            streak = _check(hist, step, logits, tgt, loss, streak, stop_acc)
            if streak >= patience:
                break
    return hist
