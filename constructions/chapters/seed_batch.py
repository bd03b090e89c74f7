"""Seed-batched training of the chapters toy models [derived]: S models of one configuration, each
built from its own seed, trained together as one stacked model (``torch.func.stack_module_state``,
``torch.func.vmap`` over ``torch.func.functional_call``), on the CPU or a GPU.

Each seed keeps what the one-at-a-time loops give it: its initialisation (:func:`build` from its
seed), its own batches and evaluation sets, the same optimiser, schedule, clipping and auxiliary
losses (:func:`constructions.chapters.train.train`, :func:`constructions.chapters.copy_task.train_copy`).
On the CPU at one torch thread (as the claims train) the batched run is the one-at-a-time run bit
for bit: tolerance 0 on every loss, evaluation, routing frequency and final parameter
(tests/chapters/test_seed_batch.py, 3 seeds, both loops, every leak variant):

* the vmapped forward and backward run each seed's products through the same kernels (a seed's
  slice of a batched matmul is the product the single model computes; element-wise operations give
  every element the same result wherever it sits); the memory layer's row gathers use
  ``F.embedding`` instead of ``index_select`` under vmap (the same copies forward, the same
  in-order row sums backward; ``index_select`` with a batched index becomes a slow ``gather``);
* the optimiser is the loops' own (:func:`constructions.chapters.train._adamw`: element-wise, so
  a stacked parameter's slice is updated as the single parameter); only the clipping is per seed:
  each seed's total gradient norm is the norm, in the model's parameter order, of its
  per-parameter norms, and its gradients are scaled by its own clamped factor.

* the LM loss a history records and the auxiliary losses are computed per seed outside vmap, by
  the single loop's calls (vmap's batched cross-entropy reduces in another order; the load-balance
  loss's in-place scatter has no batching rule).

On a GPU the sequential loops use torch's AdamW and clipping kernels; the batched run then agrees
to float32 rounding (the ``gpu`` test: relative 1e-4 after 3 steps).

Speed: on one CPU thread these models are compute-bound (the bank projections and the memory
attention's products), so batching seeds saves little or costs (measured 2026-12-07 on 3 seeds,
process CPU seconds one at a time / batched: iso-FLOP dense fact model 20 steps 5.25 / 5.14, MoC
fact model 10 steps 0.98 / 1.70, copy task 50 steps sequence-routed 5.96 / 7.34, no memory 2.24 /
2.13); the claims batch seeds on a GPU only (:data:`verify.chapters.toy_setup.SEED_BATCH_DEVICES`).
"""

from __future__ import annotations

import types
from collections.abc import Iterator, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state, vmap

from constructions.chapters.layer import Routing, auxiliary_losses, rms_normalise
from constructions.chapters.model import MoCModel
from constructions.chapters.train import FactSet, _adamw, build, lean_runtime, lr_factor


def _embedding_rows(table, rows):
    """:meth:`constructions.chapters.layer.MemoryLayer.gather_rows` written as ``F.embedding`` (the
    same rows copied; the backward sums each row's contributions in index order, as
    ``index_select``'s): vmap turns ``index_select`` with a batched index into a ``gather`` over
    every element, ``embedding`` into one gather of rows.

    >>> _embedding_rows(torch.arange(6.0).view(3, 2), torch.tensor([2, 0])).tolist()
    [[4.0, 5.0], [0.0, 1.0]]
    """
    return F.embedding(rows, table)


def _selected_keys_values(self, bank, routing, weighted=True):
    """:meth:`constructions.chapters.layer.MemoryLayer.selected_keys_values` (the path of a batch
    that selects fewer tokens than the bank holds) with its chapter gather written as
    ``F.embedding`` over the bank's chapters (rows of T d values): the same copy forward and the
    same in-order sums backward, where vmap's batched indexing sums the gradient in another order."""
    n_chapters, dim = self.n_chapters, bank.shape[-1]
    tokens = bank.shape[0] // n_chapters
    b, n_sel_chapters = routing.chapters.shape
    att = self.attention
    if self.projects_bank(bank, routing):
        normed = rms_normalise(bank.view(n_chapters, tokens, dim))
        rows = routing.chapters.reshape(-1)
        keys = F.embedding(rows, att.wk(normed).reshape(n_chapters, -1))
        values = F.embedding(rows, att.wv(normed).reshape(n_chapters, -1))
    else:
        gathered = F.embedding(routing.chapters, bank.view(n_chapters, tokens * dim))
        selected = rms_normalise(gathered.view(b, n_sel_chapters, tokens, dim))
        keys, values = att.wk(selected), att.wv(selected)
    keys, values = keys.reshape(b, -1, dim), values.reshape(b, -1, dim)
    token_weights = routing.weights.repeat_interleave(tokens, dim=1)  # (B, N_sel)
    if weighted:
        return keys * token_weights[..., None], values * token_weights[..., None]
    return keys, values, token_weights


