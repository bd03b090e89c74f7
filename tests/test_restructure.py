"""tools/restructure.py on a tiny fake tree (not a git work tree): moves, rewrites, idempotence."""
# restructure: keep names (old module names here are test data)

import importlib.util
import subprocess
import sys

from tests.layout import ROOT


def _tool():
    spec = importlib.util.spec_from_file_location("restructure", ROOT / "tools" / "restructure.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


FILES = {
    "pyproject.toml": "[tool.x]\npaths = ['verify/fact_mlp_capacity.py']\n",
    "theory/__init__.py": "",
    "theory/fact_mlp.py": "B = 1\n",
    "theory/fact_mlp_decodability.py": "from theory.fact_mlp import B\nRHO = B + 1\n",
    "theory/icrecall_bits.py": "BITS = 3\n",
    "verify/__init__.py": "",
    "verify/fact_mlp.py": "from theory import fact_mlp as T, fact_mlp_decodability\nSRC = T.B\n",
    "verify/fact_mlp_capacity.py": (
        "import os\nfrom verify.fact_mlp import SRC  # the source\n"
        "HERE = os.path.dirname(os.path.abspath(__file__))\n"
        "def f():\n    from theory import icrecall_bits\n    return icrecall_bits.BITS + SRC\n"
    ),
    "tests/__init__.py": "",
    "tests/test_fact_mlp_capacity.py": (
        "def test_f(monkeypatch):\n"
        "    monkeypatch.setattr('verify.fact_mlp_capacity.SRC', 5)\n"
        "    from verify.fact_mlp_capacity import f\n    assert f() == 8\n"
    ),
    "README.md": "See `verify/fact_mlp.py` and `python -m verify.fact_mlp_capacity`; claim fact_mlp.x.y.\n",
}


def test_restructure_moves_rewrites_and_is_idempotent(tmp_path):
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    tool = _tool()
    assert tool.main(["--root", str(tmp_path)]) == 0
    t = {p.relative_to(tmp_path).as_posix(): p.read_text() for p in tmp_path.rglob("*") if p.is_file()}
    assert "theory/fact_mlp/bounds.py" in t and "theory/fact_mlp/decodability.py" in t
    assert "theory/icrecall.py" in t and "theory/icrecall_bits.py" not in t  # single: stays a module
    assert "verify/fact_mlp/decodability.py" in t and "verify/fact_mlp/capacity.py" in t
    assert "tests/fact_mlp/test_capacity.py" in t and "tests/fact_mlp/__init__.py" in t
    assert "from theory.fact_mlp.bounds import B" in t["theory/fact_mlp/decodability.py"]
    assert t["verify/fact_mlp/decodability.py"].startswith(
        "from theory.fact_mlp import bounds as T\nfrom theory.fact_mlp import decodability as "
        "fact_mlp_decodability\n"
    )
    cap = t["verify/fact_mlp/capacity.py"]
    assert "from verify.fact_mlp.decodability import SRC  # the source" in cap
    assert "    from theory import icrecall as icrecall_bits\n" in cap
    assert "os.path.dirname(os.path.dirname(os.path.abspath(__file__)))" in cap
    assert "'verify.fact_mlp.capacity.SRC'" in t["tests/fact_mlp/test_capacity.py"]
    assert t["README.md"] == (
        "See `verify/fact_mlp/decodability.py` and "
        "`python -m verify.fact_mlp.capacity`; claim fact_mlp.x.y.\n"
    )
    assert "verify/fact_mlp/capacity.py" in t["pyproject.toml"]
    assert (
        "from verify.fact_mlp.decodability import (  # noqa: F401\n    SRC,\n)"
        in t["verify/fact_mlp/__init__.py"]
    )
    # the moved tree works: run its test in a fresh interpreter
    res = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.path.insert(0, '.');"
            "from tests.fact_mlp.test_capacity import test_f;"
            "import verify.fact_mlp.capacity as c; print(c.f(), c.HERE)",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["4", str(tmp_path / "verify")]
    # idempotent: nothing left to move, nothing changed
    assert tool.plan(tmp_path) == []
    assert tool.main(["--root", str(tmp_path)]) == 0
    again = {
        p.relative_to(tmp_path).as_posix(): p.read_text()
        for p in tmp_path.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert {k: v for k, v in t.items() if "__pycache__" not in k} == again
