"""The cheaper evaluation paths of the geometric area against the paths they replace, bitwise: the
written-out training step of constructions.geometric.train (against autograd and torch.optim.Adam),
the sparse selector of the no-CoT model (against the dense weight matrices), and the threshold
bisection that probes d0_max last."""

import numpy as np
import pytest
import torch

from constructions.geometric.multihop import all_multi_hop_queries, build_nocot_model
from constructions.geometric.train import PARAM_NAMES, train_model
from constructions.tasks import make_bijections
from tests.strategies import rng_from


def _gen(seed):
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def _both(perms, dim, width, **kw):
    """The autograd run and the manual run from the same generator seed."""
    return [train_model(perms, dim, width, generator=_gen(3), manual_gradient=m, **kw) for m in (False, True)]


@pytest.mark.parametrize(
    "n, r, dim, width, kw",
    [
        (40, 3, 5, 12, dict(steps=60, lr=3e-2, record_every=7)),  # float64, last step off the record grid
        (24, 2, 4, 8, dict(steps=40, lr=2e-2, freeze_subject=True, record_every=10)),
        (
            64,
            2,
            8,
            32,
            dict(steps=200, lr=3e-2, record_every=25, stop_at_full_accuracy=True, dtype=torch.float32),
        ),
        (48, 4, 3, 16, dict(steps=50, lr=1e-2, dtype=torch.float32)),  # no records
        (30, 1, 1, 3, dict(steps=25, lr=3e-2, record_every=5)),  # d = 1
    ],
)
def test_manual_step_is_bitwise_the_autograd_step(n, r, dim, width, kw):
    perms = make_bijections(n, r, rng_from(n + r))
    a, b = _both(perms, dim, width, **kw)
    for name in PARAM_NAMES:
        assert a.params[name].dtype == b.params[name].dtype
        assert torch.equal(a.params[name], b.params[name]), name
    assert a.history == b.history  # steps, losses and accuracies, exactly
    assert len(a.snapshots) == len(b.snapshots)
    for (sa, ea, ua), (sb, eb, ub) in zip(a.snapshots, b.snapshots):
        assert sa == sb and np.array_equal(ea, eb) and np.array_equal(ua, ub)


def test_manual_step_stops_where_the_autograd_step_stops():
    perms = make_bijections(64, 2, rng_from(1))
    kw = dict(steps=200, lr=3e-2, record_every=25, stop_at_full_accuracy=True, dtype=torch.float32)
    a, b = _both(perms, 8, 32, **kw)
    assert a.history["step"] == b.history["step"] and a.history["step"][-1] < 200  # it did stop
    assert a.history["accuracy"][-1] == 1.0
    for name in PARAM_NAMES:
        assert torch.equal(a.params[name], b.params[name]), name


def test_manual_step_raises_on_divergence_like_autograd():
    perms = make_bijections(16, 2, rng_from(2))
    messages = []
    for manual in (False, True):
        with pytest.raises(ValueError, match="diverged at step") as err:
            kw = dict(steps=30, lr=1e30, record_every=10, dtype=torch.float32, manual_gradient=manual)
            train_model(perms, 4, 8, generator=_gen(0), **kw)
        messages.append(str(err.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize(
    "n, r, k, d0, kind",
    [
        (60, 3, 2, 7, "spherical"),
        (40, 2, 3, 3, "spherical"),
        (50, 3, 2, 4, "rademacher_distinct"),
        (30, 4, 1, 5, "rademacher"),
    ],
)
def test_sparse_selector_is_bitwise_the_dense_one(n, r, k, d0, kind):
    perms = make_bijections(n, r, rng_from(7))
    model = build_nocot_model(perms, k, d0, rng=rng_from(8), code_kind=kind)
    start, chains, _ = all_multi_hop_queries(perms, k)
    for ch in (chains, chains[:, ::-1].copy()):  # the query's own chain, and another open group
        dense, sparse = model.dense_selector_output(start, ch), model.selector_output(start, ch)
        assert dense.tobytes() == sparse.tobytes()


def test_threshold_bisection_probes_d0_max_only_when_needed():
    from verify.geometric.scaling_setup import code_gap, threshold_bisect

    d_star, probed = threshold_bisect(200, 0.25, 4, 64)
    assert 64 not in probed and d_star in probed  # the crossing is its own check
    assert code_gap(200, d_star, 4) >= 0.25 > code_gap(200, d_star - 1, 4)
    for d0_max in range(d_star, d_star + 6):  # whatever the answer, it was probed and reaches the margin
        d, probed = threshold_bisect(200, 0.25, 4, d0_max)
        assert d in probed and probed[d] >= 0.25 and code_gap(200, d, 4) == probed[d]
        assert (d0_max in probed) == (d == d0_max)
    with pytest.raises(ValueError, match="d0_max"):
        threshold_bisect(200, 0.25, 4, 6)
