"""Claims of the fact_mlp area, part 3: GD-trained gated MLPs, the margin criterion, the
capacity-vs-usability tradeoff of whitened readouts, and the capacity grid over geometries.
"""

from __future__ import annotations

import math

import numpy as np

from verify.claims import Control, choice, claim, rng_for, shared
from verify.criteria import Agreement, EverySeed, KOfN, Threshold, all_of
from verify.fact_mlp.usability_setup import GD_BATCH, SRC, gd_capacities, lipschitz
from verify.measure import t_interval

#: "about linear": the band of gd.gd_linear_capacity's log-log slope, a convention around 1
SLOPE_BAND = (0.7, 1.5)
#: noise_usability's gap in accuracy drop (whitened minus unwhitened), a convention
MIN_DROP_GAP = 0.2


def signed_log_ratio(r: float) -> float:
    """sign(r) log10(1 + |r|): a margin-to-tolerance ratio on a log scale that keeps its sign.

    >>> signed_log_ratio(9.0), signed_log_ratio(-9.0), signed_log_ratio(0.0)
    (1.0, -1.0, 0.0)
    """
    if math.isnan(r):
        raise ValueError("a NaN margin ratio: the MLP's outputs are not finite")
    return math.copysign(math.log10(1.0 + abs(r)), r)


@claim(
    "fact_mlp.gd.gd_fits",
    source=SRC + ", gated MLP baseline protocol",
    provenance="reference",
    templated=True,
    statement="a gated MLP (d={d}, m={hidden}) trained by full-batch Adam (<= {epochs} epochs) stores "
    "F={n_facts} untied facts (n_V={n_values}) on every one of {seeds} seeds: on each seed every fact's "
    "decoding margin (the correct value's logit minus the best other one's) exceeds its tie "
    "tolerance, the decode kernel's rule for a stored fact (accuracy 1, ties as errors): the "
    "smallest ratio r = margin / tolerance over the facts, on the signed log scale sign(r) "
    "log10(1 + |r|), is > log10 2",
    quick={"n_facts": 64, "n_values": 64, "d": 16, "hidden": 16, "epochs": 3000, "seeds": 5},
    seed_rule="every seed of seed..seed+4 (fact set and initialisation per seed)",
    controls=[
        Control("init", {"epochs": 0}, "the same MLPs at initialisation (0 epochs) must not store the facts")
    ],
)
def check_gd_fits(p, ctx):
    """The seeds' MLPs are trained as one batched model (constructions.fact_mlp.gd_batch: equal
    to the single-draw trainer up to float round-off; weights and epochs bitwise equal at seeds
    0-6, tests/fact_mlp/test_gd_batch.py).

    Changed criterion (no spread): the rule was "accuracy 1 on >= 4 of 5 seeds" (KOfN), an
    accuracy stuck at 1 on every seed, which verify oc cannot simulate. It now reads, per seed, the
    smallest ratio r of a fact's decoding margin to its tie tolerance (the decode kernel's: a fact
    is stored exactly when r > 1, so "r > 1 on a seed" is "accuracy 1 on the seed"), on the signed
    log scale sign(r) log10(1 + |r|) (r > 1 exactly when it exceeds log10 2; the scale keeps the
    control's negative margins and makes the per-seed spread near-normal: the raw margins of early
    stopping, 0.015-0.66, gave verify oc a power of 0.47 under a normal law), judged on every seed
    (EverySeed: 4 of 5 at the threshold would pass 0.19 of the time, a pass meaning nothing;
    every one of 5 passes 0.03). Every one of the 20 pilot seeds 100-119 (never judged) stored
    (margins 0.015-0.66 after 650-1050 epochs), so "every seed" was chosen there. At base seed 0
    the old rule passed (5 of 5 at accuracy 1); its verdict is kept in the details."""
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
    decoded = [mlp.decode() for mlp in mlps]
    accs = [float(acc) for acc, _ in decoded]
    margins = [float(margin) for _, margin in decoded]
    epochs = [mlp.info["epochs"] for mlp in mlps]
    ratios = [float(np.min(mlp.margins() / mlp.tie_tolerances())) for mlp in mlps]
    signed = [signed_log_ratio(r) for r in ratios]
    judgement = EverySeed(
        "smallest margin / tie tolerance, signed log10(1 + |r|)", math.log10(2.0), ">", "theory"
    ).judge(signed, seeds=seeds)
    # the former rule (accuracy 1 on >= 4 of the 5 seeds), kept for the record
    old = KOfN("accuracy", 1.0, ">=", k=4, source="convention").judge(accs, seeds=seeds)
    return judgement, {
        "accuracies": accs,
        "margins": margins,
        "margin_over_tolerance": ratios,
        "epochs": epochs,
        "former_rule_4_of_5_accuracy_1": old.verdict,
    }


