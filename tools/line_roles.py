"""Lines of verify/ (without verify/bench/) by role: an AST count, so a refactor can be measured.

    python tools/line_roles.py [ROOT]     # ROOT: a checkout (default: this one)

Every physical line of every module is given one role, the first that applies:

- ``docstring``: inside a module, class or function docstring;
- ``declaration``: inside a ``@claim(...)`` decorator, a ``Control(...)`` call or a module-level
  parameter dict (``NAME = dict(...)`` / ``{...}``);
- ``cache key``: inside a ``ctx.shared(...)`` call's key argument;
- ``history``: inside a statement that stores a replaced rule (a ``details[...]`` assignment or a
  dict entry whose key starts with ``previous``), or a ``stored_previous(...)`` call;
- ``outcome``: inside an ``Outcome.judged(...)`` / ``Outcome(...)`` call;
- ``criterion``: inside a call of a criterion object (``Threshold``, ``IntervalTest``, ``Bracket``,
  ``EverySeed``, ``KOfN``, ``Agreement``, ``all_of``, ``GrowthLaw``);
- ``details``: inside an assignment to ``details`` or ``details[...]`` or a ``details=...`` keyword;
- ``code``: any other non-blank, non-comment line.

Modules are grouped as ``framework`` (verify/*.py and verify/oc/), ``claim module`` (declares a
claim) and ``setup/shared`` (the rest of the area folders). Blank and comment lines are counted
apart.
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

CRITERIA = {"Threshold", "IntervalTest", "Bracket", "EverySeed", "KOfN", "Agreement", "all_of", "GrowthLaw"}
ROLES = ("docstring", "declaration", "cache key", "history", "outcome", "criterion", "details", "code")


def _name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_name(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return _name(node.func)
    return ""


def _span(node: ast.AST) -> range:
    return range(node.lineno, (node.end_lineno or node.lineno) + 1)


def roles_of(source: str) -> dict[int, str]:
    """Line number -> role, for the lines that hold code (blank and comment lines are absent).

    >>> r = roles_of('def f(x):\\n    details = {"a": x}\\n    return x\\n')
    >>> r[2], r[3]
    ('details', 'code')
    """
    tree = ast.parse(source)
    marks: dict[int, str] = {}

    def mark(lines: range, role: str) -> None:
        for i in lines:
            if marks.get(i) is None or ROLES.index(role) < ROLES.index(marks[i]):
                marks[i] = role

    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(getattr(first, "value", None), ast.Constant):
                if isinstance(first.value.value, str):
                    mark(_span(first), "docstring")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for deco in node.decorator_list:
                if _name(deco) == "claim":
                    mark(_span(deco), "declaration")
        if isinstance(node, ast.Call):
            name = _name(node.func)
            if name == "Control":
                mark(_span(node), "declaration")
            elif name.endswith("ctx.shared") and node.args:
                mark(_span(node.args[0]), "cache key")
            elif name.endswith("stored_previous"):
                mark(_span(node), "history")
            elif name in ("Outcome.judged", "Outcome"):
                mark(_span(node), "outcome")
            elif name.split(".")[-1] in CRITERIA:
                mark(_span(node), "criterion")
            for kw in node.keywords:
                if kw.arg == "details":
                    mark(_span(kw.value), "details")
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and str(key.value).startswith("previous"):
                    mark(range(key.lineno, (value.end_lineno or value.lineno) + 1), "history")
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                base = t.value if isinstance(t, ast.Subscript) else t
                if isinstance(base, ast.Name) and base.id == "details":
                    key = t.slice if isinstance(t, ast.Subscript) else None
                    if isinstance(key, ast.Constant) and str(key.value).startswith("previous"):
                        mark(_span(node), "history")
                    else:
                        mark(_span(node), "details")
            if node in tree.body and isinstance(node.value, (ast.Dict, ast.Call)):
                if isinstance(node.value, ast.Dict) or _name(node.value) == "dict":
                    mark(_span(node), "declaration")
    lines = source.splitlines()
    out = {}
    for i, text in enumerate(lines, 1):
        stripped = text.strip()
        if marks.get(i) == "docstring":
            out[i] = "docstring"
        elif stripped and not stripped.startswith("#"):
            out[i] = marks.get(i, "code")
    return out


def group_of(path: Path, root: Path, source: str) -> str:
    rel = path.relative_to(root / "verify")
    if len(rel.parts) == 1 or rel.parts[0] == "oc":
        return "framework"
    return "claim module" if "@claim(" in source else "setup/shared"


def count(root: Path) -> dict:
    """{"total": lines, "files": n, "by group": {...}, "by role": {...}, "blank/comment": n}.

    >>> c = count(Path(__file__).resolve().parent.parent)
    >>> c["total"] == sum(c["by group"].values()) and c["files"] > 10
    True
    """
    groups: Counter = Counter()
    roles: Counter = Counter()
    total = files = 0
    for path in sorted((root / "verify").rglob("*.py")):
        if "bench" in path.relative_to(root / "verify").parts[:1]:
            continue
        source = path.read_text()
        n = len(source.splitlines())
        files += 1
        total += n
        groups[group_of(path, root, source)] += n
        found = roles_of(source)
        for role in found.values():
            roles[role] += 1
        roles["blank/comment"] += n - len(found)
    return {"total": total, "files": files, "by group": dict(groups), "by role": dict(roles)}


if __name__ == "__main__":
    root = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    c = count(root)
    print(f"verify/ without verify/bench/: {c['total']} lines in {c['files']} files")
    for name, n in sorted(c["by group"].items(), key=lambda kv: -kv[1]):
        print(f"  {name:14s} {n:6d}")
    print("by role:")
    for name in (*ROLES, "blank/comment"):
        print(f"  {name:14s} {c['by role'].get(name, 0):6d}")
