"""Move every area-prefixed module into an area subpackage of its stage (issue 18 item 1).

    python tools/restructure.py [--dry-run] [--root DIR]

Rule. In each stage (theory/, constructions/, verify/, paper_figs/) a module belongs to the area
whose name it equals or starts with (``<area>.py`` or ``<area>_<concept>.py``, the longest area
wins). An area with two or more modules in a stage becomes a package ``<stage>/<area>/``:
``<area>_<concept>.py`` -> ``<area>/<concept>.py`` and the bare ``<area>.py`` -> a module named for
what it holds (table BARE below, else ``core.py``); the package ``__init__`` imports that module
first (so claims, bounds and figures register in the same order as before the move) and re-exports
the names other code imported from the bare module. An area with one module in a stage stays a
module, named ``<area>.py``. Tests ``tests/test_<area>[_<concept>].py`` move to
``tests/<area>/test_<concept>.py`` (the bare test to ``tests/<area>/test_<area>.py``).

Every file moves with ``git mv`` (history follows) when the root is a git work tree. Then every
tracked text file is rewritten: dotted module names (imports, monkeypatch targets, ``python -m``
lines, strings in code, Markdown, TOML, stored results' text) and file paths
(``verify/fact_mlp_capacity.py`` -> ``verify/fact_mlp/capacity.py``); ``from verify import
fact_mlp_capacity as X`` becomes ``from verify.fact_mlp import capacity as X``. In a moved file,
``Path(__file__).resolve().parent`` and ``os.path.dirname(os.path.abspath(__file__))`` get one
more level so that they still name the old folder. The mapping is computed from the files present,
so a second run finds nothing to move and changes nothing (idempotent).
"""

# restructure: keep names
from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
from pathlib import Path

STAGES = ("theory", "constructions", "verify", "paper_figs")
#: Area prefixes. ``lm`` (the language-model loaders shared by hopfield and icrecall) is its own
#: package; ``atlas`` is the cross-paper capacity atlas.
AREAS = ("geometric", "fact_mlp", "icrecall", "hopfield", "chapters", "retrieval", "lm", "atlas")

#: The bare ``<stage>/<area>.py`` of an area that becomes a package: the module named for what it
#: holds. Missing entries (areas or stages new to this script) get ``core``.
BARE = {
    "theory/chapters.py": "router",  # closed-form quantities of the chapter router
    "theory/fact_mlp.py": "bounds",  # bounds B1-B5
    "theory/geometric.py": "single_hop",  # single-hop bounds
    "theory/hopfield.py": "reference",  # reference bounds R1-R4 (Ramsauer et al.)
    "theory/retrieval.py": "bounds",  # the paper's capacity and GD bounds
    "constructions/chapters.py": "layer",  # the chapter-routed memory layer and model
    "constructions/fact_mlp.py": "facts",  # fact sets, embeddings, the common MLP interface
    "constructions/geometric.py": "single_hop",
    "constructions/hopfield.py": "networks",  # ungated and gated modern Hopfield networks
    "constructions/icrecall.py": "world",  # world, prompt generators and the two memories
    "constructions/retrieval.py": "task",  # the token-retrieval task
    "verify/chapters.py": "accounting",  # FLOP/parameter accounting and router claims
    "verify/fact_mlp.py": "decodability",  # information bound and decodability rho
    "verify/geometric.py": "single_hop",
    "verify/hopfield.py": "ungated",  # the ungated network and Ramsauer's bounds
    "verify/icrecall.py": "memories",  # claims on constructed memories
    "verify/retrieval.py": "early_gd",  # early-phase gradient descent
    "paper_figs/fact_mlp.py": "capacity",
    "paper_figs/geometric.py": "single_hop",
    "paper_figs/hopfield.py": "network",
}

#: A file holding this marker keeps its module names and paths as written (this script, its test
#: and the layout test: their old names are data, not references).
KEEP_MARKER = "restructure: " + "keep names"

TEXT_SUFFIXES = {
    ".py",
    ".md",
    ".toml",
    ".txt",
    ".cfg",
    ".ini",
    ".yaml",
    ".yml",
    ".json",
    ".jsonl",
    ".rst",
    ".sh",
    "",
}


def area_of(name: str) -> str | None:
    """The area of module ``name`` (without .py), or None: equal to an area or ``<area>_...``."""
    for area in sorted(AREAS, key=len, reverse=True):
        if name == area or name.startswith(area + "_"):
            return area
    return None


