"""Several GD-trained gated MLPs as one batched model (several GD draws per size).

:func:`train_gated_mlp_batch` trains B independent draws of the baseline protocol of
:func:`constructions.fact_mlp.baselines.train_gated_mlp` at once: the weights of the draws are
stacked along a leading draw dimension (hidden widths padded with masked units to the largest one)
and every product is a batched one (``torch.bmm``). Each draw has its own fact set, its own
initialisation (drawn from its own seed exactly as the single-draw trainer draws it), its own loss
and its own early stop (a stopped draw's rows leave the batch: weights, Adam state and data, the
padded width unchanged); the losses are summed, so the gradient of a draw is the gradient of its
own loss (no mixing), and Adam acts elementwise, so each draw follows the single-draw trajectory
up to float round-off (tests/fact_mlp/test_gd_batch.py compares both paths).

:func:`smallest_sizes_batch` runs one bisection per draw (:class:`constructions.search.Bisection`,
the search of :func:`constructions.fact_mlp.baselines.smallest_size`), training the current size
of every unfinished search together in each round.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Callable, Iterable

import numpy as np

from constructions.adam import adam_update, cosine_lrs
from constructions.fact_mlp.baselines import trace_row
from constructions.fact_mlp.facts import FactMLP, FactSet, require_fact_set
from constructions.search import Bisection
from constructions.seeding import torch_generator
from constructions.tasks import require_size
from theory.validate import require_int

if TYPE_CHECKING:
    import torch


def train_gated_mlp_batch(
    facts: list[FactSet],
    hidden: list[int],
    seeds: list[int],
    *,
    epochs: int = 10000,
    lr: float = 1e-3,
    device: str = "cpu",
    loss_stop: float = 1e-7,
    manual_gradient: bool = True,
) -> list[FactMLP]:
    """Draw b: the gated MLP with biases of width ``hidden[b]`` trained on ``facts[b]`` from the
    initialisation of seed ``seeds[b]``, as :func:`train_gated_mlp` would (same init, same Adam
    and cosine schedule, same stopping rules per draw). Every fact set must have the same (F, n_V,
    d). Returns one :class:`FactMLP` per draw (name "gd", 3dm + 2m + d params).

    manual_gradient: run each epoch through :class:`_ManualBatchStep`, which calls the kernels of
    autograd's backward and of ``torch.optim.Adam`` on the same operands, so the weights, losses
    and epoch counts are bitwise those of the autograd epoch (False;
    tests/fact_mlp/test_gd_batch.py compares the two); it saves the graph and the optimiser's
    Python, the bulk of an epoch at these sizes."""
    import torch

    B = len(facts)
    if B < 1 or len(hidden) != B or len(seeds) != B:
        raise ValueError(
            f"train_gated_mlp_batch needs B >= 1 draws with one width and one seed each, got "
            f"{len(facts)} fact sets, {len(hidden)} widths, {len(seeds)} seeds"
        )
    for b, f in enumerate(facts):
        require_fact_set(f, f"facts[{b}]")
    shapes = {(f.n_facts, f.n_values, f.d_model) for f in facts}
    if len(shapes) != 1:
        raise ValueError(f"the draws of one batch must share (F, n_V, d), got {sorted(shapes)}")
    hidden = [require_size(f"hidden[{b}]", m, 1, "m") for b, m in enumerate(hidden)]
    seeds = [require_int(f"seeds[{b}]", s, 0) for b, s in enumerate(seeds)]
    epochs = require_int("epochs", epochs, 0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny problems: see train_gated_mlp
    try:
        return _train_batch(facts, hidden, seeds, epochs, lr, device, loss_stop, manual_gradient)
    finally:
        torch.set_num_threads(threads)


def _init(d, m, seed):
    """The single-draw trainer's initialisation: W_gate, W_up (m, d) / sqrt(d), W_down (d, m) /
    sqrt(m), in this order from torch.Generator(seed)."""
    import torch

    gen = torch_generator(int(seed))
    Wg = torch.randn((m, d), generator=gen) / math.sqrt(d)
    Wu = torch.randn((m, d), generator=gen) / math.sqrt(d)
    Wd = torch.randn((d, m), generator=gen) / math.sqrt(m)
    return Wg, Wu, Wd


def _train_batch(facts, hidden, seeds, epochs, lr, device, loss_stop, manual_gradient=True):
    import torch

    B, d, M = len(facts), facts[0].d_model, max(hidden)
    F = facts[0].n_facts
    K = torch.as_tensor(np.stack([f.keys for f in facts]), dtype=torch.float32, device=device)
    V = torch.as_tensor(np.stack([f.values for f in facts]), dtype=torch.float32, device=device)
    fmap = torch.as_tensor(np.stack([f.fact_map for f in facts]), device=device)
    Wg = torch.zeros((B, M, d))
    Wu = torch.zeros((B, M, d))
    Wd = torch.zeros((B, d, M))
    mask = torch.zeros((B, M), device=device)
    for b, (m, s) in enumerate(zip(hidden, seeds)):
        g, u, w = _init(d, m, s)
        Wg[b, :m], Wu[b, :m], Wd[b, :, :m] = g, u, w
        mask[b, :m] = 1.0
    Wg, Wu, Wd = (w.to(device).requires_grad_() for w in (Wg, Wu, Wd))
    bg, bu = (torch.zeros((B, M), device=device, requires_grad=True) for _ in range(2))
    bd = torch.zeros((B, d), device=device, requires_grad=True)
    params = [Wg, Wu, Wd, bg, bu, bd]
    if manual_gradient:
        with torch.no_grad():
            final, epochs_run, last_loss = _train_batch_manual(
                facts, hidden, [q.detach() for q in params], [K, V, fmap, mask], epochs, lr, loss_stop
            )
        return _outputs(facts, hidden, final, epochs_run, last_loss)
    opt = torch.optim.Adam(params, lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(1, epochs), eta_min=1e-6)
    data = [K, V, fmap, mask]

    def logits_of():
        K, V, _, mask = data
        Wg, Wu, Wd, bg, bu, bd = params
        g = torch.bmm(K, Wg.transpose(1, 2)) + bg[:, None, :]
        u = torch.bmm(K, Wu.transpose(1, 2)) + bu[:, None, :]
        h = u * torch.relu(g) * mask[:, None, :]  # padded units: output and gradients exactly 0
        y = torch.bmm(h, Wd.transpose(1, 2)) + bd[:, None, :]
        return torch.bmm(y, V.transpose(1, 2))  # (rows, F, n_V)

    def losses(z):
        fm = data[2]
        ce = torch.nn.functional.cross_entropy(z.reshape(-1, z.shape[-1]), fm.reshape(-1), reduction="none")
        return ce.reshape(len(fm), F).mean(dim=1)

    def compact(keep):
        """Drop the stopped draws' rows from the weights, the Adam state and the data (the width
        M stays, so each remaining row computes exactly what it computed before)."""
        rows = torch.as_tensor(keep, dtype=torch.long)
        new = []
        for q in params:
            q2 = q.detach()[rows].clone().requires_grad_()
            st = opt.state.pop(q, None)
            if st:
                opt.state[q2] = {k: (v if k == "step" else v[rows].clone()) for k, v in st.items()}
            new.append(q2)
        params[:] = new
        opt.param_groups[0]["params"] = new
        data[:] = [t[rows] for t in data]

    with torch.no_grad():  # the loss at initialisation (reported when epochs = 0)
        last_loss = losses(logits_of()).tolist()
    final = [None] * B
    epochs_run = [0] * B
    alive = list(range(B))  # original draw index of each row
    for epoch in range(epochs):
        opt.zero_grad()
        z = logits_of()
        per_draw = losses(z)
        per_draw.sum().backward()
        opt.step()
        sched.step()
        stored = _stored_rows(z, data[2]) if epoch % 50 == 49 else None
        keep = _retire(
            epoch, alive, per_draw.detach().tolist(), stored, loss_stop, params, final, epochs_run, last_loss
        )
        if not keep:
            break
        if len(keep) < len(alive):
            alive = [alive[r] for r in keep]
            compact(keep)
    _unfinished(alive, params, final)
    return _outputs(facts, hidden, final, epochs_run, last_loss)


def _stored_rows(z: torch.Tensor, fmap: torch.Tensor) -> list[bool]:
    """Per draw (row of the logits z, (draws, F, n_V)): every fact's target logit beats every other
    logit by more than 1e-3, the early stop's test at every 50th epoch."""
    zz = z.detach()
    correct = zz.gather(2, fmap[:, :, None]).squeeze(2)
    zz = zz.scatter(2, fmap[:, :, None], float("-inf"))
    return ((correct - zz.max(dim=2).values) > 1e-3).all(dim=1).tolist()


