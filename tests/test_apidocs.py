"""The API reference (``python -m paper_figs apidocs``): every public module of the four packages
gets a page and the build raises no warning."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

pytest.importorskip("pdoc")

from paper_figs.__main__ import main as figs_main  # noqa: E402
from paper_figs.apidocs import PACKAGES, build_api_docs, public_modules  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _modules_on_disk() -> list[str]:
    """The public modules found from the files, independently of pkgutil: every .py file (and
    package folder) under the four packages whose dotted name has no part starting with '_'."""
    names = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if all((ROOT.joinpath(*parts[:i]) / "__init__.py").is_file() for i in range(1, len(parts))):
                names.add(".".join(parts))
    return sorted(n for n in names if not any(p.startswith("_") for p in n.split(".")))


def test_public_modules_are_every_public_file():
    assert sorted(public_modules()) == _modules_on_disk()


def test_reference_builds_without_warnings_with_a_page_per_public_module(tmp_path):
    with warnings.catch_warnings(record=True) as outer:
        warnings.simplefilter("always")
        made = build_api_docs(tmp_path)
    assert made.warnings == []
    assert [str(w.message) for w in outer] == []
    expected = _modules_on_disk()
    missing = [m for m in expected if not (tmp_path / f"{m.replace('.', '/')}.html").is_file()]
    assert missing == []
    assert set(made.pages) == set(expected)
    assert (tmp_path / "index.html").is_file()
    # the names the packages load on first use are documented, not just listed
    page = (tmp_path / "constructions.html").read_text()
    assert "build_block_model" in page and "does not resolve" not in page


def test_a_warning_is_reported(tmp_path, monkeypatch):
    """The build records what pdoc warns about (here an annotation naming an unknown module)."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "apidocs_probe_mod.py").write_text(
        '"""Probe."""\nfrom __future__ import annotations\n\n\ndef f(x: nosuchmodule.Thing) -> int:\n'
        '    """Doc."""\n    return 1\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    made = build_api_docs(tmp_path / "out", ["apidocs_probe_mod"])
    sys.modules.pop("apidocs_probe_mod", None)
    assert any("nosuchmodule" in w for w in made.warnings), made.warnings


def test_bad_out_is_exit_2(tmp_path, capsys):
    afile = tmp_path / "a_file"
    afile.write_text("x")
    assert figs_main(["apidocs", "--out", str(afile)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert figs_main(["apidocs", "--out", str(afile / "sub")]) == 2
    assert "is not a writable folder" in capsys.readouterr().err
    assert not list(tmp_path.rglob("*.html"))
