"""What the geometric claim modules share (verify.geometric.single_hop, .scaling, .multihop and
.depth, and the atlas's multi-hop construction): the source, the seeded streams and decoding a
model, the single-hop block model (:func:`model_decoding`) and the one-pass multi-hop model
(:func:`_nocot_accuracy`). Registers no claim."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch

from constructions.decode import Decoding, clears_tie, tie_tolerance
from constructions.tasks import single_hop_dataset
from theory.papers import paper
from verify.claims import rng_for
from verify.measure import decode

SRC = paper("geometric")


@dataclass(frozen=True)
class TrainRecipe:
    """How the trained model (docs/geometric.md#the-trained-model) is trained in a threshold search:
    its MLP width, the full-batch Adam steps and learning rate, the evaluation spacing, the largest
    dimension searched and the training dtype. One argument of the shared searches
    (:func:`verify.claims.shared` keys it by its fields).

    >>> r = TrainRecipe.of({"mlp_width": 8, "steps": 50, "lr": 0.03, "record_every": 25, "d_max": 4})
    >>> r.train_dtype, list(r.as_dict())
    ('float64', ['mlp_width', 'steps', 'lr', 'record_every', 'd_max', 'train_dtype'])
    """

    mlp_width: int
    steps: int
    lr: float
    record_every: int
    d_max: int
    train_dtype: str = "float64"

    @classmethod
    def of(cls, p) -> TrainRecipe:
        """The recipe in a claim's parameters (``train_dtype`` float64 where they name none)."""
        keys = ("mlp_width", "steps", "lr", "record_every", "d_max")
        return cls(*(p[k] for k in keys), train_dtype=p.get("train_dtype", "float64"))

    def as_dict(self) -> dict:
        """The fields as the parameter dict the training code reads (in field order)."""
        return asdict(self)


def _rng(seed, *salt):
    return rng_for(seed, *salt)


def model_decoding(model, ctx=None, chunk=1 << 15):
    """Accuracy and min margin of a block model over all N*R facts, through the transformer: the
    :class:`~constructions.decode.Decoding` of :func:`decoding_clearance`."""
    return decoding_clearance(model, chunk)[0]


def tie_clearance_decades(margins: torch.Tensor, tols: torch.Tensor) -> float:
    """How many decades the smallest margin-to-tolerance ratio clears 1: log10 min_i margin_i / tol_i,
    -inf when a margin is <= 0 (a tie or a wrong answer). It is > 0 exactly when every fact clears
    its tie tolerance (accuracy 1 under the tie rule), and varies continuously from draw to draw.

    >>> f64 = torch.float64
    >>> round(tie_clearance_decades(torch.tensor([1e-6, 1.0], dtype=f64), torch.tensor([1e-14, 1e-14], dtype=f64)), 9)
    8.0
    >>> tie_clearance_decades(torch.tensor([0.0, 1.0], dtype=f64), torch.tensor([1e-14, 1e-14], dtype=f64))
    -inf
    """
    if bool(torch.isnan(margins).any()):
        raise ValueError("NaN margin: the decoding's hypothesis of finite logits fails")
    if len(margins) == 0:
        return float("inf")
    if float(margins.min()) <= 0.0:
        return float("-inf")
    ratio = margins.to(torch.float64) / tols.to(torch.float64)  # a zero tolerance gives +inf
    return float(np.log10(float(ratio.min())))


def decoding_clearance(model, chunk: int = 1 << 15) -> tuple[Decoding, float]:
    """Accuracy and min margin of a block model over all N*R facts, through the transformer, and
    :func:`tie_clearance_decades` of its margins (> 0 exactly when the accuracy is 1).

    The hidden states are computed ``chunk`` facts at a time (at N = 10^5, R = 16 the
    1.6M facts at once would hold the (F, 2, R d0) token embeddings, about 14 GB in float64). The
    decoding is then exact but cheaper than decoding the full-width states:

    - the logits U h only read the columns where the unembedding U is nonzero (found from U itself:
      the d0 answer channels of the block layout), so h and U are restricted to those columns; the
      dropped terms are exact zeros (finite h is checked), and a float64 GEMM adds them as +0;
    - a fact's margin depends only on (its restricted h, its target), so each distinct pair is
      decoded once and its margin handed to every fact that shares it (at full scale the R
      relations of a target attribute give one pair when the selector is exact: 16x fewer rows);
    - the tie tolerance of each fact is decode's, tie_tolerance(||h|| * max_j ||U_j||, dtype), with the
      norms of the full-width h and U, so "correct" (margin > tolerance) is decided as before.

    tests/test_geometric.py checks the counts, the minimum margin and the tolerance against
    decode() of the full-width states."""
    subj, rel, target = single_hop_dataset(model.perms)
    unembed = model.transformer.unembed
    support = (unembed != 0).any(dim=0)
    if not bool(support.any()):
        support[:] = True  # an all-zero unembedding: nothing to drop
    read = unembed[:, support]
    kept, norms = [], []
    for at in range(0, len(subj), chunk):
        h = model.final_hidden(subj[at : at + chunk], rel[at : at + chunk])
        if not bool(torch.isfinite(h).all()):
            raise ValueError("NaN or inf in the model's hidden states")
        kept.append(h[:, support])
        norms.append(h.norm(dim=1).to(torch.float64))
    n = len(subj)
    if n == 0:
        return Decoding(0.0, float("inf"), 0, 0, None, 0.0), float("inf")
    hidden, norms = torch.cat(kept), torch.cat(norms)
    first, inverse = _distinct_pairs(hidden.cpu().numpy(), np.asarray(target))
    part = decode(
        hidden[first], read, torch.as_tensor(target[first], device=hidden.device), return_margins=True
    )
    margins = torch.as_tensor(part.margins, device=hidden.device)[
        torch.as_tensor(inverse, device=hidden.device)
    ]
    u_scale = float(unembed.norm(dim=1).max())
    tols = tie_tolerance(u_scale, hidden.dtype) * norms  # as decode() computes it
    n_correct = int(clears_tie(margins, tols).sum())
    return Decoding(
        accuracy=n_correct / n,
        min_margin=float(margins.min()),
        n_correct=n_correct,
        n_queries=n,
        margins=None,
        tie_tolerance=float(tols.max()),
    ), tie_clearance_decades(margins, tols)


def _distinct_pairs(hidden: np.ndarray, target: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the first row of each distinct (hidden row, target) pair, compared as bytes, and the
    inverse map (row -> its pair). Byte equality implies equal inputs to decode (-0.0 and 0.0 are
    kept apart, which only costs a duplicate decode)."""
    key = np.concatenate(
        [
            np.ascontiguousarray(hidden).view(np.uint8).reshape(len(hidden), -1),
            np.ascontiguousarray(target, dtype=np.int64).view(np.uint8).reshape(len(target), 8),
        ],
        axis=1,
    )
    key = np.ascontiguousarray(key).view(np.dtype((np.void, key.shape[1]))).ravel()
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return first, inverse.ravel()


def _nocot_accuracy(model, start, chains, target) -> dict:
    """Accuracy, minimum margin and largest selector error of a one-pass multi-hop model
    (constructions.geometric.multihop) on the queries (start, chains) -> target."""
    out = model.selector_output(start, chains)
    res = decode(out, model.codes, target)
    return {
        "accuracy": res.accuracy,
        "min_margin": res.min_margin,
        "max_abs_error": float(np.max(np.abs(out - model.codes[target]))),
        "n_queries": len(target),
    }
