"""The constructions the encoder-decoder is compared with (docs/fact_mlp.md#experimental-settings).

Each returns a :class:`constructions.fact_mlp.facts.FactMLP` (forward in value space, parameter
counts, the fact set, the gated form where one exists).
"""

from __future__ import annotations

import math
from typing import Callable, Iterable

import numpy as np

from constructions import search
from constructions.adam import adam_update
from constructions.fact_mlp.facts import FactMLP, FactSet, require_fact_set
from constructions.seeding import torch_generator
from constructions.tasks import check_generator, require_size
from theory.validate import require_int


def linear_memory(facts: FactSet) -> FactMLP:
    """Linear associative memory [reference, standard]: W = sum_i v_{f(i)} k_i^T, M(x) = W x.
    d^2 parameters whatever F is.

    >>> import numpy as np
    >>> from constructions.fact_mlp import fact_set
    >>> linear_memory(fact_set(4, 4, 16, np.random.default_rng(0))).params_standard
    256
    """
    require_fact_set(facts)
    W = facts.targets.T @ facts.keys
    d = facts.d_model
    return FactMLP(
        name="linear",
        forward=lambda X: np.asarray(X, dtype=np.float64) @ W.T,
        params_standard=d * d,
        params_unique=d * d,
        facts=facts,
        size={"hidden": d},
    )


def hermite(z: np.ndarray, degree: int) -> np.ndarray:
    """Normalised probabilists' Hermite polynomial h_p(z) = He_p(z)/sqrt(p!) (h_1(z) = z).

    >>> import numpy as np
    >>> hermite(np.array([2.0]), 2).round(6).tolist()  # (z^2 - 1) / sqrt(2)
    [2.12132]
    """
    degree = require_size("degree", degree, 1, "p", "Hermite degree")
    prev, cur = np.ones_like(z), z
    for p in range(1, degree):
        prev, cur = cur, z * cur - p * prev
    return cur / math.sqrt(math.factorial(degree))


def ntk_memory(facts: FactSet, hidden: int, rng: np.random.Generator, degree: int = 1) -> FactMLP:
    """Prior-work ("NTK") associative MLP [reference; Nichani, Lee & Bietti 2025]:
    G (m, d) N(0,1); D (d, m) Gaussian with unit-norm columns;
    U = (1/m) sum_i [h_p(G k_i) * (D^T v_{f(i)})] k_i^T; M(x) = D[(U x) * ReLU(G x)]. 3dm params.

    >>> import numpy as np
    >>> from constructions.fact_mlp import fact_set
    >>> ntk_memory(fact_set(4, 4, 8, np.random.default_rng(0)), 16, np.random.default_rng(1)).params_standard
    384
    """
    require_fact_set(facts)
    check_generator(rng)
    K, Vf = facts.keys, facts.targets
    d, m = facts.d_model, require_size("hidden", hidden, 1, "m")
    degree = require_int("degree", degree, 1)
    G = rng.standard_normal((m, d))
    D = rng.standard_normal((d, m))
    D /= np.linalg.norm(D, axis=0, keepdims=True)
    U = ((hermite(K @ G.T, degree) * (Vf @ D)).T @ K) / m  # (m, d)
    gated = {"W_gate": G, "W_up": U, "W_down": D}

    def forward(X):
        X = np.asarray(X, dtype=np.float64)
        return ((X @ U.T) * np.maximum(X @ G.T, 0.0)) @ D.T

    return FactMLP(
        name="ntk",
        forward=forward,
        params_standard=3 * d * m,
        params_unique=3 * d * m,
        facts=facts,
        size={"hidden": m},
        gated=gated,
    )


def hebbian_readout(
    facts: FactSet, hidden: int, rng: np.random.Generator, whitened: bool, ridge: float = 1e-6
) -> FactMLP:
    """Hebbian readout [reference]: phi(x) = (A0 x) * (A1 x) / sqrt(m); unwhitened W = V_f^T Phi / F,
    whitened W = V_f^T Phi (Phi^T Phi + lambda I)^-1 (lambda = 1e-6). M(x) = W phi(x).
    3dm parameters (A0, A1, W); a gated MLP without the ReLU (W_gate = A0 acts linearly).

    >>> import numpy as np
    >>> from constructions.fact_mlp import fact_set
    >>> facts = fact_set(4, 4, 8, np.random.default_rng(0))
    >>> hebbian_readout(facts, 16, np.random.default_rng(1), whitened=True).params_standard
    384
    """
    require_fact_set(facts)
    check_generator(rng)
    K, Vf = facts.keys, facts.targets
    d, m, F = facts.d_model, require_size("hidden", hidden, 1, "m"), facts.n_facts
    A0 = rng.standard_normal((m, d))
    A1 = rng.standard_normal((m, d))

    def features(X):
        X = np.asarray(X, dtype=np.float64)
        return (X @ A0.T) * (X @ A1.T) / math.sqrt(m)

    Phi = features(K)
    if whitened:
        W = np.linalg.solve(Phi.T @ Phi + ridge * np.eye(m), Phi.T @ Vf).T
    else:
        W = Vf.T @ Phi / F
    return FactMLP(
        name="hebbian_whitened" if whitened else "hebbian",
        forward=lambda X: features(X) @ W.T,
        params_standard=3 * d * m,
        params_unique=3 * d * m,
        facts=facts,
        size={"hidden": m},
        info={"whitened": bool(whitened)},
    )


