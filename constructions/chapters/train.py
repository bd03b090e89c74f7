"""Toy synthetic experiments of Mixture of Chapters [derived]: fact data, the toy configurations
(MoC and its iso-FLOP dense comparator) and the two-phase training loop
(docs/chapters.md#the-toy-model-its-recipe-and-the-copy-task); the copy task of the routing-leak
claims is in :mod:`constructions.chapters.copy_task`.

Sequences are ``[BOS, KEY, SEP]``; the VALUE is predicted at SEP and never enters the input, so
it cannot reach the router's pool. Token ids: 0..3 BOS/SEP/PAD/UNK, then phase-1 keys, then
phase-2 keys, then values. All sequences have length 3, so no padding is needed.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from constructions.chapters.flat_adam import FlatAdam
from constructions.chapters.layer import auxiliary_losses, normalised_entropy, selection_frequency
from constructions.chapters.model import MoCModel
from constructions.seeding import torch_generator
from theory.chapters.flops import TOY_CONFIG, iso_flop_depth
from theory.validate import require_int

BOS, SEP, PAD, UNK = 0, 1, 2, 3
N_SPECIAL = 4


@dataclass(frozen=True)
class FactSet:
    """A random map key -> value: ``keys`` and ``values`` are token ids (numpy int64)."""

    keys: np.ndarray
    values: np.ndarray

    def inputs(self) -> np.ndarray:
        n = len(self.keys)
        return np.stack([np.full(n, BOS), self.keys, np.full(n, SEP)], axis=1)


def make_fact_dataset(
    n_keys: int,
    n_values: int,
    gen: np.random.Generator,
    key_start: int = N_SPECIAL,
    value_start: int | None = None,
) -> FactSet:
    """values[k] = gen.integers(n_values) for each of ``n_keys`` keys [derived].

    >>> import numpy as np
    >>> make_fact_dataset(3, 2, np.random.default_rng(0)).keys.tolist()
    [4, 5, 6]
    """
    n_keys, n_values = require_int("n_keys", n_keys), require_int("n_values", n_values)
    if n_keys < 1 or n_values < 1:
        raise ValueError(f"n_keys={n_keys} and n_values={n_values} must be >= 1")
    key_start = require_int("key_start", key_start, 0)
    if value_start is not None:
        value_start = require_int("value_start", value_start, 0)
    value_start = key_start + n_keys if value_start is None else value_start
    keys = np.arange(key_start, key_start + n_keys, dtype=np.int64)
    return FactSet(keys, value_start + gen.integers(n_values, size=n_keys).astype(np.int64))


def make_phase2_dataset(
    n_pairs: int, gen: np.random.Generator, key_start: int, value_start: int, n_values: int
) -> FactSet:
    """A disjoint task on fresh key tokens ``key_start..key_start+n_pairs-1`` (a new random map
    to the same value range); phase 2 never shows phase-1 keys [derived]."""
    return make_fact_dataset(n_pairs, n_values, gen, key_start=key_start, value_start=value_start)


def make_mixed_batches(datasets, batch: int, gen: np.random.Generator):
    """Endless (inputs, targets) batches; each example from a uniformly drawn dataset, then a
    uniformly drawn fact. Sequences share one length, so nothing is padded."""
    inputs = [d.inputs() for d in datasets]
    while True:
        which = gen.integers(len(datasets), size=batch)
        rows = [gen.integers(len(datasets[i].keys)) for i in which]
        x = np.stack([inputs[i][r] for i, r in zip(which, rows)])
        y = np.array([datasets[i].values[r] for i, r in zip(which, rows)])
        yield torch.from_numpy(x), torch.from_numpy(y)


def toy_configs(n_facts=1024, n_values=256, n_phase2=1024, top_k=4):
    """(MoC config, iso-FLOP dense config) of the toy of docs/chapters.md [derived]. The dense depth is
    the smallest integer >= 2 whose forward FLOPs at L = 3 reach the MoC toy's (21 at the toy sizes).

    >>> moc, dense = toy_configs()
    >>> dense["n_layers"]
    21
    """
    n_facts, n_values = require_int("n_facts", n_facts, 1), require_int("n_values", n_values, 1)
    n_phase2, top_k = require_int("n_phase2", n_phase2, 0), require_int("top_k", top_k, 1)
    moc = dict(TOY_CONFIG, vocab=N_SPECIAL + n_facts + n_phase2 + n_values, top_k=top_k)
    depth = iso_flop_depth(moc)
    dense = dict(moc, n_layers=depth, mem_layers=[])
    return moc, dense


# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_MMAP_MAX = -1, -3, -4
#: glibc's default for M_MMAP_MAX, and the mmap / trim thresholds its dynamic adjustment reaches
#: after freeing a large block (32 MiB, twice that): what the allocator is left with afterwards
_MMAP_MAX_DEFAULT, _MMAP_THRESHOLD_AFTER, _TRIM_THRESHOLD_AFTER = 65536, 32 << 20, 64 << 20
_lean_depth = 0


def _mallopt(param: int, value: int) -> bool:
    """glibc's ``mallopt``; False where the C library has none (then nothing is changed)."""
    try:
        return bool(ctypes.CDLL(None).mallopt(ctypes.c_int(param), ctypes.c_int(value)))
    except (OSError, AttributeError, TypeError):
        return False


