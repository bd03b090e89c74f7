"""The one place a seed becomes a random stream (README.md#layout): numpy Generators by
:func:`rng_for`, torch Generators by :func:`torch_generator`, and the table of named salts.

A claim's draws are ``rng_for(seed, name, *ints)``: the base seed, a named salt from :data:`SALTS`
(which stream: ``<module>.<function>.<what is drawn>``, the function left out where the module
has one such stream) and the integers that tell draws apart (a size, a draw index). The names are
a table, so two streams cannot share a salt unnoticed; the values are the integers each stream
used before it had a name, and never change, so no stored record moves.
``tests/test_seeding.py`` fails on a direct ``numpy.random.default_rng`` or ``manual_seed`` call
anywhere else in the project, and on a name that is not in the table.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

#: salt name -> the integer it stands for (values fixed: changing one moves every record drawn from it)
SALTS: Mapping[str, int] = {
    "atlas.chapters_bank.stream": 59,
    "atlas.chapters_toy.stream": 61,
    "atlas.multihop.make_bijections": 1,
    "chapters.leak.make_copy_batch": 99,
    "chapters.leak.train_copy": 1,
    "chapters.memory.integers": 8,
    "chapters.memory.rng": 7,
    "chapters.router_arith.rng_C_B": 1,
    "chapters.toy.phase1.make_mixed_batches": 12,
    "chapters.toy.phase2.make_mixed_batches": 13,
    "chapters.toy.rng": 11,
    "criteria_seeds.staged_rates": 7927,
    "fact_mlp.capacity.build_encoder_decoder": 16,
    "fact_mlp.capacity.draw.rng": 11,
    "fact_mlp.capacity.fact_set": 12,
    "fact_mlp.capacity.smallest_storing_code_dim.rng": 15,
    "fact_mlp.capacity.spherical": 14,
    "fact_mlp.compare.capacity_point.ntk_memory": 52,
    "fact_mlp.compare.fact_set": 60,
    "fact_mlp.compare.hebbian_readout": 53,
    "fact_mlp.compare.ratio_draw.ntk_memory": 62,
    "fact_mlp.compare.rng": 51,
    "fact_mlp.decodability.grid_directions": 2,
    "fact_mlp.decodability.rng": 3,
    "fact_mlp.decodability.values": 1,
    "fact_mlp.decoder.draws_ok": 5,
    "fact_mlp.decoder.half_success_dim": 6,
    "fact_mlp.decoder.spherical": 8,
    "fact_mlp.decoder_scaling.check_b2_pair_tail.rng": 94,
    "fact_mlp.decoder_scaling.check_mc_rho_scaling.rng": 91,
    "fact_mlp.decoder_scaling.check_mc_rho_scaling.smallest_code_dim": 93,
    "fact_mlp.decoder_scaling.check_mc_rho_scaling.spherical": 92,
    "fact_mlp.decoder_scaling.mc_star.smallest_code_dim": 7,
    "fact_mlp.decoder_scaling.mc_star.spherical": 8,
    "fact_mlp.decoder_scaling.paired_mc_star.random_projection": 157,
    "fact_mlp.edit.edit_fact_map": 81,
    "fact_mlp.edit_equal.edit_fact_map": 82,
    "fact_mlp.large.fact_set": 17,
    "fact_mlp.large.rng": 23,
    "fact_mlp.transformer.attention_first.train_attention": 74,
    "fact_mlp.transformer.build_encoder_decoder": 72,
    "fact_mlp.transformer.evaluation_contexts": 73,
    "fact_mlp.transformer.lipschitz": 77,
    "fact_mlp.transformer.mlp_first.train_attention": 75,
    "fact_mlp.transformer.recall_task": 71,
    "fact_mlp.transformer.rng": 76,
    "fact_mlp.transformer_fails.build_encoder_decoder": 79,
    "fact_mlp.transformer_fails.recall_task": 78,
    "fact_mlp.usability.check_gd_fits.fact_set": 21,
    "fact_mlp.usability.check_margin_equiv.rng": 31,
    "fact_mlp.usability.drops.rng": 44,
    "fact_mlp.usability.gd_facts.fact_set": 22,
    "fact_mlp.usability.hebbian_pair.fact_set": 41,
    "fact_mlp.usability.hebbian_readout": 42,
    "fact_mlp.usability.lipschitz": 43,
    "geometric.depth.build_nocot_model": 3,
    "geometric.depth.make_bijections": 1,
    "geometric.gd.control_perms.make_bijections": 13,
    "geometric.gd.model_perms.make_bijections": 11,
    "geometric.gd.probe_r2": 12,
    "geometric.gd_threshold.make_bijections": 17,
    "geometric.gd_transfer.make_bijections": 14,
    "geometric.gd_transfer.rng": 16,
    "geometric.gd_transfer.standard_normal": 15,
    "geometric.multihop.build_block_model": 2,
    "geometric.multihop.build_nocot_model": 2,
    "geometric.multihop.make_bijections": 1,
    "geometric.multihop.multi_hop_queries": 3,
    "geometric.scaling.make_bijections": 9,
    "geometric.scaling_setup.window_codes": 20,
    "geometric.single_hop.build_block_model": 2,
    "geometric.single_hop.make_bijections": 1,
    "geometric.single_hop_variants.build_block_model": 2,
    "geometric.single_hop_variants.build_rotation_model": 3,
    "geometric.single_hop_variants.make_bijections": 1,
    "geometric.single_hop_variants.new_perms": 4,
    "hopfield.capacity.all_retrieved.gen": 17,
    "hopfield.capacity.sweep.gen": 15,
    "hopfield.capacity_kappa.sweep.gen": 10,
    "hopfield.fixed_point.decomposition_orders.gen": 23,
    "hopfield.fixed_point.first_order_top1.gen": 24,
    "hopfield.fixed_point.fixed_point_unique.gen": 21,
    "hopfield.fixed_point.uniform": 22,
    "hopfield.gating.context_subspace.gen": 16,
    "hopfield.gating.gate_exponential.gen": 13,
    "hopfield.gating.gated_error_bound.gen": 11,
    "hopfield.gating.gated_separation_claim.gen": 12,
    "hopfield.lm_pipeline.gen": 31,
    "hopfield.lm_probes.attribute_r2": 41,
    "hopfield.lm_probes.known_facts": 43,
    "hopfield.lm_probes.override_probe": 44,
    "hopfield.lm_run.relational_prompts": 7,
    "hopfield.lm_statements.integers": 97,
    "hopfield.separation.error_exponential_in_beta.sphere_patterns": 5,
    "hopfield.separation.one_step_error.gen": 4,
    "hopfield.separation.r1_sweep.sphere_patterns": 3,
    "hopfield.separation.r2_contraction.gen": 6,
    "hopfield.separation.retrieval_grid.sphere_patterns": 3,
    "hopfield.sparsity.gen": 14,
    "hopfield.storing_dim.stream": 41,
    "hopfield.trained_dim.stream": 43,
    "hopfield.ungated.clustered_patterns": 2,
    "hopfield.ungated.gen": 1,
    "hopfield.ungated.sphere_patterns": 2,
    "icrecall.finetune.make_world": 71,
    "icrecall.finetune.setup.sample_icrecall": 72,
    "icrecall.finetune.train_run.sample_icrecall": 73,
    "icrecall.handset.sample_icrecall": 19,
    "icrecall.handset_context.sample_icrecall": 19,
    "icrecall.memories.make_world": 61,
    "icrecall.memories.rng": 13,
    "icrecall.memories.sample_direct": 17,
    "icrecall.memories.shuffled_table": 18,
    "icrecall.memories.unit_directions": 11,
    "icrecall.pretrained.make_world": 81,
    "icrecall.pretrained.pretrain_memory": 82,
    "icrecall.pretrained.test": 83,
    "icrecall.pretrained.train": 84,
    "measure.rng": 7919,
    "retrieval.early_gd.gd_closed_form.rng": 1,
    "retrieval.early_gd.trained.rng": 9,
    "retrieval.early_gd.uniform_attention.rng": 2,
    "retrieval.gd_capacity.rng": 13,
    "retrieval.lower.bracket_point": 7,
    "retrieval.scaling.permutation": 77,
}


def salt_value(salt: int | str) -> int:
    """The integer of a salt: a name of :data:`SALTS`, or an integer as it is.

    >>> salt_value("measure.rng"), salt_value(3)
    (7919, 3)
    >>> salt_value("no.such.stream")
    Traceback (most recent call last):
    ...
    KeyError: "salt 'no.such.stream' is not in constructions.seeding.SALTS"
    """
    if isinstance(salt, str):
        try:
            return SALTS[salt]
        except KeyError:
            raise KeyError(f"salt {salt!r} is not in constructions.seeding.SALTS") from None
    if isinstance(salt, (bool, float)) or not isinstance(salt, (int, np.integer)):
        raise TypeError(f"a salt is a name of SALTS or an integer, got {salt!r}")
    return int(salt)


def rng_for(seed: int, *salt: int | str) -> np.random.Generator:
    """The numpy Generator of (seed, *salt), salts named in :data:`SALTS` or integers: the one
    place the project turns a seed into a numpy stream (``rng_for(s)`` is
    ``numpy.random.default_rng(s)``).

    >>> float(rng_for(5).random()) == float(np.random.default_rng(5).random())
    True
    >>> int(rng_for(0, "measure.rng").integers(10**6)) == int(rng_for(0, 7919).integers(10**6))
    True
    """
    return np.random.default_rng([int(seed), *[salt_value(s) for s in salt]])


def rng_at(state: Mapping) -> np.random.Generator:
    """A numpy Generator resumed where another stopped (its ``bit_generator.state``), so a shared
    draw's continuation is the stream it would have been without the cache.

    >>> a = rng_for(3); _ = a.random(); b = rng_at(a.bit_generator.state)
    >>> float(a.random()) == float(b.random())
    True
    """
    gen = np.random.default_rng()
    gen.bit_generator.state = dict(state)
    return gen


def torch_generator(seed: int, device: str = "cpu"):
    """A torch Generator on ``device`` seeded with ``seed``: the one place a seed becomes a torch
    stream.

    >>> import torch
    >>> bool(torch.equal(torch.rand(3, generator=torch_generator(4)),
    ...                  torch.rand(3, generator=torch.Generator().manual_seed(4))))
    True
    """
    import torch

    gen = torch.Generator(device=device)
    gen.manual_seed(int(seed))
    return gen
