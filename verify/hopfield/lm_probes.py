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
architecture (all, ``weights`` "random"), attributes shuffled across subjects (superposition,
``pairing`` "shuffled"), the context bias of another prompt (override, ``bias_from`` "another
prompt"), another subject's story (second order, ``story`` "another subject").
"""

from __future__ import annotations

import numpy as np

from verify.claims import Control, choice, claim, rng_for, shared
from verify.hopfield.lm_setup import (
    RANDOM,
    RANDOM_ONE_DRAW,
    facts_file,
    load_lm,
    per_model_outcome,
    prepared_encoder,
    uses_random_weights,
)

ATTRIBUTES = ("capital", "continent", "currency", "language")
GEOMETRIC = "Geometric Factual Recall (2605.12426)"
ICRECALL = "Fine-Tuning Dynamics of In-Context Factual Recall (2605.27774)"
HOPFIELD = "Context-Gated Associative Retrieval (2605.10970)"


def _attribute_table(ctx, spec: str) -> tuple[list, dict]:
    """([(country, {relation: answer})] of the countries with all four attributes kept, {relation:
    {answer: token}}) of the facts file, tokenised for the model ``spec``."""
    from constructions.hopfield.lm import read_facts

    relations, templates = read_facts(facts_file())
    token_of, kept = {}, {}
    for rel in ATTRIBUTES:
        if rel not in relations:
            raise ValueError(f"the superposition probe needs the relation {rel!r} in the facts file")
        enc, pairs, _ = prepared_encoder(ctx, spec, templates[rel], relations[rel])
        token_of[rel] = dict(enc.tokens)
        kept[rel] = dict(pairs)
    subjects = [s for s in kept["capital"] if all(s in kept[r] for r in ATTRIBUTES)]
    return [(s, {r: kept[r][s] for r in ATTRIBUTES}) for s in subjects], token_of


@shared
def _subject_states(ctx, spec: str, random_weights: bool, subjects: list) -> np.ndarray:
    """The residual states of every layer at the last token of 'Facts about {subject}'."""
    from constructions.lm.probes import subject_states

    model, tok, _ = load_lm(ctx, spec, random_weights)
    return subject_states(model, tok, subjects, ctx.device)


@claim(
    "hopfield.lm.superposition_ridge",
    source=f"{GEOMETRIC}, superposition of facts, probed on a real model (our operationalisation)",
    provenance="derived",
    needs=("torch", "transformers"),
    statement="on each pretrained model (SmolLM2-135M and Gemma 3 270M), the residual stream at the last token of 'Facts about {country}' "
    "after the middle layer (15 of 30 for SmolLM2, 9 of 18 for Gemma) has held-out (5-fold) ridge R^2 >= 0.1 at every seed on the "
    "concatenated unembedding vectors of the country's capital, continent, currency "
    "and language tokens",
    # 6 draws: with 3, an every-draw rule passes 1/8 of the time with R^2 on its threshold (verify
    # oc on the pilot record of base seed 100: 0.12); with 6, 1/64. The states are computed once
    quick={"k_folds": 5, "threshold": 0.1, "seeds": 6, "pairing": "true", "weights": "pretrained"},
    seed_rule="every draw of S, ..., S+seeds-1 (each draws the 5 folds and the control's permutation; "
    "the states do not depend on the seed): the R^2 at the middle layer of every draw must clear "
    "the threshold; measured = every draw's value",
    controls=[
        Control(
            "shuffled_attributes",
            {"pairing": "shuffled"},
            "each relation's answers permuted across countries: the features no longer "
            "belong to the subject, so no variance can be explained",
        ),
        RANDOM,
    ],
)
def superposition_ridge(params, ctx):
    from constructions.lm.probes import attribute_r2, unembedding
    from verify.criteria import EverySeed, all_of

    # countries paired with their own attributes, or shuffled across them (shuffled_attributes)
    shuffle = choice(params, "pairing", ("true", "shuffled")) == "shuffled"
    rand = uses_random_weights(params)

    def one(spec):
        model, _, info = load_lm(ctx, spec, rand)
        table, token_of = _attribute_table(ctx, spec)
        states = _subject_states(ctx, spec, rand, [s for s, _ in table])
        U = unembedding(model, [t for tokens in token_of.values() for t in tokens.values()])
        middle = (states.shape[1] - 1) // 2
        per_seed = {}
        for sd in ctx.seeds(params["seeds"]):
            gen = rng_for(sd, "hopfield.lm_probes.attribute_r2")
            per_seed[sd] = attribute_r2(U, states, table, token_of, gen, params["k_folds"], shuffle=shuffle)
        mids = {str(sd): r2[middle] for sd, r2 in per_seed.items()}
        r2 = np.mean(list(per_seed.values()), axis=0).tolist()
        # every draw of the folds (and of the control's permutation) is one replicate
        rule = EverySeed("r2_middle", params["threshold"], ">=", "convention", unit="draws")
        judgement = all_of(
            r2_middle=rule.judge([float(v) for v in mids.values()], seeds=[int(k) for k in mids])
        )
        details = {
            "model": info,
            "r2_by_layer": r2,
            "middle_layer": middle,
            "r2_middle_per_seed": mids,
            "r2_by_layer_per_seed": {str(k): v for k, v in per_seed.items()},
            "best_layer": int(np.argmax(r2)),
            "subjects": len(table),
            "attributes": list(ATTRIBUTES),
            "shuffled": shuffle,
        }
        return judgement, details

    return per_model_outcome(f"R^2 at the middle layer >= {params['threshold']} at every seed", one)


@shared
def _zero_shot_known(ctx, spec: str, template: str, facts: list) -> list:
    """Which facts of a relation the REAL model ``spec`` answers right zero-shot."""
    from constructions.lm.probes import zero_shot_known

    enc, pairs, _ = prepared_encoder(ctx, spec, template, facts)
    return zero_shot_known(load_lm(ctx, spec)[0], enc, pairs, ctx.device)


@shared
def _override_draw(
    ctx, spec: str, template: str, facts: list, draw: int, reps: list, n_prompts: int, random_weights: bool
) -> tuple:
    """(facts drawn, facts looked at, rows) of the override probe at one draw: up to ``n_prompts``
    facts the real model knows, probed on it or (the control) on its seeded random twin."""
    from constructions.lm.probes import known_facts, override_probe

    enc, pairs, _ = prepared_encoder(ctx, spec, template, facts)
    knows = _zero_shot_known(ctx, spec, template, facts)
    gen = rng_for(draw, "hopfield.lm_probes.known_facts")
    known, tried = known_facts(load_lm(ctx, spec)[0], enc, pairs, gen, n_prompts, ctx.device, knows)
    rows = override_probe(
        load_lm(ctx, spec, random_weights)[0],
        enc,
        known,
        [a for _, a in pairs],
        reps,
        rng_for(draw, "hopfield.lm_probes.override_probe"),
        n_prompts,
        ctx.device,
        # the other-subject control reads the first draw only (no criterion reads these rows on
        # random weights): the passes run there only
        other_context=not random_weights and draw == ctx.seed,
    )
    return len(known), tried, [dict(r, seed=draw) for r in rows]


def override_rows(ctx, spec: str, params: dict, random_weights: bool) -> dict:
    """The override probe of one model (rows of every draw), shared by context_override and
    override_second_order and their controls: the facts are those the REAL model knows zero-shot;
    the random-weights control is probed on the same facts.

    >>> from verify.claims import Context
    >>> override_rows(Context(), "no-such-model-folder", {"relation": "capital"}, False)
    Traceback (most recent call last):
    ...
    ValueError: model path 'no-such-model-folder' not found: ...
    """
    from constructions.hopfield.lm import read_facts

    relations, templates = read_facts(facts_file())
    template, facts = templates[params["relation"]], relations[params["relation"]]
    _, pairs, tokenisation = prepared_encoder(ctx, spec, template, facts)
    knows = _zero_shot_known(ctx, spec, template, facts)
    draws = [
        _override_draw(ctx, spec, template, facts, sd, params["reps"], params["n_prompts"], random_weights)
        for sd in ctx.seeds(params["seeds"])
    ]
    return {
        "rows": [r for _, _, rows in draws for r in rows],
        "info": load_lm(ctx, spec, random_weights)[2],
        "known_facts": sum(d[0] for d in draws),
        "facts_tried": sum(d[1] for d in draws),
        "tokenisation": tokenisation,
        "zero_shot_known_rate": float(np.mean(knows)),
        "facts_of_relation": len(pairs),
    }


@claim(
    "hopfield.lm.context_override",
    source=f"{ICRECALL} and {HOPFIELD}: context against stored "
    "facts, probed on a real model (our operationalisation)",
    provenance="derived",
    needs=("torch", "transformers"),
    statement="on each pretrained model (SmolLM2-135M and Gemma 3 270M), for capitals it knows zero-shot, the counterfactual context 'In "
    "this story, the capital of X is Y.' repeated 4 times makes argmax over the "
    "capitals equal Y in >= 50% of prompts, and the first-order prediction "
    "argmax_C(l0 + b) == Y agrees with the model's choice in >= 70% of (prompt, n >= 1) pairs",
    quick={
        "relation": "capital",
        "n_prompts": 4,
        "reps": [0, 1, 2, 4],
        "min_override": 0.5,
        "min_agreement": 0.7,
        "seeds": 6,
        "bias_from": "own prompt",
        "weights": "pretrained",
    },
    full={
        "relation": "capital",
        "n_prompts": 12,
        "reps": [0, 1, 2, 3, 4],
        "min_override": 0.5,
        "min_agreement": 0.7,
        "seeds": 10,
        "bias_from": "own prompt",
        "weights": "pretrained",
    },
    seed_rule="pooled over the seeds S, S+1, ... (each draws n_prompts known capitals and their "
    "counterfactual answers; a fact may recur across seeds): rates over all drawn "
    "prompts, each the mean of the seeds' own rates (in the details as 'per_draw <model> "
    "<quantity>'); each seed's own summary in details['per_seed']",
    controls=[
        Control(
            "other_prompt_bias",
            {"bias_from": "another prompt"},
            "b from another prompt's context (another country and counterfactual): it "
            "must not predict this prompt's override",
        ),
        RANDOM_ONE_DRAW,
    ],
)
def context_override(params, ctx):
    from constructions.lm.probes import override_summary
    from verify.criteria import Threshold, all_of

    # another prompt: the control other_prompt_bias
    own_bias = choice(params, "bias_from", ("own prompt", "another prompt")) == "own prompt"
    bias_from = "own" if own_bias else "other"
    rand = uses_random_weights(params)

    def one(spec):
        got = override_rows(ctx, spec, params, rand)
        rows = got["rows"]
        s = override_summary(rows, bias_from)
        per_seed = {
            str(sd): override_summary([r for r in rows if r["seed"] == sd], bias_from)
            for sd in ctx.seeds(params["seeds"])
        }
        judgement = all_of(
            override=Threshold("override_at_max", params["min_override"], ">=", "convention").judge(
                s["override_at_max"]
            ),
            agreement=Threshold("agreement", params["min_agreement"], ">=", "convention").judge(
                s["agreement_with_context"]
            ),
        )
        details = {
            "model": got["info"],
            "summary": s,
            "per_seed": per_seed,
            "rows": rows,
            **{k: got[k] for k in ("known_facts", "facts_tried", "tokenisation", "zero_shot_known_rate")},
            "facts_of_relation": got["facts_of_relation"],
        }
        return judgement, details

    out = per_model_outcome(
        f"override at the largest n >= {params['min_override']}, agreement >= {params['min_agreement']}", one
    )
    return with_per_draw(
        out, params, ctx, {"override_at_max": "override_at_max", "agreement": "agreement_with_context"}
    )


def with_per_draw(out, params, ctx, quantities: dict):
    """``out`` (a :func:`per_model_outcome`) with each model's per-draw values of each judged
    quantity at the top of its details, as ``"per_draw <model> <quantity>"``: one value per draw
    of the claim's ``seeds``, of which the pooled rate the threshold judges is the mean (every
    draw probes the same number of facts), so ``verify oc`` draws the rate from their spread.
    ``quantities`` maps the quantity's name in the criterion to its key in a draw's summary.

    >>> from verify.claims import Context, Outcome
    >>> out = Outcome(predicted="p", measured={}, passed=False,
    ...               details={"per_model": {"m": {"per_seed": {"0": {"r": 0.5}, "1": {"r": 1.0}}}}})
    >>> with_per_draw(out, {"seeds": 2}, Context(), {"rate": "r"}).details["per_draw m rate"]
    [0.5, 1.0]
    """
    import dataclasses

    if out.skipped or not isinstance(out.details, dict):
        return out
    extra = {}
    for spec, record in out.details.get("per_model", {}).items():
        per_seed = record.get("per_seed") or {}
        for name, key in quantities.items():
            extra[f"per_draw {spec} {name}"] = [
                float(per_seed[str(sd)][key]) for sd in ctx.seeds(params["seeds"]) if str(sd) in per_seed
            ]
    return dataclasses.replace(out, details={**out.details, **extra})


# story: whose counterfactual story precedes the query (another subject's: other_subject_context)
# the draws are override_second_order's replicates: 6 draws of 4 facts (24 facts, as the 3 draws
# of 8 before), the budget at which its every-draw rule passes at most 5% of the time with its
# margins on their thresholds (verify oc on the pilot record of base seed 100: 0.12 at 3 draws,
# 0.03 at 6); full 10 draws of 12 (120 facts, as 3 of 40). context_override probes the same draws
OVERRIDE_QUICK = {"relation": "capital", "n_prompts": 4, "reps": [0, 1, 2, 4], "seeds": 6}
OVERRIDE_QUICK.update(story="own subject", weights="pretrained")
OVERRIDE_FULL = dict(OVERRIDE_QUICK, n_prompts=12, seeds=10, reps=[0, 1, 2, 3, 4])


@claim(
    "hopfield.lm.override_second_order",
    source=f"{HOPFIELD}, abstract (the retrieval-gate loop: the query meets the context), probed on "
    "real models (our operationalisation)",
    provenance="derived",
    needs=("torch", "transformers"),
    statement="on Gemma 3 270M (the confirmation model; SmolLM2-135M, on which the statement was "
    "formed, is recorded as exploratory), for capitals the model knows zero-shot, the "
    "counterfactual context 'In this story, the capital of X is Y.' repeated 4 times makes the "
    "model answer Y for at least half of the facts (override rate >= 0.5), while the first-order "
    "prediction from the same context with a placeholder subject, argmax_C(l0 + b), predicts Y for "
    "at most a quarter (<= 0.25), on every draw: the override needs the query to meet the context",
    quick=OVERRIDE_QUICK,
    full=OVERRIDE_FULL,
    seed_rule="every draw of S, S+1, ..., S+seeds-1 (each draws n_prompts capitals the model knows and their "
    "counterfactual answers; a fact may recur across draws), judged at 4 repetitions on margins that "
    "decide the rates on each draw: the ceil(n/2)-th largest margin of Y over the best other capital "
    "must be > 0 (override rate >= 0.5) and the (floor(n/4)+1)-th largest first-order margin <= 0 "
    "(predicted rate <= 0.25) on every draw; the controls read the first draw only",
    controls=[
        RANDOM_ONE_DRAW,
        Control(
            "other_subject_context",
            {"story": "another subject", "seeds": 1},
            "the counterfactual story of another subject (its Y') before this fact's query (first "
            "draw only): if the model answers Y' as often, the override is copying, not the query "
            "meeting the context",
        ),
    ],
)
def override_second_order(params, ctx):
    from constructions.lm.probes import override_summary
    from verify.hopfield.lm_statements import override_margin_judgement

    own_story = choice(params, "story", ("own subject", "another subject")) == "own subject"
    keys = ("follows", "predicted") if own_story else ("follows_other_context", "predicted_other_context")
    rand = uses_random_weights(params)

    def one(spec):
        got = override_rows(ctx, spec, params, rand)
        judgement = override_margin_judgement(got["rows"], *keys)
        top = max(params["reps"])
        other = [
            r["follows_other_context"] for r in got["rows"] if r["n"] == top and "follows_other_context" in r
        ]
        details = {
            "model": got["info"],
            "summary": override_summary(got["rows"]),
            # None where no row at the top repetition count ran the other subject's story
            "other_subject_context_rate": float(np.mean(other)) if other else None,
            **{k: got[k] for k in ("known_facts", "facts_tried", "zero_shot_known_rate")},
        }
        return judgement, details

    return per_model_outcome(
        "override rate >= 0.5 and first-order predicted rate <= 0.25 at 4 repetitions",
        one,
        judged_roles=("confirmation",),
    )