@claim(
    "fact_mlp.gd.gd_linear_capacity",
    source=SRC + " (abstract: GD asymptotics)",
    provenance="abstract",
    templated=True,
    statement="GD capacity grows about linearly in parameters: the log-log slope of F against "
    "3dm at the smallest storing width m lies in [0.7, 1.5] (a band around 1 by convention; d={d}, F in "
    "{n_facts}, n_V = F, m searched in [4, 64], <= {epochs} epochs): one slope per draw (fact sets and "
    "initialisations), the mean slope judged in stages at {looks} draws (one-sided Student-t bounds, "
    "error 0.05 per direction over the looks; inconclusive when undecided at the last look); the "
    "widths shown are the mean over {seeds} seed(s)",
    quick={"n_facts": [64, 128, 256], "d": 16, "epochs": 2000, "seeds": 1, "looks": [3, 6]},
    full={"n_facts": [64, 128, 256, 512], "d": 16, "epochs": 10000, "seeds": 3, "looks": [3, 6]},
    seed_rule="staged Student-t bounds (verify.criteria.Sequential) of the mean per-draw slope over "
    "draws seed..seed+2, then seed+3..seed+5 where the first look does not decide",
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
    """Changed criterion (one draw): the rule judged the slope of one draw at quick scale (the
    base seed's fact sets), a point verify oc cannot simulate; it now judges the mean of the
    per-draw slopes in stages (verify.criteria.Sequential over draws, looks at 3 and 6; the band
    [0.7, 1.5] unchanged). The first look's draws are the batch of GD_BATCH = 3 that the search
    trains anyway (shared with capacity.gd_vs_construction: no extra cost); the second look
    trains the next 3 draws only where the first does not decide. The looks were fixed on pilot
    base seeds 100 and 103 (never judged; 3 draws each): per-draw slopes 0.96, 1.10, 0.88 and
    1.10, 0.96, 0.99 (mean 1.00, sd 0.087); 3 draws alone passed 0.97 of the time at that sd and
    0.60 at twice it (staged_rates, 4000 runs), looks (3, 6) 1.00 and 0.92 (mean 3.5 and 4.9
    draws), passing 0.035 of the time with the mean on 0.7. At base seed 0 the former rule passed
    (slope 1.099). The widths shown (details "hidden", read by the atlas) are unchanged: the mean
    over the first ``seeds`` draws."""
    from verify.criteria import Sequential

    looks = tuple(int(n) for n in p["looks"])
    seeds = ctx.seeds(max(looks[-1], p["seeds"]))
    widths_of: dict[int, list] = {F: [] for F in p["n_facts"]}
    traces = []

    def measure_batch(batch: list[int]) -> None:
        for F in p["n_facts"]:
            found = gd_capacities(ctx, F, p["d"], F, p["epochs"], batch)
            for s, (m, trace) in zip(batch, found):
                widths_of[F].append(float("inf") if m is None else float(m))
                traces.append({"F": F, "seed": s, "trace": trace})

    def slopes() -> list[float | None]:
        out = []
        for j in range(len(widths_of[p["n_facts"][0]])):
            ms = [widths_of[F][j] for F in p["n_facts"]]
            if not all(np.isfinite(ms)):
                out.append(None)
                continue
            P = [3 * p["d"] * m for m in ms]
            out.append(float(np.polyfit(np.log(P), np.log(p["n_facts"]), 1)[0]))
        return out

    quantity = "mean per-draw log-log slope of F against 3dm"
    judgement, per_draw = None, []
    # the first batch is the search's shared batch of max(seeds, GD_BATCH) draws; later draws in
    # batches of GD_BATCH, one stage at a time
    batches = [seeds[: max(p["seeds"], GD_BATCH)]]
    while len(batches[-1]) and sum(map(len, batches)) < len(seeds):
        done = sum(map(len, batches))
        batches.append(seeds[done : done + GD_BATCH])
    measured = 0
    for look in looks:
        while measured < look:
            batch = batches.pop(0)
            measure_batch(batch)
            measured += len(batch)
        per_draw = slopes()
        if any(x is None for x in per_draw[:look]):  # a draw stored at no width of the grid
            stored = sum(x is not None for x in per_draw[:look])
            rule = Threshold("draws whose every F has a storing width on the grid", look, ">=", "convention")
            judgement = rule.judge(stored)
            break
        labels = seeds[:look]
        judgement = all_of(
            lower=Sequential(quantity, SLOPE_BAND[0], ">=", "convention", looks, unit="draws").judge(
                per_draw[:look], seeds=labels
            ),
            upper=Sequential(quantity, SLOPE_BAND[1], "<=", "convention", looks, unit="draws").judge(
                per_draw[:look], seeds=labels
            ),
        )
        if judgement.verdict != "inconclusive":
            break
    shown = [float(np.mean(widths_of[F][: p["seeds"]])) for F in p["n_facts"]]
    return judgement, {
        "n_facts": list(p["n_facts"]),
        "hidden": [w if np.isfinite(w) else None for w in shown],
        "params_no_bias": [3 * p["d"] * w if np.isfinite(w) else None for w in shown],
        "slope": per_draw[0] if per_draw else None,
        "slopes_per_draw": per_draw,
        "widths_per_draw": {
            str(F): [w if np.isfinite(w) else None for w in ws] for F, ws in widths_of.items()
        },
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
    "unwhitened one (d={d}, m={hidden}), on every one of {seeds} seeds (fact set and readout per seed)",
    quick={
        "n_facts": [64, 128, 256],
        "d": 32,
        "hidden": 128,
        "lip_at": 128,
        "second": "hebbian_whitened",
        "seeds": 5,
    },
    seed_rule="every seed of seed..seed+4 (fact sets, readouts and Lipschitz pairs per seed)",
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
    """Changed criterion (one draw): the rule judged both differences on the base seed's one
    fact set per F, a point verify oc cannot simulate; it now judges them on every one of
    ``seeds`` seeds (EverySeed per part; 5 seeds, so that a value centred on its threshold passes
    at most 1/32 of the time), the Lipschitz part as log10 of the ratio of the two constants
    ("strictly higher" is a log ratio > 0): at pilot seeds 100-104 (never judged) the differences
    were 37-143 (sd 48 about a mean of 81, a normal law that verify oc drew below 0 often enough
    to give a power of 0.78), the log ratios are the same comparison on a scale where the seeds
    spread evenly. The first seed's draws are the former rule's (it passed at base seed 0:
    capacity difference 128, Lipschitz difference 89.4).

    Changed form (same rule): the capacity part stores, per seed, whether the whitened readout
    stores at least as many facts (1) or not (0), the comparison "capacity(whitened) -
    capacity(unwhitened) >= 0" itself; the difference stays in the details (``per_seed``). The
    capacities are grid values (largest F of {n_facts} at accuracy 1), so the difference takes
    the values 0, +-64, +-128, ... and verify oc, drawing it from a normal at the record's mean 89.6
    and sd 35.1, put 0.5% of the seeds below 0 and failed 4% of its runs: a spread the grid
    does not have. Drawn as 0/1 values, the part is a Bernoulli at the measured fraction.
    Pilot base seeds 100-145 (never judged; 50 seeds, the claim at base seeds 100, 105, ..., 145):
    the whitened readout stored F = 128 on every seed, the unwhitened one F = 0 at 41 and 64 at 9
    (differences 128 or 64, never 0 or below); log10 Lipschitz ratios 0.96-2.00 (mean 1.52, sd
    0.26)."""
    itself = choice(p, "second", ("hebbian_whitened", "hebbian")) == "hebbian"
    seeds = ctx.seeds(p["seeds"])
    per_seed = []
    for seed in seeds:
        cap = {"hebbian": 0, "hebbian_whitened": 0}
        accs = {"hebbian": [], "hebbian_whitened": []}
        lips = {}
        for F in p["n_facts"]:
            facts, plain, white = hebbian_pair(ctx, F, p["d"], p["hidden"], seed)
            if itself:  # the control: the unwhitened readout against itself
                white = plain
            for name, mlp in (("hebbian", plain), ("hebbian_whitened", white)):
                acc = mlp.decode()[0]
                accs[name].append(acc)
                if acc == 1.0:
                    cap[name] = max(cap[name], F)
                if F == p["lip_at"]:
                    lips[name] = lipschitz(mlp, facts.keys, rng_for(seed, "fact_mlp.usability.lipschitz"))
        per_seed.append({"seed": seed, "accuracy": accs, "capacity": cap, "lipschitz": lips})
    judgement = all_of(
        capacity=EverySeed(
            "whitened stores at least as many facts as unwhitened (1 yes, 0 no)", 1, ">=", "theory"
        ).judge(
            [float(r["capacity"]["hebbian_whitened"] >= r["capacity"]["hebbian"]) for r in per_seed],
            seeds=seeds,
        ),
        lipschitz=EverySeed("log10 Lipschitz(whitened) / Lipschitz(unwhitened)", 0.0, ">", "theory").judge(
            [math.log10(r["lipschitz"]["hebbian_whitened"] / r["lipschitz"]["hebbian"]) for r in per_seed],
            seeds=seeds,
        ),
    )
    first = per_seed[0]
    return judgement, {
        "n_facts": list(p["n_facts"]),
        "accuracy": first["accuracy"],
        "capacity": first["capacity"],
        "lipschitz": first["lipschitz"],
        "per_seed": per_seed,
    }


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
