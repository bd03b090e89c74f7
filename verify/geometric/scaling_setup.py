"""What the scaling claim modules share (verify.geometric.scaling and .gd_threshold, and the atlas's
multi-hop construction): the competing growth laws and their controls, and the threshold search
of the spherical codes. Registers no claim."""

from __future__ import annotations

import math

from constructions.geometric.single_hop import attribute_codes
from theory.geometric import single_hop as B
from verify.claims import Control
from verify.geometric.single_hop_setup import _rng
from verify.measure import min_pairwise_gap

LAWS = {
    "quarter": lambda n: n**0.25,
    "cuberoot": lambda n: n ** (1 / 3),
    "lnsq": lambda n: math.log(n) ** 2,
    "constant": lambda n: 1.0,
}


LAW_CONTROLS = [
    Control(
        f"law_{name}",
        {"control": f"law_{name}"},
        f"synthetic thresholds growing like {label} from each seed's smallest-N value: "
        "their growth factor is that law's, which the criterion must reject",
    )
    for name, label in (
        ("quarter", "N^(1/4)"),
        ("cuberoot", "N^(1/3)"),
        ("lnsq", "(ln N)^2"),
        ("constant", "a constant"),
    )
]


def code_gap(n, d0, seed, salt=0) -> float:
    """1 - max coherence of the spherical codes of (n, d0, seed): the built model's margin."""
    return min_pairwise_gap(attribute_codes(n, d0, "spherical", _rng(seed, 2, n, d0, salt)))


def threshold_bisect(n, margin, seed, d0_max, salt=0) -> tuple[int, dict]:
    """A crossing d0* of the code gap through ``margin``: gap(d0*) >= margin > gap(d0* - 1).

    Bisection between lo = ceil(d0_nec(N, margin)) - 1, where no code reaches the margin (bound B3,
    so gap(lo) < margin is a theorem), and hi = d0_max, checked to reach it when the bisection ends
    there (a crossing below d0_max is checked by its own probe; d0_max is the costliest probe, so it
    is made only when the answer depends on it). Each d0 has its own code draw, so the gap is
    monotone only on average: d0* is a crossing point, not necessarily the first one; the probed
    gaps are returned."""
    lo, hi = max(1, math.ceil(B.d0_necessary(n, margin)) - 1), int(d0_max)
    probed = {}
    while hi - lo > 1:
        mid = (lo + hi) // 2
        probed[mid] = code_gap(n, mid, seed, salt)
        lo, hi = (lo, mid) if probed[mid] >= margin else (mid, hi)
    if hi == int(d0_max):
        probed[hi] = code_gap(n, hi, seed, salt)
        if probed[hi] < margin:
            raise ValueError(f"d0_max={d0_max} does not reach margin {margin} at N={n}; raise d0_max")
    return hi, probed
