"""Covariance-aware edits of the inserted gated MLP: ROME- and MEMIT-style.

Both edit only W_down of the gated MLP in the model's MLP slot; attention never changes.

* :func:`key_covariance` [reference: ROME's second moment of the keys]: C = (1/N) sum_n h_n h_n^T
  over the MLP's hidden activations h = (W_up x + b_up) * ReLU(W_gate x + b_gate) at inputs x
  (the MLP inputs of a set of recall contexts), plus a ridge eps * tr(C)/m * I [derived choice,
  eps = 1e-4] so that C is invertible when m exceeds the rank of the sample (m = 576 > 64 keys).
  The edited key's k* is, as in ROME, the mean hidden activation over that key's contexts
  (:func:`key_hidden`), not the clean key's.
* :func:`rome_edit` [reference: Meng et al. 2022, ROME, eq. 2]: for each edited key in turn,
  W <- W + (v* - W k* - b) (C^-1 k*)^T / (k*^T C^-1 k*), with k* the hidden activation at the
  clean key. The update changes the output at k* to v* exactly, and moves every other output by
  (C^-1 k*)^T h / (k*^T C^-1 k*) times the residual, small when h is near-orthogonal to k* in the
  C^-1 metric.
* :func:`memit_edit` [reference: Meng et al. 2023, MEMIT, batched least squares]: all k edits at
  once, Delta = R K^T (lam C0 + K K^T)^-1 with K (m x k) the edited keys' k*, R (d x k) their
  residuals v* - W K - b, C0 = sum_n h_n h_n^T over the contexts of the UNEDITED keys (the
  preserved memories; MEMIT's K0 K0^T) plus the ridge, and lam = 1: the minimiser of
  ||(W + Delta) K + b - V*||^2 + lam * sum_n ||Delta h_n||^2.

v* is the target of :func:`constructions.fact_mlp.edit.rank_one_edit` (the unedited output of a
key that the original map sends to the new value).
"""

from __future__ import annotations

import numpy as np
import torch

from constructions.fact_mlp.edit import _gated_module, edit_targets, hidden
from constructions.fact_mlp.facts import FactSet
from constructions.fact_mlp.transformer import OneLayerRecallTransformer, clone_model

#: ridge of the key covariance, relative to its mean eigenvalue tr(C)/m
RIDGE = 1e-4


def context_hidden(model: OneLayerRecallTransformer, tokens) -> torch.Tensor:
    """(N, m) hidden activations of the model's gated MLP at its inputs on ``tokens``."""
    mlp = _gated_module(model)
    with torch.no_grad():
        X = model.normed(torch.as_tensor(np.asarray(tokens), device=model.embedding.device))
        return hidden(mlp, X)


def key_hidden(H: torch.Tensor, key_ids, n_facts: int) -> torch.Tensor:
    """(F, m): per key, the mean of the rows of H (hidden activations of contexts) holding it."""
    key_ids = np.asarray(key_ids)
    missing = sorted(set(range(n_facts)) - set(key_ids.tolist()))
    if missing:
        raise ValueError(f"keys {missing[:5]} have no context: k* is undefined")
    return torch.stack(
        [H[torch.as_tensor(np.flatnonzero(key_ids == i), device=H.device)].mean(0) for i in range(n_facts)]
    )


def key_covariance(H: torch.Tensor, ridge: float = RIDGE, normalise: bool = True) -> torch.Tensor:
    """C = H^T H (/ N when ``normalise``) + ridge * tr(.)/m * I for hidden activations H (N x m)."""
    if not ridge > 0:
        raise ValueError(f"ridge={ridge} violates the hypothesis ridge > 0 (C must be invertible)")
    if H.shape[0] < 1:
        raise ValueError("no hidden activations: the key covariance is undefined")
    C = H.T @ H
    if normalise:
        C = C / H.shape[0]
    m = C.shape[0]
    scale = torch.trace(C) / m
    if not bool(torch.isfinite(scale)) or float(scale) <= 0.0:
        raise ValueError("the hidden activations are zero or not finite: no key covariance")
    return C + ridge * scale * torch.eye(m, dtype=C.dtype, device=C.device)


def _check(C, m):
    if C.shape != (m, m):
        raise ValueError(f"covariance shape {tuple(C.shape)} does not match hidden width {m}")


def rome_edit(
    model: OneLayerRecallTransformer, new_map, edited, C: torch.Tensor, kstar: torch.Tensor
) -> OneLayerRecallTransformer:
    """A copy of ``model`` with one covariance-weighted rank-one edit per edited key, in turn;
    ``kstar`` (F, m) from :func:`key_hidden`."""
    out = clone_model(model)
    mlp = _gated_module(out)
    _check(C, mlp.down.weight.shape[1])
    with torch.no_grad():
        targets = edit_targets(model, mlp, new_map, edited)
        for i, v in zip(np.asarray(edited), targets):
            k = kstar[i]
            u = torch.linalg.solve(C, k)
            denom = k @ u
            if not float(denom) > 0.0:
                raise ValueError(f"key {i} has k^T C^-1 k = {float(denom)}: no rank-one edit")
            resid = v - mlp.down(k)
            mlp.down.weight += torch.outer(resid, u) / denom
    out.mlp_facts = FactSet(out.mlp_facts.keys, out.mlp_facts.values, np.asarray(new_map, dtype=np.int64))
    return out


def memit_edit(
    model: OneLayerRecallTransformer, new_map, edited, C0: torch.Tensor, kstar: torch.Tensor, lam: float = 1.0
) -> OneLayerRecallTransformer:
    """A copy of ``model`` with the batched least-squares edit of the module docstring; C0 is
    :func:`key_covariance` (normalise=False) of the unedited keys' context activations."""
    if not lam > 0:
        raise ValueError(f"lam={lam} violates the hypothesis lam > 0")
    out = clone_model(model)
    mlp = _gated_module(out)
    _check(C0, mlp.down.weight.shape[1])
    idx = torch.as_tensor(np.asarray(edited), device=out.embedding.device)
    with torch.no_grad():
        targets = edit_targets(model, mlp, new_map, edited)  # (k, d)
        Kh = kstar[idx].T  # (m, k)
        R = targets.T - mlp.down(Kh.T).T  # (d, k)
        A = lam * C0 + Kh @ Kh.T
        delta = torch.linalg.solve(A, Kh @ R.T).T  # R K^T A^-1 (A symmetric)
        mlp.down.weight += delta
    out.mlp_facts = FactSet(out.mlp_facts.keys, out.mlp_facts.values, np.asarray(new_map, dtype=np.int64))
    return out
