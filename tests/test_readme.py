"""README.md's generated sections (claim table, figure map, ledger) match the registries."""
from pathlib import Path

from verify import docs


def test_readme_tables_are_current():
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert docs.sections() in readme, "README is stale: run `python -m verify docs --write`"


def test_readme_commands():
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert 'python -m pytest -q -m "not slow"' in readme
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
    assert 'python -m pytest -q -m "not slow"' in ci
