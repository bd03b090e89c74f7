"""The routing-leak copy task [derived] (docs/chapters.md#the-toy-model-its-recipe-and-the-copy-task):
sequences [BOS, x_1..x_n, x_1..x_n] whose first half is unpredictable under causal prediction, the
toy model on its vocabulary, its loss and evaluation, and its training loop (the recipe's
optimiser and schedule of :mod:`constructions.chapters.train`).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from constructions.chapters.layer import auxiliary_losses
from constructions.chapters.train import BOS, N_SPECIAL, _adamw, lean_runtime, lr_factor
from theory.chapters.flops import TOY_CONFIG
from theory.validate import require_int


def make_copy_batch(n_symbols: int, half: int, batch: int, gen: np.random.Generator) -> torch.Tensor:
    """``batch`` sequences [BOS, x_1..x_n, x_1..x_n], x_i i.i.d. uniform over ``n_symbols`` tokens
    (ids N_SPECIAL..N_SPECIAL + v - 1), n = ``half``. Under causal prediction the
    first-half tokens x_2..x_n are unpredictable: their loss floor is ln v.

    >>> import numpy as np
    >>> make_copy_batch(5, 3, 2, np.random.default_rng(0)).shape  # BOS + 2 * half
    torch.Size([2, 7])
    """
    n_symbols, half = require_int("n_symbols", n_symbols), require_int("half", half)
    batch = require_int("batch", batch, 1)
    if n_symbols < 2 or half < 2:
        raise ValueError(
            f"the copy task needs v >= 2 symbols and n >= 2 (got v={n_symbols}, "
            f"n={half}): with n < 2 there is no first-half prediction to leak"
        )
    x = N_SPECIAL + gen.integers(n_symbols, size=(batch, half))
    return torch.from_numpy(np.concatenate([np.full((batch, 1), BOS), x, x], axis=1))


def copy_config(
    n_symbols: int, routing: str = "sequence", memory: bool = True, weighting: bool = True
) -> dict:
    """The toy model on the copy task's vocabulary; ``memory=False`` removes the memory layer
    (variant (c)); ``weighting=False`` gives constant chapter weights (selection-only leak).

    >>> copy_config(8)["vocab"] - copy_config(4)["vocab"]
    4
    """
    n_symbols = require_int("n_symbols", n_symbols, 1)
    cfg = dict(TOY_CONFIG, vocab=N_SPECIAL + n_symbols, routing=routing, weighting=weighting)
    return cfg if memory else dict(cfg, mem_layers=[])


def first_half_loss(logits: torch.Tensor, seqs: torch.Tensor, half: int) -> float:
    """Mean cross-entropy (nats) of the predictions of x_2..x_n: positions 1..n-1 predicting
    tokens 2..n of [BOS, x_1..x_n, ...]."""
    v = logits.shape[-1]
    return float(
        F.cross_entropy(logits[:, 1:half].reshape(-1, v).double(), seqs[:, 2 : half + 1].reshape(-1))
    )


def is_causal(cfg: dict) -> bool:
    """Whether a model of config ``cfg`` predicts position t from tokens 0..t alone: no memory
    layer, or routing from the running prefix ("prefix") or from position 0 ("first"); the
    paper's per-sequence routing pools every position.

    >>> is_causal(copy_config(16, "prefix")), is_causal(copy_config(16)), is_causal(copy_config(16, memory=False))
    (True, False, True)
    """
    return not cfg["mem_layers"] or cfg.get("routing", "sequence") in ("prefix", "first")


@torch.no_grad()
@lean_runtime()
def copy_eval(model, seqs: torch.Tensor, half: int, prefix_only: bool = False, device="cpu") -> float:
    """First-half loss with teacher forcing on the whole sequence (training's view) or, with
    ``prefix_only``, as at inference: position t's prediction comes from running the model on
    tokens 0..t alone, so no later token can reach the router's pool.

    With the whole sequence visible, a causal model (:func:`is_causal`) runs on tokens 0..n only,
    the ones its first-half predictions read: the same numbers, bit for bit on the CPU
    (tests/chapters/test_fast_paths.py), for 7 of the task's 2n + 1 tokens at n = 6."""
    seqs = seqs.to(device)
    if not prefix_only:
        # a causal model's first-half predictions read tokens 0..half only: the rest is not run
        logits, _ = model(seqs[:, : half + 1] if is_causal(model.cfg) else seqs)
        return first_half_loss(logits, seqs, half)
    rows = [model(seqs[:, : t + 1], last_only=True)[0] for t in range(1, half)]
    logits = torch.stack(rows, 1)  # positions 1..n-1
    v = logits.shape[-1]
    return float(F.cross_entropy(logits.reshape(-1, v).double(), seqs[:, 2 : half + 1].reshape(-1)))


@lean_runtime()
def train_copy(
    model,
    n_symbols: int,
    half: int,
    steps: int,
    batch: int,
    gen: np.random.Generator,
    eval_seqs: torch.Tensor,
    *,
    lr=3e-3,
    lr_memory=6e-3,
    lb_coef=0.01,
    z_coef=0.001,
    warmup=100,
    eval_every=50,
    device="cpu",
    schedule_steps=None,
) -> dict:
    """Teacher-forced causal LM training on fresh copy sequences every step (docs/chapters.md): AdamW as
    :func:`train` (wd 0.1, betas (0.9, 0.95), clip 1.0, warm-up then cosine), loss over every
    next-token prediction plus the router's auxiliary losses. Records the full-sequence
    first-half loss on ``eval_seqs`` every ``eval_every`` steps and at the end.
    ``schedule_steps`` (default ``steps``) sets the cosine horizon: a run stopped at ``steps`` on
    the schedule of a longer run sees the same batches and learning rates as that run's first
    ``steps`` steps (evaluation draws nothing from ``gen``)."""
    schedule_steps = steps if schedule_steps is None else int(schedule_steps)
    if schedule_steps < steps:
        raise ValueError(f"schedule_steps={schedule_steps} must be >= steps={steps} (the run's horizon)")
    memory = [p for n, p in model.named_parameters() if ".memory." in n or n == "bank"]
    ids = {id(p) for p in memory}
    groups = [
        {"params": [p for p in model.parameters() if id(p) not in ids], "lr": lr},
        {"params": memory, "lr": lr_memory},
    ]
    groups = [g for g in groups if g["params"]]
    for g in groups:
        g["base_lr"] = g["lr"]
    opt = _adamw(groups)
    hist = {"loss": [], "eval_steps": [], "first_half": []}
    for step in range(steps + 1):
        if step % eval_every == 0 or step == steps:
            hist["eval_steps"].append(step)
            hist["first_half"].append(copy_eval(model, eval_seqs, half, device=device))
        if step == steps:
            break
        for g in groups:
            g["lr"] = g["base_lr"] * lr_factor(step, schedule_steps, warmup)
        seqs = make_copy_batch(n_symbols, half, batch, gen).to(device)
        logits, routings = model(seqs[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), seqs[:, 1:].reshape(-1))
        total = loss
        if routings:
            lb, z = auxiliary_losses(routings)
            total = loss + lb_coef * lb + z_coef * z
        opt.zero_grad()
        total.backward()
        opt.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        hist["loss"].append(loss.detach())  # on the device: read once at the end
    hist["loss"] = torch.stack(hist["loss"]).tolist() if hist["loss"] else []
    return hist
