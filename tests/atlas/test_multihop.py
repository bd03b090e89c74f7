"""Capacity atlas (docs/atlas.md): the searched one-pass k-hop families (verify.atlas.multihop_setup and
verify.atlas.multihop): parameter counts, the construction's search and its confirmation, the
points read from records, and the k-hop bound in dimension."""

from __future__ import annotations

import math

import numpy as np
import pytest

from theory.geometric import multihop as mh_theory
from verify.atlas import core as atlas
from verify.atlas.claims import check_within_constant
from verify.atlas.multihop import decoded, draw_salt, search_construction
from verify.atlas.multihop_setup import construction_points, khop_dim_bound, nocot_params, trained_points
from verify.atlas.sources import _need, _point, family, geometric_trained_params
from verify.claims import Context, as_outcome
from verify.geometric.scaling_setup import code_gap, threshold_bisect

from .test_atlas import fake_records


def _record(cid):
    return next(r for r in fake_records() if r["id"] == cid)


@pytest.mark.parametrize("n, r, k, d0", [(20, 2, 1, 3), (20, 2, 2, 4), (15, 3, 2, 2), (12, 2, 3, 5)])
def test_nocot_params_match_the_built_model(n, r, k, d0):
    from constructions.geometric.multihop import build_nocot_model
    from constructions.tasks import make_bijections

    perms = make_bijections(n, r, np.random.default_rng(0))
    counts = build_nocot_model(perms, k, d0, rng=np.random.default_rng(1)).param_counts()
    built = sum(counts[key] for key in ("selector", "gate_embeddings", "subject_embeddings", "unembedding"))
    assert nocot_params(n, r, k, d0) == built


def test_table_bits_is_the_k_hop_theorem_summed_over_subjects():
    for n, r, k in ((500, 2, 1), (500, 2, 4), (32, 3, 2)):
        assert mh_theory.khop_table_bits(n, r, k) == pytest.approx(n * mh_theory.khop_bits(n, r, k))
    # k = 1: N R log2 N, above the single-hop count R log2 N! by the e of Stirling only
    assert mh_theory.khop_table_bits(500, 2, 1) == pytest.approx(1000 * math.log2(500))
    with pytest.raises(ValueError, match="N >= I_k"):
        mh_theory.khop_table_bits(5, 2, 3)


def test_draw_salts_are_distinct_and_never_the_single_hop_salt():
    salts = {draw_salt(k, j) for k in range(1, 6) for j in range(10)}
    assert len(salts) == 50 and 0 not in salts
    with pytest.raises(ValueError, match="draw"):
        draw_salt(1, 1000)


def test_search_is_the_bisection_and_is_confirmed_on_the_built_model():
    rows = search_construction(Context(seed=7), 60, 2, [1, 2], 0.25, 2, 64)
    for row in rows:
        assert row["confirmed"] and row["n_queries"] == 60 * 2 ** row["k"]
        for j, d0 in enumerate(row["d0_star"]):
            salt = draw_salt(row["k"], j)
            assert d0 == threshold_bisect(60, 0.25, 7, 64, salt=salt)[0]
            # by the exactness lemma the decoded margin is the codes' gap, on both sides
            assert row["margin_at"][j] == pytest.approx(code_gap(60, d0, 7, salt), abs=1e-12)
            assert row["margin_below"][j] == pytest.approx(code_gap(60, d0 - 1, 7, salt), abs=1e-12)
            assert row["margin_at"][j] >= 0.25 > row["margin_below"][j]
        assert row["dim"] == [2 ** row["k"] * x for x in row["d0_star"]]


def test_decoded_fails_where_the_codes_tie():
    from constructions.tasks import make_bijections

    perms = make_bijections(40, 2, np.random.default_rng(3))
    res = decoded(perms, 2, 1, 0, draw_salt(2, 0))  # d0 = 1: codes +-1, ties among 40 subjects
    assert res["accuracy"] < 1.0 and res["min_margin"] <= 0.0


def test_construction_points_count_the_built_model_at_r_to_the_k_blocks():
    rec = _record("atlas.geometric_multihop_construction.within_constant")
    pts = construction_points(rec, _point, _need)
    assert [p["sizes"]["k"] for p in pts] == [1, 2, 3]
    assert pts[1]["dims"] == [4 * 25.0, 4 * 28.0]
    assert pts[1]["params"] == [nocot_params(500, 2, 2, 25), nocot_params(500, 2, 2, 28)]
    assert pts[2]["info_bits"][0] == pytest.approx(mh_theory.khop_table_bits(500, 2, 3))


