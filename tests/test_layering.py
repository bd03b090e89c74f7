"""The layering test (README.md#layout) and a meta-test showing that its checker can fail."""

from tests.layering import ALLOWED, violations
from tests.layout import ROOT


def test_imports_follow_the_flow():
    assert violations(ROOT) == []


def test_allow_list_entries_are_still_needed():
    """An allow-list entry whose violation is gone must be deleted (it would hide a new one)."""
    stale = [
        key
        for key in ALLOWED
        if not any(
            v.startswith(key[0] + ":") and f"may not import {key[1]}" in v
            for v in violations(ROOT, allowed={})
        )
    ]
    assert stale == []


def test_checker_reports_upward_imports(tmp_path):
    stages = ("theory", "constructions", "verify", "paper_figs")
    for s in stages:
        (tmp_path / s / "area").mkdir(parents=True)
        (tmp_path / s / "__init__.py").write_text("")
    (tmp_path / "theory" / "ok.py").write_text("import math\nfrom theory import registry\n")
    (tmp_path / "theory" / "bad.py").write_text("import numpy\nimport constructions.tasks\n")
    (tmp_path / "constructions" / "area" / "bad.py").write_text(
        "from theory import x\n\ndef f():\n    from verify.claims import claim\n"
    )
    (tmp_path / "verify" / "area" / "rel.py").write_text(
        "from ..claims import claim\nimport importlib\nimportlib.import_module('paper_figs.registry')\n"
    )
    (tmp_path / "paper_figs" / "fine.py").write_text("import verify.cli\nimport theory\n")
    found = violations(tmp_path, stages, allowed={})
    assert found == [
        "theory/bad.py:2 imports constructions.tasks (theory may not import constructions)",
        "constructions/area/bad.py:4 imports verify.claims (constructions may not import verify)",
        "verify/area/rel.py:3 imports paper_figs.registry (verify may not import paper_figs)",
    ]
    allowed = {("theory/bad.py", "constructions")}
    assert len(violations(tmp_path, stages, allowed=allowed)) == 2
