"""Inputs of the public builders of constructions/ checked where they enter (theory/validate.py).

Sizes are integers: an integral float (4.0) or a numpy integer is the size 4 and builds exactly
what 4 builds; 2.5 and NaN are a ValueError, a truth value or text ('4') a TypeError, each naming
the parameter and the hypothesis (never truncated). A function that takes a fact set raises a
TypeError naming FactSet when given anything else (a list, a dict, a tuple of arrays). Sizes
whose arrays would not fit the memory budget (theory.validate.MEMORY_BUDGET_BYTES), or a
bisection over more candidates than constructions.search.MAX_CANDIDATES, are refused at once,
naming the parameters and the estimate, before anything large is allocated.
"""

from __future__ import annotations

import dataclasses
import re
import time
import tracemalloc
from functools import lru_cache
from typing import Any, Callable

import numpy as np
import pytest
import torch

from constructions.chapters import copy_task
from constructions.chapters import train as chapters_train
from constructions.fact_mlp import baselines, edit, encoder, facts, gd_batch, large, transformer
from constructions.geometric import codes, multihop, rotation, single_hop
from constructions.geometric import train as geometric_train
from constructions.hopfield import lm as hopfield_lm
from constructions.hopfield import networks, trained
from constructions.icrecall import model as icrecall_model
from constructions.icrecall import patterns, world
from constructions.measure import smallest_storing_size
from constructions.retrieval import lower, task
from constructions.search import MAX_CANDIDATES
from constructions.tasks import make_bijections
from theory.validate import MEMORY_BUDGET_BYTES


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


@lru_cache(maxsize=None)
def small_facts() -> facts.FactSet:
    return facts.fact_set(12, 4, 6, rng(0))


@lru_cache(maxsize=None)
def perms() -> np.ndarray:
    return make_bijections(6, 2, rng(0))


@lru_cache(maxsize=None)
def a_world() -> world.World:
    return world.make_world(8, 2, 3, 8, 0.5, rng(0))


@lru_cache(maxsize=None)
def a_retrieval_task() -> task.RetrievalTask:
    return task.make_retrieval_task(6, 8, rng(0))


def mlp_out(mlp) -> np.ndarray:
    return np.asarray(mlp.forward(small_facts().keys))


def large_out(**kw) -> np.ndarray:
    fs = small_facts()
    mlp = large.build_large(fs.keys, fs.values, fs.fact_map, **kw)
    return mlp.code(fs.keys) @ mlp.projection


def gd(**kw) -> np.ndarray:
    args = {"hidden": 6, "seed": 0, "epochs": 2, **kw}
    return mlp_out(baselines.train_gated_mlp(small_facts(), args.pop("hidden"), args.pop("seed"), **args))


def gd_batch_out(hidden=6, seed=0, epochs=2) -> np.ndarray:
    mlps = gd_batch.train_gated_mlp_batch([small_facts()], [hidden], [seed], epochs=epochs)
    return mlp_out(mlps[0])


def trained_memory(width) -> dict:
    gen = torch.Generator().manual_seed(0)
    return icrecall_model.TrainedMemory(a_world(), width, 1.0, gen).state_dict()