class SeedBatch:
    """S toy models of one configuration, stacked: ``params[name]`` is (S, *shape), the model
    :func:`build` makes from the i-th seed in row i.

    >>> from constructions.chapters.copy_task import copy_config
    >>> batch = SeedBatch(copy_config(4), [0, 1, 2])
    >>> batch.size, tuple(batch.params["bank"].shape)
    (3, (3, 4096, 64))
    >>> torch.equal(batch.state_dict(1)["bank"], build(copy_config(4), 1).bank.detach())
    True
    """

    def __init__(self, cfg: dict, seeds: Sequence[int], device: str | torch.device = "cpu"):
        models = [build(cfg, s, device=device) for s in seeds]
        if not models:
            raise ValueError("a seed batch needs at least one seed")
        params, buffers = stack_module_state(models)
        if buffers:
            raise ValueError(f"the toy models have no buffers; got {sorted(buffers)}")
        self.cfg, self.size, self.device = dict(cfg), len(models), torch.device(device)
        self.params: dict[str, torch.Tensor] = {n: p.detach().requires_grad_() for n, p in params.items()}
        self.base = MoCModel(cfg, device="meta")
        for block in self.base.blocks:  # the memory layer's gathers, vmap-friendly (same numbers)
            if block.memory is not None:
                block.memory.gather_rows = _embedding_rows
                block.memory.selected_keys_values = types.MethodType(_selected_keys_values, block.memory)

    def state_dict(self, i: int) -> dict[str, torch.Tensor]:
        """Seed ``i``'s parameters (a copy), keyed as :class:`MoCModel`'s state dict."""
        return {n: p[i].detach().clone() for n, p in self.params.items()}

    def forward(self, tokens: torch.Tensor, last_only: bool = False) -> torch.Tensor:
        """Each seed's logits on its own tokens (S, B, L) (the first axis the seed)."""

        def one(p, x):
            return functional_call(self.base, p, (x,), {"last_only": last_only})[0]

        return vmap(one)(self.params, tokens)

    def groups(self, lr: float, lr_memory: float, lr_bank: float | None, split_bank: bool) -> list[dict]:
        """The loops' parameter groups (backbone, memory, bank) over the stacked parameters.
        ``split_bank``: the bank is a group of its own (:func:`train`) or one with the memory
        layers (:func:`train_copy`)."""
        memory = [p for n, p in self.params.items() if ".memory." in n or (n == "bank" and not split_bank)]
        bank = [self.params["bank"]] if split_bank and "bank" in self.params else []
        ids = {id(p) for p in memory + bank}
        backbone = [p for p in self.params.values() if id(p) not in ids]
        groups = [{"params": backbone, "lr": lr}, {"params": memory, "lr": lr_memory}]
        if bank and lr_bank is not None and lr_bank > 0:
            groups.append({"params": bank, "lr": lr_bank})
        for p in bank:
            p.requires_grad_(lr_bank is not None and lr_bank > 0)
        groups = [g for g in groups if g["params"]]
        for g in groups:
            g["base_lr"] = g["lr"]
        return groups

    @torch.no_grad()
    def clip_grad_norm_(self, opt, max_norm: float) -> torch.Tensor:
        """Clip each seed's gradient to total norm ``max_norm`` as
        ``torch.nn.utils.clip_grad_norm_`` does for one model: seed s's total norm is the 2-norm of
        its per-parameter norms in the model's parameter order; its gradients are multiplied by
        min(1, max_norm / (norm + 1e-6)). Returns the (S,) total norms."""
        s = self.size
        grads = [p.grad for p in self.params.values() if p.grad is not None]
        norms = torch.stack([torch.linalg.vector_norm(g.reshape(s, -1), 2.0, dim=1) for g in grads], 1)
        total = torch.linalg.vector_norm(norms, 2.0, dim=1)  # (S,) each over a contiguous row
        coef = torch.clamp(float(max_norm) / (total + 1e-6), max=1.0)
        for g in grads:  # each stacked gradient by its seed's factor (a view of a flat buffer on the CPU)
            g.mul_(coef.view(s, *[1] * (g.dim() - 1)))
        return total


