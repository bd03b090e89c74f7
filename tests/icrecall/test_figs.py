"""The fine-tuning dynamics figure draws the recorded trajectories: one line per
seed of finetune.solves and the pretrained-MLP run, for each of the four tracked quantities."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from paper_figs.registry import load_all as load_figures  # noqa: E402

KEYS = ("acc", "query_share", "pair_uniformity", "imbalance")


def _traj(shift):
    return [
        {"step": s, "loss": 1.0 / (s + 1), **{k: min(1.0, 0.1 * i + shift) for i, k in enumerate(KEYS)}}
        for s in (0, 40, 80)
    ]


def test_dynamics_figure_draws_every_recorded_trajectory():
    import matplotlib.pyplot as plt

    records = {
        "icrecall.finetune.solves": {
            "status": "pass",
            "details": {"trajectory_per_seed": [_traj(0.1), _traj(0.2), _traj(0.3)]},
        },
        "icrecall.pretrained.solves": {"status": "pass", "details": {"trajectory": _traj(0.4)}},
    }
    fig = load_figures()["icrecall.fig_dynamics"].draw(records)
    assert len(fig.axes) == 4
    for ax, key in zip(fig.axes, KEYS):
        assert ax.get_xlabel() == "Adam step" and len(ax.lines) == 4  # 3 seeds + pretrained
        first = ax.lines[0]
        assert list(first.get_xdata()) == [0, 40, 80]
        assert list(first.get_ydata()) == [t[key] for t in _traj(0.1)]
    plt.close(fig)
    with pytest.raises(LookupError, match="no stored result"):
        load_figures()["icrecall.fig_dynamics"].draw({})
