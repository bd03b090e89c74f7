"""Claims of the fact_mlp area, part 3: GD-trained gated MLPs, the margin criterion, the
capacity-vs-usability tradeoff of whitened readouts, and the capacity grid over geometries.
"""

from __future__ import annotations

import math

import numpy as np

from verify.claims import Control, choice, claim, rng_for, shared
from verify.criteria import Agreement, KOfN, Threshold, all_of
from verify.fact_mlp.usability_setup import GD_BATCH, SRC, gd_capacities, lipschitz
from verify.measure import t_interval

#: "about linear": the band of gd.gd_linear_capacity's log-log slope, a convention around 1
SLOPE_BAND = (0.7, 1.5)
#: noise_usability's gap in accuracy drop (whitened minus unwhitened), a convention
MIN_DROP_GAP = 0.2


@claim(
    "fact_mlp.gd.gd_fits",
    source=SRC + ", gated MLP baseline protocol",
    provenance="reference",
    templated=True,
    statement="a gated MLP (d={d}, m={hidden}) trained by full-batch Adam (<= {epochs} epochs) stores "
    "F={n_facts} untied facts (n_V={n_values}) with accuracy 1 on >= {need} of {seeds} seeds (k of n "
    "by convention, not from a failure rate)",
    quick={"n_facts": 64, "n_values": 64, "d": 16, "hidden": 16, "epochs": 3000, "seeds": 5, "need": 4},
    seed_rule="at least 4 of the 5 seeds seed..seed+4 (fact set and initialisation per seed)",
    controls=[
        Control("init", {"epochs": 0}, "the same MLPs at initialisation (0 epochs) must not store the facts")
    ],
)
def check_gd_fits(p, ctx):
    """The seeds' MLPs are trained as one batched model (constructions.fact_mlp.gd_batch: equal
    to the single-draw trainer up to float round-off; weights and epochs bitwise equal at seeds
    0-6, tests/fact_mlp/test_gd_batch.py)."""
    from constructions.fact_mlp.facts import fact_set
    from constructions.fact_mlp.gd_batch import train_gated_mlp_batch

    seeds = ctx.seeds(p["seeds"])
    facts = [
        fact_set(p["n_facts"], p["n_values"], p["d"], rng_for(s, "fact_mlp.usability.check_gd_fits.fact_set"))
        for s in seeds
    ]
    mlps = train_gated_mlp_batch(
        facts, [p["hidden"]] * len(seeds), seeds, epochs=p["epochs"], device=ctx.device
    )
    accs = [mlp.decode()[0] for mlp in mlps]
    epochs = [mlp.info["epochs"] for mlp in mlps]
    # accuracy <= 1, so "accuracy >= 1" is "accuracy = 1" (ties count as errors in decode)
    judgement = KOfN("accuracy", 1.0, ">=", k=p["need"], source="convention").judge(accs, seeds=seeds)
    return judgement, {"accuracies": accs, "epochs": epochs}


