"""The capacity-depth tradeoff measured on trained one-pass models.

One pass, no chain of thought: a k-hop query (x, r_1..r_k) is read by the trained model
(docs/geometric.md#the-trained-model) with one learned token per chain rho in [R]^k (the composite
relation pi_rho of the one-pass construction, B5; a learned per-chain embedding contains its
per-position sums as a special case). The trained threshold d*(k) is the smallest embedding
dimension at which full-batch Adam reaches train accuracy 1 on all N*R^k queries. It is set beside
the k-hop lower bound khop_dim_bound(N, R, k, p = 32) (theory.geometric.multihop; the trained
model's MLP and unembedding are trained on the facts, so the bound's fact-independent-decoder
hypothesis does not hold for it: the bound is reported, not implied) and beside the dimension R^k d0
at which the one-pass construction with spherical codes answers every query. The tradeoff (depth
costs dimension in one pass) is the paper's [abstract]; the model, the sweep and the criterion are
[derived].
"""

from __future__ import annotations

import numpy as np

from constructions.geometric.multihop import all_chains, all_multi_hop_queries, build_nocot_model, compose
from constructions.geometric.train import TrainedModel, init_params, train_accuracy, train_model
from constructions.search import smallest_size
from constructions.seeding import torch_generator
from constructions.tasks import make_bijections
from theory.geometric import multihop as M
from verify.claims import Control, choice, claim, rng_for, shared
from verify.criteria import EverySeed, all_of
from verify.geometric.gd_setup import train_margin
from verify.geometric.single_hop_setup import SRC, TrainRecipe, _nocot_accuracy


def composite_perms(perms, n_hops: int) -> np.ndarray:
    """pi_rho for every chain rho in [R]^k (mixed-radix order): an (R^k, N) table of bijections."""
    n = perms.shape[1]
    return np.stack(
        [compose(perms, np.tile(c, (n, 1)), np.arange(n)) for c in all_chains(perms.shape[0], n_hops)]
    )


def _model_at(table, dim, p, seed, init=False):
    """The model trained on the fact table ``table`` (one relation per row) at embedding dimension
    ``dim`` from ``seed`` (stopping at train accuracy 1); ``init``: the same model untrained."""
    import torch

    gen = torch_generator(int(seed) * 1000 + int(dim))
    dtype = {"float32": torch.float32, "float64": torch.float64}[p["train_dtype"]]
    if init:
        return TrainedModel(
            perms=table, params=init_params(table.shape[1], table.shape[0], dim, p["mlp_width"], gen, dtype)
        )
    return train_model(
        table,
        dim,
        p["mlp_width"],
        steps=p["steps"],
        lr=p["lr"],
        generator=gen,
        record_every=p["record_every"],
        stop_at_full_accuracy=True,
        dtype=dtype,
    )


def reaches_one(table, dim, p, seed, init=False) -> bool:
    """Does the trained model on the fact table ``table`` (one relation per row) reach train accuracy 1
    at embedding dimension ``dim``? ``init``: the same model untrained (the control)."""
    return train_accuracy(_model_at(table, dim, p, seed, init)) == 1.0


def train_margin_at(table, dim, p, seed, init=False) -> float:
    """The smallest train margin (:func:`verify.geometric.gd_setup.train_margin`: target logit less
    the largest other logit, over all facts) of the model :func:`reaches_one` trains on ``table`` at
    embedding dimension ``dim`` from ``seed`` (the same generator, so the same run): > 0 exactly when
    that model reaches train accuracy 1."""
    return train_margin(_model_at(table, dim, p, seed, init))


@shared
def depth_margin(ctx, table: np.ndarray, recipe: TrainRecipe, seed: int, dim: int, init: bool) -> float:
    """:func:`train_margin_at` of ``table`` at ``dim`` from ``seed``, once per run (the claim and its
    controls share it).

    >>> from verify.claims import Context
    >>> table = composite_perms(make_bijections(8, 2, rng_for(0, "geometric.depth.make_bijections", 8, 2)), 1)
    >>> recipe = TrainRecipe(16, 150, 3e-2, 25, 16, "float32")
    >>> depth_margin(Context(), table, recipe, seed=7, dim=16, init=True) < 0
    True
    """
    return train_margin_at(table, dim, recipe.as_dict(), seed, init)


