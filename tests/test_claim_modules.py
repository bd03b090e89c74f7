"""No claim module imports another claim module (README.md#layout).

A claim module is a module under ``verify/<area>/`` that calls ``claim(...)`` (``@claim(...)``
included). What several claim modules share (cached model set-ups, parameter dicts, helpers) lives
in a set-up module of the same area that registers nothing, imported from both sides.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.layering import imported_names
from tests.layout import ROOT


def _registers_claims(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if name == "claim":
                return True
    return False


def _module_names(tree: ast.AST, package: str) -> set[str]:
    """Every dotted name ``tree`` imports, and ``M.n`` for each ``from M import n``."""
    names = {name for _, name in imported_names(tree, package)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


def claim_module_imports(root: Path) -> list[str]:
    """'importer imports imported' for each claim module importing another claim module."""
    trees = {}
    for path in sorted((root / "verify").glob("*/*.py")):
        rel = path.relative_to(root)
        trees[".".join(rel.with_suffix("").parts)] = (rel, ast.parse(path.read_text()))
    claim_mods = {m for m, (_, tree) in trees.items() if _registers_claims(tree)}
    found = []
    for mod in sorted(claim_mods):
        rel, tree = trees[mod]
        package = mod.rsplit(".", 1)[0]
        for other in sorted(_module_names(tree, package) & (claim_mods - {mod})):
            found.append(f"{rel.as_posix()} imports {trees[other][0].as_posix()}")
    return found


def test_no_claim_module_imports_another():
    assert claim_module_imports(ROOT) == []


def test_checker_reports_a_planted_pair(tmp_path):
    area = tmp_path / "verify" / "area"
    area.mkdir(parents=True)
    (area / "__init__.py").write_text("")
    (area / "a.py").write_text("from verify.claims import claim\n\n@claim('a.x')\ndef x(p):\n    pass\n")
    (area / "setup.py").write_text("BASE = {'n': 3}\n")
    (area / "ok.py").write_text(
        "from verify.claims import claim\nfrom verify.area.setup import BASE\nclaim('a.y')(print)\n"
    )
    (area / "bad.py").write_text(
        "from verify.claims import claim\nfrom verify.area.a import x\nclaim('a.z')(x)\n"
    )
    (area / "bad2.py").write_text(
        "import verify.claims as c\n\ndef f():\n    from verify.area import a\nc.claim('a.w')\n"
    )
    assert claim_module_imports(tmp_path) == [
        "verify/area/bad.py imports verify/area/a.py",
        "verify/area/bad2.py imports verify/area/a.py",
    ]
    (area / "bad.py").unlink()
    (area / "bad2.py").unlink()
    assert claim_module_imports(tmp_path) == []


def hand_built_keys(root: Path) -> list[str]:
    """'file:line' of each ``ctx.shared(...)`` call under verify/ outside verify/claims.py: a
    measurement is cached by ``@shared`` (verify.claims.shared), keyed by its code and arguments,
    never by a key built by hand."""
    hits = []
    for path in sorted((root / "verify").rglob("*.py")):
        if path == root / "verify" / "claims.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            fn = node.func if isinstance(node, ast.Call) else None
            if isinstance(fn, ast.Attribute) and fn.attr == "shared" and getattr(fn.value, "id", "") == "ctx":
                hits.append(f"{path.relative_to(root)}:{node.lineno}")
    return hits


def test_no_cache_key_is_built_by_hand(tmp_path):
    assert hand_built_keys(ROOT) == []
    planted = tmp_path / "verify" / "area" / "m.py"
    planted.parent.mkdir(parents=True)
    planted.write_text("def f(ctx, p):\n    return ctx.shared(('k', p['n'], ctx.seed), lambda: 1)\n")
    assert hand_built_keys(tmp_path) == ["verify/area/m.py:2"]
