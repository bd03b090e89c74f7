"""What the hand-set pattern claim modules share (verify.icrecall.handset and
.handset_context): the world keys, the hand-set parameters and the shared per-seed accuracies of
the hand-set patterns. Registers no claim."""

from __future__ import annotations

import numpy as np

from constructions.icrecall.patterns import (
    PATTERNS,
    handset_pattern,
    mixed_input,
    pattern_accuracy,
    token_embeddings,
)
from constructions.icrecall.world import sample_icrecall, triplet_mlp
from verify.claims import rng_for
from verify.icrecall.memories_setup import DEFAULTS, _world

WORLD_KEYS = (
    "n_subj",
    "n_rel",
    "n_ans_per_rel",
    "dim",
    "rho",
    "theta",
    "logit_scale",
    "n_queries",
    "n_seeds",
)


def handset_accuracies(p, ctx, rho=None, mode="single", n_pairs=None, patterns=PATTERNS):
    """Per-seed accuracy of each hand-set pattern (omega = 2 / rho of the default rho), with the
    mean per pattern; ``rho`` overrides the world's alignment only (omega unchanged).

    Each (seed, pattern) accuracy is shared through ctx on its own (a claim asking for one pattern
    reuses it from a claim that asked for all five), and the patterns still to compute on a seed
    share its world, prompts and token embeddings: the same numbers as one evaluation each."""
    n = p["n_pairs"] if n_pairs is None else n_pairs
    world_key = (tuple(p[k] for k in WORLD_KEYS), rho, mode, n)
    key = ("icrecall.handset", *world_key, tuple(patterns), ctx.seed)

    def compute():
        out = {name: [] for name in patterns}
        for seed in ctx.seeds(p["n_seeds"]):
            inputs = {}  # world, memory, prompts and embeddings of this seed, built on first need

            def accuracy(name, seed=seed, inputs=inputs):
                if not inputs:
                    world = _world(p, seed, rho)
                    prompts = sample_icrecall(
                        world, n, p["n_queries"], rng_for(seed, "icrecall.handset.sample_icrecall", n), relation_mode=mode
                    )
                    inputs.update(
                        mlp=triplet_mlp(world, p["theta"]),
                        prompts=prompts,
                        X=token_embeddings(world, prompts),
                    )
                return pattern_accuracy(
                    inputs["mlp"],
                    inputs["prompts"],
                    handset_pattern(name, n),
                    2.0 / p["rho"],
                    p["logit_scale"],
                    X=inputs["X"],
                )

            for name in patterns:
                out[name].append(
                    ctx.shared(("icrecall.handset.pattern", *world_key, name, seed), lambda: accuracy(name))
                )
        return {name: float(np.mean(v)) for name, v in out.items()} | {"per_seed": out}

    return ctx.shared(key, compute)


def correct_preactivation(p, ctx, rho: float) -> list[float]:
    """Per seed, the mean over the prompts of the correct neuron's (s_q, r) pre-activation minus
    theta, <e_{s_q}, z> + <e_r, z> - theta, under the hand-set pairwise pattern with omega = 2 / rho
    of the default rho, in a world whose answers carry the relation with alignment ``rho``: the
    theory's quantity of relation_signal_boundary (noise-free 1 + rho / rho_0 - theta; the neuron
    fires iff rho > (theta - 1) rho_0). Same worlds and prompts as :func:`handset_accuracies`.

    >>> from verify.claims import Context
    >>> p = dict(HANDSET, n_queries=200, n_seeds=2)
    >>> [round(v, 1) for v in correct_preactivation(p, Context(seed=0), 2**-0.5)]
    [0.5, 0.5]
    """
    n = p["n_pairs"]

    def compute():
        out = []
        for seed in ctx.seeds(p["n_seeds"]):
            world = _world(p, seed, rho)
            prompts = sample_icrecall(world, n, p["n_queries"], rng_for(seed, "icrecall.handset.sample_icrecall", n), relation_mode="single")
            mlp = triplet_mlp(world, p["theta"])
            z = mixed_input(mlp, prompts, handset_pattern("pairwise", n), 2.0 / p["rho"])
            pre = np.einsum("kd,kd->k", z, world.subj[prompts.query]) + np.einsum(
                "kd,kd->k", z, world.rel[prompts.relation]
            )
            out.append(float(np.mean(pre)) - p["theta"])
        return out

    key = ("icrecall.handset.correct_preactivation", tuple(p[k] for k in WORLD_KEYS), n, rho, ctx.seed)
    return ctx.shared(key, compute)


HANDSET = dict(DEFAULTS, n_pairs=8, n_queries=2000, n_seeds=5)
HANDSET_FULL = dict(HANDSET, n_subj=20000, dim=512)
SEEDS5 = "mean over the 5 seeds seed..seed+4 (every per-seed value recorded)"
