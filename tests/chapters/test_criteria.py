"""The chapters claims' criterion objects re-express their old rules: agreement of named pairs,
the fact-storage threshold and the strict '>' thresholds."""

import math

import pytest

from verify.chapters.accounting import agreement
from verify.chapters.toy_setup import storage_threshold
from verify.criteria import Threshold


def test_agreement_is_exact_at_tolerance_zero_and_lists_the_pairs():
    j = agreement("max |a - b|", 0, {"x": (5, 5), "y": (7, 8)})
    assert j.verdict == "fail"
    assert j.measured["max |a - b|"] == 1.0
    assert j.predicted["y"] == 7 and j.measured["y"] == 8
    assert agreement("max |a - b|", 1.0, {"y": (7, 8)}).verdict == "pass"


def test_agreement_missing_value_fails_and_nan_is_an_error():
    assert agreement("q", 1e-6, {"x": (1.0, None)}).verdict == "fail"
    with pytest.raises(ValueError, match="NaN"):
        agreement("q", 1e-6, {"x": (1.0, math.nan)})
    with pytest.raises(ValueError, match="NaN for"):
        agreement("q", 1e-6, {"x": (1.0, 1.0), "y": (1.0, math.nan)})
    with pytest.raises(ValueError, match="at least one pair"):
        agreement("q", 1e-6, {})


@pytest.mark.parametrize("moc, dense", [(0.5, 0.51), (0.5, 0.52), (0.2, 0.3), (0.3, 0.2), (0.25, 0.27)])
def test_storage_threshold_is_the_old_rule(moc, dense):
    """Accuracies are multiples of 1/1024 at quick scale: the difference form cannot flip the old
    'MoC >= dense - 0.02' verdict."""
    moc, dense = round(moc * 1024) / 1024, round(dense * 1024) / 1024
    assert storage_threshold().judge(moc - dense).passed == (moc >= dense - 0.02)


def test_strict_thresholds_reject_the_boundary_itself():
    rule = Threshold("gap", 1e-4, ">", "convention")
    assert rule.judge(1e-4).verdict == "fail"
    assert rule.judge(1.0000001e-4).verdict == "pass"
