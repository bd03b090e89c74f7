"""The hand-written epoch of :mod:`constructions.fact_mlp.gd_batch` (the default path): the batched
gated MLP's forward, backward and Adam step written out with the kernels autograd and
``torch.optim.Adam`` call, in the same order, so a draw follows the autograd path's steps
(tests/fact_mlp/test_fast_paths.py compares both), and the cosine learning-rate schedule read from
torch's own scheduler.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from constructions.adam import adam_update
from constructions.fact_mlp.gd_batch import _retire, _stored_rows, _unfinished

if TYPE_CHECKING:
    import torch

_LR_SCHEDULES: dict = {}


def _cosine_lrs(lr: float, epochs: int) -> list[float]:
    """The learning rate of each epoch under ``CosineAnnealingLR(T_max=max(1, epochs),
    eta_min=1e-6)`` stepped once per epoch, read from the scheduler itself (its recursive update
    in float64), once per (lr, epochs) and process."""
    import torch

    key = (float(lr), int(epochs))
    if key not in _LR_SCHEDULES:
        opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=lr)
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(1, epochs), eta_min=1e-6)
        lrs = []
        for _ in range(epochs):
            lrs.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
        _LR_SCHEDULES[key] = lrs
    return _LR_SCHEDULES[key]


class _ManualBatchStep:
    """One epoch of the batched gated MLP, written out with the kernels autograd and Adam call.

    Forward as in the autograd epoch: g = K Wg^T + bg, u = K Wu^T + bu, h = (u * ReLU(g)) * mask,
    y = h Wd^T + bd, z = y V^T (batched products), per-draw loss = mean over facts of
    nll(log_softmax(z)). Backward of the summed losses: the nll gradient is -1/F at each target
    (constant), dz = log_softmax backward, dy = dz V, db_d = sum_to(dy), dWd = (h^T dy)^T made
    contiguous as the gradient accumulator does, dh = dy Wd, dt = dh * mask, du = dt * ReLU(g),
    dg = threshold backward of dt * u, and the same for the two input branches (the products
    are those of bmm's backward for a transposed right operand). Adam: lerp, mul/addcmul,
    sqrt/div/add, addcdiv per parameter, bias corrections as Python floats."""

    def __init__(self, params: list, data: list, lr: float):
        import torch

        self.params = params
        self.data = data
        self.exp_avg = [torch.zeros_like(q) for q in params]
        self.exp_avg_sq = [torch.zeros_like(q) for q in params]
        self.lr, self.beta1, self.beta2, self.eps, self.n_updates = float(lr), 0.9, 0.999, 1e-8, 0
        K, V, fmap, _ = data
        B, F = fmap.shape
        # nll_loss_backward (reduction none) of the mean's gradient 1/F: -(1/F) at each target
        share = torch.ones((B,), dtype=K.dtype, device=K.device).unsqueeze(1).expand(B, F) / F
        self.gls = torch.zeros((B * F, V.shape[1]), dtype=K.dtype, device=K.device)
        self.gls[torch.arange(B * F, device=K.device), fmap.reshape(-1)] = -share.reshape(-1)

    def keep_rows(self, rows) -> None:
        """Drop the stopped draws' rows (weights, Adam state, data, constant loss gradient)."""
        import torch

        rows = torch.as_tensor(rows, dtype=torch.long)
        F = self.data[2].shape[1]
        self.params = [q[rows].clone() for q in self.params]
        self.exp_avg = [q[rows].clone() for q in self.exp_avg]
        self.exp_avg_sq = [q[rows].clone() for q in self.exp_avg_sq]
        self.data = [t[rows] for t in self.data]
        self.gls = self.gls.reshape(-1, F, self.gls.shape[1])[rows].reshape(-1, self.gls.shape[1])

    def logits(self) -> torch.Tensor:
        """z (draws, F, n_V) and the tensors the backward pass reads."""
        import torch

        K, V, _, mask = self.data
        Wg, Wu, Wd, bg, bu, bd = self.params
        g = torch.bmm(K, Wg.transpose(1, 2)) + bg[:, None, :]
        u = torch.bmm(K, Wu.transpose(1, 2)) + bu[:, None, :]
        rg = torch.relu(g)
        h = u * rg * mask[:, None, :]
        y = torch.bmm(h, Wd.transpose(1, 2)) + bd[:, None, :]
        self.saved = (u, rg, h)
        return torch.bmm(y, V.transpose(1, 2))

    def losses(self, z: torch.Tensor) -> torch.Tensor:
        """Per-draw mean cross-entropy; keeps log_softmax(z) for the backward pass."""
        import torch

        fm = self.data[2]
        self.ls = torch.log_softmax(z.reshape(-1, z.shape[-1]), 1)
        ce = torch.nn.functional.nll_loss(self.ls, fm.reshape(-1), reduction="none")
        return ce.reshape(len(fm), fm.shape[1]).mean(dim=1)

    def update(self, lr: float) -> None:
        """Backward pass of the summed losses, then one Adam step at learning rate ``lr``."""
        import torch

        K, V, _, mask = self.data
        Wg, Wu, Wd, bg, bu, bd = self.params
        u, rg, h = self.saved
        B, F = len(K), K.shape[1]
        gz = torch._log_softmax_backward_data(self.gls, self.ls, 1, self.ls.dtype).reshape(B, F, -1)
        gy = gz.bmm(V)
        g_bd = gy.sum_to_size(B, 1, gy.shape[2]).squeeze(1)
        g_Wd = _contiguous(h.transpose(1, 2).bmm(gy).transpose(1, 2))
        gt = gy.bmm(Wd) * mask[:, None, :]
        gu = gt * rg
        gg = torch.ops.aten.threshold_backward(gt * u, rg, 0)
        g_bu = gu.sum_to_size(B, 1, gu.shape[2]).squeeze(1)
        g_Wu = _contiguous(K.transpose(1, 2).bmm(gu).transpose(1, 2))
        g_bg = gg.sum_to_size(B, 1, gg.shape[2]).squeeze(1)
        g_Wg = _contiguous(K.transpose(1, 2).bmm(gg).transpose(1, 2))
        grads = [g_Wg, g_Wu, g_Wd, g_bg, g_bu, g_bd]
        self.n_updates += 1
        adam_update(
            self.params,
            grads,
            self.exp_avg,
            self.exp_avg_sq,
            self.n_updates,
            lr,
            self.beta1,
            self.beta2,
            self.eps,
        )


def _contiguous(t: torch.Tensor) -> torch.Tensor:
    """A gradient copied into the parameter's (contiguous) layout, as the gradient accumulator
    does for a transposed gradient."""
    return t if t.is_contiguous() else t.contiguous()


def _train_batch_manual(facts, hidden, params, data, epochs, lr, loss_stop) -> tuple[list, list, list]:
    """The epoch loop of :func:`constructions.fact_mlp.gd_batch.train_gated_mlp_batch`'s autograd
    path (same stopping rules, same compaction) with :class:`_ManualBatchStep`: each draw's final
    weights (padded), epochs run and last loss."""
    B = len(facts)
    run = _ManualBatchStep([q.clone() for q in params], data, lr)
    lrs = _cosine_lrs(lr, epochs)
    last_loss = run.losses(run.logits()).tolist()  # the loss at initialisation (epochs = 0)
    final = [None] * B
    epochs_run = [0] * B
    alive = list(range(B))
    for epoch in range(epochs):
        z = run.logits()
        per_draw = run.losses(z)
        run.update(lrs[epoch])
        stored = _stored_rows(z, run.data[2]) if epoch % 50 == 49 else None
        keep = _retire(
            epoch, alive, per_draw.tolist(), stored, loss_stop, run.params, final, epochs_run, last_loss
        )
        if not keep:
            break
        if len(keep) < len(alive):
            alive = [alive[r] for r in keep]
            run.keep_rows(keep)
    _unfinished(alive, run.params, final)
    return final, epochs_run, last_loss
