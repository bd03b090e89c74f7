"""The fast fine-tuning path of IC-recall gives the numbers of the plain one, bit for bit
(docs/icrecall.md): the manual P-full step against autograd, ``CpuAdam`` against
``torch.optim.Adam``, the embedded test set and the shared init evaluation against one evaluation
per use, the one-gather token embeddings against the slice-by-slice ones, and the sharing of the
claim modules (train runs, hand-set patterns) against building everything per call."""

import math

import numpy as np
import pytest
import torch

from constructions.icrecall import train as M
from constructions.icrecall.model import ICAttention, TrainedMemory, TripletMemory
from constructions.icrecall.patterns import (
    context_neuron_firing,
    handset_pattern,
    mixed_input,
    pattern_accuracy,
    pattern_metrics,
    token_embeddings,
)
from constructions.icrecall.train import CpuAdam, finetune
from constructions.icrecall.world import Prompts, make_world, sample_icrecall, triplet_mlp
from verify.claims import Context

RHO = 1 / math.sqrt(2)


# ---------------------------------------------------------------------------------------------
# the plain path, as the code was before the fast one: embed per evaluation, V recomputed every
# step inside the autograd graph, torch.optim.Adam, one evaluation per use
def _old_token_embeddings(world, prompts, slots=False):
    K, n = prompts.subjects.shape
    X = np.empty((K, 2 * n + 1, world.dim))
    X[:, 0:-1:2] = world.subj[prompts.subjects]
    X[:, 1:-1:2] = world.ans[prompts.answers]
    X[:, -1] = world.subj[prompts.query]
    if slots:
        X[:, 0:-1:2] += world.slot[0]
        X[:, 1:-1:2] += world.slot[1]
        X[:, -1] += world.slot[2]
    return X


def _old_embed(model, prompts):
    X = _old_token_embeddings(model.world, prompts, slots=model.slots)
    return torch.as_tensor(X, dtype=model.dtype, device=model.device)


def _old_evaluate(model, prompts, chunk=2048):
    alphas, correct = [], []
    with torch.no_grad():
        for start in range(0, len(prompts), chunk):
            sl = slice(start, start + chunk)
            part = Prompts(*(getattr(prompts, f)[sl] for f in Prompts.__dataclass_fields__))
            logits, alpha = model(_old_embed(model, part))
            tgt = torch.as_tensor(part.target, device=logits.device)
            c = logits.gather(1, tgt[:, None]).squeeze(1)
            o = logits.scatter(1, tgt[:, None], float("-inf")).amax(dim=1)
            correct.append((c > o).cpu().numpy())
            alphas.append(alpha.cpu().numpy())
    ok = np.concatenate(correct)
    return float(ok.mean()), np.concatenate(alphas), ok


def _old_finetune(model, train, test, steps, lr, record_every=None):
    acc0, alpha0, ok0 = _old_evaluate(model, test)
    trajectory = []
    if record_every:
        m = pattern_metrics(alpha0)
        trajectory.append(
            {"step": 0, "acc": acc0, "loss": None, "qs": m["query_share"], "imb": m["imbalance"]}
        )
    X = _old_embed(model, train)
    y = torch.as_tensor(train.target)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=lr, betas=(0.9, 0.999))
    losses = []
    for step in range(1, steps + 1):
        logits, _ = model(X)  # V recomputed from X inside the graph, as before
        loss = torch.nn.functional.cross_entropy(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
        if record_every and (step % record_every == 0 or step == steps):
            acc, alpha, _ = _old_evaluate(model, test)
            m = pattern_metrics(alpha)
            trajectory.append(
                {"step": step, "acc": acc, "loss": losses[-1], "qs": m["query_share"], "imb": m["imbalance"]}
            )
    acc, alpha, ok = _old_evaluate(model, test)
    params_after = [p.detach().clone() for p in model.parameters()]
    return (
        acc0,
        acc,
        pattern_metrics(alpha0),
        pattern_metrics(alpha),
        losses,
        ok0,
        ok,
        trajectory,
        params_after,
    )


def _new_summary(model, train, test, steps, lr, record_every=None, init=None):
    res = finetune(model, train, test, steps=steps, lr=lr, record_every=record_every, init=init)
    trajectory = [
        {"step": t["step"], "acc": t["acc"], "loss": t["loss"], "qs": t["query_share"], "imb": t["imbalance"]}
        for t in res.extra.get("trajectory", [])
    ]
    params_after = [p.detach().clone() for p in model.parameters()]
    return (
        res.acc_init,
        res.acc,
        res.metrics_init,
        res.metrics,
        res.losses,
        res.extra["correct_init"],
        res.extra["correct"],
        trajectory,
        params_after,
    )


def _assert_same(old, new):
    names = ("acc_init", "acc", "metrics_init", "metrics", "losses", "ok_init", "ok", "trajectory", "params")
    for name, a, b in zip(names, old, new):
        if name in ("ok_init", "ok"):
            assert np.array_equal(a, b), name
        elif name == "params":
            assert len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b)), name
        else:
            assert a == b, name  # exact: floats compared with ==


