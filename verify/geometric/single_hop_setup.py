"""What the single-hop claim modules share (verify.geometric.single_hop, .scaling and
.gd_threshold): the source, the seeded streams, decoding a model and the code threshold.
Registers no claim."""

from __future__ import annotations

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


def model_decoding(model, ctx=None):
    """Accuracy and min margin of a block model over all N*R facts, through the transformer."""
    subj, rel, target = single_hop_dataset(model.perms)
    hidden = model.final_hidden(subj, rel)
    return decode(hidden, model.transformer.unembed, target)


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
