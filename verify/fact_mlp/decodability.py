"""Claims of the fact_mlp area, part 1: information bound and decodability rho.

docs/fact_mlp.md. Claim ids read fact_mlp.<topic>.<name>; the decoder claims (B2) are in
verify.fact_mlp.decoder; what both share (the values and their decodability) is in
verify.fact_mlp.decoder_setup.
"""

from __future__ import annotations

import math

import numpy as np

from verify.claims import Control, choice, claim
from verify.criteria import Agreement, EverySeed, Threshold, all_of
from verify.fact_mlp.decoder_setup import SRC, _spherical, shared_rho


@claim(
    "fact_mlp.bounds.info_bound",
    source=SRC + ", B1",
    provenance="derived",
    bounds=("fact_mlp.info_bits", "fact_mlp.info_bits_tied", "fact_mlp.min_params"),
    statement="the closed forms F log2 n_V and lgamma(F+1)/ln 2 (and the sympy form) equal "
    "log2 of the exact integer counts n_V^F and F! to 1e-9 relative at F = n_V = "
    "1000 (9965.8 and 8529.4 bits)",
    quick={"n_facts": 1000, "n_values": 1000, "bits_per_param": 2.0},
    kind="identity",
    independence="the bounds evaluate floating-point closed forms (log2, lgamma, sympy); the "
    "other side counts the maps and bijections exactly as Python integers "
    "(n_V ** F, math.factorial(F)) and takes log2 of the integer",
)
def check_info_bound(p, ctx):
    from theory.registry import get_bound

    F, nV = int(p["n_facts"]), int(p["n_values"])
    bits = get_bound("fact_mlp.info_bits").evaluate(n_facts=F, n_values=nV)
    tied = get_bound("fact_mlp.info_bits_tied").evaluate(n_facts=F)
    pmin = get_bound("fact_mlp.min_params").evaluate(
        n_facts=F, n_values=nV, bits_per_param=p["bits_per_param"]
    )
    expr = get_bound("fact_mlp.info_bits").expression()
    sym = float(expr.subs({s: p[s.name] for s in expr.free_symbols}))
    count_maps, count_bij = math.log2(nV**F), math.log2(math.factorial(F))
    rel = max(
        abs(bits - count_maps) / count_maps,
        abs(tied - count_bij) / count_bij,
        abs(sym - count_maps) / count_maps,
    )
    judgement = Agreement("max relative |closed form - log2(exact count)|", 1e-9, strict=True).judge(rel)
    return judgement, {
        "bits": bits,
        "tied_bits": tied,
        "symbolic_bits": sym,
        "log2_count_maps": count_maps,
        "log2_count_bijections": count_bij,
        "max_relative_diff": rel,
        "min_params_b2": pmin,
        "min_params_b32": bits / 32.0,
    }


def active_set_rho(W: np.ndarray, max_active: int) -> float:
    """max_{||u|| <= 1} min_j <u, w_j> for unit rows w_j, by enumerating active sets [derived].

    The optimum is u* = p*/||p*|| with p* the min-norm point of conv{w_j}; p* is the min-norm
    point of the affine hull of some affinely independent subset S (|S| <= d), where all w in S
    have the same inner product with p* (unit rows). So u* is among the directions of the
    min-norm solutions of W_S u = 1 over subsets |S| <= max_active (= d); the maximum of
    min_j <u, w_j> over these candidates is rho exactly (weak duality bounds every other u),
    clipped at 0. Exponential in d: a cross-check for d <= 3 only."""
    from itertools import combinations

    best = 0.0
    for k in range(1, max_active + 1):
        S = np.array(list(combinations(range(len(W)), k)))
        WS = W[S]  # (n_sets, k, d)
        gram = WS @ WS.transpose(0, 2, 1)  # (n_sets, k, k)
        ok = np.linalg.det(gram) > 1e-12
        y = np.linalg.solve(gram[ok], np.ones((int(ok.sum()), k, 1)))
        U = (WS[ok].transpose(0, 2, 1) @ y)[:, :, 0]  # min-norm solutions
        U /= np.linalg.norm(U, axis=1, keepdims=True)
        best = max(best, float((U @ W.T).min(axis=1).max()))
    return best


