"""The written-out training step of the trained one-layer model (docs/geometric.md#the-trained-model):
forward pass, gradient and Adam update on all facts at once, without autograd, the fast path of
:func:`constructions.geometric.train.train_model` when every fact fits one chunk (a speed-up only:
tests/geometric/test_fast_paths.py compares it with autograd and torch.optim.Adam).
"""

from __future__ import annotations

import numpy as np
import torch

from constructions.adam import adam_update
from constructions.geometric.train import PARAM_NAMES, TrainedModel, _check_finite


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
