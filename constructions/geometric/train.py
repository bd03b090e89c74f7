"""The trained one-layer model of docs/geometric.md#the-trained-model [derived architecture].

That gradient descent finds the geometric solution (subject embeddings that superpose attribute
vectors, a relation-gated MLP that transfers to new bijections) is the paper's [abstract]. The
architecture below, its initialisation and the optimiser settings are this project's choices
[derived]; the paper's are unknown.

Model: learned tables E_subj (N, d), E_rel (R, d), unembedding U (N, d); with a 2-token input the
attention is a fixed mix, h0 = E_subj[s] + E_rel[r]; MLP h = h0 + W2 ReLU(W1 h0 + b1) with
W1 (m, d), b1 (m,), W2 (d, m); logits z = U h; loss = mean cross-entropy over all N*R facts,
trained full batch with Adam. Init: N(0, 1/fan_in) for every matrix (fan_in = d for the three
tables, W1 and U; m for W2), b1 = 0. Randomness: a torch.Generator for the init, nothing global.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from constructions.adam import adam_update
from constructions.tasks import check_bijections, single_hop_dataset
from theory.validate import require_int

PARAM_NAMES = ("subject", "relation", "unembed", "w1", "b1", "w2")
#: Logit entries one chunk of facts may hold: 2^24, 64 MiB in float32. At quick scale
#: (N*R = 2048 facts, N = 512: 2^20 entries) the whole batch is one chunk, the unchunked path; at
#: N = 10^4, R = 8 the 8*10^8 logits (3.2 GB) become 48 chunks of 1677 facts.
LOGIT_CHUNK_ENTRIES = 1 << 24


def fact_chunk_rows(n_facts: int, n_candidates: int, max_entries: int | None = None) -> int:
    """Facts per chunk so that one chunk's (rows, N) logits hold at most ``max_entries`` entries."""
    max_entries = LOGIT_CHUNK_ENTRIES if max_entries is None else int(max_entries)
    if max_entries < 1:
        raise ValueError(f"max_entries={max_entries} violates the hypothesis max_entries >= 1")
    return max(1, min(int(n_facts), max_entries // max(1, int(n_candidates))))


@dataclass
class TrainedModel:
    """Weights of the trained model (torch tensors, detached) and its training history."""

    perms: np.ndarray
    params: dict
    history: dict = field(default_factory=dict)
    snapshots: list = field(default_factory=list)  # [(step, E_subj ndarray, U ndarray)]

    @property
    def dim(self) -> int:
        return self.params["subject"].shape[1]

    def hidden(self, subj, rel, subject_embeddings=None) -> torch.Tensor:
        """h = h0 + W2 ReLU(W1 h0 + b1), h0 = E_subj[s] + E_rel[r]; optionally with replaced E_subj."""
        p = self.params
        e = (
            p["subject"]
            if subject_embeddings is None
            else torch.as_tensor(subject_embeddings, dtype=p["subject"].dtype, device=p["subject"].device)
        )
        return _hidden(
            e, p, torch.as_tensor(subj, device=e.device).long(), torch.as_tensor(rel, device=e.device).long()
        )

    @torch.no_grad()
    def predict(self, subj, rel, subject_embeddings=None) -> np.ndarray:
        """Argmax over the N attributes, in chunks of facts (never all (F, N) logits at once)."""
        subj, rel = np.asarray(subj), np.asarray(rel)
        unembed = self.params["unembed"]
        rows = fact_chunk_rows(len(subj), unembed.shape[0])
        out = [
            (self.hidden(subj[at : at + rows], rel[at : at + rows], subject_embeddings) @ unembed.T)
            .argmax(1)
            .cpu()
            .numpy()
            for at in range(0, len(subj), rows)
        ]
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)

    @torch.no_grad()
    def preactivations(self, subject_embeddings=None) -> torch.Tensor:
        """W1 (e_s + E_rel[r]) + b1 for every (s, r): shape (R, N, m)."""
        p = self.params
        e = (
            p["subject"]
            if subject_embeddings is None
            else torch.as_tensor(subject_embeddings, dtype=p["subject"].dtype)
        )
        h0 = e[None, :, :] + p["relation"][:, None, :]
        return h0 @ p["w1"].T + p["b1"]

    def numpy(self, name: str) -> np.ndarray:
        return self.params[name].detach().cpu().numpy()


def _hidden(e_subj, p, subj, rel):
    h0 = e_subj[subj] + p["relation"][rel]
    return h0 + torch.relu(h0 @ p["w1"].T + p["b1"]) @ p["w2"].T


def loss_backward(p, subj, rel, target, rows: int) -> torch.Tensor:
    """Mean cross-entropy over all facts and its gradient (accumulated into ``.grad``), ``rows`` facts
    at a time (no step holds the full (N*R) x N logits). With one chunk this is the plain
    ``cross_entropy(logits, target)`` (mean) and its backward; with several, each chunk's summed loss
    divided by the number of facts is backpropagated in turn, so the gradient is the same sum of
    per-fact terms, grouped by chunk (equal up to rounding; tests/geometric/test_train_chunks.py
    compares the two in float64). Returns the detached loss."""
    n = len(target)
    if rows >= n:
        loss = torch.nn.functional.cross_entropy(_hidden(p["subject"], p, subj, rel) @ p["unembed"].T, target)
        loss.backward()
        return loss.detach()
    total = torch.zeros((), dtype=p["unembed"].dtype, device=p["unembed"].device)
    for at in range(0, n, rows):
        sl = slice(at, at + rows)
        logits = _hidden(p["subject"], p, subj[sl], rel[sl]) @ p["unembed"].T
        part = torch.nn.functional.cross_entropy(logits, target[sl], reduction="sum") / n
        part.backward()
        total += part.detach()
    return total


@torch.no_grad()
def _loss_and_accuracy(p, subj, rel, target, rows: int) -> tuple[float, float]:
    """Mean cross-entropy and argmax accuracy over all facts, ``rows`` facts at a time."""
    n = len(target)
    if rows >= n:
        logits = _hidden(p["subject"], p, subj, rel) @ p["unembed"].T
        acc = float((logits.argmax(1) == target).double().mean())
        return float(torch.nn.functional.cross_entropy(logits, target)), acc
    loss, hits = 0.0, 0
    for at in range(0, n, rows):
        sl = slice(at, at + rows)
        logits = _hidden(p["subject"], p, subj[sl], rel[sl]) @ p["unembed"].T
        loss += float(torch.nn.functional.cross_entropy(logits, target[sl], reduction="sum"))
        hits += int((logits.argmax(1) == target[sl]).sum())
    return loss / n, hits / n


def init_params(
    n_subjects, n_relations, dim, mlp_width, generator, dtype=torch.float64, device="cpu"
) -> dict:
    """N(0, 1/fan_in) for every matrix, b1 = 0, drawn from ``generator`` on CPU."""
    n_subjects = require_int("n_subjects", n_subjects, 2)
    n_relations = require_int("n_relations", n_relations, 1)
    dim, mlp_width = require_int("dim", dim, 1), require_int("mlp_width", mlp_width, 1)
    if not isinstance(generator, torch.Generator):
        raise ValueError("generator must be a torch.Generator (no global RNG)")

    def draw(shape, fan_in):
        return (torch.randn(shape, generator=generator, dtype=torch.float64) / fan_in**0.5).to(
            dtype=dtype, device=device
        )

    return {
        "subject": draw((n_subjects, dim), dim),
        "relation": draw((n_relations, dim), dim),
        "unembed": draw((n_subjects, dim), dim),
        "w1": draw((mlp_width, dim), dim),
        "b1": torch.zeros(mlp_width, dtype=dtype, device=device),
        "w2": draw((dim, mlp_width), mlp_width),
    }


def train_model(
    perms,
    dim: int,
    mlp_width: int,
    *,
    steps: int = 1000,
    lr: float = 1e-2,
    betas=(0.9, 0.999),
    generator: torch.Generator,
    freeze_subject: bool = False,
    record_every: int = 0,
    dtype=torch.float64,
    device: str = "cpu",
    stop_at_full_accuracy: bool = False,
    chunk_entries: int | None = None,
    manual_gradient: bool = True,
) -> TrainedModel:
    """Train the model on all N*R facts, full batch, Adam (defaults: lr 1e-2, 1000 steps).

    freeze_subject: keep E_subj at its random init (the frozen-embedding control).
    record_every: every that many steps (and at the end) record loss and train accuracy, and keep
      a copy of E_subj and U (for probe-vs-step curves). stop_at_full_accuracy: stop at the first
      recorded step with accuracy 1 (threshold scans).
    chunk_entries: logit entries per chunk of facts (default LOGIT_CHUNK_ENTRIES); the loss, its
      gradient and the records are computed chunk by chunk (:func:`loss_backward`).
    manual_gradient: when all facts form one chunk, run the step of :class:`_ManualStep`, which
      computes the gradient and the Adam update with the kernels autograd and ``torch.optim.Adam``
      call, on the same operands, so its weights, history and snapshots are bitwise those of the
      autograd step (tests/geometric/test_fast_paths.py); False (or several chunks): autograd.
    """
    perms = check_bijections(perms)
    n_rel, n = perms.shape
    steps, record_every = require_int("steps", steps, 1), require_int("record_every", record_every, 0)
    if not lr > 0:
        raise ValueError(f"lr={lr} violates the hypothesis lr > 0")
    p = init_params(n, n_rel, dim, mlp_width, generator, dtype, device)
    subj, rel, target = (torch.as_tensor(a, device=device) for a in single_hop_dataset(perms))
    rows = fact_chunk_rows(len(target), n, chunk_entries)
    if manual_gradient and rows >= len(target):
        return _train_manual(
            perms,
            p,
            subj,
            rel,
            target,
            int(steps),
            float(lr),
            tuple(betas),
            freeze_subject,
            int(record_every),
            stop_at_full_accuracy,
        )
    trainable = [k for k in PARAM_NAMES if not (freeze_subject and k == "subject")]
    for k in trainable:
        p[k].requires_grad_(True)
    opt = torch.optim.Adam([p[k] for k in trainable], lr=lr, betas=tuple(betas))
    history = {"step": [], "loss": [], "accuracy": []}
    snapshots = []

    @torch.no_grad()
    def record(step):
        loss, acc = _loss_and_accuracy(p, subj, rel, target, rows)
        history["step"].append(step)
        history["loss"].append(loss)
        history["accuracy"].append(acc)
        snapshots.append(
            (step, p["subject"].detach().cpu().numpy().copy(), p["unembed"].detach().cpu().numpy().copy())
        )
        return acc

    if record_every:
        record(0)
    # losses stay on the device and are checked once per record and at the end (no host
    # synchronisation per step); a non-finite loss raises naming its first step
    losses = torch.zeros(int(steps), dtype=dtype, device=device)

    def check_finite(upto):
        _check_finite(losses, upto, lr)

    step = 0
    for step in range(1, int(steps) + 1):
        opt.zero_grad(set_to_none=True)
        losses[step - 1] = loss_backward(p, subj, rel, target, rows)
        opt.step()
        if record_every and (step % record_every == 0 or step == steps):
            check_finite(step)
            if record(step) == 1.0 and stop_at_full_accuracy:
                break
    check_finite(step)
    params = {k: v.detach() for k, v in p.items()}
    return TrainedModel(perms=perms, params=params, history=history, snapshots=snapshots)


def _check_finite(losses: torch.Tensor, upto: int, lr: float) -> None:
    """Raise naming the first step whose loss is not finite among the first ``upto`` steps."""
    bad = ~torch.isfinite(losses[:upto])
    if bool(bad.any()):
        first = int(bad.nonzero()[0, 0])
        raise ValueError(
            f"training diverged at step {first + 1} (loss {losses[first].item()}); lower lr={lr}"
        )


@torch.no_grad()
def train_accuracy(model: TrainedModel, subject_embeddings=None, perms=None) -> float:
    """Argmax accuracy over all N*R facts of ``perms`` (default: the trained ones); ties count as errors."""
    perms = model.perms if perms is None else check_bijections(perms)
    subj, rel, target = single_hop_dataset(perms)
    unembed = model.params["unembed"]
    rows = fact_chunk_rows(len(subj), unembed.shape[0])
    hits = 0
    for at in range(0, len(subj), rows):
        sl = slice(at, at + rows)
        top = torch.topk(model.hidden(subj[sl], rel[sl], subject_embeddings) @ unembed.T, 2, dim=1)
        ok = (top.indices[:, 0].cpu().numpy() == target[sl]) & (
            (top.values[:, 0] - top.values[:, 1]).cpu().numpy() > 0
        )
        hits += int(ok.sum())
    return hits / len(subj)


# ---------------------------------------------------------------------------------------------
# The written-out training step of the trained one-layer model (docs/geometric.md#the-trained-model):
# forward pass, gradient and Adam update on all facts at once, without autograd, the fast path of
# :func:`constructions.geometric.train.train_model` when every fact fits one chunk (a speed-up only:
# tests/geometric/test_fast_paths.py compares it with autograd and torch.optim.Adam).


class _ManualStep:
    """Forward pass, gradient and Adam update of the trained one-layer model (docs/geometric.md) on
    all facts at once, written out.

    Every tensor is computed by the kernel autograd (or ``torch.optim.Adam``) calls on the same
    operands, so the result is bitwise the autograd step's:

    - forward: h0 = E_subj[s] + E_rel[r], a = h0 W1^T + b1, h = h0 + ReLU(a) W2^T, z = h U^T,
      l = log_softmax(z), loss = nll(l) (mean);
    - backward: dl = the constant nll gradient (-1/F at each target), dz = log_softmax backward,
      dh = dz U, dU = dz^T h, dW2 = dh^T ReLU(a), da = threshold backward, db1 = sum_to(da),
      dh0 = dh + da W1, dW1 = da^T h0, dE = zeros.index_put_(s, dh0, accumulate) (likewise E_rel);
      the matrix products are those of mm's backward for a transposed right operand;
    - Adam: lerp, mul/addcmul, sqrt/div/add and addcdiv per parameter (the foreach forms loop
      over the same per-tensor kernels), bias corrections as Python floats.

    What it saves is the graph, the optimiser's Python and the fresh (F, N) tensors of every step
    (the logits, their log-softmax and its gradient are written into buffers kept across steps)."""

    def __init__(self, p: dict, subj, rel, target, trainable: list, betas: tuple, lr: float):
        self.p, self.subj, self.rel, self.target = p, subj, rel, target
        self.trainable = trainable
        self.params = [p[k] for k in trainable]
        self.exp_avg = [torch.zeros_like(q) for q in self.params]
        self.exp_avg_sq = [torch.zeros_like(q) for q in self.params]
        self.beta1, self.beta2 = float(betas[0]), float(betas[1])
        self.lr, self.eps, self.n_updates = float(lr), 1e-8, 0
        U = p["unembed"]
        F, N, dtype, dev = len(target), U.shape[0], U.dtype, U.device
        self.gls = torch.zeros((F, N), dtype=dtype, device=dev)
        total = torch.tensor(float(F), dtype=dtype, device=dev)
        # nll_loss_backward's value: -(grad_output / total_weight), grad_output = 1
        self.gls[torch.arange(F, device=dev), target] = -(torch.ones((), dtype=dtype, device=dev) / total)
        self.z = torch.empty((F, N), dtype=dtype, device=dev)
        self.ls = torch.empty_like(self.z)
        self.gz = torch.empty_like(self.z)
        self.grad_subject = torch.empty_like(p["subject"])
        self.grad_relation = torch.empty_like(p["relation"])

    def forward(self) -> torch.Tensor:
        """Forward pass (the logits stay in ``self.z`` for a record); returns the loss."""
        p = self.p
        self.h0 = p["subject"][self.subj] + p["relation"][self.rel]
        self.act = torch.relu_(torch.mm(self.h0, p["w1"].t()).add_(p["b1"]))
        self.h = self.h0 + torch.mm(self.act, p["w2"].t())
        torch.mm(self.h, p["unembed"].t(), out=self.z)
        torch._log_softmax(self.z, 1, False, out=self.ls)
        return torch.nn.functional.nll_loss(self.ls, self.target)

    def update(self) -> None:
        """Backward pass of the last forward pass, then one Adam step."""
        p, dtype = self.p, self.z.dtype
        torch.ops.aten._log_softmax_backward_data.out(self.gls, self.ls, 1, dtype, out=self.gz)
        gh = torch.mm(self.gz, p["unembed"])
        grads = {"unembed": torch.mm(self.gz.t(), self.h), "w2": torch.mm(gh.t(), self.act)}
        ga = torch.ops.aten.threshold_backward(torch.mm(gh, p["w2"]), self.act, 0)
        grads["b1"] = ga.sum_to_size(p["b1"].shape)
        gh0 = gh + torch.mm(ga, p["w1"])
        grads["w1"] = torch.mm(ga.t(), self.h0)
        if "subject" in self.trainable:
            grads["subject"] = self.grad_subject.zero_().index_put_((self.subj,), gh0, accumulate=True)
        grads["relation"] = self.grad_relation.zero_().index_put_((self.rel,), gh0, accumulate=True)
        g = [grads[k] for k in self.trainable]
        self.n_updates += 1
        adam_update(
            self.params,
            g,
            self.exp_avg,
            self.exp_avg_sq,
            self.n_updates,
            self.lr,
            self.beta1,
            self.beta2,
            self.eps,
        )


@torch.no_grad()
def _train_manual(
    perms: np.ndarray,
    p: dict,
    subj: torch.Tensor,
    rel: torch.Tensor,
    target: torch.Tensor,
    steps: int,
    lr: float,
    betas: tuple,
    freeze_subject: bool,
    record_every: int,
    stop_at_full_accuracy: bool,
) -> TrainedModel:
    """:func:`train_model` with :class:`_ManualStep` (one chunk of facts). The record of step s
    (loss and accuracy after s updates) reads the forward pass of step s + 1, which computes the
    same logits; the last step's record runs one more forward pass."""
    trainable = [k for k in PARAM_NAMES if not (freeze_subject and k == "subject")]
    run = _ManualStep(p, subj, rel, target, trainable, betas, lr)
    history = {"step": [], "loss": [], "accuracy": []}
    snapshots = []

    def record(step, loss) -> float:
        acc = float((run.z.argmax(1) == target).double().mean())
        history["step"].append(step)
        history["loss"].append(float(loss))
        history["accuracy"].append(acc)
        snapshots.append((step, p["subject"].cpu().numpy().copy(), p["unembed"].cpu().numpy().copy()))
        return acc

    losses = torch.zeros(steps, dtype=p["unembed"].dtype, device=p["unembed"].device)
    pending = 0 if record_every else None  # the step whose record waits for the next forward pass
    step = 0
    for step in range(1, steps + 1):
        losses[step - 1] = loss = run.forward()
        if pending is not None:
            _check_finite(losses, pending, lr)
            if record(pending, loss) == 1.0 and stop_at_full_accuracy and pending > 0:
                step = pending  # stopped after this step's update, as the autograd loop does
                break
            pending = None
        run.update()
        if record_every and (step % record_every == 0 or step == steps):
            pending = step
    else:
        if pending is not None:  # the last step's record
            _check_finite(losses, pending, lr)
            record(pending, run.forward())
    _check_finite(losses, step, lr)
    return TrainedModel(perms=perms, params=p, history=history, snapshots=snapshots)
