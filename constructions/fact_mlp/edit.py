"""Editing facts in the one-layer recall Transformer (MLP swap and rank-one edits, edit score).

Three methods, each applied to a copy of a trained model (attention never changes):

* ``swap`` [abstract: "swapping in a new MLP edits facts modularly"]: build a new fact MLP for the
  edited map on the same embedding table and swap it in (:func:`swap_edit`);
* ``rank_one`` [reference: ROME-style closed-form edit, Meng et al. 2022, with identity key
  covariance, our choice [derived]]: W_down <- W_down + (v_new - W_down h - b_down) h^T / (h^T h) at the
  edited key's hidden activation h, applied once per edited fact in turn (:func:`rank_one_edit`);
* ``finetune`` [reference: the FT baseline of ROME]: Adam on every parameter of the inserted MLP,
  on the edit prompts only, until they all decode to the new value (:func:`finetune_edit`).

Metrics [reference, ROME/CounterFact]: efficacy = fraction of edited facts recalled with the new
value in the edit contexts; paraphrase = the same in fresh junk contexts; specificity = fraction of
unedited facts still recalled with their old value; Score = harmonic mean of the three
(:func:`edit_score`).
"""

from __future__ import annotations

import numpy as np
import torch

from constructions.adam import adam_update
from constructions.fact_mlp.facts import FactMLP, FactSet
from constructions.fact_mlp.transformer import OneLayerRecallTransformer, clone_model, recall, swap_mlp
from constructions.tasks import check_generator
from theory.validate import require_int

METHODS = ("swap", "rank_one", "finetune")


