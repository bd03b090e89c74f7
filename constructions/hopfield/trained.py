"""A gradient-trained modern Hopfield memory (the capacity atlas's trained hopfield family).

Model [derived; the retrieval map is Ramsauer's update [reference], docs/hopfield.md#setting]:
the memory matrix X = [x_1 ... x_N] in R^(d x N) of the ungated modern Hopfield network
f(xi) = X softmax(beta X^T xi), with every column held on the sphere of radius M = K sqrt(d - 1)
(Ramsauer's R4 setting, the one of the explicit construction ``hopfield.storing_dim``):
x_j = M w_j / ||w_j||. Trained parameters: W in R^(d x N), P = d N (every one of them).

Task (hetero-associative): N cues q_1 ... q_N, uniform on the same sphere, fixed (the input, not
parameters), and a bijection pi of the N memories; cue q_i must retrieve memory pi(i). Stored,
the criterion of the construction applied to this map: one update from the cue lands within R1's
radius of its memory, ||f(q_i) - x_pi(i)|| <= 1/(beta N M), for all i. The explicit construction
x_pi(i) = q_i is exactly the construction of ``hopfield.storing_dim`` (query = memory) on the same
draw; training starts from W ~ N(0, 1) instead, independent of the cues.

Training: full-batch Adam on the cross-entropy of the retrieval distribution softmax(beta X^T q_i)
against pi(i), summed over the batch of independent problems (each problem's parameters get only
its own gradient), with W re-projected to unit columns after every step (``project``; without it
Adam's steps, orthogonal to w_j, grow ||w_j|| and shrink the effective step: in the pilots
training then needed 250-750 steps at N = 64-128 instead of <= 460); float64. A problem is
stored at step s when the weights after s steps meet the criterion (checked every
``check_every`` steps and at the last); its first such s is recorded.

Problems of different d are batched in one (B, D, N) tensor padded with zeros: a padded
coordinate of a cue is 0, so its memory coordinate gets no gradient and stays 0, and the norms,
logits and errors are those of the d-dimensional problem.
"""

from __future__ import annotations

import math

import numpy as np

from theory.validate import require_int, require_real


def problem(n_patterns: int, dim: int, radius: float, gen: np.random.Generator):
    """(cues (d, N), pi (N,), W0 (d, N)) of one draw: cues uniform on the sphere of ``radius``,
    pi a uniform bijection, W0 ~ N(0, 1) (module doc), all from ``gen`` in that order."""
    n = require_int("N", n_patterns, 2)
    d = require_int("d", dim, 2)
    r = require_real("radius", radius, 0, low_open=True)
    Z = gen.standard_normal((d, n))
    cues = r * Z / np.linalg.norm(Z, axis=0, keepdims=True)
    return cues, gen.permutation(n), gen.standard_normal((d, n))


def _batch(problems, radii):
    import torch

    n = problems[0][0].shape[1]
    if any(c.shape[1] != n for c, _, _ in problems):
        raise ValueError("every problem of one batch must have the same N")
    D = max(c.shape[0] for c, _, _ in problems)
    Q = torch.zeros(len(problems), D, n, dtype=torch.float64)
    W = torch.zeros_like(Q)
    for b, (c, _, w0) in enumerate(problems):
        Q[b, : c.shape[0]] = torch.from_numpy(c)
        W[b, : c.shape[0]] = torch.from_numpy(w0)
    pi = torch.from_numpy(np.stack([p for _, p, _ in problems])).long()
    M = torch.tensor([float(r) for r in radii], dtype=torch.float64)
    return Q, W, pi, M


def memories(W, M):
    """X = M w_j / ||w_j||, column-wise, for a batch W (B, D, N) and radii M (B,)."""
    return M[:, None, None] * W / W.norm(dim=1, keepdim=True)


def retrieval_errors(X, Q, pi, beta: float):
    """||f(q_i) - x_pi(i)|| for every cue of every problem: (B, N), float64 (module doc)."""
    import torch

    logits = beta * torch.einsum("bdi,bdj->bij", Q, X)  # [b, i, j] = beta q_i . x_j
    P = torch.softmax(logits, dim=-1)
    P = P - torch.nn.functional.one_hot(pi, P.shape[-1]).to(P.dtype)
    return torch.einsum("bdj,bij->bdi", X, P).norm(dim=1)


def train(
    problems, radii, beta: float, steps: int, lr: float, check_every: int, project: bool = True
) -> dict:
    """Train a batch of problems (module doc). Returns per problem the first storing step (None
    if none within ``steps``), the cross-entropy when training stopped (after ``steps`` steps, or
    at the check where every problem stored) and max_i error / tolerance at the last check."""
    import torch

    beta = require_real("beta", beta, 0, low_open=True)
    steps = require_int("steps", steps, 0)
    check_every = require_int("check_every", check_every, 1)
    lr = require_real("lr", lr, 0, low_open=True)
    if len(problems) != len(radii) or not problems:
        raise ValueError(f"need one radius per problem, got {len(problems)} problems, {len(radii)} radii")
    Q, W, pi, M = _batch(problems, radii)
    n = Q.shape[-1]
    tol = 1.0 / (beta * n * M)  # R1's radius 1/(beta N M) per problem
    W.requires_grad_(True)
    opt = torch.optim.Adam([W], lr=lr)
    first = [None] * len(problems)
    ratio = torch.full((len(problems),), math.inf, dtype=torch.float64)
    for step in range(steps + 1):
        if step % check_every == 0 or step == steps:
            with torch.no_grad():
                err = retrieval_errors(memories(W, M), Q, pi, beta)
                if not torch.all(torch.isfinite(err)):
                    raise ValueError(f"retrieval error is NaN at step {step} (N={n})")
                ratio = err.max(dim=1).values / tol
                for b in torch.nonzero(ratio <= 1.0).flatten().tolist():
                    if first[b] is None:
                        first[b] = step
            if all(f is not None for f in first):
                break
        if step == steps:
            break
        logits = beta * torch.einsum("bdi,bdj->bij", Q, memories(W, M))
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, n), pi.reshape(-1), reduction="none"
        ).view(len(problems), n)
        total = loss.mean(dim=1).sum()
        if not torch.isfinite(total):
            raise ValueError(f"training loss is NaN at step {step} (N={n})")
        opt.zero_grad()
        total.backward()
        opt.step()
        if project:
            with torch.no_grad():
                W /= W.norm(dim=1, keepdim=True)
    with torch.no_grad():
        logits = beta * torch.einsum("bdi,bdj->bij", Q, memories(W, M))
        ce = torch.nn.functional.cross_entropy(logits.reshape(-1, n), pi.reshape(-1), reduction="none")
        ce = ce.view(len(problems), n).mean(dim=1)
    return {"first_step": first, "final_ce": ce.tolist(), "error_over_tol": ratio.tolist()}
