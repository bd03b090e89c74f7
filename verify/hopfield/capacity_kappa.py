"""The capacity-slope claim of the hopfield area (docs/hopfield.md): a kappa sweep that tells a
larger gain exponent from a constant prefactor in the gated capacity.

capacity.gain and capacity.d3 judge D3 at one kappa (= 4); at full scale (d = 32) the gated capacity
sits 18-23% above D3's prediction on every seed, which one kappa cannot attribute: a constant
prefactor A (N_g = A D3, D3's slope in kappa) or a larger exponent (N_g = N_eff + (N_u - N_eff)
e^(c kappa), c > 1). kappa_slope measures, per seed, the least-squares slope in kappa of
ln(N_g / D3's prediction) over kappa = 2..6: 0 for D3 and for any constant prefactor, about c - 1
for a larger exponent. The expected excess is our corrected law [derived], fitted on pilot seeds
100+ that the registry never judges and stored beside the claim (capacity_kappa_fit.toml, read by
:func:`verify.hopfield.capacity_kappa_setup.read_fit`). Gate model [derived]: our formalisation of
Context-Gated Associative Retrieval (2605.10970).
"""

from __future__ import annotations

import numpy as np

from theory.papers import paper
from verify.claims import Control, choice, claim
from verify.criteria import IntervalTest, Threshold
from verify.hopfield.capacity_kappa_setup import excess_rows, law_slope, read_fit, sweep_of
from verify.hopfield.capacity_setup import nearest_band
from verify.measure import t_interval

PAPER = paper("hopfield")

KAPPA_QUICK = {
    "dim": 16,
    "beta": 16.0,
    "threshold": 1e-3,
    "n_range": [16, 2**17],
    "per_octave": 2,
    "targets": 200,
    "n_eff": 16,
    "kappas": [2, 3, 4, 5, 6],
    "seeds": 4,
    "gate_scale": 1.0,  # the network gates at gate_scale * kappa; 0: gates off, 0.5: half (controls)
    "context": "correct",  # the target's own context; "wrong": another memory's (its control)
    **{k: read_fit("quick")[k] for k in ("law", "excess_fit", "c_fit", "c_competitor")},
}
KAPPA_FULL = {
    **KAPPA_QUICK,
    "dim": 32,
    "n_range": [16, 2**19],
    "seeds": 3,
    **{k: read_fit("full")[k] for k in ("law", "excess_fit", "c_fit", "c_competitor")},
}


def _excess_and_alternatives(params, ctx):
    """(per-seed excess slopes, details, the named alternatives' excesses) of a kappa claim's
    sweep, the alternatives computed from the judged seeds' own N_u (:func:`law_slope`); (None,
    details, the failing judgement) when a seed's capacity is off the grid."""
    kappas = [float(k) for k in params["kappas"]]
    wrong = choice(params, "context", ("correct", "wrong")) == "wrong"
    rows = sweep_of(ctx, params, float(params["gate_scale"]), wrong)
    per_seed = excess_rows(rows, params["n_eff"], kappas)
    details = {"kappas": kappas, "per_seed": per_seed, "sweep": rows, "fit": read_fit(ctx.scale)}
    excess = [r["excess_slope"] for r in per_seed]
    if any(e is None for e in excess):
        judgement = Threshold("seeds with every capacity on the grid", len(rows), ">=", "convention").judge(
            float(sum(e is not None for e in excess))
        )
        return None, details, judgement
    n_us = [r["capacity_ungated"] for r in per_seed]
    ne = params["n_eff"]

    def alt(c: float) -> float:
        return float(np.mean([law_slope(nu, ne, kappas, c) for nu in n_us]))

    competitor = float(params["c_competitor"])
    name = "constant prefactor, D3's slope (c = 1)" if competitor == 1.0 else f"e^({competitor:.4g} kappa)"
    alternatives = {
        name: alt(competitor),
        "e^(0.75 kappa)": alt(0.75),
        "e^(1.25 kappa)": alt(1.25),
        "slope 0 in kappa": -float(np.mean([r["slope_d3"] for r in per_seed])),
    }
    details["excess_interval95"] = list(t_interval(excess))
    details["ln_prefactor_mean"] = float(np.mean([r["ln_prefactor"] for r in per_seed]))
    return excess, details, alternatives