def _setup(S=12, R=3, D=4, d=48, n=3, n_train=16, n_test=60, seed=0):
    world = make_world(S, R, D, d, RHO, np.random.default_rng(seed))
    memory = TripletMemory(triplet_mlp(world), 10.0)
    test = sample_icrecall(world, n, n_test, np.random.default_rng(seed + 1))
    train = sample_icrecall(world, n, n_train, np.random.default_rng(seed + 2))
    return world, memory, train, test


CASES = [
    # (P-full with slots, values without them): the claims' model
    dict(param="full", slots=True, slot_values=False, n_train=16, record_every=7),
    dict(param="full", slots=True, slot_values=False, n_train=1, record_every=None),
    dict(param="full", slots=False, slot_values=False, n_train=24, record_every=None),
    dict(param="full", slots=True, slot_values=True, n_train=8, record_every=10),
    dict(param="struct", slots=False, slot_values=False, n_train=8, record_every=10),
]


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{c['param']}-{c['slots']}-{c['slot_values']}-{c['n_train']}" for c in CASES]
)
def test_finetune_equals_the_plain_path(case):
    world, memory, train, test = _setup(n_train=case["n_train"])
    kw = dict(param=case["param"], slots=case["slots"], slot_values=case["slot_values"])
    lr = 0.05 if case["param"] == "struct" else 0.01
    old = _old_finetune(ICAttention(world, memory, **kw), train, test, 30, lr, case["record_every"])
    new = _new_summary(ICAttention(world, memory, **kw), train, test, 30, lr, case["record_every"])
    _assert_same(old, new)


def test_finetune_with_embedded_test_and_shared_init_equals_the_plain_path():
    world, memory, train, test = _setup()
    kw = dict(param="full", slots=True, slot_values=False)
    old = _old_finetune(ICAttention(world, memory, **kw), train, test, 25, 0.01, 10)
    first = ICAttention(world, memory, **kw)
    embedded = first.embed_prompts(test)
    init = M.evaluate(first, embedded)
    new = _new_summary(ICAttention(world, memory, **kw), train, embedded, 25, 0.01, 10, init=init)
    _assert_same(old, new)
    # no step: the init evaluation is the final one, as two evaluations of the same model are
    zero = _old_finetune(ICAttention(world, memory, **kw), train, test, 0, 0.01, 10)
    _assert_same(
        zero, _new_summary(ICAttention(world, memory, **kw), train, embedded, 0, 0.01, 10, init=init)
    )
    with pytest.raises(ValueError, match="embedded for"):
        M.evaluate(ICAttention(world, memory, "full", slots=False), embedded)


