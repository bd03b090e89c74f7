"""What the gradient-descent claim modules share (verify.geometric.gd and .gd_transfer): the
training parameters, the trained models (one per setting and run, :func:`trained_model`) and the
probe helpers. Registers no claim."""

from __future__ import annotations

from typing import Mapping

import numpy as np
import torch

from constructions.device import one_thread
from constructions.geometric.train import TrainedModel, fact_chunk_rows, init_params, train_model
from constructions.seeding import torch_generator
from constructions.tasks import make_bijections, single_hop_dataset
from verify.claims import Context, Control, choice, rng_for, shared

GD_QUICK = {
    "n_subjects": 512,
    "n_relations": 4,
    "dim": 32,
    "mlp_width": 128,
    "steps": 200,
    "lr": 1e-2,
    "record_every": 25,
    "ridge": 1e-3,
    "seeds": 5,
    "train_dtype": "float32",
    "weights": "trained",
}
GD_FULL = {
    "n_subjects": 10000,
    "n_relations": 8,
    "dim": 64,
    "mlp_width": 256,
    "steps": 3000,
    "lr": 1e-2,
    "record_every": 250,
    "ridge": 1e-3,
    "seeds": 5,
    "train_dtype": "float32",
    "weights": "trained",
}
#: the control of the GD claims: parameter ``weights`` "init" (the claims' own value is "trained")
INIT = Control(
    "init",
    {"weights": "init"},
    "the same model at initialisation (same seed, same "
    "generator, no gradient step): nothing has been learned, so the criterion must fail",
)


def model_perms(n_subjects: int, n_relations: int, seed: int) -> np.ndarray:
    """The bijections of seed ``seed``'s training run (drawn from the run's seed only).

    >>> model_perms(5, 2, 0).shape
    (2, 5)
    """
    return make_bijections(
        n_subjects, n_relations, rng_for(int(seed), "geometric.gd.model_perms.make_bijections")
    )


def control_perms(n_subjects: int, n_relations: int, seed: int) -> np.ndarray:
    """Bijections independent of seed ``seed``'s training run (gd.superposition's control probe).

    >>> bool((control_perms(50, 2, 0) != model_perms(50, 2, 0)).any())
    True
    """
    return make_bijections(
        n_subjects, n_relations, rng_for(int(seed), "geometric.gd.control_perms.make_bijections")
    )


@shared
def trained_model(
    ctx,
    n_subjects: int,
    n_relations: int,
    dim: int,
    mlp_width: int,
    steps: int,
    lr: float,
    record_every: int,
    train_dtype: str,
    seed: int,
    freeze_subject: bool = False,
    init: bool = False,
) -> TrainedModel:
    """The trained model (docs/geometric.md#the-trained-model) of seed ``seed``, trained once per run
    (full-batch Adam on one thread, so the weights do not depend on the machine's thread count).
    With ``init`` the model at initialisation: the same generator's init weights, no step (what the
    "init" controls measure).

    >>> from verify.claims import Context
    >>> m = trained_model(Context(), 16, 2, 4, 8, 10, 1e-2, 5, "float32", seed=0, init=True)
    >>> m.history, m.perms.shape
    ({'step': [0]}, (2, 16))
    """
    if train_dtype not in ("float32", "float64"):
        raise ValueError(f"train_dtype={train_dtype!r} must be 'float32' or 'float64'")
    dtype = {"float32": torch.float32, "float64": torch.float64}[train_dtype]
    perms = model_perms(n_subjects, n_relations, seed)
    gen = torch_generator(seed)
    if init:
        params = init_params(n_subjects, n_relations, dim, mlp_width, gen, dtype, ctx.device)
        return TrainedModel(
            perms=perms,
            params=params,
            history={"step": [0]},
            snapshots=[(0, params["subject"].cpu().numpy(), params["unembed"].cpu().numpy())],
        )
    with one_thread():  # the trained weights must not depend on the machine's thread count
        return train_model(
            perms,
            dim,
            mlp_width,
            steps=steps,
            lr=lr,
            generator=gen,
            freeze_subject=freeze_subject,
            record_every=record_every,
            dtype=dtype,
            device=ctx.device,
        )


