"""Set-up of the chapters_toy family of the capacity atlas (docs/atlas.md): the Mixture-of-Chapters TOY
TRANSFORMER (``constructions.chapters.train``: 2 layers, d = 64, a memory layer at
index 1, 1 shared + top-4 routed chapters, s = 2.5) trained by the toy's own recipe on F random
facts, and the smallest-storing-bank search. Shared by the claims of
:mod:`verify.atlas.chapters_toy`; registers no claim.

Task (draw k of seed s at F facts): ``make_fact_dataset(F, n_V, rng_for(s, STREAM, k, F))``, the
sequences [BOS, KEY, SEP] with the VALUE (one of n_V) predicted at SEP; vocabulary 4 + F + n_V
(tied embeddings). Model: ``constructions.chapters.train.build`` of the toy configuration with the
bank resized to C chapters of T slots (T = 4 as in the chapters_bank family, not the toy's 64, so
that the relative grid reaches below one slot per fact), initialised from
``torch.Generator().manual_seed(seed_of(s, k, F, C))`` (the toy's N(0, 0.02^2), W_O = 0).
Training: ``constructions.chapters.train.train`` unchanged (AdamW lr 3e-3 backbone / 6e-3 memory
and bank, wd 0.1, betas (0.9, 0.95), clip 1.0, 50-step warm-up then cosine to 0.1x over ``steps``,
batch 64 drawn with replacement, load-balance 0.01 and z-loss 0.001), accuracy on all F facts
(argmax over the whole vocabulary) every ``eval_every`` steps; training stops at the first
evaluation with accuracy 1.0 (those weights store every fact).

Search [derived]: the searched resource is the number of chapters C (bank slots C T). C ascends
the smallest bank the architecture allows, C_sh + k = 5 chapters (20 slots; top-4 needs 4 routed
chapters), then max(5, round(r F)) for r on the relative grid of chapters_bank ({1/16, 1/8, 1/4}
chapters per fact, i.e. F/4 to F slots), duplicates dropped. The floor comes first so that a model
that stores with the smallest bank is found there (C* = 5 is then an exact minimum, not a
grid artefact). C*_k is the first C at which draw k stores within ``steps``, None if none (a
scan, ``constructions.search``).
Reported beside it, with no criterion: the same backbone with NO memory layer (2 layers, same
recipe), its first storing step (``backbone_alone``), which tells whether the bank is needed at all.

P = EVERY trained parameter of the model at C* (:func:`n_params`, checked against the module's own
count in the tests): bank C T d, router C (d + 1), memory attention 4 d^2 + d, and, stated
separately because they do not depend on C: the tied embedding (4 + F + n_V) d (it grows with F)
and the rest of the backbone (self-attention, SwiGLU, norms: n_layers (2 d^2 + 2 d d_kv +
3 d d_ff + 2 d) + d = 98,624 at the toy's d = 64, d_kv = 32, d_ff = 192, 2 layers).
Information: I = F log2 n_V bits [derived, the convention of fact_mlp and chapters_bank].
Runs on the CPU whatever ``--device`` says (small models; as chapters_bank).
"""

from __future__ import annotations

import math

from constructions.device import one_thread
from constructions.search import smallest_size
from theory.chapters.flops import TOY_CONFIG
from theory.fact_mlp.bounds import info_bits
from verify.atlas.chapters_bank_setup import bank_points
from verify.atlas.chapters_bank_setup import chapters_grid as bank_grid
from verify.claims import rng_for, shared

STREAM = "atlas.chapters_toy.stream"
CLAIM_ID = "atlas.chapters_toy.smallest_bank"

QUICK = {
    "sizes": [16, 32, 64],
    "n_values": 16,
    "slots": 4,
    "grid": [1 / 16, 1 / 8, 1 / 4],
    "draws": 3,
    "steps": 120,
    "eval_every": 5,
    "batch": 64,
    "backbone_alone": False,
}
FULL = {
    **QUICK,
    "sizes": [128, 256, 512, 1024, 2048],
    "draws": 5,
    "steps": 1000,
    "eval_every": 10,
    "backbone_alone": True,
}


