"""Claims of the fact_mlp area, part 2: the encoder-decoder construction, its exact fit and its
cost in parameters (B3, docs/fact_mlp.md#statements-and-proof-sketches). The comparison with the
baselines and with gradient descent is in :mod:`verify.fact_mlp.compare`.
"""

from __future__ import annotations

import numpy as np

from constructions.seeding import rng_at
from theory.papers import paper
from verify.claims import Control, choice, claim, shared
from verify.criteria import Agreement, Bracket, EverySeed, Sequential, all_of

SRC = paper("fact_mlp")


@shared
def _encoder_facts(ctx, n_facts: int, n_values: int, d: int, salt: int) -> tuple:
    """The fact set of :func:`shared_encoder`, its decodability and the state of the stream after
    the draw: one draw per run (they do not depend on m_c or H)."""
    from constructions.fact_mlp.facts import fact_set
    from theory.fact_mlp.rho import decodability

    rng = ctx.rng("fact_mlp.capacity.draw.rng", n_facts, n_values, d, salt)
    facts = fact_set(n_facts, n_values, d, rng)
    return facts, decodability(facts.values), rng.bit_generator.state


@shared
def shared_encoder(
    ctx, n_facts: int, n_values: int, d: int, code_dims: list, n_gates: int | None = None, salt: int = 0
) -> tuple:
    """Fact set, decodability and one encoder-decoder per m_c in ``code_dims`` with ``n_gates``
    gates (None: ceil(F/d)), cached per run; the builds continue the fact set's stream.

    >>> from verify.claims import Context
    >>> facts, res, (mlp,) = shared_encoder(Context(seed=0), 40, 16, 8, [6])
    >>> facts.keys.shape, mlp.size["n_gates"]
    ((40, 8), 5)
    """
    from constructions.fact_mlp.encoder import encoder_decoder_family

    facts, res, state = _encoder_facts(ctx, n_facts, n_values, d, salt)
    mlps = encoder_decoder_family(facts, list(code_dims), rng_at(state), n_gates, res)
    return facts, res, mlps


def _gates(n_facts: int, d: int, H: int) -> int | None:
    """The n_gates argument of shared_encoder for H gates (0: ceil(F/d)): None when H is the default
    ceil(F/d) (so the claims and controls at that H share one build)."""
    from theory.fact_mlp.bounds import n_gates

    H = H or n_gates(n_facts, d)
    return None if H == n_gates(n_facts, d) else int(H)


@shared
def exact_fit(ctx, n_facts: int, n_values: int, d: int, code_dim: int, n_gates: int | None = None) -> dict:
    """rank(Phi), max fit error, accuracy, margin, gate count and parameter counts of the encoder of
    :func:`shared_encoder` with ``n_gates`` gates (None: ceil(F/d)).

    >>> from verify.claims import Context
    >>> r = exact_fit(Context(seed=0), 40, 16, 8, 6)
    >>> r["rank"], r["n_gates"], r["max_error"] < 1e-8
    (40, 5, True)
    """
    from scipy.linalg import eigh

    from constructions.fact_mlp.encoder import fit_error

    facts, res, (mlp,) = shared_encoder(ctx, n_facts, n_values, d, [code_dim], n_gates=n_gates)
    K, G = facts.keys, mlp.info["gates"]
    R = np.maximum(K @ G.T, 0.0)
    eig = eigh((R @ R.T) * (K @ K.T), eigvals_only=True)  # rank(Phi) = rank(Phi Phi^T)
    rank = int(np.sum(eig > eig.max() * len(eig) * np.finfo(float).eps))
    acc, margin = mlp.decode()
    return {
        "rank": rank,
        "max_error": fit_error(mlp),
        "accuracy": acc,
        "min_margin": margin,
        "n_gates": mlp.size["n_gates"],
        "extra_gates": mlp.size["extra_gates"],
        "params_standard": mlp.params_standard,
        "params_unique": mlp.params_unique,
        "rho": res.rho,
        "gram_min_eig_over_max": float(eig.min() / eig.max()),
    }


