"""What the gradient-descent claim modules share (verify.geometric.gd, .gd_transfer and
.gd_threshold): the source, the training parameters, the trained models shared through
``ctx.shared`` and the probe helpers. Registers no claim."""

from __future__ import annotations

import numpy as np
import torch

from constructions.device import one_thread
from constructions.geometric.train import TrainedModel, init_params, train_model
from constructions.seeding import torch_generator
from constructions.tasks import make_bijections
from theory.papers import paper
from verify.claims import Control, choice, rng_for

SRC = paper("geometric")
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
GD_KEYS = ("n_subjects", "n_relations", "mlp_width", "steps", "lr", "record_every", "train_dtype")
#: the control of the GD claims: parameter ``weights`` "init" (the claims' own value is "trained")
INIT = Control(
    "init",
    {"weights": "init"},
    "the same model at initialisation (same seed, same "
    "generator, no gradient step): nothing has been learned, so the criterion must fail",
)


def _dtype(p):
    if p["train_dtype"] not in ("float32", "float64"):
        raise ValueError(f"train_dtype={p['train_dtype']!r} must be 'float32' or 'float64'")
    return {"float32": torch.float32, "float64": torch.float64}[p["train_dtype"]]


def model_perms(p, ctx, seed):
    """The bijections of seed ``seed``'s training run (drawn from the run's seed only)."""
    return make_bijections(p["n_subjects"], p["n_relations"], rng_for(int(seed), "geometric.gd.model_perms.make_bijections"))


def trained(p, ctx, seed=None, freeze_subject=False, dim=None) -> TrainedModel:
    """The trained model (docs/geometric.md#the-trained-model) for parameters p and ``seed`` (default
    ctx.seed), trained once per run and shared through ctx.shared. With ``p["weights"] == "init"`` the model
    at initialisation: the same generator's init weights, no step (what the "init" controls measure)."""
    seed = ctx.seed if seed is None else int(seed)
    dim = p["dim"] if dim is None else dim
    init = choice(p, "weights", ("trained", "init")) == "init"  # "init": the control
    key = ("geometric.gd.model", *(p[k] for k in GD_KEYS), dim, freeze_subject, seed, init)

    def compute():
        perms = model_perms(p, ctx, seed)
        gen = torch_generator(seed)
        if init:
            params = init_params(
                p["n_subjects"], p["n_relations"], dim, p["mlp_width"], gen, _dtype(p), ctx.device
            )
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
                p["mlp_width"],
                steps=p["steps"],
                lr=p["lr"],
                generator=gen,
                freeze_subject=freeze_subject,
                record_every=p["record_every"],
                dtype=_dtype(p),
                device=ctx.device,
            )

    return ctx.shared(key, compute)


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


def _control_perms(p, ctx, seed):
    return make_bijections(p["n_subjects"], p["n_relations"], rng_for(int(seed), "geometric.gd.control_perms.make_bijections"))