def trained_depth_threshold(table, p, seed, init=False):
    """Smallest d in [1, d_max] reaching accuracy 1 (:func:`reaches_one`) by bisection
    (constructions.search; treated as monotone in d), or None when d_max does not reach it: d_max is
    probed first, then the bisection runs over the dimensions below it (d_max when none stores)."""
    d_max = p["d_max"]
    if not reaches_one(table, d_max, p, seed, init):
        return None
    stores = lambda d: reaches_one(table, d, p, seed, init)  # noqa: E731
    below = smallest_size(range(1, d_max), stores).size if d_max > 1 else None
    return d_max if below is None else below


@shared
def trained_d_star(ctx, table: np.ndarray, recipe: TrainRecipe, seed: int, init: bool) -> int | None:
    """:func:`trained_depth_threshold` of the fact table ``table`` trained from ``seed`` (one run per
    run of the toolkit: the claim and its controls share it).

    >>> from verify.claims import Context
    >>> table = composite_perms(make_bijections(8, 2, rng_for(0, "geometric.depth.make_bijections", 8, 2)), 1)
    >>> recipe = TrainRecipe(16, 150, 3e-2, 25, 16, "float32")
    >>> trained_d_star(Context(), table, recipe, seed=7, init=True) is None
    True
    """
    return trained_depth_threshold(table, recipe.as_dict(), seed, init)


@shared
def construction_block_dim(ctx, perms: np.ndarray, k: int, seed: int, d0_max: int = 64) -> int:
    """Smallest d0 in 1..d0_max at which the one-pass construction (spherical codes of this seed)
    answers all N*R^k queries with margin > 0 (predicate: accuracy 1), scanned upwards
    (constructions.search); computed once per run.

    >>> from verify.claims import Context
    >>> perms = make_bijections(20, 2, rng_for(5, "geometric.depth.make_bijections", 20, 2))
    >>> construction_block_dim(Context(), perms, 1, seed=1)
    2
    """
    start, chains, target = all_multi_hop_queries(perms, k)

    def answers(d0: int) -> bool:
        model = build_nocot_model(perms, k, d0, rng=rng_for(seed, "geometric.depth.build_nocot_model", d0, k))
        return _nocot_accuracy(model, start, chains, target)["accuracy"] == 1.0

    found = smallest_size(range(1, d0_max + 1), answers, strategy="scan").size
    if found is None:
        raise ValueError(f"the construction does not answer every query below d0_max={d0_max}")
    return found


#: The control single_hop trains its i-th k from seed + i * this stride: independent runs on the
#: same 1-hop facts, outside every judged seed range.
SINGLE_HOP_SEED_STRIDE = 10_000


