"""What the hopfield lm claim modules share (verify.hopfield.lm and .lm_probes): the models the
claims run on, loaded once per run (:func:`load_lm`, a :func:`verify.claims.shared` measurement),
each relation's tokenisation, the random-weights control and the judgement of a statement across
models. Registers no claim."""

from __future__ import annotations

import dataclasses
import os

from verify.claims import Control, Outcome, choice, shared

MODEL_ENV, PAIRS_ENV = "RECALL_LM_MODEL", "RECALL_LM_PAIRS"


def _transformers_missing() -> str | None:
    try:
        import transformers  # noqa: F401
    except ImportError as exc:
        return f"transformers is not installed (pip install 'recall-bounds[lm]'): {exc}"
    return None


@shared
def load_lm(ctx, spec: str, random_weights: bool = False) -> tuple:
    """(model, tokenizer, info) of one lm model on ``ctx.device``, loaded once per run; with
    ``random_weights`` the same architecture with random weights seeded with ``ctx.seed`` (the
    control), built from the loaded model.

    >>> from verify.claims import Context
    >>> load_lm(Context(), "no-such-model-folder")
    Traceback (most recent call last):
    ...
    ValueError: model path 'no-such-model-folder' not found: ...
    """
    from constructions.lm.load import load_model, random_like

    if not random_weights:
        return load_model(spec, ctx.device)
    model, tok, info = load_lm(ctx, spec)
    return (
        random_like(model, ctx.seed),
        tok,
        dict(info, model=f"RANDOM WEIGHTS (seed {ctx.seed}) in the architecture of {info['model']}"),
    )


@shared
def prepared_encoder(ctx, spec: str, template: str, pairs: list) -> tuple:
    """(encoder, kept pairs, tokenisation report) of ``TextEncoder(tokenizer, template).prepare(pairs)``
    with the tokenizer of the model ``spec`` (:func:`load_lm`), once per run for every lm claim and
    control that reads the same relation. Tokenisation is deterministic: a shared encoder holds the
    tokens a fresh one would.

    >>> from verify.claims import Context
    >>> prepared_encoder(Context(), "no-such-model-folder", "{s} ->", [("France", "Paris")])
    Traceback (most recent call last):
    ...
    ValueError: model path 'no-such-model-folder' not found: ...
    """
    from constructions.lm.text import TextEncoder

    encoder = TextEncoder(load_lm(ctx, spec)[1], template)
    kept, report = encoder.prepare(pairs)
    return encoder, kept, report


def facts_file() -> str:
    """The facts file the lm claims read: RECALL_LM_PAIRS, else the one shipped with the package.

    >>> facts_file().endswith("facts.tsv") or PAIRS_ENV in os.environ
    True
    """
    from constructions.hopfield.lm import facts_path

    return os.environ.get(PAIRS_ENV) or facts_path()


WEIGHTS = ("pretrained", "random")  # the parameter "weights" of every lm claim; random: the control
RANDOM = Control(
    "random_weights",
    {"weights": "random"},
    "the same architecture with seeded random N(0, 0.02) weights stores no fact: a "
    "criterion that also holds there does not measure recall",
)


def uses_random_weights(params) -> bool:
    """Whether the claim runs on seeded random weights (the control) rather than the pretrained
    ones: the parameter ``weights``, one of :data:`WEIGHTS`.

    >>> uses_random_weights({"weights": "pretrained"}), uses_random_weights(RANDOM.params)
    (False, True)
    """
    return choice(params, "weights", WEIGHTS) == "random"


#: the random-weights control of a claim pooled over three draws, on the first draw only
RANDOM_ONE_DRAW = Control(RANDOM.name, {**RANDOM.params, "seeds": 1}, RANDOM.why + " (first draw only)")
#: the random-weights control of a claim judged over its draws: every draw, one prompt per relation
#: and draw (a Student-t interval over the draws needs them all; one prompt keeps its cost small)
RANDOM_ONE_PROMPT = Control(
    RANDOM.name, {**RANDOM.params, "max_prompts": 1}, RANDOM.why + " (one prompt per relation and draw)"
)


def lm_models() -> tuple[list[str] | None, str | None]:
    """(model specs, None) the lm claims run on, or (None, the reason they cannot run here).

    By default every claim runs on both pretrained models
    (:data:`constructions.lm.load.DEFAULT_MODELS`); a model that is not installed makes the claim
    a skip that names the install command. ``RECALL_LM_MODEL`` (specs separated by commas) names
    other models instead.

    >>> specs, reason = lm_models()
    >>> (specs is None) != (reason is None)
    True
    """
    from constructions.lm.load import ALIASES, model_specs

    missing = _transformers_missing()
    if missing:
        return None, missing
    specs, absent = model_specs()
    if absent:
        return None, (
            "the lm claims run on both pretrained models; not installed: "
            + "; ".join(f"{a} ({ALIASES[a].install})" for a in absent)
            + f". Or set {MODEL_ENV} to the models to run on (an alias, a .gguf file or a local folder)"
        )
    if not specs:
        return None, f"no model: {MODEL_ENV} names none"
    return specs, None


def per_model_outcome(
    predicted: str, judge_one, judged_roles: tuple = ("exploration", "confirmation", "given")
) -> Outcome:
    """Run ``judge_one(spec) -> (Judgement, details)`` on every lm model and combine: the claim is
    judged on the models whose role is in ``judged_roles`` (all of them must pass) and every
    model's verdict and numbers are kept in ``details["per_model"]``; a model not judged is marked
    exploratory. Models named by the user (role "given") are judged whatever the roles.

    >>> from verify.hopfield.lm_statements import Part, judge_parts
    >>> os.environ[MODEL_ENV] = "my-model"
    >>> out = per_model_outcome("acc >= 0.5", lambda spec: (judge_parts({Part("acc", 0.5): [1.0] * 9}, 0), {}))
    >>> out.passed, out.details["judged_on"], out.measured["my-model"]["verdict"]
    (True, ['my-model'], 'pass')
    >>> del os.environ[MODEL_ENV]
    """
    from constructions.lm.load import model_role
    from verify.hopfield.lm_statements import across_models, verdict_of

    specs, reason = lm_models()
    if reason:
        return Outcome(predicted=predicted, measured=None, passed=False, skipped=reason)
    judged_on = [s for s in specs if model_role(s) in judged_roles or model_role(s) == "given"]
    judged_on = judged_on or specs
    per_model, records, dtype = {}, {}, None
    for spec in specs:
        judgement, details = judge_one(spec)
        per_model[spec] = judgement
        dtype = details.get("model", {}).get("dtype", dtype)
        records[spec] = {
            **verdict_of(judgement),
            "role": model_role(spec),
            "judged": spec in judged_on,
            **({} if spec in judged_on else {"exploratory": True}),
            **details,
        }
    overall = across_models(per_model, judged_on)
    out = Outcome.judged(overall, details={"per_model": records, "judged_on": judged_on}, dtype=dtype)
    # the prediction in the criterion's form, beside the measurement of every judged model (what
    # ``verify oc`` rebuilds the rule from), with the rule's text
    return dataclasses.replace(
        out,
        predicted={"rule": f"{predicted} on {', '.join(judged_on)}", **dict(overall.predicted)},
        measured={spec: {"verdict": j.verdict, **dict(j.measured)} for spec, j in per_model.items()},
    )
