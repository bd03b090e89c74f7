"""Adam(W) and gradient-norm clipping over parameters that live in one flat buffer per group: the
same numbers as ``torch.optim.AdamW`` / ``torch.optim.Adam`` and ``torch.nn.utils.clip_grad_norm_``
on the CPU, in a handful of operations per step instead of about ten per parameter.

Used by the training loops of :mod:`constructions.chapters.train` and the chapters atlas (small
models with many small parameters: the iso-FLOP dense toy has 191, and its optimiser step cost
about as much as a fifth of its forward and backward).

Why the numbers are the same. Each parameter (and its gradient) becomes a view of a slice of its
group's flat buffer, each slice starting on a 64-byte boundary like a separately allocated tensor;
the model computes with the views exactly as with its own tensors. Torch's per-parameter Adam
applies, per element and with the same Python-float scalars, ``mul_`` (decoupled decay), ``lerp_``,
``mul_`` + ``addcmul_``, ``sqrt``, ``div``, ``add_`` (eps) and ``addcdiv_``; element-wise kernels
give every element the same result whatever tensor it sits in (checked for these kernels, vector
body and scalar tail alike, in tests/chapters/test_fast_paths.py), so applying them once to the
flat buffer gives the same parameters. Gradients accumulate into the zeroed views (0 + g = g; a
gradient of -0.0 is stored as +0.0, which no later operation can tell apart: Adam's moments and the
update are the same for either). Clipping keeps torch's total norm (per-parameter norms in the
model's parameter order, then the norm of those) and multiplies the flat gradients by the same
clamped factor.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

#: slice alignment in elements of the buffer's dtype: 64 bytes, the CPU allocator's alignment
_ALIGN_BYTES = 64


class FlatAdam:
    """Adam (``weight_decay=0``) or AdamW (decoupled ``weight_decay``) over flat parameter groups.

    ``groups``: dicts with ``"params"`` (a list of leaf tensors of one dtype and device) and
    ``"lr"``; every key is kept and the dicts themselves are ``param_groups``, so a loop that sets
    ``group["lr"]`` each step schedules the rate as with a torch optimiser. Construction moves each
    parameter's data into its group's buffer (the values are unchanged) and gives it a zeroed
    gradient view there; :meth:`zero_grad` zeroes the buffers. Every parameter must be reached by
    every backward (true of the loops that use it): torch skips a parameter that got no gradient,
    this steps it with a zero one. A parameter whose ``.grad`` was replaced or set to None is an
    error."""

    def __init__(
        self,
        groups: list[dict],
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ):
        self.betas, self.eps, self.weight_decay = (
            (float(betas[0]), float(betas[1])),
            float(eps),
            float(weight_decay),
        )
        self.param_groups = [g for g in groups if g["params"]]
        self._flat: list[dict] = []
        for group in self.param_groups:
            params = list(group["params"])
            first = params[0]
            if any(p.dtype != first.dtype or p.device != first.device for p in params):
                raise ValueError("a flat group needs parameters of one dtype and device")
            align = max(1, _ALIGN_BYTES // first.element_size())
            offsets, total = [], 0
            for p in params:
                offsets.append(total)
                total += -(-p.numel() // align) * align
            data = torch.zeros(total, dtype=first.dtype, device=first.device)
            grad = torch.zeros_like(data)
            views = []
            with torch.no_grad():
                for p, start in zip(params, offsets):
                    data[start : start + p.numel()].copy_(p.detach().reshape(-1))
                    p.data = data[start : start + p.numel()].view_as(p)
                    p.grad = grad[start : start + p.numel()].view_as(p)
                    views.append(p.grad)
            self._flat.append(
                {
                    "params": params,
                    "grads": views,
                    "data": data,
                    "grad": grad,
                    "exp_avg": torch.zeros_like(data),
                    "exp_avg_sq": torch.zeros_like(data),
                    "step": 0,
                }
            )

    def zero_grad(self) -> None:
        """Zero every gradient buffer (the views stay the parameters' ``.grad``)."""
        for flat in self._flat:
            flat["grad"].zero_()

    def _check_grads(self, flat: dict) -> None:
        if any(p.grad is not g for p, g in zip(flat["params"], flat["grads"])):
            raise RuntimeError(
                "a parameter's .grad is no longer its view of the flat buffer (set to None or "
                "replaced): FlatAdam needs every parameter to accumulate into its view"
            )

    @torch.no_grad()
    def step(self) -> None:
        """One Adam(W) step on every group: the operations, scalars and order of torch's
        single-tensor implementation (``capturable=False``, no amsgrad, not maximising)."""
        beta1, beta2 = self.betas
        for group, flat in zip(self.param_groups, self._flat):
            self._check_grads(flat)
            lr = group["lr"]
            flat["step"] += 1
            step = float(flat["step"])
            param, grad, exp_avg, exp_avg_sq = flat["data"], flat["grad"], flat["exp_avg"], flat["exp_avg_sq"]
            if self.weight_decay != 0:
                param.mul_(1 - lr * self.weight_decay)
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            step_size = lr / bias_correction1
            bias_correction2_sqrt = bias_correction2**0.5
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(self.eps)
            param.addcdiv_(exp_avg, denom, value=-step_size)

    @torch.no_grad()
    def clip_grad_norm_(self, parameters: Iterable[torch.Tensor], max_norm: float) -> torch.Tensor:
        """``torch.nn.utils.clip_grad_norm_(parameters, max_norm)`` (2-norm) for parameters that
        are all in this optimiser's groups: the same total norm (the per-parameter norms of
        ``parameters``' gradients in that order, then their norm) and the same clamped factor,
        applied to the flat gradient buffers at once. Returns the total norm."""
        grads = [p.grad for p in parameters if p.grad is not None]
        owned = {id(g) for flat in self._flat for g in flat["grads"]}
        if {id(g) for g in grads} != owned:
            raise ValueError(
                "clip_grad_norm_ needs exactly the gradients of this optimiser's groups (it scales "
                "the flat buffers as a whole)"
            )
        if not grads:
            return torch.tensor(0.0)
        norms = torch._foreach_norm(grads, 2.0)
        total_norm = torch.linalg.vector_norm(torch.stack(list(norms)), 2.0)
        clip_coef = float(max_norm) / (total_norm + 1e-6)
        clip_coef_clamped = torch.clamp(clip_coef, max=1.0)
        for flat in self._flat:
            flat["grad"].mul_(clip_coef_clamped)
        return total_norm
