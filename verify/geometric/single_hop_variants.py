"""Variants of the single-hop block construction (docs/geometric.md): the shared-space rotation
variant and the zero-shot transfer of the construction's MLP to new bijections.

Registered right after the block-construction claims of verify.geometric.single_hop (which imports
this module last), so the claim ids keep their order. Each verdict comes from a criterion object of
verify.criteria; its thresholds say where they come from.
"""

from __future__ import annotations

import math

from constructions.geometric.rotation import build_rotation_model
from constructions.geometric.single_hop import build_block_model, swap_bijections
from constructions.tasks import make_bijections, single_hop_dataset
from verify.claims import Control, choice, claim, rng_for
from verify.criteria import Agreement, EverySeed, Threshold, all_of
from verify.geometric.single_hop_setup import SRC
from verify.measure import decode


@claim(
    "geometric.single_hop.rotation_variant",
    source=f"{SRC}, shared-space variant of the block construction",
    provenance="derived",
    controls=[
        Control(
            "small_dims",
            {"dims": [8, 16]},
            "at d = 16 (d/(R ln N) = 0.64) the crosstalk variance "
            "(R-1)/d = 0.19 is large, so accuracy >= 0.98 at the larger d must fail",
        )
    ],
    templated=True,
    seed_rule="every seed of ctx.seeds(seeds): its own bijections and rotations",
    statement="the rotation variant (N = {n_subjects}, R = {n_relations}) reaches accuracy >= 0.98 at the "
    "largest d of {dims} (d = 100 is about 4 R ln N) and falls below 0.5 at the smallest, where "
    "crosstalk variance (R-1)/d is large, on every one of {seeds} seeds (both thresholds a convention)",
    quick={"n_subjects": 512, "n_relations": 4, "dims": [8, 100], "seeds": 6},
    full={"n_subjects": 512, "n_relations": 4, "dims": [8, 16, 32, 64, 100, 150, 200], "seeds": 6},
)
def rotation_variant(p, ctx):
    """Judged by two :class:`verify.criteria.EverySeed` parts over ``seeds`` draws of bijections and
    Haar rotations (the first seed's draw is the one the claim judged alone before: the accuracies
    vary with the draw, so one run was one draw, not a deterministic measurement); "below 0.5" is
    strict (side "<": the rule ``acc < 0.5`` exactly). Six seeds: ``python -m verify oc`` on a 3-seed
    record of pilot base seed 100 (accuracies 0.985-0.991 at d = 100, 0.037-0.041 at d = 8) let the
    'at the threshold' alternative pass 0.14 of the time at 3 seeds and 0.05 at 6."""
    n, r = p["n_subjects"], p["n_relations"]
    seeds = ctx.seeds(p["seeds"])
    accs = {str(d): [] for d in p["dims"]}
    for seed in seeds:
        perms = make_bijections(n, r, rng_for(seed, "geometric.single_hop_variants.make_bijections"))
        subj, rel, target = single_hop_dataset(perms)
        for d in p["dims"]:
            model = build_rotation_model(
                perms, d, rng_for(seed, "geometric.single_hop_variants.build_rotation_model", d)
            )
            accs[str(d)].append(decode(model.selector_output(subj, rel), model.codes, target).accuracy)
    lo, hi = str(min(p["dims"])), str(max(p["dims"]))
    judgement = all_of(
        large_d=EverySeed(f"accuracy at d = {hi}", 0.98, ">=", "convention").judge(accs[hi], seeds),
        small_d=EverySeed(f"accuracy at d = {lo}", 0.5, "<", "convention").judge(accs[lo], seeds),
    )
    return judgement, {
        "accuracy": accs,
        "seeds": seeds,
        "4_R_lnN": 4 * r * math.log(n),
        "crosstalk_var": {k: (r - 1) / int(k) for k in accs},
    }


@claim(
    "geometric.single_hop.construct_transfer",
    source=f"{SRC}, zero-shot transfer of the MLP (abstract)",
    provenance="abstract",
    controls=[
        Control(
            "stale_embeddings",
            {"subject_rows": "old"},
            "the new facts read with the old subject "
            "rows (nothing swapped): the fixed MLP then answers the old bijections, not the new",
        )
    ],
    statement="swapping in new bijections changes only the subject-embedding rows: every other "
    "weight is bit-identical (no other tensor and no row past the N subjects changes; at least one "
    "subject row does) and the same MLP gives accuracy 1 on the new facts (an exact construction: one deterministic run, whose verdict holds for any draw of distinct codes and is tested at base seeds 0-2)",
    quick={"n_subjects": 1000, "n_relations": 4, "block_dim": 21, "subject_rows": "new"},
    full={"n_subjects": 10000, "n_relations": 8, "block_dim": 28, "subject_rows": "new"},
)
def construct_transfer(p, ctx):
    """Judged by ``all_of``: accuracy 1 on the new facts (:class:`verify.criteria.Threshold`), no
    weight changed outside the subject rows (an exact :class:`verify.criteria.Agreement`: changed
    tensors other than the embedding, plus changed embedding rows past the N subjects) and at least
    one subject row changed."""
    n, r, d0 = p["n_subjects"], p["n_relations"], p["block_dim"]
    model = build_block_model(
        make_bijections(n, r, ctx.rng("geometric.single_hop_variants.make_bijections")),
        d0,
        rng=ctx.rng("geometric.single_hop_variants.build_block_model"),
        device=ctx.device,
        dtype=ctx.torch_dtype(),
    )
    new_perms = make_bijections(n, r, ctx.rng("geometric.single_hop_variants.new_perms"))
    new = swap_bijections(model, new_perms)
    old_t, new_t = model.transformer.tensors(), new.transformer.tensors()
    changed = [
        k for k in old_t if not (old_t[k].shape == new_t[k].shape and bool((old_t[k] == new_t[k]).all()))
    ]
    rows_changed = (old_t["embed"] != new_t["embed"]).any(dim=1).nonzero().flatten().tolist()
    subj, rel, target = single_hop_dataset(new_perms)
    # the subject rows the new facts are read with: the swapped model's, or (the control) the old ones
    reader = model if choice(p, "subject_rows", ("new", "old")) == "old" else new
    acc = decode(reader.final_hidden(subj, rel), reader.transformer.unembed, target).accuracy
    outside = len([k for k in changed if k != "embed"]) + sum(row >= n for row in rows_changed)
    subject_rows = sum(row < n for row in rows_changed)
    judgement = all_of(
        accuracy=Threshold("accuracy on the new facts", 1.0, ">=", "theory").judge(acc),
        other_weights=Agreement("weight tensors and rows changed outside the subject rows", 0.0).judge(
            outside
        ),
        subject_rows=Threshold("subject embedding rows changed", 1, ">=", "theory").judge(subject_rows),
    )
    return judgement, {
        "n_changed_rows": len(rows_changed),
        "changed_tensors": changed,
        "changed_rows_max": max(rows_changed, default=-1),
    }
