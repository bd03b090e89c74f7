"""What the claim modules of the retrieval area and verify.atlas.retrieval share: the source, the
grid constants, the oracle accuracy draws, the critical N_c search (one point of the sweep runner
verify.sweep.run_grid, memoised per run by verify.claims.shared) and the three-step model of
.early_gd, .gd_capacity and .mlp_product. Registers no claim."""

from __future__ import annotations

import math

import numpy as np

from constructions.retrieval.gd import three_steps_closed_form
from constructions.retrieval.task import (
    make_retrieval_task,
    oracle_accuracy,
    oracle_margin,
    sample_cooccurrence_counts,
    sample_sequences,
    value_memory,
)
from constructions.search import smallest_size_geometric
from constructions.seeding import rng_for
from theory.papers import paper
from verify.claims import shared
from verify.criteria import Judgement, Sequential, all_of
from verify.oc.laws import power_through
from verify.sweep import run_grid

SOURCE = paper("retrieval")
EMB_CODE = {"gaussian": 0, "orthogonal": 1}
N_RANGE = (10, 10**7)
RATIO = 1.1
TARGET = 0.9
N_SEEDS = 3
N_TEST = 4096
#: the seed rule of the capacity claims judged on every one of 3 base seeds
SEED_RULE3 = "every seed of seed..seed+2 (each N_c: mean accuracy of 3 draws)"


def draw_oracle(
    V, d, L, N, seed, n_draws=N_SEEDS, embedding="gaussian", counts: str = "multinomial"
) -> tuple[list, list]:
    """Oracle accuracy and smallest decoding margin (constructions.retrieval.task.oracle_margin,
    > 0 exactly when the accuracy is 1) of the one-step value memory of ``n_draws`` independent
    draws; draw k fixes its task (embeddings, pi, trigger) from (seed, k, V, d, L, embedding) and
    its counts from the same key plus N; ``counts`` is how the label counts are drawn
    (constructions.retrieval.task.LABEL_COUNTS).

    >>> accs, margins = draw_oracle(16, 16, 4, 2000, 0, 2, "orthogonal")
    >>> accs, [m > 0 for m in margins]
    ([1.0, 1.0], [True, True])
    """
    pairs = [draw_one(V, d, L, N, seed, k, embedding, counts) for k in range(n_draws)]
    return [a for a, _ in pairs], [m for _, m in pairs]


def draw_one(V, d, L, N, seed, k, embedding="gaussian", counts: str = "multinomial") -> tuple[float, float]:
    """(oracle accuracy, smallest decoding margin) of draw ``k`` alone: the k-th draw of
    :func:`draw_oracle` and :func:`draw_accuracies` (its key does not depend on how many draws are
    taken), so a staged rule can measure the draws one at a time.

    >>> draw_one(16, 4, 4, 10**9, 0, 1)[0] == draw_accuracies(16, 4, 4, 10**9, 0, 2)[1]
    True
    """
    key = [int(seed), int(k), int(V), int(d), int(L), EMB_CODE[embedding]]
    task = make_retrieval_task(V, d, rng_for(*key), embedding)
    label_counts, cooc = sample_cooccurrence_counts(task, L, int(N), rng_for(*key, int(N)), counts)
    w_out = value_memory(task, label_counts, cooc, L)
    return oracle_accuracy(task, w_out), oracle_margin(task, w_out)


def draw_accuracies(
    V, d, L, N, seed, n_draws=N_SEEDS, embedding="gaussian", counts: str = "multinomial"
) -> list:
    """Oracle accuracy of the one-step value memory of ``n_draws`` independent draws; draw k fixes its task
    (embeddings, pi, trigger) from (seed, k, V, d, L, embedding) and its counts from the same key plus N;
    ``counts`` is how the label counts are drawn (constructions.retrieval.task.LABEL_COUNTS)."""
    accs = []
    for k in range(n_draws):
        key = [int(seed), k, int(V), int(d), int(L), EMB_CODE[embedding]]
        task = make_retrieval_task(V, d, rng_for(*key), embedding)
        label_counts, cooc = sample_cooccurrence_counts(task, L, int(N), rng_for(*key, int(N)), counts)
        accs.append(oracle_accuracy(task, value_memory(task, label_counts, cooc, L)))
    return accs


def mean_oracle_accuracy(
    V, d, L, N, seed, n_seeds=N_SEEDS, embedding="gaussian", counts: str = "multinomial"
) -> float:
    """Mean oracle accuracy over ``n_seeds`` draws (:func:`draw_accuracies`)."""
    return float(np.mean(draw_accuracies(V, d, L, N, seed, n_seeds, embedding, counts)))