@claim(
    "hopfield.capacity.kappa_slope",
    source=f"{PAPER}, D3 (our corrected formalisation)",
    provenance="derived",
    bounds=("hopfield.capacity_shift",),
    templated=True,
    statement="with context gates (N_eff = {n_eff} open) at distractor log-odds kappa = {kappas} in d = {dim}, "
    "the gated capacity N_g (N where the fraction retrieved to error <= {threshold} falls through 0.5, "
    "grid 2^(k/{per_octave})) follows the law our pilots fitted at this scale ({law}): per seed, the "
    "least-squares slope in kappa of ln(N_g / D3's N_eff + (N_u - N_eff) e^kappa) (the excess slope: "
    "0 for D3 and for A times D3 with any constant prefactor A, about c - 1 for N_eff + (N_u - N_eff) "
    "e^(c kappa)) has a 95% Student-t interval over {seeds} seeds that contains the fitted excess "
    "{excess_fit:.4f} (c = {c_fit:.3f}) and excludes its competitor c = {c_competitor:.4f} (c = 1: a "
    "constant prefactor with D3's slope), e^(0.75 kappa), e^(1.25 kappa) and a gated capacity that "
    "does not grow with kappa (slope 0)",
    quick=KAPPA_QUICK,
    full=KAPPA_FULL,
    seed_rule="95% Student-t interval over seeds seed..seed+seeds-1 of the per-seed excess slope",
    controls=[
        Control(
            "gates_off",
            {"gate_scale": 0.0},
            "the gates held open at every kappa (gate_scale 0): N_g = N_u, a slope of 0 in kappa, "
            "so the excess is minus D3's slope and the criterion must fail",
        ),
        Control(
            "half_gates",
            {"gate_scale": 0.5},
            "the network gates at kappa/2 while D3 is read at kappa (a gain exponent of about 1/2): "
            "the excess is about -0.5 and the criterion must fail",
        ),
    ],
)
def kappa_slope(params, ctx):
    """The excess slope (capacity_kappa_setup.excess_rows) of each seed's kappa sweep, judged by an
    interval test whose theory is the pilot fit (read into the parameters ``law``, ``excess_fit``,
    ``c_fit`` and ``c_competitor`` from capacity_kappa_fit.toml, per scale) and whose alternatives'
    excesses are computed from the judged seeds' own N_u (:func:`law_slope`).

    The law of a scale was chosen by a rule fixed before the pilots were read: "exponent" (theory:
    the pilots' mean excess, competitor c = 1, a constant prefactor with D3's slope) when the pilot
    mean excess lies more than 3 standard errors from 0, else "prefactor" (theory: excess 0, c = 1;
    competitor: c = 1 + ln(1.2)/4 = 1.0456, the 18-23% full-scale excess of capacity.d3 at kappa = 4
    read as an exponent). Pilot seeds 100-103 (quick, d = 16: excess 0.059, 16 standard errors,
    exponent) and 100-102 (full, d = 32: excess about -0.004, prefactor) fixed the fit, the
    half-octave grid and the 200 targets (a quarter-octave grid on pilot seeds 103-105 at d = 16
    gave the same excess; an octave grid at d = 32 moved ln(N_g / D3) by +-0.15 with the grid's
    phase); no judged seed was run before. The second control was first wrong_context (another
    memory's active set): its capacities leave the grid, so it stores no excess and verify oc drew
    it as measured (passing 0.96 at full scale); half_gates replaced it after the first judged
    runs, the criterion unchanged. History since kappa_slope_nearest: the interval test treats the
    pilot fit as an exact value, and its verdict flips with the base seed (ledger)."""
    excess, details, alternatives = _excess_and_alternatives(params, ctx)
    if excess is None:
        return alternatives, details  # the judgement that no seed is off the grid, failed
    judgement = IntervalTest(
        "excess slope of ln(N_g / D3) in kappa",
        float(params["excess_fit"]),
        alternatives,
        theory_name="pilot fit",
        unit="ln of a ratio per unit kappa",
    ).judge(list(t_interval(excess)), seeds=len(excess))
    return judgement, details