@claim(
    "geometric.multihop.trained_depth",
    source=f"{SRC}, capacity-depth tradeoff (abstract)",
    provenance="derived",
    needs=("torch",),
    controls=[
        Control(
            "init",
            {"weights": "init"},
            "the same model at initialisation answers about 1/N of "
            "the queries at every d, so no threshold exists",
        ),
        Control(
            "single_hop",
            {"facts": "1-hop", "seeds": 1},
            "depth removed: every k gets the 1-hop "
            "facts (what each chain-of-thought step needs), each k's run trained from its own seed, "
            "so the threshold cannot grow with k beyond the run-to-run spread (first seed only, "
            "CPU budget)",
        ),
    ],
    seed_rule="every seed of ctx.seeds(seeds)",
    templated=True,
    statement="one pass, no chain of thought: the smallest trained embedding dimension d*(k) <= {d_max} at "
    "which the trained model (one learned token per chain) reaches train accuracy 1 on all N*R^k k-hop "
    "queries (N = {n_subjects}, R = {n_relations}) grows strictly with k in {hops}, and lies between the "
    "k-hop lower bound R^k log2(N + 1 - I_k)/32 and the dimension R^k d0 at which the one-pass "
    "construction answers every query, on every one of {seeds} seeds; read continuously, each k's model "
    "at d = {d_max} has smallest train margin > 0 and the (k+1)-hop model trained at d*(k) a smallest "
    "train margin < 0",
    quick={
        "n_subjects": 32,
        "n_relations": 2,
        "hops": [1, 2, 3],
        "mlp_width": 32,
        "steps": 300,
        "lr": 3e-2,
        "record_every": 25,
        "d_max": 32,
        "seeds": 5,
        "train_dtype": "float32",
        "weights": "trained",
        "facts": "k-hop",
    },
    full={
        "n_subjects": 128,
        "n_relations": 3,
        "hops": [1, 2, 3],
        "mlp_width": 64,
        "steps": 1000,
        "lr": 1e-2,
        "record_every": 50,
        "d_max": 128,
        "seeds": 5,
        "train_dtype": "float32",
        "weights": "trained",
        "facts": "k-hop",
    },
)
def trained_depth(p, ctx):
    """Pilot (seeds 100, 101, 102, not judged; quick parameters): d* = 3, 4, 6 for k = 1, 2, 3 on each,
    about 1.4 CPU-s per seed; the criterion was fixed after the pilot and before any judged seed.

    The control single_hop used to give every k the same run (the 1-hop facts of the seed, trained
    from the seed), one shared result read once per k: its d*(k) were equal by construction and its
    steps 0. Its i-th k (i = 0, 1, ...) now trains on the same 1-hop facts from the independent
    training seed seed + i * :data:`SINGLE_HOP_SEED_STRIDE` (outside every judged seed range), so
    its steps in k are the run-to-run spread of d* at depth 1. It runs on the first seed only (CPU
    budget: on all three seeds its new runs took the claim's quick record from 3.0 s to 4.6 s, on
    one to 3.4 s). The claim's runs are
    unchanged (the run keys leave out the seed count, which no single run depends on).

    Changed measurement and budget (no spread; see :func:`_depth_judgement`): every part was an
    integer measured the same on every seed (d* = 3, 4, 6), so ``verify oc`` could not simulate it;
    "found" is now read on the train margin at d_max (the same verdict) and a continuous part, the
    (k+1)-hop model's margin at d*(k), is added beside the integer step. Quick seeds 3 -> 5: an
    every-seed rule at its threshold passes 0.5^n of the time, 0.125 at 3 seeds (not admissible),
    0.031 at 5. At base seed 0 the old rule passed (3 seeds)."""
    n, r = p["n_subjects"], p["n_relations"]
    init = choice(p, "weights", ("trained", "init")) == "init"  # "init": the control
    one_hop = choice(p, "facts", ("k-hop", "1-hop")) == "1-hop"  # "1-hop": the control single_hop
    rows, ok = [], []
    for seed in ctx.seeds(p["seeds"]):
        perms = make_bijections(n, r, rng_for(seed, "geometric.depth.make_bijections", n, r))
        per_k = []
        for i, k in enumerate(p["hops"]):
            hops = 1 if one_hop else k
            # single_hop: the i-th k's run is trained from its own seed (see the docstring)
            train_seed = seed + i * SINGLE_HOP_SEED_STRIDE if one_hop else seed
            # the setting enters as (table, seed, init): shared with the controls
            d_star = trained_d_star(ctx, composite_perms(perms, hops), TrainRecipe.of(p), train_seed, init)
            per_k.append(
                {
                    "k": k,
                    "d_star": d_star,
                    "bound_p32": M.khop_dim_lower_bound(n, r, k, 32),
                    "construction_dim": M.dim_nocot(r, k, construction_block_dim(ctx, perms, k, seed)),
                }
            )
        ds = [row["d_star"] for row in per_k]
        # the continuous reading (module docstring of _depth_judgement): each k's model at d_max, and
        # the next depth's model at this depth's d*(k)
        recipe = TrainRecipe.of(p)
        tables = [composite_perms(perms, 1 if one_hop else k) for k in p["hops"]]
        train_seeds = [seed + i * SINGLE_HOP_SEED_STRIDE if one_hop else seed for i in range(len(p["hops"]))]
        for i, row in enumerate(per_k):
            row["margin_at_d_max"] = depth_margin(ctx, tables[i], recipe, train_seeds[i], p["d_max"], init)
            if i + 1 < len(per_k) and row["d_star"] is not None:
                row["next_depth_margin_at_d_star"] = depth_margin(
                    ctx, tables[i + 1], recipe, train_seeds[i + 1], row["d_star"], init
                )
        found = all(d is not None for d in ds)
        increasing = found and all(a < b for a, b in zip(ds, ds[1:]))
        between = found and all(row["bound_p32"] <= row["d_star"] <= row["construction_dim"] for row in per_k)
        ok.append(increasing and between)
        rows.append({"seed": seed, "per_k": per_k, "increasing": increasing, "between": between})
    judgement = _depth_judgement(rows)
    return judgement, {
        "rows": rows,
        "per_seed_passed": ok,
        "n_facts": [n * r**k for k in p["hops"]],
        "d_star": [[row["d_star"] for row in s["per_k"]] for s in rows],
        "construction_dim": [row["construction_dim"] for row in rows[0]["per_k"]],
        "bound_p32": [row["bound_p32"] for row in rows[0]["per_k"]],
    }


