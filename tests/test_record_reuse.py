"""The registry test reuses a main-job record only when it was made by this very code and context
(tests/conftest.py, ``_main_job_records``); anything else is run again."""

import json

import pytest

from tests.conftest import _main_job_records
from verify.results import source_digest, versions


def _record(**changes) -> dict:
    base = {
        "id": "a.b.c",
        "scale": "quick",
        "seed": 0,
        "device": "cpu",
        "dtype": "float64",
        "status": "pass",
        "source_digest": source_digest(),
        "audited": True,
        "versions": versions(),
        "profile": {"reads": [[["f", "0123456789ab", 1]]]},
    }
    return {**base, **changes}


@pytest.mark.parametrize(
    "change",
    [
        {"source_digest": "0" * 16},  # other code, criteria data or reference records
        {"audited": False},  # shared results not fingerprinted: shared_mutated unknown
        {"seed": 1},
        {"scale": "full"},
        {"dtype": "float32"},
        {"device": "cuda"},
        {"versions": {"python": "0"}},
        {"status": "error"},
        {"profile": {}},  # no read log (an older record)
    ],
)
def test_a_record_that_differs_in_any_condition_is_run_again(tmp_path, monkeypatch, change):
    monkeypatch.setenv("RECALL_RESULTS", str(tmp_path))
    monkeypatch.delenv("RECALL_TEST_RERUN", raising=False)
    (tmp_path / "claims.jsonl").write_text(json.dumps(_record(**change)) + "\n")
    assert _main_job_records() == {}


def test_a_matching_record_is_reused_and_the_newest_wins(tmp_path, monkeypatch):
    monkeypatch.setenv("RECALL_RESULTS", str(tmp_path))
    monkeypatch.delenv("RECALL_TEST_RERUN", raising=False)
    rows = [_record(status="fail"), _record(status="pass"), _record(seed=1, status="inconclusive")]
    (tmp_path / "claims.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert _main_job_records()["a.b.c"]["status"] == "pass"
    monkeypatch.setenv("RECALL_TEST_RERUN", "1")
    assert _main_job_records() == {}
