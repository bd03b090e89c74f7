"""The hopfield language-model probe's pipeline check on a tiny random Llama (docs/hopfield.md).

hopfield.lm.probe_pipeline builds a tiny randomly initialised Llama locally (no download) and checks
the metric identities of the probe, including r = 1 and agreement = 1 on an additive stub; its
control makes the stub interact. [derived]: our operationalisation. The real-weight claims that use
the same probe are in verify/hopfield/lm.py (registered after this one).
"""

from __future__ import annotations

import numpy as np

from theory.papers import paper
from verify.claims import Control, Outcome, claim, rng_for, shared
from verify.criteria import Agreement, all_of
from verify.hopfield.lm_setup import _transformers_missing

PAPER = paper("hopfield")


@shared
def _tiny_run(ctx, n_pairs: int, k_demo: int, run: int) -> tuple:
    """(probe rows, prompts, answers) of the tiny random Llama (float64) of ``ctx.seed``; ``run`` 2
    rebuilds the model and the prompts from the seed, for the determinism check. The two runs do
    not depend on the stub's interaction: the control reuses the claim's."""
    from constructions.hopfield.lm import (
        ANSWER_IDS,
        SUBJECT_IDS,
        SyntheticEncoder,
        probe,
        relational_prompts,
        tiny_llama,
    )

    gen = rng_for(ctx.seed, "hopfield.lm_pipeline.gen")
    subjects = gen.choice(list(SUBJECT_IDS), size=n_pairs, replace=False)
    answers = gen.choice(list(ANSWER_IDS), size=n_pairs, replace=False)
    pairs = list(zip(subjects.tolist(), answers.tolist()))
    prompts = relational_prompts(pairs, k_demo, gen)
    model = tiny_llama(ctx.seed, "float64")
    return probe(model, SyntheticEncoder(), prompts, answers.tolist()), prompts, answers


@claim(
    "hopfield.lm.probe_pipeline",
    source=f"{PAPER}, Llama-3 probe (our operationalisation, docs/hopfield.md)",
    provenance="derived",
    needs=("torch", "transformers"),
    statement="on a tiny random Llama the probe runs end to end with finite outputs, identical "
    "across 2 runs, 1 <= PR <= |C| and 0 < m_C <= 1 for every prompt; on the additive "
    "stub q(query) + h(context), r = 1 and top-1 agreement = 1",
    quick={"n_pairs": 10, "k_demo": 4, "interaction": 0.0},
    kind="identity",
    independence="the stub's r = 1 and agreement = 1 follow by algebra from its additive form "
    "(l_f - l0 = h, b = h - mean h); the probe computes them from three forward passes "
    "through generic code that does not know the form",
    controls=[
        Control(
            "interacting_stub",
            {"interaction": 1.0},
            "the stub's logits get a query-context interaction q * h: l_f - l0 is no "
            "longer the context bias, so r = 1 and agreement = 1 must fail",
        )
    ],
)
def lm_probe_pipeline(params, ctx):
    missing = _transformers_missing()
    if missing:
        return Outcome(predicted="identities hold", measured=None, passed=False, skipped=missing)
    from constructions.hopfield.lm import SyntheticEncoder, additive_stub, probe

    rows, prompts, answers = _tiny_run(ctx, params["n_pairs"], params["k_demo"], 1)
    # second run (model rebuilt from the seed, same prompts, same batches): must be bit-identical
    again, _, _ = _tiny_run(ctx, params["n_pairs"], params["k_demo"], 2)
    differing = [
        k
        for k in rows
        if isinstance(rows[k], list) and not np.array_equal(np.asarray(rows[k]), np.asarray(again[k]))
    ]
    nc = rows["n_candidates"]
    pr_out = sum(not 1 - 1e-12 <= v <= nc + 1e-9 for v in rows["pr0"] + rows["prf"])
    mass_out = sum(not 0 < v <= 1 + 1e-12 for v in rows["mass0"] + rows["massf"])
    stub = probe(
        additive_stub(512, ctx.seed, params["interaction"]), SyntheticEncoder(), prompts, answers.tolist()
    )
    stub_r, stub_agree = min(stub["r"]), min(stub["agree"])
    judgement = all_of(
        deterministic=Agreement("result series differing between the two runs", 0).judge(len(differing)),
        pr_in_range=Agreement("prompts with PR outside [1, |C|] (round-off 1e-12, 1e-9)", 0).judge(pr_out),
        mass_in_range=Agreement("prompts with m_C outside (0, 1] (round-off 1e-12)", 0).judge(mass_out),
        stub_r=Agreement("stub min r - 1", 1e-9).judge(stub_r - 1.0),
        stub_agreement=Agreement("stub min top-1 agreement - 1", 0).judge(stub_agree - 1.0),
    )
    return judgement, {
        "model": "tiny random Llama (no real weights)",
        "rows": rows,
        "n_candidates": nc,
        "differing_between_runs": differing,
    }