def _routing_tensors(routings: list[Routing]) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """(chapters, logits, probabilities) of each memory layer's routing: what the auxiliary losses
    read, returned out of vmap (whose outputs are tensors)."""
    return [(r.chapters, r.logits, r.probs) for r in routings]


def _totals(loss: torch.Tensor, routed: list, n_shared: int, lb_coef: float, z_coef: float) -> torch.Tensor:
    """Each seed's training objective, (S,): its LM loss plus the auxiliary losses of its routings,
    computed per seed outside vmap (``load_balance_loss``'s in-place scatter has no batching rule:
    under vmap it runs a slow per-seed fallback); the operations of the single loop."""
    if not routed:
        return loss
    totals = []
    for i in range(loss.shape[0]):
        routings = [Routing(c[i], None, lg[i], pr[i], n_shared) for c, lg, pr in routed]  # no weights read
        lb, z = auxiliary_losses(routings)
        totals.append(loss[i] + lb_coef * lb + z_coef * z)
    return torch.stack(totals)


@torch.no_grad()
def _recorded_losses(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Each seed's LM loss as the single loop records it, (S,): its own ``F.cross_entropy`` call
    (vmap's batched cross-entropy reduces in another order: the same gradient, a value that may
    differ in the last bit)."""
    return torch.stack([F.cross_entropy(logits[i], targets[i]) for i in range(logits.shape[0])])


def _selection_frequency(chapters: torch.Tensor, n_chapters: int) -> torch.Tensor:
    """Per seed, :func:`constructions.chapters.layer.selection_frequency` of (S, B, k) chapter ids:
    (S, n_chapters) float64 (counts of ones, exact in any order, over B)."""
    s, b = chapters.shape[:2]
    offsets = torch.arange(s, device=chapters.device)[:, None, None] * n_chapters
    counts = torch.zeros(s * n_chapters, dtype=torch.float64, device=chapters.device)
    flat = (chapters + offsets).reshape(-1)
    counts.index_add_(0, flat, torch.ones(flat.numel(), dtype=torch.float64, device=chapters.device))
    return counts.view(s, n_chapters) / b


@torch.no_grad()
@lean_runtime()
def evaluate_batched(batch: SeedBatch, facts: Sequence[FactSet]) -> list[tuple[float, float]]:
    """Each seed's (accuracy, nats) on its own fact set, as :func:`constructions.chapters.train.evaluate`.

    >>> from constructions.chapters.train import evaluate, make_fact_dataset, toy_configs
    >>> moc = toy_configs(8, 4, 0)[0]
    >>> facts = [make_fact_dataset(8, 4, np.random.default_rng(s), value_start=12) for s in (0, 1)]
    >>> evaluate_batched(SeedBatch(moc, [0, 1]), facts) == [evaluate(build(moc, s), facts[s]) for s in (0, 1)]
    True
    """
    inputs = torch.stack([torch.from_numpy(f.inputs()) for f in facts]).to(batch.device)
    logits = batch.forward(inputs, last_only=True)
    out = []
    for i, f in enumerate(facts):
        target = torch.from_numpy(f.values).to(batch.device)
        acc = float((logits[i].argmax(-1) == target).double().mean())
        out.append((acc, float(F.cross_entropy(logits[i].double(), target))))
    return out


@lean_runtime()
def train_batched(
    batch: SeedBatch,
    batches: Sequence[Iterator],
    steps: int,
    *,
    lr: float = 3e-3,
    lr_memory: float = 6e-3,
    lr_bank: float | None = None,
    lb_coef: float = 0.01,
    z_coef: float = 0.001,
    warmup: int = 50,
    eval_sets: Sequence[Sequence[FactSet]] = (),
    eval_every: int = 25,
    schedule_steps: int | None = None,
    initial_eval: Sequence[Sequence[tuple[float, float]]] | None = None,
) -> list[dict]:
    """:func:`constructions.chapters.train.train` for every seed of ``batch`` at once: seed i
    draws its batches from ``batches[i]`` and is evaluated on ``eval_sets[j][i]`` (evaluation set
    j of seed i); ``initial_eval[i]`` is seed i's known step-0 evaluation. Returns one history
    per seed, those of the one-at-a-time loop (no ``stop_accuracy``).

    >>> from constructions.chapters.train import make_fact_dataset, make_mixed_batches, toy_configs
    >>> moc, _ = toy_configs(8, 4, 0)
    >>> facts = [make_fact_dataset(8, 4, np.random.default_rng(s), value_start=12) for s in (0, 1)]
    >>> its = [make_mixed_batches([f], 4, np.random.default_rng(s)) for s, f in zip((0, 1), facts)]
    >>> hists = train_batched(SeedBatch(moc, [0, 1]), its, 2, eval_sets=[facts], eval_every=2)
    >>> [len(h["loss"]) for h in hists], hists[0]["eval_steps"], hists[1]["f"].shape
    ([2, 2], [0, 2], (2, 63))
    """
    s = batch.size
    if len(batches) != s or any(len(sets) != s for sets in eval_sets):
        raise ValueError(f"one batch stream and one set per evaluation per seed: {s} seeds")
    schedule_steps = steps if schedule_steps is None else schedule_steps
    lr_bank = lr_memory if lr_bank is None else lr_bank
    groups = batch.groups(lr, lr_memory, lr_bank, split_bank=True)
    opt = _adamw(groups)
    hists = [
        {"loss": [], "eval_steps": [], "acc": [[] for _ in eval_sets], "eval_loss": [[] for _ in eval_sets]}
        for _ in range(s)
    ]
    freqs, losses = [], []
    base = batch.base

    def one(p, x, y):
        logits, routings = functional_call(base, p, (x,), {"last_only": True})
        return F.cross_entropy(logits, y), logits, _routing_tensors(routings)

    def record_eval(step):
        for i, sets in enumerate(eval_sets):
            known = step == 0 and initial_eval is not None
            results = [initial_eval[k][i] for k in range(s)] if known else evaluate_batched(batch, sets)
            for k in range(s):
                hists[k]["acc"][i].append(results[k][0])
                hists[k]["eval_loss"][i].append(results[k][1])
        for h in hists:
            h["eval_steps"].append(step)

    for step in range(steps):
        if eval_sets and step % eval_every == 0:
            record_eval(step)
        for g in groups:
            g["lr"] = g["base_lr"] * lr_factor(step, schedule_steps, warmup)
        xs, ys = zip(*(next(it) for it in batches))
        x, y = torch.stack(xs).to(batch.device), torch.stack(ys).to(batch.device)
        loss, logits, routed = vmap(one)(batch.params, x, y)
        total = _totals(loss, routed, base.cfg["n_shared"], lb_coef, z_coef)
        if routed:
            chapters = routed[0][0][:, :, base.cfg["n_shared"] :]
            freqs.append(_selection_frequency(chapters, batch.cfg["n_chapters"])[:, base.cfg["n_shared"] :])
        opt.zero_grad()
        total.sum().backward()  # each seed's gradient is that of its own total (d sum / d total_i = 1)
        batch.clip_grad_norm_(opt, 1.0)
        opt.step()
        losses.append(_recorded_losses(logits, y))
    if eval_sets:
        record_eval(steps)
    loss_rows = torch.stack(losses, 1).tolist() if losses else [[] for _ in range(s)]
    f_rows = torch.stack(freqs, 1).cpu().numpy() if freqs else None
    for k, h in enumerate(hists):
        h["loss"] = loss_rows[k]
        h["f"] = f_rows[k] if f_rows is not None else np.array([])
        h["stopped_at"] = None
    return hists


def _first_half_loss(logits: torch.Tensor, seqs: torch.Tensor, half: int) -> float:
    v = logits.shape[-1]
    return float(
        F.cross_entropy(logits[:, 1:half].reshape(-1, v).double(), seqs[:, 2 : half + 1].reshape(-1))
    )


@torch.no_grad()
@lean_runtime()
def copy_eval_batched(
    batch: SeedBatch, seqs: torch.Tensor, half: int, prefix_only: bool = False
) -> list[float]:
    """Each seed's :func:`constructions.chapters.copy_task.copy_eval` on its own sequences
    ``seqs`` (S, N, L).

    >>> from constructions.chapters.copy_task import copy_config, make_copy_batch
    >>> seqs = torch.stack([make_copy_batch(4, 3, 8, np.random.default_rng(s)) for s in (0, 1)])
    >>> len(copy_eval_batched(SeedBatch(copy_config(4), [0, 1]), seqs, 3, prefix_only=True))
    2
    """
    seqs = seqs.to(batch.device)
    if not prefix_only:
        logits = batch.forward(seqs)
        return [_first_half_loss(logits[i], seqs[i], half) for i in range(batch.size)]
    rows = [batch.forward(seqs[:, :, : t + 1], last_only=True) for t in range(1, half)]
    logits = torch.stack(rows, 2)  # (S, N, positions 1..n-1, V)
    v = logits.shape[-1]
    return [
        float(F.cross_entropy(logits[i].reshape(-1, v).double(), seqs[i, :, 2 : half + 1].reshape(-1)))
        for i in range(batch.size)
    ]


@lean_runtime()
def train_copy_batched(
    batch: SeedBatch,
    n_symbols: int,
    half: int,
    steps: int,
    size: int,
    gens: Sequence[np.random.Generator],
    eval_seqs: torch.Tensor,
    *,
    lr: float = 3e-3,
    lr_memory: float = 6e-3,
    lb_coef: float = 0.01,
    z_coef: float = 0.001,
    warmup: int = 100,
    eval_every: int = 50,
    schedule_steps: int | None = None,
) -> list[dict]:
    """:func:`constructions.chapters.copy_task.train_copy` for every seed of ``batch`` at once:
    seed i draws its copy batches (``size`` sequences) from ``gens[i]`` and is evaluated on
    ``eval_seqs[i]`` ((S, N, L)). Returns one history per seed, those of the one-at-a-time loop.

    >>> from constructions.chapters.copy_task import copy_config, make_copy_batch
    >>> ev = torch.stack([make_copy_batch(4, 3, 8, np.random.default_rng(s)) for s in (0, 1)])
    >>> gens = [np.random.default_rng(10 + s) for s in (0, 1)]
    >>> hists = train_copy_batched(SeedBatch(copy_config(4), [0, 1]), 4, 3, 2, 4, gens, ev, eval_every=2)
    >>> [h["eval_steps"] for h in hists]
    [[0, 2], [0, 2]]
    """
    from constructions.chapters.copy_task import make_copy_batch

    s = batch.size
    if len(gens) != s or eval_seqs.shape[0] != s:
        raise ValueError(f"one generator and one evaluation set per seed: {s} seeds")
    schedule_steps = steps if schedule_steps is None else int(schedule_steps)
    if schedule_steps < steps:
        raise ValueError(f"schedule_steps={schedule_steps} must be >= steps={steps} (the run's horizon)")
    groups = batch.groups(lr, lr_memory, None, split_bank=False)
    opt = _adamw(groups)
    hists = [{"loss": [], "eval_steps": [], "first_half": []} for _ in range(s)]
    base, losses = batch.base, []

    def one(p, seqs):
        logits, routings = functional_call(base, p, (seqs[:, :-1],))
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), seqs[:, 1:].reshape(-1))
        return loss, logits, _routing_tensors(routings)

    for step in range(steps + 1):
        if step % eval_every == 0 or step == steps:
            for h, value in zip(hists, copy_eval_batched(batch, eval_seqs, half)):
                h["eval_steps"].append(step)
                h["first_half"].append(value)
        if step == steps:
            break
        for g in groups:
            g["lr"] = g["base_lr"] * lr_factor(step, schedule_steps, warmup)
        seqs = torch.stack([make_copy_batch(n_symbols, half, size, gen) for gen in gens]).to(batch.device)
        loss, logits, routed = vmap(one)(batch.params, seqs)
        total = _totals(loss, routed, base.cfg["n_shared"], lb_coef, z_coef)
        opt.zero_grad()
        total.sum().backward()
        batch.clip_grad_norm_(opt, 1.0)
        opt.step()
        v = logits.shape[-1]
        losses.append(_recorded_losses(logits.reshape(s, -1, v), seqs[:, :, 1:].reshape(s, -1)))
    rows = torch.stack(losses, 1).tolist() if losses else [[] for _ in range(s)]
    for h, row in zip(hists, rows):
        h["loss"] = row
    return hists


__all__ = [
    "SeedBatch",
    "copy_eval_batched",
    "evaluate_batched",
    "train_batched",
    "train_copy_batched",
]
