"""Capacity atlas (docs/atlas.md): the table from a small fake results file, errors, fit, claims."""

from __future__ import annotations

import json
import math

import pytest

from verify.atlas import core as atlas
from verify.atlas.claims import CLAIMED, check_within_constant
from verify.atlas.sources import (
    FAMILIES,
    family,
    family_points,
)
from verify.claims import CLAIMS, Context, as_outcome, load_all


def _judged(p, ctx):
    """The outcome the runner makes of the within-constant check's (judgement, details)."""
    return as_outcome(check_within_constant(p, ctx))


def _rec(cid, params, details, seed=0):
    return {
        "id": cid,
        "scale": "quick",
        "params": params,
        "details": details,
        "status": "pass",
        "seed": seed,
        "git": "abc123",
        "passed": True,
    }


def fake_records():
    """The smallest records every family reads, sizes growing like the bound (factor 2 steps)."""
    return [
        _rec(
            "fact_mlp.capacity.linear_cost",
            {"d": 128, "n_values": 256},
            {"rows": [{"n_facts": f, "mc_per_draw": [32, 32, 27]} for f in (512, 1024, 2048)]},
        ),
        _rec(
            "fact_mlp.gd.gd_linear_capacity",
            {"d": 16},
            {"n_facts": [64, 128, 256], "hidden": [14, 24, 49], "params_no_bias": [672, 1152, 2352]},
        ),
        _rec(
            "geometric.single_hop.log_scaling",
            {},
            {"rows": [{"N": n, "d0_star": [d, d + 1]} for n, d in ((100, 16), (1000, 26), (10000, 39))]},
        ),
        _rec(
            "geometric.gd.threshold_scaling",
            {"n_relations": 2, "mlp_width": 32},
            {"rows": [{"N": n, "trained_d_star": [d, d]} for n, d in ((64, 4), (128, 4), (512, 6))]},
        ),
        _rec(
            "geometric.multihop.nocot_blocks",
            {"n_subjects": 500, "n_relations": 3},
            {
                "rows": [
                    {
                        "k": k,
                        "accuracy": 1.0,
                        "dim": 19 * 3**k,
                        "selector": 10 * 9**k,
                        "gate_embeddings": 1,
                        "subject_embeddings": 500 * 19 * 3**k,
                        "unembedding": 9500,
                    }
                    for k in (1, 2, 3)
                ]
            },
        ),
        _rec(
            "geometric.multihop.trained_depth",
            {"n_subjects": 32, "n_relations": 2, "hops": [1, 2, 3], "mlp_width": 32},
            {
                "rows": [
                    {"seed": s, "per_k": [{"k": k, "d_star": d + s} for k, d in ((1, 3), (2, 6), (3, 12))]}
                    for s in (0, 1)
                ]
            },
        ),
        _rec(
            "atlas.geometric_multihop_construction.within_constant",
            {"n_subjects": 500, "n_relations": 2},
            {"rows": [{"k": k, "d0_star": [25, 26 + k]} for k in (1, 2, 3)]},
        ),
        _rec(
            "icrecall.linear_memory.capacity",
            {},
            {"dims": [32, 64, 128], "per_seed": [{"n99": [34, 92, 436]}, {"n99": [27, 86, 412]}]},
        ),
        _rec(
            "atlas.retrieval_value_memory.within_constant",
            {},
            {
                "seq_len": 4,
                "rows": [{"V": v, "d_star": [d, d + 2]} for v, d in ((64, 17), (128, 21), (256, 25))],
            },
        ),
        _rec(
            "hopfield.trained_dim.stores_by_r4",
            {"steps": 400},
            {
                "rows": [
                    {"N": n, "d_R4": r4, "d_star": [t, t, t + 1], "d_star_construction": [c, c, c]}
                    for n, r4, t, c in ((16, 23, 5, 7), (32, 26, 6, 8), (64, 28, 7, 9))
                ]
            },
        ),
        _rec(
            "hopfield.storing_dim.r4_sufficient",
            {"spread": None},
            {
                "rows": [
                    {"N": n, "d_R4": r4, "d_star_ungated": [u, u + 1], "d_star_gated": [g, g]}
                    for n, r4, u, g in ((16, 23, 6, 6), (64, 28, 9, 8), (256, 33, 12, 10))
                ]
            },
        ),
        _rec(
            "atlas.chapters_bank.smallest_bank",
            {"n_values": 16, "d": 16, "slots": 4, "steps": 300},
            {"rows": [{"F": f, "c_star": [c, 2 * c]} for f, c in ((32, 2), (64, 4), (128, 8))]},
        ),
        _rec(
            "atlas.chapters_toy.smallest_bank",
            {"n_values": 16, "slots": 4, "steps": 120},
            {"rows": [{"F": f, "c_star": [5, c]} for f, c in ((16, 5), (32, 8), (64, 16))]},
        ),
    ]


