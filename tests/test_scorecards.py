"""The scorecard that opens each paper's page (paper_figs.scorecards, verify.statements): every
statement names registered claims of its area and every claim of an area belongs to a statement;
the table is generated from the stored records (a changed record changes it, a record judged by a
replaced criterion is never a pass); the docs check reports a page stale when its scorecard differs
and the writer touches nothing outside the scorecard markers."""

import json
import re
import shutil

import pytest

from paper_figs import docs, docs_pages, scorecards
from verify.claims import load_all
from verify.statements import STATEMENTS, UNCHECKED, problems

#: a paper statement checked by one claim only, so its row is that claim's verdict
CLAIM = "retrieval.lower.intrinsic"
STATEMENT = "a lower bound shows this multiplicative scaling is intrinsic"


@pytest.fixture(scope="module")
def ix():
    return docs.Index()


def _record(cid, scale, status, **extra):
    return {"id": cid, "scale": scale, "status": status, "seconds": 1.0, **extra}


def _write(folder, records):
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "claims.jsonl").open("a") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")


def _row(block, text=STATEMENT):
    rows = [line for line in block.splitlines() if line.startswith("|") and text in line]
    assert len(rows) == 1, rows
    return rows[0]


def test_every_paper_page_has_a_statement_list():
    from theory.registry import AREAS

    assert set(STATEMENTS) == set(AREAS) - {"atlas"}  # atlas.md is the capacity atlas, no paper
    assert set(UNCHECKED) == set(STATEMENTS)


def test_statements_cover_every_claim_and_name_only_registered_ones():
    claims = load_all()
    assert problems(claims) == []
    for area, rows in STATEMENTS.items():
        named = {cid for s in rows for cid in s.claims}
        mine = {cid for cid in claims if cid.split(".", 1)[0] == area}
        assert named == mine, area
        assert all(s.claims and set(s.claims) <= mine for s in rows), area


def test_the_coverage_check_can_fail():
    claims = dict(load_all())
    claims["geometric.new.claim"] = claims["geometric.gd.fit"]
    assert "geometric: claim geometric.new.claim belongs to no statement" in problems(claims)
    del claims["geometric.gd.fit"]
    assert any("names geometric.gd.fit, which is not registered" in p for p in problems(claims))


def test_a_changed_record_changes_the_table(tmp_path, ix):
    kind = ix.claims[CLAIM].kind
    name = "`lower.intrinsic`" + ("" if kind == "empirical" else f" ({kind})")
    _write(tmp_path, [_record(CLAIM, "quick", "pass")])
    before = _row(scorecards.section("retrieval", scorecards.Verdicts(tmp_path, ix.claims)))
    assert f"{name}: pass / —" in before
    assert "| **holds** | **undecided** (0 of 1 sentence claims hold) |" in before
    _write(tmp_path, [_record(CLAIM, "quick", "fail")])  # a newer record of the same claim
    after = _row(scorecards.section("retrieval", scorecards.Verdicts(tmp_path, ix.claims)))
    assert f"{name}: fail / —" in after and "| **refuted** (1 of 1 sentence claims fail) |" in after


def test_full_verdicts_are_judged_by_todays_registry(tmp_path, ix):
    claim = ix.claims[CLAIM]
    current = dict(statement=claim.statement_at("full"), resolution={"rule": "x"}, kind=claim.kind)
    current["seed_rule"] = claim.seed_rule
    _write(tmp_path / "full", [_record(CLAIM, "full", "pass", **current)])
    row = _row(scorecards.section("retrieval", scorecards.Verdicts(tmp_path, ix.claims)))
    assert ": — / pass" in row and "| **undecided** (0 of 1 sentence claims hold) | **holds** |" in row
    _write(tmp_path / "full", [_record(CLAIM, "full", "pass", **{**current, "statement": "an old text"})])
    row = _row(scorecards.section("retrieval", scorecards.Verdicts(tmp_path, ix.claims)))
    assert ": — / judged by a replaced criterion" in row
    assert (
        "| **undecided** (0 of 1 sentence claims hold) | **undecided** (0 of 1 sentence claims hold) |" in row
    )