def plan(root: Path) -> list[tuple[str, str]]:
    """(old path, new path) relative to root, for every module and test that moves."""
    moves = []
    for stage in STAGES:
        folder = root / stage
        if not folder.is_dir():
            continue
        by_area: dict[str, list[str]] = {}
        for f in sorted(folder.glob("*.py")):
            area = area_of(f.stem)
            if area is not None:
                by_area.setdefault(area, []).append(f.stem)
        for area, names in by_area.items():
            if len(names) == 1 and not (folder / area).is_dir():
                if names[0] != area:  # a single prefixed module stays a module, named <area>.py
                    moves.append((f"{stage}/{names[0]}.py", f"{stage}/{area}.py"))
                continue
            if (folder / area).exists() and not (folder / area).is_dir():
                raise SystemExit(f"{stage}/{area} exists and is not a folder")
            for name in names:
                old = f"{stage}/{name}.py"
                leaf = BARE.get(old, "core") if name == area else name[len(area) + 1 :]
                moves.append((old, f"{stage}/{area}/{leaf}.py"))
    tests = root / "tests"
    if tests.is_dir():
        for f in sorted(tests.glob("test_*.py")):
            area = area_of(f.stem[len("test_") :])
            if area is None:
                continue
            rest = f.stem[len("test_") :]
            leaf = area if rest == area else rest[len(area) + 1 :]
            moves.append((f"tests/{f.name}", f"tests/{area}/test_{leaf}.py"))
    news = [n for _, n in moves]
    clash = {n for n in news if news.count(n) > 1} | {n for n in news if (root / n).exists()}
    if clash:
        raise SystemExit(f"restructure: targets clash or exist already: {sorted(clash)}")
    return moves


def dotted(path: str) -> str:
    return path[:-3].replace("/", ".")