@claim(
    "fact_mlp.decodability.rho_solver",
    source=SRC + ", decodability (docs/fact_mlp.md)",
    provenance="derived",
    statement="the NNLS rho_i equals the exact active-set enumeration of max_u min_j <u, w_ij> "
    "(every subset of <= d = 3 directions) to 1e-3 for every i, never lies below the "
    "best of 20 000 random unit u, and the certificate gap is < 1e-6",
    quick={"n_values": 30, "d": 3, "grid": 20000},
    kind="identity",
    independence="NNLS on the dual (min-norm point of conv{w_ij}, theory.fact_mlp.rho) "
    "against an enumeration of the primal's candidate optima (min-norm solutions "
    "of W_S u = 1 over every active set S, lstsq) and a random grid; no shared code",
)
def check_rho_solver(p, ctx):
    """Changed reference (not criterion): the brute force was a grid polished by Nelder-Mead, which
    stalls on this non-smooth max-min (it fell 0.009 short of the certified NNLS value at seed 1,
    0.003 at seed 2); the exact active-set enumeration replaces it."""
    from theory.fact_mlp.rho import decodability

    V = _spherical(p["n_values"], p["d"], ctx.rng("fact_mlp.decodability.values"))
    res = decodability(V)
    U = _spherical(p["grid"], p["d"], ctx.rng("fact_mlp.decodability.grid_directions"))
    diffs, below = [], []
    for i in range(len(V)):
        W = V[i] - np.delete(V, i, 0)
        W /= np.linalg.norm(W, axis=1, keepdims=True)
        grid_val = max(0.0, float((U @ W.T).min(axis=1).max()))
        exact = active_set_rho(W, p["d"])
        diffs.append(abs(exact - res.per_value[i]))
        below.append(res.per_value[i] - grid_val)
    max_diff = float(max(diffs))
    judgement = all_of(
        enumeration=Agreement("max |rho_nnls - rho_enumerated|", 1e-3, strict=True).judge(max_diff),
        grid=Threshold("min (rho_nnls - best grid rho)", -1e-12, ">", "convention").judge(min(below)),
        certificate=Threshold("certificate gap", 1e-6, "<", "convention").judge(res.gap),
    )
    return judgement, {
        "max_abs_diff": max_diff,
        "min_nnls_minus_grid": float(min(below)),
        "gap": res.gap,
        "rho": res.rho,
    }


