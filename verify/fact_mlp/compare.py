"""Claims of the fact_mlp area, part 2b: the construction against the baselines and gradient
descent, each at its smallest storing size (B5, docs/fact_mlp.md#experimental-settings).

Every family is searched on a grid of sizes with the same ratio between steps (2^(1/4)), with
several independent draws; a size "stores" when accuracy is 1 with a positive margin. A family
that stores at no size of its grid is reported as "does not store up to width W", never as a
ratio. The capacity grid runs through :func:`verify.sweep.run_grid`; each point is
:func:`capacity_point`.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from verify.claims import Control, choice, claim, rng_for, shared
from verify.criteria import Agreement, EverySeed, Sequential, all_of, run_staged
from verify.fact_mlp.usability_setup import RATIO, SRC

OURS_GRID = tuple(round(8 * RATIO**k) for k in range(17))  # m_c 8 .. 128
NTK_GRID = tuple(round(256 * RATIO**k) for k in range(25))  # width 256 .. 16384
#: parameters of the capacity grid (capacity.grid and capacity.whitened_ties) at quick and full scale
GRID_QUICK = {
    "n_facts": [128, 256],
    "n_values": 64,
    "d": 32,
    "geometries": ["spherical", "spiked", "clustered"],
}
GRID_FULL = {
    "n_facts": [512, 1024, 2048, 4096],
    "n_values": 256,
    "d": 64,
    "geometries": ["spherical", "spiked", "clustered"],
}


def ratio_draw(facts, res, seed, draw, baseline):
    """One draw: the smallest storing size of the construction (H = ceil(F/d), m_c on OURS_GRID)
    and of ``baseline`` ("ntk" on NTK_GRID, or "ours": the construction with another decoder
    draw, a control), their parameter counts and the grid-resolution interval of the ratio."""
    from constructions.fact_mlp.baselines import ntk_memory, smallest_size
    from constructions.fact_mlp.encoder import build_encoder_decoder

    d = facts.d_model
    H = -(-facts.n_facts // d)

    def ours(salt):
        return lambda m: build_encoder_decoder(facts, m, rng_for(seed, salt, draw, m), decodability=res)

    m_o, _ = smallest_size(ours(61), OURS_GRID)
    if baseline == "ntk":
        m_b, _ = smallest_size(
            lambda m: ntk_memory(facts, m, rng_for(seed, "fact_mlp.compare.ratio_draw.ntk_memory", draw, m)),
            NTK_GRID,
        )
        grid, per_unit = NTK_GRID, 3 * d
    else:
        m_b, _ = smallest_size(ours(63), OURS_GRID)
        grid, per_unit = OURS_GRID, 3 * d * H
    row = {"draw": draw, "ours_code_dim": m_o, "baseline_size": m_b}
    if m_o is None or m_b is None:
        row["status"] = (
            "construction" if m_o is None else "baseline"
        ) + f" does not store up to size {max(OURS_GRID if m_o is None else grid)}"
        return row
    p_o, p_b = 3 * d * H * m_o, per_unit * m_b
    prev_b = grid[grid.index(m_b) - 1] if grid.index(m_b) > 0 else m_b
    row.update(
        ours_params=p_o,
        ours_params_unique=H * d + H * d * m_o + m_o * d,
        baseline_params=p_b,
        ratio=p_b / p_o,
        ratio_low=per_unit * prev_b / p_o,
        status="both store",
    )
    return row


@shared
def beats_facts(ctx, n_facts: int, n_values: int, d: int) -> tuple:
    """The fact set of capacity.beats_baseline at the run's seed and its decodability.

    >>> from verify.claims import Context
    >>> facts, res = beats_facts(Context(), 16, 8, 4)
    >>> facts.keys.shape, facts.values.shape
    ((16, 4), (8, 4))
    """
    from constructions.fact_mlp.facts import fact_set
    from theory.fact_mlp.rho import decodability

    facts = fact_set(n_facts, n_values, d, ctx.rng("fact_mlp.compare.fact_set", n_facts, d))
    return facts, decodability(facts.values)


@claim(
    "fact_mlp.capacity.beats_baseline",
    source=SRC + ", B5 (abstract: 10-104x, setting unknown)",
    provenance="derived",
    templated=True,
    statement="at F/d^2 = 1/8 (d={d}, F={n_facts}; the construction setting of docs/fact_mlp.md is d=128, "
    "F=2048), "
    "n_V={n_values}, the NTK baseline needs at least twice the construction's parameters: on every "
    "one of {draws} draws both store at some size of their 2^(1/4)-ratio grids and the "
    "lower end of the grid-resolution interval of P_ntk / P_std is >= 2, judged as its log2 >= 1 "
    "(a baseline that stores at no size fails the claim); the abstract's 10-104x is not compared",
    quick={"n_facts": 512, "n_values": 256, "d": 64, "draws": 5, "baseline": "ntk"},
    full={"n_facts": 2048, "n_values": 256, "d": 128, "draws": 5, "baseline": "ntk"},
    seed_rule="every draw of 5 (fact set from the run's seed; NTK weights and decoder per draw)",
    controls=[
        Control(
            "baseline_is_ours",
            {"baseline": "ours"},
            "the baseline replaced by the construction itself with other decoder "
            "draws: the ratio is about 1, so the criterion must fail",
        )
    ],
    bounds=("fact_mlp.baseline_ratio",),
)
def check_beats_baseline(p, ctx):
    """Changed: one draw on a doubling NTK grid against a 1.33x grid, with a
    fallback 'implied lower bound >= 2' that could not fail (it was always >= 16), is replaced by
    matching grids, 5 draws and no fallback. Quick scale moved to d=64, F=512 (same F/d^2 as the
    construction setting's d=128, F=2048, now the full scale) to afford 5 draws.

    Changed form (same rule): each draw's value is stored as log2 of the lower end of the ratio's
    grid interval, judged >= 1 (the ratio >= 2, as before). The grids step by 2^(1/4), so the
    ratio moves in steps of a constant factor and its draws spread evenly on the log scale, not on
    the linear one: verify oc draws each part from a normal at the record's per-draw mean and sd,
    and on the linear scale (base seed 0: mean 4.72, sd 1.25, skewed up by the 6.70) it put 1.5%
    of the draws below 2 and failed 9% of its simulated runs. Pilot base seeds 100-119 (never
    judged; 100 draws): lower ends 4.01-15.9 (mean 7.49, sd 2.30, skewed up), log2 mean 2.84, sd
    0.41, so the threshold 1 sits 4.5 sd below the mean on the scale where the draws spread
    evenly (base seed 0's draws: log2 mean 2.20, sd 0.37)."""
    from verify.measure import bootstrap_interval

    facts, res = beats_facts(ctx, p["n_facts"], p["n_values"], p["d"])
    baseline = choice(p, "baseline", ("ntk", "ours"))  # ours: the control
    rows = [ratio_draw(facts, res, ctx.seed, k, baseline) for k in range(p["draws"])]
    both = [r for r in rows if r["status"] == "both store"]
    parts = {
        "both_store": Agreement("draws where a family stores at no size", 0).judge(len(rows) - len(both))
    }
    if both:
        parts["ratio"] = EverySeed(
            "log2 of the lower end of the grid interval of P_baseline / P_std",
            1.0,
            ">=",
            "convention",
            unit="draws",
        ).judge([math.log2(r["ratio_low"]) for r in both], seeds=[r["draw"] for r in both])
    ratios = [r["ratio"] for r in rows if "ratio" in r]
    interval = list(np.exp(bootstrap_interval(np.log(ratios), seed=ctx.seed))) if len(ratios) >= 2 else None
    mid = sorted(rows, key=lambda r: r.get("ratio", math.inf))[len(rows) // 2]
    return all_of(**parts), {
        "draws": rows,
        "ratio_geometric_mean_95ci": interval,
        "grid_ratio": RATIO,
        "n_facts": p["n_facts"],
        "d": p["d"],
        "rho": res.rho,
        "ntk_params": mid.get("baseline_params"),
        "ratio_standard": mid.get("ratio"),
    }


GRID_CODE_DIMS = (4, 6, 8, 10, 12, 16, 20, 24, 32, 40, 48, 64)
GRID_NTK = (128, 256, 512, 1024, 2048, 4096)
#: widths of the Hebbian readouts, up to 3072 >= d(d + 1)/2 at every d of the grid (528 at d = 32,
#: 2080 at d = 64): the readout's features (A0 x) * (A1 x) are quadratic forms of the key, which span
#: at most d(d + 1)/2 dimensions, so from that width on a wider whitened readout fits the same map
#: (:func:`quadratic_span`) and one that does not store at the grid's end stores at no width. The
#: grid stopped at 1024, below that span at d = 64, where "does not store up to 1024" decided nothing.
GRID_HEBBIAN = (16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072)


def quadratic_span(d: int) -> int:
    """d(d + 1)/2, the dimension of the quadratic forms of R^d: the most features
    (A0 x) * (A1 x) of a Hebbian readout can span, whatever its width.

    >>> quadratic_span(64), quadratic_span(32)
    (2080, 528)
    """
    return d * (d + 1) // 2


def capacity_point(params: dict, seed: int) -> dict:
    """One point of the capacity grid (run by verify.sweep.run_grid): the fewest parameters
    with which each construction stores all F facts of one fact set (accuracy 1, margin > 0).

    params: n_facts, n_values, d, geometry. Returns, per construction, the smallest size, its
    P_std (and P_unique for ours), or, when no size in its grid stores the facts,
    {"size": None, "params_above": P at the largest size tried} (a lower bound).
    """
    from constructions.fact_mlp.baselines import hebbian_readout, linear_memory, ntk_memory, smallest_size
    from constructions.fact_mlp.encoder import encoder_decoder_family
    from constructions.fact_mlp.facts import fact_set
    from theory.fact_mlp.bounds import info_bits
    from theory.fact_mlp.rho import decodability

    F, n_values, d = params["n_facts"], params["n_values"], params["d"]
    rng = rng_for(seed, "fact_mlp.compare.rng", F, d)
    facts = fact_set(F, n_values, d, rng, geometry=params["geometry"])
    res = decodability(facts.values)
    out = {"rho": res.rho, "info_bits": info_bits(F, n_values)}
    family = encoder_decoder_family(facts, GRID_CODE_DIMS, rng, decodability=res)
    stored = [m for m in family if m.decode()[0] == 1.0]
    best = min(stored, key=lambda m: m.params_standard) if stored else None
    out["ours"] = (
        None
        if best is None
        else {
            "size": best.size["code_dim"],
            "params": best.params_standard,
            "params_unique": best.params_unique,
        }
    )
    builders = {
        "ntk": (
            lambda m: ntk_memory(facts, m, rng_for(seed, "fact_mlp.compare.capacity_point.ntk_memory", m)),
            GRID_NTK,
        ),
        "hebbian_whitened": (
            lambda m: hebbian_readout(
                facts, m, rng_for(seed, "fact_mlp.compare.hebbian_readout", m), whitened=True
            ),
            GRID_HEBBIAN,
        ),
        "hebbian": (
            lambda m: hebbian_readout(
                facts, m, rng_for(seed, "fact_mlp.compare.hebbian_readout", m), whitened=False
            ),
            GRID_HEBBIAN,
        ),
    }
    for name, (build, sizes) in builders.items():
        m, _ = smallest_size(build, sizes)
        out[name] = (
            {
                "size": None,
                "params_above": 3 * d * max(sizes),
                "width_above": max(sizes),
                # the readout's features span every quadratic form from width d(d + 1)/2 on
                "at_no_width": name.startswith("hebbian") and max(sizes) >= quadratic_span(d),
            }
            if m is None
            else {"size": m, "params": 3 * d * m}
        )
    lin = linear_memory(facts)
    out["linear"] = (
        {"size": d, "params": d * d}
        if lin.decode()[0] == 1.0
        else {"size": None, "params_above": d * d, "width_above": d}
    )
    return out


@shared
def grid_records(ctx, geometries: list, n_facts: list, n_values: int, d: int) -> list:
    """The capacity grid (geometry x F) at the run's seed, shared by grid and whitened_ties."""
    from verify.sweep import expand_grid, run_grid

    grid = expand_grid(geometry=geometries, n_facts=n_facts, n_values=[n_values], d=[d])
    return run_grid(capacity_point, grid, seeds=[ctx.seed], out_path=None, workers=1, progress=False)


def _versus(r, name) -> dict:
    """The baseline ``name`` at one grid point against ours: ratio, or a status string."""
    ours, b = r["ours"], r[name]
    if ours is None:
        return {"ratio": None, "status": f"the construction does not store up to m_c = {max(GRID_CODE_DIMS)}"}
    if b["size"] is None:
        status = f"does not store up to width {b['width_above']} (P = {b['params_above']})"
        if b.get("at_no_width"):
            status += ", beyond the span of its features (d(d + 1)/2): at no width"
        return {"ratio": None, "status": status}
    return {"ratio": b["params"] / ours["params"], "status": "stores"}


def grid_rows(ctx, p, baseline):
    rows, ok = [], True
    for rec in grid_records(ctx, p["geometries"], p["n_facts"], p["n_values"], p["d"]):
        r, q = rec["result"], rec["params"]
        ours = r["ours"]
        row = {
            **q,
            "rho": r["rho"],
            "info_bits": r["info_bits"],
            "ours_params": None if ours is None else ours["params"],
            "ours_size": None if ours is None else ours["size"],
            "ours_params_unique": None if ours is None else ours["params_unique"],
            "bits_per_param_ours": None if ours is None else r["info_bits"] / ours["params"],
        }
        for name in ("ntk", "hebbian_whitened", "hebbian", "linear"):
            v = _versus(r, name)
            row[f"{name}_size"] = r[name]["size"]
            row[f"{name}_params"] = r[name].get("params")
            row[f"{name}_params_above"] = r[name].get("params_above")
            row[f"ratio_{name}"] = v["ratio"]
            row[f"status_{name}"] = v["status"]
        b = r[baseline]
        # the baseline needs more parameters: it stores with more, or not at all up to its grid
        ok &= ours is not None and (b["size"] is None or b["params"] > ours["params"])
        rows.append(row)
    return rows, bool(ok)


def _point(row: dict) -> str:
    return f"{row['geometry']},F={row['n_facts']}"


def grid_seeds(ctx, p: dict, baseline: str) -> dict:
    """The capacity grid's rows (:func:`grid_rows`) at each seed of ``ctx.seeds(p["n_seeds"])``
    (the base seed first), {seed: rows}. Hypothesis: n_seeds >= 5, the fewest at which one seed's
    value placed on its threshold passes a rule over every seed at most 0.5^5 = 0.031 of the time.

    >>> from verify.claims import Context
    >>> grid_seeds(Context(), {"n_seeds": 1}, "ntk")
    Traceback (most recent call last):
    ...
    ValueError: the capacity grid is judged on every one of n_seeds >= 5 seeds, got 1
    """
    n = int(p["n_seeds"])
    if n < 5:
        raise ValueError(f"the capacity grid is judged on every one of n_seeds >= 5 seeds, got {n}")
    return {s: grid_rows(replace(ctx, seed=s), p, baseline)[0] for s in ctx.seeds(n)}


def _needs_more_at(rows: list, name: str) -> float | None:
    """The worst point of one seed's grid for capacity.grid: min over the points where the
    construction stores of P_name - P_std, with P_name at a point where the baseline stores at no
    size of its grid the smallest count above its largest size's, P_above + 1 (a lower bound: it
    does not store with P_above parameters, so it needs more); None when the construction stores
    at no point.

    >>> rows = [{"ours_params": 10, "ntk_params": 40}, {"ours_params": 20, "ntk_params": None,
    ...          "ntk_params_above": 100}, {"ours_params": None, "ntk_params": 5}]
    >>> _needs_more_at(rows, "ntk")
    30
    >>> _needs_more_at([{"ours_params": 100, "ntk_params": None, "ntk_params_above": 100}], "ntk")
    1
    """
    gaps = [
        (r[f"{name}_params"] if r[f"{name}_params"] is not None else r[f"{name}_params_above"] + 1)
        - r["ours_params"]
        for r in rows
        if r["ours_params"] is not None
    ]
    return min(gaps) if gaps else None


def _needs_more(per_seed: dict, name: str):
    """The capacity.grid criterion against baseline ``name`` over seeds ({seed: rows}): the
    construction stores at every point of every seed (count of points where it does not = 0) and,
    on every seed, the worst point's P_baseline - P_std >= 1 (integers; a baseline that stores at no
    size of its grid counts with one parameter more than its largest size's, a lower bound: it
    needs more by the claim's statement)."""
    parts = {
        "ours_stores": Agreement("points where the construction stores at no m_c", 0).judge(
            sum(r["ours_params"] is None for rows in per_seed.values() for r in rows)
        )
    }
    worst = {s: _needs_more_at(rows, name) for s, rows in per_seed.items()}
    kept = [s for s, v in worst.items() if v is not None]
    if kept:
        parts["more_params"] = EverySeed(
            f"worst point's P_{name} - P_std (parameters; a baseline storing at no size: its largest + 1)",
            1,
            ">=",
            "theory",
            unit="seeds",
        ).judge([worst[s] for s in kept], seeds=kept)
    return all_of(**parts)


@claim(
    "fact_mlp.capacity.grid",
    source=SRC + ", B5 over geometries (abstract)",
    provenance="derived",
    statement="over a grid of F and key/value geometries (spherical, spiked beta=3, clustered) "
    "the construction stores every fact set, and the NTK baseline needs more "
    "parameters at every point: it stores with more, or it 'does not store up to "
    "width 4096' (reported as that, not as a ratio: at these sizes the NTK plateaus "
    "below accuracy 1), on every one of {n_seeds} seeds (a grid per seed; the worst point's "
    "P_ntk - P_std >= 1 per seed); the whitened and unwhitened Hebbian readouts, the linear "
    "memory and bits per parameter are reported",
    templated=True,
    quick=dict(GRID_QUICK, baseline="ntk", n_seeds=5),
    full=dict(GRID_FULL, baseline="ntk", n_seeds=5),
    seed_rule="every seed of ctx.seeds(n_seeds): one grid (fact sets, baselines) per seed",
    controls=[
        Control(
            "whitened_baseline",
            {"baseline": "hebbian_whitened"},
            "the same criterion against the whitened Hebbian readout, which ties or "
            "beats the construction (capacity.whitened_ties), must fail",
        )
    ],
)
def check_capacity_grid(p, ctx):
    """Changed presentation: a baseline that stores at no grid size was shown
    as 'ratio > x'; it is now 'does not store up to width W'.

    Changed criterion (replicates over seeds): the rule judged one grid, at the base seed, over its
    points (P_ntk - P_std >= 1 at every point where both store), a rule over points that verify oc
    cannot simulate (no spread). The grid is now drawn at ``n_seeds`` seeds (fact sets and
    baselines per seed, 0.7 CPU-s each at quick scale) and each seed gives one value, its worst
    point's P_ntk - P_std, a point where the NTK stores at no width counting with one parameter
    more than the grid's largest NTK (a lower bound: it does not store with that many, so it needs
    more, as the statement says); every seed must clear 1 (the old threshold). The count 5 is the fewest at which a seed placed on the threshold passes
    at most 0.5^5 = 0.031 of the time. Pilot base seeds 100-105 (never judged): worst-point margins
    89,088, 181,248, 368,640, 374,784, 374,784, 187,392 parameters (the NTK stores at 0 or 1 point
    per seed, spherical F = 128); the whitened_baseline control's worst points 0, -3,072, -6,144,
    -6,144, -3,072, -6,144 (fails at every pilot seed but 100, where it ties).

    Corrected encoding (after the first full-scale run of this rule, base seed 0): a point where
    the NTK stores at no width first counted with the largest NTK's count itself, P_above, which
    says "needs at least as many", not "more"; at full scale, seed 3, F = 4096, the construction
    needs m_c = 64, P_std = 786,432 = P_above, and that point read 0 and failed the rule though the
    NTK does not store there at all (the statement, and the former rule, count such a point as
    needing more). The lower bound is now P_above + 1. No quick value was near it (quick worst
    margins >= 86,016 at base seeds 0-4, 59 and pilots 100-105); the full record at the first
    encoding is kept in results/full/claims.jsonl's history."""
    baseline = choice(p, "baseline", ("ntk", "hebbian_whitened"))  # hebbian_whitened: the control
    per_seed = grid_seeds(ctx, p, baseline)
    rows = per_seed[ctx.seed]
    return _needs_more(per_seed, baseline), {
        "rows": rows,
        "baseline": baseline,
        "worst_point_margin_per_seed": {str(s): _needs_more_at(r, baseline) for s, r in per_seed.items()},
        f"vs_{baseline}": [
            r[f"status_{baseline}"] if r[f"ratio_{baseline}"] is None else round(r[f"ratio_{baseline}"], 2)
            for r in rows
        ],
    }


#: error per direction of capacity.whitened_ties's staged rule over its two looks: a mean on the
#: threshold passes 2.4% of the time (4.3% at 0.05, too near the 0.05 a 200-run simulation checks)
SEQUENTIAL_ALPHA = 0.03


def _worst_ratio(rows: list, name: str) -> float | None:
    """The largest P_name / P_std over one seed's grid points where both store; None when they
    store together at no point.

    >>> _worst_ratio([{"ratio_x": 1.6}, {"ratio_x": None}, {"ratio_x": 2.0}], "x")
    2.0
    >>> _worst_ratio([{"ratio_x": None}], "x") is None
    True
    """
    xs = [r[f"ratio_{name}"] for r in rows if r[f"ratio_{name}"] is not None]
    return max(xs) if xs else None


def _whitened_judgement(per_seed: dict, name: str, looks: tuple) -> tuple:
    """(judgement, per-seed worst ratios) of capacity.whitened_ties over the seeds measured so far
    ({seed: rows}):
    both store at every point, and the mean of the per-seed worst ratios <= 2 by a
    :class:`verify.criteria.Sequential` rule at ``looks`` (left out while fewer seeds than its
    first look have a worst ratio: then both_store fails).

    >>> rows = {s: [{"ratio_x": v}] for s, v in enumerate([1.6, 1.33, 1.6, 1.5, 1.6])}
    >>> j, _ = _whitened_judgement(rows, "x", (5, 10))
    >>> j.verdict
    'pass'
    >>> j, _ = _whitened_judgement({**rows, 0: [{"ratio_x": None}]}, "x", (5, 10))
    >>> j.verdict
    'fail'
    """
    parts = {
        "both_store": Agreement("points where the baseline or the construction stores at no size", 0).judge(
            sum(r[f"ratio_{name}"] is None for rs in per_seed.values() for r in rs)
        )
    }
    worst = {s: v for s, v in ((s, _worst_ratio(rs, name)) for s, rs in per_seed.items()) if v is not None}
    if len(worst) >= looks[0]:
        parts["ratio"] = Sequential(
            f"mean over seeds of the worst point's P_{name} / P_std",
            2.0,
            "<=",
            "convention",
            looks=looks,
            alpha=SEQUENTIAL_ALPHA,
        ).judge(list(worst.values()), seeds=list(worst))
    return all_of(**parts), worst


@claim(
    "fact_mlp.capacity.whitened_ties",
    source=SRC + " (reference: whitened readout)",
    provenance="derived",
    statement="on the capacity grid the whitened Hebbian readout (a baseline) stores every fact "
    "set with at most twice the construction's parameters, P_whitened / P_std <= 2 "
    "at every point (the construction does not beat it by more than 2x; ratios below "
    "1 mean the readout wins): a grid per seed, both store at every point of every seed, and the "
    "mean over seeds of the worst point's ratio is <= 2, judged in stages (looks at {n_seeds} and "
    "2 x {n_seeds} seeds, one-sided Student-t bounds at 0.985 each: pass when the upper bound is "
    "<= 2, fail when the lower bound is above 2, else inconclusive at the cap)",
    templated=True,
    quick=dict(GRID_QUICK, baseline="hebbian_whitened", n_seeds=5),
    full=dict(GRID_FULL, baseline="hebbian_whitened", n_seeds=5),
    seed_rule="sequential over ctx.seeds(2 * n_seeds), looks at n_seeds and 2 * n_seeds: one grid "
    "(fact sets, baselines) per seed",
    controls=[
        Control(
            "ntk_baseline",
            {"baseline": "ntk"},
            "the same criterion against the NTK baseline, which does not store at most points, must fail",
        )
    ],
)
def check_whitened_ties(p, ctx):
    """The threshold 2 was set from the range measured earlier (0.75-1.6 at seed 0).

    Changed setting: the readout's width grid stopped at 1024, below d(d + 1)/2 = 2080 at full
    scale (d = 64), so a readout that did not store there might have stored wider, and the claim's
    fail was not judged inside its hypothesis. The grid now reaches 3072 >= d(d + 1)/2 at every d
    (GRID_HEBBIAN): the readout's features are quadratic forms of the key, so from that width on
    the whitened fit spans the same maps, and a readout that does not store at 3072 stores at no
    width (status "at no width"); a both_store miss then refutes the claim.

    Changed criterion (replicates over seeds): the rule judged one grid, at the base seed, over its
    points (P_whitened / P_std <= 2 at every point), a rule over points that verify oc cannot
    simulate (no spread). The grid is now drawn at ``n_seeds`` seeds (capacity.grid's grids, one
    cache entry per seed) and each seed gives one value, its worst point's ratio; every seed must
    be <= 2 (the old threshold), and both must store at every point of every seed. The count 5 as
    in capacity.grid (0.5^5 = 0.031 with a seed on the threshold). Pilot base seeds 100-105 (never
    judged): worst-point ratios 1.6, 1.33, 1.33, 1.6, 1.6, 1.6 (mean 1.51, sd 0.14), both storing at
    every point.

    Changed rule (replaced by a staged rule on the mean; verify/previous_criteria.json keeps the
    old one): "the worst point's ratio <= 2 on every one of 5 seeds" failed 21% of the runs that
    verify oc drew at base seed 0's per-seed spread (mean 1.61, sd 0.25). The risk is real, not
    an artefact of the normal law: the ratios are grid values (P = 3 d x width against 3 d H m_c)
    and the worst point lands exactly on 2.0 at 1 of base seed 0's 5 seeds and at 3 of 60 pilot
    seeds, so a seed one grid step beyond 2 (2.4 or 2.67) is a matter of time, and an every-seed
    rule at that threshold fails at some unused base seed by chance. The claim is about the
    typical seed ("does not beat it by more than 2x"), so the rule now judges the mean of the
    per-seed worst ratios with :class:`verify.criteria.Sequential` (threshold 2 unchanged, looks
    at n_seeds = 5 and 10, alpha SEQUENTIAL_ALPHA = 0.03): the first look reads the 5 grids
    capacity.grid draws anyway, the second 5 more only when the first does not decide. Decided on pilot base seeds
    100-159 (never judged; 60 seeds): worst ratios 1.6 x 27, 1.33 x 27, 2.0 x 3, 1.2 x 2, 1.0
    (mean 1.48, sd 0.19), both storing at every point; the staged rule resampled from them passed
    4000 of 4000 runs (5.2 seeds on average), and from a normal at base seed 0's spread 98.4% pass,
    1.6% inconclusive, no fail; at a mean on 2 it passes 2.4% and fails 2.5% (staged_rates, 4000
    runs). alpha 0.03, not 0.05: at 0.05 a mean on 2 passes 4.3%, too close to the 0.05 that
    verify oc's 200 replications estimate with a standard error of 0.015. both_store keeps
    counting every measured seed's points; a fail there decides, and no further seed is drawn."""
    name = choice(p, "baseline", ("hebbian_whitened", "ntk"))  # ntk: the control
    n = int(p["n_seeds"])
    looks = (n, 2 * n)
    seeds = ctx.seeds(2 * n)
    _, measured = run_staged(
        looks,
        seeds,
        lambda s: grid_rows(replace(ctx, seed=s), p, name)[0],
        lambda runs: _whitened_judgement(dict(zip(seeds, runs)), name, looks)[0],
    )
    judgement, worst = _whitened_judgement(dict(zip(seeds, measured)), name, looks)
    rows = measured[0]
    ratios = [r[f"ratio_{name}"] for r in rows]
    wins = sum(1 for x in ratios if x is not None and x < 1.0)
    return judgement, {
        "rows": rows,
        "baseline": name,
        "worst_point_ratio_per_seed": {str(s): v for s, v in worst.items()},
        "points_where_baseline_needs_fewer": wins,
        "ratios": [r[f"status_{name}"] if x is None else round(x, 2) for r, x in zip(rows, ratios)],
    }
