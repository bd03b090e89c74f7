"""theory/ never imports torch: proven in a fresh interpreter."""

import json
import subprocess
import sys


def test_theory_imports_without_torch():
    code = (
        "import sys, theory, theory.registry; theory.registry.load_all(); "
        "import theory.__main__; "
        "print(__import__('json').dumps(sorted(m for m in sys.modules if m.split('.')[0] == 'torch')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_theory_cli_without_torch_available(tmp_path):
    """Even with torch made unimportable, `python -m theory list` works."""
    blocker = tmp_path / "torch.py"
    blocker.write_text("raise ImportError('torch blocked by test')\n")
    env_code = (
        f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import runpy; "
        "sys.argv=['theory','list','--json']; runpy.run_module('theory', run_name='__main__')"
    )
    out = subprocess.run([sys.executable, "-c", env_code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    names = [row["name"] for row in json.loads(out.stdout)]
    assert "geometric.info_bits" in names
