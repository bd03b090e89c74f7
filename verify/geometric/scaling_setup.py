"""What the scaling claim modules share (verify.geometric.scaling, .single_hop and .gd_threshold,
and the atlas's multi-hop construction): the competing growth laws and their controls, and the
threshold search of the spherical codes. Registers no claim."""

from __future__ import annotations

import math

import numpy as np

from constructions.geometric.single_hop import attribute_codes
from constructions.search import smallest_size
from theory.geometric import single_hop as B
from verify.claims import Control
from verify.geometric.single_hop_setup import _rng
from verify.measure import min_pairwise_gap
from verify.oc.laws import GROWTH_LAWS

#: synthetic competitors of the ln N law (controls): the measured noise around each seed's own
#: ln N fit, added to the competitor's curve through that seed's smallest-N threshold
SCALING_LAWS = {
    **{
        name: GROWTH_LAWS[name]  # the laws verify.oc simulates with: one definition
        for name in ("N^(1/8)", "N^(1/5)", "N^(1/4)", "N^(1/3)", "(ln N)^(3/2)", "(ln N)^2")
    },
    "constant": lambda n: 1.0,
}

SCALING_CONTROLS = [
    Control(
        f"law {name}",
        {"law": name},
        f"synthetic thresholds growing like {name} with the measured seed-to-seed noise: the fitted "
        "exponent's interval must exclude ln N's there (a competitor the data cannot reject is not ruled out)",
    )
    for name in SCALING_LAWS
]
#: the competitors the matching band can reject over two decades (it cannot reject N^(1/5) or slower
#: power laws: their ratio to ln N varies by less than 1.5x there; log_scaling judges the law)
BAND_CONTROLS = [
    c for c in SCALING_CONTROLS if c.name in ("law N^(1/4)", "law N^(1/3)", "law (ln N)^2", "law constant")
]


def law_table(table: dict, ns: list, law: str) -> dict:
    """The thresholds per N and seed: the measured ones (``law="measured"``), or a competitor's
    curve through each seed's smallest-N threshold plus that seed's residuals around its own
    affine fit in ln N (the measurement's noise, kept)."""
    if law == "measured":
        return table
    if law not in SCALING_LAWS:
        raise ValueError(f"law {law!r} is not 'measured' or one of {sorted(SCALING_LAWS)}")
    f, logs = SCALING_LAWS[law], np.log(ns)
    out = {n: [] for n in ns}
    for s in range(len(table[ns[0]])):
        y = np.array([table[n][s] for n in ns], dtype=float)
        residual = y - np.polyval(np.polyfit(logs, y, 1), logs)
        for i, n in enumerate(ns):
            out[n].append(float(y[0] * f(n) / f(ns[0]) + residual[i]))
    return out


def code_gap(n: int, d0: int, seed: int, salt: int = 0) -> float:
    """1 - max coherence of the spherical codes of (n, d0, seed): the built model's margin.

    >>> code_gap(50, 40, 0) >= 0.5 > code_gap(50, 39, 0)
    True
    """
    return min_pairwise_gap(attribute_codes(n, d0, "spherical", _rng(seed, 2, n, d0, salt)))


def code_threshold(n, margin, seed, d0_range, salt=0, full_curve=False):
    """Smallest d0 in d0_range whose spherical codes have gap 1 - max coherence >= margin (the
    predicate), scanned in order (constructions.search), and the gaps seen (up to the threshold, or
    over the whole range with ``full_curve``)."""
    d0s, gaps = list(d0_range), []

    def reaches(d0: int) -> bool:
        gaps.append(code_gap(n, d0, seed, salt))
        return gaps[-1] >= margin

    found = smallest_size(d0s, reaches, strategy="scan").size
    for d0 in d0s[len(gaps) :] if full_curve else ():
        reaches(d0)
    return found, gaps


def threshold_bisect(
    n: int, margin: float, seed: int, d0_max: int, salt: int = 0, assume_b3: bool = True
) -> tuple[int, dict]:
    """A crossing d0* of the code gap through ``margin``: gap(d0*) >= margin > gap(d0* - 1), and the
    gaps probed.

    Bisection (constructions.search, ``top_stores=True``; predicate: gap >= margin) over
    lo < d0 <= d0_max with lo = ceil(d0_nec(N, margin)) - 1, where no code reaches the margin (bound
    B3, so gap(lo) < margin is a theorem); with ``assume_b3=False`` lo = 0 (the search assumes
    nothing of B3). d0_max, the costliest probe, is assumed to reach it and is probed only when the
    answer depends on it (ValueError when it does not). Each d0 has its own code draw, so the gap is
    monotone only on average: d0* is a crossing point, not necessarily the first one.

    >>> d0, probed = threshold_bisect(50, 0.5, 0, 64, assume_b3=False)
    >>> d0, probed[d0] >= 0.5, probed[d0 - 1] < 0.5
    (40, True, True)
    """
    hi = int(d0_max)
    lo = max(1, math.ceil(B.d0_necessary(n, margin)) - 1) if assume_b3 else 0
    probed = {}

    def reaches(d0: int) -> bool:
        probed[d0] = code_gap(n, d0, seed, salt)
        return probed[d0] >= margin

    # lo >= d0_max (a bound above the range): d0_max is the only candidate, probed as before
    found = smallest_size(range(min(lo, hi - 1) + 1, hi + 1), reaches, top_stores=True)
    if found.size is None:
        raise ValueError(f"d0_max={d0_max} does not reach margin {margin} at N={n}; raise d0_max")
    return found.size, probed
