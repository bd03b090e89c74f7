"""What the icrecall claim modules on constructed memories share (verify.icrecall.memories and
.handset): the default world parameters and the world they build. Registers no claim."""

from __future__ import annotations

import math

from constructions.icrecall.world import (
    make_world,
)
from verify.claims import rng_for

DEFAULTS = dict(
    n_subj=200, n_rel=5, n_ans_per_rel=20, dim=128, rho=1 / math.sqrt(2), theta=1.5, logit_scale=10.0
)


def _world(p, seed, rho=None):
    return make_world(
        p["n_subj"],
        p["n_rel"],
        p["n_ans_per_rel"],
        p["dim"],
        p["rho"] if rho is None else rho,
        rng_for(seed, "icrecall.memories.make_world"),
    )
