"""Claims of the fact_mlp area, part 1: information bound, decodability rho, the JL decoder.

fact_mlp spec §6-§7. Claim ids read fact_mlp.<topic>.<spec name>.
"""
from __future__ import annotations

import math

import numpy as np

from verify.claims import Outcome, claim

SRC = "Constructing Efficient Fact-Storing MLPs (2512.00207)"


def _spherical(n, d, rng):
    from constructions.fact_mlp import spherical

    return spherical(n, d, rng)


def shared_rho(ctx, n_values, d, beta=0.0, salt=0):
    """Values spherical(n_V, d) (spiked by beta when beta > 0) and their exact decodability,
    cached per run. With salt 0 the draw is np.random.default_rng(seed): values first, then u."""
    from constructions.fact_mlp import spike
    from theory.fact_mlp_decodability import decodability

    def compute():
        rng = ctx.rng(salt) if salt else ctx.rng()
        V = _spherical(n_values, d, rng)
        if beta > 0:
            V = spike(V, beta, _spherical(1, d, rng)[0])
        return V, decodability(V)

    return ctx.shared(("fact_mlp.rho", n_values, d, float(beta), salt, ctx.seed), compute)


@claim("fact_mlp.bounds.info_bound", source=SRC + ", B1", provenance="derived",
       statement="F log2 n_V = 9965.8 +- 0.1 bits at F = n_V = 1000; tied: log2(1000!) = 8529.4 "
                 "+- 0.1; sympy and numeric forms agree",
       quick={"n_facts": 1000, "n_values": 1000, "bits_per_param": 2.0})
def check_info_bound(p, ctx):
    from theory.registry import get_bound

    bits = get_bound("fact_mlp.info_bits").evaluate(n_facts=p["n_facts"], n_values=p["n_values"])
    tied = get_bound("fact_mlp.info_bits_tied").evaluate(n_facts=p["n_facts"])
    pmin = get_bound("fact_mlp.min_params").evaluate(n_facts=p["n_facts"], n_values=p["n_values"],
                                                     bits_per_param=p["bits_per_param"])
    expr = get_bound("fact_mlp.info_bits").expression()
    sym = float(expr.subs({s: p[s.name] for s in expr.free_symbols}))
    passed = abs(bits - 9965.8) < 0.1 and abs(tied - 8529.4) < 0.1 and abs(sym - bits) < 1e-9
    return Outcome(predicted="9965.8 bits; tied 8529.4", measured={"bits": bits, "tied": tied},
                   passed=passed, details={"bits": bits, "tied_bits": tied, "symbolic_bits": sym,
                                           "min_params_b2": pmin,
                                           "min_params_b32": bits / 32.0})


@claim("fact_mlp.decodability.rho_solver", source=SRC + ", §5.1", provenance="derived",
       statement="the NNLS rho_i equals a brute-force max over 20 000 unit u (polished locally) "
                 "to 1e-3 for every i, never lies below the grid value, and the certificate gap "
                 "is < 1e-6",
       quick={"n_values": 30, "d": 3, "grid": 20000})
def check_rho_solver(p, ctx):
    from scipy.optimize import minimize

    from theory.fact_mlp_decodability import decodability

    V = _spherical(p["n_values"], p["d"], ctx.rng(1))
    res = decodability(V)
    U = _spherical(p["grid"], p["d"], ctx.rng(2))
    diffs, below = [], []
    for i in range(len(V)):
        W = V[i] - np.delete(V, i, 0)
        W /= np.linalg.norm(W, axis=1, keepdims=True)
        vals = (U @ W.T).min(axis=1)
        best = U[int(np.argmax(vals))]
        grid_val = max(0.0, float(vals.max()))
        polished = minimize(lambda x: -(W @ (x / np.linalg.norm(x))).min(), best,
                            method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-12,
                                                          "maxiter": 4000})
        brute = max(grid_val, -float(polished.fun), 0.0)
        diffs.append(abs(brute - res.per_value[i]))
        below.append(res.per_value[i] - grid_val)
    max_diff = float(max(diffs))
    passed = max_diff < 1e-3 and min(below) > -1e-12 and res.gap < 1e-6
    return Outcome(predicted="|rho_nnls - rho_brute| < 1e-3", measured=max_diff, passed=passed,
                   details={"max_abs_diff": max_diff, "min_nnls_minus_grid": float(min(below)),
                            "gap": res.gap, "rho": res.rho})