def edit_fact_map(fact_map, n_edits: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(new map, edited key ids): ``n_edits`` distinct keys re-mapped to a value token drawn
    uniformly among the F - 1 others (values are key tokens, [0, F)).

    >>> import numpy as np
    >>> new, edited = edit_fact_map(np.arange(6), 2, np.random.default_rng(0))
    >>> len(edited), int((new != np.arange(6)).sum())
    (2, 2)
    """
    check_generator(rng)
    f = np.asarray(fact_map, dtype=np.int64)
    F = len(f)
    n_edits = require_int("n_edits", n_edits, 1)
    if not 1 <= n_edits <= F:
        raise ValueError(f"n_edits={n_edits} violates the hypothesis 1 <= k <= F={F}")
    edited = np.sort(rng.choice(F, n_edits, replace=False))
    new = f.copy()
    new[edited] = (f[edited] + rng.integers(1, F, len(edited))) % F
    return new, edited


def edit_score(efficacy: float, paraphrase: float, specificity: float) -> float:
    """Score = harmonic mean(Efficacy, Paraphrase, Specificity) [reference, ROME]; 0 when any is 0."""
    parts = (efficacy, paraphrase, specificity)
    for name, v in zip(("efficacy", "paraphrase", "specificity"), parts):
        if not 0.0 <= float(v) <= 1.0:
            raise ValueError(f"{name}={v} violates the hypothesis 0 <= {name} <= 1")
    if min(parts) == 0.0:
        return 0.0
    return 3.0 / sum(1.0 / float(v) for v in parts)


def edit_metrics(model: OneLayerRecallTransformer, new_map, edited, contexts, paraphrases) -> dict:
    """Efficacy, paraphrase, specificity and Score of an edited model.

    ``contexts`` = (tokens, key ids) holding every key (edit contexts for the edited keys, the
    specificity probe for the others); ``paraphrases`` = (tokens, key ids) of fresh contexts."""
    new_map = np.asarray(new_map)
    tok, keys = contexts
    is_edit = np.isin(keys, edited)
    if not is_edit.any() or is_edit.all():
        raise ValueError("contexts must hold both edited and unedited keys")
    ptok, pkeys = paraphrases
    p_edit = np.isin(pkeys, edited)
    eff = recall(model, tok[is_edit], keys[is_edit], new_map)[0]
    spec = recall(model, tok[~is_edit], keys[~is_edit], new_map)[0]
    para = recall(model, ptok[p_edit], pkeys[p_edit], new_map)[0]
    return {"efficacy": eff, "paraphrase": para, "specificity": spec, "score": edit_score(eff, para, spec)}


def swap_edit(model: OneLayerRecallTransformer, new_map, build) -> OneLayerRecallTransformer:
    """A copy of ``model`` holding ``build(task.facts(new_map))`` (a FactMLP) in its MLP slot."""
    edited = clone_model(model)
    mlp = build(model.task.facts(new_map))
    if not isinstance(mlp, FactMLP):
        raise ValueError("build must return a FactMLP")
    swap_mlp(edited, mlp)
    return edited


def _gated_module(model):
    mlp = model.mlp
    if not all(hasattr(mlp, n) for n in ("gate", "up", "down")):
        raise ValueError("this edit needs a gated MLP (gate, up, down) in the model's MLP slot")
    return mlp


def hidden(mlp, X: torch.Tensor) -> torch.Tensor:
    """Hidden activation h = (W_up x + b_up) * ReLU(W_gate x + b_gate) of a gated module."""
    return mlp.up(X) * torch.relu(mlp.gate(X))


def edit_targets(model: OneLayerRecallTransformer, mlp, new_map, edited) -> torch.Tensor:
    """(k, d) targets v*: for each edited key i, the unedited output M(k_j) of the key j that the
    *original* map sends to new_map[i] [derived choice]: an output the MLP already decodes to the
    new value (a permutation has exactly one such key)."""
    f_old = np.asarray(model.mlp_facts.fact_map)
    new_map = np.asarray(new_map)
    with torch.no_grad():
        outputs = mlp(model.embedding[: model.task.n_facts]).clone()  # outputs of the unedited MLP
    rows = []
    for i in np.asarray(edited):
        src = np.flatnonzero(f_old == new_map[i])
        if len(src) == 0:
            raise ValueError(
                f"no key maps to value {new_map[i]} in the original map: v_new "
                "is undefined for the rank-one edit"
            )
        rows.append(outputs[src[0]])
    return torch.stack(rows)


def rank_one_edit(model: OneLayerRecallTransformer, new_map, edited) -> OneLayerRecallTransformer:
    """A copy of ``model`` with the ROME-style rank-one edits of the module docstring (identity
    key covariance). v_new is :func:`edit_targets`; h is the hidden activation at the clean key
    k_i (= RMSNorm(k_i))."""
    out = clone_model(model)
    mlp = _gated_module(out)
    new_map = np.asarray(new_map)
    K = out.embedding[: model.task.n_facts]
    with torch.no_grad():
        targets = edit_targets(model, mlp, new_map, edited)
        for i, v in zip(np.asarray(edited), targets):
            h = hidden(mlp, K[i : i + 1])[0]
            if float(h @ h) == 0.0:
                raise ValueError(f"key {i} has a zero hidden activation: no rank-one edit exists")
            resid = v - mlp(K[i : i + 1])[0]
            mlp.down.weight += torch.outer(resid, h) / (h @ h)
    out.mlp_facts = FactSet(out.mlp_facts.keys, out.mlp_facts.values, new_map.astype(np.int64))
    return out


def finetune_edit(
    model: OneLayerRecallTransformer,
    new_map,
    edited,
    contexts,
    steps: int = 300,
    lr: float = 1e-3,
    full_map: bool = False,
    manual_gradient: bool = True,
) -> tuple[OneLayerRecallTransformer, int]:
    """A copy of ``model`` whose MLP parameters (all of them) are trained by Adam with
    cross-entropy on the edit prompts (the edited keys' entries of ``contexts``; with
    ``full_map`` every entry of ``contexts``, targets from the whole edited map: the information
    the swap gets) until every prompt decodes to its new value, or ``steps``. Attention stays
    frozen. Returns (model, steps).

    manual_gradient: each step's weight gradients and Adam update are written out
    (:func:`_finetune_manual`, bitwise the autograd step; tests/fact_mlp/test_fast_paths.py)."""
    out = clone_model(model)
    mlp = _gated_module(out)
    tok, keys = contexts
    sel = np.ones(len(keys), dtype=bool) if full_map else np.isin(keys, edited)
    tgt = torch.as_tensor(np.asarray(new_map)[keys[sel]], device=out.embedding.device)
    tok_t = torch.as_tensor(tok[sel], device=out.embedding.device)
    with torch.no_grad():
        inputs = out.normed(tok_t)
    params = list(mlp.parameters())
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    if manual_gradient and _plain_gated(mlp):
        try:
            with torch.no_grad():
                done = _finetune_manual(mlp, inputs, out.embedding, tgt, steps, lr)
        finally:
            torch.set_num_threads(threads)
        out.mlp_facts = FactSet(out.mlp_facts.keys, out.mlp_facts.values, np.asarray(new_map, dtype=np.int64))
        return out, done
    for p in params:
        p.requires_grad_(True)
    opt = torch.optim.Adam(params, lr=lr)
    done = 0
    try:
        for done in range(1, steps + 1):
            logits = mlp(inputs) @ out.embedding.T
            if bool((logits.argmax(-1) == tgt).all()):
                done -= 1
                break
            loss = torch.nn.functional.cross_entropy(logits, tgt)
            opt.zero_grad()
            loss.backward()
            opt.step()
    finally:
        torch.set_num_threads(threads)
        for p in params:
            p.requires_grad_(False)
    out.mlp_facts = FactSet(out.mlp_facts.keys, out.mlp_facts.values, np.asarray(new_map, dtype=np.int64))
    return out, done


def _plain_gated(mlp) -> bool:
    """A gated module whose three maps are plain linear layers (what :func:`_finetune_manual`
    differentiates)."""
    return type(mlp).__name__ == "_Gated" and all(
        type(getattr(mlp, n)) is torch.nn.Linear for n in ("gate", "up", "down")
    )


def _finetune_manual(
    mlp, inputs: torch.Tensor, E: torch.Tensor, tgt: torch.Tensor, steps: int, lr: float
) -> int:
    """The loop of :func:`finetune_edit` on the module's weights (updated in place): forward
    t = up(x) * ReLU(gate(x)), logits = down(t) E^T, stop when every prompt decodes; the nll
    gradient is -1/n at each target, dz the log_softmax backward, dy = dz E, dW_down = dy^T t,
    dt = dy W_down, du = dt * ReLU(g), dg = threshold backward of dt * u, dW = d^T x for the two
    input maps and each bias the column sum of its gradient (the kernels autograd calls for
    linear layers); then Adam (lerp, mul/addcmul, sqrt/div/add, addcdiv). Returns the steps run."""
    params = list(mlp.parameters())
    exp_avg = [torch.zeros_like(q) for q in params]
    exp_avg_sq = [torch.zeros_like(q) for q in params]
    n = len(tgt)
    gls = torch.zeros((n, E.shape[0]), dtype=E.dtype, device=E.device)
    total = torch.tensor(float(n), dtype=E.dtype, device=E.device)
    gls[torch.arange(n, device=E.device), tgt] = -(torch.ones((), dtype=E.dtype, device=E.device) / total)
    gate, up, down = mlp.gate, mlp.up, mlp.down
    done = 0
    for done in range(1, steps + 1):
        u = up(inputs)
        rg = torch.relu(gate(inputs))
        t = u * rg
        logits = down(t) @ E.T
        if bool((logits.argmax(-1) == tgt).all()):
            return done - 1
        ls = torch.log_softmax(logits, 1)
        gy = torch._log_softmax_backward_data(gls, ls, 1, ls.dtype).mm(E)
        gt = gy.mm(down.weight)
        gu = gt * rg
        gg = torch.ops.aten.threshold_backward(gt * u, rg, 0)
        grads = []
        for lin, g, x in ((gate, gg, inputs), (up, gu, inputs), (down, gy, t)):
            grads.append(g.t().mm(x))
            if lin.bias is not None:
                grads.append(g.sum_to_size(lin.bias.shape))
        adam_update(params, grads, exp_avg, exp_avg_sq, done, lr)
    return done


def attention_unchanged(before: OneLayerRecallTransformer, after: OneLayerRecallTransformer) -> bool:
    """True when every attention parameter, the norm gain and the embedding table are
    bit-identical (torch.equal) between the two models."""
    pa, pb = before.attention_parameters(), after.attention_parameters()
    same = all(torch.equal(pa[k], pb[k]) for k in pa)
    return (
        same
        and torch.equal(before.norm_gain, after.norm_gain)
        and torch.equal(before.embedding, after.embedding)
    )
