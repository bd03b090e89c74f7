"""The linter and formatter (README.md#layout): ``ruff check`` and ``ruff format --check`` pass on
the whole tree (configuration in pyproject.toml, [tool.ruff]). Both are enforced: an unformatted
file fails the test with the files to format.
"""

import shutil
import subprocess

import pytest

from tests.layout import ROOT

RUFF = shutil.which("ruff")


def _ruff(*args):
    return subprocess.run([RUFF, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(RUFF is None, reason="ruff not installed (pip install -e '.[dev]')")
def test_ruff_check_and_format():
    check = _ruff("check", "--output-format", "concise", ".")
    fmt = _ruff("format", "--check", ".")
    assert check.returncode == 0, check.stdout[-3000:]
    assert fmt.returncode == 0, "run `ruff format .`:\n" + (fmt.stdout + fmt.stderr)[-3000:]
