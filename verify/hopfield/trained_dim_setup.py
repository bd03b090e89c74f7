"""Set-up of hopfield.trained_dim (capacity atlas): the smallest-storing-dimension search of the
gradient-trained Hopfield memory (:mod:`constructions.hopfield.trained`), shared by the claim
:mod:`verify.hopfield.trained_dim` and the capacity atlas (:mod:`verify.atlas.hopfield_trained`).
Registers no claim; task, model, criterion and search are described in
:mod:`verify.hopfield.trained_dim`."""

from __future__ import annotations

import math

import numpy as np

from constructions.hopfield.trained import problem, train
from constructions.search import smallest_size
from verify.claims import rng_for, shared
from verify.hopfield.storing_dim_setup import r4_dimension

CLAIM_ID = "hopfield.trained_dim.stores_by_r4"
STREAM = "hopfield.trained_dim.stream"


def draw(n: int, dim: int, radius_scale: float, seed: int, k: int):
    """(cues, pi, W0) of draw k of ``seed`` at (N, d): the stream (seed, STREAM, k, N, d)."""
    return problem(n, dim, radius_scale * math.sqrt(dim - 1), rng_for(seed, STREAM, k, n, dim))


def construction_stores(cues, pi, beta: float) -> bool:
    """The explicit construction on the same draw: memories x_pi(i) = q_i (the construction of
    hopfield.storing_dim, query = memory); stored when every ||f(q_i) - q_i|| <= 1/(beta N M)."""
    import torch

    from constructions.hopfield.trained import retrieval_errors

    X = np.empty_like(cues)
    X[:, pi] = cues
    n, radius = cues.shape[1], float(np.linalg.norm(cues[:, 0]))
    err = retrieval_errors(
        torch.from_numpy(X)[None], torch.from_numpy(cues)[None], torch.from_numpy(pi)[None], beta
    )
    if not torch.all(torch.isfinite(err)):
        raise ValueError(f"construction retrieval error is NaN at N={n}, d={cues.shape[0]}")
    return bool(err.max() <= 1.0 / (beta * n * radius))


def search_trained(
    n: int,
    cap: int,
    seed: int,
    *,
    draws: int,
    K: float,
    beta: float,
    steps: int,
    lr: float,
    check_every: int,
    window: int,
) -> dict:
    """d*_k of the trained memory for every draw k at N: ascending d = 2..cap, trained in windows
    of ``window`` dimensions x the unresolved draws in one batch; d*_k is the smallest d of
    the first window in which draw k stores (each (k, d) is an independent problem, so the window
    changes the cost, not the result). Also the first storing step at d*_k."""
    d_star, at_step = [None] * draws, [None] * draws
    open_draws, lo = list(range(draws)), 2
    while open_draws and lo <= cap:
        dims = list(range(lo, min(lo + window, cap + 1)))
        keys = [(k, d) for k in open_draws for d in dims]
        probs = [draw(n, d, K, seed, k) for k, d in keys]
        radii = [K * math.sqrt(d - 1) for _, d in keys]
        out = train(probs, radii, beta, steps, lr, check_every)
        for (k, d), s in zip(keys, out["first_step"]):
            if s is not None and d_star[k] is None:
                d_star[k], at_step[k] = d, s
        open_draws = [k for k in open_draws if d_star[k] is None]
        lo += window
    return {"d_star": d_star, "stored_at_step": at_step}


def search_construction(n: int, cap: int, seed: int, draws: int, K: float, beta: float) -> list:
    """d* of the explicit construction on the same draws (x_pi(i) = q_i): per draw, the smallest d in
    2..cap at which :func:`construction_stores` holds, scanned upwards (constructions.search)."""

    def stores(k: int, d: int) -> bool:
        cues, pi, _ = draw(n, d, K, seed, k)
        return construction_stores(cues, pi, beta)

    return [
        smallest_size(range(2, cap + 1), lambda d, k=k: stores(k, d), strategy="scan").size
        for k in range(draws)
    ]


