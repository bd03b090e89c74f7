"""The command lines as a library's front door: one name per bound parameter (paper symbols as
aliases), paper labels, visible defaults, grids, strict JSON, filters on ``list``, repeated keys
and a quiet exit on a closed pipe (README "Command line")."""

from __future__ import annotations

import inspect
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from theory.cli_support import dumps, filter_names, parse_assignments, run_main, strict_json
from theory.registry import Bound, bounds_labelled, get_bound, load_all


class Done:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def run(capsys):
    """``run("theory", "eval", ...)``: the command line's main in this process (as
    ``python -m theory ...``, without the interpreter start), with its status and output."""

    def call(prog, *args):
        if prog == "theory":
            from theory.__main__ import main
        else:
            from verify.cli import main
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return Done(code, out, err)

    return call


def _reject(token):
    raise AssertionError(f"not strict JSON: {token}")


def strict_loads(text: str):
    """json.loads that fails on NaN, Infinity and -Infinity."""
    return json.loads(text, parse_constant=_reject)


# ------------------------------------------------------------------ one name per parameter


def test_every_bound_takes_its_function_parameter_names():
    for name, b in load_all().items():
        sig = inspect.signature(b.numeric).parameters
        if any(p.kind is p.VAR_KEYWORD for p in sig.values()):
            continue
        assert list(b.params) == [p for p in sig], name
        for alias, target in b.aliases.items():
            assert target in b.params and alias not in b.params or alias == target, (name, alias)


def test_a_bound_whose_params_differ_from_its_function_is_refused():
    def f(n_subjects, n_relations):
        return 1.0

    with pytest.raises(ValueError, match="one name per parameter"):
        Bound("geometric.fake", "s", "derived", "src", {"N": "subjects", "R": "relations"}, f)
    with pytest.raises(ValueError, match="alias"):
        Bound(
            "geometric.fake",
            "s",
            "derived",
            "src",
            {"n_subjects": "", "n_relations": ""},
            f,
            aliases={"N": "x"},
        )


def test_python_names_and_paper_symbols_give_the_same_value():
    b = get_bound("hopfield.capacity")
    by_symbol = b.evaluate(beta=1, K=1, d=75, p=0.001)
    by_name = b.evaluate(beta=1, radius_scale=1, dim=75, fail_prob=0.001)
    from theory.hopfield.reference import capacity

    assert by_symbol == by_name == capacity(beta=1, radius_scale=1, dim=75, fail_prob=0.001)
    from theory.geometric.multihop import khop_dim_lower_bound

    kd = get_bound("geometric.khop_dim_bound")
    assert kd.evaluate(n_subjects=1000, n_relations=3, n_hops=2) == khop_dim_lower_bound(1000, 3, 2)
    with pytest.raises(ValueError, match="given twice"):
        kd.evaluate(N=1000, n_subjects=1000, R=3, k=2)
    with pytest.raises(ValueError, match=r"unknown \['Q'\]"):
        kd.evaluate(N=1000, R=3, k=2, Q=1)


def test_cli_accepts_names_and_symbols(run):
    a = strict_loads(
        run("theory", "eval", "geometric.khop_dim_bound", "N=1000", "R=3", "k=2", "--json").stdout
    )
    b = strict_loads(
        run(
            "theory",
            "eval",
            "geometric.khop_dim_bound",
            "n_subjects=1000",
            "n_relations=3",
            "n_hops=2",
            "--json",
        ).stdout
    )
    assert a["value"] == b["value"] and a["params"] == b["params"]
    assert set(a["params"]) == {"n_subjects", "n_relations", "n_hops", "bits_per_param"}


# ------------------------------------------------------------------ defaults are visible


def test_defaults_are_printed_with_their_value(run):
    kd = get_bound("geometric.khop_dim_bound")
    assert kd.defaults() == {"bits_per_param": 32}
    assert "bits_per_param (p) = 32 (default)" in kd.signature_text()
    text = run("theory", "eval", "geometric.khop_dim_bound", "N=1000", "R=3", "k=2").stdout
    assert "bits_per_param=32 (default)" in text
    row = strict_loads(
        run("theory", "eval", "geometric.khop_dim_bound", "N=1000", "R=3", "k=2", "--json").stdout
    )
    assert row["defaults"] == {"bits_per_param": 32} and row["params"]["bits_per_param"] == 32
    listed = run("theory", "list", "geometric.khop_dim_bound").stdout
    assert "bits_per_param (p) = 32 (default)" in listed


