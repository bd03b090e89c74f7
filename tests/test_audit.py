"""A check must not change a shared result (verify.audit): the auditing context names the entry."""

from dataclasses import dataclass

import numpy as np
import pytest
import torch

from verify.audit import fingerprint
from verify.claims import Claim, Context, Control, Outcome
from verify.criteria import Threshold
from verify.runner import run_claim


def _rows(ctx):
    return ctx.shared(("rows",), lambda: [{"n": 4, "acc": 1.0}])


def _mutating(p, ctx):
    rows = _rows(ctx)
    rows[0]["ratio"] = 2.0  # writes into the cached rows: the defect the audit catches
    return Outcome.judged(Threshold("acc", 0.5, ">=", "theory").judge(rows[0]["acc"] * p["scale"]))


def _copying(p, ctx):
    rows = [dict(r) for r in _rows(ctx)]
    rows[0]["ratio"] = 2.0
    return Outcome.judged(Threshold("acc", 0.5, ">=", "theory").judge(rows[0]["acc"] * p["scale"]))


def _claim(check):
    control = Control("zero", {"scale": 0.0}, "accuracy scaled to 0 misses the bar")
    return Claim(
        "t.audit.x", "s", "derived", "acc >= 0.5", {"scale": 1.0}, {"scale": 1.0}, check, controls=(control,)
    )


def test_an_auditing_run_names_the_shared_result_a_check_changed():
    rec = run_claim(_claim(_mutating), Context(audit=True))
    assert rec["shared_mutated"] == ["(('rows',), 'cpu', 'float64')"] and rec["status"] == "pass"
    assert "shared_mutated" not in run_claim(_claim(_copying), Context(audit=True))
    assert "shared_mutated" not in run_claim(_claim(_mutating), Context())  # no audit, no fingerprints


def test_a_later_claim_that_changes_an_earlier_claims_result_is_named_and_untouched_ones_are_not_rehashed(
    monkeypatch,
):
    ctx = Context(audit=True)
    assert "shared_mutated" not in run_claim(_claim(_copying), ctx)  # computes ("rows",) unchanged
    ctx.shared(("other",), lambda: [0.0])
    hashed = []
    import verify.audit as audit

    real = audit.fingerprint
    monkeypatch.setattr(audit, "fingerprint", lambda v: hashed.append(v) or real(v))
    rec = run_claim(_claim(_mutating), ctx)  # reads the first claim's rows and writes into them
    assert rec["shared_mutated"] == ["(('rows',), 'cpu', 'float64')"]
    assert [0.0] not in hashed  # ("other",) was not touched by this claim: not fingerprinted again


@dataclass
class _Box:
    weights: torch.Tensor
    table: np.ndarray


def test_fingerprints_see_tensors_arrays_and_dataclass_fields_change():
    box = _Box(torch.zeros(3), np.arange(4))
    before = fingerprint({"box": box})
    box.weights[1] = 1.0
    after_tensor = fingerprint({"box": box})
    box.table[0] = 9
    assert len({before, after_tensor, fingerprint({"box": box})}) == 3
    assert fingerprint([1, 2]) != fingerprint((1, 2)) and fingerprint(1) != fingerprint(1.0)
    with pytest.raises(ValueError, match="nested"):
        deep = []
        for _ in range(60):
            deep = [deep]
        fingerprint(deep)


def test_a_series_of_plain_values_is_fingerprinted_by_its_content():
    """A list of plain values is hashed through one repr (verify.audit._PLAIN): a changed number,
    a number of another type, a list become a tuple and a changed string each change the print."""
    rows = {"acc": [0.25] * 1000, "relation": ["capital"] * 3, "n": [1, 2, 3]}
    before = fingerprint(rows)
    assert fingerprint({"n": [1, 2, 3], "relation": ["capital"] * 3, "acc": [0.25] * 1000}) == before
    for key, value in [
        ("acc", [0.25] * 999 + [0.5]),
        ("acc", [0.25] * 999 + [np.float64(0.25)]),
        ("n", [1, 2, 3.0]),
        ("n", (1, 2, 3)),
        ("relation", ["capital"] * 2 + ["capitol"]),
    ]:
        assert fingerprint(dict(rows, **{key: value})) != before, (key, value[-1])
