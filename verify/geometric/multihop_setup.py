"""What the multi-hop claim modules share (verify.geometric.multihop and .depth): the source and
the no-CoT accuracy of a model. Registers no claim."""

from __future__ import annotations

import numpy as np

from theory.papers import paper
from verify.measure import decode

SRC = paper("geometric")


def _nocot_accuracy(model, start, chains, target) -> dict:
    out = model.selector_output(start, chains)
    res = decode(out, model.codes, target)
    return {
        "accuracy": res.accuracy,
        "min_margin": res.min_margin,
        "max_abs_error": float(np.max(np.abs(out - model.codes[target]))),
        "n_queries": len(target),
    }