def tracked_files(root: Path) -> list[Path]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=root, check=True, capture_output=True, text=True
        ).stdout
        files = [root / p for p in out.split("\0") if p]
        others = subprocess.run(
            ["git", "ls-files", "-z", "--others", "--exclude-standard"],
            cwd=root,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        files += [root / p for p in others.split("\0") if p]
        return [f for f in files if f.is_file()]
    except (subprocess.CalledProcessError, FileNotFoundError):
        skip = {".git", "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache"}
        return [p for p in root.rglob("*") if p.is_file() and not skip & set(p.parts)]


def is_git(root: Path) -> bool:
    return (
        subprocess.run(
            ["git", "rev-parse", "--is-inside-work-tree"], cwd=root, capture_output=True
        ).returncode
        == 0
    )


def imported_names(files: list[Path], bare: dict[str, str]) -> dict[str, set[str]]:
    """Names that code imports from each bare module that becomes a package (for the re-export)."""
    names: dict[str, set[str]] = {m: set() for m in bare}
    for f in files:
        if f.suffix != ".py":
            continue
        try:
            tree = ast.parse(f.read_text())
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in names and node.level == 0:
                names[node.module] |= {a.name for a in node.names if a.name != "*"}
    return names


def rewrite_from_imports(text: str, modmap: dict[str, str]) -> str:
    """``from STAGE import moved [as X], other`` -> one line per moved module, the rest kept."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    lines = text.splitlines(keepends=True)
    edits = []
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and any(f"{node.module}.{a.name}" in modmap for a in node.names)
        ):
            continue
        first, last = lines[node.lineno - 1], lines[node.end_lineno - 1]
        tail = last.encode()[node.end_col_offset :].decode().strip()  # offsets count bytes
        if first.encode()[: node.col_offset].strip() or (tail and not tail.startswith("#")):
            continue  # shares its line with other code: left to the dotted-name rewrite
        indent = first.encode()[: node.col_offset].decode()
        comment = f"  {tail}" if tail and node.lineno == node.end_lineno else ""
        kept, new = [], []
        for a in node.names:
            target = modmap.get(f"{node.module}.{a.name}")
            if target is None:
                kept.append(a.name + (f" as {a.asname}" if a.asname else ""))
                continue
            parent, leaf = target.rsplit(".", 1)
            bind = a.asname or a.name
            new.append(
                f"{indent}from {parent} import {leaf}"
                + ("" if bind == leaf else f" as {bind}")
                + comment
                + "\n"
            )
        if kept:
            new.insert(0, f"{indent}from {node.module} import {', '.join(kept)}{comment}\n")
        edits.append((node.lineno - 1, node.end_lineno, new))
    for start, end, new in sorted(edits, reverse=True):
        lines[start:end] = new
    return "".join(lines)


def substitute(text: str, modmap: dict[str, str], pathmap: dict[str, str]) -> str:
    if pathmap:
        pat = re.compile(
            r"(?<![\w.])("
            + "|".join(re.escape(p) for p in sorted(pathmap, key=len, reverse=True))
            + r")(?![\w/])"
        )
        text = pat.sub(lambda m: pathmap[m.group(1)], text)
    if modmap:
        pat = re.compile(
            r"(?<![\w.])("
            + "|".join(re.escape(m) for m in sorted(modmap, key=len, reverse=True))
            + r")(?!\w)"
        )
        text = pat.sub(lambda m: modmap[m.group(1)], text)
    return text


def deepen_file_refs(text: str) -> str:
    """A file moved one folder down: ``__file__``-relative paths keep naming the old folder."""
    text = re.sub(
        r"Path\(__file__\)\.resolve\(\)\.parent(?!\w)", "Path(__file__).resolve().parent.parent", text
    )
    text = re.sub(r"Path\(__file__\)\.parent(?!\w)", "Path(__file__).parent.parent", text)
    return text.replace(
        "os.path.dirname(os.path.abspath(__file__))",
        "os.path.dirname(os.path.dirname(os.path.abspath(__file__)))",
    )


def init_text(package: str, first: str | None, reexport: set[str]) -> str:
    area = package.rsplit(".", 1)[1]
    body = f'"""The {area} area of {package.split(".")[0]}/, one module per concept."""\n'
    if first is not None:
        leaf = first.rsplit(".", 1)[1]
        if reexport:
            body += (
                "# imported first, as the bare module was before the move (registration order),"
                "\n# and re-exported for code that imported it as one module\n"
            )
            body += f"from {first} import (  # noqa: F401\n"
            body += "".join(f"    {n},\n" for n in sorted(reexport)) + ")\n"
        else:
            body += (
                "# imported first, as the bare module was before the move (registration order)\n"
                f"from {package} import {leaf}  # noqa: F401\n"
            )
    return body


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=str(Path(__file__).resolve().parent.parent))
    ap.add_argument("--dry-run", action="store_true", help="print the moves, change nothing")
    args = ap.parse_args(argv)
    root = Path(args.root).resolve()
    moves = plan(root)
    if not moves:
        print("restructure: nothing to move")
        return 0
    for old, new in moves:
        print(f"{old} -> {new}")
    if args.dry_run:
        return 0
    pathmap = dict(moves)
    modmap = {dotted(o): dotted(n) for o, n in moves}
    bare = {
        dotted(o): dotted(n)
        for o, n in moves
        if Path(o).stem == Path(n).parent.name and Path(o).parent.name in STAGES
    }
    files = tracked_files(root)
    reexport = imported_names(files, bare)

    git = is_git(root)
    new_dirs = sorted({str(Path(n).parent) for _, n in moves} - {str(Path(o).parent) for o, _ in moves})
    for d in new_dirs:
        (root / d).mkdir(parents=True, exist_ok=True)
    for old, new in moves:
        if git:
            subprocess.run(["git", "mv", old, new], cwd=root, check=True)
        else:
            os.rename(root / old, root / new)
        f = root / new
        if Path(new).parent != Path(old).parent:
            f.write_text(deepen_file_refs(f.read_text()))
    created = []
    for d in new_dirs:
        init = root / d / "__init__.py"
        if init.exists():
            continue
        package = d.replace("/", ".")
        first = next((n for o, n in bare.items() if n.rsplit(".", 1)[0] == package), None)
        old_bare = next((o for o, n in bare.items() if n == first), None)
        init.write_text(
            init_text(package, first, reexport.get(old_bare, set())) if not d.startswith("tests/") else ""
        )
        created.append(str(init.relative_to(root)))
    if git and created:
        subprocess.run(["git", "add", *created], cwd=root, check=True)

    changed = 0
    for f in tracked_files(root):
        if (
            f.suffix not in TEXT_SUFFIXES
            or f.name.endswith("__init__.py")
            and str(f.relative_to(root)) in created
        ):
            continue
        try:
            text = f.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        if KEEP_MARKER in text:
            continue
        # dotted names first: the from-import rewrite then writes new names the regex must not see
        new = substitute(text, modmap, pathmap)
        new = rewrite_from_imports(new, modmap) if f.suffix == ".py" else new
        if new != text:
            f.write_text(new)
            changed += 1
    leftovers = [
        f"{n}:{i}"
        for _, n in moves
        for i, line in enumerate((root / n).read_text().splitlines(), 1)
        if "__file__" in line and "parent.parent" not in line and "dirname(os.path.dirname" not in line
    ]
    print(
        f"restructure: moved {len(moves)} files, created {len(created)} __init__.py, rewrote {changed} files"
    )
    if leftovers:
        print("restructure: check these __file__ uses by hand: " + ", ".join(leftovers), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
