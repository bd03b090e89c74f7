"""The editing figure of fact_mlp draws from small fake stored records."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from paper_figs.fact_mlp.edit import EDIT_CLAIMS, edit_cells  # noqa: E402
from paper_figs.registry import load_all  # noqa: E402


def _cell(mean, draws):
    return {"mean": mean, "ci95": [min(draws), max(draws)], "per_draw": draws}


def _record(methods, ks):
    table = {
        f"{mlp}/{m}@{k}": {
            "efficacy": _cell(0.9, [0.8, 1.0]),
            "specificity": _cell(0.7, [0.6, 0.8]),
            "score": _cell(0.8, [0.7, 0.9]),
        }
        for mlp in ("encoder_decoder", "gd")
        for m in methods
        for k in ks
    }
    return {"status": "pass", "details": {"table": table, "widths": {"encoder_decoder": 576, "gd": 576}}}


def _records():
    return {
        EDIT_CLAIMS[0]: _record(("unedited", "rank_one", "rome", "memit"), (4, 16)),
        EDIT_CLAIMS[1]: _record(("rank_one",), (16,)),
        EDIT_CLAIMS[2]: _record(("finetune_edits", "finetune_full"), (16,)),
    }


def test_cells_merge_the_three_claims_by_mlp_method_and_k():
    cells = edit_cells(_records())
    assert set(cells[("gd", "rome")]) == {4, 16}
    assert cells[("encoder_decoder", "finetune_full")][16]["specificity"]["mean"] == 0.7
    assert ("gd", "swap") not in cells


def test_edit_figure_draws_both_metrics_for_both_mlps():
    import matplotlib.pyplot as plt

    fig = load_all()["fact_mlp.fig_edit_equal_width"].draw(_records())
    assert len(fig.axes) == 2 and all(ax.get_xlabel() and ax.get_ylabel() for ax in fig.axes)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any("GD gated MLP (width 576)" in s for s in labels)
    assert any("encoder-decoder" in s and "memit" in s for s in labels)
    assert not any("unedited" in s for s in labels)  # the control is not drawn
    # the retention panel plots the mean 0.7 with its interval [0.6, 0.8]
    ys = [y for line in fig.axes[1].lines for y in line.get_ydata()]
    assert 0.7 in ys and 0.6 in ys
    plt.close(fig)


def test_edit_figure_needs_every_record():
    recs = _records()
    del recs[EDIT_CLAIMS[2]]
    with pytest.raises(LookupError, match="no stored result"):
        load_all()["fact_mlp.fig_edit_equal_width"].draw(recs)
