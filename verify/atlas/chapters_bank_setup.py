"""Set-up of the chapters bank family of the capacity atlas (docs/atlas.md): the routed memory layer of
Mixture of Chapters (``constructions.chapters.layer.MemoryLayer``: router, selected-chapter
gather, memory attention) trained alone on a fact lookup, and the smallest-storing-bank search.
Shared by the two claims of :mod:`verify.atlas.chapters_bank`; registers no claim.

Task (draw k of seed s at F facts, stream (s, STREAM, k, F)): F keys x_i ~ N(0, I_d) (the
layer's input, a length-1 sequence, so the router pools x_i itself), n_V value embeddings
e_v ~ N(0, I_d) and targets y_i uniform in n_V, all fixed (not parameters). Logits of fact i:
MemRead(x_i) e_v^T. Trained: the bank (C chapters x T slots, d wide), the router (d -> C with
bias) and the memory attention (W_Q, W_K, W_V, W_O, RMSNorm weight). Initialisation [derived;
NOT the toy's N(0, 0.02^2)]: W_O zero (the paper's, as in the toy), router bias zero, norm weight
1, other matrices N(0, 1/fan_in), bank N(0, 1) (torch generator seeded from the stream
(s, STREAM, k, F, C)). Full-batch Adam, cosine learning-rate decay, cross-entropy.
Stored: argmax accuracy exactly 1.0 on all F facts at some step s <= ``steps`` (training stops
at the first such s; the weights at s store every fact).

Search (a scan, ``constructions.search``): C ascends the relative grid ``grid`` x F (chapters per
fact; at least top_k); C*_k is the first C at which draw k stores, None if none up to the grid's end (F/4 chapters = F slots).
Parameters P = every trained parameter (bank, router, attention), the count of the layer itself.
Information: F log2 n_V bits [derived, the convention of fact_mlp].
"""

from __future__ import annotations

import math

from constructions.device import one_thread
from constructions.search import smallest_size
from constructions.seeding import torch_generator
from theory.fact_mlp.bounds import info_bits
from verify.claims import rng_for, shared

STREAM = "atlas.chapters_bank.stream"

QUICK = {
    "sizes": [32, 64, 128],
    "n_values": 16,
    "d": 16,
    "slots": 4,
    "top_k": 2,
    "grid": [1 / 16, 1 / 8, 1 / 4],
    "draws": 3,
    "steps": 1000,
    "lr": 0.02,
}
FULL = {**QUICK, "sizes": [32, 64, 128, 256], "draws": 5}


def chapters_grid(n_facts: int, grid, top_k: int) -> list[int]:
    """The ascending chapter counts max(top_k, round(r F)) of the relative grid, duplicates dropped.

    >>> chapters_grid(32, [1 / 16, 1 / 8, 1 / 4], 2)
    [2, 4, 8]
    """
    if n_facts < 1 or top_k < 1:
        raise ValueError(f"F={n_facts} facts and top_k={top_k} must be >= 1")
    if not grid or any(r <= 0 for r in grid) or list(grid) != sorted(grid):
        raise ValueError(f"grid {grid} must be non-empty, positive and ascending (chapters per fact)")
    return list(dict.fromkeys(max(top_k, int(round(r * n_facts))) for r in grid))


def task(n_facts: int, p: dict, seed: int, draw: int):
    """Keys (F, d), value embeddings (n_V, d), targets (F,) of draw ``draw`` (module doc)."""
    import torch

    gen = rng_for(seed, STREAM, draw, n_facts)
    keys = gen.standard_normal((n_facts, p["d"]))
    values = gen.standard_normal((p["n_values"], p["d"]))
    targets = gen.integers(p["n_values"], size=n_facts)
    return torch.from_numpy(keys).float(), torch.from_numpy(values).float(), torch.from_numpy(targets)


def build(n_chapters: int, p: dict, seed: int, draw: int, n_facts: int):
    """(layer, bank) at initialisation (module doc)."""
    import torch

    from constructions.chapters.layer import MemoryLayer

    tgen = torch_generator(int(rng_for(seed, STREAM, draw, n_facts, n_chapters).integers(2**62)))
    layer = MemoryLayer(p["d"], 1, n_chapters, 0, p["top_k"])
    with torch.no_grad():
        for name, w in layer.named_parameters():
            if name.endswith("wo.weight") or name.endswith("router.linear.bias"):
                w.zero_()
            elif name.endswith("norm.weight"):
                w.fill_(1.0)
            else:
                w.copy_(torch.randn(w.shape, generator=tgen) / math.sqrt(w.shape[-1]))
    bank = torch.nn.Parameter(torch.randn(n_chapters * p["slots"], p["d"], generator=tgen))
    return layer, bank


def n_params(n_chapters: int, p: dict) -> int:
    """Trained parameters: bank C T d + router C (d + 1) + attention 4 d^2 + d (module doc)."""
    d = p["d"]
    return n_chapters * p["slots"] * d + n_chapters * (d + 1) + 4 * d * d + d


