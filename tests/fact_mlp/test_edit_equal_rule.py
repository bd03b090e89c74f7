"""The equal-width / equal-information editing rule: each cell judged by its interval over draws."""

from verify.fact_mlp.edit_equal import _cells_rule, _point_rule, summarise


def _rows(per_cell):
    """Rows of one (mlp, method, k) cell per entry, one row per draw, attention unchanged."""
    rows = []
    for (mlp, method), draws in per_cell.items():
        for d, (eff, spec) in enumerate(draws):
            rows.append(
                {
                    "mlp": mlp,
                    "method": method,
                    "k": 4,
                    "draw": d,
                    "efficacy": eff,
                    "specificity": spec,
                    "score": 0.0,
                }
                | {"attention_unchanged": True}
            )
    return rows


def _verdicts(per_cell):
    rows = _rows(per_cell)
    table = summarise(rows)
    cells = {f"{m}/{meth}@4": None for m, meth in per_cell}
    return {name: j.verdict for name, j in _cells_rule(cells, rows, table).items()}


def test_every_cell_interval_above_the_bar_passes_one_straddling_is_inconclusive_one_below_fails():
    clear = [(0.99, 1.0), (1.0, 0.99), (0.98, 1.0)]
    assert _verdicts({("gd", "rome"): clear, ("ed", "rome"): clear})["efficacy"] == "pass"
    straddles = [(0.90, 1.0), (1.0, 1.0), (0.97, 1.0)]  # mean 0.957 >= 0.95, interval reaches below
    v = _verdicts({("gd", "rome"): clear, ("ed", "rome"): straddles})
    assert v["efficacy"] == "inconclusive" and v["retention"] == "pass"
    below = [(0.80, 1.0), (0.81, 1.0), (0.79, 1.0)]
    assert _verdicts({("gd", "rome"): clear, ("ed", "rome"): below})["efficacy"] == "fail"


def test_the_replaced_point_rule_is_kept_beside_it():
    cells = {"a": (0.957, 1.0), "b": (1.0, 0.99)}
    assert _point_rule(cells)["passed"] is True
    assert _point_rule(cells, least_gap=0.0)["passed"] is False
    assert "gap" in _point_rule(cells, least_gap=0.1)["rule"]