#: (builder.parameter, names the message may use for it, build(value) -> what it built). Every
#: builder is called with the value 4 for the parameter under test and small fixed other sizes.
CASES: list[tuple[str, str, Callable[[Any], Any]]] = [
    # fact_mlp: embeddings and fact sets
    ("spherical.n", "n", lambda v: facts.spherical(v, 3, rng())),
    ("spherical.d", "d", lambda v: facts.spherical(3, v, rng())),
    ("gaussian.n", "n", lambda v: facts.gaussian(v, 3, rng())),
    ("gaussian.d", "d", lambda v: facts.gaussian(3, v, rng())),
    ("clustered.n", "n", lambda v: facts.clustered(v, 3, rng())),
    ("clustered.n_clusters", "n_clusters", lambda v: facts.clustered(5, 3, rng(), n_clusters=v)),
    ("embed.n", "n", lambda v: facts.embed(v, 3, rng(), "spiked")),
    ("fact_set.n_facts", "n_facts", lambda v: facts.fact_set(v, 3, 5, rng()).keys),
    ("fact_set.n_values", "n_values", lambda v: facts.fact_set(5, v, 5, rng()).values),
    ("fact_set.d", "d", lambda v: facts.fact_set(5, 3, v, rng()).keys),
    # fact_mlp: the constructions and baselines
    ("build_encoder_decoder.code_dim", "code_dim", lambda v: mlp_out(encoder.build_encoder_decoder(small_facts(), v, rng(1)))),
    ("build_encoder_decoder.n_gates", "n_gates", lambda v: mlp_out(encoder.build_encoder_decoder(small_facts(), 6, rng(1), n_gates=v))),
    ("encoder_decoder_family.code_dims", "code_dim", lambda v: mlp_out(encoder.encoder_decoder_family(small_facts(), [v], rng(1))[0])),
    ("random_projection.code_dim", "code_dim", lambda v: encoder.random_projection(v, 5, rng())),
    ("covering_gates.n_gates", "n_gates", lambda v: encoder.covering_gates(small_facts().keys, v, rng())),
    ("build_large.code_dim", "code_dim", lambda v: large_out(code_dim=v)),
    ("build_large.bucket", "bucket", lambda v: large_out(bucket=v)),
    ("build_large.min_bucket", "min_bucket", lambda v: large_out(min_bucket=v)),
    ("build_large.seed", "seed", lambda v: large_out(seed=v)),
    ("ntk_memory.hidden", "hidden", lambda v: mlp_out(baselines.ntk_memory(small_facts(), v, rng()))),
    ("ntk_memory.degree", "degree", lambda v: mlp_out(baselines.ntk_memory(small_facts(), 8, rng(), degree=v))),
    ("hebbian_readout.hidden", "hidden", lambda v: mlp_out(baselines.hebbian_readout(small_facts(), v, rng(), True))),
    ("hermite.degree", "degree", lambda v: baselines.hermite(np.linspace(-1, 1, 5), v)),
    ("train_gated_mlp.hidden", "hidden", lambda v: gd(hidden=v)),
    ("train_gated_mlp.seed", "seed", lambda v: gd(seed=v)),
    ("train_gated_mlp.epochs", "epochs", lambda v: gd(epochs=v)),
    ("train_gated_mlp_batch.hidden", "hidden", lambda v: gd_batch_out(hidden=v)),
    ("train_gated_mlp_batch.seeds", "seeds", lambda v: gd_batch_out(seed=v)),
    ("train_gated_mlp_batch.epochs", "epochs", lambda v: gd_batch_out(epochs=v)),
    ("recall_task.n_facts", "n_facts", lambda v: transformer.recall_task(v, 4, rng()).embedding),
    ("recall_task.d_model", "d_model", lambda v: transformer.recall_task(4, v, rng()).embedding),
    ("recall_task.n_junk", "n_junk", lambda v: transformer.recall_task(4, 4, rng(), n_junk=v).embedding),
    ("recall_sequences.seq_len", "seq_len", lambda v: transformer.recall_sequences(transformer.recall_task(4, 4, rng()), [0, 1], v, rng())),
    ("edit_fact_map.n_edits", "n_edits", lambda v: edit.edit_fact_map(np.arange(6), v, rng())),
    # geometric
    ("make_bijections.n_subjects", "n_subjects", lambda v: make_bijections(v, 2, rng())),
    ("make_bijections.n_relations", "n_relations", lambda v: make_bijections(5, v, rng())),
    ("attribute_codes.n_attributes", "n_attributes", lambda v: codes.attribute_codes(v, 3, "spherical", rng())),
    ("attribute_codes.block_dim", "block_dim", lambda v: codes.attribute_codes(5, v, "rademacher", rng())),
    ("build_selector.n_relations", "n_relations", lambda v: single_hop.build_selector(v, 3).w_out),
    ("build_selector.block_dim", "block_dim", lambda v: single_hop.build_selector(2, v).w_out),
    ("build_block_model.block_dim", "block_dim", lambda v: single_hop.build_block_model(perms(), v, rng=rng()).margins(perms())),
    ("multi_hop_queries.n_hops", "n_hops", lambda v: multihop.multi_hop_queries(perms(), v, 5, rng())),
    ("multi_hop_queries.n_queries", "n_queries", lambda v: multihop.multi_hop_queries(perms(), 2, v, rng())),
    ("all_chains.n_relations", "n_relations", lambda v: multihop.all_chains(v, 2)),
    ("all_chains.n_hops", "n_hops", lambda v: multihop.all_chains(2, v)),
    ("all_multi_hop_queries.n_hops", "n_hops", lambda v: multihop.all_multi_hop_queries(perms(), v)),
    ("build_nocot_model.n_hops", "n_hops", lambda v: multihop.build_nocot_model(perms(), v, 3, rng=rng()).gate),
    ("build_rotation_model.dim", "dim", lambda v: rotation.build_rotation_model(perms(), v, rng()).rotations),
    ("init_params.dim", "dim", lambda v: geometric_train.init_params(6, 2, v, 5, torch.Generator().manual_seed(0))),
    ("init_params.mlp_width", "mlp_width", lambda v: geometric_train.init_params(6, 2, 3, v, torch.Generator().manual_seed(0))),
    ("train_model.steps", "steps", lambda v: geometric_train.train_model(perms(), 4, 4, steps=v, generator=torch.Generator().manual_seed(0)).params),
    # retrieval
    ("make_retrieval_task.vocab_size", "vocab_size", lambda v: task.make_retrieval_task(v, 8, rng()).emb),
    ("make_retrieval_task.d_model", "d_model", lambda v: task.make_retrieval_task(3, v, rng()).emb),
    ("make_retrieval_task.mlp_width", "mlp_width", lambda v: task.make_retrieval_task(3, 4, rng(), mlp_width=v).mlp),
    ("sample_sequences.seq_len", "seq_len", lambda v: task.sample_sequences(a_retrieval_task(), v, 3, rng()).tokens),
    ("sample_sequences.n_samples", "n_samples", lambda v: task.sample_sequences(a_retrieval_task(), 3, v, rng()).tokens),
    ("make_retrieval_data.n_samples", "n_samples", lambda v: task.make_retrieval_data(4, 8, 3, v, rng()).tokens),
    ("sample_cooccurrence_counts.n_samples", "n_samples", lambda v: task.sample_cooccurrence_counts(a_retrieval_task(), 3, v, rng())),
    ("sample_label_sums.vocab_size", "vocab_size", lambda v: lower.sample_label_sums(v, 8, 3, 10, rng())["sums"]),
    ("sample_label_sums.d_model", "d_model", lambda v: lower.sample_label_sums(5, v, 3, 10, rng())["sums"]),
    ("sample_label_sums.n_samples", "n_samples", lambda v: lower.sample_label_sums(5, 8, 3, v, rng())["sums"]),
    # icrecall
    ("make_world.n_subj", "n_subj", lambda v: world.make_world(v, 2, 3, 8, 0.5, rng()).ans),
    ("make_world.dim", "dim", lambda v: world.make_world(6, 2, 3, v, 0.5, rng()).ans),
    ("sample_icrecall.n_pairs", "n_pairs", lambda v: world.sample_icrecall(a_world(), v, 3, rng()).subjects),
    ("sample_icrecall.n_seq", "n_seq", lambda v: world.sample_icrecall(a_world(), 2, v, rng()).target),
    ("sample_direct.n_samples", "n_samples", lambda v: world.sample_direct(a_world(), v, rng())),
    ("handset_pattern.n_pairs", "n_pairs", lambda v: patterns.handset_pattern("pairwise", v)),
    ("TrainedMemory.width", "width", trained_memory),
    # chapters
    ("make_copy_batch.n_symbols", "n_symbols", lambda v: copy_task.make_copy_batch(v, 3, 2, rng())),
    ("make_copy_batch.half", "half", lambda v: copy_task.make_copy_batch(5, v, 2, rng())),
    ("make_copy_batch.batch", "batch", lambda v: copy_task.make_copy_batch(5, 3, v, rng())),
    ("copy_config.n_symbols", "n_symbols", lambda v: copy_task.copy_config(v)),
    ("make_fact_dataset.n_keys", "n_keys", lambda v: chapters_train.make_fact_dataset(v, 3, rng())),
    ("make_fact_dataset.n_values", "n_values", lambda v: chapters_train.make_fact_dataset(5, v, rng())),
    ("toy_configs.n_facts", "n_facts", lambda v: chapters_train.toy_configs(n_facts=v)),
    ("toy_configs.top_k", "top_k", lambda v: chapters_train.toy_configs(top_k=v)),
    ("chapters.build.seed", "seed", lambda v: chapters_train.build(chapters_train.toy_configs()[0], v).state_dict()),
    # hopfield (the paper's symbols: N patterns in dimension d)
    ("sphere_patterns.n_patterns", "N", lambda v: networks.sphere_patterns(v, 3, 1.0, rng())),
    ("sphere_patterns.dim", "d", lambda v: networks.sphere_patterns(5, v, 1.0, rng())),
    ("gaussian_patterns.n_patterns", "N", lambda v: networks.gaussian_patterns(v, 3, rng())),
    ("clustered_patterns.dim", "d", lambda v: networks.clustered_patterns(5, v, 1.0, 0.3, rng())),
    ("context_gates.n_active", "N_eff", lambda v: networks.context_gates(6, 0, v, 2.0, rng())),
    ("trained.problem.n_patterns", "N", lambda v: trained.problem(v, 3, 1.0, rng())),
    ("additive_stub.seed", "seed", lambda v: hopfield_lm.additive_stub(8, v)(torch.tensor([[0, 1, 2]])).logits),
]  # fmt: skip