@shared
def search(
    ctx,
    sizes: list,
    beta: float,
    K: float,
    p: float,
    draws: int,
    steps: int,
    lr: float,
    check_every: int,
    window: int,
) -> dict:
    """Trained and construction d* per draw (seed, k), k < draws, at every N (``steps`` may be 0: the
    untrained memory at initialisation, the control). Once per run and seed: the claim and the atlas
    share it (:func:`shared_search`).

    >>> from verify.claims import Context
    >>> search(Context(seed=0), [16], 1.0, 3.0, 0.001, 1, 0, 0.5, 10, 4)["rows"]  # untrained: no d* <= d_R4
    [{'N': 16, 'd_R4': 23, 'd_star': [None], 'stored_at_step': [None], 'd_star_construction': [7]}]
    """
    rows, trainer = [], dict(beta=beta, steps=steps, lr=lr, check_every=check_every, window=window)
    for n in sizes:
        cap = r4_dimension(n, beta, K, p)
        row = {"N": int(n), "d_R4": cap, **search_trained(n, cap, ctx.seed, draws=draws, K=K, **trainer)}
        row["d_star_construction"] = search_construction(n, cap, ctx.seed, draws, K, beta)
        rows.append(row)
    return {"rows": rows}


QUICK = {
    "beta": 1.0,
    "K": 3.0,
    "p": 0.001,
    "sizes": [16, 32, 64],
    "draws": 3,
    "steps": 400,
    "lr": 0.5,
    "check_every": 10,
    "window": 4,
}
# full: N up to 256 (N = 1024 costs about 30 CPU-ms per problem and step, some 20 CPU-min per seed),
# a longer budget (the storing step grows with N)
FULL = {**QUICK, "sizes": [16, 32, 64, 128, 256], "steps": 1000}


def shared_search(p, ctx) -> dict:
    """:func:`search` at a parameter dict of :data:`CLAIM_ID` (the claim's, or the atlas's source):
    one cache entry for both."""
    names = ("sizes", "beta", "K", "p", "draws", "steps", "lr", "check_every", "window")
    return search(ctx, *(p[k] for k in names))


#: The atlas family's fields (``verify.atlas.sources.Family`` less ``extract``, set there)
FAMILY_FIELDS = dict(
    name="hopfield_trained",
    area="hopfield",
    kind="trained",
    claim_id=CLAIM_ID,
    resource="parameters",
    bound="log2(N!) (theory.fact_mlp.bounds.info_bits_tied): the bijection of N cues to N memories, "
    "a counting lower bound on this task",
    bound_tag="derived",
    searched=True,
    note="smallest d at which the modern Hopfield network with its memory matrix TRAINED by Adam "
    "(columns on the sphere of radius 3 sqrt(d-1), beta = 1) retrieves the memory of each of N cues "
    "in one update to within 1/(beta N M); P = d N",
    optional=True,
)


def points_of_record(rec: dict, point, need) -> list[dict]:
    """The atlas points of a trained_dim record (``verify.atlas.sources``'s ``_point`` and ``_need``
    passed in): P = d* N per draw, I = log2(N!)."""
    from theory.fact_mlp.bounds import info_bits_tied  # here: importing it first would reorder the bounds

    cid = rec["id"]
    if int(rec["params"].get("steps", 1)) == 0:
        raise ValueError(f"{cid}: a record of the untrained memory (the control) is no family point")
    out = []
    for row in need(rec["details"], "rows", cid):
        n, ds = int(row["N"]), row["d_star"]
        if not ds or any(d is None for d in ds):
            raise ValueError(
                f"{cid}: N={n} has a draw that does not store by d_R4 (trained d* = {ds}); "
                "the atlas lists only storing sizes"
            )
        ds = [int(d) for d in ds]
        out.append(point({"N": n, "d_R4": int(row["d_R4"])}, info_bits_tied(n), [n * d for d in ds], dims=ds))
    return out