def _depth_judgement(rows):
    """The rule over seeds as :class:`verify.criteria.EverySeed` parts: on every seed d*(k) is found
    (at most d_max) for every k; and on every seed where it is, the smallest step d*(k+1) - d*(k) is at
    least 1 (strictly increasing integers) and d* - bound and construction - d* are at least 0 at every
    k. A seed without every d*(k) fails "found", so the verdict is the old rule's: every seed found,
    increasing and between.

    Continuous readings (no spread: every integer part measured the same on every seed, so ``verify
    oc`` could not simulate the claim): "found" is read on the smallest train margin of each k's
    model at d = d_max, the very run the search probes first (> 0 exactly when that model stores
    every query, so exactly when d*(k) is found); and a part "next_depth_needs_more" requires, on
    every seed, the (k+1)-hop model trained at this depth's d*(k) to miss a query (its smallest train
    margin < 0): under the monotonicity in d the search assumes, d*(k+1) > d*(k). It adds to the
    integer "increasing" part, which stays, so the rule is the old one or stricter.

    >>> row = lambda d, b, c, m, n: {"d_star": d, "bound_p32": b, "construction_dim": c,
    ...     "margin_at_d_max": m, "next_depth_margin_at_d_star": n}
    >>> seeds = [{"seed": s, "per_k": [row(3, 0.3, 4, 2.0 + s, -1.0), row(4, 0.6, 8, 1.5, None)]} for s in range(2)]
    >>> _depth_judgement(seeds).verdict
    'pass'
    """
    n_hops = len(rows[0]["per_k"])
    found = [sum(q["d_star"] is not None for q in s["per_k"]) for s in rows]
    seed_ids = [s["seed"] for s in rows]
    parts = {
        "found": EverySeed("min over k of the smallest train margin at d = d_max", 0.0, ">", "theory").judge(
            [min(q["margin_at_d_max"] for q in s["per_k"]) for s in rows], seed_ids
        )
    }
    full = [s for s, f in zip(rows, found) if f == n_hops]
    if full:
        seeds = [s["seed"] for s in full]
        above = [min(q["d_star"] - q["bound_p32"] for q in s["per_k"]) for s in full]
        below = [min(q["construction_dim"] - q["d_star"] for q in s["per_k"]) for s in full]
        if n_hops > 1:  # one k: nothing to increase (the old rule held vacuously)
            step = [min(b["d_star"] - a["d_star"] for a, b in zip(s["per_k"], s["per_k"][1:])) for s in full]
            parts["increasing"] = EverySeed("smallest step d*(k+1) - d*(k)", 1, ">=", "theory").judge(
                step, seeds
            )
            nxt = [max(q["next_depth_margin_at_d_star"] for q in s["per_k"][:-1]) for s in full]
            parts["next_depth_needs_more"] = EverySeed(
                "max over k of the smallest train margin of the (k+1)-hop model at d*(k)", 0.0, "<", "theory"
            ).judge(nxt, seeds)
        parts["above_bound"] = EverySeed("min over k of d*(k) - bound(k)", 0, ">=", "theory").judge(
            above, seeds
        )
        parts["below_construction"] = EverySeed(
            "min over k of construction(k) - d*(k)", 0, ">=", "theory"
        ).judge(below, seeds)
    return all_of(**parts)
