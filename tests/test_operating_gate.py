"""A pass may mean something only where every named alternative of the claim's criterion passes at
most 0.05 of the time (README.md, "Kinds of claim, controls and verdicts over seeds"): the runner
reports such a claim inconclusive, with the alternative and its rate, and ``verify rejudge`` does the
same to stored verdicts."""

import pytest

import verify.oc as oc
from verify.claims import Claim, Context, Outcome
from verify.rejudge import status_now
from verify.runner import operating_gate, run_claim

TOY = "toy.gate.claim"


def _claim() -> Claim:
    return Claim(TOY, "test", "derived", "x >= 0 on every seed", {}, {}, lambda p, ctx: Outcome(0, 1, True))


def _stored(rate):
    def summary(claim_id, scale="quick"):
        if claim_id != TOY:
            return None
        return {
            "covered": True,
            "power": 0.9,
            "worst_alternative": "at the threshold",
            "worst_pass_rate": rate,
            "reps": 200,
        }

    return summary


@pytest.mark.parametrize("rate, status", [(0.25, "inconclusive"), (0.05, "pass"), (0.0, "pass")])
def test_a_pass_its_characteristic_does_not_allow_is_inconclusive(monkeypatch, rate, status):
    monkeypatch.setattr(oc, "summary", _stored(rate))
    record = run_claim(_claim(), Context(seed=0, device="cpu", scale="quick"))
    assert record["status"] == status
    assert record["passed"] is (status == "pass")
    if status == "inconclusive":
        assert "at the threshold" in record["inconclusive"] and "0.250" in record["inconclusive"]
        assert "would decide" in record["inconclusive"]  # as every inconclusive record says
        assert operating_gate(TOY, "quick") == record["inconclusive"]
    assert status_now(TOY, "pass", "quick") == status


def test_no_characteristic_no_gate(monkeypatch):
    monkeypatch.setattr(
        oc, "summary", lambda claim_id, scale="quick": {"covered": False, "reason": "no spread"}
    )
    assert operating_gate(TOY, "quick") is None
    assert run_claim(_claim(), Context(seed=0, device="cpu", scale="quick"))["status"] == "pass"
    assert status_now(TOY, "fail", "quick") == "fail"


def test_the_gate_text_survives_controls(monkeypatch):
    """A gated claim with controls keeps the gate's reason (the controls' own text is for a claim
    made inconclusive by an undecided control)."""
    import dataclasses

    from verify.claims import Control

    monkeypatch.setattr(oc, "summary", _stored(0.25))
    claim = dataclasses.replace(
        _claim(),
        quick={"x": 1},
        full={"x": 1},
        check=lambda p, ctx: Outcome(0, p["x"], p["x"] > 0),
        controls=[Control("zero", {"x": 0}, "x = 0 must fail")],
    )
    record = run_claim(claim, Context(seed=0, device="cpu", scale="quick"))
    assert record["status"] == "inconclusive"
    assert record["controls"][0]["status"] == "fails as required"
    assert record["inconclusive"].startswith("the criterion passes the alternative 'at the threshold'")