@claim("fact_mlp.decodability.rho_range", source=SRC + ", §5.1", provenance="derived",
       statement="for spherical values 0 < rho <= 1 and rho >= sqrt((1 - mu)/2) (reference d=32, "
                 "n_V=256: 0.551 >= 0.436); certificate gap < 1e-6",
       quick={"n_values": 256, "d": 32}, full={"n_values": 10000, "d": 1024})
def check_rho_range(p, ctx):
    from theory.fact_mlp_decodability import coherence, rho_lower_bound

    V, res = shared_rho(ctx, p["n_values"], p["d"])
    mu = coherence(V)
    low = rho_lower_bound(mu)
    passed = 0 < res.rho <= 1 and res.rho >= low and res.gap < 1e-6
    return Outcome(predicted=f"sqrt((1-mu)/2) = {low:.4f} <= rho <= 1", measured=res.rho,
                   passed=passed, details={"rho": res.rho, "mu": mu, "lower_bound": low,
                                           "gap": res.gap})


@claim("fact_mlp.decodability.rho_interior", source=SRC + ", B4", provenance="derived",
       statement="must fail: a value inside the hull (midpoint of v_1, v_2) has rho < 1e-8 and "
                 "every construction (encoder-decoder, NTK, whitened Hebbian, linear) decodes "
                 "its facts with accuracy < 1",
       quick={"n_values": 20, "d": 32, "n_facts": 64, "midpoint_facts": 8},
       demonstrates_failure=True)
def check_rho_interior(p, ctx):
    from constructions.fact_mlp import FactSet, decode_numpy, interior_value
    from constructions.fact_mlp_baselines import hebbian_readout, linear_memory, ntk_memory
    from constructions.fact_mlp_encoder import build_encoder_decoder
    from theory.fact_mlp_decodability import decodability

    rng = ctx.rng(3)
    V = interior_value(_spherical(p["n_values"], p["d"], rng))
    new = len(V) - 1
    F = p["n_facts"]
    f = rng.integers(0, new, F)
    f[: p["midpoint_facts"]] = new
    facts = FactSet(_spherical(F, p["d"], rng), V, f.astype(np.int64))
    res = decodability(V)
    mlps = [build_encoder_decoder(facts, p["d"], rng, decodability=res, allow_undecodable=True),
            ntk_memory(facts, 4096, rng), hebbian_readout(facts, 4 * F, rng, whitened=True),
            linear_memory(facts)]
    sel = f == new
    accs = {m.name: decode_numpy(m.forward(facts.keys[sel]), V, f[sel])[0] for m in mlps}
    others = {m.name: decode_numpy(m.forward(facts.keys[~sel]), V, f[~sel])[0] for m in mlps}
    passed = res.per_value[new] < 1e-8 and all(a < 1 for a in accs.values())
    return Outcome(predicted="rho_new = 0; acc on midpoint facts < 1",
                   measured={"rho_new": float(res.per_value[new]), **accs}, passed=passed,
                   details={"rho_new": float(res.per_value[new]), "rho_others": float(
                       np.min(np.delete(res.per_value, new))), "acc_midpoint": accs,
                            "acc_other_facts": others})


@claim("fact_mlp.decodability.rho_invariance", source=SRC + ", §5.1", provenance="derived",
       statement="rho_i is invariant under V -> cV and V -> VQ (Q orthogonal): max abs diff < 1e-8",
       quick={"n_values": 64, "d": 16, "scale": 3.7})
def check_rho_invariance(p, ctx):
    from theory.fact_mlp_decodability import decodability

    rng = ctx.rng(4)
    V = _spherical(p["n_values"], p["d"], rng)
    Q, _ = np.linalg.qr(rng.standard_normal((p["d"], p["d"])))
    base = decodability(V).per_value
    d_scale = float(np.max(np.abs(decodability(p["scale"] * V).per_value - base)))
    d_rot = float(np.max(np.abs(decodability(V @ Q).per_value - base)))
    return Outcome(predicted="< 1e-8", measured=max(d_scale, d_rot),
                   passed=max(d_scale, d_rot) < 1e-8,
                   details={"scale_diff": d_scale, "rotation_diff": d_rot})