def test_train_omega_and_trained_memory_take_autograd_and_match():
    world, _, train, test = _setup(d=32)
    mem = TrainedMemory(world, 64, 10.0, torch.Generator().manual_seed(0))
    for p in mem.parameters():
        p.requires_grad_(False)
    model = ICAttention(world, mem, "struct", omega=1.0, train_omega=True)
    X = model.embed(train)
    assert M._FullStep.build(model, X, model.values(X), torch.as_tensor(train.target)) is None
    old = _old_finetune(
        ICAttention(world, mem, "struct", omega=1.0, train_omega=True), train, test, 20, 0.05, 5
    )
    new = _new_summary(
        ICAttention(world, mem, "struct", omega=1.0, train_omega=True), train, test, 20, 0.05, 5
    )
    _assert_same(old, new)


def test_manual_step_gradient_is_autograds():
    """One step's loss and gradient, for sizes on both sides of every size-dependent choice."""
    for S, R, d, n, K in [(12, 3, 48, 3, 1), (12, 3, 48, 3, 5), (30, 5, 64, 8, 40), (6, 5, 40, 4, 128)]:
        world, memory, train, _ = _setup(S=S, R=R, d=d, n=n, n_train=K)
        for slots, slot_values in ((True, False), (False, False), (True, True)):
            model = ICAttention(world, memory, "full", slots=slots, slot_values=slot_values)
            with torch.no_grad():
                model.W_KQ.add_(0.01 * torch.randn(d, d, generator=torch.Generator().manual_seed(K)))
            X = model.embed(train)
            V, y = model.values(X), torch.as_tensor(train.target)
            loss = torch.nn.functional.cross_entropy(model(X)[0], y)
            loss.backward()
            grad = model.W_KQ.grad.clone()
            model.W_KQ.grad = None
            step = M._FullStep.build(model, X, V, y)
            with torch.no_grad():
                manual_loss = step()
            assert torch.equal(manual_loss, loss.detach())
            assert torch.equal(model.W_KQ.grad, grad)


def test_cpu_adam_equals_torch_adam():
    gen = torch.Generator().manual_seed(3)
    shapes = [(7, 5), (), (3,), (33, 33)]
    a = [torch.randn(s, generator=gen, dtype=torch.float64).requires_grad_() for s in shapes]
    b = [p.detach().clone().requires_grad_() for p in a]
    ref = torch.optim.Adam(a, lr=0.02, betas=(0.9, 0.999))
    ours = CpuAdam(b, lr=0.02)
    for step in range(60):
        grads = [
            torch.randn(s, generator=gen, dtype=torch.float64) * (10.0 ** (step % 5 - 2)) for s in shapes
        ]
        for k, (p, q, g) in enumerate(zip(a, b, grads)):
            # one parameter without a gradient now and then: skipped, its step count kept
            p.grad, q.grad = (None, None) if (k == 1 and step % 7 == 3) else (g.clone(), g.clone())
        ref.step()
        ours.step()
        assert all(torch.equal(p, q) for p, q in zip(a, b))
    with pytest.raises(ValueError, match="CPU"):
        CpuAdam([torch.zeros(2, device="meta", requires_grad=True)], lr=0.1)


def test_token_embeddings_equal_the_slice_by_slice_construction():
    for S, R, D, d, n, K in [(20, 3, 4, 33, 1, 9), (200, 5, 10, 64, 8, 300), (6, 5, 10, 31, 4, 50)]:
        world = make_world(S, R, D, d, RHO, np.random.default_rng(S))
        for mode in ("single", "mixed"):
            prompts = sample_icrecall(world, n, K, np.random.default_rng(K), relation_mode=mode)
            for slots in (False, True):
                new = token_embeddings(world, prompts, slots)
                assert new.flags.c_contiguous and np.array_equal(
                    new, _old_token_embeddings(world, prompts, slots)
                )