@claim(
    "hopfield.capacity.kappa_slope_nearest",
    source=f"{PAPER}, D3 (our corrected formalisation)",
    provenance="derived",
    bounds=("hopfield.capacity_shift",),
    templated=True,
    statement="with context gates (N_eff = {n_eff} open) at distractor log-odds kappa = {kappas} in d = {dim}, "
    "the gated capacity N_g (N where the fraction retrieved to error <= {threshold} falls through 0.5, "
    "grid 2^(k/{per_octave})) follows the law our pilots fitted at this scale ({law}) rather than a "
    "competing one: per seed, the least-squares slope in kappa of ln(N_g / D3's N_eff + (N_u - N_eff) "
    "e^kappa) (the excess slope: 0 for D3 and for any constant prefactor, about c - 1 for N_eff + (N_u "
    "- N_eff) e^(c kappa)) has a 95% Student-t interval over {seeds} seeds that lies nearer the fitted "
    "excess {excess_fit:.4f} (c = {c_fit:.3f}) than its competitor c = {c_competitor:.4f} (c = 1: a "
    "constant prefactor with D3's slope), e^(0.75 kappa), e^(1.25 kappa) and a gated capacity that does "
    "not grow with kappa (slope 0): between the midpoints from the fit to the nearest of them on each "
    "side (pass); wholly beyond a midpoint it fails, straddling one it is inconclusive",
    # 8 seeds: the budget verify oc named on the pilot record at base seed 120 (power 0.69 at 4
    # seeds, 0.98 at 8), before any judged run; the sweep at 8 seeds is not kappa_slope's at 4
    quick={**KAPPA_QUICK, "seeds": 8},
    full=KAPPA_FULL,
    seed_rule="95% Student-t interval over seeds seed..seed+seeds-1 of the per-seed excess slope",
    controls=[
        Control(
            "gates_off",
            {"gate_scale": 0.0},
            "the gates held open at every kappa (gate_scale 0): N_g = N_u, a slope of 0 in kappa, "
            "so the excess is minus D3's slope and the criterion must fail",
        ),
        Control(
            "half_gates",
            {"gate_scale": 0.5},
            "the network gates at kappa/2 while D3 is read at kappa (a gain exponent of about 1/2): "
            "the excess is about -0.5 and the criterion must fail",
        ),
    ],
)
def kappa_slope_nearest(params, ctx):
    """kappa_slope restated with an inconclusive band, on the same sweep, seeds and pilot fit
    (capacity_kappa_fit.toml; shared through the run's cache, so it costs nothing more in a
    registry run). kappa_slope's interval test used the pilot fit, the mean of 4 pilot seeds with
    a standard error of about 0.004, as an exact value, and its verdict flipped with the base seed
    (ledger: base seed 0 excluded the fit by 1e-5). Here the interval must lie nearer the fit than
    every named alternative (:func:`verify.hopfield.capacity_setup.nearest_band`: between the
    midpoints from the fit to the nearest alternative on each side, a convention fixed before any
    run of this claim), so the fit's own uncertainty, far below the midpoints' distance from it,
    cannot turn a seed's draw into a fail. The thresholds' source is "pilot" (the midpoints are
    placed from the pilot fit)."""
    excess, details, alternatives = _excess_and_alternatives(params, ctx)
    if excess is None:
        return alternatives, details  # the judgement that no seed is off the grid, failed
    judgement = nearest_band(
        "excess slope of ln(N_g / D3) in kappa",
        float(params["excess_fit"]),
        alternatives,
        list(t_interval(excess)),
        len(excess),
        source="pilot",
        unit="ln of a ratio per unit kappa",
    )
    details["alternatives"] = alternatives
    return judgement, details