def trained(
    p: Mapping, ctx: Context, seed: int | None = None, freeze_subject: bool = False, dim: int | None = None
) -> TrainedModel:
    """:func:`trained_model` with the claim's parameters ``p`` (dimension ``p["dim"]`` unless
    ``dim``) and ``seed`` (default ctx.seed); with ``p["weights"] == "init"`` the model at
    initialisation.

    >>> trained({**GD_QUICK, "n_subjects": 16, "weights": "init"}, Context(), 3).history
    {'step': [0]}
    """
    return trained_model(
        ctx,
        p["n_subjects"],
        p["n_relations"],
        p["dim"] if dim is None else dim,
        p["mlp_width"],
        p["steps"],
        p["lr"],
        p["record_every"],
        p["train_dtype"],
        seed=ctx.seed if seed is None else int(seed),
        freeze_subject=freeze_subject,
        init=choice(p, "weights", ("trained", "init")) == "init",  # "init": the control
    )


def attribute_features(unembed, perms) -> np.ndarray:
    """X_s = concat_r U[pi_r(s)], shape (N, R*d): the learned attribute vectors of s's R attributes."""
    return np.concatenate([unembed[perms[r]] for r in range(perms.shape[0])], axis=1)


def ridge_fit(x, y, lam) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Ridge regression with intercept: returns (W, x_mean, y_mean) with y ~ (x - x_mean) W + y_mean."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    xm, ym = x.mean(0), y.mean(0)
    xc, yc = x - xm, y - ym
    w = np.linalg.solve(xc.T @ xc + lam * np.eye(x.shape[1]), xc.T @ yc)
    return w, xm, ym


def r2_score(y, pred) -> float:
    """1 - SS_res / SS_tot over all coordinates (SS_tot around the column means of y)."""
    return 1.0 - float(np.sum((y - pred) ** 2)) / float(np.sum((y - y.mean(0)) ** 2))


def probe_r2(e_subj, unembed, perms, lam, rng) -> float:
    """Held-out R^2 of e_s ~ X_s W: fit on a random 75% of subjects, score on the other 25%."""
    e_subj = np.asarray(e_subj, dtype=np.float64)
    n = e_subj.shape[0]
    order = rng.permutation(n)
    tr, te = order[: (3 * n) // 4], order[(3 * n) // 4 :]
    x = attribute_features(np.asarray(unembed, dtype=np.float64), perms)
    w, xm, ym = ridge_fit(x[tr], e_subj[tr], lam)
    return r2_score(e_subj[te], (x[te] - xm) @ w + ym)


def train_margin(model: TrainedModel) -> float:
    """The smallest margin over all N*R trained facts: min over facts of the target's logit less the
    largest other logit (float64). It is > 0 exactly when the train accuracy
    (:func:`constructions.geometric.train.train_accuracy`: the target is the strict argmax, ties are
    errors) is 1, and varies continuously from run to run.

    >>> m = trained({**GD_QUICK, "n_subjects": 16, "weights": "init"}, Context(), 3)
    >>> train_margin(m) < 0  # at initialisation most facts are wrong
    True
    """
    subj, rel, target = single_hop_dataset(model.perms)
    unembed = model.params["unembed"]
    rows = fact_chunk_rows(len(subj), unembed.shape[0])
    smallest = float("inf")
    for at in range(0, len(subj), rows):
        sl = slice(at, at + rows)
        logits = (model.hidden(subj[sl], rel[sl]) @ unembed.T).to(torch.float64)
        if not bool(torch.isfinite(logits).all()):
            raise ValueError("NaN or inf logits: the trained model's hypothesis of finite weights fails")
        idx = torch.as_tensor(target[sl], device=logits.device).long()
        own = logits.gather(1, idx[:, None])[:, 0]
        others = logits.scatter(1, idx[:, None], float("-inf")).max(dim=1).values
        smallest = min(smallest, float((own - others).min()))
    return smallest