def _retire(epoch, alive, vals, stored, loss_stop, params, final, epochs_run, last_loss) -> list[int]:
    """Book one epoch for every live draw (row r is draw alive[r]) and keep the weights after this
    step of each draw that stops (loss below ``loss_stop``, or every fact stored at a check);
    the rows that go on. Shared by the autograd and the hand-written epoch loops."""
    keep = []
    for r, b in enumerate(alive):
        epochs_run[b] = epoch + 1
        last_loss[b] = vals[r]
        if vals[r] < loss_stop or (stored is not None and stored[r]):
            final[b] = [q[r].detach().clone() for q in params]
        else:
            keep.append(r)
    return keep


def _unfinished(alive, params, final) -> None:
    """The weights of the draws still running when the epochs ran out."""
    for r, b in enumerate(alive):
        if final[b] is None:
            final[b] = [q[r].detach().clone() for q in params]


def _outputs(facts, hidden, final, epochs_run, last_loss) -> list[FactMLP]:
    """One FactMLP per draw from its final weights (padding removed)."""
    out = []
    for b, (facts_b, m) in enumerate(zip(facts, hidden)):
        w = final[b]
        gated = {
            "W_gate": w[0][:m],
            "W_up": w[1][:m],
            "W_down": w[2][:, :m],
            "b_gate": w[3][:m],
            "b_up": w[4][:m],
            "b_down": w[5],
        }
        gated = {k: v.detach().cpu().double().numpy() for k, v in gated.items()}
        out.append(_fact_mlp(facts_b, m, gated, epochs_run[b], last_loss[b]))
    return out


