"""The console script ``recall-bounds`` and the check against a shadowing ``verify``."""

import json
import os
import subprocess
import sys

import tomllib

from paper_figs.console import main
from tests.layout import ROOT


def test_console_script_is_declared():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["recall-bounds"] == "paper_figs.console:main"


def test_console_dispatches_theory_and_verify(capsys):
    assert main(["theory", "list", "--json"]) == 0
    bounds = json.loads(capsys.readouterr().out)
    assert any(b["name"].startswith("geometric.") for b in bounds)
    assert main(["verify", "list"]) == 0
    assert "geometric.single_hop.selector_exact" in capsys.readouterr().out


def test_console_usage_and_unknown_command(capsys):
    assert main([]) == 0
    assert "recall-bounds figs" in capsys.readouterr().out
    assert main(["nope"]) == 2


def _run(code_or_args, tmp_path, pythonpath):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(pythonpath)}
    return subprocess.run(
        [sys.executable, *code_or_args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def test_python_m_verify_fails_loudly_beside_a_verify_distribution(tmp_path):
    """A distribution named 'verify' installed beside the toolkit: `python -m verify` refuses."""
    site = tmp_path / "site"
    (site / "verify-9.9.dist-info").mkdir(parents=True)
    (site / "verify-9.9.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: verify\nVersion: 9.9\n"
    )
    res = _run(["-m", "verify", "list"], tmp_path, [str(ROOT), str(site)])
    assert res.returncode == 1, res.stdout[-500:]
    assert "another distribution ships a top-level 'verify' package: verify 9.9" in res.stderr
    clean = _run(["-m", "verify", "list"], tmp_path, [str(ROOT)])
    assert clean.returncode == 0 and "geometric." in clean.stdout


def test_console_fails_loudly_when_another_verify_comes_first(tmp_path):
    """Another 'verify' package first on sys.path: the console script names it and stops."""
    fake = tmp_path / "site" / "verify"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise RuntimeError('the other verify was imported')\n")
    code = "import sys; from paper_figs.console import main; sys.exit(main(['verify', 'list']))"
    res = _run(["-c", code], tmp_path, [str(tmp_path / "site"), str(ROOT)])
    assert res.returncode == 1 and "not this toolkit's" in res.stderr, res.stderr[-800:]
    assert "the other verify was imported" not in res.stderr
