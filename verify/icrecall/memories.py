"""Claims of IC-recall on constructed memories (docs/icrecall.md).

Incoherence, linear-memory capacity and the triplet MLP. Hand-set attention patterns are in
:mod:`verify.icrecall.handset`, fine-tuning in :mod:`verify.icrecall.finetune`, sample
complexity in :mod:`verify.icrecall.sample`. Source: Huang, Nichani, Lee, Ge, arXiv 2605.27774;
[reference] Nichani, Lee & Bietti 2024.

Every claim states its verdict rule over seeds and records every per-seed value; every claim has a control on
which the same criterion fails (README.md#kinds-of-claim-controls-and-verdicts-over-seeds). The parameter
count of the triplet MLP is a formula checked against array sizes: it is a unit test
(tests/icrecall/test_icrecall.py), not a claim.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from constructions.icrecall.world import (
    direct_recall_accuracy,
    linear_memory,
    sample_direct,
    triplet_mlp,
)
from theory.icrecall import SOURCE, incoherence_bound
from verify.claims import Control, choice, claim, rng_for
from verify.criteria import EverySeed, Sequential, Threshold, all_of, run_staged
from verify.icrecall.handset_setup import DEFAULTS, _world
from verify.measure import decode, t_interval

REF = "Nichani, Lee & Bietti 2024 (arXiv 2412.06538), random embeddings and linear memories"


def _unit_directions(rng, n_vectors, dim, rank=None):
    """V unit vectors: isotropic Gaussian directions in R^d, or (``rank``) directions of a random
    ``rank``-dimensional subspace of R^d (the isotropy hypothesis dropped)."""
    if rank is None:
        E = rng.standard_normal((n_vectors, dim))
    else:
        basis = np.linalg.qr(rng.standard_normal((dim, rank)))[0]
        E = rng.standard_normal((n_vectors, rank)) @ basis.T
    return E / np.linalg.norm(E, axis=1, keepdims=True)


def max_off_diagonal_inner(E, max_elements=1 << 24):
    """max_{t != t'} |<e_t, e_t'>| over the rows of E, in blocks of rows of E @ E.T holding at most
    ``max_elements`` entries (at least one row, at most 4096), so memory stays bounded as V grows
    (V = 10^5: 167 rows, 134 MB in float64, instead of 4096 rows, 3.3 GB and its absolute value)."""
    n = len(E)
    rows = max(1, min(4096, max_elements // max(n, 1)))
    worst = 0.0
    for start in range(0, n, rows):
        G = E[start : start + rows] @ E.T
        idx = np.arange(start, min(start + rows, n))
        G[idx - start, idx] = 0.0
        worst = max(worst, float(G.max()), float(-G.min()))
    return worst


@claim(
    "icrecall.incoherence.max_inner",
    source=REF,
    provenance="reference",
    bounds=("icrecall.incoherence",),
    statement="V random unit vectors in R^d have max_(t != t') |<e_t, e_t'>| <= "
    "2 sqrt(2 ln V / d) at V = {n_vectors}, d = {dim} (the bound is 0.487 at quick scale, "
    "V = 2000, d = 256, and 0.300 at full scale, V = 10^5, d = 1024) in every one of {n_seeds} seeds",
    templated=True,
    quick=dict(n_vectors=2000, dim=256, n_seeds=20, rank=None),
    full=dict(n_vectors=100000, dim=1024, n_seeds=20, rank=None),
    seed_rule="every seed of seed..seed+K-1 (K = n_seeds)",
    controls=[
        Control(
            "low_rank",
            lambda p: {"rank": p["dim"] // 4, "n_seeds": 3},
            "the directions are drawn in a random d/4-dimensional subspace (isotropy "
            "in R^d dropped): inner products grow like sqrt(4 ln V / (d/4)), twice "
            "the isotropic maximum, above the bound",
        )
    ],
)
def _incoherence(p, ctx):
    bound = incoherence_bound(p["n_vectors"], p["dim"])
    maxima = []
    for seed in ctx.seeds(p["n_seeds"]):
        E = _unit_directions(
            rng_for(seed, "icrecall.memories.unit_directions"), p["n_vectors"], p["dim"], p["rank"]
        )
        maxima.append(max_off_diagonal_inner(E))
    judgement = EverySeed("max off-diagonal |<e_t, e_t'>|", bound, "<=", "theory").judge(
        maxima, seeds=ctx.seeds(p["n_seeds"])
    )
    return judgement, {"max_inner_per_seed": maxima, "bound": bound, "seeds": ctx.seeds(p["n_seeds"])}


def _linear_accuracy(n_pairs, dim, seed, key_rank=None):
    rng = rng_for(seed, "icrecall.memories.rng", dim, n_pairs)
    E = _unit_directions(rng, n_pairs, dim, key_rank)
    U = _unit_directions(rng, n_pairs, dim)
    targets = np.arange(n_pairs)
    W = linear_memory(E, U, targets)
    return decode(E @ W.T, U, targets).accuracy


def linear_n99(dim, seed, target=0.99, key_rank=None, cap=1 << 16):
    """Largest N (bisection on integers) with accuracy >= target for N pairs, V = N outputs
    (``cap`` bounds the doubling; 1 when even N = 2 fails)."""
    if _linear_accuracy(2, dim, seed, key_rank) < target:
        return 1
    lo, hi = 2, 2
    while hi < cap and _linear_accuracy(hi, dim, seed, key_rank) >= target:
        lo, hi = hi, hi * 2
    while hi - lo > max(1, lo // 64):
        mid = (lo + hi) // 2
        if _linear_accuracy(mid, dim, seed, key_rank) >= target:
            lo = mid
        else:
            hi = mid
    return lo


@claim(
    "icrecall.linear_memory.capacity",
    source=REF,
    provenance="reference",
    bounds=("icrecall.linear_capacity",),
    statement="the linear memory's N99 (largest N recalled at accuracy >= 0.99, V = N outputs) "
    "grows like d^2: the log-log slope of N99 against d in {dims} lies in [{slope_low}, "
    "{slope_high}] in every one of {n_seeds} seeds",
    templated=True,
    # quick n_seeds 6: at 3 seeds a slope at either end of the band passed 0.10-0.14 of the time
    # (python -m verify oc, from the stored spread); 6 is the budget it named for <= 0.05
    quick=dict(dims=[32, 64, 128], slope_low=1.6, slope_high=2.3, n_seeds=6, key_rank=None),
    full=dict(dims=[32, 64, 128, 256, 512], slope_low=1.6, slope_high=2.3, n_seeds=3, key_rank=None),
    seed_rule="every seed of seed..seed+n_seeds-1",
    controls=[
        Control(
            "keys_rank16",
            {"key_rank": 16},
            "the keys span a fixed 16-dimensional subspace whatever d: the crosstalk "
            "no longer shrinks with d, so N99 must stop growing like d^2",
        )
    ],
)
def _linear_capacity(p, ctx):
    dims = list(p["dims"])
    rows = []
    for seed in ctx.seeds(p["n_seeds"]):
        n99 = [linear_n99(d, seed, key_rank=p["key_rank"]) for d in dims]
        slope = float(np.polyfit(np.log(dims), np.log(n99), 1)[0])
        rows.append(
            {
                "seed": seed,
                "n99": n99,
                "slope": slope,
                "d2_over_lnN": [d * d / math.log(max(n, 2)) for d, n in zip(dims, n99)],
            }
        )
    slopes = [r["slope"] for r in rows]
    seeds = ctx.seeds(p["n_seeds"])
    quantity = "log-log slope of N99 against d"
    # the band around the theory's 2 (d^2 / ln V) is a convention: nobody derived 1.6 and 2.3
    judgement = all_of(
        low=EverySeed(quantity, p["slope_low"], ">=", "convention").judge(slopes, seeds=seeds),
        high=EverySeed(quantity, p["slope_high"], "<=", "convention").judge(slopes, seeds=seeds),
    )
    return judgement, {
        "dims": dims,
        "n99": rows[0]["n99"],
        "slope": slopes[0],
        "slope_per_seed": slopes,
        "per_seed": rows,
    }


#: the staged looks and the per-direction error of linear_memory.capacity_staged (see
#: LINEAR_SLOPE_PILOT)
LINEAR_SLOPE_LOOKS, LINEAR_SLOPE_ALPHA = (6, 12), 0.01
#: the pilot that fixed LINEAR_SLOPE_LOOKS and LINEAR_SLOPE_ALPHA: the per-seed log-log slope of
#: N99 against d in [32, 64, 128] at seeds 100-131 (never judged; revision dbcd0f2): mean 1.883,
#: sd 0.127, right-skewed (largest 2.238). Simulated with :func:`linear_slope_judgement` on
#: bootstrap draws of these slopes (2000 runs each): the pilot's law passes 1.00 at every choice;
#: the same draws shifted to a mean on 2.3 pass 0.092 at error 0.05, 0.055 at 0.025 and 0.029 at
#: 0.01 (looks 6, 12; the skew makes the t bound optimistic there), shifted to 1.6 pass 0.002. Error
#: 0.01 per direction over looks (6, 12) is taken
LINEAR_SLOPE_PILOT = {
    "seeds": list(range(100, 132)),
    "revision": "dbcd0f2",
    "mean": 1.883,
    "sd": 0.127,
    "pass_at_2.3": {"0.05": 0.092, "0.025": 0.055, "0.01": 0.029},
}


def linear_slope_judgement(slopes: list[float], seeds: list, looks: tuple[int, ...] = LINEAR_SLOPE_LOOKS):
    """linear_memory.capacity_staged's criterion: the mean over seeds of the log-log slope of N99
    against d within [1.6, 2.3] (a convention around the theory's 2), two
    :class:`verify.criteria.Sequential` parts joined by :func:`verify.criteria.all_of`, each
    judged in stages at ``looks`` by one-sided Student-t bounds at error
    :data:`LINEAR_SLOPE_ALPHA` per direction over the looks.

    >>> linear_slope_judgement([1.9, 1.8, 2.0, 1.85, 1.95, 1.9], list(range(6))).verdict
    'pass'
    >>> linear_slope_judgement([0.6, 0.5, 0.5, 0.45, 0.8, 1.0], list(range(6))).verdict
    'fail'
    """
    q = "mean log-log slope of N99 against d"
    rule = dict(source="convention", looks=tuple(looks), alpha=LINEAR_SLOPE_ALPHA)
    return all_of(
        low=Sequential(q, 1.6, ">=", **rule).judge(slopes, seeds=seeds),
        high=Sequential(q, 2.3, "<=", **rule).judge(slopes, seeds=seeds),
    )


@claim(
    "icrecall.linear_memory.capacity_staged",
    source=REF,
    provenance="reference",
    bounds=("icrecall.linear_capacity",),
    statement="the linear memory's N99 (largest N recalled at accuracy >= 0.99, V = N outputs) "
    "grows like d^2 on average over seeds: the mean over seeds of the log-log slope of N99 against "
    "d in {dims} lies in [1.6, 2.3] (a convention around 2), judged in stages at {looks} seeds by "
    "one-sided Student-t bounds (error 0.01 per direction over the looks, fixed on pilot seeds "
    "100-131; inconclusive when the last look does not decide). Restates linear_memory.capacity, "
    "whose 'every seed of 6' rule failed at an unused base seed on one seed's slope (2.417) from "
    "the right tail of the per-seed spread",
    templated=True,
    quick=dict(dims=[32, 64, 128], looks=list(LINEAR_SLOPE_LOOKS), key_rank=None),
    full=dict(dims=[32, 64, 128, 256, 512], looks=list(LINEAR_SLOPE_LOOKS), key_rank=None),
    seed_rule="sequential looks over the seeds seed..seed+n-1 of the per-seed slope (a one-sided "
    "Student-t bound per look; per-seed values recorded)",
    controls=[
        Control(
            "keys_rank16",
            {"key_rank": 16},
            "the keys span a fixed 16-dimensional subspace whatever d: the crosstalk no longer "
            "shrinks with d, so the slope falls far below 2 (pilot seeds 100-105: 0.44-1.0)",
        )
    ],
)
def _linear_capacity_staged(p, ctx):
    """The successor of linear_memory.capacity, whose rule "slope in [1.6, 2.3] on every one of 6
    seeds" failed at an unused base seed (seeds 2027-2032: one slope 2.417, the others 1.79-1.93);
    that claim stays, with its ledger entry, as history. Here the per-seed slope's mean is judged
    in stages (:func:`linear_slope_judgement`), looks and error fixed on pilot seeds 100-131
    (:data:`LINEAR_SLOPE_PILOT`)."""
    dims = list(p["dims"])
    looks = tuple(int(n) for n in p["looks"])
    seeds = ctx.seeds(looks[-1])

    def measure(seed):
        n99 = [linear_n99(d, seed, key_rank=p["key_rank"]) for d in dims]
        return {"seed": seed, "n99": n99, "slope": float(np.polyfit(np.log(dims), np.log(n99), 1)[0])}

    def judge(rows):
        return linear_slope_judgement([r["slope"] for r in rows], seeds[: len(rows)], looks)

    judgement, rows = run_staged(looks, seeds, measure, judge)
    return judgement, {
        "dims": dims,
        "slope_per_seed": [r["slope"] for r in rows],
        "seeds": seeds[: len(rows)],
        "per_seed": rows,
    }


def _shuffled_table(world, rng):
    """The same world whose answer table is permuted over subjects within each relation."""
    answer = world.answer.copy()
    for r in range(world.n_rel):
        answer[:, r] = answer[rng.permutation(world.n_subj), r]
    return dataclasses.replace(world, answer=answer)


def _accuracy_against(world, mlp, subj, rel, max_elements=1 << 24):
    """Fraction of queries (s, r) whose argmax_a u_a^T F(e_s + e_r) is the true a*(s, r) of
    ``world`` (``mlp`` may store another table), over blocks of queries whose hidden layer holds
    at most ``max_elements`` entries, as in direct_recall_accuracy (all 2 10^4
    queries at once needed 14.9 GiB at full scale); one block at quick scale."""
    rows = max(1, max_elements // max(mlp.width, 1))
    correct = 0
    for at in range(0, len(subj), rows):
        s_, r_ = subj[at : at + rows], rel[at : at + rows]
        pred = (mlp(world.subj[s_] + world.rel[r_]) @ world.unemb.T).argmax(axis=1)
        correct += int(np.sum(pred == world.answer[s_, r_]))
    return correct / len(subj)


#: the direct-recall thresholds (conventions: the construction's guarantee is accuracy 1 above its
#: memory dimension, these allow its rare crosstalk errors)
DIRECT_MEAN, DIRECT_MIN = 0.99, 0.98
#: seeds of the direct-recall claim. The mean part is judged on its 95% Student-t interval (it was
#: the mean read as a point, which a true mean of exactly 0.99 passed 0.47 of the time), so a true
#: mean of 0.99 passes about 2.5% of the time. ``verify oc`` on a run at pilot base seed 100 (never
#: judged; accuracies 0.9970-0.9995) gave power 1.00 at 5 seeds, the mean at 0.99 passing 0.01 and
#: every seed at 0.98 passing 0.02: the count is kept
N_DIRECT = 5


@claim(
    "icrecall.mlp.direct_recall",
    source=SOURCE + ", our triplet MLP (docs/icrecall.md)",
    provenance="derived",
    bounds=("icrecall.mlp_sufficient_dim",),
    statement="the triplet MLP recalls a*(s, r) from e_s + e_r: the 95% Student-t interval of the "
    f"mean accuracy over K = {{n_seeds}} seeds lies at or above {DIRECT_MEAN} (inconclusive when it "
    f"straddles it) and every seed >= {DIRECT_MIN}, on {{n_queries}} random (s, r) per seed",
    templated=True,
    quick=dict(DEFAULTS, n_queries=2000, n_seeds=N_DIRECT, table="true"),
    full=dict(DEFAULTS, n_subj=20000, dim=512, n_queries=20000, n_seeds=N_DIRECT, table="true"),
    seed_rule="95% Student-t interval of the mean over seed..seed+n_seeds-1 >= 0.99 and every seed "
    ">= 0.98 (per-seed accuracies recorded)",
    controls=[
        Control(
            "shuffled_table",
            {"table": "shuffled"},
            "the MLP stores a table permuted over subjects (same answers, wrong "
            "facts): scored against the true table it is right about 1/D of the time",
        ),
        Control(
            "dim_16",
            {"dim": 16},
            "d = 16, far below the memory dimension 32 ln(S R) = 221: the inner-product "
            "noise (std 1/4) swamps the threshold margin 1/2",
        ),
    ],
)
def _direct(p, ctx):
    shuffled = choice(p, "table", ("true", "shuffled")) == "shuffled"
    accs = []
    for seed in ctx.seeds(p["n_seeds"]):
        world = _world(p, seed)
        s, r, _ = sample_direct(world, p["n_queries"], rng_for(seed, "icrecall.memories.sample_direct"))
        if shuffled:  # the control: the MLP stores a permuted table
            stored = _shuffled_table(world, rng_for(seed, "icrecall.memories.shuffled_table"))
            accs.append(_accuracy_against(world, triplet_mlp(stored, p["theta"]), s, r))
        else:
            accs.append(direct_recall_accuracy(triplet_mlp(world, p["theta"]), s, r))
    seeds = ctx.seeds(p["n_seeds"])
    judgement = all_of(
        mean=Threshold(
            f"mean accuracy over {len(accs)} seeds, 95% interval", DIRECT_MEAN, ">=", "convention"
        ).judge(t_interval(accs), seeds=len(accs)),
        every_seed=EverySeed("accuracy", DIRECT_MIN, ">=", "convention").judge(accs, seeds=seeds),
    )
    return judgement, {"accuracy_per_seed": accs, "seeds": seeds}
