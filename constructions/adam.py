"""The Adam update written out on lists of tensors (torch's ``_foreach`` kernels), for the trainers
that compute their gradients by hand (a speed-up only: each trainer's fast-path test compares its
steps with autograd and ``torch.optim.Adam``/``AdamW``, bit for bit), and the cosine learning-rate
schedule those trainers step once per epoch, read from torch's own scheduler."""

from __future__ import annotations

import torch


@torch.no_grad()
def adam_update(
    params: list[torch.Tensor],
    grads: list[torch.Tensor],
    exp_avg: list[torch.Tensor],
    exp_avg_sq: list[torch.Tensor],
    step: int,
    lr: float,
    beta1: float = 0.9,
    beta2: float = 0.999,
    eps: float = 1e-8,
) -> None:
    """One Adam step (update number ``step`` >= 1) on ``params`` in place, with its moments.

    >>> p, g = [torch.zeros(2)], [torch.tensor([1.0, -1.0])]
    >>> m, v = [torch.zeros(2)], [torch.zeros(2)]
    >>> adam_update(p, g, m, v, step=1, lr=0.1)
    >>> [round(x, 6) for x in p[0].tolist()]
    [-0.1, 0.1]
    """
    step = float(step)
    bias1, bias2 = 1 - beta1**step, 1 - beta2**step
    torch._foreach_lerp_(exp_avg, grads, 1 - beta1)
    torch._foreach_mul_(exp_avg_sq, beta2)
    torch._foreach_addcmul_(exp_avg_sq, grads, grads, value=1 - beta2)
    denom = torch._foreach_sqrt(exp_avg_sq)
    torch._foreach_div_(denom, bias2**0.5)
    torch._foreach_add_(denom, eps)
    torch._foreach_addcdiv_(params, exp_avg, denom, value=-(lr / bias1))


_LR_SCHEDULES: dict = {}


def cosine_lrs(lr: float, epochs: int) -> list[float]:
    """The learning rate of each epoch under ``CosineAnnealingLR(T_max=max(1, epochs),
    eta_min=1e-6)`` stepped once per epoch, read from the scheduler itself (its recursive update
    in float64), once per (lr, epochs) and process.

    >>> lrs = cosine_lrs(0.1, 4)
    >>> len(lrs), lrs[0], lrs[-1] < lrs[0]
    (4, 0.1, True)
    """
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
