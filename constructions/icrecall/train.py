"""Training of the IC-recall models (docs/icrecall.md#the-fine-tuned-model): the pretrained memory
(:func:`pretrain_memory`), and the attention's fine-tuning (:func:`finetune`) with its evaluation,
checkpoints, a CPU Adam and the hand-written step of the P-full model. The models themselves are in
:mod:`constructions.icrecall.model`.
"""

from __future__ import annotations

import contextlib
import gc
import math
from dataclasses import dataclass, field

import numpy as np
import torch

from constructions.icrecall.model import (
    EmbeddedPrompts,
    ICAttention,
    TrainedMemory,
    TripletMemory,
    strict_accuracy,
)
from constructions.icrecall.patterns import pattern_metrics
from constructions.icrecall.world import Prompts, World, sample_direct


@contextlib.contextmanager
def _gc_paused():
    """Python's cyclic garbage collector paused for a training loop, restored after: reference
    counting still frees every step's tensors and autograd graph (they hold no reference cycle),
    and the collector's passes over every object the process holds cost a few per cent of a
    small step. Changes no number."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def pretrain_memory(
    world: World,
    width: int,
    logit_scale: float,
    lr: float,
    batch: int,
    max_steps: int,
    target_acc: float,
    gen: torch.Generator,
    np_gen: np.random.Generator,
    device="cpu",
    dtype=torch.float64,
):
    """Train F on direct recall e_s + e_r -> a*(s, r) [derived]: Adam at ``lr``,
    batches of ``batch`` from :func:`sample_direct`, until the accuracy over all S R facts is
    >= target_acc (checked every 50 steps) or ``max_steps``. Returns (memory, steps, accuracy)."""
    mem = TrainedMemory(world, width, logit_scale, gen, device, dtype)
    opt = _optimiser(list(mem.parameters()), lr)
    subj = torch.as_tensor(world.subj, dtype=dtype, device=device)
    rel = torch.as_tensor(world.rel, dtype=dtype, device=device)
    all_s, all_r = np.divmod(np.arange(world.n_facts), world.n_rel)
    z_all = subj[all_s] + rel[all_r]
    y_all = torch.as_tensor(world.answer[all_s, all_r], device=device)
    acc, step = 0.0, 0
    with _gc_paused():
        for step in range(1, int(max_steps) + 1):
            s, r, a = sample_direct(world, batch, np_gen)
            z = subj[s] + rel[r]
            loss = torch.nn.functional.cross_entropy(mem.logits(z), torch.as_tensor(a, device=device))
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 50 == 0 or step == max_steps:
                with torch.no_grad():
                    acc = strict_accuracy(mem.logits(z_all), y_all)
                if acc >= target_acc:
                    break
    for p in mem.parameters():
        p.requires_grad_(False)
    return mem, step, acc


@dataclass
class FinetuneResult:
    """What one fine-tuning run measured: accuracies and attention metrics at init and after."""

    acc_init: float
    acc: float
    metrics_init: dict
    metrics: dict
    losses: list = field(default_factory=list)
    omega: float = float("nan")
    extra: dict = field(default_factory=dict)


def evaluate(model: ICAttention, prompts: Prompts | EmbeddedPrompts, chunk: int = 2048):
    """(accuracy, attention (K, T) as numpy, per-sequence correctness) on ``prompts``, in chunks
    of ``chunk`` sequences (those of ``prompts`` when it is :class:`EmbeddedPrompts`)."""
    if not isinstance(prompts, EmbeddedPrompts):
        prompts = model.embed_prompts(prompts, chunk)
    elif prompts.key != model.embedding_key():
        raise ValueError(f"prompts embedded for {prompts.key}, the model needs {model.embedding_key()}")
    alphas, correct = [], []
    with torch.inference_mode():
        for X, V, tgt in prompts.chunks:
            logits, alpha = model(X, V)
            c = logits.gather(1, tgt[:, None]).squeeze(1)
            o = logits.scatter(1, tgt[:, None], float("-inf")).amax(dim=1)
            correct.append((c > o).cpu().numpy())
            alphas.append(alpha.cpu().numpy())
    ok = np.concatenate(correct)
    return float(ok.mean()), np.concatenate(alphas), ok


def _checkpoint(model: ICAttention, test, step: int, loss, evaluated=None) -> tuple[dict, tuple]:
    """(trajectory row, the evaluation it was read from) of the model on ``test`` at ``step``."""
    evaluated = evaluate(model, test) if evaluated is None else evaluated
    m = pattern_metrics(evaluated[1])
    row = {
        "step": step,
        "acc": evaluated[0],
        "loss": loss,
        **{k: m[k] for k in ("query_share", "pair_uniformity", "imbalance", "subject_share", "answer_share")},
    }
    return row, evaluated


class CpuAdam:
    """Adam (betas 0.9, 0.999, eps 1e-8, no weight decay, no amsgrad) for parameters on the CPU:
    the update ``torch.optim.Adam`` makes there (its single-tensor path, taken on CPU), written
    out with the same tensor operations in the same order, without the optimiser's per-step
    bookkeeping (profiler scopes, state dictionaries, parameter groups), which took about a
    third of a small fine-tuning step. Gradients are read from ``.grad`` as ``torch.optim.Adam`` reads
    them; ``zero_grad`` sets them to None as its default does. The parameters after every step
    equal ``torch.optim.Adam``'s bit for bit (tests/icrecall/test_finetune_identity.py)."""

    def __init__(self, params: list, lr: float, betas: tuple = (0.9, 0.999), eps: float = 1e-8):
        if any(p.device.type != "cpu" for p in params):
            raise ValueError("CpuAdam reproduces the CPU path of torch.optim.Adam only")
        self.params, self.lr, self.betas, self.eps = list(params), float(lr), betas, float(eps)
        self.exp_avg = [torch.zeros_like(p, memory_format=torch.preserve_format) for p in self.params]
        self.exp_avg_sq = [torch.zeros_like(p, memory_format=torch.preserve_format) for p in self.params]
        self.steps = [0] * len(self.params)  # per parameter, as torch.optim.Adam's state["step"]

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        """One update from the parameters' ``.grad`` (with gradients off, as the optimiser does)."""
        if torch.is_grad_enabled():
            with torch.no_grad():
                return self.step()
        beta1, beta2 = self.betas
        for i, (p, exp_avg, exp_avg_sq) in enumerate(zip(self.params, self.exp_avg, self.exp_avg_sq)):
            grad = p.grad
            if grad is None:  # skipped, its step not counted, as torch.optim.Adam does
                continue
            self.steps[i] += 1
            # torch.optim.Adam counts in a float tensor and reads it back: the same float here
            step = float(self.steps[i])
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            bias_correction1 = 1 - beta1**step
            bias_correction2 = 1 - beta2**step
            step_size = self.lr / bias_correction1
            bias_correction2_sqrt = bias_correction2**0.5
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(self.eps)
            p.addcdiv_(exp_avg, denom, value=-step_size)