def test_a_ledgered_claim_counts_by_its_criterion_verdict():
    assert scorecards.category("not reproduced", {"status": "not reproduced"}) == "refuted"
    assert (
        scorecards.category("not reproduced", {"status": "not reproduced", "seed_verdict": True})
        == "undecided"
    )


def test_kinds_are_read_at_generation_time(tmp_path, ix):
    """A claim re-kinded (must_fail -> identity) shows its new kind and no law to simulate."""
    v = scorecards.Verdicts(tmp_path, ix.claims)
    kinds = {cid: c.kind for cid, c in ix.claims.items()}
    kinds[CLAIM] = "identity"
    row = _row(scorecards.table("retrieval", v, kinds)[0])
    assert "`lower.intrinsic` (identity): — / —" in row
    notes = scorecards.table("retrieval", v, kinds)[1]["notes"]
    assert "an identity claim (no law to simulate)" in notes


def test_operating_characteristic_comes_from_the_store():
    from verify.oc import summary

    cid = next(
        c for c, k in load_all().items() if k.kind == "empirical" and (summary(c) or {}).get("covered")
    )
    oc = scorecards.operating(cid, "empirical", "quick")
    assert oc == summary(cid, "quick")


@pytest.fixture
def tmp_docs(tmp_path, monkeypatch):
    """A copy of docs/ in a tmp repository root, so that writing touches nothing of the checkout."""
    shutil.copytree(docs_pages.DOCS, tmp_path / "docs")
    monkeypatch.setattr(docs_pages, "ROOT", tmp_path)
    monkeypatch.setattr(docs_pages, "DOCS", tmp_path / "docs")
    return tmp_path


def test_the_check_detects_a_stale_scorecard(tmp_docs, ix):
    results = tmp_docs / "results"
    _write(results, [_record(CLAIM, "quick", "pass")])
    docs_pages.write(ix, results)
    assert docs_pages.stale(ix, results) == []
    _write(results, [_record(CLAIM, "quick", "fail")])
    assert docs_pages.stale(ix, results) == ["docs/retrieval.md"]


def test_writing_scorecards_touches_only_their_blocks(tmp_docs, ix):
    results = tmp_docs / "results"
    _write(results, [_record(CLAIM, "quick", "inconclusive")])
    page = tmp_docs / "docs" / "retrieval.md"
    before = page.read_text()
    assert "docs/retrieval.md" in docs_pages.write_scorecards(ix, results)
    after = page.read_text()
    outside = [t.split(scorecards.BEGIN)[0] + t.split(scorecards.END)[1] for t in (before, after)]
    assert outside[0] == outside[1]
    assert "`lower.intrinsic`" in after.split(scorecards.END)[0]
    assert docs_pages.write_scorecards(ix, results) == []  # now current


def test_only_sentence_claims_decide_a_statement(tmp_path, ix):
    """A refuted formalisation is shown in its own column and never refutes the paper's sentence;
    a statement that no sentence claim tests is undecided, whatever its boundary claims say."""
    from verify.statements import FORMALISATION, SENTENCE, Statement

    st = Statement(
        "abstract",
        "a sentence",
        ("retrieval.capacity.nc_increases_v", "retrieval.capacity.nc_decreases_d"),
        (("retrieval.capacity.nc_increases_v", FORMALISATION, "F1, our heuristic law"),),
    )
    roles = [st.role(c, "empirical")[0] for c in st.claims]
    assert roles == [FORMALISATION, SENTENCE]
    assert scorecards.statement_verdict(["refuted", "holds"], roles) == "holds"
    assert scorecards.statement_verdict(["holds", "refuted"], roles) == "refuted"
    assert "formalisation: 1 refuted (`capacity.nc_increases_v`)" in scorecards._others(
        st, roles, ["refuted", "holds"]
    )


def _roles(area=None, source=None):
    """(area, statement, claim id, kind, role, why) of every (statement, claim) pair."""
    kinds = {cid: c.kind for cid, c in load_all().items()}
    for a, rows in STATEMENTS.items():
        for st in rows:
            if (area is None or a == area) and (source is None or st.source == source):
                for cid in st.claims:
                    yield (a, st, cid, kinds[cid], *st.role(cid, kinds[cid]))