def critical_n(
    V, d, L, seed, target=TARGET, embedding="gaussian", n_seeds=N_SEEDS, counts: str = "multinomial"
) -> dict:
    """N_c(target): smallest N with mean oracle accuracy >= target over ``n_seeds`` seeds, by
    geometric bisection over [10, 10^7] stopped at ratio hi/lo <= 1.1
    (:func:`constructions.search.smallest_size_geometric`, docs/retrieval.md). Returns the bracket
    and every evaluation; N_c = inf when even 10^7 samples miss the target."""
    trace = []

    def reaches(N: int) -> bool:
        trace.append([int(N), mean_oracle_accuracy(V, d, L, N, seed, n_seeds, embedding, counts)])
        return trace[-1][1] >= target

    found = smallest_size_geometric(*N_RANGE, reaches, RATIO)
    if found.size is None:
        return {"n_c": math.inf, "lo": N_RANGE[1], "hi": math.inf, "trace": trace}
    if found.below is None:
        return {"n_c": float(found.size), "lo": found.size, "hi": found.size, "trace": trace}
    return {"n_c": float(found.size), "lo": found.below, "hi": found.size, "trace": sorted(trace)}


def nc_point(params: dict, seed: int) -> dict:
    """One sweep point (verify.sweep.run_grid): :func:`critical_n` at the point's (V, d, L,
    embedding, target, and label counts: "multinomial" when the point has no "counts") from base seed ``seed``.

    >>> nc_point({"vocab_size": 16, "d_model": 16, "seq_len": 4, "embedding": "orthogonal", "target": 0.9}, 0)["n_c"]
    133.0
    """
    return critical_n(
        params["vocab_size"],
        params["d_model"],
        params["seq_len"],
        seed,
        params["target"],
        params["embedding"],
        counts=params.get("counts", "multinomial"),
    )


@shared
def critical_n_run(
    ctx,
    V: int,
    d: int,
    L: int,
    seed: int,
    embedding: str = "gaussian",
    target: float = TARGET,
    counts: str = "multinomial",
) -> dict:
    """:func:`critical_n` of one (V, d, L, embedding, target) from base seed ``seed``, run as one
    point of the sweep runner verify.sweep.run_grid (in this process) and computed once per run:
    every capacity claim and the scaling-law grid read the same N_c.

    >>> from verify.claims import Context
    >>> critical_n_run(Context(), 16, 16, 4, 0, "orthogonal")["n_c"]
    133.0
    """
    point = {"vocab_size": V, "d_model": d, "seq_len": L, "embedding": embedding, "target": target}
    if counts != "multinomial":
        point["counts"] = counts
    (rec,) = run_grid(nc_point, [point], seeds=[seed], out_path=None, workers=1, progress=False)
    return rec["result"]


def shared_nc(
    ctx,
    V: int,
    d: int,
    L: int,
    embedding: str = "gaussian",
    target: float = TARGET,
    seed: int | None = None,
    counts: str = "multinomial",
) -> float:
    """N_c of :func:`critical_n_run`, from base seed ``seed`` (the run's by default), with the label
    counts ``counts`` (constructions.retrieval.task.LABEL_COUNTS).

    >>> from verify.claims import Context
    >>> shared_nc(Context(), 16, 16, 4, "orthogonal")
    133.0
    """
    s = ctx.seed if seed is None else int(seed)
    if counts == "multinomial":  # the cache key of every multinomial N_c stays as it was
        return critical_n_run(ctx, V, d, L, s, embedding, target)["n_c"]
    return critical_n_run(ctx, V, d, L, s, embedding, target, counts)["n_c"]


def loglog_slope(xs, ys) -> float:
    """Least-squares slope of log y against log x."""
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def accuracy_curve(V, d, L, seed, embedding, n_values) -> list:
    return [[int(N), mean_oracle_accuracy(V, d, L, N, seed, N_SEEDS, embedding)] for N in n_values]


def law(xs, ncs, which: str) -> list:
    """The N_c the criterion reads: ``"measured"`` (the claim) or ``"power K"`` (a control), a
    synthetic competing law through the first measured point, N_c(x0) (x / x0)^K
    (:func:`verify.oc.laws.power_through`, the helper the operating characteristic draws with).

    >>> law([1, 2, 4], [10.0, 30.0, 50.0], "measured")
    [10.0, 30.0, 50.0]
    >>> law([1, 2, 4], [10.0, 30.0, 50.0], "power 0.5")
    [10.0, 14.142135623730951, 20.0]
    """
    if which == "measured":
        return list(ncs)
    if which.startswith("power "):
        return power_through(xs, float(which.split(" ", 1)[1]), xs[0], ncs[0]).tolist()
    raise ValueError(f"law must be 'measured' or 'power K', got {which!r}")


