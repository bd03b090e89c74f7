"""What the single-hop claim modules share (verify.geometric.single_hop, .scaling and
.gd_threshold): the source, the seeded streams, decoding a model and the code threshold.
Registers no claim."""

from __future__ import annotations

import numpy as np
import torch

from constructions.decode import TIE_ULPS, Decoding
from constructions.geometric.single_hop import (
    attribute_codes,
)
from constructions.search import smallest_size
from constructions.tasks import single_hop_dataset
from theory.papers import paper
from verify.claims import rng_for
from verify.measure import decode, min_pairwise_gap

SRC = paper("geometric")


def _rng(seed, *salt):
    return rng_for(seed, *salt)


def model_decoding(model, ctx=None, chunk=1 << 15):
    """Accuracy and min margin of a block model over all N*R facts, through the transformer.

    The hidden states are computed ``chunk`` facts at a time (at N = 10^5, R = 16 the
    1.6M facts at once would hold the (F, 2, R d0) token embeddings, about 14 GB in float64). The
    decoding is then exact but cheaper than decoding the full-width states:

    - the logits U h only read the columns where the unembedding U is nonzero (found from U itself:
      the d0 answer channels of the block layout), so h and U are restricted to those columns; the
      dropped terms are exact zeros (finite h is checked), and a float64 GEMM adds them as +0;
    - a fact's margin depends only on (its restricted h, its target), so each distinct pair is
      decoded once and its margin handed to every fact that shares it (at full scale the R
      relations of a target attribute give one pair when the selector is exact: 16x fewer rows);
    - the tie tolerance of each fact is decode's, TIE_ULPS * eps * ||h|| * max_j ||U_j||, with the
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
        return Decoding(0.0, float("inf"), 0, 0, None, 0.0)
    hidden, norms = torch.cat(kept), torch.cat(norms)
    first, inverse = _distinct_pairs(hidden.cpu().numpy(), np.asarray(target))
    part = decode(
        hidden[first], read, torch.as_tensor(target[first], device=hidden.device), return_margins=True
    )
    margins = torch.as_tensor(part.margins, device=hidden.device)[
        torch.as_tensor(inverse, device=hidden.device)
    ]
    u_scale = float(unembed.norm(dim=1).max())
    tols = TIE_ULPS * torch.finfo(hidden.dtype).eps * u_scale * norms
    n_correct = int((margins > tols).sum())
    return Decoding(
        accuracy=n_correct / n,
        min_margin=float(margins.min()),
        n_correct=n_correct,
        n_queries=n,
        margins=None,
        tie_tolerance=float(tols.max()),
    )


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


def code_threshold(n, margin, seed, d0_range, salt=0, full_curve=False):
    """Smallest d0 in d0_range whose spherical codes have gap 1 - max coherence >= margin (the
    predicate), scanned in order (constructions.search), and the gaps seen (up to the threshold, or
    over the whole range with ``full_curve``)."""
    d0s, gaps = list(d0_range), []

    def reaches(d0: int) -> bool:
        gaps.append(min_pairwise_gap(attribute_codes(n, d0, "spherical", _rng(seed, 2, n, d0, salt))))
        return gaps[-1] >= margin

    found = smallest_size(d0s, reaches, strategy="scan").size
    for d0 in d0s[len(gaps) :] if full_curve else ():
        reaches(d0)
    return found, gaps


def _crossing_from_one(n: int, margin: float, seed: int, d0_max: int) -> tuple[int, dict]:
    """A crossing d0* of the spherical code gap through ``margin`` searched over 1 <= d0 <= d0_max
    (nothing assumed about B3), with the gaps probed: the bisection of
    verify.geometric.scaling_setup.threshold_bisect (same codes: its ``code_gap``) with its lower
    end at d0 = 1.

    >>> d0, probed = _crossing_from_one(50, 0.5, 0, 64)
    >>> d0, probed[d0] >= 0.5, probed[d0 - 1] < 0.5
    (40, True, True)
    """
    probed: dict[int, float] = {}

    def reaches(d0: int) -> bool:
        probed[d0] = min_pairwise_gap(attribute_codes(n, d0, "spherical", _rng(seed, 2, n, d0, 0)))
        return probed[d0] >= margin

    found = smallest_size(range(1, int(d0_max) + 1), reaches, top_stores=True)
    if found.size is None:
        raise ValueError(f"d0_max={d0_max} does not reach margin {margin} at N={n}; raise d0_max")
    return found.size, probed
