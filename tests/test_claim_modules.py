"""No claim module imports another claim module (issue 18 item 4).

A claim module is a module under ``verify/<area>/`` that calls ``claim(...)`` (``@claim(...)``
included). What several claim modules share (cached model set-ups, parameter dicts, helpers) lives
in a set-up module of the same area that registers nothing, imported from both sides.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.layering import imported_names
from tests.layout import ROOT

#: Known pairs still to be split, (importing file, imported file) relative to the root; each entry
#: is removed when its shared part moves to a set-up module (the staleness test enforces it).
ALLOWED: set = {
    ("verify/atlas/retrieval.py", "verify/atlas/claims.py"),
    ("verify/atlas/retrieval.py", "verify/retrieval/capacity.py"),
    ("verify/chapters/tuned.py", "verify/chapters/toy.py"),
    ("verify/fact_mlp/decoder.py", "verify/fact_mlp/decodability.py"),
    ("verify/fact_mlp/edit.py", "verify/fact_mlp/transformer.py"),
    ("verify/fact_mlp/edit_equal.py", "verify/fact_mlp/transformer.py"),
    ("verify/fact_mlp/minimal.py", "verify/fact_mlp/compare.py"),
    ("verify/fact_mlp/minimal.py", "verify/fact_mlp/usability.py"),
    ("verify/fact_mlp/transformer.py", "verify/fact_mlp/usability.py"),
    ("verify/fact_mlp/transformer_fails.py", "verify/fact_mlp/transformer.py"),
    ("verify/fact_mlp/transformer_spec.py", "verify/fact_mlp/transformer.py"),
    ("verify/geometric/depth.py", "verify/geometric/multihop.py"),
    ("verify/geometric/gd_threshold.py", "verify/geometric/gd.py"),
    ("verify/geometric/gd_threshold.py", "verify/geometric/scaling.py"),
    ("verify/geometric/gd_threshold.py", "verify/geometric/single_hop.py"),
    ("verify/geometric/gd_transfer.py", "verify/geometric/gd.py"),
    ("verify/geometric/scaling.py", "verify/geometric/single_hop.py"),
    ("verify/hopfield/lm_probes.py", "verify/hopfield/lm.py"),
    ("verify/icrecall/handset.py", "verify/icrecall/memories.py"),
    ("verify/icrecall/pretrained.py", "verify/icrecall/finetune.py"),
    ("verify/icrecall/sample.py", "verify/icrecall/finetune.py"),
    ("verify/icrecall/subjects.py", "verify/icrecall/finetune.py"),
    ("verify/retrieval/gd_capacity.py", "verify/retrieval/capacity.py"),
    ("verify/retrieval/gd_capacity.py", "verify/retrieval/early_gd.py"),
    ("verify/retrieval/lower.py", "verify/retrieval/capacity.py"),
    ("verify/retrieval/scaling.py", "verify/retrieval/capacity.py"),
    ("verify/retrieval/sufficient.py", "verify/retrieval/capacity.py"),
}


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


def claim_module_imports(root: Path, allowed=None) -> list[str]:
    """'importer imports imported' for each claim module importing another claim module."""
    allowed = ALLOWED if allowed is None else allowed
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
            pair = (rel.as_posix(), trees[other][0].as_posix())
            if pair not in allowed:
                found.append(f"{pair[0]} imports {pair[1]}")
    return found


def test_no_claim_module_imports_another():
    assert claim_module_imports(ROOT) == []


def test_allowed_pairs_are_still_needed():
    still = set(claim_module_imports(ROOT, allowed=set()))
    assert [p for p in sorted(ALLOWED) if f"{p[0]} imports {p[1]}" not in still] == []


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
    found = claim_module_imports(tmp_path, allowed=set())
    assert found == [
        "verify/area/bad.py imports verify/area/a.py",
        "verify/area/bad2.py imports verify/area/a.py",
    ]
    assert claim_module_imports(tmp_path, allowed={("verify/area/bad.py", "verify/area/a.py")}) == [
        "verify/area/bad2.py imports verify/area/a.py"
    ]
