"""The one-way flow of the stages (README.md#layout): theory <- constructions <- verify <- paper_figs.

:func:`violations` parses (ast) every module of the four stages and reports each import of a
later stage: ``import x``, ``from x import y`` and ``importlib.import_module("x")`` /
``runpy.run_module("x")`` with a literal name, at module level or inside functions.
"""

from __future__ import annotations

import ast
from pathlib import Path

STAGES = ("theory", "constructions", "verify", "paper_figs")  # each may import those before it

#: Known violations, each named and owned: (importing file, imported stage) -> who removes it.
ALLOWED: dict = {}  # README generation moved to paper_figs/docs.py: nothing allowed


def imported_names(tree: ast.AST, package: str) -> list[tuple[int, str]]:
    """(line, dotted name) of every import in ``tree``; relative imports resolved in ``package``."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: max(len(package.split(".")) - node.level + 1, 0)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            out.append((node.lineno, name))
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            fn = node.func
            called = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if called in ("import_module", "run_module", "__import__"):
                out.append((node.lineno, node.args[0].value))
    return out


def violations(root: Path, stages=STAGES, allowed=None) -> list[str]:
    """``file:line imports NAME (stage S may not import stage T)`` for every upward import."""
    allowed = ALLOWED if allowed is None else allowed
    rank = {s: i for i, s in enumerate(stages)}
    found = []
    for stage in stages:
        for f in sorted((root / stage).rglob("*.py")):
            rel = f.relative_to(root).as_posix()
            package = ".".join(f.relative_to(root).with_suffix("").parts[:-1])
            for line, name in imported_names(ast.parse(f.read_text(), rel), package):
                target = name.split(".")[0]
                if target in rank and rank[target] > rank[stage] and (rel, target) not in allowed:
                    found.append(f"{rel}:{line} imports {name} ({stage} may not import {target})")
    return found
