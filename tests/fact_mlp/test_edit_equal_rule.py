"""The equal-width / equal-information editing rule: each cell judged by its interval over draws."""

from verify.fact_mlp.edit_equal import _cells_rule, summarise


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
    cells = [f"{m}/{meth}@4" for m, meth in per_cell]
    return {name: j.verdict for name, j in _cells_rule(cells, rows, table).items()}


def test_every_cell_interval_above_the_bar_passes_one_straddling_is_inconclusive_one_below_fails():
    clear = [(0.99, 1.0), (1.0, 0.99), (0.98, 1.0)]
    assert _verdicts({("gd", "rome"): clear, ("ed", "rome"): clear})["efficacy"] == "pass"
    straddles = [(0.90, 1.0), (1.0, 1.0), (0.97, 1.0)]  # mean 0.957 >= 0.95, interval reaches below
    v = _verdicts({("gd", "rome"): clear, ("ed", "rome"): straddles})
    assert v["efficacy"] == "inconclusive" and v["retention"] == "pass"
    below = [(0.80, 1.0), (0.81, 1.0), (0.79, 1.0)]
    assert _verdicts({("gd", "rome"): clear, ("ed", "rome"): below})["efficacy"] == "fail"


def test_the_replaced_point_rule_is_read_from_the_store():
    """The point rule's verdict is stored once (verify.previous), not recomputed by the checks."""
    from verify.claims import load_all
    from verify.previous import attached

    for cid in ("fact_mlp.edit.equal_width", "fact_mlp.edit.equal_information"):
        c = load_all()[cid]
        # stored at the 3 draws the point rule ran with (equal_width now runs more draws)
        stored = attached(cid, "quick", 0, {**c.params("quick"), "draws": 3})["previous_criterion"]
        assert "point means" in stored["rule"] and isinstance(stored["passed"], bool)
