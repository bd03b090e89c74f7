"""Smallest storing dimension of a gradient-TRAINED Hopfield memory (the capacity atlas, docs/atlas.md).

The companion of :mod:`verify.hopfield.storing_dim` (the explicit construction). The paper
trains nothing but probes Llama-3 (docs/hopfield.md); the model trained here is our formalisation's
ungated modern Hopfield network [reference], f(xi) = X softmax(beta X^T xi), with its
memory matrix X learned [derived] (:mod:`constructions.hopfield.trained`):

- trained: X in R^(d x N), columns held on the sphere of radius M = K sqrt(d - 1), K = 3, beta = 1
  (the construction's R4 setting), parametrised as x_j = M w_j / ||w_j||: P = d N parameters
  (every trained parameter; the cues are the input);
- task: N fixed cues q_i uniform on the same sphere and a uniform bijection pi; cue i must retrieve
  memory pi(i). Information: log2(N!) bits [derived, counting]: the memory must realise one of the
  N! bijections of the N cues, so at p bits per parameter P >= log2(N!)/p. This is an honest
  lower bound on the task (unlike the stated convention I = N log2 N of the construction
  families, which solve the auto-associative task);
- stored: the construction's criterion on this map, ||f(q_i) - x_pi(i)|| <= 1/(beta N M) for all i,
  reached at some step s <= ``steps`` of full-batch Adam (lr 0.5, cross-entropy of
  softmax(beta X^T q_i) against pi(i), columns re-projected to the sphere after every step),
  checked every 10 steps. The explicit construction x_pi(i) = q_i (query = memory: exactly the
  construction of hopfield.storing_dim) is measured on the same draws.

Search: for each N and each draw k, d = 2, 3, ... ascending up to R4's sufficient dimension
d_R4(N) (:func:`verify.hopfield.storing_dim_setup.r4_dimension`); draw k at d is the stream
(seed, 43, k, N, d) (cues, pi, initial W ~ N(0, 1)); d*_k is the first storing d. The trained
problems are batched in windows of 4 dimensions (the result does not depend on the window).

Criterion [derived], fixed on pilot seeds 100 and 101 before the judged seeds: (a) the trained d*_k
exists (<= d_R4(N)) for every draw at every N, and (b) at every N the median trained d* is at most
the median d* of the explicit construction on the same draws (training finds memories at least as
good as the cues themselves). Control ``untrained``: the memory at initialisation (0 steps, W
independent of the cues) stores at no d of the grid, so the criterion must fail.

Pilots (quick setting, N = 16 / 32 / 64): seed 100 trained d* [5, 5, 4] / [6, 6, 6] / [7, 7, 7],
construction [8, 6, 6] / [8, 8, 8] / [11, 11, 9]; seed 101 trained [5, 5, 5] / [6, 6, 6] /
[7, 7, 7], construction [7, 8, 6] / [7, 7, 7] / [9, 9, 10]; storing steps <= 160 against a budget of
400; 2.0-2.2 CPU-s per search. Earlier pilots chose the optimiser: without the re-projection
(lr 0.05-0.5) training needed 250-750 steps at N = 64-128 and stored no better than the
construction; with it, lr 0.5 was the fastest of 0.05, 0.1, 0.2, 0.3, 0.5.

Judged seeds (quick, after the pilots; all pass, the untrained control fails at each): seed 0
trained [5, 5, 5] / [7, 6, 6] / [7, 7, 7] against construction [7, 7, 7] / [7, 8, 7] / [9, 10, 9];
seed 1 [5, 5, 4] / [6, 5, 6] / [6, 7, 7] against [6, 6, 5] / [8, 9, 7] / [9, 9, 9]; seed 2
[5, 6, 5] / [6, 6, 6] / [7, 7, 7] against [6, 6, 6] / [8, 8, 8] / [9, 9, 9]. Full setting (N = 16,
32, 64, 128, 256, 1000 steps; about 31 CPU-s per seed): pass at pilot 100 and seeds 0, 1, 2; at
N = 256 trained d* 8-9 against construction 11-12.

Changed criterion (replicates over seeds): part (b) was judged at the base seed alone, one value
per N (a rule over sizes, which verify oc cannot simulate: no spread). It is now judged on each of
``seeds`` seeds (the base seed and the next ones; the searches the atlas's
``atlas.hopfield_trained.*_over_seeds`` claims already run at seeds 0-4, one cache entry each): per
seed, the worst N's ratio median trained d* / median construction d* must be <= 1 on every seed
(the bound 1 and its source, the criterion fixed on pilots 100 and 101, are the old rule's; the quantity per N is the old rule's). The count 5 is
the fewest at which a worst seed's ratio placed on 1 passes at most 0.5^5 = 0.031 of the time.
Pilot base seeds 100-107 (never judged): per-seed worst ratios 0.833, 0.857, 0.875, 0.75, 0.778,
0.857, 0.857, 0.833 (mean 0.830, sd 0.042). Part (a) is unchanged (every draw at the base seed).

Changed rule over seeds (a sequential rule on the mean): "<= 1 on every one of 5 seeds" read a
ratio of medians of 3 integers per N, whose worst N sits on 1 at some seeds (seed 4 of the
reference run: 1.0), one integer step from a miss (8/7). ``verify oc`` drew it from a normal at
the seed-0 record's spread (mean 0.876, sd 0.070) and failed 0.17 of 5-seed runs "as measured": a
pass that one unlucky seed's median of three draws can turn into a fail. Part (b) is now
``Sequential`` on the mean over seeds of the same per-seed worst ratio, threshold 1 (the old
rule's), looks at 5 and 10 seeds, error 0.03 per direction over the looks: the looks and error
decided by ``verify.criteria_seeds.staged_rates`` (4000 runs) at the pilots' spread (seeds
100-107: mean 0.830, sd 0.042; pilots 108 and 109: 0.833 each): at the pilots' mean pass 1.00 at
the first look (also at sd 0.07: 5.4 seeds on average); on the threshold pass 0.024, fail 0.025.
A first run at base seed 0 with error 0.05 passed at its first look, but ``verify oc`` passed the
threshold alternative 0.05 of 200 times (staged_rates: 0.043), at the edge of 0.05: the error was
lowered to 0.03, a stricter rule, before the reference run. The first look reads the
seeds 0-4 the atlas's claims already search; a second look costs 5 more searches.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from theory.papers import paper
from verify.claims import Control, claim
from verify.criteria import EverySeed, Sequential, all_of
from verify.hopfield.trained_dim_setup import CLAIM_ID, FULL, QUICK, shared_search


def _median_ratios(rows: list) -> list[float]:
    """Per N, median trained d* / median construction d* on the same draws: a draw not stored by
    d_R4 counts as d_R4 + 1 (the median is then a lower bound; the draw fails part (a)), a
    construction not stored by d_R4 as infinite (ratio 0).

    >>> _median_ratios([{"d_star": [5, 5, 4], "d_star_construction": [6, 6, 7], "d_R4": 23}])
    [0.8333333333333334]
    """
    out = []
    for r in rows:
        tr, co = r["d_star"], [d for d in r["d_star_construction"] if d is not None]
        med_c = float(np.median(co)) if len(co) == len(r["d_star_construction"]) else float("inf")
        out.append(float(np.median([d if d is not None else r["d_R4"] + 1 for d in tr])) / med_c)
    return out


@claim(
    CLAIM_ID,
    source=f"{paper('hopfield')}: the modern Hopfield network of Ramsauer et al. 2020 "
    "(docs/hopfield.md#setting) with its memory matrix trained (our task and trainer)",
    provenance="derived",
    bounds=("hopfield.capacity",),
    templated=True,
    statement=(
        "for N in {sizes} cues uniform on the sphere of radius {K} sqrt(d-1) mapped by a random "
        "bijection to N memories, the memory matrix X (d x N, columns on the same sphere, beta = {beta}) "
        "trained by full-batch Adam (lr {lr}, cross-entropy, {steps} steps) retrieves every memory in one "
        "update to within 1/(beta N M) at some d* <= d_R4(N) (p = {p}; searched upwards from d = 2) in each of "
        "{draws} draws, and at every N the median trained d* is at most the median d* of the explicit "
        "construction (memories = cues) on the same draws: per seed the worst N's ratio of the medians, "
        "whose mean over seeds must be <= 1 (one-sided Student-t bounds at looks of {looks} seeds, "
        "error 0.03 per direction over the looks)"
    ),
    quick=dict(QUICK, looks=[5, 10]),
    full=dict(FULL, looks=[5, 10]),
    kind="empirical",
    controls=[
        Control(
            "untrained",
            {"steps": 0},
            "the memory at initialisation (0 steps; W ~ N(0, 1) independent of the cues) stores at no d "
            "of the grid, so the criterion must fail",
        )
    ],
    seed_rule="ctx.seed fixes the draws (seed, k), k < draws: every draw at every N must store by "
    "d_R4 (at the base seed), and the mean over the seeds of ctx.seeds(looks[-1]), measured in stages "
    "(a sequential rule), of the worst N's ratio median trained d* / median construction d* must not "
    "exceed 1",
)
def stores_by_r4(p, ctx):
    rows = [dict(r) for r in shared_search(p, ctx)["rows"]]  # own copies: the atlas reads the search too
    every = all(d is not None for r in rows for d in r["d_star"])
    looks = tuple(int(n) for n in p["looks"])
    if looks[0] < 5:
        raise ValueError(f"part (b) looks first at >= 5 seeds (no pass on few draws), got looks {looks}")
    seeds = ctx.seeds(looks[-1])
    rule = Sequential("worst N's median trained d* / median construction d*", 1.0, "<=", "pilot", looks, 0.03)
    # the worst N's ratio of medians at each seed, measured one look at a time (the base seed's
    # search is the one above; the atlas's *_over_seeds claims read seeds 0-4 from the same cache)
    staged = rule.run(lambda s: max(_median_ratios(shared_search(p, replace(ctx, seed=s))["rows"])), seeds)
    measured_seeds = staged.measured["seeds"]
    worst = staged.measured[rule.quantity]
    medians = _median_ratios(rows)  # the base seed's, per N
    beats = []
    for r, ratio in zip(rows, medians):
        stored = None not in r["d_star"]
        r["median_trained_over_construction"] = ratio if stored else None
        beats.append(stored and ratio <= 1.0)
    # a draw not stored by d_R4 (None) is recorded as (d_R4 + 1) / d_R4, a lower bound: it fails
    ratios = [(d if d is not None else r["d_R4"] + 1) / r["d_R4"] for r in rows for d in r["d_star"]]
    labels = [f"N={r['N']}, draw {k}" for r in rows for k in range(len(r["d_star"]))]
    judgement = all_of(
        every_draw_stores=EverySeed("trained d* / d_R4", 1.0, "<=", "theory", unit="draws").judge(
            ratios, seeds=labels
        ),
        median_at_most_construction=staged,
    )
    return judgement, {
        "d_star": {
            str(r["N"]): {"trained": r["d_star"], "construction": r["d_star_construction"]} for r in rows
        },
        "rows": rows,
        "every_draw_stores": every,
        "median_at_most_construction": beats,
        "median_ratios_base_seed": medians,
        "worst_median_ratio_per_seed": dict(zip([str(s) for s in measured_seeds], worst)),
        "criterion": "one update from q_i within 1/(beta N M) of x_pi(i) for all N cues",
        "params": "P = d N (the memory matrix; cues are the input)",
        "steps": p["steps"],
    }
