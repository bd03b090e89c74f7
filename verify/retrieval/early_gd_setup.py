"""What verify.retrieval.early_gd shares with .gd_capacity and .mlp_product: the test-set size and
the cached three-step model. Registers no claim."""

from __future__ import annotations

from constructions.retrieval.gd import three_steps_closed_form
from constructions.retrieval.task import make_retrieval_task, sample_sequences
from verify.claims import rng_for

N_TEST = 4096


def trained(ctx, V, d, L, N, lr_value, lr_attn, mlp_width=None, seed=None):
    """Task, three-step iterates (closed form) and a fresh test set, shared across claims."""
    seed = ctx.seed if seed is None else seed

    def compute():
        rng = rng_for(int(seed), "retrieval.early_gd.trained.rng", V, d, L, N, mlp_width or 0)
        task = make_retrieval_task(V, d, rng, mlp_width=mlp_width)
        data = sample_sequences(task, L, N, rng)
        test = sample_sequences(task, L, N_TEST, rng)
        return task, three_steps_closed_form(data, lr_value, lr_attn), test

    return ctx.shared(("retrieval.trained", V, d, L, N, lr_value, lr_attn, mlp_width, seed), compute)
