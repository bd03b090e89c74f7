"""What the scaling claim modules share (verify.geometric.scaling, .single_hop and .gd_threshold,
and the atlas's multi-hop construction): the competing growth laws and their controls, and the
threshold search of the spherical codes. Registers no claim."""

from __future__ import annotations

import math

import numpy as np

from constructions.geometric.single_hop import attribute_codes
from constructions.search import smallest_size
from theory.geometric import single_hop as B
from verify.claims import Control, rng_for
from verify.geometric.single_hop_setup import _rng
from verify.measure import min_pairwise_gap
from verify.oc.laws import GROWTH_LAWS, through

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


def law_table(table: dict, ns: list, law: str, anchor: str = "smallest") -> dict:
    """The thresholds per N and seed: the measured ones (``law="measured"``), or a competitor's
    curve plus that seed's residuals around its own affine fit in ln N (the measurement's noise,
    kept). ``anchor`` places the competitor's curve: "smallest", y0 g(N) / g(N_0) through the seed's
    smallest-N threshold y0 (the curve through the origin; a slow law then rises far less than the
    data), or "ends", a + b g(N) through the seed's ln N fit at the smallest and the largest N
    (:func:`verify.oc.laws.through`, the curve ``verify oc`` draws its alternatives from: the same
    total rise as the data, only the shape differs).

    >>> ns = [10, 100, 1000]
    >>> t = {n: [3 * math.log(n)] for n in ns}
    >>> [round(v[0], 3) for v in law_table(t, ns, "N^(1/8)", "ends").values()]
    [6.908, 12.828, 20.723]
    >>> [round(v[0], 3) for v in law_table(t, ns, "N^(1/8)").values()]
    [6.908, 9.212, 12.284]
    """
    if law == "measured":
        return table
    if law not in SCALING_LAWS:
        raise ValueError(f"law {law!r} is not 'measured' or one of {sorted(SCALING_LAWS)}")
    if anchor not in ("smallest", "ends"):
        raise ValueError(f"anchor {anchor!r} is not 'smallest' or 'ends'")
    f, logs = SCALING_LAWS[law], np.log(ns)
    out = {n: [] for n in ns}
    for s in range(len(table[ns[0]])):
        y = np.array([table[n][s] for n in ns], dtype=float)
        line = np.polyval(np.polyfit(logs, y, 1), logs)
        residual = y - line
        if anchor == "ends":
            curve = through(ns, "no growth" if law == "constant" else law, line[0], line[-1])
        else:
            curve = y[0] * np.array([f(n) for n in ns]) / f(ns[0])
        for i, n in enumerate(ns):
            out[n].append(float(curve[i] + residual[i]))
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


def max_coherence_gap(codes: np.ndarray, chunk: int = 2048) -> float:
    """1 - max_{a != b} <u_a, u_b> of unit rows (float64, ``chunk`` rows of the Gram matrix at a
    time): :func:`code_gap`'s quantity without decoding, for the many draws of
    :func:`window_threshold`.

    >>> u = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])
    >>> round(max_coherence_gap(u), 6)
    0.2
    """
    u = np.asarray(codes, dtype=np.float64)
    if u.ndim != 2 or len(u) < 2:
        raise ValueError(f"codes must be >= 2 rows of a matrix, got shape {u.shape}")
    best = -np.inf
    for i in range(0, len(u), chunk):
        g = u[i : i + chunk] @ u.T
        rows = np.arange(i, min(i + chunk, len(u)))
        g[rows - i, rows] = -np.inf
        best = max(best, float(g.max()))
    if not np.isfinite(best):
        raise ValueError("the codes' coherence is NaN or infinite (codes not finite)")
    return 1.0 - best


def window_threshold(n: int, margin: float, seed: int, d0_max: int, half: int) -> tuple[float, int, dict]:
    """The dimension at which a typical spherical code of N = ``n`` rows reaches ``margin``, located
    with less noise than one crossing: a bisection crossing d0b (:func:`threshold_bisect`) centres
    a window d0 = d0b - ``half`` .. d0b + ``half`` (from 2 up), one fresh code draw per d0 (stream
    ``geometric.scaling_setup.window_codes``), and the least-squares line of the gap 1 - max
    coherence against d0 over the window crosses ``margin`` at the returned d0* (a real number);
    a crossing within 1 of the window's end moves the window's centre towards it, by at most
    ``half`` (at most 3 times; the draws already made are reused). Half-width 6 located every
    crossing at N = 10, 32, 100 and seeds 0-59; half-width 3 failed on 12 of those 180.
    One crossing moves with the extreme of one draw's N^2/2 coherences (sd about 2.4 at N = 100 ..
    1000, pilot seeds 100-107); the line through 2 half + 1 draws has sd about 1 (pilot seeds
    110-127). Returns (d0*, d0b, {d0: gap} over the last window); a line that does not rise, or a
    crossing still outside the window, is a ValueError naming the window.

    >>> d0, d0b, gaps = window_threshold(100, 0.25, 1, 64, 6)
    >>> d0b, len(gaps), round(d0, 2)
    (18, 13, 18.31)
    """
    if half < 1:
        raise ValueError(f"the window's half-width must be >= 1, got {half}")
    d0b, _ = threshold_bisect(n, margin, seed, d0_max)
    centre, gaps = d0b, {}
    for _ in range(4):
        window = range(max(2, centre - half), centre + half + 1)
        for d0 in window:
            if d0 not in gaps:
                stream = rng_for(seed, "geometric.scaling_setup.window_codes", n, d0)
                gaps[d0] = max_coherence_gap(attribute_codes(n, d0, "spherical", stream))
        xs = np.array(window, dtype=float)
        slope, intercept = np.polyfit(xs, np.array([gaps[d0] for d0 in window]), 1)
        if not slope > 0:
            raise ValueError(
                f"the code gap does not rise over the window d0 = {window[0]}..{window[-1]} at N={n}"
            )
        crossing = float((margin - intercept) / slope)
        if window[0] + 1 <= crossing <= window[-1] - 1 or (window[0] == 2 and crossing < window[-1] - 1):
            return crossing, d0b, {d0: gaps[d0] for d0 in window}
        centre = max(2, min(centre + half, max(centre - half, round(crossing))))  # one half-width at most
    raise ValueError(
        f"the gap's line crosses {margin} at d0 = {crossing:.3g}, outside the window "
        f"{window[0]}..{window[-1]} after 3 re-centrings at N={n}; widen the window"
    )
