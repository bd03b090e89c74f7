"""One meaning for a grid: a list (tuple, range, 1-D array) is an axis, and several axes give every
combination, in ``Bound.evaluate``, ``theory.evaluate``, ``Bound.grid`` and ``python -m theory
eval key=1,10,100``, with the same records (defaults included), on every registered bound.

Each bound gets a small valid grid (from its docstring's example and its hypotheses) with axes
of different lengths; a bound added to the registry must be added to GRIDS.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import theory
from theory.__main__ import main as theory_main
from theory.cli_support import strict_json
from theory.registry import get_bound, load_all

#: bound -> a grid of valid points: lists are axes (of different lengths where there are two)
GRIDS: dict[str, dict[str, object]] = {
    "geometric.info_bits": {"N": [10, 1000], "R": [1, 2, 4]},
    "geometric.bits_per_fact": {"N": [10, 1000], "R": [1, 4, 5]},
    "geometric.param_bound": {"N": [10, 1000], "R": [1, 2, 4]},
    "geometric.embed_dim_bound": {"N": [10, 100, 1000], "R": [4, 5], "p": 16},
    "geometric.d0_suff": {"N": [10, 1000], "t": [0.25, 0.5, 0.75], "delta": 0.01},
    "geometric.d0_nec": {"N": [100, 10000], "gamma": [0.25, 0.5, 1.0]},
    "geometric.pigeonhole_dim": {"N": [2, 200, 1000]},
    "geometric.khop_bits": {"N": [1000, 2000], "R": 3, "k": [1, 2, 3]},
    "geometric.khop_table_bits": {"N": [1000, 2000], "R": 3, "k": [1, 2, 3]},
    "geometric.khop_dim_bound": {"N": [1000, 2000], "R": [2, 3, 4], "k": 2},
    "geometric.d_nocot": {"R": [2, 3], "k": [1, 2, 3], "d0": 16},
    "geometric.d_cot": {"R": [2, 3], "d0": [8, 16, 32]},
    "geometric.k_max": {"d": [512, 1024], "d0": 16, "R": [2, 3, 4]},
    "fact_mlp.info_bits": {"F": [100, 1000], "n_V": [2, 10, 1000]},
    "fact_mlp.info_bits_tied": {"F": [10, 100, 1000]},
    "fact_mlp.min_params": {"F": [100, 1000], "n_V": [10, 1000], "b": [8, 16, 32]},
    "fact_mlp.jl_code_dim": {"n_values": [10, 100, 1000], "rho": [0.3, 0.5]},
    "fact_mlp.construction_params": {"F": [200, 400], "d": [16, 32, 64], "m_c": 32},
    "fact_mlp.construction_params_unique": {"F": [200, 400], "d": 32, "m_c": [8, 16, 32]},
    "fact_mlp.gated_mlp_params": {"d": [16, 32], "m": [64, 128, 256]},
    "fact_mlp.baseline_ratio": {"P_baseline": [12000, 24000], "P_ours": [1000, 2000, 3000]},
    "icrecall.incoherence": {"V": [100, 1000], "d": [64, 128, 256]},
    "icrecall.mlp_sufficient_dim": {"S": [50, 100], "R": [2, 3, 4]},
    "icrecall.mlp_guarantee_dim": {"S": [50, 100], "R": 4, "delta": [0.01, 0.1, 0.5]},
    "icrecall.mlp_params": {"S": [50, 100], "R": [2, 4, 8], "d": 64},
    "icrecall.linear_capacity": {"d": [32, 64], "V": [100, 1000, 10000], "c": 1.0},
    "icrecall.pairwise_margin": {"n": [2, 4, 8], "rho": [0.5, 0.75]},
    "icrecall.min_context_pairs": {"rho": [0.25, 0.5, 0.75], "theta": [1.25, 1.5]},
    "icrecall.min_recall_pairs": {"rho": [0.25, 0.5, 0.75]},
    "icrecall.relation_signal_boundary": {"rho_0": [0.5, 0.75, 1.0], "theta": [1.25, 1.5]},
    "icrecall.relation_chance": {"R": [2, 4], "K": [100, 200, 400]},
    "hopfield.well_separated": {"beta": [1, 2], "N": [16, 64, 256], "M": 1},
    "hopfield.sphere_radius": {"beta": [1, 2], "N": [16, 64, 256], "M": 1},
    "hopfield.jacobian_norm": {"beta": [1, 2], "N": 16, "M": 1, "Delta": [1.0, 2.0, 3.0], "r": 0},
    "hopfield.retrieval_error": {"beta": 2, "N": [16, 64], "M": 1, "Delta": [1.0, 2.0, 3.0], "r": 0.01},
    "hopfield.capacity": {"beta": 1, "K": [3, 4], "d": [20, 40, 75], "p": 0.001},
    "hopfield.capacity_c": {"beta": [1, 2], "K": 3, "d": [20, 40, 75], "p": 0.001},
    "hopfield.ungated_error": {"beta": [1, 2, 4], "N": 16, "M": 1, "Delta": [3.0, 4.0], "r": 0},
    "hopfield.gated_error": {"beta": 2, "N_eff": [8, 16], "M": 1, "Delta": 3.0, "r": 0, "kappa": [0, 1, 2]},
    "hopfield.capacity_shift": {"beta": [1, 2], "N": 64, "N_eff": [2, 8, 16], "kappa": 2},
    "hopfield.contraction": {"lam": [0.1, 0.5, 0.9], "M": [1, 2]},
    "hopfield.pr_hard_gates": {"N_eff": [2, 8, 16]},
    "chapters.shared_weight": {"C_sh": [1, 2], "s": [1.0, 2.0, 4.0]},
    "chapters.load_balance_uniform": {"k": [1, 2, 4]},
    "chapters.zloss_zero_logits": {"C": [4, 16, 64]},
    "chapters.leak_capacity_bits": {"C": [16, 32], "C_sh": 1, "k": [1, 2, 3]},
    "chapters.moc_forward_flops": {"L": [512, 1024], "k": [1, 2, 3]},
    "retrieval.nc_pred": {"V": [64, 256], "d": [8, 64, 128], "L": 8},
    "retrieval.coupon_floor": {"V": [64, 256], "delta": [0.01, 0.1, 0.5]},
    "retrieval.orth_scale": {"V": [64, 256], "d": [256, 512, 1024]},
    "retrieval.param_floor": {"V": [256, 1024], "b": [8, 16, 32]},
    "retrieval.v_max": {"N": [1e4, 1e5], "d": [32, 64, 128], "L": 8},
    "retrieval.fano_n_lower": {"V": [64, 256], "d": [32, 64, 128], "L": 8},
    "retrieval.n_sufficient": {"V": [16, 64], "d": [64, 256, 512], "L": 8},
    "retrieval.plateau_accuracy": {"V": [16, 256], "d": [8, 16, 32]},
    "retrieval.all_seen_upper": {"V": [16, 256], "N": [100, 1000, 10000]},
}


def test_every_registered_bound_has_a_grid():
    assert set(GRIDS) == set(load_all())


def _cli_text(value) -> str:
    if isinstance(value, list):
        return ",".join(_cli_text(v) for v in value)
    return repr(value) if isinstance(value, float) else str(value)


def _cli_records(capsys, name: str, point: dict) -> list[dict]:
    capsys.readouterr()
    code = theory_main(["eval", name, *(f"{k}={_cli_text(v)}" for k, v in point.items()), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out, parse_constant=lambda token: pytest.fail(f"not strict JSON: {token}"))


@pytest.mark.parametrize("name", list(GRIDS))
def test_python_and_command_line_give_the_same_grid(name, capsys):
    bound, point = get_bound(name), GRIDS[name]
    lengths = [len(v) for k, v in bound.canonical(point).items() if isinstance(v, list)]
    rows = bound.grid(**point)
    assert len(rows) == math.prod(lengths) > 1  # every combination
    cli = _cli_records(capsys, name, point)
    keys = ("params", "defaults", "value", "value_nonfinite")
    assert [{k: r[k] for k in keys if k in r} for r in cli] == [strict_json(r) for r in rows]
    assert all(list(r["params"]) == list(bound.params) for r in rows)  # defaults filled in, in order
    values = np.array([float(r["value"]) for r in rows])
    for got in (bound.evaluate(**point), theory.evaluate(name, **point)):
        assert got.shape == tuple(lengths)
        np.testing.assert_array_equal(got.ravel(), values)


def test_lists_of_different_lengths_give_every_combination():
    """The failures seen before: 3 paired values instead of 9, and numpy's broadcast error."""
    d4 = get_bound("hopfield.contraction")
    grid = d4.evaluate(lam=[0.1, 0.5, 0.9], M=[1, 2, 3])
    assert grid.shape == (3, 3) and len(d4.grid(lam=[0.1, 0.5, 0.9], M=[1, 2, 3])) == 9
    assert grid[2, 1] == pytest.approx(0.9 * 2**2)
    b2 = theory.evaluate("fact_mlp.jl_code_dim", n_values=[10, 100, 1000], rho=[0.3, 0.5])
    assert b2.shape == (3, 2) and b2[1, 1] == pytest.approx(8 * math.log(100) / 0.25)
    # tuples, ranges and 1-D arrays are axes too; scalars are not
    same = theory.evaluate("fact_mlp.jl_code_dim", n_values=np.array([10, 100, 1000]), rho=(0.3, 0.5))
    np.testing.assert_array_equal(same, b2)
    assert theory.evaluate("geometric.d_cot", R=range(2, 4), d0=8).tolist() == [16, 24]


def test_an_axis_is_flat_and_not_empty():
    b = get_bound("fact_mlp.jl_code_dim")
    with pytest.raises(ValueError, match="parameter n_values is a nested list"):
        b.evaluate(n_values=[[10], [100]], rho=[0.3, 0.5])
    with pytest.raises(ValueError, match="parameter rho is an empty grid axis"):
        theory.evaluate("fact_mlp.jl_code_dim", n_values=10, rho=[])
    with pytest.raises(ValueError, match="n_values=1"):  # every point is validated
        b.evaluate(n_values=[10, 1], rho=0.3)


def test_grid_rows_name_every_parameter_with_the_defaults():
    rows = get_bound("hopfield.contraction").grid(lam=[0.1, 0.5], M=1)
    assert rows[1] == {
        "params": {"lam": 0.5, "norm": 1, "beta": 0.0, "query_feedback": False},
        "defaults": {"beta": 0.0, "query_feedback": False},
        "value": 0.5,
    }