def _fact_mlp(facts, m, gated, epochs_run, final_loss):
    from constructions.fact_mlp.facts import gated_forward

    d = facts.d_model
    n_params = 3 * d * m + 2 * m + d
    return FactMLP(
        name="gd",
        forward=lambda X: gated_forward(gated, X),
        params_standard=n_params,
        params_unique=n_params,
        facts=facts,
        size={"hidden": m},
        gated=gated,
        info={"epochs": epochs_run, "final_loss": float(final_loss)},
    )


def smallest_sizes_batch(
    build_batch: Callable[[list[int], list[int]], list[FactMLP]], sizes: Iterable[int], n_draws: int
) -> list[tuple[int | None, list[dict]]]:
    """One bisection per draw (:class:`constructions.search.Bisection`) for the smallest of ``sizes``
    storing every fact (accuracy 1), in lock-step: each round calls ``build_batch(draws, sizes)``,
    one FactMLP per unfinished draw. [(size or None, trace)] per draw, as ``smallest_size``'s."""
    sizes = list(sizes)
    if n_draws < 1 or not sizes:
        raise ValueError(f"smallest_sizes_batch needs n_draws >= 1 and sizes, got {n_draws}, {sorted(sizes)}")
    searches, traces = [Bisection(sizes) for _ in range(n_draws)], [[] for _ in range(n_draws)]
    while todo := [b for b in range(n_draws) if searches[b].probe is not None]:
        for b, mlp in zip(todo, build_batch(todo, [searches[b].probe for b in todo])):
            traces[b].append(trace_row(searches[b].probe, mlp))
            searches[b].record(traces[b][-1]["stored"])
    return [(search.size, trace) for search, trace in zip(searches, traces)]


# ---------------------------------------------------------------------------------------------
# The hand-written epoch of :mod:`constructions.fact_mlp.gd_batch` (the default path): the batched
# gated MLP's forward, backward and Adam step written out with the kernels autograd and
# ``torch.optim.Adam`` call, in the same order, so a draw follows the autograd path's steps
# (tests/fact_mlp/test_fast_paths.py compares both); the cosine learning-rate schedule is read from
# torch's own scheduler (:mod:`constructions.adam`).


if TYPE_CHECKING:
    import torch


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
    lrs = cosine_lrs(lr, epochs)
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
