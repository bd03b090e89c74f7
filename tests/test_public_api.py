"""The public API of the four packages (README.md, "Use it from Python").

Every name in each package's ``__all__`` exists, is documented and, where it is a function, has
a fully typed signature; the packages import without torch (and paper_figs without matplotlib)
until a name that needs them is used; every function added for the API carries a docstring
example that runs as a doctest; each package ships a ``py.typed`` marker as package data.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("theory", "constructions", "verify", "paper_figs")
#: the modules written for the public API: their docstrings' examples run here
API_MODULES = (
    "theory",
    "theory.api",
    "constructions",
    "constructions.measure",
    "verify",
    "verify.api",
    "verify.testing",
    "paper_figs",
    "paper_figs.api",
)
#: functions and methods added to existing modules for the API
API_FUNCTIONS = (
    "constructions.decode:predict",
    "constructions.geometric.single_hop:BlockModel.fact_queries",
    "constructions.geometric.single_hop:BlockModel.decode",
    "constructions.geometric.single_hop:BlockModel.accuracy",
    "constructions.geometric.single_hop:BlockModel.margins",
    "constructions.fact_mlp.facts:FactMLP.decode",
    "constructions.fact_mlp.facts:FactMLP.accuracy",
    "constructions.fact_mlp.facts:FactMLP.margins",
)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _resolve(target: str):
    module, _, qualname = target.partition(":")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def _untyped(fn) -> list[str]:
    """Parameters of ``fn`` without an annotation, and "return" when the return is unannotated."""
    sig = inspect.signature(fn)
    missing = [
        name
        for i, (name, p) in enumerate(sig.parameters.items())
        if p.annotation is inspect.Parameter.empty and not (i == 0 and name in ("self", "cls"))
    ]
    if sig.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


@pytest.mark.parametrize("package", PACKAGES)
def test_every_name_in_all_exists_is_documented_and_typed(package):
    pkg = importlib.import_module(package)
    names = pkg.__all__
    assert len(names) == len(set(names)) and all(isinstance(n, str) for n in names)
    assert names, f"{package}.__all__ is empty"
    for name in names:
        obj = getattr(pkg, name)  # exists (lazily loaded names included)
        assert name in dir(pkg), f"{package}.{name} missing from dir()"
        if inspect.isfunction(obj) or inspect.isclass(obj) or inspect.ismodule(obj):
            assert inspect.getdoc(obj), f"{package}.{name} has no docstring"
        else:  # data (a registry, a constant, a type alias): named in the package's docstring
            assert f"``{name}``" in (pkg.__doc__ or ""), (
                f"{package}.{name} is not described in {package}'s docstring"
            )
        if inspect.isfunction(obj):
            assert not _untyped(obj), f"{package}.{name}: untyped {_untyped(obj)}"


@pytest.mark.parametrize("target", API_FUNCTIONS)
def test_added_methods_are_typed(target):
    fn = _resolve(target)
    assert not _untyped(fn), f"{target}: untyped {_untyped(fn)}"


def test_api_names():
    """The names the README's quick start and the docs use."""
    import constructions
    import paper_figs
    import theory
    import verify

    assert {"get_bound", "evaluate", "list_bounds", "expression", "decodability"} <= set(theory.__all__)
    assert {
        "build_block_model",
        "build_encoder_decoder",
        "build_large",
        "FactSet",
        "FactMLP",
        "BlockModel",
    } <= set(constructions.__all__)
    assert {
        "run_claim",
        "list_claims",
        "accuracy",
        "margins",
        "decodability",
        "smallest_storing_size",
        "smallest_size",
    } <= set(verify.__all__)
    assert {"draw_figure", "save_figure", "list_figures"} <= set(paper_figs.__all__)
    assert "testing" not in verify.__all__  # needs hypothesis: imported explicitly
    from constructions.fact_mlp import build_encoder_decoder
    from constructions.fact_mlp.encoder import build_encoder_decoder as original

    assert build_encoder_decoder is original is constructions.build_encoder_decoder
    assert verify.decodability is theory.decodability


def test_an_unknown_name_is_an_attribute_error():
    import constructions
    import paper_figs
    import verify

    for pkg in (constructions, verify, paper_figs):
        with pytest.raises(AttributeError, match="no attribute 'nope'"):
            pkg.nope  # noqa: B018


def test_packages_import_without_torch():
    code = (
        "import sys, json, theory, constructions, verify, paper_figs; "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'matplotlib'})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


@pytest.mark.parametrize("module", API_MODULES)
def test_api_module_examples_run(module):
    mod = importlib.import_module(module)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    out: list[str] = []
    attempted = 0
    for test in doctest.DocTestFinder().find(mod, module):
        if test.examples:
            attempted += runner.run(test, out=out.append).attempted
    assert not out, "\n".join(out)
    assert attempted > 0


@pytest.mark.parametrize("target", API_FUNCTIONS)
def test_added_methods_have_examples_that_run(target):
    fn = _resolve(target)
    tests = [t for t in doctest.DocTestFinder(recurse=False).find(fn, target) if t.examples]
    assert tests, f"{target} has no docstring example"
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    out: list[str] = []
    for test in tests:
        runner.run(test, out=out.append)
    assert not out, "\n".join(out)


@pytest.mark.parametrize(
    "module", ["theory.api", "constructions.measure", "verify.api", "verify.testing", "paper_figs.api"]
)
def test_every_public_function_of_the_api_modules_has_an_example(module):
    mod = importlib.import_module(module)
    for name in mod.__all__:
        obj = getattr(mod, name)
        if inspect.isfunction(obj):
            assert ">>>" in (obj.__doc__ or ""), f"{module}.{name} has no example"
            assert not _untyped(obj), f"{module}.{name}: untyped {_untyped(obj)}"


def test_py_typed_markers_ship_as_package_data():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    for package in PACKAGES:
        assert (ROOT / package / "py.typed").is_file(), f"{package}/py.typed is missing"
        assert "py.typed" in data.get(package, []), f"pyproject.toml: py.typed not package data of {package}"
    assert "data/*.tsv" in data["constructions"] and "previous_criteria.json" in data["verify"]