def no_nan(accuracies) -> None:
    """Exact recall is read as accuracy == 1; a NaN accuracy would read as "not exact", so it raises.

    >>> no_nan([1.0, 0.5])
    >>> no_nan([1.0, float("nan")])
    Traceback (most recent call last):
    ...
    ValueError: an oracle accuracy is NaN: exact recall cannot be read from it
    """
    if any(math.isnan(float(a)) for a in accuracies):
        raise ValueError("an oracle accuracy is NaN: exact recall cannot be read from it")


@shared
def trained(
    ctx,
    V: int,
    d: int,
    L: int,
    N: int,
    lr_value: float,
    lr_attn: float,
    seed: int,
    mlp_width: int | None = None,
) -> tuple:
    """Task, three-step iterates (closed form) and a fresh test set of N_TEST sequences from
    ``seed``, computed once per run and shared across claims.

    >>> from verify.claims import Context
    >>> task, steps, test = trained(Context(), 8, 4, 4, 16, 8.0, 8.0, 0)
    >>> steps.w_out_2.shape, test.n_samples
    ((8, 4), 4096)
    """
    rng = rng_for(int(seed), "retrieval.early_gd.trained.rng", V, d, L, N, mlp_width or 0)
    task = make_retrieval_task(V, d, rng, mlp_width=mlp_width)
    data = sample_sequences(task, L, N, rng)
    test = sample_sequences(task, L, N_TEST, rng)
    return task, three_steps_closed_form(data, lr_value, lr_attn), test


#: the looks (seeds) of the band claims' staged rules
BAND_LOOKS = (3, 6, 12)
#: their error per direction: at 0.05 ``verify oc`` found a mean placed on an end passing 0.06-0.07
#: of 200 simulated replications (pilot base seed 100 of retrieval.capacity.product_form), above
#: the 0.05 a pass may allow; at 0.025 the rate stays clear of it
BAND_ALPHA = 0.025


def band_rules(
    quantity: str, centre: float, tol: float, source: str, looks=BAND_LOOKS, alpha: float = BAND_ALPHA
) -> dict:
    """The two ends of a band centre +- tol as staged rules over seeds
    (verify.criteria.Sequential): "low" (mean >= centre - tol) and "high" (mean <= centre + tol).
    Both must pass; either fails when its far bound misses its end; undecided at the cap is
    inconclusive.

    >>> sorted(band_rules("x", 1.0, 0.1, "pilot"))
    ['high', 'low']
    """
    if not tol > 0 or math.isnan(centre):
        raise ValueError(f"a band needs a finite centre and tol > 0, not {centre} +- {tol}")
    return {
        "low": Sequential(quantity, centre - tol, ">=", source, looks, alpha),
        "high": Sequential(quantity, centre + tol, "<=", source, looks, alpha),
    }


def staged_band(measure, seeds, rules: dict) -> tuple[Judgement, list]:
    """Measure ``measure(seed)`` look by look (the looks of ``rules``, which share them) while an
    end of the band is undecided, then judge both ends on the values (each reads the looks it
    needs); an infinite value (no N_c below 10^7) stops the run and fails (no estimate); NaN
    raises. Returns (verify.criteria.all_of of the ends, the values measured).

    >>> rules = band_rules("x", 1.0, 0.1, "pilot")
    >>> j, vals = staged_band(lambda s: 1.0 + 0.01 * (s % 3 - 1), range(12), rules)
    >>> j.verdict, len(vals)
    ('pass', 3)
    >>> staged_band(lambda s: math.inf, range(12), rules)[0].verdict
    'fail'
    """
    from verify.criteria import Threshold

    seeds = list(seeds)
    looks = next(iter(rules.values())).looks
    values: list[float] = []
    for n in looks:
        for s in seeds[len(values) : n]:
            v = float(measure(s))
            if math.isnan(v):
                raise ValueError(f"seed {s} measured NaN")
            values.append(v)
            if not math.isfinite(v):
                finite = Threshold("fraction of seeds with every N_c below 10^7", 1.0, ">=", "theory")
                return finite.judge(0.0), values
        if all(r.judge(values, seeds[: len(values)]).verdict != "inconclusive" for r in rules.values()):
            break
    return all_of(**{k: r.judge(values, seeds[: len(values)]) for k, r in rules.items()}), values