# ------------------------------------------------------------------ paper labels


def test_bounds_are_found_by_paper_label():
    assert get_bound("fact_mlp.B2").name == "fact_mlp.jl_code_dim"
    assert get_bound("fact_mlp.b2").name == "fact_mlp.jl_code_dim"
    assert get_bound("D3").name == "hopfield.capacity_shift"
    with pytest.raises(ValueError, match=r"several areas \(geometric, fact_mlp\)"):
        get_bound("B2")
    with pytest.raises(ValueError, match="fact_mlp.info_bits, fact_mlp.info_bits_tied, fact_mlp.min_params"):
        get_bound("fact_mlp.B1")
    with pytest.raises(ValueError, match="did you mean fact_mlp.jl_code_dim"):
        get_bound("fact_mlp.jl_cod")
    assert {b.area for b in bounds_labelled("B2")} == {"geometric", "fact_mlp"}


def test_eval_and_list_by_label(run):
    out = run("theory", "eval", "fact_mlp.B2", "n_values=512", "rho=0.663", "--json")
    assert out.returncode == 0, out.stderr
    row = strict_loads(out.stdout)
    assert (
        row["name"] == "fact_mlp.jl_code_dim" and row["label"] == "B2" and row["area_label"] == "fact_mlp.B2"
    )
    bad = run("theory", "eval", "B2", "n_values=10", "rho=0.3")
    assert bad.returncode == 2 and "geometric, fact_mlp" in bad.stderr and "Traceback" not in bad.stderr
    by_label = run("theory", "list", "--label").stdout.splitlines()
    assert any(line.startswith("fact_mlp.B2") and "fact_mlp.jl_code_dim(" in line for line in by_label)
    only = run("theory", "list", "--label", "B2", "--json")
    rows = strict_loads(only.stdout)
    assert {r["name"] for r in rows} == {"geometric.d0_suff", "fact_mlp.jl_code_dim"}
    every = strict_loads(run("theory", "list", "--json").stdout)
    assert all("label" in r and "area_label" in r and "defaults" in r for r in every)
    assert next(r for r in every if r["name"] == "hopfield.capacity_shift")["label"] == "D3"


# ------------------------------------------------------------------ grids


