"""The atlas's criterion and size helpers on synthetic numbers: the exponent fit, the two-sided
within-a-constant rule and its controls, and the parameter counts the families use."""

from __future__ import annotations

import numpy as np
import pytest

from verify.atlas import core as atlas
from verify.atlas.retrieval import smallest_storing_dims
from verify.atlas.sources import (
    geometric_block_params,
    geometric_trained_params,
)
from verify.atlas.verdict import faster_family, within_constant_judgement, within_constant_verdict


@pytest.mark.parametrize("exponent", [0.5, 1.0, 1.7])
def test_exponent_fit_recovers_a_known_exponent(exponent):
    rng = np.random.default_rng(3)
    bits = np.repeat(np.geomspace(100, 1e5, 6), 3)
    params = 7.0 * bits**exponent * np.exp(rng.normal(0, 0.05, bits.size))
    fit = atlas.fit_exponent(bits, params)
    assert fit["interval95"][0] < exponent < fit["interval95"][1]
    assert fit["exponent"] == pytest.approx(exponent, abs=0.05)
    exact = atlas.fit_exponent(bits, 7.0 * bits**exponent)
    assert exact["exponent"] == pytest.approx(exponent, rel=1e-12)


def test_exponent_fit_rejects_bad_input():
    with pytest.raises(ValueError, match=">= 3 points"):
        atlas.fit_exponent([1.0, 2.0], [1.0, 2.0])
    with pytest.raises(ValueError, match="finite"):
        atlas.fit_exponent([1.0, 2.0, float("nan")], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="distinct"):
        atlas.fit_exponent([5.0, 5.0, 5.0], [1.0, 2.0, 3.0])


def test_within_constant_passes_on_the_bound_and_its_control_fails():
    bounds = [[b, b] for b in (100.0, 200.0, 300.0)]
    linear = [[3.0 * b, 3.3 * b] for b, _ in bounds]
    v = within_constant_verdict(linear, bounds)
    assert (
        v["spread"] == pytest.approx(1.0)
        and v["exponent_interval95"][0] <= 1.0 <= v["exponent_interval95"][1]
    )
    faster = faster_family(linear, bounds)
    verdict = within_constant_verdict(faster, bounds)
    assert verdict["exponent"] == pytest.approx(1.5, rel=1e-9)
    assert within_constant_judgement(verdict, 2.0, "quick").verdict == "fail"
    # over a wide range the faster family also breaks the factor-2 spread
    wide = [[b] for b in (10.0, 100.0, 1000.0)]
    assert within_constant_verdict(faster_family([[5.0], [50.0], [500.0]], wide), wide)["spread"] > 2
    with pytest.raises(ValueError, match=">= 3 sizes"):
        within_constant_verdict(linear[:2], bounds[:2])


def test_retrieval_smallest_storing_dims_scan():
    dims = smallest_storing_dims(16, 4, 10**9, 2, seed=7, d_max=64)
    assert len(dims) == 2 and all(2 <= d <= 64 for d in dims)
    from verify.retrieval.capacity_setup import draw_accuracies

    for k, d in enumerate(dims):  # draw k stores at d*_k and at no smaller d
        assert draw_accuracies(16, d, 4, 10**9, 7, n_draws=2)[k] == 1.0
        assert all(draw_accuracies(16, e, 4, 10**9, 7, n_draws=2)[k] < 1.0 for e in range(2, d))
    with pytest.raises(ValueError, match="d_max=2"):
        smallest_storing_dims(256, 4, 10**9, 1, seed=7, d_max=2)


def test_geometric_block_params_match_the_built_model():
    from constructions.geometric.single_hop import build_block_model
    from constructions.tasks import make_bijections

    for n, r, d0 in ((50, 1, 6), (40, 3, 5)):
        perms = make_bijections(n, r, np.random.default_rng(0))
        model = build_block_model(perms, d0, rng=np.random.default_rng(1))
        assert geometric_block_params(n, d0, r) == model.param_counts()["total"]


def test_geometric_trained_params_match_init_params():
    import torch

    from constructions.geometric.train import init_params

    arrays = init_params(30, 2, 5, 8, torch.Generator().manual_seed(0))
    assert geometric_trained_params(30, 2, 5, 8) == sum(a.numel() for a in arrays.values())


def test_two_sided_rule_needs_a_decade_and_rejects_both_neighbours():
    """Sizes proportional to the bound pass over a decade and are inconclusive over 4x; sizes
    growing like bound^1.2 or bound^0.8 fail (their exponents exclude 1)."""

    def judge(span, power, scale="quick"):
        bounds = [[b] * 3 for b in np.geomspace(10, 10 * span, 4)]
        sizes = [[3 * b[0] ** power * e for e in (0.97, 1.0, 1.03)] for b in bounds]  # draws' spread
        return within_constant_judgement(within_constant_verdict(sizes, bounds), 2.0, scale)

    assert judge(20, 1.0).verdict == "pass"
    assert judge(20, 1.0, "full").verdict == "inconclusive"  # two decades at full scale
    assert judge(4, 1.0).verdict == "inconclusive" and "10x" in judge(4, 1.0).budget
    assert judge(100, 1.2).verdict == "fail" and judge(100, 0.8).verdict == "fail"
