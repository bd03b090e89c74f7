"""Every must_fail claim either brackets a boundary within a factor of 2 or says it tests a convention
(README.md#kinds-of-claim-controls-and-verdicts-over-seeds, docs/verdicts.md).

The machine-readable fields:

- a bracketed claim's quick record carries ``details["bracket"]`` = {"bound", "quantity",
  "boundary", "below", "above", "factor", "breaks_by"}: where "it breaks" was measured (below) and
  where it does not (above), around ``boundary``; ``bound`` names the cited bound (one of the
  claim's ``bounds`` when it cites any) or, for a claim that cites none, the boundary it brackets;
- a claim that brackets nothing says so in its statement ("tests a convention") and cites no bound.

A must_fail claim that cites a bound must bracket that bound. Claims that do not meet the rule
yet are listed in ``KNOWN`` with the reason (strict xfails: the test fails once they do).
"""

from __future__ import annotations

import math

import pytest

from verify.claims import Context, load_all

CLAIMS = load_all()
MUST_FAIL = [cid for cid, c in CLAIMS.items() if c.kind == "must_fail"]
CONVENTION = "tests a convention"

#: must_fail claims that neither bracket a boundary within 2 nor say they test a convention (yet)
KNOWN = {
    "fact_mlp.decodability.rho_interior": "no details['bracket'] and no 'tests a convention' statement "
    "(rho = 0 at one point of the scale c, not a boundary; its rho < 1e-8 and facts-lost rule is "
    "the theory's, not a convention)",
    "icrecall.finetune.mixed_context_uninformative": "cites icrecall.relation_chance (an acceptance "
    "ceiling, not a boundary in a scale) without a bracket",
    "hopfield.wrong_context.fails": "cites hopfield.capacity_shift without a bracket of it (the wrong "
    "context is structural: no scale to straddle)",
    "retrieval.lower.intrinsic": "a necessary and a sufficient size about 6x apart, no boundary; no "
    "'tests a convention' statement",
    "retrieval.capacity.small_n_fail": "cites retrieval.coupon_floor and retrieval.all_seen_upper, "
    "about 100x apart (98x at quick scale): no bracket within 2 exists",
}


def _says_convention(claim) -> bool:
    return CONVENTION in claim.statement


def _param(cid):
    marks = [pytest.mark.claims_of(CLAIMS[cid].work_group)]
    if cid in KNOWN:
        marks.append(pytest.mark.xfail(reason=KNOWN[cid], strict=True))
    return pytest.param(cid, marks=marks, id=cid)


def check_bracket(bracket: dict, cited: tuple[str, ...]) -> None:
    """Raise AssertionError unless ``bracket`` straddles its boundary within a factor of 2 and names
    one of ``cited`` (when the claim cites any bound).

    >>> check_bracket({"bound": "b", "boundary": 9.97, "below": 9, "above": 10}, ("b",))
    >>> check_bracket({"bound": "b", "boundary": 6.29, "below": 60, "above": 110}, ("b",))
    Traceback (most recent call last):
    ...
    AssertionError: bracket 60 | 110 does not straddle its boundary 6.29
    """
    for key in ("bound", "boundary", "below", "above"):
        assert key in bracket, f"details['bracket'] lacks {key!r}"
    b, lo, hi = float(bracket["boundary"]), float(bracket["below"]), float(bracket["above"])
    assert b > 0 and 0 < lo < hi, f"bracket needs 0 < below < above and a positive boundary: {bracket}"
    assert lo < b <= hi, f"bracket {lo:g} | {hi:g} does not straddle its boundary {b:g}"
    factor = max(b / lo, hi / b)
    assert factor <= 2.0, f"bracket {lo:g} | {hi:g} lies {factor:.3g}x from its boundary {b:g} (> 2)"
    if "factor" in bracket:
        assert math.isclose(float(bracket["factor"]), factor, rel_tol=1e-9), bracket
    if cited:
        assert bracket["bound"] in cited, f"the bracket's bound {bracket['bound']!r} is not one of {cited}"


@pytest.mark.parametrize("claim_id", MUST_FAIL)
def test_a_convention_claim_cites_no_bound(claim_id):
    claim = CLAIMS[claim_id]
    if _says_convention(claim):
        assert not claim.bounds, f"{claim_id} says it tests a convention but cites {claim.bounds}"


@pytest.mark.parametrize("claim_id", [_param(cid) for cid in MUST_FAIL])
def test_must_fail_brackets_its_bound_within_two_or_tests_a_convention(claim_id, quick_record):
    claim = CLAIMS[claim_id]
    if _says_convention(claim) and not claim.bounds:
        return
    record = quick_record(claim_id)
    if record["status"] == "skipped":
        pytest.skip(f"{claim_id}: {record['skipped']}")
    bracket = (record.get("details") or {}).get("bracket")
    assert bracket is not None, (
        f"{claim_id}: neither details['bracket'] nor a statement that says it {CONVENTION}"
    )
    check_bracket(bracket, claim.bounds)


def test_known_violations_are_must_fail_claims():
    """The list of known violations names only registered must_fail claims."""
    assert set(KNOWN) <= set(MUST_FAIL), sorted(set(KNOWN) - set(MUST_FAIL))


def test_margin_nec_looseness_is_not_at_least_one_by_construction(monkeypatch):
    """margin_nec's search starts at d0 = 1, so a necessary bound that claims too much fails the
    claim. With the search that started at ceil(d0_nec) - 1, a bound of 100 at N = 100 gave every
    d0* >= 100 and the claim passed whatever the codes did."""
    from theory.geometric import single_hop as B

    claim = CLAIMS["geometric.single_hop.margin_nec"]
    p = {**claim.params("quick"), "n_subjects": 100, "seeds": 3, "d0_max": 160}
    honest = claim.check(p, Context(seed=0))
    assert honest.passed and max(honest.details["d0_star"]) < 100
    monkeypatch.setattr(B, "d0_necessary", lambda n, margin: 100.0)
    out = claim.check(p, Context(seed=0))
    assert not out.passed and max(out.details["factors"]) < 1


def test_sparsity_pr_is_an_identity_that_its_soft_gate_control_breaks():
    """PR <= N_eff is Cauchy-Schwarz: hopfield.sparsity.pr is an identity (support count against the
    gates' open set), and with soft gates the support is every memory."""
    claim = CLAIMS["hopfield.sparsity.pr"]
    assert claim.kind == "identity" and "Cauchy-Schwarz" in claim.independence
    p = {**claim.params("quick"), "draws": 5}
    out = claim.check(p, Context(seed=0))
    assert out.passed and out.details["support_p_g"] == [p["n_eff"]] * 5
    soft = claim.check({**p, "kappa": 4.0}, Context(seed=0))
    assert not soft.passed and min(soft.details["support_p_g"]) == p["n_patterns"]