def test_done_when_b2_grid_json():
    cmd = ["-m", "theory", "eval", "fact_mlp.B2", "n_values=10,100,1000", "rho=0.3", "--json"]
    out = subprocess.run([sys.executable, *cmd], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    rows = strict_loads(out.stdout)
    assert [r["params"]["n_values"] for r in rows] == [10, 100, 1000]
    assert [r["value"] for r in rows] == pytest.approx([8 * math.log(n) / 0.09 for n in (10, 100, 1000)])


def test_grid_table_every_combination(run):
    out = run("theory", "eval", "fact_mlp.B2", "n_values=10,100", "rho=0.3,0.5")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("fact_mlp.jl_code_dim") and "4 points" in lines[0]
    assert lines[1].split() == ["n_values", "rho", "value"]
    assert [tuple(x.split()[:2]) for x in lines[2:6]] == [
        ("10", "0.3"),
        ("10", "0.5"),
        ("100", "0.3"),
        ("100", "0.5"),
    ]


def test_arrays_evaluate_and_a_bad_shape_names_the_parameters():
    b = get_bound("fact_mlp.B2")
    values = b.evaluate(n_values=np.array([10, 100, 1000]), rho=0.3)
    assert values.shape == (3,) and values[0] == pytest.approx(8 * math.log(10) / 0.09)
    assert b.evaluate(n_values=[10, 100, 1000], rho=[0.3, 0.5]).shape == (3, 2)  # every combination
    with pytest.raises(ValueError, match="parameter n_values is a nested list"):
        b.evaluate(n_values=[[10], [100]], rho=[0.3, 0.5])
    with pytest.raises(ValueError, match="n_values=1"):
        b.evaluate(n_values=[10, 1], rho=0.3)
    assert [r["params"] for r in b.grid(n_values=[10, 100], rho=0.3)] == [
        {"n_values": 10, "rho": 0.3},
        {"n_values": 100, "rho": 0.3},
    ]


# ------------------------------------------------------------------ strict JSON and hygiene


def test_non_finite_values_are_strict_json(run):
    out = run("theory", "eval", "retrieval.n_sufficient", "V=32", "d=7", "L=4", "--json")
    assert out.returncode == 0, out.stderr
    row = strict_loads(out.stdout)
    assert row["value"] is None and row["value_nonfinite"] == "Infinity"
    data = {
        "a": float("inf"),
        "b": [1.0, float("nan"), np.float32(-np.inf)],
        "c": np.float64(2.5),
        "d": (1, 2),
    }
    text = json.dumps(strict_json(data), allow_nan=False)
    assert strict_loads(text) == {
        "a": None,
        "a_nonfinite": "Infinity",
        "b": [1.0, "NaN", "-Infinity"],
        "c": 2.5,
        "d": [1, 2],
    }
    assert strict_loads(dumps(np.array([1.0, np.inf]))) == [1.0, "Infinity"]


def test_verify_json_outputs_are_strict(run):
    rows = strict_loads(run("verify", "list", "--json").stdout)
    assert rows and all("id" in r for r in rows)


def test_a_repeated_key_is_an_error_naming_it(run):
    with pytest.raises(ValueError, match="'N' given twice"):
        parse_assignments(["N=1", "R=2", "N=3"])
    out = run("theory", "eval", "geometric.info_bits", "N=100", "R=2", "N=1000")
    assert out.returncode == 2 and "'N' given twice" in out.stderr and "Traceback" not in out.stderr
    both = run("theory", "eval", "geometric.info_bits", "N=100", "n_subjects=1000", "R=2")
    assert both.returncode == 2 and "n_subjects given twice (as N and as n_subjects)" in both.stderr


def test_a_bad_value_names_its_parameter(run):
    out = run("theory", "eval", "fact_mlp.B2", "n_values=ten", "rho=0.3")
    assert out.returncode == 2 and "parameter n_values: 'ten' is not a number" in out.stderr
    out = run("theory", "eval", "fact_mlp.B2", "n_values=10", "rho=0")
    assert out.returncode == 2 and "rho=0" in out.stderr and "Traceback" not in out.stderr


def test_list_filters(run):
    assert filter_names(["hopfield.a", "hopfieldx.b", "geometric.c"], ["hopfield"]) == ["hopfield.a"]
    out = run("theory", "list", "hopfield")
    names = [line.split("(", 1)[0] for line in out.stdout.splitlines() if not line.startswith(" ")]
    assert out.returncode == 0 and names and all(n.startswith("hopfield.") for n in names)
    none = run("theory", "list", "zzz*")
    assert none.returncode == 0 and none.stdout == "" and "no bound matches" in none.stderr
    claims = run("verify", "list", "zzz*")
    assert claims.returncode == 0 and claims.stdout == "" and "no claim matches" in claims.stderr
    some = run("verify", "list", "hopfield.capacity", "--json")
    ids = [r["id"] for r in strict_loads(some.stdout)]
    assert ids and all(i.startswith("hopfield.capacity.") for i in ids)


@pytest.mark.parametrize("args", [("theory", "list"), ("verify", "list"), ("theory", "list", "--json")])
def test_a_closed_pipe_exits_quietly(args):
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first write, as with `| head -1` on long output
    try:
        done = subprocess.run([sys.executable, "-m", *args], stdout=write, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write)
    assert done.returncode in (0, 141) and "Traceback" not in done.stderr, done.stderr[-500:]


def test_run_main_turns_a_broken_pipe_into_141(monkeypatch):
    def broken(argv):
        raise BrokenPipeError

    monkeypatch.setattr(os, "dup2", lambda *a: None)
    assert run_main(broken, []) == 141
    assert run_main(lambda argv: 3, []) == 3
