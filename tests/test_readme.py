"""README.md and docs/*.md hold the generated sections of the registries (claim table, figure map,
ledger, area map, each paper's bounds and claims), and the README links only inside the repository."""

import re
from pathlib import Path

from paper_figs import docs, docs_pages

ROOT = Path(__file__).resolve().parent.parent
TEST_COMMAND = 'python -m pytest -q -m "not slow" -n auto --dist loadgroup'


def test_readme_and_docs_are_current():
    stale = docs_pages.stale()
    assert not stale, f"stale generated sections in {stale}: run `python -m paper_figs docs --write`"


def test_a_changed_registry_makes_the_docs_stale(monkeypatch):
    ix = docs.Index()
    claim = next(iter(ix.claims.values()))
    monkeypatch.setitem(ix.claims, claim.id, type(claim)(**{**claim.__dict__, "statement": "changed"}))
    assert "docs/claims.md" in docs_pages.stale(ix)


def test_one_page_per_paper_with_prose_outside_the_markers():
    from theory.registry import AREAS

    for area in AREAS:
        text = (ROOT / "docs" / f"{area}.md").read_text()
        prose = text[: text.index(docs.BEGIN)]
        assert len(prose.split()) > 150, f"docs/{area}.md has too little hand-written prose"
        assert "[derived]" in text or "[paper]" in text or "[reference]" in text


def _links(text):
    return re.findall(r"\]\(([^)\s]+)\)", text)


def test_readme_links_only_inside_the_repository():
    readme = (ROOT / "README.md").read_text()
    assert "../" not in readme and "shared/spec" not in readme
    for target in _links(readme):
        assert not re.match(r"[a-z]+://", target), f"README links outside the repository: {target}"
        path = target.split("#", 1)[0]
        if path:
            assert (ROOT / path).exists(), f"README links to {path}, which does not exist"


def test_docs_links_resolve_inside_the_repository():
    for page in sorted((ROOT / "docs").glob("*.md")):
        text = page.read_text()
        assert "shared/spec" not in text, page.name
        for target in _links(text):
            if re.match(r"[a-z]+://", target):
                continue  # the papers themselves (arXiv) may be cited by address
            path = target.split("#", 1)[0]
            if path:
                resolved = (page.parent / path).resolve()
                assert resolved.exists() and ROOT in resolved.parents, f"{page.name} -> {target}"


def test_readme_commands():
    readme = (ROOT / "README.md").read_text()
    assert TEST_COMMAND in readme
    assert "python -m paper_figs docs" in readme
    ci = (ROOT / ".ci" / "run").read_text()
    assert TEST_COMMAND in ci  # CI runs the README's test command as written
