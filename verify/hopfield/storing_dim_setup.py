"""Set-up of hopfield.storing_dim (capacity atlas): the smallest-storing-dimension search, shared by the
claim :mod:`verify.hopfield.storing_dim` and the capacity atlas (:mod:`verify.atlas.hopfield`).
Registers no claim; the construction, search and criterion are described in
:mod:`verify.hopfield.storing_dim`."""

from __future__ import annotations

import math

import numpy as np

from constructions.hopfield.networks import (
    clustered_patterns,
    context_gates,
    retrieval_errors_batch,
    sphere_patterns,
)
from constructions.search import smallest_size
from theory.hopfield.reference import capacity, sphere_radius
from verify.claims import rng_for, shared

CLAIM_ID = "hopfield.storing_dim.r4_sufficient"
STREAM = "hopfield.storing_dim.stream"
CHUNK = 64  # targets per batch; the contexts are drawn in target order either way


def r4_dimension(
    n_patterns: int, beta: float, radius_scale: float, fail_prob: float, d_max: int = 4096
) -> int:
    """d_R4(N): the smallest d in 2..d_max at which R4 [reference] guarantees N patterns (w.p. 1 - p),
    scanned upwards (constructions.search); dimensions where R4's hypothesis
    c >= (2/sqrt p)^(4/(d-1)) fails guarantee nothing."""
    if int(n_patterns) < 1:
        raise ValueError(f"N={n_patterns} must be >= 1")

    def guarantees(d: int) -> bool:
        try:
            return capacity(beta, radius_scale, d, fail_prob) >= n_patterns
        except ValueError:
            return False

    found = smallest_size(range(2, d_max + 1), guarantees, strategy="scan").size
    if found is None:
        raise ValueError(f"R4 guarantees N={n_patterns} at no d <= {d_max} (beta={beta}, K={radius_scale})")
    return found


def stores(n, dim, beta, radius_scale, draw_seed, gated, kappa, n_eff, spread=None) -> bool:
    """Whether every one of the N memories of draw ``draw_seed`` = (seed, k) at dimension ``dim``
    is stored (one update from x_i lands within 1/(beta N M) of x_i); module doc."""
    gen = rng_for(draw_seed[0], STREAM, draw_seed[1], n, dim)
    radius = radius_scale * math.sqrt(dim - 1)
    if spread is None:
        X = sphere_patterns(n, dim, radius, gen)
    else:
        X = clustered_patterns(n, dim, radius, spread, gen)
    tol = sphere_radius(beta, n, radius)
    for start in range(0, n, CHUNK):  # stop at the first chunk with a miss: draws as in one pass
        targets = np.arange(start, min(n, start + CHUNK))
        U = None
        if gated:
            U = np.stack([context_gates(n, int(i), min(n_eff, n), kappa, gen)[0] for i in targets])
        errors = retrieval_errors_batch(X, targets, beta, U)
        if not np.all(np.isfinite(errors)):
            raise ValueError(f"retrieval error is NaN at N={n}, d={dim}")
        if np.any(errors > tol):
            return False
    return True


def smallest_storing_dim(n, d_cap, beta, radius_scale, draw_seed, gated, kappa, n_eff, spread=None):
    """First d in 2..d_cap at which draw ``draw_seed`` stores all N memories (:func:`stores`),
    scanned upwards (constructions.search), or None."""
    return smallest_size(
        range(2, d_cap + 1),
        lambda d: stores(n, d, beta, radius_scale, draw_seed, gated, kappa, n_eff, spread),
        strategy="scan",
    ).size


@shared
def search(
    ctx,
    sizes: list,
    beta: float,
    K: float,
    p: float,
    draws: int,
    kappa: float,
    n_eff: int,
    spread: float | None = None,
) -> dict:
    """Ungated and gated d* per draw (seed, k), k < draws, at every N (module doc); stops at the
    first ungated miss. Once per run and seed: the claim and the atlas share it (:func:`shared_search`).

    >>> from verify.claims import Context
    >>> found = search(Context(seed=0), [16], 1.0, 3.0, 0.001, 1, 4.0, 16)
    >>> found["stopped_at"], found["rows"][0]["d_R4"]
    (None, 23)
    """
    rows, stopped = [], None
    for n in sizes:
        cap = r4_dimension(n, beta, K, p)
        row = {"N": int(n), "d_R4": cap, "d_star_ungated": [], "d_star_gated": []}
        rows.append(row)
        for k in range(draws):
            args = (n, cap, beta, K, (ctx.seed, k))
            d_u = smallest_storing_dim(*args, False, kappa, n_eff, spread)
            row["d_star_ungated"].append(d_u)
            if d_u is None:
                stopped = {"N": int(n), "draw": k}
                break
            if spread is None:  # the gated search is recorded for the atlas, not judged
                row["d_star_gated"].append(smallest_storing_dim(*args, True, kappa, n_eff))
        if stopped:
            break
    return {"rows": rows, "stopped_at": stopped}


QUICK = {
    "beta": 1.0,
    "K": 3.0,
    "p": 0.001,
    "sizes": [16, 64, 256, 1024],
    "draws": 3,
    "kappa": 4.0,
    "n_eff": 16,
    "spread": None,  # None: uniform patterns; a number: clustered_patterns (the control)
}
FULL = {**QUICK, "sizes": [16, 64, 256, 1024, 4096], "draws": 5}


def shared_search(p, ctx) -> dict:
    """:func:`search` at a parameter dict of :data:`CLAIM_ID` (the claim's, or the atlas's source):
    one cache entry for both."""
    return search(
        ctx, p["sizes"], p["beta"], p["K"], p["p"], p["draws"], p["kappa"], p["n_eff"], p.get("spread")
    )


def points_of_record(rec: dict, point, need, which: str) -> list[dict]:
    """Atlas points of the hopfield (``which="ungated"``) or hopfield_gated (``"gated"``) family from
    a stored record of :data:`CLAIM_ID` (``verify.atlas.sources``'s ``_point`` and ``_need`` passed in):
    P = d* N per draw, I = N log2 N (a convention, not a bound). The clustered control's record and
    a draw that does not store by d_R4 are refused (ValueError naming the claim)."""
    from theory.fact_mlp.bounds import info_bits  # lazily: keeps the bound registration order

    cid = rec["id"]
    if rec["params"].get("spread") is not None:
        raise ValueError(f"{cid}: a record of clustered patterns (the control) is no family point")
    out = []
    for row in need(rec["details"], "rows", cid):
        n, ds = int(row["N"]), row[f"d_star_{which}"]
        if not ds or any(x is None for x in ds):
            raise ValueError(
                f"{cid}: N={n} has a draw that does not store by d_R4 ({which} d* = {ds}); "
                "the atlas lists only storing sizes"
            )
        ds = [int(x) for x in ds]
        out.append(point({"N": n, "d_R4": int(row["d_R4"])}, info_bits(n, n), [n * x for x in ds], dims=ds))
    return out