@claim("fact_mlp.decodability.rho_anisotropy", source=SRC + ", §5.1 (geometry penalty)",
       provenance="reference",
       statement="spiking lowers rho: rho(beta=3) < rho(1.5) < rho(0) at d=32, n_V=256 "
                 "(reference 0.432 < 0.513 < 0.551)",
       quick={"n_values": 256, "d": 32, "betas": [0.0, 1.5, 3.0]},
       full={"n_values": 256, "d": 128, "betas": [0.0, 1.5, 3.0]})
def check_rho_anisotropy(p, ctx):
    rhos = [shared_rho(ctx, p["n_values"], p["d"], beta)[1].rho for beta in p["betas"]]
    passed = all(a > b for a, b in zip(rhos, rhos[1:]))
    return Outcome(predicted="decreasing in beta", measured=[round(r, 4) for r in rhos],
                   passed=passed, details={"betas": list(p["betas"]), "rho": rhos})


# ---------------------------------------------------------------- the JL decoder (B2)

def decoder_accuracy(V, separators, code_dim, rng) -> float:
    """Fraction of values j decoded from Rp^T Rp u*_j by argmax <., v_i> (ties are errors)."""
    from constructions.fact_mlp import decode_numpy
    from constructions.fact_mlp_encoder import random_projection

    Rp = random_projection(int(code_dim), V.shape[1], rng)
    return decode_numpy(separators @ Rp.T @ Rp, V, np.arange(len(V)))[0]


def draws_ok(V, separators, code_dim, draws, rng) -> list[float]:
    return [decoder_accuracy(V, separators, code_dim, rng) for _ in range(draws)]


def smallest_code_dim(V, separators, draws, need, rng, grid) -> int | None:
    """Smallest m_c in ``grid`` with accuracy 1 in >= ``need`` of ``draws`` draws (binary search)."""
    lo, hi, best = 0, len(grid) - 1, None
    while lo <= hi:
        mid = (lo + hi) // 2
        ok = sum(a == 1.0 for a in draws_ok(V, separators, grid[mid], draws, rng)) >= need
        if ok:
            best, hi = grid[mid], mid - 1
        else:
            lo = mid + 1
    return best


@claim("fact_mlp.decoder.jl_decoder", source=SRC + ", B2", provenance="derived",
       statement="at m_c = 48 the random-projection decoder Rp^T Rp u*_j decodes every value "
                 "(d=256, n_V=512) in all but <= 1 of 10 draws of Rp",
       quick={"n_values": 512, "d": 256, "code_dim": 48, "draws": 10, "max_failures": 1},
       full={"n_values": 10000, "d": 256, "code_dim": 48, "draws": 10, "max_failures": 1})
def check_jl_decoder(p, ctx):
    from theory.fact_mlp import jl_code_dim

    V, res = shared_rho(ctx, p["n_values"], p["d"], salt=1)
    accs = draws_ok(V, res.separators, p["code_dim"], p["draws"], ctx.rng(5))
    failures = sum(a < 1.0 for a in accs)
    return Outcome(predicted=f"failures <= {p['max_failures']} of {p['draws']}",
                   measured=failures, passed=failures <= p["max_failures"],
                   details={"accuracies": accs, "rho": res.rho, "code_dim": p["code_dim"],
                            "b2_code_dim": jl_code_dim(p["n_values"], res.rho),
                            "ln_nv_over_rho2": math.log(p["n_values"]) / res.rho ** 2})


@claim("fact_mlp.decoder.jl_too_small", source=SRC + ", B2", provenance="derived",
       statement="must fail: at m_c = 4, far below ln(n_V)/rho^2, the decoder's mean accuracy is "
                 "< 0.5 (reference 0.10) and the 'accuracy = 1' check fails in every draw",
       quick={"n_values": 256, "d": 32, "code_dim": 4, "draws": 10},
       demonstrates_failure=True)
def check_jl_too_small(p, ctx):
    V, res = shared_rho(ctx, p["n_values"], p["d"])
    accs = draws_ok(V, res.separators, p["code_dim"], p["draws"], ctx.rng(6))
    mean = float(np.mean(accs))
    return Outcome(predicted="mean acc < 0.5; acc = 1 fails", measured=mean,
                   passed=mean < 0.5 and all(a < 1 for a in accs),
                   details={"accuracies": accs, "inner_check_acc_eq_1": [a == 1 for a in accs],
                            "ln_nv_over_rho2": math.log(p["n_values"]) / res.rho ** 2})