@contextlib.contextmanager
def lean_runtime() -> Iterator[None]:
    """Run a training or evaluation loop without two costs of the process around it; no number
    changes (neither touches any arithmetic).

    * Freed memory is kept for reuse: a step allocates and frees blocks of a few MB to tens of MB
      (the memory layer's gathered keys and values, the prefix-routed score matrices, an
      evaluation over every fact), which glibc otherwise returns to the system and faults back in,
      page by page, at the next step (measured: about 40% of a prefix-routed step's CPU time and
      half of an evaluation's). Inside the block nothing is mmapped or trimmed; on leaving it the
      allocator gets the thresholds its own dynamic adjustment reaches after a large free and the
      kept memory is released (``malloc_trim``).
    * The objects that exist before the block are frozen out of the garbage collector's full
      scans (``gc.freeze``), which otherwise walk the whole process heap a few times per run.

    Re-entrant: only the outermost block acts. A no-op where the C library has no ``mallopt``.
    Also a decorator (``@lean_runtime()``): :func:`train`, :func:`train_copy` and the evaluations
    run under it."""
    global _lean_depth
    outer = _lean_depth == 0
    _lean_depth += 1
    freeze = outer and gc.isenabled() and gc.get_freeze_count() == 0
    keep = outer and _mallopt(_M_MMAP_MAX, 0)
    if keep:
        _mallopt(_M_TRIM_THRESHOLD, (1 << 31) - 1)
    if freeze:
        gc.freeze()
    try:
        yield
    finally:
        _lean_depth -= 1
        if freeze:
            gc.unfreeze()
        if keep:
            _mallopt(_M_MMAP_MAX, _MMAP_MAX_DEFAULT)
            _mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_AFTER)
            _mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD_AFTER)
            with contextlib.suppress(OSError, AttributeError):
                ctypes.CDLL(None).malloc_trim(ctypes.c_size_t(0))


class _TorchAdamW(torch.optim.AdamW):
    """torch's AdamW with the two methods the loops call on :class:`FlatAdam`."""

    def zero_grad(self, set_to_none: bool = True) -> None:
        super().zero_grad(set_to_none=set_to_none)

    def clip_grad_norm_(self, parameters, max_norm: float) -> torch.Tensor:
        return torch.nn.utils.clip_grad_norm_(parameters, max_norm)


def _adamw(groups: list[dict]) -> FlatAdam | torch.optim.AdamW:
    """The loops' AdamW (wd 0.1, betas (0.9, 0.95), eps 1e-8), which also clips: on the CPU over
    flat parameter groups (:class:`constructions.chapters.flat_adam.FlatAdam`, torch's numbers,
    tested there), elsewhere torch's own (its GPU kernels are not the ones FlatAdam was checked
    against)."""
    if all(p.device.type == "cpu" for g in groups for p in g["params"]):
        return FlatAdam(groups, betas=(0.9, 0.95), weight_decay=0.1)
    return _TorchAdamW(groups, weight_decay=0.1, betas=(0.9, 0.95))


def lr_factor(step: int, steps: int, warmup: int) -> float:
    """Linear warm-up over ``warmup`` steps, then cosine from 1 to 0.1 (docs/chapters.md)."""
    if step < warmup:
        return (step + 1) / warmup
    t = (step - warmup) / max(1, steps - warmup)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, t)))


@torch.no_grad()
@lean_runtime()
def evaluate(model, facts: FactSet, device="cpu") -> tuple[float, float]:
    """(accuracy, mean cross-entropy in nats) of the value at SEP over every fact; accuracy is
    the fraction whose argmax over the whole vocabulary is the value."""
    logits, _ = model(torch.from_numpy(facts.inputs()).to(device), last_only=True)
    target = torch.from_numpy(facts.values).to(device)
    acc = float((logits.argmax(-1) == target).double().mean())
    return acc, float(F.cross_entropy(logits.double(), target))


def accuracy(model, facts: FactSet, device="cpu") -> float:
    return evaluate(model, facts, device)[0]


