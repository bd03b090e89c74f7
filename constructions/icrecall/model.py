"""The one-layer attention model of IC-recall in torch, and its fine-tuning (spec §5.3-§5.4).

[derived] formalisation: scores s_j = x_T^T W_KQ x_j over the T = 2n + 1 positions (the query
attends to itself), alpha = softmax(s), z = x_T + omega sum_j alpha_j x_j, logits
gamma u_a^T F(z) over all R D answers, cross-entropy on a*(s_q, r); F is frozen.

Parametrisations of W_KQ:
- ``"full"`` (P-full, the model class the paper analyses): W_KQ in R^{d x d}, init 4 I, trained;
  with ``slots=True`` every token carries its slot embedding p_SUBJ / p_ANS / p_QUERY.
- ``"struct"`` (P-struct): s_j = beta <x_T, x_j> + b_{slot(j)}, four trainable numbers,
  init (4, 0, 0, 0).
omega is fixed (2 / rho by default) or, with ``train_omega``, log omega is trained.

Randomness only through explicit torch / numpy Generators; the device is a string from the caller.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from constructions.icrecall.patterns import pattern_metrics, token_embeddings
from constructions.icrecall.world import Prompts, TripletMLP, World, sample_direct

PARAMETRISATIONS = ("full", "struct")


class TripletMemory:
    """The constructed triplet MLP in torch, frozen (spec §5.2) [derived].

    logits(z) = gamma U F(z) = gamma c(z) G with c_a(z) = sum_{f: a*(f) = a} ReLU(<e_s, z> +
    <e_r, z> - theta) and G = U U^T: the same function as the explicit m-neuron MLP, in
    O((S + R) d + S R + V^2) per input (the pre-activation factorises because w_f = e_s + e_r).
    """

    def __init__(self, mlp: TripletMLP, logit_scale: float, device="cpu", dtype=torch.float64):
        w = mlp.world
        kw = dict(device=device, dtype=dtype)
        self.subj = torch.as_tensor(w.subj, **kw)
        self.rel = torch.as_tensor(w.rel, **kw)
        self.theta = float(mlp.theta)
        self.index = torch.as_tensor(w.answer.reshape(-1), device=device)
        self.n_ans = w.n_ans
        unemb = torch.as_tensor(w.unemb, **kw)
        self.gram = logit_scale * unemb @ unemb.T

    def logits(self, z: torch.Tensor) -> torch.Tensor:
        h = torch.relu((z @ self.subj.T)[:, :, None] + (z @ self.rel.T)[:, None, :] - self.theta)
        h = h.reshape(z.shape[0], -1)
        c = torch.zeros(z.shape[0], self.n_ans, dtype=z.dtype, device=z.device)
        c = c.index_add(1, self.index, h)
        return c @ self.gram


class TrainedMemory(torch.nn.Module):
    """A ReLU MLP F(z) = W2 ReLU(W1 z + b1) with logits gamma u_a^T F(z) (spec §5.4) [derived]."""

    def __init__(
        self,
        world: World,
        width: int,
        logit_scale: float,
        gen: torch.Generator,
        device="cpu",
        dtype=torch.float64,
    ):
        super().__init__()
        if int(width) != width or width < 1:
            raise ValueError(f"width={width} violates the hypothesis width >= 1")
        d = world.dim
        kw = dict(dtype=dtype)
        self.W1 = torch.nn.Parameter((torch.randn(width, d, generator=gen, **kw) / math.sqrt(d)).to(device))
        self.b1 = torch.nn.Parameter(torch.zeros(width, dtype=dtype, device=device))
        self.W2 = torch.nn.Parameter(
            (torch.randn(d, width, generator=gen, **kw) / math.sqrt(width)).to(device)
        )
        self.register_buffer("unemb", torch.as_tensor(world.unemb, dtype=dtype, device=device))
        self.logit_scale = float(logit_scale)

    def logits(self, z: torch.Tensor) -> torch.Tensor:
        f = torch.relu(z @ self.W1.T + self.b1) @ self.W2.T
        return self.logit_scale * f @ self.unemb.T


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
    """Train F on direct recall e_s + e_r -> a*(s, r) (spec §5.4) [derived]: Adam at ``lr``,
    batches of ``batch`` from :func:`sample_direct`, until the accuracy over all S R facts is
    >= target_acc (checked every 50 steps) or ``max_steps``. Returns (memory, steps, accuracy)."""
    mem = TrainedMemory(world, width, logit_scale, gen, device, dtype)
    opt = torch.optim.Adam(mem.parameters(), lr=lr)
    subj = torch.as_tensor(world.subj, dtype=dtype, device=device)
    rel = torch.as_tensor(world.rel, dtype=dtype, device=device)
    all_s, all_r = np.divmod(np.arange(world.n_facts), world.n_rel)
    z_all = subj[all_s] + rel[all_r]
    y_all = torch.as_tensor(world.answer[all_s, all_r], device=device)
    acc, step = 0.0, 0
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


def strict_accuracy(logits: torch.Tensor, target: torch.Tensor) -> float:
    """Fraction of rows whose target logit strictly beats every other (ties are errors)."""
    if torch.isnan(logits).any():
        raise ValueError("NaN in the logits")
    correct = logits.gather(1, target[:, None]).squeeze(1)
    others = logits.scatter(1, target[:, None], float("-inf")).amax(dim=1)
    return float((correct > others).double().mean())


class ICAttention(torch.nn.Module):
    """One-layer attention over the prompt with a frozen memory (spec §5.3) [derived]."""

    def __init__(
        self,
        world: World,
        memory,
        param: str = "full",
        slots: bool = True,
        omega: float | None = None,
        train_omega: bool = False,
        kq_init: float = 4.0,
        slot_values: bool = True,
        device="cpu",
        dtype=torch.float64,
    ):
        super().__init__()
        if param not in PARAMETRISATIONS:
            raise ValueError(f"param={param!r} must be one of {PARAMETRISATIONS}")
        if omega is None:
            if world.rho <= 0:
                raise ValueError("omega = 2/rho needs rho > 0; pass omega explicitly")
            omega = 2.0 / world.rho
        if omega <= 0:
            raise ValueError(f"omega={omega} violates the hypothesis omega > 0")
        self.world, self.memory, self.param = world, memory, param
        self.slots = bool(slots) and param == "full"
        self.slot_values = bool(slot_values)
        self.register_buffer("slot_emb", torch.as_tensor(world.slot, dtype=dtype, device=device))
        self.device, self.dtype = device, dtype
        kw = dict(dtype=dtype, device=device)
        if param == "full":
            self.W_KQ = torch.nn.Parameter(kq_init * torch.eye(world.dim, **kw))
        else:
            self.beta = torch.nn.Parameter(torch.tensor(kq_init, **kw))
            self.bias = torch.nn.Parameter(torch.zeros(3, **kw))
        log_omega = torch.tensor(math.log(omega), **kw)
        if train_omega:
            self.log_omega = torch.nn.Parameter(log_omega)
        else:
            self.register_buffer("log_omega", log_omega)

    @property
    def omega(self) -> float:
        return float(self.log_omega.detach().exp())

    def embed(self, prompts: Prompts) -> torch.Tensor:
        X = token_embeddings(self.world, prompts, slots=self.slots)
        return torch.as_tensor(X, dtype=self.dtype, device=self.device)

    def _slot_rows(self, T: int) -> torch.Tensor:
        """(T, d): the slot embedding of each position."""
        slot = torch.zeros(T, dtype=torch.long, device=self.slot_emb.device)
        slot[1:-1:2] = 1
        slot[-1] = 2
        return self.slot_emb[slot]

    def attention(self, X: torch.Tensor) -> torch.Tensor:
        xq = X[:, -1]
        if self.param == "full":
            scores = torch.einsum("kd,ktd->kt", xq @ self.W_KQ, X)
        else:
            T = X.shape[1]
            slot = torch.zeros(T, dtype=torch.long, device=X.device)
            slot[1:-1:2] = 1
            slot[-1] = 2
            scores = self.beta * torch.einsum("kd,ktd->kt", xq, X) + self.bias[slot]
        return torch.softmax(scores, dim=1)

    def forward(self, X: torch.Tensor):
        alpha = self.attention(X)
        V = X if self.slot_values or not self.slots else X - self._slot_rows(X.shape[1])
        z = V[:, -1] + self.log_omega.exp() * torch.einsum("kt,ktd->kd", alpha, V)
        return self.memory.logits(z), alpha


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


def evaluate(model: ICAttention, prompts: Prompts, chunk: int = 2048):
    """(accuracy, attention (K, T) as numpy, per-sequence correctness) on ``prompts``."""
    accs, alphas, correct = [], [], []
    with torch.no_grad():
        for start in range(0, len(prompts), chunk):
            sl = slice(start, start + chunk)
            part = Prompts(*(getattr(prompts, f)[sl] for f in Prompts.__dataclass_fields__))
            logits, alpha = model(model.embed(part))
            tgt = torch.as_tensor(part.target, device=logits.device)
            c = logits.gather(1, tgt[:, None]).squeeze(1)
            o = logits.scatter(1, tgt[:, None], float("-inf")).amax(dim=1)
            correct.append((c > o).cpu().numpy())
            alphas.append(alpha.cpu().numpy())
    ok = np.concatenate(correct)
    return float(ok.mean()), np.concatenate(alphas), ok


def _checkpoint(model: ICAttention, test: Prompts, step: int, loss, evaluated=None) -> dict:
    acc, alpha, _ = evaluate(model, test) if evaluated is None else evaluated
    m = pattern_metrics(alpha)
    return {
        "step": step,
        "acc": acc,
        "loss": loss,
        **{k: m[k] for k in ("query_share", "pair_uniformity", "imbalance", "subject_share", "answer_share")},
    }


def _finite_losses(losses: list) -> list[float]:
    """The per-step losses (0-d tensors) as floats, one host read; ValueError if one is not finite."""
    values = torch.stack(losses).tolist() if losses else []
    if not all(math.isfinite(v) for v in values):
        raise ValueError("fine-tuning loss is not finite")
    return values


def finetune(
    model: ICAttention,
    train: Prompts,
    test: Prompts,
    steps: int = 200,
    lr: float = 0.05,
    record_every: int | None = None,
) -> FinetuneResult:
    """Full-batch Adam (betas 0.9, 0.999, no weight decay) on the cross-entropy of the training
    prompts, the memory frozen (spec §5.3) [derived]; accuracy and metrics on ``test``.

    With ``record_every`` the trajectory (test accuracy, query share, pair uniformity, imbalance,
    training loss) is recorded at step 0, every ``record_every`` steps and at the end, in
    ``extra["trajectory"]``; it does not change the optimisation. ``extra["correct_init"]`` and
    ``extra["correct"]`` hold the per-sequence correctness on ``test`` at init and after."""
    if int(steps) != steps or steps < 0:
        raise ValueError(f"steps={steps} violates the hypothesis steps >= 0")
    if record_every is not None and (int(record_every) != record_every or record_every < 1):
        raise ValueError(f"record_every={record_every} violates the hypothesis record_every >= 1")
    acc0, alpha0, ok0 = evaluate(model, test)
    trajectory = [_checkpoint(model, test, 0, None, (acc0, alpha0, ok0))] if record_every else []
    X = model.embed(train)
    y = torch.as_tensor(train.target, device=X.device)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=lr, betas=(0.9, 0.999))
    # the losses stay on the device, read once per checkpoint and at the end (issue 17.4: no
    # host synchronisation per step); a non-finite loss raises at the next read
    losses = []
    for step in range(1, int(steps) + 1):
        logits, _ = model(X)
        loss = torch.nn.functional.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.detach())
        if record_every and (step % int(record_every) == 0 or step == int(steps)):
            _finite_losses(losses)
            trajectory.append(_checkpoint(model, test, step, float(losses[-1])))
    losses = _finite_losses(losses)
    acc, alpha, ok = evaluate(model, test)
    extra = {"correct_init": ok0, "correct": ok}
    if record_every:
        extra["trajectory"] = trajectory
    return FinetuneResult(
        acc0, acc, pattern_metrics(alpha0), pattern_metrics(alpha), losses, model.omega, extra
    )
