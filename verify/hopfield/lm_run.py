"""The run of the language-model probe over a facts file (docs/hopfield.md): every relation's
prompts at every draw through :func:`constructions.hopfield.lm.probe`, pooled, and shared by the
lm claims of verify/hopfield/lm.py (a :func:`verify.claims.shared` measurement). [derived]: our
operationalisation of the paper's experiment.
"""

from __future__ import annotations

import numpy as np

from constructions.hopfield.lm import probe_passes
from constructions.lm.text import DEFAULT_TEMPLATE
from verify.claims import rng_for, shared
from verify.hopfield.lm_setup import load_lm, prepared_encoder

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


@shared
def run_real_probe(
    ctx,
    model_spec: str,
    pairs_path: str,
    k_demo: int = K_DEMO,
    max_prompts: int = MAX_PROMPTS,
    random_weights: bool = False,
    n_seeds: int = 1,
    fmt: str = "stated",
) -> dict:
    """Probe a model on every relation of a facts file, on ``ctx.device``; rows of all relations
    and seeds pooled; computed once per run (every lm claim and control reads the same).

    Each of the ``n_seeds`` seeds S, S+1, ... (S = ``ctx.seed``) draws every relation's prompt
    order and demonstrations (at most ``max_prompts`` per relation and seed); the summary pools all prompts
    and ``per_seed`` keeps each seed's own summary. ``fmt`` is the prompt format: "stated" (each
    relation's own template, the relation named in the query) or "ambiguous" (demonstrations
    "{subject} -> {answer}" and the query "{subject} ->": only the context says which relation).
    Facts whose answer token is ill defined or collides with another answer's are dropped and
    counted (``tokenisation``). ``known`` is the zero-shot greedy accuracy over the vocabulary per
    relation (which facts the model knows, in this format). The random-weights control uses one
    model seeded with S.

    Each prompt's wrong gate (``acc1_V_wrong_gate``) is the first-order gate of the next relation
    (in sorted order): its candidate set C' and the context-only mass m_C' of that relation's
    prompt at the same position of the same draw.

    >>> from constructions.lm.text import facts_path
    >>> from verify.claims import Context
    >>> run_real_probe(Context(), "no-such-model-folder", facts_path(), fmt="ambiguous")
    Traceback (most recent call last):
    ...
    ValueError: model path 'no-such-model-folder' not found: give an alias ... (nothing is downloaded at run time)
    """
    from constructions.hopfield.gate import gated_token
    from constructions.hopfield.lm import probe, read_facts, relational_prompts, summarise

    if fmt not in FORMATS:
        raise ValueError(f"prompt format {fmt!r} is not one of {FORMATS}")
    seed, device = ctx.seed, ctx.device
    relations, templates = read_facts(pairs_path)
    model, _, info = load_lm(ctx, model_spec, random_weights)
    encoders, tokenisation, known = {}, {}, {}
    for rel, pairs in sorted(relations.items()):
        template = DEFAULT_TEMPLATE if fmt == "ambiguous" else templates[rel]
        encoder, kept, report = prepared_encoder(ctx, model_spec, template, pairs)
        tokenisation[rel] = report
        if len({a for _, a in kept}) >= 2:
            encoders[rel] = (encoder, kept)
    if not encoders:
        raise ValueError("no relation of the facts file kept 2 distinct answers after tokenisation")
    names = sorted(encoders)
    cands = {r: sorted({enc.candidate(a) for _, a in kept}) for r, (enc, kept) in encoders.items()}
    other = {r: names[(i + 1) % len(names)] for i, r in enumerate(names)}
    jobs = {  # every relation's prompts at every draw, run in packs of up to PACK prompts
        (rel, sd): relational_prompts(
            encoders[rel][1], k_demo, rng_for(sd, "hopfield.lm_run.relational_prompts", k), max_prompts
        )
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
            rows["draw"] = [int(sd)] * len(prompts)  # the replicate a claim's rule is over
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