def train_accuracy(n_facts: int, n_chapters: int, p: dict, seed: int, draw: int, steps: int) -> tuple:
    """(accuracy, step): the first step s <= ``steps`` at which the layer with C chapters, after
    s Adam steps, has accuracy 1.0 on all F facts (training stops there: those weights store),
    else the accuracy after ``steps`` steps and None. Step s's accuracy is read off the forward
    pass that step s + 1 trains on (the same weights), so stopping costs no extra pass."""
    import torch

    from constructions.chapters.flat_adam import FlatAdam

    keys, values, targets = task(n_facts, p, seed, draw)
    layer, bank = build(n_chapters, p, seed, draw, n_facts)
    x = keys[:, None, :]
    # torch.optim.Adam's numbers (defaults: betas (0.9, 0.999), eps 1e-8, no decay) over one flat
    # buffer: every parameter gets a gradient at every step here
    opt = FlatAdam([{"params": [*layer.parameters(), bank], "lr": p["lr"]}])
    for step in range(steps + 1):
        with torch.set_grad_enabled(step < steps):
            read, _ = layer(x, x, bank)
            logits = read[:, 0] @ values.T
        if not torch.all(torch.isfinite(logits)):
            raise ValueError(f"logits are NaN at F={n_facts}, C={n_chapters}, step {step}")
        acc = float((logits.argmax(-1) == targets).float().mean())
        if acc == 1.0 or step == steps:
            return acc, (step if acc == 1.0 else None)
        for group in opt.param_groups:
            group["lr"] = p["lr"] * 0.5 * (1 + math.cos(math.pi * step / steps))
        loss = torch.nn.functional.cross_entropy(logits, targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
    raise AssertionError("unreachable")


def search(p: dict, seed: int) -> dict:
    """C*_k per draw at every F: a scan up the grid (``constructions.search.smallest_size``) for the
    first C whose training stores all F facts (module doc); ``p["steps"]`` may be 0 (the untrained
    control)."""
    rows = []
    for n in p["sizes"]:
        grid = chapters_grid(n, p["grid"], p["top_k"])
        row = {
            "F": int(n),
            "chapters_grid": grid,
            "c_star": [],
            "stored_at_step": [],
            "params": [],
            "accuracy_trace": [],
        }
        for k in range(p["draws"]):
            runs = {}  # C -> (accuracy, stopping step or None)

            def stores(c: int, n: int = n, k: int = k) -> bool:
                runs[c] = train_accuracy(n, c, p, seed, k, p["steps"])
                return runs[c][1] is not None

            found = smallest_size(grid, stores, strategy="scan").size
            row["c_star"].append(found)
            row["stored_at_step"].append(None if found is None else runs[found][1])
            row["params"].append(None if found is None else n_params(found, p))
            row["accuracy_trace"].append([acc for acc, _ in runs.values()])
        rows.append(row)
    return {"rows": rows, "info_bits": [info_bits(n, p["n_values"]) for n in p["sizes"]]}


#: The atlas family's fields (``verify.atlas.sources.Family`` less ``extract``, set there)
FAMILY_FIELDS = dict(
    name="chapters_bank",
    area="chapters",
    kind="trained",
    claim_id="atlas.chapters_bank.smallest_bank",
    resource="parameters",
    bound="theory.fact_mlp.bounds.info_bits = F log2 n_V",
    bound_tag="derived",
    searched=True,
    note="smallest number of chapters (T = 4 slots, top-2, d = 16) at which the routed memory layer of "
    "Mixture of Chapters, trained alone by Adam, stores all F facts; P = bank + router + attention",
    optional=True,
)


def bank_points(rec: dict, point, need, what: str, dim: int, params_at) -> list[dict]:
    """Atlas points of a smallest-bank search record (this family's and chapters_toy's): one point
    per F with P = ``params_at(F, C*)`` per draw and I = F log2 n_V; the untrained control's record
    and a draw that stores at no grid size are refused (ValueError naming the claim)."""
    cid, p = rec["id"], rec["params"]
    if int(p.get("steps", 1)) == 0:
        raise ValueError(f"{cid}: a record of the untrained {what} (the control) is no family point")
    out = []
    for row in need(rec["details"], "rows", cid):
        n, cs = int(row["F"]), row["c_star"]
        if not cs or any(c is None for c in cs):
            raise ValueError(
                f"{cid}: F={n} has a draw that stores at no grid size (C* = {cs}); "
                "the atlas lists only storing sizes"
            )
        sizes = {"F": n, "n_V": int(p["n_values"]), "d": int(dim), "T": int(p["slots"])}
        out.append(point(sizes, info_bits(n, int(p["n_values"])), [params_at(n, int(c)) for c in cs]))
    return out


def points_of_record(rec: dict, point, need) -> list[dict]:
    """The atlas points of a smallest_bank record (``verify.atlas.sources``'s ``_point`` and
    ``_need`` passed in): P = :func:`n_params` at each draw's C*, I = F log2 n_V."""
    p = rec["params"]
    return bank_points(rec, point, need, "layer", int(p["d"]), lambda n, c: n_params(c, p))


@shared
def _search_once(ctx, sizes, n_values, d, slots, top_k, grid, draws, steps, lr) -> dict:
    setting = dict(sizes=sizes, n_values=n_values, d=d, slots=slots, top_k=top_k, grid=grid, draws=draws)
    setting.update(steps=steps, lr=lr)
    with one_thread():  # the stopping step must not depend on the thread count
        return search(setting, ctx.seed)


def shared_search(p: dict, ctx) -> dict:
    """:func:`search` of the setting ``p`` once per run and seed (both claims of
    :mod:`verify.atlas.chapters_bank` share it)."""
    setting = (p["sizes"], p["n_values"], p["d"], p["slots"], p["top_k"], p["grid"], p["draws"])
    return _search_once(ctx, *setting, p["steps"], p["lr"])