def _optimiser(params: list, lr: float):
    """:class:`CpuAdam` for CPU parameters, ``torch.optim.Adam`` (betas 0.9, 0.999) elsewhere."""
    if all(p.device.type == "cpu" for p in params):
        return CpuAdam(params, lr)
    return torch.optim.Adam(params, lr=lr, betas=(0.9, 0.999))


class _FullStep:
    """One fine-tuning step of P-full on fixed training inputs without autograd: the loss, with
    ``W_KQ.grad`` set to its gradient.

    For the model the P-full claims train (param "full", the frozen :class:`TripletMemory`, omega
    fixed, on the CPU). The forward is :meth:`ICAttention.forward` and the cross-entropy op for op
    (``cross_entropy`` is ``nll_loss`` of ``log_softmax``); the backward calls the ATen kernels
    that autograd calls for this graph, on operands of the same shapes and layouts (the views
    ``einsum`` saves, the grads' reshape and permute chains, ``mm(grad, mat2.t())`` of ``mm``'s
    backward, the broadcast add reduced by a keepdim sum, the index_add's gradient gathered), so
    the gradient is the one ``loss.backward()`` leaves, bit for bit, and so is every parameter
    after the optimiser's step (tests/icrecall/test_finetune_identity.py). It saves autograd's
    graph bookkeeping: about a third of a step of the small runs of the sample-need scans.
    :meth:`build` answers None for any other model, which then trains through autograd."""

    def __init__(self, model: ICAttention, X: torch.Tensor, V: torch.Tensor, y: torch.Tensor):
        mem = model.memory
        self.W, self.X, self.V, self.y, self.mem = model.W_KQ, X, V, y, mem
        self.K, self.T, self.d = X.shape
        self.S, self.R = mem.subj.shape[0], mem.rel.shape[0]
        self.xq, self.xq_t, self.Vq = X[:, -1], X[:, -1].t(), V[:, -1]
        self.V_t = V.transpose(1, 2)  # the z einsum's bmm saved V: its backward multiplies by V^T
        self.subj_T, self.rel_T = mem.subj.T, mem.rel.T
        self.gram_t = mem.gram.t()
        self.gather_index = mem.index[None, :].expand(self.K, -1)
        with torch.no_grad():
            self.omega = model.log_omega.exp()
        self.one = torch.ones((), dtype=X.dtype, device=X.device)

    @classmethod
    def build(cls, model: ICAttention, X: torch.Tensor, V: torch.Tensor, y: torch.Tensor):
        """The step for ``model`` on (X, V, y), or None when the model is not of that kind."""
        mem = model.memory
        if (
            model.param != "full"
            or not isinstance(mem, TripletMemory)
            or model.log_omega.requires_grad
            or X.device.type != "cpu"
            or mem.subj.shape[0] < 2  # a size-1 broadcast dimension is reduced differently
            or mem.rel.shape[0] < 2
        ):
            return None
        return cls(model, X, V, y)

    def __call__(self) -> torch.Tensor:
        """The step's loss; sets ``W_KQ.grad``. Runs with gradients off (:func:`finetune` runs
        its loop so): nothing here is recorded for autograd."""
        K, T, d, mem = self.K, self.T, self.d, self.mem
        aten = torch.ops.aten
        # forward, as ICAttention.forward and TripletMemory.logits (in place where the plain
        # expression makes a fresh tensor: the same values without the copies)
        q = self.xq @ self.W
        alpha = torch.softmax(torch.einsum("kd,ktd->kt", q, self.X), dim=1)
        z = self.Vq + self.omega * torch.einsum("kt,ktd->kd", alpha, self.V)
        h = ((z @ self.subj_T)[:, :, None] + (z @ self.rel_T)[:, None, :]).sub_(mem.theta).relu_()
        c = torch.zeros(K, mem.n_ans, dtype=z.dtype, device=z.device)
        c = c.index_add_(1, mem.index, h.reshape(K, -1))
        logits = c @ mem.gram
        logp = torch.log_softmax(logits, 1, dtype=logits.dtype)
        loss, total_weight = aten.nll_loss_forward(logp, self.y, None, 1, -100)  # mean reduction
        # backward, node by node as autograd runs it
        g = aten.nll_loss_backward(self.one, logp, self.y, None, 1, -100, total_weight)
        g = aten._log_softmax_backward_data(g, logp, 1, logits.dtype)
        g = g.mm(self.gram_t).gather(1, self.gather_index).reshape(K, self.S, self.R)
        g = aten.threshold_backward(g, h, 0)
        g_z = g.sum([1], keepdim=True).squeeze(1).mm(self.rel_T.t())
        g_z.add_(g.sum([2], keepdim=True).squeeze(2).mm(self.subj_T.t()))
        g_m = g_z.mul(self.omega).reshape(K, d, 1).permute(0, 2, 1).reshape(K, 1, d)
        g_a = torch.bmm(g_m, self.V_t).reshape(K, T, 1).permute(0, 2, 1).permute(0, 2, 1).squeeze(2)
        g_s = aten._softmax_backward_data(g_a, alpha, 1, alpha.dtype)
        g_s = g_s.reshape(K, T, 1).permute(0, 2, 1).reshape(K, 1, T)
        g_q = torch.bmm(g_s, self.X).reshape(K, d, 1).permute(0, 2, 1).permute(0, 2, 1).squeeze(2)
        self.W.grad = self.xq_t.mm(g_q)
        return loss