def test_language_model_probes_never_decide_an_abstract_row():
    """The abstract's language model is Llama-3; our probes run on SmolLM2 and Gemma, so on every
    [abstract] row a hopfield.lm.* claim is a formalisation that says so."""
    lm = [
        (st.text, cid, role, why) for _, st, cid, _, role, why in _roles(source="abstract") if ".lm." in cid
    ]
    assert len(lm) >= 6
    for text, cid, role, why in lm:
        assert role == "formalisation", (text, cid)
        assert "Llama-3" in why, (cid, why)


def test_the_superposition_probe_has_a_derived_row_of_its_own():
    cid = "hopfield.lm.superposition_ridge"
    rows = [st for st in STATEMENTS["hopfield"] if cid in st.claims]
    assert [st.source for st in rows] == ["derived"]
    assert "superposition" in rows[0].text and "[derived]" in rows[0].text
    assert rows[0].role(cid, "empirical")[0] == "sentence"


def test_the_multi_hop_matching_bound_is_tested_by_its_own_sentence_claim():
    """The abstract's matching lower bound is the multi-hop one: geometric.multihop.matching_bound
    (the k-hop construction against the k-hop bound over a grid of N, R, k) is its sentence claim;
    the single-hop matching_bound and our k-hop bound at p = 1 stay formalisations there."""
    from verify.statements import statement_verdict

    (st,) = [s for s in STATEMENTS["geometric"] if "matching information-theoretic" in s.text]
    assert st.source == "abstract"
    roles = {cid: st.role(cid, load_all()[cid].kind) for cid in st.claims}
    assert roles["geometric.single_hop.matching_bound"][0] == "formalisation"
    assert "SINGLE-hop" in roles["geometric.single_hop.matching_bound"][1]
    assert roles["geometric.multihop.below_bound_fail"][0] == "formalisation"
    assert [c for c, (r, _) in roles.items() if r == "sentence"] == ["geometric.multihop.matching_bound"]
    assert statement_verdict(["holds"] * len(roles), [r for r, _ in roles.values()]) == "holds"


def test_every_role_entry_says_why():
    """An explicit role differs from the default and gives a reason of its own: a formalisation
    names what is ours, a must-fail claim made a sentence claim names the impossibility, bound or
    boundary its statement is."""
    kinds = {cid: c.kind for cid, c in load_all().items()}
    entries = [
        (st, cid, role, why) for rows in STATEMENTS.values() for st in rows for cid, role, why in st.roles
    ]
    assert len(entries) >= 40
    for st, cid, role, why in entries:
        default = "boundary" if kinds[cid] == "must_fail" else "sentence"
        assert role != default, f"{cid} on {st.text[:40]!r}: an entry equal to the default"
        assert len(why.split()) >= 12, (cid, why)
        if role == "formalisation":
            assert re.search(r"\bours?\b", why), (cid, why)
        if role == "sentence":
            assert any(w in why for w in ("impossib", "bound", "necessary", "fail")), (cid, why)


def test_ledger_causes_agree_with_the_roles():
    """The scorecard and the ledger name the same culprit: on every [abstract] row a claim whose
    entry blames our formalisation or setting is a formalisation claim, one whose entry blames the
    paper is a sentence claim, and one whose entry blames the criterion's resolution is a sentence
    claim only where its verdict flips with the seed between a fail and a pass or an inconclusive
    (the scorecard counts it undecided, or reads the reference seed's verdict where no seed
    passes)."""
    from verify.ledger import BY_SCALE

    on_abstract = {}
    for _, _, cid, _, role, _ in _roles(source="abstract"):
        on_abstract.setdefault(cid, set()).add(role)
    sentence_of_abstract = {cid for cid, roles in on_abstract.items() if "sentence" in roles}
    for (cid, scale), entry in BY_SCALE.items():
        if entry.cause in ("formalisation", "setting"):
            assert on_abstract.get(cid, {"formalisation"}) == {"formalisation"}, (cid, scale, entry.cause)
        elif entry.cause == "resolution" and cid in sentence_of_abstract:
            verdicts = set(entry.seed_verdicts.values())
            assert entry.flips_with_seed and "fail" in verdicts and len(verdicts) >= 2, (cid, scale)
        elif entry.cause == "paper":
            assert cid in sentence_of_abstract, (cid, scale, entry.cause)
