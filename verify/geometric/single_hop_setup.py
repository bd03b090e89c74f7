"""What the single-hop claim modules share (verify.geometric.single_hop, .scaling and
.gd_threshold): the source, the seeded streams, decoding a model and the code threshold.
Registers no claim."""

from __future__ import annotations

from constructions.decode import Decoding
from constructions.geometric.single_hop import (
    attribute_codes,
)
from constructions.tasks import single_hop_dataset
from theory.papers import paper
from verify.claims import rng_for
from verify.measure import decode, min_pairwise_gap

SRC = paper("geometric")


def _rng(seed, *salt):
    return rng_for(seed, *salt)


def model_decoding(model, ctx=None, chunk=1 << 15):
    """Accuracy and min margin of a block model over all N*R facts, through the transformer, in
    chunks of ``chunk`` facts (issue 17.4: at N = 10^5, R = 16 the 1.6M facts at once would hold
    the (F, 2, R d0) token embeddings, about 14 GB in float64). Each fact's hidden state and
    margin depend only on its own row, so the counts and the minimum are those of one pass."""
    subj, rel, target = single_hop_dataset(model.perms)
    unembed = model.transformer.unembed
    n_correct, min_margin, tie_tol = 0, float("inf"), 0.0
    for at in range(0, len(subj), chunk):
        part = decode(
            model.final_hidden(subj[at : at + chunk], rel[at : at + chunk]), unembed, target[at : at + chunk]
        )
        n_correct += part.n_correct
        min_margin = min(min_margin, part.min_margin)
        tie_tol = max(tie_tol, part.tie_tolerance)
    n = len(subj)
    return Decoding(
        accuracy=n_correct / max(n, 1),
        min_margin=min_margin,
        n_correct=n_correct,
        n_queries=n,
        margins=None,
        tie_tolerance=tie_tol,
    )


def code_threshold(n, margin, seed, d0_range, salt=0, full_curve=False):
    """Smallest d0 in d0_range whose spherical codes have gap 1 - max coherence >= margin, and the gaps
    seen (up to the threshold, or over the whole range with ``full_curve``)."""
    gaps, found = [], None
    for d0 in d0_range:
        gap = min_pairwise_gap(attribute_codes(n, d0, "spherical", _rng(seed, 2, n, d0, salt)))
        gaps.append(gap)
        if gap >= margin and found is None:
            found = d0
            if not full_curve:
                break
    return found, gaps