def test_patterns_with_precomputed_inputs_equal_the_plain_calls():
    world = make_world(40, 3, 5, 64, RHO, np.random.default_rng(0))
    mlp = triplet_mlp(world)
    prompts = sample_icrecall(world, 4, 200, np.random.default_rng(1))
    X = token_embeddings(world, prompts)
    alpha, omega = handset_pattern("pairwise", 4), 2 / RHO
    assert pattern_accuracy(mlp, prompts, alpha, omega, X=X) == pattern_accuracy(mlp, prompts, alpha, omega)
    z = mixed_input(mlp, prompts, alpha, omega, X=X)
    assert np.array_equal(z, mixed_input(mlp, prompts, alpha, omega))
    assert context_neuron_firing(mlp, prompts, alpha, omega, z=z) == context_neuron_firing(
        mlp, prompts, alpha, omega
    )
    # the hidden layer computed in place is the plain expression's, signs of zeros included
    a, b = z @ world.subj.T, z @ world.rel.T
    plain = np.maximum(a[:, :, None] + b[:, None, :] - mlp.theta, 0.0)
    assert np.array_equal(mlp.hidden(z), plain) and np.array_equal(
        np.signbit(mlp.hidden(z)), np.signbit(plain)
    )
    # the memory's answer indicator, built once, is the one built per call
    onehot = np.zeros((mlp.width, world.n_ans))
    onehot[np.arange(mlp.width), world.answer.reshape(-1)] = 1.0
    h = mlp.hidden(z).reshape(len(z), -1)
    assert np.array_equal(mlp.answer_weights(z), h @ onehot)


def test_train_run_sharing_equals_one_run_built_alone():
    """train_run shares the world, the test set and the init evaluation between runs: a run read
    after others equals the same run built and trained alone on the plain path."""
    from verify.claims import rng_for
    from verify.icrecall import finetune_setup as FS

    p = dict(FS.PFULL, n_subj=8, n_rel=3, n_ans_per_rel=4, dim=40, n_pairs=3, n_test=50, steps=15)
    ctx = Context(seed=0)
    for n_train in (2, 4):
        FS.train_run(p, ctx, n_train=n_train, seed=1)
    FS.train_run(p, ctx, param="struct", slots=False, n_train=4, lr=0.05, seed=1)
    shared = FS.train_run(p, ctx, n_train=8, seed=1, record_every=5)

    world, memory, test = FS._setup(p, 1)
    train = sample_icrecall(world, p["n_pairs"], 8, rng_for(1, 73, 8))
    model = ICAttention(world, memory, "full", slots=True, slot_values=False)
    acc0, acc, m0, m, losses, ok0, ok, _, _ = _old_finetune(model, train, test, p["steps"], p["lr"], 5)
    unseen = ~np.isin(test.query, train.query)
    assert (shared["acc_init"], shared["acc"], shared["metrics_init"], shared["metrics"]) == (
        acc0,
        acc,
        m0,
        m,
    )
    assert shared["final_loss"] == losses[-1]
    assert shared["acc_unseen"] == float(ok[unseen].mean()) and shared["acc_init_unseen"] == float(
        ok0[unseen].mean()
    )


def test_handset_patterns_shared_one_by_one_equal_all_at_once():
    from verify.icrecall.handset import HANDSET, handset_accuracies

    p = dict(HANDSET, n_subj=30, dim=48, n_queries=200, n_seeds=2)
    together = handset_accuracies(p, Context(seed=0))
    ctx = Context(seed=0)
    alone = {name: handset_accuracies(p, ctx, patterns=(name,)) for name in ("uniform", "pairwise")}
    for name, acc in alone.items():
        assert acc[name] == together[name] and acc["per_seed"][name] == together["per_seed"][name]


def test_fast_path_is_used_for_the_claims_model(monkeypatch):
    """P-full with the triplet memory trains through the manual step (no autograd graph)."""
    world, memory, train, test = _setup()
    calls = []
    real = M._FullStep.__call__
    monkeypatch.setattr(M._FullStep, "__call__", lambda self: calls.append(1) or real(self))
    finetune(ICAttention(world, memory, "full", slots=True, slot_values=False), train, test, steps=3)
    assert len(calls) == 3