def chapters_grid(n_facts: int, grid, floor: int) -> list[int]:
    """The floor, then the ascending chapter counts max(floor, round(r F)) of the relative grid,
    duplicates dropped (module doc; :func:`verify.atlas.chapters_bank_setup.chapters_grid` with the
    floor first).

    >>> chapters_grid(32, [1 / 16, 1 / 8, 1 / 4], 5)
    [5, 8]
    """
    return list(dict.fromkeys([floor] + bank_grid(n_facts, grid, floor)))


def config(n_facts: int, n_chapters: int, p: dict) -> dict:
    """The toy configuration (theory.chapters.flops.TOY_CONFIG) with the vocabulary of F keys and n_V values
    and a bank of C chapters of T slots (1 shared, top-4 as the toy)."""
    from constructions.chapters.train import toy_configs

    cfg, _ = toy_configs(n_facts, p["n_values"], 0)
    floor = cfg["n_shared"] + cfg["top_k"]
    if n_chapters < floor:
        raise ValueError(
            f"C={n_chapters} chapters is below n_shared + top_k = {floor}: top-k needs k routed chapters"
        )
    return dict(cfg, n_chapters=n_chapters, bank_tokens=n_chapters * p["slots"])


def chapter_floor() -> int:
    return TOY_CONFIG["n_shared"] + TOY_CONFIG["top_k"]


def n_params(n_facts: int, n_chapters: int, p: dict) -> dict:
    """Trained parameters by group (module doc), from the toy configuration's sizes."""
    c = TOY_CONFIG
    d, d_kv = c["d_model"], c["n_kv_heads"] * c["head_dim"]
    groups = {
        "bank": n_chapters * p["slots"] * d,
        "router": n_chapters * (d + 1),
        "memory_attention": 4 * d * d + d,
        "embedding": (4 + n_facts + p["n_values"]) * d,
        "backbone": c["n_layers"] * (2 * d * d + 2 * d * d_kv + 3 * d * c["d_ff"] + 2 * d) + d,
    }
    groups["total"] = sum(groups.values())
    return groups


def parameter_groups(n_facts: int, n_chapters: int, p: dict) -> dict:
    """Trained parameters of the model by group, counted on the meta device from the module itself
    (the test of :func:`n_params`)."""
    from constructions.chapters.model import MoCModel

    model = MoCModel(config(n_facts, n_chapters, p), device="meta")  # counted, not built
    groups = {"bank": 0, "router": 0, "memory_attention": 0, "embedding": 0, "backbone": 0}
    for name, w in model.named_parameters():
        if name == "bank":
            groups["bank"] += w.numel()
        elif ".memory.router." in name:
            groups["router"] += w.numel()
        elif ".memory.attention." in name:
            groups["memory_attention"] += w.numel()
        elif name.startswith("embedding."):
            groups["embedding"] += w.numel()
        else:
            groups["backbone"] += w.numel()
    groups["total"] = sum(groups.values())
    return groups


def seed_of(seed: int, draw: int, n_facts: int, n_chapters: int) -> int:
    return int(rng_for(seed, STREAM, draw, n_facts, n_chapters).integers(2**62))


def train_store(n_facts: int, n_chapters: int, p: dict, seed: int, draw: int, steps: int) -> dict:
    """Train the toy with C chapters (C = 0: the backbone with no memory layer) on draw ``draw`` for
    at most ``steps`` steps, stopping at the first evaluation with accuracy 1.0 (module doc):
    {"stored_at": step or None, "accuracy": last}."""
    from constructions.chapters.train import build, make_fact_dataset, make_mixed_batches, train

    facts = make_fact_dataset(n_facts, p["n_values"], rng_for(seed, STREAM, draw, n_facts))
    cfg = config(n_facts, chapter_floor(), p) if n_chapters == 0 else config(n_facts, n_chapters, p)
    if n_chapters == 0:
        cfg = dict(cfg, mem_layers=[])
    model = build(cfg, seed_of(seed, draw, n_facts, n_chapters))
    batches = make_mixed_batches([facts], p["batch"], rng_for(seed, STREAM, draw, n_facts, 1))
    hist = train(model, batches, steps, eval_sets=[facts], eval_every=p["eval_every"], stop_accuracy=1.0)
    acc = hist["acc"][0][-1]
    if not math.isfinite(acc) or not all(math.isfinite(x) for x in hist["loss"]):
        raise ValueError(f"training is NaN at F={n_facts}, C={n_chapters}, draw {draw}")
    return {"stored_at": hist["stopped_at"], "accuracy": float(acc)}