def train_gated_mlp(
    facts: FactSet,
    hidden: int,
    seed: int,
    *,
    epochs: int = 10000,
    lr: float = 1e-3,
    device: str = "cpu",
    loss_stop: float = 1e-7,
    biases: bool = True,
    manual_gradient: bool = True,
) -> FactMLP:
    """Gradient-descent baseline [reference protocol]: y = W_down[(W_up x + b_up) * ReLU(W_gate x + b_gate)]
    + b_down, cross-entropy on logits M(k) V^T in float32, Adam lr 1e-3 with cosine decay to
    1e-6, full batch, stop when loss < 1e-7 (or when every fact is decoded with margin, which
    cannot change the accuracy-1 verdict). 3dm + 2m + d params with biases.

    manual_gradient: each epoch's gradient and Adam step are written out with the kernels
    autograd and ``torch.optim.Adam`` call on the same operands (bitwise the autograd epoch,
    which ``manual_gradient=False`` runs; tests/fact_mlp/test_gd_batch.py compares them).
    ``hidden``, ``seed`` and ``epochs`` are integers (4.0 is 4, 2.5 a ValueError naming it).

    >>> import numpy as np
    >>> from constructions.fact_mlp import fact_set
    >>> facts = fact_set(4, 4, 8, np.random.default_rng(0))
    >>> train_gated_mlp(facts, 8, seed=0, epochs=2).params_standard
    216
    """
    import torch

    require_fact_set(facts)
    hidden, seed = require_size("hidden", hidden, 1, "m"), require_int("seed", seed, 0)
    epochs = require_int("epochs", epochs, 0)

    # Tiny full-batch problems: intra-op threads only add contention (50x slower on a loaded
    # 2-core machine), so train on one thread and restore the caller's setting afterwards.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _train(facts, hidden, seed, epochs, lr, device, loss_stop, biases, manual_gradient)
    finally:
        torch.set_num_threads(threads)


def _train(facts, hidden, seed, epochs, lr, device, loss_stop, biases, manual_gradient=False):
    import torch

    gen = torch_generator(int(seed))
    d, m = facts.d_model, int(hidden)
    K = torch.as_tensor(facts.keys, dtype=torch.float32, device=device)
    V = torch.as_tensor(facts.values, dtype=torch.float32, device=device)
    f = torch.as_tensor(facts.fact_map, device=device)

    def init(shape, fan_in):
        return (torch.randn(shape, generator=gen) / math.sqrt(fan_in)).to(device).requires_grad_()

    Wg, Wu, Wd = init((m, d), d), init((m, d), d), init((d, m), m)
    params = [Wg, Wu, Wd]
    bg = bu = bd = None
    if biases:
        bg, bu, bd = (torch.zeros(n, device=device, requires_grad=True) for n in (m, m, d))
        params += [bg, bu, bd]
    opt = torch.optim.Adam(params, lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(1, int(epochs)), eta_min=1e-6)

    def net(X):
        g = X @ Wg.T + (bg if biases else 0)
        u = X @ Wu.T + (bu if biases else 0)
        return (u * torch.relu(g)) @ Wd.T + (bd if biases else 0)

    if int(epochs) < 0:
        raise ValueError(f"epochs={epochs} violates the hypothesis epochs >= 0")
    epochs_run = 0
    with torch.no_grad():  # the loss at initialisation (reported when epochs = 0)
        loss = torch.nn.functional.cross_entropy(net(K) @ V.T, f)
    if manual_gradient:
        with torch.no_grad():
            epochs_run, loss = _manual_epochs(
                [q.detach() for q in params], K, V, f, biases, int(epochs), lr, loss_stop, loss
            )
        epochs = 0  # done
    for epoch in range(epochs):
        opt.zero_grad()
        logits = net(K) @ V.T
        loss = torch.nn.functional.cross_entropy(logits, f)
        loss.backward()
        opt.step()
        sched.step()
        epochs_run = epoch + 1
        if loss.item() < loss_stop:
            break
        if epoch % 50 == 49:
            with torch.no_grad():
                z = logits.detach()
                correct = z.gather(1, f[:, None]).squeeze(1)
                z = z.scatter(1, f[:, None], float("-inf"))
                if bool((correct - z.max(dim=1).values > 1e-3).all()):
                    break
    weights = {"W_gate": Wg, "W_up": Wu, "W_down": Wd}
    if biases:
        weights.update(b_gate=bg, b_up=bu, b_down=bd)
    gated = {k: w.detach().cpu().double().numpy() for k, w in weights.items()}

    def forward(X):
        from constructions.fact_mlp.facts import gated_forward

        return gated_forward(gated, X)

    n_params = 3 * d * m + ((2 * m + d) if biases else 0)
    return FactMLP(
        name="gd",
        forward=forward,
        params_standard=n_params,
        params_unique=n_params,
        facts=facts,
        size={"hidden": m},
        gated=gated,
        info={"epochs": epochs_run, "final_loss": float(loss.item())},
    )


