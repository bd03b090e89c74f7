"""Replaced criteria are stored once (verify.previous): the record carries the stored result and
the revision that measured it, and nothing is recomputed for history."""

import pytest

from verify.claims import load_all
from verify.previous import STORE, _table, stored_previous


def test_every_stored_claim_exists_and_names_its_revision():
    claims = load_all()
    for cid, entry in _table().items():
        assert cid in claims, f"{STORE.name} stores {cid}, which is not registered"
        for run in entry["runs"]:
            assert run["scale"] in ("quick", "full") and len(run["revision"]) >= 7
            assert "rule" in run["previous_criterion"] and "passed" in run["previous_criterion"]


def test_the_stored_run_is_found_only_for_its_scale_seed_and_parameters():
    c = load_all()["hopfield.capacity.gain"]
    quick = c.params("quick")
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
    from verify.claims import Context

    sizes = []
    real = cap.sphere_patterns
    monkeypatch.setattr(cap, "sphere_patterns", lambda n, *a: sizes.append(n) or real(n, *a))
    c = load_all()["hopfield.capacity.r4_tightness"]
    out = c.check(c.params("quick"), Context(seed=0))
    previous = out.details["previous_criterion"]
    assert previous["missed"] == [19, 16, 14] and previous["near_R4_missed"] == [2, 0, 0]
    assert previous["earlier"]["missed"] == [0, 3, 6] and "not recomputed" in previous["stored"]
    assert sizes and 16384 not in sizes and 32768 not in sizes


def test_jl_too_small_reads_its_replaced_bracket_from_the_store(monkeypatch):
    """The replaced must-fail bracket (m_c = 4 against ceil(ln n_V / rho^2)) is not decoded again:
    the seed-0 record carries its stored accuracies, and the decoder is never tried at m_c = 4."""
    import verify.fact_mlp.decoder_setup as setup
    from verify.claims import Context

    tried = []
    real = setup.draws_ok
    monkeypatch.setattr(setup, "draws_ok", lambda V, s, m, *a: tried.append(m) or real(V, s, m, *a))
    c = load_all()["fact_mlp.decoder.jl_too_small"]
    previous = c.check(c.params("quick"), Context(seed=0)).details["previous_criterion"]
    assert previous["passed"] is True and "not recomputed" in previous["stored"]
    assert previous["m_c_4"]["mean_accuracy"] < 0.5 and previous["m_c_4"]["all_fail"]
    assert tried and 4 not in tried
