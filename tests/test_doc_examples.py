"""Every Python example of README.md and docs/*.md runs as written.

An example is a fenced ```python block holding doctest lines (``>>>``, ``...`` and the expected
output). The blocks of one file run in order in one namespace, as a reader would type them, from a
temporary folder outside the checkout with ``RECALL_RESULTS`` unset (so an example that depends on
the working directory fails: stored results are found by the results-root rule, not by a relative
path), with the doctest flags ELLIPSIS and NORMALIZE_WHITESPACE; a mismatch fails with the file
and the line of the example.
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
#: the areas whose page must hold a "Use it from Python" section of examples
AREAS = ("geometric", "fact_mlp", "icrecall", "hopfield", "chapters", "retrieval")


def example_blocks(text: str) -> list[tuple[int, str]]:
    """(line number of the block's first line, block text) of every ```python block with ``>>>``."""
    blocks = []
    for m in FENCE.finditer(text):
        body = m.group(1)
        if ">>>" in body:
            blocks.append((text.count("\n", 0, m.start(1)) + 1, body))
    return blocks


def run_examples(path: Path, root: Path = ROOT) -> tuple[int, list[str]]:
    """Run the examples of one file; (number of examples run, one report per failure, naming the
    file relative to ``root`` and the line)."""
    rel = path.relative_to(root).as_posix()
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    globs: dict = {"__name__": f"doc_examples_{path.stem}"}
    reports: list[str] = []
    attempted = 0
    for line, body in example_blocks(path.read_text()):
        test = parser.get_doctest(body, globs, f"{rel}:{line}", rel, line - 1)
        out: list[str] = []
        result = runner.run(test, out=out.append, clear_globs=False)
        globs.update(test.globs)  # the next block sees this block's names
        attempted += result.attempted
        reports += out
    return attempted, reports


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("path", doc_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_examples_run(path, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # a reader's working directory, not the checkout
    monkeypatch.delenv("RECALL_RESULTS", raising=False)
    attempted, failures = run_examples(path)
    assert not failures, "\n".join(failures)
    if path == ROOT / "README.md" or path.stem in AREAS:
        assert attempted > 0, f"{path.name} has no Python example"


def test_each_area_page_has_a_python_section_before_the_generated_part():
    from paper_figs.docs import BEGIN

    for area in AREAS:
        text = (ROOT / "docs" / f"{area}.md").read_text()
        prose = text[: text.index(BEGIN)]
        assert "\n## Use it from Python\n" in prose, f"docs/{area}.md: no 'Use it from Python' section"
        assert example_blocks(prose), f"docs/{area}.md: no example before the generated marker"


def test_readme_section_sits_before_kinds_of_claim():
    text = (ROOT / "README.md").read_text()
    start = text.index("\n## Use it from Python\n")
    assert text.index("\n## Set up and run\n") < start < text.index("\n## Kinds of claim")
    assert "docs/examples/test_my_construction.py" in text[start : text.index("\n## Kinds of claim")]


def test_a_wrong_output_fails_with_file_and_line(tmp_path):
    """The runner reports a mismatch with the file and the example's line; names carry over."""
    page = tmp_path / "docs" / "probe.md"
    page.parent.mkdir()
    page.write_text("text\n\n```python\n>>> x = 1\n```\n\n```python\n>>> x + 1\n3\n```\n")
    attempted, failures = run_examples(page, root=tmp_path)
    assert attempted == 2 and len(failures) == 1
    assert 'File "docs/probe.md", line 8' in failures[0]
    assert "Expected:\n    3\nGot:\n    2" in failures[0]


def test_examples_run_outside_the_checkout(tmp_path, monkeypatch):
    """An example that reads stored results by a path relative to the checkout fails from the
    temporary folder the examples run in; the results-root rule finds them from anywhere."""
    page = tmp_path / "docs" / "probe.md"
    page.parent.mkdir()
    page.write_text(
        "```python\n>>> from pathlib import Path\n>>> Path('results/claims.jsonl').exists()\nTrue\n```\n\n"
        "```python\n>>> from verify.results import reference_root\n"
        ">>> (reference_root() / 'claims.jsonl').exists()\nTrue\n```\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RECALL_RESULTS", raising=False)
    attempted, failures = run_examples(page, root=tmp_path)
    assert attempted == 4 and len(failures) == 1
    assert 'File "docs/probe.md", line 3' in failures[0]


def test_the_python_guide_and_the_performance_page_are_collected():
    """docs/python.md holds the moved examples and runs them; docs/performance.md and
    docs/results.md are collected too (they hold no example)."""
    files = doc_files()
    for name in ("python.md", "performance.md", "results.md", "verdicts.md"):
        assert ROOT / "docs" / name in files, name
    assert len(example_blocks((ROOT / "docs" / "python.md").read_text())) >= 5
