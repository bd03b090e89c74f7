"""Seed-batched training (constructions.chapters.seed_batch) gives every seed the run it gets one
at a time: on the CPU the same numbers bit for bit (tolerance 0: losses, evaluations, routing
frequencies, final parameters), for the fact-task loop and the copy-task loop, and the same
claim-level measurements when the claims train their seeds together; on a GPU (``gpu`` tests)
the same run to float32 rounding."""

import numpy as np
import pytest
import torch

from constructions.chapters.copy_task import copy_config, make_copy_batch, train_copy
from constructions.chapters.seed_batch import SeedBatch, train_batched, train_copy_batched
from constructions.chapters.train import build, make_fact_dataset, make_mixed_batches, toy_configs, train
from constructions.device import one_thread
from verify.chapters import toy_setup
from verify.claims import Context

SEEDS = [0, 1, 2]


#: a smaller model than the toy's (bank of 16 chapters of 32 tokens; dense model of 3 layers),
#: batches large enough for the CPU fast path of the memory layer (the claims' batches are)
def _small(cfg):
    return dict(cfg, bank_tokens=512, n_chapters=16, n_layers=cfg["n_layers"] if cfg["mem_layers"] else 3)


@one_thread()
def _fact_runs(kind, device, steps=3, lr_bank=None, size=8):
    moc, dense = toy_configs(16, 8, 0)
    cfg = _small(moc if kind == "moc" else dense)
    facts = [make_fact_dataset(16, 8, np.random.default_rng(s), value_start=20) for s in SEEDS]

    def streams():
        return [make_mixed_batches([f], size, np.random.default_rng(100 + s)) for s, f in zip(SEEDS, facts)]

    single = []
    for s, f, stream in zip(SEEDS, facts, streams()):
        model = build(cfg, s, device=device)
        hist = train(
            model,
            stream,
            steps,
            eval_sets=[f],
            eval_every=2,
            lr_bank=lr_bank,
            schedule_steps=10,
            device=device,
        )
        single.append((hist, model.state_dict()))
    batch = SeedBatch(cfg, SEEDS, device=device)
    hists = train_batched(
        batch, streams(), steps, eval_sets=[facts], eval_every=2, lr_bank=lr_bank, schedule_steps=10
    )
    return single, hists, batch


@one_thread()
def _copy_runs(variant, device, steps=3):
    routing = variant if variant in ("sequence", "prefix", "first") else "sequence"
    cfg = _small(copy_config(4, routing, memory=variant != "none", weighting=variant != "selection_only"))
    evals = [make_copy_batch(4, 3, 8, np.random.default_rng(50 + s)) for s in SEEDS]
    single = []
    for s in SEEDS:
        model = build(cfg, s, device=device)
        hist = train_copy(
            model, 4, 3, steps, 4, np.random.default_rng(200 + s), evals[s], eval_every=2, device=device
        )
        single.append((hist, model.state_dict()))
    batch = SeedBatch(cfg, SEEDS, device=device)
    gens = [np.random.default_rng(200 + s) for s in SEEDS]
    hists = train_copy_batched(batch, 4, 3, steps, 4, gens, torch.stack(evals), eval_every=2)
    return single, hists, batch


@pytest.mark.parametrize(
    "kind,lr_bank,size", [("moc", None, 8), ("moc", 0.0, 8), ("moc", None, 2), ("dense", None, 8)]
)
def test_fact_training_batched_equals_one_at_a_time(kind, lr_bank, size):
    """size 2: a batch that selects fewer bank tokens than the bank holds (the gather-first path)."""
    single, hists, batch = _fact_runs(kind, "cpu", lr_bank=lr_bank, size=size)
    for i, (hist, state) in enumerate(single):
        for key in ("loss", "eval_steps", "acc", "eval_loss", "stopped_at"):
            assert hists[i][key] == hist[key], key
        assert np.array_equal(hists[i]["f"], hist["f"])
        assert all(torch.equal(batch.state_dict(i)[k], v) for k, v in state.items())
    assert single[0][0]["loss"] != single[1][0]["loss"]  # the seeds differ


@pytest.mark.parametrize("variant", ["sequence", "prefix", "none", "selection_only"])
def test_copy_training_batched_equals_one_at_a_time(variant):
    single, hists, batch = _copy_runs(variant, "cpu")
    for i, (hist, state) in enumerate(single):
        assert hists[i] == hist
        assert all(torch.equal(batch.state_dict(i)[k], v) for k, v in state.items())


@pytest.fixture
def batch_on_cpu(monkeypatch):
    monkeypatch.setitem(toy_setup.SEED_BATCH_DEVICES, "cpu", True)