IDS = [case[0] for case in CASES]


def _flat(x: Any) -> list:
    """What a builder built as a flat list of numpy arrays and plain values."""
    if isinstance(x, torch.Tensor):
        return [x.detach().cpu().numpy()]
    if isinstance(x, np.ndarray) or np.isscalar(x) or x is None:
        return [np.asarray(x)]
    if isinstance(x, dict):
        return [k for key in sorted(x, key=str) for k in [key, *_flat(x[key])]]
    if isinstance(x, (list, tuple)):
        return [k for item in x for k in _flat(item)]
    if dataclasses.is_dataclass(x):
        return [k for f in dataclasses.fields(x) for k in _flat(getattr(x, f.name))]
    raise TypeError(f"cannot compare a {type(x).__name__}")


def _same(a: Any, b: Any) -> bool:
    fa, fb = _flat(a), _flat(b)
    return len(fa) == len(fb) and all(
        (np.array_equal(x, y, equal_nan=True) if isinstance(x, np.ndarray) and x.dtype.kind in "fc" else np.array_equal(x, y))
        for x, y in zip(fa, fb)
    )  # fmt: skip


@pytest.mark.parametrize(("case", "name", "build"), CASES, ids=IDS)
def test_a_non_integral_size_is_a_value_error_naming_the_parameter(case, name, build):
    pattern = rf"(?<![\w\[]){re.escape(name)}(\[\d+\])?=2\.5 must be an integer"
    with pytest.raises(ValueError, match=pattern):
        build(2.5)
    with pytest.raises(ValueError, match=rf"{re.escape(name)}(\[\d+\])?=nan must be an integer"):
        build(float("nan"))


