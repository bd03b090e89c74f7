"""The kappa sweep of the hopfield capacity-slope claim (docs/hopfield.md): ungated and gated
capacities of one pattern draw per grid N at every distractor log-odds kappa of a list, and the
slope in kappa of ln(N_g / D3's prediction) that judges it. Registers no claim.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import tomllib

from constructions.hopfield.networks import context_gates, gated_errors_over_kappas, sphere_patterns
from theory.hopfield.derived import gated_capacity_prediction
from verify.claims import shared
from verify.hopfield.capacity_setup import crossing

#: the competitor of a prefactor law: capacity.d3's 18-23% full-scale excess at kappa = 4 (factor
#: about 1.2) read as an exponent, c = 1 + ln(1.2)/4
PREFACTOR_COMPETITOR = 1.0 + math.log(1.2) / 4

#: the fit beside the claim: pilot seeds, revision and fitted numbers per scale
FIT_FILE = Path(__file__).with_name("capacity_kappa_fit.toml")


def read_fit(scale: str) -> dict:
    """The pilot fit of ``scale`` (quick or full) from :data:`FIT_FILE`; a KeyError names a scale
    with no fit.

    >>> read_fit("quick")["law"] in ("exponent", "prefactor")
    True
    """
    with FIT_FILE.open("rb") as f:
        fits = tomllib.load(f)["fit"]
    if scale not in fits:
        raise KeyError(f"{FIT_FILE.name} holds no pilot fit for scale {scale!r} (has {sorted(fits)})")
    return fits[scale]


def log_grid(low: int, high: int, per_octave: int) -> list[int]:
    """The sizes round(2^(k/per_octave)) from ``low`` to ``high``.

    >>> log_grid(16, 64, 2)
    [16, 23, 32, 45, 64]
    """
    k0, k1 = (round(per_octave * math.log2(v)) for v in (low, high))
    return sorted({int(round(2 ** (k / per_octave))) for k in range(k0, k1 + 1)})


@shared
def kappa_sweep(
    ctx,
    dim: int,
    beta: float,
    threshold: float,
    n_range: list,
    per_octave: int,
    targets: int,
    n_eff: int,
    kappas: list,
    gate_scale: float,
    wrong: bool,
    seeds: int,
) -> list[dict]:
    """Per seed: the ungated capacity N_u and the gated capacity N_g at every kappa of ``kappas``
    (crossings of 0.5 by the fraction of ``targets`` patterns retrieved to error <= ``threshold``),
    on the grid :func:`log_grid` of ``n_range``. Each grid N draws one pattern set, its targets
    and each target's active set (N_eff memories, target included; another memory's set, without
    the target, when ``wrong``), and judges every kappa on that same draw; the network gates at
    ``gate_scale`` * kappa (1: as the prediction assumes). The scan goes up the grid until every
    fraction has fallen below 0.5; a capacity that never falls is None (off the grid).

    >>> from verify.claims import Context
    >>> rows = kappa_sweep(Context(seed=0), 8, 16.0, 1e-3, [4, 256], 1, 20, 4, [2.0], 1.0, False, 1)
    >>> sorted(rows[0])
    ['N', 'capacity_gated', 'capacity_ungated', 'frac_gated', 'frac_ungated', 'seed']
    """
    grid = log_grid(*n_range, per_octave)
    ks = [0.0, *(float(gate_scale) * float(k) for k in kappas)]  # 0: the ungated network
    rows = []
    for s in ctx.seeds(seeds):
        gen = ctx.rng("hopfield.capacity_kappa.sweep.gen", s)
        fracs: list[list[float]] = [[] for _ in ks]
        for n in grid:
            alive = [j for j, f in enumerate(fracs) if not f or f[-1] >= 0.5]
            if not alive:
                break
            X = sphere_patterns(n, dim, 1.0, gen)
            chosen = gen.choice(n, size=min(targets, n), replace=False)
            ne = min(n_eff, n - 1 if wrong else n)
            sets = np.empty((len(chosen), ne), dtype=int)
            for row, t in enumerate(chosen):
                owner = int((t + 1 + gen.integers(n - 1)) % n) if wrong else int(t)
                sets[row] = context_gates(n, owner, ne, 1.0, gen)[1]
                while wrong and int(t) in sets[row]:
                    sets[row] = context_gates(n, owner, ne, 1.0, gen)[1]
            errs = gated_errors_over_kappas(X, chosen, beta, sets, [ks[j] for j in alive])
            for j, e in zip(alive, errs):
                fracs[j].append(float(np.mean(e <= threshold)))
        caps = [crossing(grid[: len(f)], f) for f in fracs]
        rows.append(
            {
                "seed": s,
                "N": grid[: max(len(f) for f in fracs)],
                "frac_ungated": fracs[0],
                "frac_gated": fracs[1:],
                "capacity_ungated": caps[0],
                "capacity_gated": caps[1:],
            }
        )
    return rows


def ls_slope(x, y) -> float:
    """The least-squares slope of y on x.

    >>> ls_slope([2, 3, 4], [1.0, 2.0, 3.0])
    1.0
    """
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    xc = x - x.mean()
    return float(xc @ (y - y.mean()) / (xc @ xc))


def law_slope(n_u: float, n_eff: int, kappas, c: float) -> float:
    """The slope in kappa of ln(N_c / D3's N_g) for the law N_c = N_eff + (N_u - N_eff) e^(c kappa)
    (c = 1 is D3: slope 0), at the seed's ungated capacity ``n_u``.

    >>> law_slope(60.0, 16, [2, 3, 4, 5, 6], 1.0)
    0.0
    >>> round(law_slope(60.0, 16, [2, 3, 4, 5, 6], 1.25), 3)
    0.254
    """
    k = np.asarray(kappas, dtype=float)
    alt = n_eff + (n_u - n_eff) * np.exp(c * k)
    d3 = np.array([gated_capacity_prediction(n_u, n_eff, float(x)) for x in k])
    return ls_slope(k, np.log(alt / d3))


def excess_rows(rows: list[dict], n_eff: int, kappas) -> list[dict]:
    """Per seed: ln(N_g / D3's prediction) at each kappa, its least-squares slope in kappa (the
    excess slope: 0 under D3 and under any constant prefactor A N_g; it measures an exponent other
    than D3's) and mean (ln A), and D3's own slope of ln(N_g/N_u) in kappa. A seed with a capacity
    off the grid or N_u <= N_eff gets None (D3 predicts nothing there)."""
    out = []
    for r in rows:
        nu, ng = r["capacity_ungated"], r["capacity_gated"]
        if nu is None or nu <= n_eff or any(g is None or g <= 0 for g in ng):
            out.append({"seed": r["seed"], "excess_slope": None})
            continue
        pred = [gated_capacity_prediction(nu, n_eff, float(k)) for k in kappas]
        logs = [math.log(g / p) for g, p in zip(ng, pred)]
        out.append(
            {
                "seed": r["seed"],
                "capacity_ungated": nu,
                "capacity_gated": list(ng),
                "predicted_gated": pred,
                "ln_factor": logs,
                "excess_slope": ls_slope(kappas, logs),
                "ln_prefactor": float(np.mean(logs)),
                "slope_measured": ls_slope(kappas, [math.log(g / nu) for g in ng]),
                "slope_d3": ls_slope(kappas, [math.log(p / nu) for p in pred]),
            }
        )
    return out


def exponent_for(excess: float, n_u: float, n_eff: int, kappas) -> float:
    """The exponent c of N_eff + (N_u - N_eff) e^(c kappa) whose excess slope over D3
    (:func:`law_slope`) is ``excess``, by bisection on [0.5, 2].

    >>> round(exponent_for(law_slope(60.0, 16, [2, 3, 4], 1.1), 60.0, 16, [2, 3, 4]), 6)
    1.1
    """
    lo, hi = 0.5, 2.0
    if not law_slope(n_u, n_eff, kappas, lo) <= excess <= law_slope(n_u, n_eff, kappas, hi):
        raise ValueError(f"an excess slope of {excess} needs an exponent outside [0.5, 2]")
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if law_slope(n_u, n_eff, kappas, mid) < excess else (lo, mid)
    return (lo + hi) / 2


def sweep_of(ctx, params: dict, gate_scale: float, wrong: bool) -> list[dict]:
    """:func:`kappa_sweep` at a claim's (or pilot's) parameters ``params``: one place where the
    parameters are read, for the claim and its pilot alike.

    >>> from verify.claims import Context
    >>> p = {"dim": 8, "beta": 16.0, "threshold": 1e-3, "n_range": [4, 256], "per_octave": 1,
    ...      "targets": 20, "n_eff": 4, "kappas": [2], "seeds": 1}
    >>> sweep_of(Context(seed=0), p, 1.0, False) == kappa_sweep(
    ...     Context(seed=0), 8, 16.0, 1e-3, [4, 256], 1, 20, 4, [2.0], 1.0, False, 1)
    True
    """
    return kappa_sweep(
        ctx,
        params["dim"],
        params["beta"],
        params["threshold"],
        params["n_range"],
        params["per_octave"],
        params["targets"],
        params["n_eff"],
        [float(k) for k in params["kappas"]],
        float(gate_scale),
        bool(wrong),
        params["seeds"],
    )


def pilot_fit(params, ctx) -> dict:
    """The fit stored in :data:`FIT_FILE` for a scale: the mean excess slope over the seeds of
    ``ctx`` (pilot base seed 100+), its per-seed sd, the mean ln prefactor, and the exponent c
    that gives the mean excess at the pilots' mean N_u. Run by hand, never by a claim:
    ``python -c "from verify.hopfield.capacity_kappa_setup import main; main('quick')"``."""
    kappas = [float(k) for k in params["kappas"]]
    rows = sweep_of(ctx, params, 1.0, False)
    per = excess_rows(rows, params["n_eff"], kappas)
    if any(r["excess_slope"] is None for r in per):
        raise ValueError(f"a pilot seed's capacity is off the grid: {per}")
    ex = [r["excess_slope"] for r in per]
    n_u = float(np.mean([r["capacity_ungated"] for r in per]))
    mean, sd = float(np.mean(ex)), float(np.std(ex, ddof=1))
    exponent = abs(mean) > 3 * sd / math.sqrt(len(ex))  # the rule of the claim's docstring
    return {
        "pilot_seeds": ctx.seeds(params["seeds"]),
        "excess_slope": mean,
        "excess_slope_sd": sd,
        "excess_slope_per_seed": ex,
        "ln_prefactor": float(np.mean([r["ln_prefactor"] for r in per])),
        "capacity_ungated_mean": n_u,
        "c": exponent_for(mean, n_u, params["n_eff"], kappas),
        "law": "exponent" if exponent else "prefactor",
        "excess_fit": mean if exponent else 0.0,
        "c_fit": exponent_for(mean, n_u, params["n_eff"], kappas) if exponent else 1.0,
        "c_competitor": 1.0 if exponent else PREFACTOR_COMPETITOR,
    }


def main(scale: str, base_seed: int = 100) -> None:
    """Print the pilot fit of ``scale`` at ``base_seed`` (>= 100) as TOML lines for :data:`FIT_FILE`."""
    import subprocess

    from verify.claims import Context, load_all

    if base_seed < 100:
        raise ValueError(f"a pilot runs on base seeds 100+, not {base_seed}: the registry judges 0..99")
    claim_ = load_all()["hopfield.capacity.kappa_slope"]
    params = claim_.quick if scale == "quick" else claim_.full
    fit = pilot_fit(params, Context(seed=base_seed, scale=scale))
    rev = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    print(f"[fit.{scale}]\nrevision = {rev!r}")
    for k, v in fit.items():
        print(f"{k} = {v!r}")
