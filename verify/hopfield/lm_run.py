"""The run of the language-model probe over a facts file (docs/hopfield.md): every relation's
prompts at every draw through :func:`constructions.hopfield.lm.probe`, pooled, and shared by the
lm claims of verify/hopfield/lm.py through ``ctx.shared``. [derived]: our operationalisation of
the paper's experiment.
"""

from __future__ import annotations

import numpy as np

from constructions.hopfield.lm import probe_passes
from constructions.lm.text import DEFAULT_TEMPLATE
from verify.claims import rng_for
from verify.hopfield.lm_setup import load_shared, prepared_encoder, real_model_spec

K_DEMO, MAX_PROMPTS = 4, 50
FORMATS = ("ambiguous", "stated")


#: prompts per batched run of the probe's passes (several relations and draws together: fewer
#: reads of every weight matrix; bounded because every prompt keeps three full-vocabulary rows),
#: and sequences per forward pass. Measured on a 2-core AMD EPYC, one thread, the 72 prompts of
#: three draws (ambiguous format): Gemma 3 270M 17.7 s one relation and draw at a time (4 prompts,
#: 16 sequences per pass), 12.2 s at 72 / 32; SmolLM2 13.6 s -> 10.2 s.
PACK, CHUNK = 72, 32


def _packs(jobs: dict, size: int) -> list[list]:
    """Keys of ``jobs`` (key -> prompts) in order, cut into consecutive packs of at most ``size``
    prompts (a job larger than ``size`` is a pack of its own).

    >>> _packs({"a": [1, 2], "b": [3], "c": [4, 5, 6]}, 3)
    [['a', 'b'], ['c']]
    """
    packs, count = [], 0
    for key, prompts in jobs.items():
        if not packs or count + len(prompts) > size:
            packs.append([])
            count = 0
        packs[-1].append(key)
        count += len(prompts)
    return packs


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
    fmt="stated",
) -> dict:
    """Probe a model on every relation of a facts file; rows of all relations and seeds pooled.

    Each of the ``n_seeds`` seeds seed, seed+1, ... draws every relation's prompt order and
    demonstrations (at most ``max_prompts`` per relation and seed); the summary pools all prompts
    and ``per_seed`` keeps each seed's own summary. ``fmt`` is the prompt format: "stated" (each
    relation's own template, the relation named in the query) or "ambiguous" (demonstrations
    "{subject} -> {answer}" and the query "{subject} ->": only the context says which relation).
    Facts whose answer token is ill defined or collides with another answer's are dropped and
    counted (``tokenisation``). ``known`` is the zero-shot greedy accuracy over the vocabulary per
    relation (which facts the model knows, in this format). The random-weights control uses one
    model seeded with ``seed``.

    Each prompt's wrong gate (``acc1_V_wrong_gate``) is the first-order gate of the next relation
    (in sorted order): its candidate set C' and the context-only mass m_C' of that relation's
    prompt at the same position of the same draw.
    """
    from constructions.hopfield.gate import gated_token
    from constructions.hopfield.lm import probe, read_facts, relational_prompts, summarise

    if fmt not in FORMATS:
        raise ValueError(f"prompt format {fmt!r} is not one of {FORMATS}")
    relations, templates = read_facts(pairs_path)
    model, tokenizer, info = load_shared(model_spec, device, ctx, seed if random_weights else None)
    encoders, tokenisation, known = {}, {}, {}
    for rel, pairs in sorted(relations.items()):
        template = DEFAULT_TEMPLATE if fmt == "ambiguous" else templates[rel]
        encoder, kept, report = prepared_encoder(tokenizer, template, pairs, ctx, model_spec)
        tokenisation[rel] = report
        if len({a for _, a in kept}) >= 2:
            encoders[rel] = (encoder, kept)
    if not encoders:
        raise ValueError("no relation of the facts file kept 2 distinct answers after tokenisation")
    names = sorted(encoders)
    cands = {r: sorted({enc.candidate(a) for _, a in kept}) for r, (enc, kept) in encoders.items()}
    other = {r: names[(i + 1) % len(names)] for i, r in enumerate(names)}
    jobs = {  # every relation's prompts at every draw, run in packs of up to PACK prompts
        (rel, sd): relational_prompts(encoders[rel][1], k_demo, rng_for(sd, "hopfield.lm_run.relational_prompts", k), max_prompts)
        for k, rel in enumerate(sorted(relations))
        if rel in encoders
        for sd in range(int(seed), int(seed) + int(n_seeds))
    }
    passes = {}
    for pack in _packs(jobs, PACK):
        passes.update(
            zip(pack, probe_passes(model, [(encoders[r][0], jobs[(r, sd)]) for r, sd in pack], device, CHUNK))
        )
    by = {}
    for rel in names:
        encoder, kept = encoders[rel]
        seen = {}
        for sd in range(int(seed), int(seed) + int(n_seeds)):
            prompts = jobs[(rel, sd)]
            others = {other[rel]: cands[other[rel]]} if len(names) > 1 else None
            rows = probe(model, encoder, prompts, [a for _, a in kept], device, others, passes[(rel, sd)])
            rows["relation"] = [rel] * len(prompts)
            rows["subject"] = [p[1] for p in prompts]
            by[(rel, sd)] = rows
            for p, ok in zip(prompts, rows["acc0_V"]):
                seen[p[1]] = bool(ok)
        known[rel] = {
            "zero_shot_greedy_acc": float(np.mean(list(seen.values()))),
            "known": sorted(s for s, ok in seen.items() if ok),
            "unknown": sorted(s for s, ok in seen.items() if not ok),
        }
    for (rel, sd), rows in by.items():  # the gate of another relation (needs its masses)
        if len(names) < 2:
            rows["acc1_V_wrong_gate"] = [0.0] * len(rows["acc1_V"])
            continue
        masses = by[(other[rel], sd)]["mC"]
        rows["acc1_V_wrong_gate"] = [
            float(gated_token(split[other[rel]], masses[i % len(masses)]) == tok)
            for i, (split, tok) in enumerate(zip(rows.pop("split_other"), rows["answer_token"]))
        ]
    pooled, per_seed, per_relation = {}, {}, {}

    def add(target, rows):
        for key, v in rows.items():
            target.setdefault(key, []).extend(list(v) if isinstance(v, list) else [v])

    for (rel, sd), rows in by.items():
        add(pooled, rows)
        add(per_seed.setdefault(sd, {}), rows)
        add(per_relation.setdefault(rel, {}), rows)
    pooled = _collapse(pooled)
    return {
        "rows": pooled,
        "format": fmt,
        "summary": summarise(pooled),
        "summary_other_bias": summarise(pooled, "other"),
        "per_seed": {sd: summarise(_collapse(r)) for sd, r in per_seed.items()},
        "per_seed_other_bias": {sd: summarise(_collapse(r), "other") for sd, r in per_seed.items()},
        "per_relation": {rel: summarise(_collapse(r)) for rel, r in per_relation.items()},
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


def shared_probe(spec: str, params: dict, ctx, fmt: str, random_weights: bool = False) -> dict:
    """:func:`run_real_probe` of one model, prompt format and (for the control) random weights,
    computed once per run through ``ctx.shared`` (every lm claim and control reads the same).

    >>> from verify.claims import Context
    >>> params = {"k_demo": K_DEMO, "max_prompts": 4, "seeds": 3}
    >>> shared_probe("no-such-model-folder", params, Context(), "ambiguous")
    Traceback (most recent call last):
    ...
    ValueError: model path 'no-such-model-folder' not found: give an alias ['gemma3-270m', 'smollm2'], a .gguf file or a local Hugging Face model folder (nothing is downloaded at run time)
    """
    _, pairs = real_model_spec()
    key = (
        "hopfield.lm",
        spec,
        pairs,
        ctx.seed,
        params["k_demo"],
        params["max_prompts"],
        params["seeds"],
        random_weights,
        fmt,
    )
    return ctx.shared(
        key,
        lambda: run_real_probe(
            spec,
            pairs,
            ctx.device,
            ctx.seed,
            params["k_demo"],
            params["max_prompts"],
            ctx,
            random_weights,
            params["seeds"],
            fmt,
        ),
    )
