"""Randomness enters through one module (constructions/seeding.py): no direct
``numpy.random.default_rng``/``RandomState``/``seed`` or torch ``manual_seed`` anywhere else in
the project, every salt a stream is drawn with is a name of its table (or an integer that tells
draws apart, after the name), and every name of the table is used. A meta-test shows the scan
finds a direct call."""

from __future__ import annotations

import ast
from pathlib import Path

from constructions.seeding import SALTS
from tests.layout import ROOT

PACKAGES = ("theory", "constructions", "verify", "paper_figs")
SEEDING = Path("constructions") / "seeding.py"
DIRECT = {"default_rng", "manual_seed", "RandomState", "seed", "manual_seed_all"}


def _files(root: Path):
    for package in PACKAGES:
        yield from sorted((root / package).rglob("*.py"))


def direct_seeding(root: Path) -> list[str]:
    """Calls that turn a seed into a stream outside constructions/seeding.py, as 'path:line call'."""
    found = []
    for path in _files(root):
        rel = path.relative_to(root)
        if rel == SEEDING:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in DIRECT:
                    found.append(f"{rel}:{node.lineno} {ast.unparse(node.func)}")
    return found


def salts_used(root: Path) -> tuple[list[str], set[str]]:
    """(unnamed first salts as 'path:line call', every string constant of the project's code)."""
    unnamed, strings = [], set()
    for path in _files(root):
        rel = path.relative_to(root)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                strings.add(node.value)
            if not isinstance(node, ast.Call):
                continue
            f = node.func
            first = None
            if isinstance(f, ast.Name) and f.id == "rng_for" and len(node.args) > 1:
                first = node.args[1]
            elif (
                isinstance(f, ast.Attribute)
                and f.attr == "rng"
                and ast.unparse(f.value) == "ctx"
                and node.args
            ):
                first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, int):
                unnamed.append(f"{rel}:{node.lineno} {ast.unparse(node)}")
    return unnamed, strings


def test_no_direct_seeding_outside_the_seeding_module():
    assert direct_seeding(ROOT) == []


def test_every_stream_has_a_named_salt_and_every_name_is_used():
    unnamed, strings = salts_used(ROOT)
    assert unnamed == []
    assert sorted(set(SALTS) - strings) == []  # a name no code draws with is stale
    assert all(isinstance(v, int) and not isinstance(v, bool) for v in SALTS.values())


def test_the_scan_finds_a_direct_call(tmp_path):
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    (tmp_path / "verify" / "bad.py").write_text(
        "import numpy as np\nimport torch\nrng = np.random.default_rng(3)\n"
        "g = torch.Generator().manual_seed(1)\n"
    )
    (tmp_path / "constructions" / "seeding.py").write_text("import numpy as np\nnp.random.default_rng(0)\n")
    assert direct_seeding(tmp_path) == [
        "verify/bad.py:3 np.random.default_rng",
        "verify/bad.py:4 torch.Generator().manual_seed",
    ]
