"""The repository describes itself: no source or documentation file points readers outside it.

Code comments, docstrings, claim statements, ledger texts and docs cite the project's own pages
(``docs/<area>.md``, ``docs/<area>.md#<section>``, README.md sections) or state the fact without a
pointer. They never cite a design document, a specification or an issue tracker that a reader of
the repository does not have. Every tracked .py, .md and .toml file outside results/ is checked
(results/ is data), except the files of ALLOWLIST.

The generated sections of README.md and docs/*.md (between the markers of paper_figs/docs.py) are
left out of the text check: they are generated from the registries, whose source files are
checked here, and ``tests/test_readme.py`` checks that they are current. The path and anchor
checks read them too.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from paper_figs.docs import BEGIN, END

ROOT = Path(__file__).resolve().parent.parent
SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()

#: What must not appear: a pointer to a design document, a specification section or an issue.
PATTERNS = {
    "design document": r"DESIG[N]\.md",
    "specification, then a section sign": r"\b[Ss]pec\b[\s\S]{0,20}\u00a7",
    "specification file": r"\b[Ss]pec[a-z_]*\.md|\b[Ss]pec[/ ]\s*[a-z_]+\.md",
    "the specification (short form)": r"\b[Tt]he spec('s)?\b",
    "specification and section sign": r"\b[Ss]pec \u00a7",
    "specification (possessive, short form)": r"\b[Ss]pec's\b",
    "specification and a section, setting or number": r"\b[Ss]pec (?:section|setting|\d)",
    "section sign with a number": r"\u00a7\s?\d",
    "issue number": r"\b[Ii]ssues? \d+",
}

#: Files that still hold such pointers because other engineers are editing them; each is cleaned
#: and removed from this list when that work lands (the test fails for an entry that is clean).
ALLOWLIST: dict[str, str] = {}

#: Paths the docs name that exist only once a command has written them.
OUTPUTS = {"figures/": "written by `python -m paper_figs` (its default --out); git-ignored"}
OUTPUT_FOLDERS = {"runs/": "a user's own results, written by `python -m verify run`; git-ignored"}

PATH_EXT = (".py", ".md", ".json", ".jsonl", ".toml", ".txt")


def _tracked() -> list[str]:
    try:
        out = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):  # not a git checkout: every file on disk
        out = [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*") if p.is_file()]
    return sorted(
        f
        for f in out
        if f.endswith((".py", ".md", ".toml"))
        and not f.startswith(("results/", ".git/"))
        and f != SELF
        and (ROOT / f).is_file()
    )


def _without_generated(text: str) -> str:
    while BEGIN in text and END in text[text.index(BEGIN) :]:
        start = text.index(BEGIN)
        text = text[:start] + text[text.index(END, start) + len(END) :]
    return text


def _hits(text: str) -> list[str]:
    found = []
    for name, pattern in PATTERNS.items():
        for m in re.finditer(pattern, text):
            line = text.count("\n", 0, m.start()) + 1
            found.append(f"line {line}: {name}: {m.group(0)!r}")
    return found


def _checked_text(rel: str) -> str:
    text = (ROOT / rel).read_text(encoding="utf-8")
    return _without_generated(text) if rel.endswith(".md") else text


def test_no_pointer_outside_the_repository():
    bad = {}
    for rel in _tracked():
        if rel in ALLOWLIST:
            continue
        hits = _hits(_checked_text(rel))
        if hits:
            bad[rel] = hits[:5]
    assert not bad, "cite docs/<area>.md or README.md, or state the fact without a pointer:\n" + "\n".join(
        f"{rel}: {hit}" for rel, hits in bad.items() for hit in hits
    )


def test_allowlist_is_not_stale():
    tracked = set(_tracked())
    for rel, reason in ALLOWLIST.items():
        assert reason, rel
        if rel not in tracked:
            pytest.fail(f"{rel} is in ALLOWLIST but is not a tracked file: remove the entry")
        if not _hits(_checked_text(rel)):
            pytest.fail(f"{rel} is clean now: remove it from ALLOWLIST")


def test_the_patterns_catch_what_they_are_for():
    # the examples are assembled from parts, so this file does not itself name what it forbids
    sec, doc, iss, sp = "\u00a7", "DESIGN" + ".md", "Iss" + "ue", "sp" + "ec"
    for text in (
        f"see {doc}",
        f"{sp} {sec}5.6 [derived]",
        f"{sp} hopfield.md {sec}7.1",
        f"({sp}\nhopfield.md {sec}7)",
        f"{sp}/retrieval.md",
        f"the {sp}'s recipe",
        f"{sp} section 5.3",
        f"{sp} 5.6: 2 layers",
        f"the trained model of {sec}5.5",
        f"{iss} 15, item 2: D3",
        f"({iss.lower()} 17.3)",
    ):
        assert _hits(text), text
    for text in (
        "[derived], docs/chapters.md",
        "importlib.util.find_spec(package)",
        "fact_mlp.transformer.recall_spec_scale",
        "a model spec (an alias, a .gguf file or a folder)",
        "verify/fact_mlp/transformer_spec.py",
    ):
        assert not _hits(text), text


def _pages() -> list[Path]:
    return [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def _strip_fences(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    slugs, seen = set(), {}
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*$", _strip_fences(page.read_text()), flags=re.M):
        slug = _slug(heading)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        slugs.add(slug if n == 0 else f"{slug}-{n}")
    return slugs


def test_docs_name_only_paths_that_exist():
    missing = []
    for page in _pages():
        text = page.read_text()
        for kind, target in [("code", m) for m in re.findall(r"`([^`\s]+)`", text)] + [
            ("link", m) for m in re.findall(r"\]\(([^)\s]+)\)", text)
        ]:
            path = target.split("#", 1)[0]
            if not path or re.match(r"[a-z]+://", path) or "<" in path or path in OUTPUTS:
                continue
            if any(path.startswith(folder) for folder in OUTPUT_FOLDERS):
                continue
            if not (path.endswith(PATH_EXT) or path.endswith("/")):
                continue
            if kind == "code" and "/" not in path.rstrip("/") and not path.endswith(PATH_EXT):
                continue  # a bare word with a trailing slash is not a repository path
            bases = (page.parent,) if kind == "link" else (ROOT, page.parent)
            if not any((base / path).exists() for base in bases):
                missing.append(f"{page.relative_to(ROOT)}: `{target}`")
    assert not missing, "paths named in the docs that do not exist:\n" + "\n".join(missing)


def test_every_cited_section_exists():
    """Every ``README.md#anchor`` and ``docs/<page>.md#anchor`` cited in the tracked files (and every
    ``<page>.md#anchor`` link between the docs pages) names a heading of that page."""
    anchors = {page.relative_to(ROOT).as_posix(): _anchors(page) for page in _pages()}
    bad = []
    for rel in _tracked():
        text = (ROOT / rel).read_text(encoding="utf-8")
        for page, anchor in re.findall(r"((?:\.\./)?(?:docs/)?\b[A-Za-z_]+\.md)#([\w\-]+)", text):
            if page.startswith("../"):
                page = page[3:]  # from a docs page to the repository root
            elif rel.startswith("docs/") and not page.startswith("docs/"):
                page = f"docs/{page}"  # a link between docs pages
            if page not in anchors:
                bad.append(f"{rel}: {page}#{anchor} (no such page)")
            elif anchor not in anchors[page]:
                bad.append(f"{rel}: {page}#{anchor} (no such section)")
    assert not bad, "cited sections that do not exist:\n" + "\n".join(bad)
