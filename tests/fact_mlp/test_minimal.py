"""Tests of the minimal-parameter search (verify.fact_mlp.minimal)."""

from __future__ import annotations

import numpy as np
import pytest

from verify.claims import Context
from verify.fact_mlp.minimal import FAMILIES, minimal_parameters, minimal_sizes


def test_minimal_parameters_output_per_draw_and_interval():
    out = minimal_parameters("construction", 8, 32, 32, draws=3, seed=5)
    assert out["family"] == "construction" and len(out["per_draw"]) == 3
    assert out["stored_on"] == sum(v is not None for v in out["per_draw"]) == 3
    got = [v for v in out["per_draw"] if v is not None]
    assert min(got) <= out["median"] <= max(got)
    lo, hi = out["interval95"]
    assert min(got) * (1 - 1e-9) <= lo <= hi <= max(got) * (1 + 1e-9)
    # draw j is the single-draw search at seed + j
    H = -(-32 // 8)
    for j, (m, v) in enumerate(zip(out["sizes"], out["per_draw"])):
        # P_std = 3 d H m_c with H >= ceil(F/d) gates (the builder may add covering gates)
        assert v % (3 * 8 * m) == 0 and v >= 3 * 8 * H * m
        assert minimal_sizes(32, 8, 32, 5 + j, 0, families=("construction",))["construction"]["size"] == m


def test_minimal_parameters_reports_a_family_that_never_stores():
    # F = 64 > d (d + 1) / 2 = 36 distinct facts: the whitened readout's features span at most
    # 36 dimensions, so it cannot store 64 arbitrary values at any width
    out = minimal_parameters("hebbian_whitened", 8, 64, 64, draws=2, seed=0)
    assert out["per_draw"] == [None, None] and out["median"] is None
    assert out["interval95"] is None and "does not store up to size" in out["status"]


def test_minimal_parameters_caches_in_the_context_and_validates():
    ctx = Context(seed=0)
    a = minimal_parameters("ntk", 8, 16, 16, draws=2, seed=1, ctx=ctx)
    assert minimal_parameters("ntk", 8, 16, 16, draws=2, seed=1, ctx=ctx) == a
    assert any(k[0][0] == "verify.fact_mlp.minimal._family_minimal_size" for k in ctx.cache)
    with pytest.raises(ValueError, match="family"):
        minimal_parameters("lstm", 8, 16, 16, draws=1)
    with pytest.raises(ValueError, match="draws"):
        minimal_parameters("ntk", 8, 16, 16, draws=0)
    assert set(FAMILIES) == {"construction", "gd", "ntk", "hebbian", "hebbian_whitened"}


def test_gd_family_counts_biases():
    out = minimal_parameters("gd", 8, 8, 8, draws=1, seed=0, epochs=600)
    m = out["sizes"][0]
    assert m is not None and out["per_draw"][0] == 3 * 8 * m + 2 * m + 8
    assert np.isfinite(out["median"])


def test_figure_draws_from_a_stored_record_with_a_family_that_never_stores():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from paper_figs.registry import load_all

    cell = {
        "per_draw": [100, 120],
        "median": 110.0,
        "interval95": [100.0, 120.0],
        "status": "stores on every draw",
    }
    none = {
        "per_draw": [None, None],
        "median": None,
        "interval95": None,
        "status": "does not store up to size 4096 on 2 of 2 draws",
    }
    table = {f"{fam}@d=8,F=16": (none if fam == "ntk" else cell) for fam in FAMILIES}
    rec = {"status": "pass", "details": {"points": [[8, 16]], "table": table}}
    fig = load_all()["fact_mlp.fig_gd_vs_construction"].draw({"fact_mlp.capacity.gd_vs_construction": rec})
    ax = fig.axes[0]
    assert ax.get_ylabel() and any("does not store" in t.get_text() for t in ax.texts)
    plt.close(fig)


def test_a_point_may_give_n_values_separately_from_F():
    from verify.fact_mlp.minimal import check_gd_vs_construction

    p = {"points": [[8, 16], [8, 16, 4]], "epochs": 400, "draws": 1, "gd_draws": 1}
    _, details = check_gd_vs_construction(p, Context(seed=0))
    table = details["table"]
    assert table["gd@d=8,F=16,n_V=4"]["n_values"] == 4
    assert table["construction@d=8,F=16"]["n_values"] == 16
    assert [r["n_values"] for r in details["rows"]] == [16, 4]
    assert set(details["ratio_per_pair"]) == {"d=8,F=16,draw=0", "d=8,F=16,n_V=4,draw=0"}


def test_figure_labels_a_point_with_its_own_n_values():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from paper_figs.registry import load_all

    cell = {
        "per_draw": [100, 120],
        "median": 110.0,
        "interval95": [100.0, 120.0],
        "status": "stores on every draw",
    }
    table = {f"{fam}@{at}": cell for fam in FAMILIES for at in ("d=8,F=16", "d=8,F=16,n_V=4")}
    rec = {"status": "pass", "details": {"points": [[8, 16], [8, 16, 4]], "table": table}}
    fig = load_all()["fact_mlp.fig_gd_vs_construction"].draw({"fact_mlp.capacity.gd_vs_construction": rec})
    labels = [t.get_text() for t in fig.axes[0].get_xticklabels()]
    assert any("n_V=4" in s for s in labels) and any("F=n_V=16" in s for s in labels)
    plt.close(fig)


def test_figure_shows_the_ratio_interval_and_a_verdict_from_the_rows():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from paper_figs.registry import load_all

    cell = {
        "per_draw": [100, 120],
        "median": 110.0,
        "interval95": [100.0, 120.0],
        "status": "stores on every draw",
    }
    table = {f"{fam}@d=8,F=16": cell for fam in FAMILIES}
    rows = [{"ratio_construction_over_gd": r} for r in (0.9, 1.2)]
    per_point = {"d=8,F=16": {"ratio_median": 1.05, "ratio_interval95": [0.9, 1.2]}}
    rec = {
        "status": "fail",
        "details": {"points": [[8, 16]], "table": table, "rows": rows, "per_point": per_point},
    }
    fig = load_all()["fact_mlp.fig_gd_vs_construction"].draw({"fact_mlp.capacity.gd_vs_construction": rec})
    ax = fig.axes[0]
    assert any("constr./GD 1.1" in t.get_text() and "[0.9, 1.2]" in t.get_text() for t in ax.texts)
    assert "construction stores with fewer parameters than GD on some draw" in ax.get_title()
    plt.close(fig)
