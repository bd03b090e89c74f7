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
        from constructions.geometric.train_manual import _train_manual  # it builds on this module

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