OPTIONAL = {f.claim_id for f in FAMILIES if f.optional}


@pytest.fixture
def results_dir(tmp_path):
    (tmp_path / "claims.jsonl").write_text("\n".join(json.dumps(r) for r in fake_records()) + "\n")
    return tmp_path


def test_table_builds_from_fake_results(results_dir):
    table = atlas.atlas_from_results(results_dir)
    assert {r["family"] for r in table["rows"]} == {f.name for f in FAMILIES}
    row = next(r for r in table["rows"] if r["family"] == "fact_mlp_construction" and r["sizes"]["F"] == 512)
    # P_std = 3 d H m_c with H = ceil(512/128) = 4; bits = 512 log2 256 = 4096
    assert row["params_per_draw"] == [3 * 128 * 4 * 32, 3 * 128 * 4 * 32, 3 * 128 * 4 * 27]
    assert row["info_bits"][0] == 4096.0
    assert row["params"] == [3 * 128 * 4 * 32, 3 * 128 * 4 * 27, 3 * 128 * 4 * 32]  # median, min, max
    assert row["bits_per_param"][1] == pytest.approx(4096 / (3 * 128 * 4 * 32))
    assert row["source"] == {
        "claim": "fact_mlp.capacity.linear_cost",
        "seed": 0,
        "git": "abc123",
        "status": "pass",
        "scale": "quick",
    }
    icr = [r for r in table["rows"] if r["family"] == "icrecall_linear_memory"]
    assert icr[0]["info_bits_per_draw"] == pytest.approx([34 * math.log2(34), 27 * math.log2(27)])
    assert {f["family"] for f in table["fits"]} == {f.name for f in FAMILIES}
    assert table["reference"]["bits_per_param"] == 2.0 and table["reference"]["tag"] == "reference"
    assert "not measured here" in table["reference"]["note"]
    text = atlas.table_text(table)
    assert "fact_mlp.capacity.linear_cost@seed0/abc123" in text and "[reference]" in text


def test_a_missing_or_incomplete_record_names_the_claim(tmp_path):
    missing = [r for r in fake_records() if r["id"] != "geometric.gd.threshold_scaling"]
    incomplete = fake_records()
    incomplete[1]["details"] = {"n_facts": [64, 128, 256]}
    for recs, named in (
        (missing, "geometric.gd.threshold_scaling"),
        (incomplete, "fact_mlp.gd.gd_linear_capacity"),
    ):
        (tmp_path / "claims.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n")
        with pytest.raises(ValueError, match=named):
            atlas.atlas_from_results(tmp_path)