def _claim_runs(check, p, batched, monkeypatch):
    """The claim's check at base seed 0 on the small models, its seeds batched or one at a time."""
    from constructions.chapters import copy_task, train

    toy, copy = train.toy_configs, copy_task.copy_config
    monkeypatch.setattr(train, "toy_configs", lambda *a, **k: tuple(_small(c) for c in toy(*a, **k)))
    monkeypatch.setattr(copy_task, "copy_config", lambda *a, **k: _small(copy(*a, **k)))
    monkeypatch.setitem(toy_setup.SEED_BATCH_DEVICES, "cpu", batched)
    ctx = Context(seed=0, device="cpu", dtype="float32")
    with one_thread():  # as the registry's workers run the claims
        judgement, details = check(p, ctx)
    return judgement.verdict, details, ctx


def test_leak_claims_measure_the_same_with_seeds_batched(monkeypatch):
    from verify.chapters.leak import LEAK, check_causal_prefix, check_router_leak

    p = dict(LEAK, steps=2, batch=4, eval_size=8, eval_every=1, half=3, n_symbols=4)  # 3 seeds
    from verify.chapters import leak

    one = _claim_runs(check_router_leak, p, False, monkeypatch)
    batched, trained = [], leak._leak_runs_batched
    monkeypatch.setattr(leak, "_leak_runs_batched", lambda ctx, *a: batched.append(a[-2]) or trained(ctx, *a))
    together = _claim_runs(check_router_leak, p, True, monkeypatch)
    assert one[:2] == together[:2]
    assert batched == [[0, 1, 2]]
    p = dict(p, stop=1, variant="prefix")
    assert (
        _claim_runs(check_causal_prefix, p, False, monkeypatch)[:2]
        == _claim_runs(check_causal_prefix, p, True, monkeypatch)[:2]
    )


def test_fact_storage_measures_the_same_with_seeds_batched(monkeypatch):
    from verify.chapters.toy import check_fact_storage

    p = dict(
        toy_setup.STORAGE_BASE,
        n_facts=16,
        n_values=8,
        n_phase2=8,
        batch=8,
        steps1=2,
        compare_step=2,
        eval_every=1,
        looks=[3, 6],
        moc_read="trained",
    )
    one = _claim_runs(check_fact_storage, p, False, monkeypatch)
    batched, trained = [], toy_setup._phase1_batched
    monkeypatch.setattr(
        toy_setup,
        "_phase1_batched",
        lambda ctx, r, seeds, *a: batched.append(seeds) or trained(ctx, r, seeds, *a),
    )
    together = _claim_runs(check_fact_storage, p, True, monkeypatch)
    assert one[:2] == together[:2]
    assert batched[:2] == [[0, 1, 2], [0, 1, 2]]  # the first look's seeds, MoC then dense, together
    # each seed's run is stored under its one-seed key: the claim read them, trained nothing again
    ctx = together[2]
    r = toy_setup._recipe(p)
    assert all(
        toy_setup.in_cache(ctx, toy_setup._phase1, r, s, "dense", 4, 2, 0.01, True) for s in one[1]["seeds"]
    )


def test_in_cache_sees_a_stored_run():
    ctx = Context(seed=0, device="cpu", dtype="float32")
    r = toy_setup._recipe(dict(toy_setup.BASE, n_facts=16, n_values=8, n_phase2=0, steps1=1, batch=4))
    assert not toy_setup.in_cache(ctx, toy_setup._phase1, r, 0, "moc", 4, 1, 0.01, False)
    toy_setup.stored(ctx, toy_setup._phase1, ["x"], lambda i: (r, 0, "moc", 4, 1, 0.01, False))
    assert toy_setup.in_cache(ctx, toy_setup._phase1, r, 0, "moc", 4, 1, 0.01, False)
    assert toy_setup._phase1(ctx, r, 0, "moc", 4, 1, 0.01, False) == "x"


@pytest.mark.gpu
def test_batched_training_on_cuda_matches_one_at_a_time():
    """On a GPU the one-at-a-time loops use torch's AdamW and clipping kernels and the batched run
    its own per-seed clipping: the same runs to float32 rounding after a few steps (relative 1e-4)."""
    single, hists, batch = _fact_runs("moc", "cuda")
    for i, (hist, state) in enumerate(single):
        np.testing.assert_allclose(hists[i]["loss"], hist["loss"], rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(hists[i]["eval_loss"], hist["eval_loss"], rtol=1e-4, atol=1e-6)
        for k, v in state.items():
            torch.testing.assert_close(batch.state_dict(i)[k], v, rtol=1e-4, atol=1e-5)
    single, hists, _ = _copy_runs("sequence", "cuda")
    for i, (hist, _state) in enumerate(single):
        np.testing.assert_allclose(hists[i]["first_half"], hist["first_half"], rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(hists[i]["loss"], hist["loss"], rtol=1e-4, atol=1e-6)
