"""The user's test file of docs/examples/ passes as a user would run it: copied into a folder
outside the repository and run there with ``python -m pytest -q`` (the installed package, no
conftest or settings of this repository)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "test_my_construction.py"


def test_user_example_passes_outside_the_repository(tmp_path):
    assert ROOT not in tmp_path.resolve().parents
    shutil.copy(EXAMPLE, tmp_path / EXAMPLE.name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "HYPOTHESIS_"))}
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "5 passed" in out.stdout, out.stdout[-2000:]


def test_the_docs_link_the_example():
    assert "docs/examples/test_my_construction.py" in (ROOT / "README.md").read_text()