def test_hopfield_points_and_a_missing_optional_record_is_reported_not_invented(results_dir, tmp_path):
    table = atlas.atlas_from_results(results_dir)
    assert table["missing"] == []
    row = next(r for r in table["rows"] if r["family"] == "hopfield" and r["sizes"]["N"] == 64)
    assert row["params_per_draw"] == [64 * 9, 64 * 10] and row["dims_per_draw"] == [9, 10]
    assert row["info_bits"][0] == 64 * 6.0  # N log2 N
    gated = next(r for r in table["rows"] if r["family"] == "hopfield_gated" and r["sizes"]["N"] == 256)
    assert gated["params_per_draw"] == [2560, 2560]
    recs = [r for r in fake_records() if r["id"] not in OPTIONAL]
    (tmp_path / "claims.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    without = atlas.atlas_from_results(tmp_path)
    assert {r["family"] for r in without["rows"]} == {f.name for f in FAMILIES if not f.optional}
    assert {m["family"] for m in without["missing"]} == {
        "hopfield",
        "hopfield_gated",
        "hopfield_trained",
        "chapters_bank",
        "chapters_toy",
    }
    assert {m["claim"] for m in without["missing"]} == OPTIONAL
    assert "missing (quick): hopfield:" in atlas.table_text(without)


def test_chapters_bank_points_count_bank_router_and_attention(results_dir):
    table = atlas.atlas_from_results(results_dir)
    row = next(r for r in table["rows"] if r["family"] == "chapters_bank" and r["sizes"]["F"] == 64)
    # C T d + C (d + 1) + 4 d^2 + d at C = 4 and 8, d = 16, T = 4
    assert row["params_per_draw"] == [4 * 81 + 1040, 8 * 81 + 1040]
    assert row["info_bits"][0] == 64 * 4.0 and row["area"] == "chapters"


def test_chapters_toy_points_count_every_trained_parameter(results_dir):
    table = atlas.atlas_from_results(results_dir)
    row = next(r for r in table["rows"] if r["family"] == "chapters_toy" and r["sizes"]["F"] == 32)
    # bank C T d + router C (d + 1) + memory attention 4 d^2 + d + embedding (4 + F + n_V) d
    # + backbone 98,624 at C = 5 and 8, d = 64, T = 4
    fixed = 4 * 64 * 64 + 64 + (4 + 32 + 16) * 64 + 98_624
    assert row["params_per_draw"] == [5 * (4 * 64 + 65) + fixed, 8 * (4 * 64 + 65) + fixed]
    assert row["info_bits"][0] == 32 * 4.0 and row["area"] == "chapters" and row["kind"] == "trained"
    assert table["not_covered"] == {}


def test_hopfield_record_that_does_not_store_or_is_the_control_is_refused(tmp_path):
    recs = [r for r in fake_records() if not r["id"].startswith("atlas.chapters_")]
    recs[-1]["details"]["rows"][1]["d_star_ungated"] = [9, None]
    (tmp_path / "claims.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    with pytest.raises(ValueError, match="does not store by d_R4"):
        atlas.atlas_from_results(tmp_path)
    recs = [r for r in fake_records() if not r["id"].startswith("atlas.chapters_")]
    recs[-1]["params"]["spread"] = 0.25
    (tmp_path / "claims.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    with pytest.raises(ValueError, match="clustered"):
        atlas.atlas_from_results(tmp_path)


def test_errored_and_full_scale_records_are_not_read_as_quick(results_dir):
    bad = dict(fake_records()[0], status="error", details={})
    full = dict(fake_records()[0], scale="full")
    with (results_dir / "claims.jsonl").open("a") as fh:
        fh.write(json.dumps(bad) + "\n" + json.dumps(full) + "\n")
    assert atlas.load_records(results_dir, "quick")["fact_mlp.capacity.linear_cost"]["status"] == "pass"
    assert set(atlas.load_records(results_dir, "full")) == {"fact_mlp.capacity.linear_cost"}


def test_within_constant_claims_on_fake_results(results_dir):
    load_all()
    ids = [f"atlas.{name}.within_constant" for name in CLAIMED]
    assert set(ids) < set(CLAIMS)
    ctx = Context(seed=0, scale="quick")
    for cid in ids:
        c = CLAIMS[cid]
        p = {**c.quick, "results": str(results_dir)}
        out = _judged(p, ctx)
        assert out.details["source"]["claim"] == family(p["family"]).claim_id
        control = c.controls[0].apply(p)
        assert not _judged(control, ctx).passed, cid


def test_within_constant_on_fake_hopfield_record(results_dir):
    p = {
        "family": "hopfield",
        "results": str(results_dir),
        "constant": 2.0,
        "max_exponent": 1.25,
        "judged_sizes": "measured",
    }
    out = _judged(p, Context(seed=0, scale="quick"))
    # d*/log2 N = 6.5/4, 9.5/6, 12.5/8: ratios of P to N log2 N / 32 within 2x, exponent near 1
    assert out.measured["spread"]["size/bound spread"] == pytest.approx((6.5 / 4) / (12.5 / 8))
    # the two-sided rule: the exponent's interval [0.93, 1.05] holds 1 and excludes 0.8 and 1.2,
    # over bounds spanning 32x (>= one decade)
    assert out.passed and out.resolution["parts"]["exponent"]["rejected"] == ["bound^0.8", "bound^1.2"]
    for control in ("synthetic bound^1.5", "synthetic bound^0.5"):
        ctl = _judged({**p, "judged_sizes": control}, Context())
        assert not ctl.passed and ctl.inconclusive is None, control


def test_hopfield_atlas_claims_share_the_search_and_read_it_like_the_record(claim_cache):
    """The atlas claim's points are those the table reads from the hopfield record of the same seed."""
    load_all()
    ctx = Context(seed=0, scale="quick", cache=claim_cache)
    source = CLAIMS["hopfield.storing_dim.r4_sufficient"]
    rec = {"id": source.id, "params": dict(source.quick), "status": "pass"}
    rec["details"] = source.check(dict(source.quick), ctx).details
    for name, cid in (
        ("hopfield", "atlas.hopfield.within_constant"),
        ("hopfield_gated", "atlas.hopfield_gated.within_constant"),
    ):
        c = CLAIMS[cid]
        out = c.check(dict(c.quick), ctx)
        from_record = family_points(family(name), rec)
        assert [pt["dims"] for pt in from_record] == [pt["d_star_per_draw"] for pt in out.details["points"]]
        assert out.details["source"]["seed"] == 0


def test_cli_atlas_writes_the_json(results_dir, capsys):
    from verify.cli import main

    assert main(["atlas", "--json", "--write", "--results", str(results_dir)]) == 0
    printed = json.loads(capsys.readouterr().out)
    stored = json.loads((results_dir / "atlas.json").read_text())
    assert printed == stored and len(stored["rows"]) > 0


def test_atlas_figure_draws_from_fake_records_and_skips_when_one_is_missing():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from paper_figs.registry import FIGURES
    from paper_figs.registry import load_all as load_figures

    load_figures()
    spec = FIGURES["atlas"]
    records = {r["id"]: r for r in fake_records()}
    assert set(spec.claims) == set(records)
    fig = spec.draw(records)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any("[reference, not measured here]" in t for t in labels)
    assert sum("exponent" in t for t in labels) == len(FAMILIES)
    plt.close(fig)
    records["atlas.chapters_bank.smallest_bank"]["status"] = "not reproduced"  # a ledgered source is marked
    fig = spec.draw(records)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any(t.startswith("chapters_bank") and t.endswith("@seed0 (not reproduced)") for t in labels)
    assert not any(t.startswith("hopfield (") and "(not reproduced)" in t for t in labels)
    plt.close(fig)
    for cid in OPTIONAL:  # an optional family without a record is left out and named, not drawn
        records.pop(cid)
    fig = spec.draw(records)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert sum("exponent" in t for t in labels) == len([f for f in FAMILIES if not f.optional])
    assert any("missing: hopfield " in t.get_text() for t in fig.axes[0].texts)
    plt.close(fig)
    records.pop("icrecall.linear_memory.capacity")
    with pytest.raises(LookupError, match="icrecall.linear_memory.capacity"):
        spec.draw(records)


def test_full_scale_records_add_full_rows(results_dir):
    (results_dir / "full").mkdir()
    full = [dict(r, scale="full") for r in fake_records() if r["id"] == "fact_mlp.capacity.linear_cost"]
    (results_dir / "full" / "claims.jsonl").write_text(json.dumps(full[0]) + "\n")
    table = atlas.atlas_from_results(results_dir)
    assert {r["family"] for r in table["rows"] if r["scale"] == "full"} == {"fact_mlp_construction"}
    assert {(f["family"], f["scale"]) for f in table["fits"]} >= {
        ("fact_mlp_construction", "full"),
        ("fact_mlp_construction", "quick"),
    }


def test_readme_atlas_table_names_missing_families_and_the_convention(results_dir, tmp_path):
    from paper_figs.docs import atlas_table

    path = tmp_path / "atlas.json"
    path.write_text(json.dumps(atlas.atlas_from_results(results_dir)))
    text = atlas_table(path)
    assert "| hopfield | quick | N=16, d_R4=23 |" in text
    assert "hopfield, hopfield_gated: information = N log2 N by convention, not a bound" in text
    recs = [r for r in fake_records() if r["id"] not in OPTIONAL]
    (tmp_path / "claims.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    path.write_text(json.dumps(atlas.atlas_from_results(tmp_path)))
    text = atlas_table(path)
    assert "Missing (quick): hopfield: no stored record of hopfield.storing_dim.r4_sufficient" in text
    assert "| hopfield |" not in text and "by convention" not in text


def test_hopfield_trained_points_use_the_bijection_bound_and_refuse_the_control(results_dir):
    table = atlas.atlas_from_results(results_dir)
    row = next(r for r in table["rows"] if r["family"] == "hopfield_trained" and r["sizes"]["N"] == 32)
    assert row["params_per_draw"] == [32 * 6, 32 * 6, 32 * 7] and row["kind"] == "trained"
    assert row["info_bits"][0] == pytest.approx(math.log2(math.factorial(32)))  # log2(N!), not N log2 N
    rec = next(r for r in fake_records() if r["id"] == "hopfield.trained_dim.stores_by_r4")
    with pytest.raises(ValueError, match="untrained memory"):
        family_points(family("hopfield_trained"), {**rec, "params": {"steps": 0}})
    rec["details"]["rows"][0]["d_star"] = [5, None, 5]
    with pytest.raises(ValueError, match="does not store by d_R4"):
        family_points(family("hopfield_trained"), rec)


def test_an_optional_family_with_a_non_storing_draw_is_reported_missing_not_drawn(results_dir):
    (results_dir / "full").mkdir()
    rec = next(r for r in fake_records() if r["id"] == "atlas.chapters_bank.smallest_bank")
    rec = dict(
        rec, scale="full", details={"rows": [{"F": 32, "c_star": [2, 2]}, {"F": 256, "c_star": [32, None]}]}
    )
    (results_dir / "full" / "claims.jsonl").write_text(json.dumps(rec) + "\n")
    table = atlas.atlas_from_results(results_dir)
    assert not any(r["family"] == "chapters_bank" and r["scale"] == "full" for r in table["rows"])
    (miss,) = [m for m in table["missing"] if m["scale"] == "full"]
    assert miss["family"] == "chapters_bank" and "stores at no grid size" in miss["why"]
    # a non-optional family's bad record still raises, naming the claim
    bad = dict(fake_records()[0], scale="full", details={})
    (results_dir / "full" / "claims.jsonl").write_text(json.dumps(bad) + "\n")
    with pytest.raises(ValueError, match="fact_mlp.capacity.linear_cost"):
        atlas.atlas_from_results(results_dir)


def _with_linear_memory(tmp_path, details):
    """The fake results with icrecall.linear_memory.capacity's details replaced by ``details``."""
    recs = fake_records()
    for r in recs:
        if r["id"] == "icrecall.linear_memory.capacity":
            r["details"] = details
    (tmp_path / "claims.jsonl").write_text("\n".join(json.dumps(r) for r in recs) + "\n")
    load_all()
    c = CLAIMS["atlas.icrecall_linear_memory.within_constant"]
    return c, {**c.quick, "results": str(tmp_path)}


def test_a_family_whose_sizes_are_all_equal_is_judged_not_an_exception(tmp_path):
    """Every point at d = 32 (so every size is d^2 = 1024): the exponent fit has no growth to fit
    (it used to give a NaN interval and the claim raised 'a criterion was given NaN'); the
    exponent part is inconclusive and says why, the spread is judged as ever, and the controls
    (sizes synthesised from the bounds) still fail."""
    same = {"dims": [32, 32, 32], "per_seed": [{"n99": [34, 30, 32]}, {"n99": [27, 33, 35]}]}
    c, p = _with_linear_memory(tmp_path, same)
    out = _judged(p, Context(seed=0, scale="quick"))
    exponent = out.resolution["parts"]["exponent"]
    assert out.inconclusive is not None and not out.passed
    assert exponent["degenerate"] == "every size equal: no growth to fit"
    assert "every size equal: no growth to fit" in out.inconclusive
    assert out.measured["exponent"]["log-log exponent of size against bound"] == [0.0, 0.0]
    assert out.details["points"][0]["size_per_draw"] == [1024.0, 1024.0]
    for control in c.controls:
        ctl = _judged(control.apply(p), Context(seed=0, scale="quick"))
        assert not ctl.passed and ctl.inconclusive is None, control.name
    # equal sizes over bounds that grow 24x: the spread part fails, the exponent part says why it
    # cannot be read
    wide = {"dims": [32, 32, 32], "per_seed": [{"n99": [34, 92, 436]}, {"n99": [27, 86, 412]}]}
    out = _judged(_with_linear_memory(tmp_path, wide)[1], Context(seed=0, scale="quick"))
    assert not out.passed and out.inconclusive is None
    assert out.resolution["parts"]["exponent"]["degenerate"] == "every size equal: no growth to fit"
    assert out.resolution["parts"]["spread"]["value"] == 0.0


def test_a_family_whose_bounds_are_all_equal_is_inconclusive(tmp_path):
    """Every draw at every point storing the same N99: one bound, no span to fit an exponent to."""
    same = {"dims": [32, 64, 128], "per_seed": [{"n99": [34, 34, 34]}, {"n99": [34, 34, 34]}]}
    c, p = _with_linear_memory(tmp_path, same)
    for params in (p, *(control.apply(p) for control in c.controls)):
        out = _judged(params, Context(seed=0, scale="quick"))
        assert out.resolution["parts"]["exponent"]["degenerate"] == "every bound equal: no span to fit"
        assert not out.passed
