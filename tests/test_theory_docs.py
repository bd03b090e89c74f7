"""Every registered bound shows a worked value: the docstring of the function that computes it
(``Bound.numeric``) ends in an "Examples" section with at least one doctest whose expected output
is a value, and those doctests run here (pytest collects tests/ only, not the doctests of theory/).
"""

from __future__ import annotations

import doctest
import inspect
import re

import pytest

from theory.registry import load_all

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
HEADING = re.compile(r"^Examples\n-{8,}\n", re.MULTILINE)
BOUNDS = load_all()


def examples_section(doc: str) -> str | None:
    """The text after the "Examples" heading (underlined with dashes), None without one."""
    m = HEADING.search(doc)
    return None if m is None else doc[m.end() :]


@pytest.mark.parametrize("name", list(BOUNDS))
def test_bound_function_has_a_worked_example_that_runs(name):
    fn = BOUNDS[name].numeric
    where = f"{name} ({fn.__module__}.{fn.__qualname__})"
    section = examples_section(inspect.getdoc(fn) or "")
    assert section is not None, f"{where}: no 'Examples' section in the docstring"
    assert ">>>" in section, f"{where}: the 'Examples' section holds no doctest"
    tests = [t for t in doctest.DocTestFinder(recurse=False).find(fn) if t.examples]
    assert any(ex.want.strip() for t in tests for ex in t.examples), f"{where}: no example shows a value"
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    out: list[str] = []
    for test in tests:
        runner.run(test, out=out.append)
    assert not out, "\n".join(out)


def test_the_section_is_found_only_under_its_heading():
    assert examples_section("Text.\n\nExamples\n--------\n>>> 1\n1\n") == ">>> 1\n1\n"
    assert examples_section("Text.\n\n>>> 1\n1\n") is None
    assert examples_section("See the Examples\n--------\n") is None
