"""The linter and formatter (README.md#layout): ``ruff check`` and ``ruff format --check`` pass.

Configuration in pyproject.toml ([tool.ruff]). Until the tree has been formatted once (the lead
runs ``ruff check --fix . && ruff format .`` after merging the branches of this session), the
test is an expected failure that lists what remains; once ``ruff format --check`` passes it is
enforced.
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
    if fmt.returncode != 0:
        pytest.xfail(
            "tree not formatted yet; after the merge: ruff check --fix . && ruff format . "
            f"(lint now: {check.stdout.strip().splitlines()[-1:]})"
        )
    assert check.returncode == 0, check.stdout[-3000:]
