"""What the hopfield lm claim modules share (verify.hopfield.lm and .lm_probes): the real model
spec, its once-per-run loading through ``ctx.shared`` and the random-weights control. Registers no
claim."""

from __future__ import annotations

import os

from verify.claims import Control

MODEL_ENV, PAIRS_ENV = "RECALL_LM_MODEL", "RECALL_LM_PAIRS"


def _transformers_missing() -> str | None:
    try:
        import transformers  # noqa: F401
    except ImportError as exc:
        return f"transformers is not installed (pip install 'recall-bounds[lm]'): {exc}"
    return None


def load_shared(spec, device, ctx=None, random_seed=None):
    """(model, tokenizer, info), loaded once per run through ``ctx.shared``; with ``random_seed``
    the same architecture with seeded random weights (the control)."""
    from constructions.lm.load import load_model, random_like

    def real():
        return load_model(spec, device)

    model, tok, info = ctx.shared(("lm.model", spec), real) if ctx is not None else real()
    if random_seed is None:
        return model, tok, info

    def rand():
        return (
            random_like(model, random_seed),
            tok,
            dict(info, model=f"RANDOM WEIGHTS (seed {random_seed}) in the architecture of {info['model']}"),
        )

    return ctx.shared(("lm.random", spec, int(random_seed)), rand) if ctx is not None else rand()


def prepared_encoder(tokenizer, template, pairs, ctx=None, model=None):
    """(encoder, kept pairs, tokenisation report) of ``TextEncoder(tokenizer, template).prepare(pairs)``,
    shared through ``ctx`` (keyed by the model name ``model``, whose tokenizer it is, the template
    and the facts) by every lm claim and control that reads the same relation; without ``ctx``,
    built here. Tokenisation is deterministic: a shared encoder holds the tokens a fresh one would."""
    from constructions.lm.text import TextEncoder

    def build():
        encoder = TextEncoder(tokenizer, template)
        kept, report = encoder.prepare(pairs)
        return encoder, kept, report

    if ctx is None:
        return build()
    return ctx.shared(("lm.encoder", model, template, tuple(map(tuple, pairs))), build)


def real_model_spec() -> tuple[str | None, str]:
    """(model spec, facts path): RECALL_LM_MODEL else ``smollm2`` when installed; RECALL_LM_PAIRS
    else the facts file shipped with the package."""
    from constructions.hopfield.lm import facts_path
    from constructions.lm.load import default_model_spec

    return default_model_spec(), os.environ.get(PAIRS_ENV) or facts_path()


RANDOM = Control(
    "random_weights",
    {"control": "random_weights"},
    "the same architecture with seeded random N(0, 0.02) weights stores no fact: a "
    "criterion that also holds there does not measure recall",
)