@claim(
    "fact_mlp.gd.gd_linear_capacity",
    source=SRC + " (abstract: GD asymptotics)",
    provenance="abstract",
    templated=True,
    statement="GD capacity grows about linearly in parameters: the log-log slope of F against "
    "3dm at the smallest storing width m lies in [0.7, 1.5] (a band around 1 by convention; d={d}, F in "
    "{n_facts}, n_V = F, m searched in [4, 64], <= {epochs} epochs, mean width over {seeds} seed(s))",
    quick={"n_facts": [64, 128, 256], "d": 16, "epochs": 2000, "seeds": 1},
    full={"n_facts": [64, 128, 256, 512], "d": 16, "epochs": 10000, "seeds": 3},
    seed_rule="one seed at quick scale, as registered (the batched search also trains draws 1-2, "
    "which capacity.gd_vs_construction judges; the rule here was not widened after its result); "
    "mean width over 3 seeds at full scale",
    controls=[
        Control(
            "init",
            {"epochs": 0},
            "untrained MLPs (0 epochs) store nothing at any width of the grid, so "
            "no slope exists and the criterion must fail",
        )
    ],
)
def check_gd_linear_capacity(p, ctx):
    widths, params, traces = [], [], []
    for F in p["n_facts"]:
        ms = []
        # the searches run as one batch of max(seeds, GD_BATCH) draws, shared with
        # capacity.gd_vs_construction; this claim uses the first p["seeds"] of them
        batch = ctx.seeds(max(p["seeds"], GD_BATCH))
        found = gd_capacities(ctx, F, p["d"], F, p["epochs"], batch)
        for s, (m, trace) in zip(ctx.seeds(p["seeds"]), found):
            ms.append(float("inf") if m is None else m)
            traces.append({"F": F, "seed": s, "trace": trace})
        widths.append(float(np.mean(ms)))
        params.append(3 * p["d"] * float(np.mean(ms)))
    if not all(np.isfinite(params)):  # some F stored at no width of the grid: no slope
        stored = sum(bool(np.isfinite(w)) for w in widths)
        rule = Threshold("F values with a storing width on the grid", len(widths), ">=", "convention")
        return rule.judge(stored), {
            "n_facts": list(p["n_facts"]),
            "traces": traces,
            "hidden": [w if np.isfinite(w) else None for w in widths],
        }
    slope = float(np.polyfit(np.log(params), np.log(p["n_facts"]), 1)[0])
    quantity = "log-log slope of F against 3dm"
    judgement = all_of(
        lower=Threshold(quantity, SLOPE_BAND[0], ">=", "convention").judge(slope),
        upper=Threshold(quantity, SLOPE_BAND[1], "<=", "convention").judge(slope),
    )
    return judgement, {
        "n_facts": list(p["n_facts"]),
        "hidden": widths,
        "params_no_bias": params,
        "slope": slope,
        "traces": traces,
    }


@claim(
    "fact_mlp.margin.margin_equiv",
    source=SRC + ", decoding margin",
    provenance="derived",
    templated=True,
    statement="on {instances} random constructed MLPs (d = {d}, F = {n_facts}; at least one storing and "
    "one not, one with exact ties), min margin > 0 <=> accuracy 1 on every instance (exact: 0 "
    "disagreements), where accuracy is an independent argmax count "
    "with ties as failures and the margin comes from verify.measure.decode",
    quick={"instances": 10, "d": 16, "n_facts": 64},
    kind="identity",
    independence="the margin comes from verify.measure.decode (chunked, tie tolerance relative "
    "to the logit scale); the accuracy is a direct argmax count over the full "
    "logit matrix with exact-tie detection, written here",
)
def check_margin_equiv(p, ctx):
    from constructions.fact_mlp.baselines import hebbian_readout, ntk_memory
    from constructions.fact_mlp.encoder import build_encoder_decoder
    from constructions.fact_mlp.facts import FactSet, fact_set, interior_value, spherical
    from verify.measure import decode

    rows = []
    for k in range(p["instances"]):
        rng = ctx.rng("fact_mlp.usability.check_margin_equiv.rng", k)
        if k == 0:  # an interior value: its facts give exact ties
            V = interior_value(spherical(15, p["d"], rng))
            f = rng.integers(0, len(V), p["n_facts"])
            facts = FactSet(spherical(p["n_facts"], p["d"], rng), V, f.astype(np.int64))
        else:
            facts = fact_set(p["n_facts"], 32, p["d"], rng)
        kind = k % 3
        if kind == 0:
            mlp = build_encoder_decoder(facts, [2, 4, 8, 16][k % 4], rng, allow_undecodable=True)
        elif kind == 1:
            mlp = ntk_memory(facts, [64, 512, 4096][k % 3], rng)
        else:
            mlp = hebbian_readout(facts, [32, 64, 128][k % 3], rng, whitened=k % 2 == 0)
        out = mlp.forward(facts.keys)
        logits = out @ facts.values.T
        best = logits.max(axis=1)
        unique_best = (logits == best[:, None]).sum(axis=1) == 1
        correct = (logits[np.arange(len(logits)), facts.fact_map] == best) & unique_best
        acc = float(correct.mean())
        margin = decode(out, facts.values, facts.fact_map).min_margin
        rows.append(
            {
                "construction": mlp.name,
                "accuracy": acc,
                "min_margin": margin,
                "agree": (margin > 0) == (acc == 1.0),
            }
        )
    disagree = sum(not r["agree"] for r in rows)
    n_stored = sum(r["accuracy"] == 1.0 for r in rows)
    stored = "instances that store (accuracy 1)"
    judgement = all_of(
        identity=Agreement("instances where (margin > 0) != (accuracy = 1)", 0.0).judge(disagree),
        some_store=Threshold(stored, 1, ">=", "convention").judge(n_stored),
        some_do_not=Threshold(stored, len(rows) - 1, "<=", "convention").judge(n_stored),
    )
    return judgement, {"instances": rows}