MC_GRID = [2, 3, 4, 6, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40, 48, 56, 64, 80, 96, 128, 160, 192, 256]


def mc_star(ctx, n_values, d, beta=0.0, draws=10, need=9, salt=1):
    V, res = shared_rho(ctx, n_values, d, beta, salt=salt)
    m = smallest_code_dim(V, res.separators, draws, need, ctx.rng(7, n_values, int(10 * beta)),
                          MC_GRID)
    return m, res.rho


@claim("fact_mlp.decoder.mc_log_scaling", source=SRC + ", B2 (optimal scaling, abstract)",
       provenance="derived",
       statement="the smallest m_c with accuracy 1 in >= 9/10 draws fits m_c* = a ln(n_V)/rho^2 + "
                 "b with a > 0, and m_c* <= B2 = 8 ln(n_V)/rho^2 at every n_V",
       quick={"n_values": [64, 128, 256, 512], "d": 256, "draws": 10, "need": 9},
       full={"n_values": [64, 256, 1024, 4096, 16384], "d": 256, "draws": 10, "need": 9})
def check_mc_log_scaling(p, ctx):
    from theory.fact_mlp import jl_code_dim

    xs, ms, b2 = [], [], []
    for n in p["n_values"]:
        m, rho = mc_star(ctx, n, p["d"], draws=p["draws"], need=p["need"])
        if m is None:
            raise ValueError(f"no m_c in the grid up to {MC_GRID[-1]} decodes n_V={n}")
        xs.append(math.log(n) / rho ** 2)
        ms.append(m)
        b2.append(jl_code_dim(n, rho))
    a, b = np.polyfit(xs, ms, 1)
    passed = a > 0 and all(m <= bound for m, bound in zip(ms, b2))
    return Outcome(predicted="a > 0; m_c* <= B2", measured={"a": float(a), "m_c*": ms},
                   passed=passed, details={"n_values": list(p["n_values"]),
                                           "ln_nv_over_rho2": xs, "mc_star": ms, "b2": b2,
                                           "fit_a": float(a), "fit_b": float(b)})


@claim("fact_mlp.capacity.geometry_penalty", source=SRC + " (abstract: geometry penalty)",
       provenance="abstract",
       statement="at fixed n_V the needed m_c rises as rho falls: m_c*(beta=3) >= m_c*(beta=0) "
                 "(d=256, n_V=256); beta=1.5 reported",
       quick={"n_values": 256, "d": 256, "betas": [0.0, 1.5, 3.0]},
       full={"n_values": 256, "d": 256, "betas": [0.0, 0.5, 1.5, 3.0, 6.0]})
def check_geometry_penalty(p, ctx):
    ms, rhos = [], []
    for beta in p["betas"]:
        m, rho = mc_star(ctx, p["n_values"], p["d"], beta)
        ms.append(m if m is not None else float("inf"))
        rhos.append(rho)
    i0, i3 = p["betas"].index(0.0), p["betas"].index(3.0)
    return Outcome(predicted="m_c*(3) >= m_c*(0)", measured={"m_c*": ms, "rho": rhos},
                   passed=ms[i3] >= ms[i0],
                   details={"betas": list(p["betas"]), "mc_star": ms, "rho": rhos})


from verify.ledger import LedgerEntry, record  # noqa: E402

record(LedgerEntry(
    claim_id="fact_mlp.capacity.geometry_penalty",
    measured="d=256, n_V=256, seed 0: m_c* = 40, 32, 32 at beta = 0, 1.5, 3 with rho = 0.670, "
             "0.667, 0.650 (smallest m_c with accuracy 1 in >= 9/10 draws of Rp)",
    tried="the spec's setting (d=256, n_V=256, beta in {0, 3}); binary search over the m_c grid "
          "2..256 with 10 draws per m_c and the 9/10 criterion; exact rho with certificate",
    reason="at d=256 one spike of strength 3 lowers rho by only 3 % (0.670 -> 0.650), far less "
           "than at d=32 (0.551 -> 0.431, rho_anisotropy); that change is below the resolution "
           "of m_c* estimated from 10 draws, which moves by a grid step between draws, so the "
           "penalty shows in rho but not in m_c* at this size"))