def search(p: dict, seed: int) -> dict:
    """C*_k per draw at every F: a scan up the grid (``constructions.search.smallest_size``) for the
    first C whose training stores all F facts (module doc); ``p["steps"]`` may be 0 (the untrained
    control)."""
    rows = []
    for n in p["sizes"]:
        grid = chapters_grid(n, p["grid"], chapter_floor())
        row = {"F": int(n), "chapters_grid": grid, "c_star": [], "stored_at_step": [], "params": []}
        row["accuracy_trace"] = []
        for k in range(p["draws"]):
            runs = {}  # C -> train_store's {"stored_at", "accuracy"}

            def stores(c: int, n: int = n, k: int = k) -> bool:
                runs[c] = train_store(n, c, p, seed, k, p["steps"])
                return runs[c]["stored_at"] is not None

            found = smallest_size(grid, stores, strategy="scan").size
            row["c_star"].append(found)
            row["stored_at_step"].append(None if found is None else runs[found]["stored_at"])
            row["params"].append(None if found is None else n_params(n, found, p))
            row["accuracy_trace"].append([out["accuracy"] for out in runs.values()])
            if p.get("backbone_alone"):
                row.setdefault("backbone_alone_stored_at", []).append(
                    train_store(n, 0, p, seed, k, p["steps"])["stored_at"]
                )
        rows.append(row)
    return {"rows": rows, "info_bits": [info_bits(n, p["n_values"]) for n in p["sizes"]]}


@shared
def _search_once(ctx, sizes, n_values, slots, grid, draws, steps, eval_every, batch, backbone_alone) -> dict:
    setting = dict(sizes=sizes, n_values=n_values, slots=slots, grid=grid, draws=draws, steps=steps)
    setting.update(eval_every=eval_every, batch=batch, backbone_alone=backbone_alone)
    with one_thread():  # the stopping step must not depend on the thread count
        return search(setting, ctx.seed)


def shared_search(p: dict, ctx) -> dict:
    """:func:`search` of the setting ``p`` once per run and seed (both claims of
    :mod:`verify.atlas.chapters_toy` share it)."""
    setting = (p["sizes"], p["n_values"], p["slots"], p["grid"], p["draws"], p["steps"], p["eval_every"])
    return _search_once(ctx, *setting, p["batch"], p["backbone_alone"])


#: The atlas family's fields (``verify.atlas.sources.Family`` less ``extract``, set there)
FAMILY_FIELDS = dict(
    name="chapters_toy",
    area="chapters",
    kind="trained",
    claim_id=CLAIM_ID,
    resource="parameters",
    bound="theory.fact_mlp.bounds.info_bits = F log2 n_V",
    bound_tag="derived",
    searched=True,
    note="smallest number of chapters (T = 4 slots, 1 shared + top-4, from the floor of 5) at which the "
    "MoC toy transformer (2 layers, d = 64), trained by its own recipe, stores all F facts; "
    "P = every trained parameter (backbone, embedding, memory attention, router, bank)",
    optional=True,
)


def points_of_record(rec: dict, point, need) -> list[dict]:
    """The atlas points of a smallest_bank record (``verify.atlas.sources``'s ``_point`` and
    ``_need`` passed in): P = :func:`n_params` total at each draw's C*, I = F log2 n_V."""
    p = rec["params"]
    return bank_points(
        rec, point, need, "model", TOY_CONFIG["d_model"], lambda n, c: n_params(n, c, p)["total"]
    )