@lean_runtime()
def train(
    model,
    batches,
    steps,
    *,
    lr=3e-3,
    lr_memory=6e-3,
    lr_bank=None,
    lb_coef=0.01,
    z_coef=0.001,
    warmup=50,
    eval_sets=(),
    eval_every=25,
    schedule_steps=None,
    device="cpu",
    stop_accuracy=None,
    initial_eval: Sequence[tuple[float, float]] | None = None,
):
    """AdamW (wd 0.1, betas (0.9, 0.95), clip 1.0), warm-up then cosine (docs/chapters.md).

    Memory layers get ``lr_memory``; the bank gets ``lr_bank`` (default ``lr_memory``; 0 freezes
    it). ``schedule_steps`` (default ``steps``) sets the cosine horizon, so a run may stop early on
    the schedule of a longer one. Returns a history: step-wise LM loss, accuracy and loss of each
    of ``eval_sets`` every ``eval_every`` steps and at the end, and ``f``: per step, the routed
    chapters' selection frequency in the batch (first memory layer; numpy, steps x (C - C_sh)).
    With ``stop_accuracy``, training stops at the first evaluation whose accuracy on
    ``eval_sets[0]`` reaches it (``hist["stopped_at"]``: that step, the weights after that many
    steps; None if never); the learning-rate schedule is unchanged by the stop.
    ``initial_eval``: (accuracy, nats) of each of ``eval_sets`` on the model as passed in, already
    measured (e.g. by the run that trained these weights); recorded as the step-0 evaluation
    instead of evaluating again (evaluation draws nothing and changes nothing, so the history is
    the same)."""
    if stop_accuracy is not None and not eval_sets:
        raise ValueError("stop_accuracy needs an evaluation set (eval_sets[0]) to stop on")
    if initial_eval is not None and len(initial_eval) != len(eval_sets):
        raise ValueError(f"initial_eval has {len(initial_eval)} entries for {len(eval_sets)} evaluation sets")
    schedule_steps = steps if schedule_steps is None else schedule_steps
    lr_bank = lr_memory if lr_bank is None else lr_bank
    memory = [p for n, p in model.named_parameters() if ".memory." in n]
    bank = [model.bank] if model.bank is not None else []
    ids = {id(p) for p in memory + bank}
    backbone = [p for p in model.parameters() if id(p) not in ids]
    groups = [{"params": backbone, "lr": lr}, {"params": memory, "lr": lr_memory}]
    if bank and lr_bank > 0:
        groups.append({"params": bank, "lr": lr_bank})
    for p in bank:
        p.requires_grad_(lr_bank > 0)
    groups = [g for g in groups if g["params"]]
    for g in groups:
        g["base_lr"] = g["lr"]
    opt = _adamw(groups)
    hist = {
        "loss": [],
        "eval_steps": [],
        "acc": [[] for _ in eval_sets],
        "eval_loss": [[] for _ in eval_sets],
        "f": [],
        "stopped_at": None,
    }

    def reached():
        return stop_accuracy is not None and hist["acc"][0][-1] >= stop_accuracy

    def record_eval(step):
        hist["eval_steps"].append(step)
        for i, facts in enumerate(eval_sets):
            known = step == 0 and initial_eval is not None
            acc, nats = initial_eval[i] if known else evaluate(model, facts, device)
            hist["acc"][i].append(acc)
            hist["eval_loss"][i].append(nats)

    for step in range(steps):
        if eval_sets and step % eval_every == 0:
            record_eval(step)
            if reached():
                hist["stopped_at"] = step
                break
        for g in groups:
            g["lr"] = g["base_lr"] * lr_factor(step, schedule_steps, warmup)
        x, y = next(batches)
        logits, routings = model(x.to(device), last_only=True)
        loss = F.cross_entropy(logits, y.to(device))
        total = loss
        if routings:
            lb, z = auxiliary_losses(routings)
            total = loss + lb_coef * lb + z_coef * z
            r = routings[0]
            f = selection_frequency(r.chapters[:, r.n_shared :], r.probs.shape[-1])[r.n_shared :]
            hist["f"].append(f.detach())
        opt.zero_grad()
        total.backward()
        opt.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        hist["loss"].append(loss.detach())  # on the device: read once at the end
    if eval_sets and hist["stopped_at"] is None:
        record_eval(steps)
        if reached():
            hist["stopped_at"] = steps
    hist["loss"] = torch.stack(hist["loss"]).tolist() if hist["loss"] else []
    hist["f"] = torch.stack(hist["f"]).cpu().numpy() if hist["f"] else np.array([])
    return hist


def usage(f_steps: np.ndarray, end: int, window: int) -> dict:
    """Routed-chapter usage over the steps (end - window, end] of a history's ``f``: the mean
    selection frequency per chapter, the fraction of chapters selected at least once and the
    normalised entropy of the frequencies [derived metrics]."""
    f = f_steps[max(0, end - window) : end].mean(0)
    return {"f": f.tolist(), "fraction_used": float((f > 0).mean()), "entropy": normalised_entropy(f)}


def build(cfg, seed, device="cpu", dtype=torch.float32):
    """A toy model initialised from ``torch.Generator().manual_seed(seed)`` (``seed`` an integer
    >= 0: 4.0 is 4, 2.5 a ValueError naming it).

    >>> from constructions.chapters.train import toy_configs
    >>> build(toy_configs()[0], 0).__class__.__name__
    'MoCModel'
    """
    gen = torch_generator(require_int("seed", seed, 0))
    return MoCModel(cfg, generator=gen, device=device, dtype=dtype)