def _finite_losses(losses: list) -> list[float]:
    """The per-step losses (0-d tensors) as floats, one host read; ValueError if one is not finite."""
    values = torch.stack(losses).tolist() if losses else []
    if not all(math.isfinite(v) for v in values):
        raise ValueError("fine-tuning loss is not finite")
    return values


def finetune(
    model: ICAttention,
    train: Prompts,
    test: Prompts | EmbeddedPrompts,
    steps: int = 200,
    lr: float = 0.05,
    record_every: int | None = None,
    init: tuple | None = None,
) -> FinetuneResult:
    """Full-batch Adam (betas 0.9, 0.999, no weight decay) on the cross-entropy of the training
    prompts, the memory frozen (docs/icrecall.md) [derived]; accuracy and metrics on ``test``.

    With ``record_every`` the trajectory (test accuracy, query share, pair uniformity, imbalance,
    training loss) is recorded at step 0, every ``record_every`` steps and at the end, in
    ``extra["trajectory"]``; it does not change the optimisation. ``extra["correct_init"]`` and
    ``extra["correct"]`` hold the per-sequence correctness on ``test`` at init and after.

    ``test`` may come embedded (:meth:`ICAttention.embed_prompts`) and ``init`` may be
    :func:`evaluate` of this model on ``test`` before any step (shared by the runs that start from
    the same model: only the training set differs); the model is evaluated once per state, so the
    last checkpoint's evaluation is the final one, and with ``steps = 0`` the init one. Evaluations
    change neither the parameters nor the optimiser, and the training inputs X and V are computed
    once: the numbers are those of one evaluation per use and V recomputed every step
    (tests/icrecall/test_finetune_identity.py)."""
    if int(steps) != steps or steps < 0:
        raise ValueError(f"steps={steps} violates the hypothesis steps >= 0")
    if record_every is not None and (int(record_every) != record_every or record_every < 1):
        raise ValueError(f"record_every={record_every} violates the hypothesis record_every >= 1")
    if not isinstance(test, EmbeddedPrompts):
        test = model.embed_prompts(test)
    acc0, alpha0, ok0 = evaluated = evaluate(model, test) if init is None else init
    trajectory = [_checkpoint(model, test, 0, None, evaluated)[0]] if record_every else []
    X = model.embed(train)
    V = model.values(X)
    y = torch.as_tensor(train.target, device=X.device)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = _optimiser(params, lr)
    # the losses stay on the device, read once per checkpoint and at the end (no host
    # synchronisation per step); a non-finite loss raises at the next read
    losses = []
    manual = _FullStep.build(model, X, V, y) if isinstance(opt, CpuAdam) else None
    # without autograd (the manual step) the whole loop runs with gradients off
    with _gc_paused(), contextlib.nullcontext() if manual is None else torch.no_grad():
        for step in range(1, int(steps) + 1):
            opt.zero_grad()
            if manual is not None:
                loss = manual()
            else:
                logits, _ = model(X, V)
                loss = torch.nn.functional.cross_entropy(logits, y)
                loss.backward()
            opt.step()
            losses.append(loss.detach())
            if record_every and (step % int(record_every) == 0 or step == int(steps)):
                _finite_losses(losses)
                row, evaluated = _checkpoint(model, test, step, float(losses[-1]))
                trajectory.append(row)
    losses = _finite_losses(losses)
    if not record_every and steps:
        evaluated = evaluate(model, test)
    acc, alpha, ok = evaluated  # the last checkpoint (at step = steps) or, with steps = 0, the init
    extra = {"correct_init": ok0, "correct": ok}
    if record_every:
        extra["trajectory"] = trajectory
    return FinetuneResult(
        acc0, acc, pattern_metrics(alpha0), pattern_metrics(alpha), losses, model.omega, extra
    )
