"""``python -m verify probe-lm --json`` and hopfield_lm_probe.json are strict JSON: a non-finite number
of the probe's result is written as null with a ``<key>_nonfinite`` reason, never NaN or Infinity.
No language model is loaded: a result dict goes through the function the command uses."""

import json

import pytest

from verify.hopfield.lm import JSON_KEYS, probe_json


def _no_constant(name):
    raise ValueError(f"non-standard JSON constant {name}")


def _result():
    return {
        "summary": {
            "prompts": 6,
            "median_r": float("nan"),
            "agreement": float("inf"),
            "margin_up_rate": 0.5,
            "mass_up_rate": 0.9,
            "acc_zero_shot_in_C": float("nan"),
            "acc_full_in_V": 1.0,
        },
        "criteria": {"first_order": False, "margin": True},
        "per_relation": [{"relation": "capital of", "median_r": float("nan"), "rs": [0.5, float("-inf")]}],
        "model": {"model": "tiny"},
        "tokenisation": {"single_token": 6},
        "prompts": [{"r": float("nan")}],
    }


@pytest.mark.parametrize("full", [False, True], ids=["printed", "file"])
def test_probe_json_is_strict_with_nan_and_inf(full):
    out = json.loads(probe_json(_result(), full=full), parse_constant=_no_constant)
    assert set(out) == (set(_result()) if full else set(JSON_KEYS))
    summary = out["summary"]
    assert summary["median_r"] is None and summary["median_r_nonfinite"] == "NaN"
    assert summary["agreement"] is None and summary["agreement_nonfinite"] == "Infinity"
    assert summary["prompts"] == 6 and summary["margin_up_rate"] == 0.5
    assert out["per_relation"][0]["rs"] == [0.5, "-Infinity"]
    assert out["criteria"] == {"first_order": False, "margin": True}


def test_the_command_writes_both_through_probe_json(tmp_path, capsys, monkeypatch):
    """main() prints and writes what probe_json gives (the probe itself replaced by a stub)."""
    import types

    import verify.hopfield.lm as lm

    monkeypatch.setattr(lm, "_transformers_missing", lambda: None)
    monkeypatch.setattr("constructions.lm.load.resolve_model", lambda spec: spec)
    rows = {  # what the statements read, per prompt
        "acc1_V": [0.0, 1.0, 0.0, 1.0],
        "accf_V": [1.0, 1.0, 0.0, 1.0],
        "acc0_V": [0.0, 0.0, 0.0, 1.0],
        "acc0_C": [1.0, 1.0, 0.0, 1.0],
        "chance3": [0.3] * 4,
        "margin0": [0.0, 1.0, 0.0, 0.0],
        "marginf": [-1.0, 0.0, -1.0, -1.0],
        "mass0": [0.1] * 4,
        "massf": [0.5] * 4,
        "draw": [0, 0, 1, 1],
    }
    monkeypatch.setattr(lm, "run_real_probe", lambda ctx, spec, pairs, *a, **k: dict(_result(), rows=rows))
    args = types.SimpleNamespace(model="stub", pairs="pairs.tsv", device="cpu", out=str(tmp_path), json=True)
    assert lm.main(args) == 0
    printed = json.loads(capsys.readouterr().out, parse_constant=_no_constant)
    written = json.loads((tmp_path / "hopfield_lm_probe.json").read_text(), parse_constant=_no_constant)
    assert printed["summary"]["median_r_nonfinite"] == "NaN"
    assert written["prompts"] == [{"r": None, "r_nonfinite": "NaN"}]
    # the statements judged on the stub's result over its two draws: the margin never rises
    # (0 on both draws < 0.7: fails), the others the draws' Student-t intervals
    assert printed["criteria"]["margin"]["verdict"] == "fail"
    assert printed["criteria"]["first_order"]["verdict"] in ("fail", "inconclusive")
