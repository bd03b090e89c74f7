"""Every registered claim runs at quick scale as a test, with its controls, once per session
(``quick_record`` in tests/conftest.py: tests that draw from a claim's record reuse this run).

A claim in the ledger must still fail in the recorded way; every other claim must pass, or be
inconclusive where its criterion object (verify.criteria) says what budget would decide it. Every
control must fail the claim's criterion (otherwise the claim is vacuous), every empirical or
must_fail claim must have a control, and every claim's verdict comes from a criterion object
(its record carries the resolution), and no claim may change a shared result that other claims
read (the run fingerprints them: verify.audit). Skipped claims (e.g. language-model probes without weights)
are reported as pytest skips.
"""

import pytest

from verify.claims import load_all, missing_controls
from verify.ledger import entry_for
from verify.results import ResultStore, reference_root, verdict_differences

CLAIMS = load_all()


def _reference() -> dict:
    """The newest quick record of each claim in the committed reference results/."""
    return {
        r["id"]: r for r in ResultStore(reference_root(), create=False).records() if r.get("scale") == "quick"
    }


REFERENCE = _reference()


@pytest.mark.parametrize("claim_id", list(CLAIMS))
def test_claim_quick(claim_id, quick_record):
    claim = CLAIMS[claim_id]
    assert missing_controls(claim) is None, f"{claim_id}: {missing_controls(claim)}"
    record = quick_record(claim_id)
    if record["status"] == "skipped":
        pytest.skip(f"{claim_id}: {record['skipped']}")
    assert record["status"] != "error", (
        (record.get("error") or "")
        + "\n"
        + str(record["details"].get("traceback", ""))
        + "".join(c.get("traceback", "") for c in record.get("controls") or [])
    )
    assert record["status"] != "vacuous", f"{claim_id}: {record.get('vacuous')}"
    # a check must not change a shared result that other claims and controls read (verify.audit)
    assert not record.get("shared_mutated"), f"{claim_id} changed shared results {record['shared_mutated']}"
    # every claim's rule is a criterion object (verify.criteria), which writes the resolution
    resolution = record.get("resolution") or {}
    assert resolution.get("rule") and resolution.get("text"), f"{claim_id}: no criterion object's resolution"
    if entry_for(claim_id, "quick") is not None:
        assert record["status"] == "not reproduced", (
            f"{claim_id} is in the ledger but now passes: update verify/<area>/ledger.toml "
            f"(measured {record['measured']})"
        )
    elif record["status"] == "inconclusive":
        # only a criterion object (verify.criteria) can say its interval straddles the rule, and
        # it must say what would decide it
        assert record.get("resolution"), f"{claim_id}: inconclusive without a criterion object's resolution"
        assert "would decide" in record["inconclusive"] or "not told apart" in record["inconclusive"], record[
            "inconclusive"
        ]
    else:
        assert record["status"] == "pass", (
            f"{claim_id}: predicted {record['predicted']}, measured {record['measured']}"
        )
    # records made on another machine than the reference's: the same verdict (and, for an identity,
    # the same numbers within its tolerance), never the same bits
    reference = REFERENCE.get(claim_id)
    if reference is not None and reference.get("seed") == record.get("seed"):
        problems = verdict_differences(reference, record)
        assert not problems or problems[0].endswith(
            "not comparable (other parameters, seed, scale, device or dtype)"
        ), problems
