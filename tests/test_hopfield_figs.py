"""The hopfield figures draw from stored claim records (spec hopfield.md §8)."""
import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from paper_figs.registry import load_all as load_figures  # noqa: E402
from verify.claims import Context, load_all  # noqa: E402
from verify.runner import run_claim  # noqa: E402

CHEAP = ["hopfield.gated.exponential_in_kappa", "hopfield.fixed_point.unique",
         "hopfield.multistability.above", "hopfield.decomposition.orders"]


def test_hopfield_figures_registered():
    ids = {f for f in load_figures() if f.startswith("hopfield.")}
    assert ids == {"hopfield.fig_error_vs_separation", "hopfield.fig_gate_strength", "hopfield.fig_capacity",
                   "hopfield.fig_fixed_point", "hopfield.fig_decomposition", "hopfield.fig_lm_probe"}


def test_cheap_figures_draw(claim_cache):
    import matplotlib.pyplot as plt

    claims = load_all()
    ctx = Context(cache=claim_cache)
    records = {cid: run_claim(claims[cid], ctx) for cid in CHEAP}
    figs = load_figures()
    for fid in ("hopfield.fig_gate_strength", "hopfield.fig_fixed_point", "hopfield.fig_decomposition"):
        fig = figs[fid].draw(records)
        assert fig.axes and all(ax.get_xlabel() and ax.get_ylabel() for ax in fig.axes)
        plt.close(fig)
    with pytest.raises(LookupError, match="no stored result"):
        figs["hopfield.fig_capacity"].draw(records)
