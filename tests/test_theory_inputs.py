"""Inputs of the bounds checked where they enter (theory/validate.py): a value that is not a number
(text, a truth value) is a TypeError naming the parameter, a non-integral size a ValueError, an
integral float an accepted size; the command line parses its text before it calls. A bound name
that is not a string is a TypeError; a grid above theory.registry.MAX_GRID_POINTS is refused at
once naming its axes (from Python and from the command line, before the text is parsed), and an
empty item of a command-line list (N=2,,3) is an error naming the parameter."""

from __future__ import annotations

import re

import numpy as np
import pytest

import theory
from tests.test_grids import GRIDS
from theory.__main__ import main as theory_main
from theory.registry import get_bound
from theory.validate import require_int, require_real


def _point(name: str) -> dict:
    bound = get_bound(name)
    return {k: (v[0] if isinstance(v, list) else v) for k, v in bound.canonical(GRIDS[name]).items()}


def _numeric_params(name: str) -> list[str]:
    defaults = get_bound(name).defaults()
    return [k for k in _point(name) if not isinstance(defaults.get(k), (str, bool))]


@pytest.mark.parametrize("name", list(GRIDS))
def test_a_string_for_a_number_is_a_type_error_naming_the_parameter(name):
    bound = get_bound(name)
    for key in _numeric_params(name):
        point = _point(name)
        point[key] = str(point[key])
        with pytest.raises(TypeError) as info:
            bound.evaluate(**point)
        reason = str(info.value).split(": ", 1)[1]  # after "bound NAME at POINT"
        names = [key, *(a for a, t in bound.aliases.items() if t == key)]
        assert any(re.search(rf"\b{re.escape(n)}=", reason) for n in names), (key, reason)
        assert "must be" in reason


def test_theory_evaluate_rejects_a_string_and_the_command_line_still_parses_text(capsys):
    with pytest.raises(TypeError, match="N='1000' must be an integer, got str"):
        theory.evaluate("geometric.d0_suff", N="1000", t=0.5, delta=0.01)
    with pytest.raises(TypeError, match="t='0.5' must be a real number, got str"):
        theory.evaluate("geometric.d0_suff", N=1000, t="0.5", delta=0.01)
    assert theory_main(["eval", "geometric.d0_suff", "N=1000", "t=0.5", "delta=0.01"]) == 0
    assert "152.91" in capsys.readouterr().out


def test_sizes_are_integers_an_integral_float_is_one():
    assert theory.evaluate("geometric.d_cot", R=3.0, d0=np.int64(16)) == theory.evaluate(
        "geometric.d_cot", R=3, d0=16
    )
    with pytest.raises(ValueError, match="R=2.5 must be an integer"):
        theory.evaluate("geometric.d_cot", R=2.5, d0=16)
    with pytest.raises(ValueError, match="must be an integer"):
        require_int("n", float("nan"))
    with pytest.raises(TypeError, match="n=True must be an integer, got bool"):
        require_int("n", True)
    with pytest.raises(TypeError, match="got NoneType"):
        require_int("n", None)
    assert require_int("n", np.float64(7.0)) == 7 and type(require_int("n", np.int32(7))) is int


def test_reals_reject_text_truth_values_lists_and_nan():
    for bad, kind in (("0.5", "str"), (True, "bool"), (np.bool_(True), "bool"), ([0.5], "list")):
        with pytest.raises(TypeError, match=f"got {kind}"):
            require_real("rho", bad)
    with pytest.raises(ValueError, match="rho is NaN"):
        require_real("rho", float("nan"))
    assert require_real("rho", np.float32(0.5)) == 0.5


@pytest.mark.parametrize("bad, error", [(10000.5, ValueError), ("4", TypeError), (True, TypeError)])
def test_sufficient_block_dim_is_an_integer(bad, error):
    from theory.geometric.single_hop import require_sufficient_block_dim

    with pytest.raises(error, match="block_dim"):
        require_sufficient_block_dim(bad, 100)
    require_sufficient_block_dim(200.0, 100)  # an integral float is the integer it names


def test_a_bound_name_that_is_not_a_string_is_a_type_error():
    with pytest.raises(TypeError, match=r"name=123 must be a string, a bound's name.*not int"):
        theory.evaluate(123, N=1000, t=0.5, delta=0.01)
    with pytest.raises(TypeError, match=r"name=None must be a string"):
        theory.expression(None)


def _at_once(call):
    """What ``call`` returns, checked to come within a second and after less than 16 MiB of
    allocations (tracemalloc): a grid refused before its rows are built."""
    import time
    import tracemalloc

    get_bound("geometric.d0_suff")  # the registry imported before the measurement
    tracemalloc.start()
    start = time.perf_counter()
    try:
        out = call()
        seconds, peak = time.perf_counter() - start, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert seconds < 1.0 and peak < 16 * 2**20, (seconds, peak)
    return out


def _error_of(call) -> Exception:
    try:
        call()
    except Exception as exc:  # noqa: BLE001 - returned for the test to judge
        return exc
    raise AssertionError("no error")


def test_a_grid_above_the_budget_is_refused_naming_its_axes():
    from theory.registry import MAX_GRID_POINTS

    axes = "n_subjects (N): 2,000 values x fail_prob (delta): 1,000 values"
    error = _at_once(
        lambda: _error_of(
            lambda: theory.evaluate("geometric.d0_suff", N=range(2, 2002), t=0.5, delta=np.full(1000, 0.01))
        )
    )
    assert isinstance(error, ValueError)
    assert str(error).startswith(
        f"bound geometric.d0_suff: a grid of 2,000,000 points ({axes}) is above the budget of "
        f"{MAX_GRID_POINTS:,} points (theory.registry.MAX_GRID_POINTS; its rows would take about 4.1 GiB)"
    )
    bound = get_bound("geometric.d0_suff")
    error = _at_once(lambda: _error_of(lambda: bound.grid(N=range(2, 2002), t=[0.5], delta=[0.01] * 1000)))
    assert isinstance(error, ValueError) and "a grid of 2,000,000 points" in str(error)
    assert theory.evaluate("geometric.d0_suff", N=range(2, 1002), t=0.5, delta=0.01).shape == (1000,)


def test_the_command_line_refuses_a_large_grid_before_parsing_it(capsys):
    n_values = "N=" + ",".join(str(n) for n in range(2, 2002))
    deltas = "delta=" + ",".join(str(0.001 * (i + 1)) for i in range(1000))
    assert _at_once(lambda: theory_main(["eval", "geometric.d0_suff", n_values, "t=0.5", deltas])) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("error: bound geometric.d0_suff: a grid of 2,000,000 points")
    assert "MAX_GRID_POINTS" in captured.err and not captured.out


@pytest.mark.parametrize("text", ["2,,3", "5,", ",5"])
def test_an_empty_grid_item_is_an_error_naming_the_key(text, capsys):
    assert theory_main(["eval", "geometric.d0_suff", f"N={text}", "t=0.5", "delta=0.01"]) == 2
    err = capsys.readouterr().err
    assert f"error: parameter n_subjects (N): {text!r} has an empty item" in err
