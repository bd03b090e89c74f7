"""Replaced criteria are stored once (verify.previous): the runner adds the stored result to a
claim's own record (never to a control's), and no check recomputes a replaced rule."""

import ast
from pathlib import Path

import pytest

from verify.claims import Context, load_all
from verify.previous import STORE, _table, attached, stored_previous
from verify.runner import run_claim

ROOT = Path(__file__).resolve().parent.parent


def test_every_stored_claim_exists_and_names_its_revision():
    claims = load_all()
    for cid, entry in _table().items():
        assert cid in claims, f"{STORE.name} stores {cid}, which is not registered"
        for run in entry["runs"]:
            assert run["scale"] in ("quick", "full") and len(run["revision"]) >= 7
            assert "rule" in run["previous_criterion"] and "passed" in run["previous_criterion"]
        for rec in entry.get("records", []):
            assert rec["scale"] in ("quick", "full") and len(rec["revision"]) >= 7
            assert rec["seed"] == "every" or isinstance(rec["seed"], int)
        if entry.get("records"):  # a run with no history (empty details) may sit among them
            assert any(rec["details"] for rec in entry["records"]), f"{cid}: stored records hold nothing"


def test_the_stored_run_is_found_only_for_its_scale_seed_and_parameters():
    c = load_all()["hopfield.capacity.gain"]
    quick = {**c.params("quick"), "seeds": 3}  # the seeds of the stored run (the claim now runs 12)
    assert stored_previous(c.id, "quick", 1, quick)["stored"] is None  # "context" came after the run
    hit = stored_previous(c.id, "quick", 1, quick, added_since=("context",))
    assert hit["passed"] is True and "not recomputed" in hit["stored"]
    other = stored_previous(c.id, "quick", 1, {**quick, "dim": 8}, added_since=("context",))
    assert other["stored"] is None and other["rule"] == hit["rule"]
    with pytest.raises(ValueError, match="no replaced criterion"):
        stored_previous("retrieval.scaling.fit", "quick", 0, {})


def test_the_claim_record_reads_the_store_without_sweeping(monkeypatch):
    """r4_tightness's record at seed 0 carries the stored misses of the replaced bracket (N = 16384
    against 1024) and of the design before it (200 targets at N = 32768); neither draw is made
    (sphere_patterns is never asked for 16384 or 32768 points)."""
    import verify.hopfield.capacity as cap

    sizes = []
    real = cap.sphere_patterns
    monkeypatch.setattr(cap, "sphere_patterns", lambda n, *a: sizes.append(n) or real(n, *a))
    c = load_all()["hopfield.capacity.r4_tightness"]
    previous = run_claim(c, Context(seed=0), controls=False)["details"]["previous_criterion"]
    assert previous["missed"] == [19, 16, 14] and previous["near_R4_missed"] == [2, 0, 0]
    assert previous["earlier"]["missed"] == [0, 3, 6] and "not recomputed" in previous["stored"]
    assert sizes and 16384 not in sizes and 32768 not in sizes


def test_jl_too_small_reads_its_replaced_bracket_from_the_store(monkeypatch):
    """The replaced must-fail bracket (m_c = 4 against ceil(ln n_V / rho^2)) is not decoded again:
    the seed-0 record carries its stored accuracies, and the decoder is never tried at m_c = 4."""
    import verify.fact_mlp.decoder_setup as setup

    tried = []
    real = setup.draws_ok
    monkeypatch.setattr(setup, "draws_ok", lambda V, s, m, *a: tried.append(m) or real(V, s, m, *a))
    c = load_all()["fact_mlp.decoder.jl_too_small"]
    previous = run_claim(c, Context(seed=0), controls=False)["details"]["previous_criterion"]
    assert previous["passed"] is True and "not recomputed" in previous["stored"]
    assert previous["m_c_4"]["mean_accuracy"] < 0.5 and previous["m_c_4"]["all_fail"]
    assert tried and 4 not in tried


def test_history_is_attached_by_the_store_for_its_run_only():
    """A stored record is found for its scale, seed (or every seed) and parameters; another run
    gets, under the same keys, the rule and a note that nothing is stored for it."""
    with_records = {cid: e for cid, e in _table().items() if e.get("records")}
    assert with_records, "no replaced rule's verdict is stored by details key"
    for cid, entry in with_records.items():
        rec = next(r for r in entry["records"] if r["details"])
        seed = 0 if rec["seed"] == "every" else rec["seed"]
        assert attached(cid, rec["scale"], seed, rec["params"]) | rec["details"] == attached(
            cid, rec["scale"], seed, rec["params"]
        )
        for key in rec["details"]:
            assert attached(cid, rec["scale"], seed, rec["params"])[key] == rec["details"][key]
            other = attached(cid, rec["scale"], seed, {**rec["params"], "no such parameter": 1})[key]
            assert other["stored"] is None and "none matches this run" in other["note"]


def test_a_control_record_carries_no_history():
    c = load_all()["hopfield.capacity.r4_tightness"]
    record = run_claim(c, Context(seed=0))
    assert "previous_criterion" in record["details"]
    control = c.controls[0]
    out = c.check(control.apply(c.params("quick")), Context(seed=0))
    assert "previous_criterion" not in out.details


def _history_keys(path: Path) -> list[str]:
    """Places in a module where a details key naming a replaced rule is written."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        keys = []
        if isinstance(node, ast.Dict):
            keys = [k for k in node.keys if isinstance(k, ast.Constant)]
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
            keys = [node.slice] if isinstance(node.slice, ast.Constant) else []
        elif isinstance(node, ast.Call) and getattr(node.func, "id", "") == "stored_previous":
            found.append(f"{path.name}:{node.lineno} stored_previous")
        found += [
            f"{path.name}:{k.lineno} {k.value}"
            for k in keys
            if isinstance(k.value, str) and k.value.startswith("previous_criterion")
        ]
    return found


def test_no_check_recomputes_a_replaced_rule(tmp_path):
    """Claim modules write no details['previous_criterion...'] and call no stored_previous: the
    runner attaches history from the store. The scan finds such a write when one is there."""
    modules = [p for p in (ROOT / "verify").rglob("*.py") if p.name not in ("previous.py",)]
    assert [hit for p in modules for hit in _history_keys(p)] == []
    probe = tmp_path / "probe.py"
    probe.write_text('details = {}\ndetails["previous_criterion"] = {"rule": "x", "passed": True}\n')
    assert _history_keys(probe) == ["probe.py:2 previous_criterion"]