def _manual_epochs(
    params: list, K, V, f, biases: bool, epochs: int, lr: float, loss_stop: float, loss
) -> tuple:
    """The epoch loop of :func:`_train` on ``params`` (updated in place), with the gradient and
    the Adam step written out: the nll gradient is -1/F at each target (constant), dz is the
    log_softmax backward, dy = dz V, dW_down = dy^T t (t = u * ReLU(g)), dt = dy W_down,
    du = dt * ReLU(g), dg = threshold backward of dt * u, dW = d^T K for both input maps and the
    biases their column sums (the kernels of mm's backward for a transposed right operand and of
    the broadcast add's sum_to). Returns (epochs run, last loss)."""
    import torch

    from constructions.adam import cosine_lrs

    Wg, Wu, Wd = params[:3]
    bg, bu, bd = params[3:] if biases else (0, 0, 0)
    F = len(f)
    gls = torch.zeros((F, V.shape[0]), dtype=K.dtype, device=K.device)
    total = torch.tensor(float(F), dtype=K.dtype, device=K.device)
    gls[torch.arange(F, device=K.device), f] = -(torch.ones((), dtype=K.dtype, device=K.device) / total)
    exp_avg = [torch.zeros_like(q) for q in params]
    exp_avg_sq = [torch.zeros_like(q) for q in params]
    lrs = cosine_lrs(lr, epochs)
    epochs_run = 0
    for epoch in range(epochs):
        g = K @ Wg.T + bg
        u = K @ Wu.T + bu
        rg = torch.relu(g)
        t = u * rg
        logits = (t @ Wd.T + bd) @ V.T
        ls = torch.log_softmax(logits, 1)
        loss = torch.nn.functional.nll_loss(ls, f)
        gy = torch._log_softmax_backward_data(gls, ls, 1, ls.dtype).mm(V)
        gt = gy.mm(Wd)
        gu = gt * rg
        gg = torch.ops.aten.threshold_backward(gt * u, rg, 0)
        grads = [gg.t().mm(K), gu.t().mm(K), gy.t().mm(t)]
        if biases:
            grads += [gg.sum_to_size(bg.shape), gu.sum_to_size(bu.shape), gy.sum_to_size(bd.shape)]
        adam_update(params, grads, exp_avg, exp_avg_sq, epoch + 1, lrs[epoch])
        epochs_run = epoch + 1
        if loss.item() < loss_stop:
            break
        if epoch % 50 == 49:
            correct = logits.gather(1, f[:, None]).squeeze(1)
            z = logits.scatter(1, f[:, None], float("-inf"))
            if bool((correct - z.max(dim=1).values > 1e-3).all()):
                break
    return epochs_run, loss


def smallest_size(
    build: Callable[[int], FactMLP], sizes: Iterable[int], ok: Callable[[FactMLP], bool] | None = None
) -> tuple[int | None, list[dict]]:
    """The smallest of ``sizes`` whose model ``build(size)`` passes ``ok`` (default: accuracy 1),
    by bisection over the sorted sizes (:func:`constructions.search.smallest_size`, assuming
    monotonicity). Returns (size or None, trace), one :func:`trace_row` per probe."""
    trace = []

    def stores(size: int) -> bool:
        trace.append(trace_row(size, build(size), ok))
        return trace[-1]["stored"]

    return search.smallest_size(sizes, stores).size, trace


def trace_row(size: int, mlp: FactMLP, ok: Callable[[FactMLP], bool] | None = None) -> dict:
    """One probe of a size search: size, accuracy, min margin, P_std and whether ``mlp`` stored
    (passes ``ok``; default: accuracy 1)."""
    acc, margin = mlp.decode()
    stored = bool(acc == 1.0) if ok is None else bool(ok(mlp))
    return {
        "size": size,
        "accuracy": acc,
        "min_margin": margin,
        "params": mlp.params_standard,
        "stored": stored,
    }