@pytest.mark.parametrize(("case", "name", "build"), CASES, ids=IDS)
def test_a_truth_value_or_text_is_a_type_error_naming_the_parameter(case, name, build):
    for bad in (True, "4"):
        with pytest.raises(
            TypeError, match=rf"{re.escape(name)}(\[\d+\])?={re.escape(repr(bad))} must be an integer"
        ):
            build(bad)


@pytest.mark.parametrize(("case", "name", "build"), CASES, ids=IDS)
def test_an_integral_float_or_numpy_int_builds_what_the_int_builds(case, name, build):
    reference = build(4)
    assert _same(build(4.0), reference), f"{case}: 4.0 built something other than 4"
    assert _same(build(np.int64(4)), reference), f"{case}: np.int64(4) built something other than 4"


# --- fact sets ---------------------------------------------------------------------------------
def _not_fact_sets() -> list:
    fs = small_facts()
    return [
        [fs.keys, fs.values, fs.fact_map],
        {"keys": fs.keys, "values": fs.values, "fact_map": fs.fact_map},
        (fs.keys, fs.values, fs.fact_map),
    ]


FACT_SET_TAKERS: list[tuple[str, Callable[[Any], Any]]] = [
    ("build_encoder_decoder", lambda f: encoder.build_encoder_decoder(f, 6, rng())),
    ("encoder_decoder_family", lambda f: encoder.encoder_decoder_family(f, [6], rng())),
    ("linear_memory", baselines.linear_memory),
    ("ntk_memory", lambda f: baselines.ntk_memory(f, 8, rng())),
    ("hebbian_readout", lambda f: baselines.hebbian_readout(f, 8, rng(), whitened=False)),
    ("train_gated_mlp", lambda f: baselines.train_gated_mlp(f, 6, 0, epochs=1)),
    ("train_gated_mlp_batch", lambda f: gd_batch.train_gated_mlp_batch([small_facts(), f], [6, 6], [0, 1], epochs=1)),
    ("require_fact_set", facts.require_fact_set),
    ("FactMLP.accuracy", lambda f: baselines.linear_memory(small_facts()).accuracy(f)),
    ("FactMLP.margins", lambda f: baselines.linear_memory(small_facts()).margins(f)),
    ("FactMLP.decode", lambda f: baselines.linear_memory(small_facts()).decode(f)),
]  # fmt: skip