def test_trained_points_count_one_token_per_chain_and_refuse_non_storing_or_control_records():
    rec = _record("geometric.multihop.trained_depth")
    pts = trained_points(rec, _point, _need)
    assert pts[2]["dims"] == [12.0, 13.0]
    assert pts[2]["params"] == [geometric_trained_params(32, 8, d, 32) for d in (12, 13)]
    bad = {**rec, "details": {"rows": [{"per_k": [{"d_star": 3}, {"d_star": None}, {"d_star": 9}]}]}}
    with pytest.raises(ValueError, match="k=2 has a seed"):
        trained_points(bad, _point, _need)
    for setting in ({"weights": "init"}, {"facts": "1-hop"}):
        with pytest.raises(ValueError, match="control"):
            trained_points({**rec, "params": {**rec["params"], **setting}}, _point, _need)
    # a record carrying the claim's own setting is a family point
    own = {**rec, "params": {**rec["params"], "weights": "trained", "facts": "k-hop"}}
    assert trained_points(own, _point, _need) == pts


def test_both_families_are_judged_against_the_k_hop_dimension_bound(tmp_path):
    import json

    (tmp_path / "claims.jsonl").write_text("\n".join(json.dumps(r) for r in fake_records()) + "\n")
    p = {
        "family": "geometric_multihop_gd",
        "results": str(tmp_path),
        "constant": 2.0,
        "max_exponent": 1.25,
        "judged_sizes": "measured",
    }
    out = as_outcome(check_within_constant(p, Context(seed=0, scale="quick")))
    bounds = [khop_dim_bound({"N": 32, "R": 2, "k": k}) for k in (1, 2, 3)]
    assert [row["bound"] for row in out.details["points"]] == pytest.approx(bounds)
    assert [row["ratio"] for row in out.details["points"]] == pytest.approx(
        [(d + 0.5) / b for d, b in zip((3, 6, 12), bounds)]
    )
    assert out.inconclusive is not None  # the bounds span under 10x
    for control in ("synthetic bound^1.5", "synthetic bound^0.5"):
        ctl = as_outcome(check_within_constant({**p, "judged_sizes": control}, Context()))
        assert not ctl.passed and ctl.inconclusive is None, control
    table = atlas.atlas_from_results(tmp_path)
    assert family("geometric_multihop_construction").dim_bound is khop_dim_bound
    rows = [r for r in table["rows"] if r["family"] == "geometric_multihop_construction"]
    assert [r["sizes"]["k"] for r in rows] == [1, 2, 3] and all(r["kind"] == "construction" for r in rows)


@pytest.mark.parametrize("n, r, k", [(3, 2, 1), (3, 2, 2), (4, 2, 2), (3, 2, 3), (3, 3, 2)])
def test_table_entropy_bracket_holds_by_enumeration(n, r, k):
    """The exact entropy of the k-hop table over all R-tuples of bijections of [N] lies in the
    bracket of khop_table_entropy (and equals its upper end at k = 1)."""
    from collections import Counter
    from itertools import permutations, product

    from constructions.geometric.multihop import all_chains, compose

    perms_all = [np.array(q) for q in permutations(range(n))]
    chains = all_chains(r, k)
    counts = Counter()
    for tup in product(perms_all, repeat=r):
        perms = np.stack(tup)
        counts[tuple(compose(perms, np.tile(c, (n, 1)), np.arange(n)).tobytes() for c in chains)] += 1
    total = sum(counts.values())
    entropy = -sum(c / total * math.log2(c / total) for c in counts.values())
    lo, hi = mh_theory.khop_table_entropy(n, r, k)
    assert lo - 1e-9 <= entropy <= hi + 1e-9
    if k == 1:
        assert entropy == pytest.approx(hi)


def test_atlas_rows_of_the_multihop_families_carry_the_table_bracket(tmp_path):
    import json

    from paper_figs.docs_atlas import atlas_table

    (tmp_path / "claims.jsonl").write_text("\n".join(json.dumps(r) for r in fake_records()) + "\n")
    table = atlas.atlas_from_results(tmp_path)
    rows = [r for r in table["rows"] if "table_bits" in r]
    assert {r["family"] for r in rows} == {
        "geometric_multihop",
        "geometric_multihop_construction",
        "geometric_multihop_gd",
    }
    gd = next(r for r in rows if r["family"] == "geometric_multihop_gd" and r["sizes"]["k"] == 2)
    hi = mh_theory.khop_table_entropy(32, 2, 2)[1]
    assert gd["bits_per_param_table_max"][1] == pytest.approx(hi / max(gd["params_per_draw"]))
    path = tmp_path / "atlas.json"
    path.write_text(json.dumps(table))
    assert "geometric_multihop_gd quick k=2:" in atlas_table(path)
