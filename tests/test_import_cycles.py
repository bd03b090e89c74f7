"""No import circle in theory/, constructions/, verify/ or paper_figs/ (README.md#layout): the import
graph is grimp's (imports inside functions included), and a direct import a -> b closes a circle
exactly when b reaches a back. A meta-test shows the check finds a circle it is given."""

from __future__ import annotations

import sys

import pytest

grimp = pytest.importorskip("grimp")

PACKAGES = ("theory", "constructions", "verify", "paper_figs")


def circles(packages: tuple[str, ...]) -> list[str]:
    """Each direct import that some chain of imports leads back from, as 'a -> b (back: ...)'."""
    graph = grimp.build_graph(*packages, include_external_packages=False)
    found = []
    for a in sorted(graph.modules):
        for b in sorted(graph.find_modules_directly_imported_by(a)):
            back = graph.find_shortest_chain(importer=b, imported=a)
            if back:
                found.append(f"{a} -> {b} (back: {' -> '.join(back)})")
    return found


def test_no_import_circle():
    assert circles(PACKAGES) == []


def test_the_check_finds_a_circle_inside_a_function(tmp_path, monkeypatch):
    pkg = tmp_path / "circle_demo"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from circle_demo import b\n")
    (pkg / "b.py").write_text("def f():\n    from circle_demo import c\n")
    (pkg / "c.py").write_text("import circle_demo.a\n")
    (pkg / "d.py").write_text("import circle_demo.a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    found = circles(("circle_demo",))
    sys.modules.pop("circle_demo", None)
    assert found == [
        "circle_demo.a -> circle_demo.b (back: circle_demo.b -> circle_demo.c -> circle_demo.a)",
        "circle_demo.b -> circle_demo.c (back: circle_demo.c -> circle_demo.a -> circle_demo.b)",
        "circle_demo.c -> circle_demo.a (back: circle_demo.a -> circle_demo.b -> circle_demo.c)",
    ]
