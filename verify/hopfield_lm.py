"""The hopfield language-model probe (spec hopfield.md §7.1): ``python -m verify probe-lm`` and lm claims.

hopfield.lm.probe_pipeline runs on a tiny randomly initialised Llama (built locally, no
download) and checks the metric identities. hopfield.lm.first_order, .margin and
.zero_shot_discriminates need real weights: set RECALL_LM_MODEL to a local Hugging Face model
folder and RECALL_LM_PAIRS to a ``subject<TAB>answer[<TAB>relation]`` file. Without them they are
reported as skipped (a skip is not a pass). All [derived]: our operationalisation of the paper's
Llama-3 experiment, whose details could not be obtained.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

from verify.claims import Outcome, claim

PAPER = "Context-Gated Associative Retrieval (2605.10970)"
MODEL_ENV, PAIRS_ENV = "RECALL_LM_MODEL", "RECALL_LM_PAIRS"
K_DEMO, MAX_PROMPTS = 4, 50


def _transformers_missing() -> str | None:
    try:
        import transformers  # noqa: F401
    except ImportError as exc:
        return f"transformers is not installed (pip install 'recall-bounds[lm]'): {exc}"
    return None


def run_real_probe(model_path, pairs_path, device="cpu", seed=0, k_demo=K_DEMO,
                   max_prompts=MAX_PROMPTS) -> dict:
    """Probe a local model on every relation of the pairs file; rows of all relations pooled."""
    from constructions.hopfield_lm import (TextEncoder, load_local_model, probe, read_pairs,
                                           relational_prompts, summarise)

    relations = read_pairs(pairs_path)
    model, tokenizer = load_local_model(model_path, device)
    encoder = TextEncoder(tokenizer)
    pooled, per_relation = None, {}
    for k, (rel, pairs) in enumerate(sorted(relations.items())):
        gen = np.random.default_rng([int(seed), 7, k])
        prompts = relational_prompts(pairs, k_demo, gen, max_prompts)
        rows = probe(model, encoder, prompts, [a for _, a in pairs], device)
        per_relation[rel] = summarise(rows)
        if pooled is None:
            pooled = {key: list(v) if isinstance(v, list) else [v] for key, v in rows.items()}
        else:
            for key, v in rows.items():
                pooled[key] += list(v) if isinstance(v, list) else [v]
    pooled["subspace_pr_zero_shot"] = float(np.mean(pooled["subspace_pr_zero_shot"]))
    pooled["subspace_pr_full"] = float(np.mean(pooled["subspace_pr_full"]))
    pooled["n_candidates"] = int(np.min(pooled["n_candidates"]))
    return {"rows": pooled, "summary": summarise(pooled), "per_relation": per_relation}


def criteria(summary) -> dict:
    """The acceptance of the three lm_* claims (spec §7 table; thresholds are ours)."""
    return {
        "first_order": summary["median_r"] >= 0.3 and summary["agreement"] >= 0.6,
        "margin": summary["margin_up_rate"] >= 0.7 and summary["mass_up_rate"] >= 0.8,
        "zero_shot_discriminates": summary["acc_zero_shot_in_C"] >= summary["acc_full_in_V"] - 0.1,
    }


def main(args) -> int:
    """``python -m verify probe-lm --model PATH --pairs FILE [--device] [--out] [--json]``."""
    from constructions.device import resolve_device

    try:
        missing = _transformers_missing()
        if missing:
            raise ValueError(missing)
        if not os.path.isdir(args.model):
            raise ValueError(f"model path {args.model!r} not found: give a local Hugging Face model "
                             "folder (nothing is downloaded at run time)")
        device = resolve_device(args.device)
        result = run_real_probe(args.model, args.pairs, device)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    result["criteria"] = criteria(result["summary"])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "hopfield_lm_probe.json").write_text(json.dumps(result))
    if args.json:
        print(json.dumps({"summary": result["summary"], "criteria": result["criteria"],
                          "per_relation": result["per_relation"]}))
    else:
        for key, value in result["summary"].items():
            print(f"{key:>24}: {value}")
        for key, ok in result["criteria"].items():
            print(f"{'lm.' + key:>24}: {'holds' if ok else 'does not hold'}")
        print(f"written {out / 'hopfield_lm_probe.json'}")
    return 0


# ---------------------------------------------------------------------------------------------
def _tiny_run(seed, n_pairs, k_demo, dtype, max_prompts=None):
    from constructions.hopfield_lm import (ANSWER_IDS, SUBJECT_IDS, SyntheticEncoder, probe,
                                           relational_prompts, tiny_llama)

    gen = np.random.default_rng([int(seed), 31])
    subjects = gen.choice(list(SUBJECT_IDS), size=n_pairs, replace=False)
    answers = gen.choice(list(ANSWER_IDS), size=n_pairs, replace=False)
    pairs = list(zip(subjects.tolist(), answers.tolist()))
    prompts = relational_prompts(pairs, k_demo, gen, max_prompts)
    model = tiny_llama(seed, dtype)
    return probe(model, SyntheticEncoder(), prompts, answers.tolist()), prompts, answers


@claim("hopfield.lm.probe_pipeline", source=f"{PAPER}, Llama-3 probe (our operationalisation §7.1)",
       provenance="derived", needs=("torch", "transformers"),
       statement="on a tiny random Llama the probe runs end to end with finite outputs, identical "
                 "across 2 runs, 1 <= PR <= |C| and 0 < m_C <= 1 for every prompt; on the additive "
                 "stub q(query) + h(context), r = 1 and top-1 agreement = 1",
       quick={"n_pairs": 10, "k_demo": 4, "repeat_prompts": 3})
def lm_probe_pipeline(params, ctx):
    missing = _transformers_missing()
    if missing:
        return Outcome(predicted="identities hold", measured=None, passed=False, skipped=missing)
    from constructions.hopfield_lm import SyntheticEncoder, additive_stub, probe

    rows, prompts, answers = _tiny_run(ctx.seed, params["n_pairs"], params["k_demo"], "float64")
    # second run (model rebuilt from the seed) on the first prompts: must be bit-identical
    m = params["repeat_prompts"]
    again, _, _ = _tiny_run(ctx.seed, params["n_pairs"], params["k_demo"], "float64", m)
    deterministic = all(np.array_equal(np.asarray(rows[k][:m]), np.asarray(again[k]))
                        for k in rows if isinstance(rows[k], list))
    nc = rows["n_candidates"]
    pr_ok = all(1 - 1e-12 <= v <= nc + 1e-9 for v in rows["pr0"] + rows["prf"])
    mass_ok = all(0 < v <= 1 + 1e-12 for v in rows["mass0"] + rows["massf"])
    stub = probe(additive_stub(512, ctx.seed), SyntheticEncoder(), prompts, answers.tolist())
    stub_r, stub_agree = min(stub["r"]), min(stub["agree"])
    stub_ok = abs(stub_r - 1.0) <= 1e-9 and stub_agree == 1.0
    ok = deterministic and pr_ok and mass_ok and stub_ok
    return Outcome(predicted="identities hold; stub r = 1, agreement = 1",
                   measured={"deterministic": deterministic, "pr_in_range": pr_ok, "mass_in_range": mass_ok,
                             "stub_min_r": stub_r, "stub_min_agreement": stub_agree},
                   passed=bool(ok),
                   details={"model": "tiny random Llama (no real weights)", "rows": rows,
                            "n_candidates": nc})


def _real(params, ctx):
    """Shared real-weight probe, or a skip reason."""
    model, pairs = os.environ.get(MODEL_ENV), os.environ.get(PAIRS_ENV)
    if not model or not pairs:
        return None, (f"no real weights: set {MODEL_ENV} (local model folder) and {PAIRS_ENV} "
                      "(subject<TAB>answer file) to run this claim")
    missing = _transformers_missing()
    if missing:
        return None, missing
    key = ("hopfield.lm", model, pairs, ctx.seed, params["k_demo"], params["max_prompts"])
    return ctx.shared(key, lambda: run_real_probe(model, pairs, ctx.device, ctx.seed, params["k_demo"],
                                                  params["max_prompts"])), None


REAL = {"k_demo": K_DEMO, "max_prompts": MAX_PROMPTS}


def _real_claim(name, predicted, measure):
    def check(params, ctx):
        result, reason = _real(params, ctx)
        if reason:
            return Outcome(predicted=predicted, measured=None, passed=False, skipped=reason)
        s = result["summary"]
        return Outcome(predicted=predicted, measured=measure(s), passed=criteria(s)[name],
                       details={"model": os.environ.get(MODEL_ENV), "summary": s,
                                "per_relation": result["per_relation"],
                                "rows": {k: result["rows"][k] for k in
                                         ("margin0", "marginf", "delta", "bias", "r")}})
    return check


claim("hopfield.lm.first_order", source=f"{PAPER}, abstract (first-order approximation on Llama-3)",
      provenance="derived", needs=("torch", "transformers"),
      statement="on real weights, median Pearson r(l_f - l0, b) >= 0.3 over prompts and top-1 "
                "agreement of l0 + b with l_f on C >= 0.6",
      quick=REAL)(_real_claim("first_order", "median r >= 0.3, agreement >= 0.6",
                              lambda s: [s["median_r"], s["agreement"]]))
claim("hopfield.lm.margin", source=f"{PAPER}, abstract (context localises a memory subspace)",
      provenance="derived", needs=("torch", "transformers"),
      statement="on real weights, margin_full > margin_0 in >= 70% of prompts and the candidate "
                "mass m_C increases in >= 80%",
      quick=REAL)(_real_claim("margin", "rates >= 0.7 and 0.8",
                              lambda s: [s["margin_up_rate"], s["mass_up_rate"]]))
claim("hopfield.lm.zero_shot_discriminates", source=f"{PAPER}, abstract (the zero-shot query "
      "discriminates within the subspace)", provenance="derived", needs=("torch", "transformers"),
      statement="on real weights, acc(argmax_C l0) >= acc(argmax_V l_f) - 0.1",
      quick=REAL)(_real_claim("zero_shot_discriminates", "acc0_C >= accf_V - 0.1",
                              lambda s: [s["acc_zero_shot_in_C"], s["acc_full_in_V"]]))
