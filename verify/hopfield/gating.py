"""Claims of the hopfield area about context gates (bounds D2, D5;
docs/hopfield.md#statements-and-proof-sketches).

gated_error_bound, gated_separation, gate_exponential, sparsity_pr, context_subspace. The capacity
claims (D3, the capacity gain, R4's tightness) live in verify/hopfield/capacity.py. All [derived]:
the gate model is our formalisation of Context-Gated Associative Retrieval (2605.10970).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
from scipy.special import softmax

from constructions.hopfield.fixed_point import effective_rank
from constructions.hopfield.networks import (
    context_gates,
    noisy_query,
    retrieval_distribution,
    retrieval_error,
    sphere_patterns,
)
from theory.hopfield.derived import (
    epsilon_gated,
    epsilon_ungated,
    error_bound,
    gated_separation,
    norm_bound,
    participation_ratio,
    pr_bound,
    separation,
)
from theory.papers import paper
from verify.claims import Control, Outcome, choice, claim
from verify.criteria import Agreement, EverySeed, all_of

PAPER = paper("hopfield")


@claim(
    "hopfield.gated.error_bound",
    source=f"{PAPER}, D2 (our formalisation)",
    provenance="derived",
    bounds=("hopfield.gated_error",),
    templated=True,
    statement="for noisy queries (noise {noise} sqrt(d), beta in {beta_range}) and random gates g ~ U(0,1) "
    "with g_i = 1 = max g, ||f_g(xi) - x_i|| <= 2 M min(1, eps_g) and eps_g <= eps in every one of {trials} "
    "trials of each of {seeds} seeds (on every seed the largest error / bound <= 1 + 1e-12, a float64 "
    "round-off allowance, and no trial with eps_g / eps > 1 + 1e-12: eps_g <= eps holds by D2's "
    "algebra once g_i = max g, so it is counted, not read as a margin)",
    quick={
        "dim": 32,
        "n_patterns": 64,
        "beta_range": [0.5, 8.0],
        "noise": 0.05,
        "trials": 400,
        "seeds": 5,
        "target_gate": "max",
        "eps_g_at": "query",
    },
    seed_rule="every one of the trials of every seed of seed..seed+seeds-1",
    controls=[
        Control(
            "no_2Mr",
            {"eps_g_at": "pattern"},
            "D2 with its 2 M r term dropped (eps_g at r = 0): the noisy query can move "
            "toward a distractor, so the error bound must be violated in some trial",
        ),
        Control(
            "target_not_max",
            {"target_gate": "drawn"},
            "the target's gate drawn like the others (g_i = max g dropped): some "
            "distractor then has g_j > g_i, so eps_g <= eps must be violated",
        ),
    ],
)
def gated_error_bound(params, ctx):
    """D2 on noisy queries with random gates, judged per seed: every seed's largest error / bound
    and largest eps_g / eps are at most 1 + 1e-12. Before, the 2000 trials were drawn from the
    run's seed and the rule read the largest ratios over all of them (one draw: verify oc could not
    simulate it); now the same 2000 trials are 5 seeds of 400 (the same cost), the same event per
    trial, and the record keeps the per-seed largest ratios. Verdict at base seed 0: pass before
    and after.

    The order part is counted, not read as a margin: eps_g <= eps holds term by term once g_j <= g_i
    (D2's algebra, theory.hopfield.derived.epsilon_gated), so the largest ratio eps_g / eps of a
    seed's 400 trials creeps up to 1 from below and never crosses it. Judged as a number per seed,
    ``verify oc`` drew it from a normal around its mean (0.9968, sd 0.0025 over seeds 0-4) and put
    0.10 of each seed above 1: the claim failed 0.435 of the time "as measured", a mass the
    theorem excludes. Pilot base seeds 100-195 (step 5, 100 seeds, never judged): largest ratio
    per seed 0.9742 to 0.99986 (median 0.9967), no trial above 1 + 1e-12 (the record's details
    keep the per-seed largest ratios). The rule now counts the seed's trials with eps_g / eps > 1 + 1e-12 and requires
    0 on every seed: the same event on every trial, so the same verdict at every seed
    (verify/previous_criteria.json keeps the replaced rule and both simulations); the control
    target_not_max counts violations on every seed."""
    d, n = params["dim"], params["n_patterns"]
    radius = math.sqrt(d)
    target_max = choice(params, "target_gate", ("max", "drawn")) == "max"  # drawn: a control
    at_pattern = choice(params, "eps_g_at", ("query", "pattern")) == "pattern"  # a control
    v_bound, v_order, points, tight, tight_order = 0, 0, [], 0.0, 0.0
    seed_err, seed_order, seed_order_v = [], [], []
    seeds = ctx.seeds(params["seeds"])
    for s in seeds:
        gen = ctx.rng("hopfield.gating.gated_error_bound.gen", s)
        seed_err.append(0.0)
        seed_order.append(0.0)
        seed_order_v.append(0)
        for _ in range(params["trials"]):
            X = sphere_patterns(n, d, radius, gen)
            i = int(gen.integers(n))
            beta = float(gen.uniform(*params["beta_range"]))
            g = gen.uniform(0.0, 1.0, n)
            if target_max:  # the target_not_max control drops g_i = max g
                g[i] = 1.0
            g = np.maximum(g, 1e-300)  # U(0,1) never returns 0 in practice; keep log finite
            u = np.log(g) - np.log(g.max())  # log-gates <= 0; the ratios g_j/g_i are unchanged
            xi = noisy_query(X, i, params["noise"] * math.sqrt(d), gen)
            # "pattern": the control, eps_g at r = 0 (D2's 2 M r term dropped)
            eps_g = epsilon_gated(X, X[:, i] if at_pattern else xi, i, beta, u)
            eps = epsilon_ungated(X, xi, i, beta)
            err_g = retrieval_error(X, xi, i, beta, u)
            bound = error_bound(eps_g, norm_bound(X))
            v_bound += int(err_g > bound * (1 + 1e-12))
            v_order += int(eps_g > eps * (1 + 1e-12))
            seed_order_v[-1] += int(eps_g / eps > 1 + 1e-12)
            seed_err[-1] = max(seed_err[-1], err_g / bound)
            seed_order[-1] = max(seed_order[-1], eps_g / eps)
            if len(points) < 400:
                points.append(
                    [
                        beta * separation(X, i),
                        err_g,
                        bound,
                        retrieval_error(X, xi, i, beta),
                        error_bound(eps, norm_bound(X)),
                    ]
                )
        tight, tight_order = max(tight, seed_err[-1]), max(tight_order, seed_order[-1])
    judgement = all_of(
        error=EverySeed(
            "largest ||f_g(xi) - x_i|| / (2 M min(1, eps_g)) of the seed's trials",
            1 + 1e-12,
            "<=",
            "convention",
        ).judge(seed_err, seeds=seeds),
        order=EverySeed("trials of the seed with eps_g / eps > 1 + 1e-12", 0, "<=", "theory").judge(
            seed_order_v, seeds=seeds
        ),
    )
    return judgement, {
        "beta_delta_errg_boundg_err_bound": points,
        "max_error_over_bound": tight,
        "max_eps_g_over_eps": tight_order,
        "max_eps_g_over_eps_per_seed": seed_order,
        "violations_error_bound": v_bound,
        "violations_eps_order": v_order,
    }


@claim(
    "hopfield.gated.separation",
    source=f"{PAPER}, D2 (our formalisation)",
    provenance="derived",
    bounds=("hopfield.gated_error",),
    templated=True,
    statement="with soft gates g_j ~ U({g_min}, 1) on every memory and g_i = 1 = max g, in every one of "
    "{draws} draws of each of {seeds} seeds (N = {n_patterns}, d = {dim}, beta = {beta}) the gated separation Delta_i^g >= Delta_i and "
    "the gated one-update error from a noisy query is <= 2 M min(1, (N - 1) exp(-beta (Delta_i^g - 2 M r))) "
    "(ratio <= 1 + 1e-12, a float64 round-off allowance); Delta_i^g >= Delta_i holds by D2's algebra once "
    "g_i = max g, so the draws below it are counted (0 on every seed), not read as a margin",
    quick={
        "dim": 32,
        "n_patterns": 128,
        "beta": 4.0,
        "g_min": 0.01,
        "noise": 0.05,
        "draws": 200,
        "seeds": 5,
        "target_gate": "max",
    },
    seed_rule="every one of the draws of every seed of seed..seed+seeds-1",
    controls=[
        Control(
            "target_not_max",
            {"target_gate": "drawn"},
            "the target's gate drawn like the others (g_i = max g dropped): a distractor "
            "with g_j > g_i lowers Delta_i^g below Delta_i, so the criterion must fail",
        )
    ],
)
def gated_separation_claim(params, ctx):
    """Soft gates: with hard gates Delta_i^g is a minimum over a subset of the
    gaps and can never fall below Delta_i; with soft gates every memory stays in the minimum and
    the inequality rests on g_i = max g, which the control drops. The error part checks that
    Delta_i^g is the separation that controls the gated error (D2's scalar form, N_eff = N).

    Judged per seed (every seed's smallest gain Delta_i^g - Delta_i >= 0 and largest error / bound
    <= 1 + 1e-12); before, the 1000 draws came from the run's seed and the rule read the extremes
    over all of them (one draw: verify oc could not simulate it); now they are 5 seeds of 200 (the
    same cost). Verdict at base seed 0: pass before and after.

    The separation part is counted, not read as a margin: with g_i = max g every bracket
    Delta_ij + log(g_i/g_j)/beta is >= Delta_ij (theory.hopfield.derived.gated_separation), so the
    gain Delta_i^g - Delta_i is >= 0 on every draw and a seed's smallest gain is a positive,
    skewed minimum. Judged as a number per seed, ``verify oc`` drew it from a normal (mean
    0.00029, sd 0.00027 over seeds 0-4) that puts 0.14 of each seed below 0: the claim failed 0.58
    of the time "as measured", a mass the theorem excludes. Pilot base seeds 100-195 (step 5, 100
    seeds, never judged): smallest gain per seed 3.6e-6 to 0.0050 (median 0.0011; its log has sd
    1.5), no draw below 0 (the record's details keep the per-seed smallest gains). The rule now
    counts the seed's draws with Delta_i^g < Delta_i and requires 0 on every seed: the same event
    on every draw, so the same verdict at every seed (verify/previous_criteria.json keeps the
    replaced rule and both simulations); the control target_not_max counts such draws on every
    seed."""
    target_max = choice(params, "target_gate", ("max", "drawn")) == "max"  # drawn: the control
    n, beta = params["n_patterns"], params["beta"]
    v_sep, v_err, gains, tight = 0, 0, [], 0.0
    seed_gain, seed_err, seed_below = [], [], []
    seeds = ctx.seeds(params["seeds"])
    for s in seeds:
        gen = ctx.rng("hopfield.gating.gated_separation_claim.gen", s)
        seed_gain.append(math.inf)
        seed_below.append(0)
        seed_err.append(0.0)
        for _ in range(params["draws"]):
            X = sphere_patterns(n, params["dim"], 1.0, gen)
            i = int(gen.integers(n))
            g = gen.uniform(params["g_min"], 1.0, n)
            if target_max:
                g[i] = 1.0
            u = np.log(g) - np.log(g.max())
            dg = gated_separation(X, i, beta, u)
            du = separation(X, i)
            xi = noisy_query(X, i, params["noise"], gen)
            r = float(np.linalg.norm(xi - X[:, i]))
            m = norm_bound(X)
            bound = error_bound((n - 1) * math.exp(-beta * (dg - 2 * m * r)), m)
            err = retrieval_error(X, xi, i, beta, u)
            v_sep += int(dg < du)
            seed_below[-1] += int(dg < du)
            v_err += int(err > bound * (1 + 1e-12))
            seed_err[-1] = max(seed_err[-1], err / bound)
            seed_gain[-1] = min(seed_gain[-1], dg - du)
            gains.append(dg - du)
        tight = max(tight, seed_err[-1])
    judgement = all_of(
        separation=EverySeed("draws of the seed with Delta_i^g < Delta_i", 0, "<=", "theory").judge(
            seed_below, seeds=seeds
        ),
        error=EverySeed(
            "largest gated error / bound of the seed's draws", 1 + 1e-12, "<=", "convention"
        ).judge(seed_err, seeds=seeds),
    )
    return judgement, {
        "min_gain": float(min(gains)),
        "smallest_gain_per_seed": seed_gain,
        "median_gain": float(np.median(gains)),
        "violations_separation": v_sep,
        "violations_error": v_err,
        "max_error_over_bound": tight,
    }


@claim(
    "hopfield.gated.exponential_in_kappa",
    source=f"{PAPER}, D2 (our formalisation)",
    bounds=("hopfield.gated_error",),
    provenance="derived",
    templated=True,
    statement="with every distractor gated at log-odds kappa, each seed's fitted slope of "
    "log ||f_g(x_i) - x_i|| against kappa in {kappas} lies in {slope_range} (theory: -1; the window is a "
    "convention), on every one of {seeds} seeds",
    quick={
        "dim": 16,
        "n_patterns": 64,
        "beta": 2.0,
        "kappas": [4, 5, 6, 7, 8, 9, 10, 11, 12],
        "seeds": 10,
        "slope_range": [-1.1, -0.9],
        "target_gate": "open",
    },
    seed_rule="every seed of seed..seed+seeds-1",
    controls=[
        Control(
            "target_gated_too",
            {"target_gate": "closed"},
            "the target's gate closed with the distractors (an uninformative gate): "
            "the softmax is unchanged, the slope is 0, so the criterion must fail",
        ),
        Control(
            "before_exponential_regime",
            {"kappas": [0, 1, 2, 3, 4, 5, 6, 7, 8]},
            "kappa in 0..8, where the error has not entered its exponential regime "
            "(our calibration: slope about -0.73): the window must reject it",
        ),
    ],
)
def gate_exponential(params, ctx):
    target_open = choice(params, "target_gate", ("open", "closed")) == "open"  # closed: the control
    n, kappas = params["n_patterns"], np.asarray(params["kappas"], dtype=float)
    slopes, curves = [], []
    for s in ctx.seeds(params["seeds"]):
        gen = ctx.rng("hopfield.gating.gate_exponential.gen", s)
        X = sphere_patterns(n, params["dim"], 1.0, gen)
        i = int(gen.integers(n))
        errs = []
        for k in kappas:
            u = np.full(n, -k)
            if target_open:
                u[i] = 0.0
            errs.append(retrieval_error(X, X[:, i], i, params["beta"], u))
        slopes.append(float(np.polyfit(kappas, np.log(errs), 1)[0]))
        curves.append(errs)
    lo, hi = params["slope_range"]
    labels = list(ctx.seeds(params["seeds"]))
    judgement = all_of(
        above=EverySeed("slope", lo, ">=", "convention").judge(slopes, seeds=labels),
        below=EverySeed("slope", hi, "<=", "convention").judge(slopes, seeds=labels),
    )
    return judgement, {"kappa": kappas.tolist(), "errors": curves, "slopes": slopes}


def _pr_draws(params, ctx, kappa, supports=None):
    """PR of the gated (p_g) and ungated retrieval distributions per draw; ``supports``, when a
    list, receives (non-zero entries of p_g, size of the gates' open set) per draw.

    >>> from verify.claims import Context
    >>> supports = []
    >>> p = {"dim": 8, "n_patterns": 32, "beta": 0.5, "n_eff": 4, "draws": 3}
    >>> pr_g, pr_u = _pr_draws(p, Context(seed=0), float("inf"), supports)
    >>> supports, max(pr_g) <= 4
    ([(4, 4), (4, 4), (4, 4)], True)
    """
    gen = ctx.rng("hopfield.sparsity.gen")
    n = params["n_patterns"]
    pr_g, pr_u = [], []
    for _ in range(params["draws"]):
        X = sphere_patterns(n, params["dim"], 1.0, gen)
        q = sphere_patterns(1, params["dim"], 1.0, gen)[:, 0]
        u, active = context_gates(n, int(gen.integers(n)), params["n_eff"], kappa, gen)
        p_g = retrieval_distribution(X, q, params["beta"], u)
        pr_g.append(participation_ratio(p_g))
        pr_u.append(participation_ratio(retrieval_distribution(X, q, params["beta"])))
        if supports is not None:
            supports.append((int(np.count_nonzero(p_g)), len(active)))
    return pr_g, pr_u


@claim(
    "hopfield.sparsity.pr",
    source=f"{PAPER}, D5 (our formalisation)",
    provenance="derived",
    bounds=("hopfield.pr_hard_gates",),
    kind="identity",
    independence="PR <= N_eff is Cauchy-Schwarz for N_eff non-zero entries (by construction); checked: the "
    "gated softmax (retrieval_distribution) has as many non-zero entries as the gates' open set "
    "(context_gates, counted apart), and theory's participation_ratio of it stays below that count",
    templated=True,
    statement="identity (Cauchy-Schwarz): with N_eff = {n_eff} hard gates (kappa = {kappa}) the gated "
    "retrieval distribution p_g has exactly N_eff non-zero entries and PR(p_g) <= N_eff in every one "
    "of {draws} draws, while the ungated PR at beta = {beta} stays >= N/2 (N = {n_patterns}; N/2 is a "
    "convention)",
    quick={"dim": 32, "n_patterns": 256, "beta": 0.5, "n_eff": 16, "draws": 50, "kappa": "inf"},
    seed_rule="every one of the draws from the run's seed",
    controls=[
        Control(
            "soft_gates_kappa4",
            {"kappa": 4.0},
            "D5's hypothesis (hard gates) dropped: at distractor log-odds 4 the 240 "
            "closed memories keep weight e^-4 each, so PR(p_g) must exceed N_eff",
        )
    ],
)
def sparsity_pr(params, ctx):
    kappa = float(params["kappa"])
    n = params["n_patterns"]
    supports: list[tuple[int, int]] = []
    pr_g, pr_u = _pr_draws(params, ctx, kappa, supports)
    judgement = all_of(
        support=Agreement("max |non-zero entries of p_g - N_eff| over draws", 0.0).judge(
            max(abs(nz - params["n_eff"]) for nz, _ in supports)
        ),
        gated=EverySeed("PR(p_g)", pr_bound(params["n_eff"]), "<=", "theory", unit="draws").judge(pr_g),
        ungated=EverySeed("ungated PR", 0.5 * n, ">=", "convention", unit="draws").judge(pr_u),
    )
    details = {
        "support_p_g": [nz for nz, _ in supports],
        "open_gates": [k for _, k in supports],
        "pr_gated": pr_g,
        "pr_ungated": pr_u,
        "kappa": kappa,
        "max_pr_over_bound": max(pr_g) / pr_bound(params["n_eff"]),
    }
    if math.isinf(kappa):  # the bracket: how soft the gates may be before D5 breaks
        sweep = []
        for k in (0.0, 2.0, 4.0, 8.0, 12.0, 16.0):
            g, _ = _pr_draws({**params, "draws": 10}, ctx, k)
            sweep.append({"kappa": k, "max_pr_gated": max(g), "exceeds_n_eff": max(g) > params["n_eff"]})
        details["kappa_bracket"] = sweep
    out = Outcome.judged(judgement, details=details)
    return replace(out, measured=[max(pr_g), min(pr_u)])  # the tightness figure reads measured[0]


@claim(
    "hopfield.context.subspace",
    source=f"{PAPER}, abstract ('context localises a memory "
    "subspace in which the zero-shot query then discriminates'), our formalisation",
    provenance="derived",
    templated=True,
    statement="with N_eff = {n_eff} hard gates that keep the target and a query near the target (noise "
    "{noise}), the effective rank of X diag(p*) X^T is at most {max_ratio} times (a convention) that of the "
    "same-rank baseline X diag(uniform on the open set) X^T, in every one of {draws} draws",
    quick={
        "dim": 64,
        "n_patterns": 256,
        "n_eff": 16,
        "beta": 4.0,
        "noise": 0.5,
        "draws": 20,
        "max_ratio": 0.5,
        "query": "noisy",
    },
    seed_rule="every one of the draws from the run's seed",
    controls=[
        Control(
            "random_query",
            {"query": "random"},
            "a query independent of the memories: inside the open set p* is then "
            "nearly uniform, the rank matches the baseline, and the criterion must fail",
        )
    ],
)
def context_subspace(params, ctx):
    """The old criterion (ratio to the effective rank of all memories <= 2 N_eff /
    min(N, d)) held by rank alone (16 open memories give at most 16/56 = 0.29). The same-rank
    baseline (uniform weight on the same open memories) removes the rank effect: what is left is
    the query's discrimination inside the context's subspace. The old criterion, evaluated with
    the old random query, is kept in details."""
    gen = ctx.rng("hopfield.gating.context_subspace.gen")
    n, d = params["n_patterns"], params["dim"]
    ratios = []
    for _ in range(params["draws"]):
        X = sphere_patterns(n, d, 1.0, gen)
        t = int(gen.integers(n))
        u, _ = context_gates(n, t, params["n_eff"], math.inf, gen)
        q_random = sphere_patterns(1, d, 1.0, gen)[:, 0]  # drawn in every draw: one stream for both queries
        q = q_random if params["query"] == "random" else noisy_query(X, t, params["noise"], gen)
        p = softmax(params["beta"] * (X.T @ q) + u)  # lambda = 0: p* = p1
        uniform = np.where(np.isfinite(u), 1.0 / params["n_eff"], 0.0)
        ratios.append(effective_rank((X * p) @ X.T) / effective_rank((X * uniform) @ X.T))
    rule = EverySeed(
        "effective-rank ratio to the same-rank baseline",
        params["max_ratio"],
        "<=",
        "convention",
        unit="draws",
    )
    return rule.judge(ratios), {"ratios": ratios}