@shared
def hebbian_pair(ctx, F: int, d: int, m: int, seed: int) -> tuple:
    """(facts, unwhitened readout, whitened readout) of width ``m`` on F facts (n_V = F) in R^d,
    drawn from ``seed``.

    >>> from verify.claims import Context
    >>> facts, plain, white = hebbian_pair(Context(), 16, 8, 16, 0)
    >>> facts.keys.shape, plain.name, white.name
    ((16, 8), 'hebbian', 'hebbian_whitened')
    """
    from constructions.fact_mlp.baselines import hebbian_readout
    from constructions.fact_mlp.facts import fact_set

    facts = fact_set(F, F, d, rng_for(seed, "fact_mlp.usability.hebbian_pair.fact_set", F))
    return (
        facts,
        hebbian_readout(facts, m, rng_for(seed, "fact_mlp.usability.hebbian_readout", F), False),
        hebbian_readout(facts, m, rng_for(seed, "fact_mlp.usability.hebbian_readout", F), True),
    )


@claim(
    "fact_mlp.usability.lipschitz_tradeoff",
    source=SRC + " (abstract: capacity vs usability)",
    provenance="abstract",
    templated=True,
    statement="the whitened Hebbian readout stores at least as many facts (largest F in {n_facts} at "
    "accuracy 1) and has a strictly higher scale-free Lipschitz constant (at F={lip_at}) than the "
    "unwhitened one (d={d}, m={hidden})",
    quick={"n_facts": [64, 128, 256], "d": 32, "hidden": 128, "lip_at": 128, "second": "hebbian_whitened"},
    controls=[
        Control(
            "unwhitened_twice",
            {"second": "hebbian"},
            "the unwhitened readout compared with itself: its Lipschitz constant "
            "cannot be strictly higher, so the criterion must fail",
        )
    ],
)
def check_lipschitz_tradeoff(p, ctx):
    cap = {"hebbian": 0, "hebbian_whitened": 0}
    accs = {"hebbian": [], "hebbian_whitened": []}
    lips = {}
    itself = choice(p, "second", ("hebbian_whitened", "hebbian")) == "hebbian"
    for F in p["n_facts"]:
        facts, plain, white = hebbian_pair(ctx, F, p["d"], p["hidden"], ctx.seed)
        if itself:  # the control: the unwhitened readout against itself
            white = plain
        for name, mlp in (("hebbian", plain), ("hebbian_whitened", white)):
            acc = mlp.decode()[0]
            accs[name].append(acc)
            if acc == 1.0:
                cap[name] = max(cap[name], F)
            if F == p["lip_at"]:
                lips[name] = lipschitz(mlp, facts.keys, ctx.rng("fact_mlp.usability.lipschitz"))
    judgement = all_of(
        capacity=Threshold("capacity(whitened) - capacity(unwhitened)", 0, ">=", "theory").judge(
            cap["hebbian_whitened"] - cap["hebbian"]
        ),
        lipschitz=Threshold("Lipschitz(whitened) - Lipschitz(unwhitened)", 0.0, ">", "theory").judge(
            lips["hebbian_whitened"] - lips["hebbian"]
        ),
    )
    return judgement, {"n_facts": list(p["n_facts"]), "accuracy": accs, "capacity": cap, "lipschitz": lips}