@claim(
    "fact_mlp.encoder.encoder_exact",
    source=SRC + ", encoder-decoder construction (docs/fact_mlp.md)",
    provenance="derived",
    templated=True,
    statement="the gated encoder with exactly H = ceil(F/d) gates (no gate added by the "
    "builder) interpolates exactly: rank(Phi) = F, max fit error < 1e-8, accuracy 1 with a positive "
    "margin (construction setting d={d}, F={n_facts}, H = ceil({n_facts}/{d}), n_V={n_values}, "
    "m_c={code_dim}), on each of {seeds} fact-set draws",
    quick={"n_facts": 2048, "n_values": 256, "d": 128, "code_dim": 48, "n_gates": 0, "seeds": 6},
    seed_rule="every seed of seed..seed+5 (one fact set and one gate draw each)",
    controls=[
        Control(
            "one_gate_fewer",
            lambda p: {"n_gates": -(-p["n_facts"] // p["d"]) - 1, "seeds": 2},
            "with H = ceil(F/d) - 1 gates, H d < F, so rank(Phi) <= H d < F and the exact fit must fail "
            "(on two fact-set draws: the rank bound holds for every draw)",
        )
    ],
)
def check_encoder_exact(p, ctx):
    """Quick scale is now the construction setting of docs/fact_mlp.md (it was d=64, F=1024 'to stay
    under 20 s'; that setting runs in about 1.5 s). n_gates 0 means ceil(F/d). Judged by
    :func:`verify.criteria.all_of` over the gate count, rank, fit error, accuracy and margin.

    Changed (replicates): judged on one fact set, now on each of six (seed..seed+5; every part a
    rule over the draws with its per-draw values stored, so verify oc can simulate it). Six is
    verify oc's count: on the record of pilot base seed 100 at three draws the alternatives 'fit
    at the threshold' and 'margin at the threshold' passed 0.10 of the time, at six <= 0.02."""
    from dataclasses import replace

    from theory.fact_mlp.bounds import n_gates

    want = p["n_gates"] or n_gates(p["n_facts"], p["d"])
    H = _gates(p["n_facts"], p["d"], want)
    seeds = ctx.seeds(p["seeds"])
    rows = [
        exact_fit(replace(ctx, seed=s), p["n_facts"], p["n_values"], p["d"], p["code_dim"], H) for s in seeds
    ]

    def every(quantity, value, side, source, key):
        return EverySeed(quantity, value, side, source).judge([r[key] for r in rows], seeds=seeds)

    judgement = all_of(
        gates=Agreement("H - ceil(F/d)", 0).judge(want - n_gates(p["n_facts"], p["d"])),
        no_extra_gate=EverySeed("gates built - H", 0, "<=", "theory").judge(
            [r["n_gates"] - want for r in rows], seeds=seeds
        ),
        rank=every("rank(Phi)", p["n_facts"], ">=", "theory", "rank"),
        fit=every("max fit error", 1e-8, "<", "convention", "max_error"),
        accuracy=every("accuracy", 1.0, ">=", "theory", "accuracy"),
        margin=every("min margin", 0.0, ">", "theory", "min_margin"),
    )
    return judgement, {**rows[0], "per_seed": [{"seed": s, **r} for s, r in zip(seeds, rows)]}


def _breaks_exact_fit(r: dict, n_facts: int) -> bool:
    """The demonstration's criterion: the encoder does not interpolate (rank < F, error > 1e-6)."""
    return r["rank"] < n_facts and r["max_error"] > 1e-6


@claim(
    "fact_mlp.encoder.encoder_underparam",
    source=SRC + ", encoder-decoder construction (docs/fact_mlp.md)",
    provenance="derived",
    templated=True,
    statement="must fail: one gate below the boundary H d = F, at H = ceil(F/d) - 1 = {n_gates} "
    "(H d < F; d={d}, F={n_facts}) the encoder cannot interpolate: rank(Phi) < F and max fit error "
    "> 1e-6; at H = ceil(F/d) (the boundary itself, where H d = F) the fit is exact (both points "
    "measured; resolution max(F/(H_below d), H_above d/F)). Accuracy reported (it may stay 1: storage "
    "needs only the argmax). The break side is a counting identity, not a measurement (rank(Phi) <= "
    "H d < F: F targets cannot all be fitted); the empirical part is the hold side, where the random "
    "features of H d = F must reach full rank and fit exactly",
    quick={"n_facts": 2048, "n_values": 256, "d": 128, "code_dim": 48, "n_gates": 15},
    demonstrates_failure=True,
    controls=[
        Control(
            "at_boundary",
            {"n_gates": 0},
            "with H = ceil(F/d) = 16 gates the fit is exact (encoder_exact), so the "
            "demonstration must fail there",
        )
    ],
)
def check_encoder_underparam(p, ctx):
    """Changed: the demonstration was 'accuracy < 1 at H = 4 (H d = F/4)', far
    from the boundary; it now sits one gate below it and demonstrates the broken guarantee (exact
    interpolation). Judged by a :class:`verify.criteria.Bracket` in H around F/d: the claim reads
    both H = ceil(F/d) - 1 and ceil(F/d) (shared builds), ``n_gates`` is the point on its side (0
    means ceil(F/d)). The bracket is closed: the condition H d >= F includes its boundary, so when
    d divides F the hold point is the boundary itself (the sharpest test there is). The older
    criteria's results are kept in details["previous_criterion"] (stored once, verify.previous)."""
    from theory.fact_mlp.bounds import n_gates

    F, d = p["n_facts"], p["d"]
    H0 = n_gates(F, d)
    H = p["n_gates"] or H0
    side = "below" if H * d < F else "above"
    bracket = Bracket(
        "H (gates)", F / d, H if side == "below" else H0 - 1, H if side == "above" else H0, closed=True
    )
    fits = {
        h: exact_fit(ctx, F, p["n_values"], d, p["code_dim"], _gates(F, d, h))
        for h in (int(bracket.below), int(bracket.above))
    }
    breaks = {h: _breaks_exact_fit(r, F) for h, r in fits.items()}
    judgement = bracket.judge_side(side, breaks[int(bracket.below)], breaks[int(bracket.above)])
    r = fits[H]
    return judgement, {
        **r,
        "bracket": {
            "bound": "the construction's condition H d >= F (theory.fact_mlp.bounds.n_gates)",
            "quantity": "H (gates)",
            "boundary": F / d,
            "below": bracket.below,
            "above": bracket.above,
            "factor": bracket.factor,
            "breaks_by": "rank(Phi) < F and max fit error > 1e-6; on the below side a counting "
            "identity (rank <= H d < F)",
        },
        "inner_check_exact_fit": r["max_error"] < 1e-8,
        "by_gates": {str(h): {k: v[k] for k in ("rank", "max_error", "accuracy")} for h, v in fits.items()},
    }


@claim(
    "fact_mlp.capacity.param_count",
    source=SRC + ", construction and gated-MLP parameter counts (docs/fact_mlp.md)",
    provenance="derived",
    bounds=(
        "fact_mlp.gated_mlp_params",
        "fact_mlp.construction_params",
        "fact_mlp.construction_params_unique",
    ),
    statement="gated MLP d=64, m=256 has 49 728 parameters with biases and 49 152 without; "
    "the construction at d=128, F=2048, m_c=48 has P_std = 294 912 and P_unique = "
    "106 496 (docs/fact_mlp.md), counted from its weights",
    quick={"d": 64, "hidden": 256, "n_facts": 2048, "n_values": 256, "d_construction": 128, "code_dim": 48},
    kind="identity",
    independence="the counts are the sizes of the weight arrays of built models (a torch-"
    "trained gated MLP, the construction's W_gate/W_up/W_down and its unique "
    "gates/encoder/projection), the predictions the closed forms of "
    "theory.fact_mlp.bounds, and the numbers typed from docs/fact_mlp.md a third side",
)
def check_param_count(p, ctx):
    from constructions.fact_mlp.baselines import train_gated_mlp
    from constructions.fact_mlp.facts import fact_set
    from theory.fact_mlp.bounds import construction_params, construction_params_unique, gated_mlp_params

    tiny = fact_set(8, 8, p["d"], ctx.rng("fact_mlp.capacity.fact_set"))
    with_b = train_gated_mlp(tiny, p["hidden"], ctx.seed, epochs=1)
    without = train_gated_mlp(tiny, p["hidden"], ctx.seed, epochs=1, biases=False)
    counted = {
        k: sum(int(np.asarray(w).size) for w in m.gated.values())
        for k, m in (("with_biases", with_b), ("without", without))
    }
    # the encoder_exact build at the same (F, n_V, d, m_c) (shared: one F x F solve per run)
    _, _, (mlp,) = shared_encoder(ctx, p["n_facts"], p["n_values"], p["d_construction"], [p["code_dim"]])
    H, m_c, d = mlp.size["n_gates"], p["code_dim"], p["d_construction"]
    gated_count = sum(int(w.size) for w in mlp.gated.values())
    unique_count = mlp.info["gates"].size + mlp.info["encoder"].size + mlp.info["projection"].size
    measured = {
        "gated_with_biases": counted["with_biases"],
        "gated_without": counted["without"],
        "P_std": gated_count,
        "P_unique": int(unique_count),
    }
    predicted = {
        "gated_with_biases": gated_mlp_params(p["d"], p["hidden"]),
        "gated_without": gated_mlp_params(p["d"], p["hidden"], biases=False),
        "P_std": int(construction_params(p["n_facts"], d, m_c)),
        "P_unique": int(construction_params_unique(p["n_facts"], d, m_c)),
    }
    spec = {"gated_with_biases": 49728, "gated_without": 49152, "P_std": 294912, "P_unique": 106496}
    diff = max(
        max(abs(measured[k] - predicted[k]), abs(predicted[k] - spec[k]), abs(measured[k] - spec[k]))
        for k in spec
    )
    judgement = Agreement("max |count - formula|, |formula - docs|, |count - docs| (parameters)", 0).judge(
        max(diff, abs(H - 16))
    )
    return judgement, {
        "measured": measured,
        "formula": predicted,
        "spec": spec,
        "n_gates": H,
    }


#: m_c grid of the smallest-storing-size searches: every integer from 8 to 128 (was a 2^(1/4)-ratio
#: grid 16..91, one step of which moved linear_cost's slope by 0.12 against a window of 0.1)
LIN_CODE_DIMS = tuple(range(8, 129))


@shared
def _fixed_values(ctx, n_values: int, d: int) -> tuple:
    """The values of :func:`smallest_storing_code_dim` (one draw per seed) and their decodability."""
    from constructions.fact_mlp.facts import spherical
    from theory.fact_mlp.rho import decodability

    V = spherical(n_values, d, ctx.rng("fact_mlp.capacity.spherical"))
    return V, decodability(V)


def smallest_storing_code_dim(
    ctx, F: int, n_values: int, d: int, draw: int, n_gates: int | None = None
) -> tuple[int | None, int | None, int | None, list]:
    """Smallest m_c in LIN_CODE_DIMS (binary search) whose construction stores F facts with
    values fixed across F (drawn once per seed), keys drawn per F, decoder Rp drawn per (F, draw).
    Every value is used at every F (the first n_V facts take the values in turn, the rest are
    drawn), so F changes the fact count and not the set of values to decode. Returns (m_c or
    None, P_std, P_unique, trace).

    >>> from verify.claims import Context
    >>> smallest_storing_code_dim(Context(seed=0), 64, 32, 16, 0)[:3]
    (20, 3840, 1664)
    """
    from constructions.fact_mlp.baselines import smallest_size
    from constructions.fact_mlp.encoder import build_encoder_decoder
    from constructions.fact_mlp.facts import FactSet, spherical

    if F < n_values:
        raise ValueError(f"F = {F} < n_V = {n_values}: every value cannot be used (the claim's setting)")
    V, res = _fixed_values(ctx, n_values, d)
    rng = ctx.rng("fact_mlp.capacity.smallest_storing_code_dim.rng", F)
    keys = spherical(F, d, rng)
    fact_map = rng.integers(0, n_values, F)
    fact_map[:n_values] = np.arange(n_values)
    facts = FactSet(keys, V, fact_map)
    built = {}

    def build(m):
        built[m] = build_encoder_decoder(
            facts,
            m,
            ctx.rng("fact_mlp.capacity.build_encoder_decoder", F, draw, m),
            n_gates=n_gates,
            decodability=res,
        )
        return built[m]

    m, trace = smallest_size(build, LIN_CODE_DIMS)
    if m is None:
        return None, None, None, trace
    return m, built[m].params_standard, built[m].params_unique, trace


LINEAR_COST_QUICK = {
    "n_facts": [256, 512, 1024],
    "n_values": 64,
    "d": 64,
    "draws": 3,
    "need": 2,
    "looks": [5, 10, 20],
    "gates": "ceil(F/d)",
}


@claim(
    "fact_mlp.capacity.linear_cost",
    source=SRC + ", B3 (abstract: optimal scaling)",
    bounds=("fact_mlp.construction_params", "fact_mlp.info_bits"),
    provenance="derived",
    templated=True,
    statement="at fixed values (d={d}, n_V={n_values}, every value used at every F) the smallest "
    "storing construction (m_c searched over every integer 8..128, accuracy 1 in >= {need} of "
    "{draws} decoder draws, H = ceil(F/d)) stores every F in {n_facts} and has P_std growing "
    "linearly in F: the mean over value draws of the log-log slope lies within 1 +- 0.1 (0.9 <= "
    "slope <= 1.1), judged in stages at {looks} value draws by one-sided Student-t bounds (error "
    "0.05 per direction over the looks, optional stopping included; inconclusive when the last look "
    "leaves an end undecided)",
    quick=LINEAR_COST_QUICK,
    full=dict(LINEAR_COST_QUICK, n_facts=[2048, 4096, 8192], n_values=256, d=128),
    seed_rule="per value draw (seeds seed, seed+1, ...), the smallest m_c storing in >= 2 of 3 draws of "
    "Rp at each F and the slope over F; sequential looks over the value draws (the first that decides)",
    controls=[
        Control(
            "fixed_gates",
            {"gates": "fixed", "draws": 1, "need": 1, "looks": [2]},
            "the gate count frozen at ceil(F_min/d) for every F (parameters no "
            "longer grow with F): the larger fact sets are not stored at any m_c, "
            "so the criterion must fail (one decoder draw and two value draws: each failing build "
            "is a least-squares solve)",
        )
    ],
)
def check_linear_cost(p, ctx):
    """Changed (resolution): the slope was judged on one value draw, with m_c on a 2^(1/4)-ratio
    grid, where one grid step at an end of the F range moves the slope by about 0.12 against the
    window 1 +- 0.1, so the verdict flipped with the base seed (4 and 11 failed, ledger). Now m_c
    is searched over every integer (a step moves the slope by at most ln(33/32)/ln 4 = 0.02 at
    m_c >= 32), the slope is measured on several value draws and judged by the 95% Student-t
    interval of its mean (a straddled end is inconclusive, with the draws that would decide).
    Every value is used at every F: at the former quick setting (n_V = 256, F = 512) about 35 of
    the 256 values were never used, so part of m_c*'s growth with F came from decoding more values
    (pilot base seeds 100-101 at that setting, integer grid: m_c* 29, 30, 33 and 27, 27, 31 at F =
    512, 1024, 2048, slopes 1.09 and 1.10). Quick scale moved to d = 64, n_V = 64 (F = 256..1024,
    the same H = 4..16), where a value draw costs about a fifth of one at d = 128. The seed count is
    verify oc's: on the record of pilot base seed 100 at 5 value draws (slopes 0.93, 1.00, 0.96,
    1.11, 0.86; interval [0.862, 1.085]) it gave power 0.18 (inconclusive 0.82) and 0.93 at 20
    value draws, every alternative passing <= 0.03; 20 is taken. Pilot base seed 101 at 20 value
    draws (101-120): slopes 0.81-1.11, interval [0.940, 1.022] (pass), verify oc power 0.98, the
    worst alternative ('slope_low at the threshold') passing 0.04; about 40 s of CPU. The 20 draws
    are spent in stages (verify.criteria.Sequential at 5, 10, 20; the last look's bounds are a
    little wider than the 95% interval, Bonferroni over three looks), so a clear slope stops at 5
    or 10 value draws.
    The first slope was fitted to the formula P_std(F) at a fixed m_c (stored slope
    0.9999999999999999)."""
    from dataclasses import replace

    from theory.fact_mlp.bounds import info_bits, n_gates
    from verify.measure import t_interval

    fixed = choice(p, "gates", ("ceil(F/d)", "fixed")) == "fixed"  # the control
    H0 = n_gates(min(p["n_facts"]), p["d"]) if fixed else None

    def value_draw(s: int) -> dict:
        sub = replace(ctx, seed=s)
        rows = []
        for F in p["n_facts"]:
            per_draw = [
                smallest_storing_code_dim(sub, F, p["n_values"], p["d"], k, H0) for k in range(p["draws"])
            ]
            ms = sorted(r[0] for r in per_draw if r[0] is not None)
            m_star = ms[p["need"] - 1] if len(ms) >= p["need"] else None
            H = H0 or n_gates(F, p["d"])
            rows.append(
                {
                    "n_facts": F,
                    "mc_per_draw": [r[0] for r in per_draw],
                    "mc_star": m_star,
                    "params_standard": None if m_star is None else 3 * p["d"] * H * m_star,
                    "params_unique": None
                    if m_star is None
                    else H * p["d"] + H * p["d"] * m_star + m_star * p["d"],
                }
            )
        ok = all(r["mc_star"] is not None for r in rows)
        slope = (
            float(np.polyfit(np.log(p["n_facts"]), np.log([r["params_standard"] for r in rows]), 1)[0])
            if ok
            else None
        )
        return {"seed": s, "rows": rows, "slope": slope}

    def judged(per_seed: list[dict]):
        slopes = [r["slope"] for r in per_seed if r["slope"] is not None]
        parts = {
            "stored": Agreement("(value draw, F) pairs stored at no m_c of the grid", 0).judge(
                sum(row["mc_star"] is None for r in per_seed for row in r["rows"])
            )
        }
        if len(slopes) >= looks[0]:  # a failed store already fails the claim
            q = "mean log-log slope of P_std in F"
            labels = [r["seed"] for r in per_seed if r["slope"] is not None]
            for name, value, side in (("slope_low", 0.9, ">="), ("slope_high", 1.1, "<=")):
                rule = Sequential(q, value, side, "convention", looks)
                parts[name] = rule.judge(slopes, seeds=labels)
        return all_of(**parts), slopes

    looks = tuple(int(n) for n in p["looks"])
    seeds = ctx.seeds(looks[-1])
    per_seed: list[dict] = []
    for look in looks:  # the next stage of value draws only where this look does not decide
        per_seed += [value_draw(s) for s in seeds[len(per_seed) : look]]
        judgement, slopes = judged(per_seed)
        if judgement.verdict != "inconclusive":
            break
    interval = list(t_interval(slopes)) if len(slopes) >= 2 else None
    first = per_seed[0]["rows"]
    bits = [info_bits(F, p["n_values"]) for F in p["n_facts"]]
    params = [r["params_standard"] for r in first]
    return judgement, {
        "n_facts": list(p["n_facts"]),
        "slopes": slopes,
        "slope_interval95": interval,
        "per_seed": per_seed,
        # the base seed's value draw (the figure's curve)
        "mc_star": [r["mc_star"] for r in first],
        "rows": first,
        "params_standard": params,
        "params_unique": [r["params_unique"] for r in first],
        "slope": per_seed[0]["slope"],
        "info_bits": bits,
        "bits_per_param_std": [b / q if q else None for b, q in zip(bits, params)],
    }
