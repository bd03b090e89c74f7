"""Geometric depth tradeoff: composite chain tables, the trained one-pass threshold search, the
construction's block dimension, the 1-bit bracket of multihop.below_bound_fail, bad input."""

import math

import numpy as np
import pytest

from constructions.geometric.multihop import all_multi_hop_queries, build_nocot_model, compose
from constructions.tasks import check_bijections, make_bijections
from tests.strategies import rng_from
from theory.geometric import multihop as M
from verify.claims import Context, load_all
from verify.geometric.depth import (
    composite_perms,
    construction_block_dim,
    reaches_one,
    trained_depth_threshold,
)
from verify.geometric.single_hop_setup import _nocot_accuracy

TINY = {"mlp_width": 16, "steps": 150, "lr": 3e-2, "record_every": 25, "d_max": 16, "train_dtype": "float32"}


def test_composite_perms_are_the_chain_compositions():
    perms = make_bijections(12, 2, rng_from(3))
    table = check_bijections(composite_perms(perms, 3))
    assert table.shape == (8, 12)
    start, chains, target = all_multi_hop_queries(perms, 3)
    idx = chains[:, 0] * 4 + chains[:, 1] * 2 + chains[:, 2]  # mixed radix, r_1 most significant
    np.testing.assert_array_equal(table[idx, start], target)
    np.testing.assert_array_equal(table[5], compose(perms, np.tile([1, 0, 1], (12, 1)), np.arange(12)))


def test_trained_threshold_found_and_minimal_and_none_at_init():
    perms = make_bijections(16, 2, rng_from(4))
    table = composite_perms(perms, 1)
    d_star = trained_depth_threshold(table, TINY, seed=7)
    assert d_star is not None and 1 <= d_star <= TINY["d_max"]
    assert reaches_one(table, d_star, TINY, 7)
    assert d_star == 1 or not reaches_one(table, d_star - 1, TINY, 7)
    assert trained_depth_threshold(table, TINY, seed=7, init=True) is None


def test_construction_block_dim_is_the_first_exact_one():
    perms = make_bijections(20, 2, rng_from(5))
    d0 = construction_block_dim(Context(), perms, 2, seed=1)
    assert d0 >= 2  # d0 = 1: unit codes are +-1 and 20 attributes tie
    start, chains, target = all_multi_hop_queries(perms, 2)
    model = build_nocot_model(perms, 2, d0, rng=np.random.default_rng([1, 3, d0, 2]))
    assert _nocot_accuracy(model, start, chains, target)["accuracy"] == 1.0


@pytest.mark.parametrize("scale", ["quick", "full"])
def test_below_bound_fail_is_placed_just_below_the_one_bit_bound(scale):
    """The demonstration sits below R^k log2(N + 1 - I_k) (p = 1) and its control, d0 = ceil(log2 N),
    at or above it: the bracket is one bit per block wide."""
    p = load_all()["geometric.multihop.below_bound_fail"].params(scale)
    n, r, d0 = p["n_subjects"], p["n_relations"], p["block_dim"]
    assert d0 + 1 == math.ceil(math.log2(n))
    for k in p["hops"]:
        bound = M.khop_dim_lower_bound(n, r, k, bits_per_param=1)
        assert M.dim_nocot(r, k, d0) < bound <= M.dim_nocot(r, k, d0 + 1)


def test_below_bound_fail_refuses_a_dimension_above_the_bound():
    claim = load_all()["geometric.multihop.below_bound_fail"]
    ctx = Context(seed=0)
    with pytest.raises(ValueError, match="below the lower bound"):
        claim.check({**claim.params("quick"), "block_dim": 9, "hops": [1]}, ctx)


@pytest.mark.claims_of("geometric")
def test_fig_depth_draws_from_records(quick_record):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from paper_figs.registry import load_all as load_figures

    ids = ("geometric.multihop.trained_depth", "geometric.multihop.below_bound_fail")
    records = {cid: quick_record(cid) for cid in ids}
    fig = load_figures()["geometric.fig_depth"].draw(records)
    assert len(fig.axes) == 2 and all(ax.get_xlabel() or ax.get_ylabel() for ax in fig.axes)
    plt.close(fig)
    with pytest.raises(LookupError, match="no stored result"):
        load_figures()["geometric.fig_depth"].draw({})


def _old_depth_rule(rows) -> bool:
    """trained_depth's rule before its criterion object: every seed found, increasing and between."""
    ok = []
    for s in rows:
        ds = [q["d_star"] for q in s["per_k"]]
        found = all(d is not None for d in ds)
        increasing = found and all(a < b for a, b in zip(ds, ds[1:]))
        between = found and all(q["bound_p32"] <= q["d_star"] <= q["construction_dim"] for q in s["per_k"])
        ok.append(increasing and between)
    return all(ok)


@pytest.mark.parametrize(
    "d_stars",
    [
        [[3, 4, 6], [3, 4, 5]],  # passes
        [[3, 4, 6], [3, 3, 5]],  # not increasing on one seed
        [[3, 4, 6], [3, 4, None]],  # not found on one seed
        [[None, None, None], [None, None, None]],  # the init control: nothing found
        [[1, 4, 6], [3, 4, 6]],  # below the bound
        [[3, 4, 40], [3, 4, 6]],  # above the construction
        [[3], [4]],  # one k: nothing to increase
    ],
)
def test_trained_depth_criterion_is_the_old_rule(d_stars):
    from verify.geometric.depth import _depth_judgement

    bounds, construction = [2, 2.5, 3], [8, 16, 32]

    def margins(ds, k):
        """The train margins a search monotone in d implies: > 0 at d_max where d* is found, and the
        next depth's model at d*(k) stores (> 0) exactly when d*(k+1) <= d*(k)."""
        out = {"margin_at_d_max": 1.0 if ds[k] is not None else -1.0}
        if k + 1 < len(ds) and ds[k] is not None:
            stores = ds[k + 1] is not None and ds[k + 1] <= ds[k]
            out["next_depth_margin_at_d_star"] = 1.0 if stores else -1.0
        return out

    rows = [
        {
            "seed": seed,
            "per_k": [
                {
                    "k": k + 1,
                    "d_star": d,
                    "bound_p32": bounds[k],
                    "construction_dim": construction[k],
                    **margins(ds, k),
                }
                for k, d in enumerate(ds)
            ],
        }
        for seed, ds in enumerate(d_stars)
    ]
    assert _depth_judgement(rows).passed == _old_depth_rule(rows)


def test_trained_depth_next_depth_part_fails_where_the_next_model_stores_at_d_star():
    """The continuous part is stricter than the integer step only where the search's monotonicity
    fails: a (k+1)-hop model that stores at d*(k) fails the claim even when the bisection's d*(k+1) is
    larger."""
    from verify.geometric.depth import _depth_judgement

    row = {"k": 1, "d_star": 3, "bound_p32": 0.3, "construction_dim": 4, "margin_at_d_max": 1.0}
    rows = [
        {"seed": s, "per_k": [{**row, "next_depth_margin_at_d_star": m}, {**row, "k": 2, "d_star": 4}]}
        for s, m in enumerate([-1.0, 0.5])
    ]
    judged = _depth_judgement(rows)
    assert judged.verdict == "fail"
    assert judged.resolution["parts"]["next_depth_needs_more"]["missed"] == [1]


def test_nocot_single_fail_refuses_a_threshold_at_or_above_one():
    claim = load_all()["geometric.multihop.nocot_single_fail"]
    with pytest.raises(ValueError, match="needs N > 5"):
        claim.check({**claim.params("quick"), "n_subjects": 5}, Context(seed=0))