@claim(
    "fact_mlp.decodability.rho_range",
    source=SRC + ", decodability (docs/fact_mlp.md)",
    provenance="derived",
    templated=True,
    statement="for n_V = {n_values} spherical values in d = {d}: 0 < rho <= 1 and rho >= "
    "sqrt({bound_factor} (1 - mu)), mu the coherence (seed 0 at d=32, n_V=256: 0.551 >= 0.436); "
    "certificate gap < 1e-6; on each of {seeds} value draws",
    quick={"n_values": 256, "d": 32, "bound_factor": 0.5, "append_interior": False, "seeds": 6},
    full={"n_values": 10000, "d": 1024, "bound_factor": 0.5, "append_interior": False, "seeds": 6},
    seed_rule="every seed of seed..seed+5 (one value draw each)",
    controls=[
        Control(
            "sharper_bound",
            {"bound_factor": 1.0},
            "the competing bound rho >= sqrt(1 - mu), twice the proved factor, must "
            "fail on the same values: the check is tight enough to tell them apart",
        ),
        Control(
            "interior",
            {"append_interior": True},
            "a midpoint (v_1 + v_2)/2 appended to the values is inside the hull, so 0 < rho must fail",
        ),
    ],
)
def check_rho_range(p, ctx):
    """Changed (replicates): judged on one value draw, now on each of six (the rule over seeds of
    every part; the per-draw values stored, so verify oc can simulate it). Six is verify oc's
    count: on the record of pilot base seed 100 at three draws the alternative 'lower_bound at the
    threshold' passed 0.15 of the time, at six every alternative <= 0.05."""
    from dataclasses import replace

    from constructions.fact_mlp.facts import interior_value
    from theory.fact_mlp.rho import coherence, decodability

    rows = []
    for s in ctx.seeds(p["seeds"]):
        V, res = shared_rho(replace(ctx, seed=s), p["n_values"], p["d"])
        if p["append_interior"]:  # the control
            V = interior_value(V)
            res = decodability(V)
        # the control's interior value is not unit norm: the bound is evaluated on the directions, as
        # if the hypothesis (values on the sphere) held, which is what the control must break
        mu = coherence(V, normalise=bool(p["append_interior"]))
        low = math.sqrt(p["bound_factor"] * (1.0 - mu))
        rows.append({"seed": s, "rho": res.rho, "mu": mu, "lower_bound": low, "gap": res.gap})
    seeds = [r["seed"] for r in rows]

    def every(quantity, value, side, source, values):
        return EverySeed(quantity, value, side, source).judge(values, seeds=seeds)

    judgement = all_of(
        positive=every("rho", 0.0, ">", "theory", [r["rho"] for r in rows]),
        at_most_1=every("rho", 1.0, "<=", "theory", [r["rho"] for r in rows]),
        lower_bound=every(
            f"rho - sqrt({p['bound_factor']:g} (1 - mu))",
            0.0,
            ">=",
            "theory",
            [r["rho"] - r["lower_bound"] for r in rows],
        ),
        certificate=every("certificate gap", 1e-6, "<", "convention", [r["gap"] for r in rows]),
    )
    first = rows[0]
    return judgement, {
        "rho": first["rho"],
        "mu": first["mu"],
        "lower_bound": first["lower_bound"],
        "gap": first["gap"],
        "per_seed": rows,
    }


@claim(
    "fact_mlp.decodability.rho_interior",
    source=SRC + ", B4",
    provenance="derived",
    statement="must fail: a value inside the hull (midpoint of v_1, v_2) has rho < 1e-8 and "
    "every construction (encoder-decoder with random or orthogonal decoder, NTK, "
    "whitened Hebbian, linear) decodes its facts with accuracy < 1; the control, 1.1 times the "
    "midpoint (just outside), does not fail. Not a bracket: along c (v_1 + v_2)/2 rho = 0 only "
    "at the point c = 1, a point with no side that breaks",
    quick={"n_values": 20, "d": 32, "n_facts": 64, "midpoint_facts": 8, "outward": 1.0},
    demonstrates_failure=True,
    controls=[
        Control(
            "outside_hull",
            {"outward": 1.1},
            "the new value 1.1 (v_1 + v_2)/2 lies just outside the hull (it leaves "
            "the affine span of the others): rho_new > 0 and the encoder-decoder "
            "with an orthogonal decoder (m_c = d) decodes its facts, so the "
            "demonstration must fail there",
        )
    ],
)
def check_rho_interior(p, ctx):
    """Not a :class:`verify.criteria.Bracket`: rho_new = 0 exactly when the new value lies in the hull
    of the others, and along the scale c of c (v_1 + v_2)/2 that happens at c = 1 only (the values
    are affinely independent, so any c != 1 leaves their affine span; pilot seed 100: rho_new =
    0.022, 0, 0.009 at c = 0.9, 1, 1.01), a point, not a boundary with a side that breaks. The
    demonstration at c = 1 and its control at c = 1.1 are judged as before, by
    :func:`verify.criteria.all_of` (rho_new <= 1e-8, and every construction loses a midpoint fact)."""
    from constructions.fact_mlp.baselines import hebbian_readout, linear_memory, ntk_memory
    from constructions.fact_mlp.encoder import build_encoder_decoder
    from constructions.fact_mlp.facts import FactSet, decode_numpy, interior_value
    from theory.fact_mlp.rho import decodability

    rng = ctx.rng("fact_mlp.decodability.rng")
    V = interior_value(_spherical(p["n_values"], p["d"], rng))
    new = len(V) - 1
    V[new] *= p["outward"]
    F = p["n_facts"]
    f = rng.integers(0, new, F)
    f[: p["midpoint_facts"]] = new
    facts = FactSet(_spherical(F, p["d"], rng), V, f.astype(np.int64))
    res = decodability(V)
    mlps = [
        build_encoder_decoder(facts, p["d"], rng, decodability=res, allow_undecodable=True),
        build_encoder_decoder(facts, p["d"], rng, decodability=res, allow_undecodable=True, orthogonal=True),
        ntk_memory(facts, 4096, rng),
        hebbian_readout(facts, 4 * F, rng, whitened=True),
        linear_memory(facts),
    ]
    sel = f == new
    names = ["encoder_decoder", "encoder_decoder_orthogonal", "ntk", "hebbian_whitened", "linear"]
    accs = {n: decode_numpy(m.forward(facts.keys[sel]), V, f[sel])[0] for n, m in zip(names, mlps)}
    others = {n: decode_numpy(m.forward(facts.keys[~sel]), V, f[~sel])[0] for n, m in zip(names, mlps)}
    n_mid = int(sel.sum())
    lost = {n: int(round((1.0 - a) * n_mid)) for n, a in accs.items()}  # facts misdecoded, exact
    judgement = all_of(
        rho_new=Threshold("rho_new", 1e-8, "<", "convention").judge(float(res.per_value[new])),
        lost=EverySeed("midpoint facts lost", 1, ">=", "theory", unit="constructions").judge(
            list(lost.values()), seeds=list(lost)
        ),
    )
    return judgement, {
        "midpoint_facts_lost": lost,
        "rho_new": float(res.per_value[new]),
        "rho_others": float(np.min(np.delete(res.per_value, new))),
        "acc_midpoint": accs,
        "acc_other_facts": others,
    }