@pytest.mark.parametrize(("name", "take"), FACT_SET_TAKERS, ids=[n for n, _ in FACT_SET_TAKERS])
def test_a_non_fact_set_is_a_type_error_naming_fact_set(name, take):
    for bad in _not_fact_sets():
        with pytest.raises(TypeError, match=rf"must be a FactSet .*got {type(bad).__name__}"):
            take(bad)
    take(small_facts())  # the real thing is accepted


def test_the_comparison_can_fail():
    """Each case builds at the size 4, and the size 5 builds something else: the comparison of
    4.0 with 4 above would see a truncated or otherwise different build."""
    same = [case for case, _, build in CASES if _same(build(4), build(5))]
    assert not same, f"these cases build the same at 4 and 5: {same}"


# --- sizes above the memory budget --------------------------------------------------------------
def _refused_at_once(call: Callable[[], Any], match: str, limit: int = 16 * 2**20) -> str:
    """The ValueError message of ``call``, checked to come within a second and after less than
    ``limit`` bytes of allocations (tracemalloc sees numpy's arrays): the refusal precedes the
    arrays."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(ValueError, match=match) as info:
            call()
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert seconds < 1.0, f"refused after {seconds:.2f} s"
    assert peak < limit < MEMORY_BUDGET_BYTES, f"{peak / 2**20:.0f} MiB allocated before the refusal"
    return str(info.value)


def test_a_relation_table_above_the_memory_budget_is_refused_naming_n_and_r():
    message = _refused_at_once(
        lambda: make_bijections(10**6, 10**6, rng()),
        r"n_subjects=1000000, n_relations=1000000\): the relation table \(R, N\) = \(1000000, 1000000\) "
        r"of int64 would take about 7.28 TiB, above the memory budget of 4 GiB",
    )
    assert "MEMORY_BUDGET_BYTES" in message
    assert make_bijections(50_000, 3, rng()).shape == (3, 50_000)  # a large table that fits builds


def test_a_block_model_above_the_memory_budget_is_refused_naming_d0():
    message = _refused_at_once(
        lambda: single_hop.build_block_model(perms(), 1e8, rng=rng()),
        r"build_block_model\(N=6, R=2, block_dim d0=100000000\): the block model's arrays .* would take "
        r"about .*, above the memory budget of 4 GiB",
    )
    assert "MEMORY_BUDGET_BYTES" in message
    # the estimate covers what is built: the largest block model of the claims fits the budget
    assert single_hop.block_model_bytes(100_000, 16, 35) < MEMORY_BUDGET_BYTES
    tracemalloc.start()
    try:
        single_hop.build_block_model(make_bijections(2000, 4, rng()), 30, rng=rng())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= single_hop.block_model_bytes(2000, 4, 30)


def test_a_block_model_below_the_sufficient_dimension_is_refused_before_its_codes():
    with pytest.raises(ValueError, match=r"dim=10 is below the sufficient dimension 152.9 for N=1000"):
        single_hop.build_block_model(make_bijections(1000, 2, rng()), 10, rng=rng(), guarantee=(0.5, 0.01))


def test_a_search_over_more_candidates_than_the_budget_is_refused_naming_sizes():
    def build(d0):  # never reached: the refusal comes first
        raise AssertionError("a model was built")

    message = _refused_at_once(
        lambda: smallest_storing_size(build, range(1, 10**12), perms()),
        r"sizes holds 999,999,999,999 candidate sizes, above the budget of a bisection",
    )
    assert f"MAX_CANDIDATES = {MAX_CANDIDATES:,}" in message and "smallest_size_geometric" in message
    _refused_at_once(  # an iterator is read up to one candidate above the budget, no further
        lambda: smallest_storing_size(build, (d for d in range(1, 10**12)), perms()),
        rf"sizes holds more than {MAX_CANDIDATES:,} candidate sizes",
        limit=100 * MAX_CANDIDATES,
    )
