"""The written-out training step of the recall Transformer's attention
(:func:`constructions.fact_mlp.transformer.train_attention`, docs/fact_mlp.md): each step's gradient
and AdamW update without the autograd graph, bitwise equal to the autograd path, for the identity
or a gated MLP inserted (a speed-up only; tests/fact_mlp/test_fast_paths.py compares the two).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from constructions.adam import adam_update
from constructions.fact_mlp.transformer import _check, recall_sequences


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