@claim(
    "fact_mlp.decodability.rho_anisotropy",
    source=SRC + ", decodability (geometry penalty)",
    provenance="reference",
    templated=True,
    statement="spiking lowers rho: rho strictly decreases along beta in {betas} at d={d}, n_V={n_values} "
    "(reference, seed 0 at d=32: 0.551 > 0.513 > 0.432), on each of {seeds} value draws",
    quick={"n_values": 256, "d": 32, "betas": [0.0, 1.5, 3.0], "seeds": 6, "scaling": "spike"},
    full={"n_values": 256, "d": 128, "betas": [0.0, 1.5, 3.0], "seeds": 6, "scaling": "spike"},
    seed_rule="every seed of seed..seed+5 (one value draw each)",
    controls=[
        Control(
            "isotropic",
            {"scaling": "isotropic"},
            "the spike replaced by the isotropic scaling V -> (1 + beta) V keeps "
            "rho unchanged, so the strict decrease must fail",
        )
    ],
)
def check_rho_anisotropy(p, ctx):
    """Seeds 3 -> 6: at 3 value draws the rule passed the alternative 'at the threshold' 0.12 of
    the time (verify oc on the seed-0 record of revision 34bf7b3: inconclusive); the same
    simulation put every named alternative at <= 0.05 from 6 draws, the budget taken here."""
    from dataclasses import replace

    from theory.fact_mlp.rho import decodability

    per_seed = {}
    for s in ctx.seeds(p["seeds"]):
        sub = replace(ctx, seed=s)
        if choice(p, "scaling", ("spike", "isotropic")) == "isotropic":  # the control
            V0 = shared_rho(sub, p["n_values"], p["d"])[0]
            rhos = [decodability((1.0 + beta) * V0).rho for beta in p["betas"]]
        else:
            rhos = [shared_rho(sub, p["n_values"], p["d"], beta)[1].rho for beta in p["betas"]]
        per_seed[str(s)] = rhos
    passes = [all(a > b for a, b in zip(r, r[1:])) for r in per_seed.values()]
    drops = [min(a - b for a, b in zip(r, r[1:])) for r in per_seed.values()]
    judgement = EverySeed("smallest drop rho(beta_k) - rho(beta_k+1)", 0.0, ">", "theory")
    return judgement.judge(drops, seeds=[int(k) for k in per_seed]), {
        "smallest_drop": drops,
        "betas": list(p["betas"]),
        "rho_per_seed": per_seed,
        "rho": per_seed[str(ctx.seed)],
        "passes": passes,
    }