@claim(
    "fact_mlp.usability.noise_usability",
    source=SRC + " (abstract: usability in Transformers)",
    provenance="abstract",
    templated=True,
    statement="at the interpolation threshold F = m = {n_facts} (d={d}) key noise N(0, {sigma}^2/d) lowers "
    "the whitened readout's accuracy by >= 0.2 (a convention) more than the unwhitened one's: the "
    "95% Student-t interval over {seeds} seeds of the per-seed gap drop(whitened) - drop(unwhitened) "
    "lies at or above 0.2 (inconclusive when it straddles 0.2); F = m in {report} reported",
    quick={"n_facts": 128, "d": 32, "sigma": 0.1, "seeds": 20, "report": [256, 512, 1024]},
    seed_rule="95% Student-t interval of the mean gap over seeds seed..seed+19 (per-seed drops recorded)",
    controls=[
        Control(
            "no_noise",
            {"sigma": 0.0},
            "without key noise neither readout loses accuracy, so the gap of 0.2 must fail",
        )
    ],
)
def check_noise_usability(p, ctx):
    """Changed: the rule was the mean gap over 3 seeds read as a point (no interval); it is now
    the 95% t-interval of the mean gap, three-valued (:class:`verify.criteria.Threshold`). The 20
    seeds were chosen on pilot base seed 100 (never judged): 20 seeds, mean gap 0.42, sd 0.20, so
    about 5 seeds would put the interval's lower end above 0.2 and 20 leave room for a larger sd.
    The old point rule's verdict (on the first 3 seeds, the seeds it used) is kept in the details."""

    def drops(F, seed):
        facts, plain, white = hebbian_pair(ctx, F, p["d"], F, seed)
        rng = rng_for(seed, "fact_mlp.usability.drops.rng", F)
        noisy = facts.keys + p["sigma"] / math.sqrt(p["d"]) * rng.standard_normal(facts.keys.shape)
        out = {}
        for mlp in (plain, white):
            from constructions.fact_mlp.facts import decode_numpy

            clean = mlp.decode()[0]
            out[mlp.name] = {
                "clean": clean,
                "noisy": decode_numpy(mlp.forward(noisy), facts.values, facts.fact_map)[0],
            }
            out[mlp.name]["drop"] = out[mlp.name]["clean"] - out[mlp.name]["noisy"]
            out[mlp.name]["lipschitz"] = lipschitz(mlp, facts.keys, rng_for(seed))
        return out

    per_seed = [drops(p["n_facts"], s) for s in ctx.seeds(p["seeds"])]
    d_white = float(np.mean([r["hebbian_whitened"]["drop"] for r in per_seed]))
    d_plain = float(np.mean([r["hebbian"]["drop"] for r in per_seed]))
    gaps = [r["hebbian_whitened"]["drop"] - r["hebbian"]["drop"] for r in per_seed]
    report = {F: drops(F, ctx.seed) for F in p["report"]}
    judgement = Threshold(
        "mean gap drop(whitened) - drop(unwhitened), 95% interval", MIN_DROP_GAP, ">=", "convention"
    ).judge(t_interval(gaps), seeds=len(gaps))
    return judgement, {
        "per_seed": per_seed,
        "gaps": gaps,
        "drop_whitened": d_white,
        "drop_unwhitened": d_plain,
        "larger_F": {str(k): v for k, v in report.items()},
    }
