"""Single-hop claims of *Geometric Factual Recall in Transformers* (spec geometric.md §7).

Every check builds the explicit weights of constructions.geometric and measures accuracy and
margin with the chunked kernel of verify.measure. Provenance follows the spec: the structure
("log dimension suffices", the transfer) is the paper's [abstract]; every constant and every
bound is this project's [derived] formalisation.
"""
from __future__ import annotations

import math

import numpy as np
import sympy as sp

from constructions.geometric import (attribute_codes, build_block_model, build_rotation_model,
                                     swap_bijections)
from constructions.tasks import make_bijections, single_hop_dataset
from theory import geometric as B
from verify.claims import Outcome, claim
from verify.measure import binomial_tolerance, decode, linear_fit, min_pairwise_gap

SRC = "Geometric Factual Recall (2605.12426)"


def _rng(seed, *salt):
    return np.random.default_rng([int(seed), *[int(s) for s in salt]])


def model_decoding(model, ctx=None):
    """Accuracy and min margin of a block model over all N*R facts, through the transformer."""
    subj, rel, target = single_hop_dataset(model.perms)
    hidden = model.final_hidden(subj, rel)
    return decode(hidden, model.transformer.unembed, target)


def _block(n, r, d0, seed, kind="spherical", ctx=None, salt=0):
    perms = make_bijections(n, r, _rng(seed, 1, n, r, salt))
    device = ctx.device if ctx else "cpu"
    dtype = ctx.torch_dtype() if ctx else None
    kwargs = {"device": device}
    if dtype is not None:
        kwargs["dtype"] = dtype
    return build_block_model(perms, d0, code_kind=kind, rng=_rng(seed, 2, n, d0, salt), **kwargs)


# ---------------------------------------------------------------------------------------------
@claim("geometric.single_hop.selector_exact", source=f"{SRC}, selector MLP (§5.1 exactness lemma)",
       provenance="derived",
       statement="with beta > max|x_i| the selector MLP outputs u_{pi_r(s)} exactly: max abs error < 1e-9 "
                 "over all (s, r), standalone and inside the transformer",
       quick={"n_subjects": 1000, "n_relations": 4, "block_dim": 28, "gate_bias": 10.0},
       full={"n_subjects": 100000, "n_relations": 16, "block_dim": 28, "gate_bias": 10.0})
def selector_exact(p, ctx):
    perms = make_bijections(p["n_subjects"], p["n_relations"], ctx.rng(1))
    model = build_block_model(perms, p["block_dim"], rng=ctx.rng(2), gate_bias=p["gate_bias"],
                              device=ctx.device, dtype=ctx.torch_dtype())
    subj, rel, target = single_hop_dataset(perms)
    standalone = float(np.max(np.abs(model.selector(model.subject_embeddings[subj], rel) - model.codes[target])))
    ans0 = model.transformer.embed.shape[1] - model.block_dim
    inside = model.final_hidden(subj, rel)[:, ans0:].cpu().numpy()
    in_transformer = float(np.max(np.abs(inside - model.codes[target])))
    tol = 1e-9 if ctx.dtype == "float64" else 1e-5  # float32: one rounding per block sum
    return Outcome(predicted=f"max error 0 (< {tol:g})",
                   measured={"standalone": standalone, "in_transformer": in_transformer},
                   passed=standalone < tol and in_transformer < tol,
                   details={"tolerance": tol, "max_abs_x": float(np.max(np.abs(model.subject_embeddings)))})


@claim("geometric.single_hop.block_accuracy",
       source=f"{SRC}, log dimension suffices (abstract); block construction §5.1",
       provenance="abstract",
       statement="the block construction at d = R*ceil(3 ln N) stores all N*R facts: accuracy 1 and "
                 "margin > 0 on every seed; the margin equals 1 - max code coherence (derived constant)",
       quick={"n_subjects": 1000, "n_relations": 4, "block_dim": 21, "seeds": 5},
       full={"n_subjects": 100000, "n_relations": 16, "block_dim": 35, "seeds": 5})
def block_accuracy(p, ctx):
    n, r, d0 = p["n_subjects"], p["n_relations"], p["block_dim"]
    accs, margins, predicted = [], [], []
    for seed in ctx.seeds(p["seeds"]):
        model = _block(n, r, d0, seed, ctx=ctx)
        res = model_decoding(model)
        accs.append(res.accuracy)
        margins.append(res.min_margin)
        predicted.append(min_pairwise_gap(model.codes))
    agree = float(np.max(np.abs(np.array(margins) - np.array(predicted))))
    return Outcome(predicted={"accuracy": 1.0, "margin_from_coherence": predicted},
                   measured={"accuracy": accs, "margin": margins},
                   passed=all(a == 1.0 for a in accs) and min(margins) > 0 and agree < 1e-6,
                   details={"block_dim": d0, "ceil_3lnN": math.ceil(3 * math.log(n)),
                            "margin_vs_coherence_max_diff": agree})


@claim("geometric.single_hop.margin_suff", source=f"{SRC}, bound B2 (Hoeffding + union)",
       provenance="derived",
       statement="at d0 = ceil(d0_suff(N, t=0.5, delta=0.01)) Rademacher codes give margin >= 0.5: "
                 "seeds with margin < 0.5 at most the 99th percentile of Binomial(K, 0.01)",
       quick={"n_subjects": 1000, "threshold": 0.5, "fail_prob": 0.01, "seeds": 20},
       full={"n_subjects": 10000, "threshold": 0.5, "fail_prob": 0.01, "seeds": 100})
def margin_suff(p, ctx):
    n, t, q, k = p["n_subjects"], p["threshold"], p["fail_prob"], p["seeds"]
    d0 = math.ceil(B.d0_sufficient(n, t, q))
    margins = []
    for seed in ctx.seeds(k):
        model = _block(n, 1, d0, seed, kind="rademacher", ctx=ctx)
        margins.append(model_decoding(model).min_margin)
    failures = int(sum(m < 1 - t for m in margins))
    allowed = binomial_tolerance(k, q)
    return Outcome(predicted={"block_dim": d0, "margin_at_least": 1 - t, "max_failures": allowed},
                   measured={"failures": failures, "min_margin": min(margins),
                             "median_margin": float(np.median(margins))},
                   passed=failures <= allowed,
                   details={"margins": margins, "d0_suff": B.d0_sufficient(n, t, q)})


@claim("geometric.single_hop.margin_nec", source=f"{SRC}, bound B3 (volumetric packing)",
       provenance="derived", demonstrates_failure=True,
       statement="below d0_nec(N, gamma) no code reaches margin gamma: d0 < d0_nec holds symbolically "
                 "and random spherical codes measure margin < gamma on every seed",
       quick={"n_subjects": 1000, "margin": 0.5, "block_dim": 6, "seeds": 5},
       full={"n_subjects": 1000, "margin": 0.5, "block_dim": 6, "seeds": 5})
def margin_nec(p, ctx):
    n, g, d0 = p["n_subjects"], p["margin"], p["block_dim"]
    expr = sp.log(B.N) / sp.log(1 + sp.sqrt(2 / B.gamma))
    exact = expr.subs({B.N: n, B.gamma: sp.Rational(str(g))})
    below = bool(sp.StrictLessThan(d0, exact))
    margins = [model_decoding(_block(n, 1, d0, seed, ctx=ctx)).min_margin for seed in ctx.seeds(p["seeds"])]
    return Outcome(predicted={"d0_nec": float(exact), "margin_below": g},
                   measured={"d0_below_bound": below, "max_margin": max(margins)},
                   passed=below and all(m < g for m in margins),
                   details={"margins": margins, "d0_nec_latex": sp.latex(expr)})


@claim("geometric.single_hop.pigeonhole_fail", source=f"{SRC}, bound B4 (pigeonhole)",
       provenance="derived", demonstrates_failure=True,
       statement="with Rademacher codes and d0 < log2 N two attributes share a code, so the "
                 "guarantee 'accuracy = 1' FAILS on every seed (ties are errors)",
       quick={"n_subjects": 1000, "n_relations": 4, "block_dim": 9, "seeds": 5},
       full={"n_subjects": 1000, "n_relations": 4, "block_dim": 9, "seeds": 5})
def pigeonhole_fail(p, ctx):
    n, r, d0 = p["n_subjects"], p["n_relations"], p["block_dim"]
    accs, distinct = [], []
    for seed in ctx.seeds(p["seeds"]):
        model = _block(n, r, d0, seed, kind="rademacher", ctx=ctx)
        accs.append(model_decoding(model).accuracy)
        distinct.append(int(len(np.unique(np.round(model.codes * math.sqrt(d0)).astype(int), axis=0))))
    guarantee_holds = [a == 1.0 for a in accs]
    return Outcome(predicted={"log2_N": B.pigeonhole_dim(n), "accuracy": "< 1 on every seed"},
                   measured={"accuracy": accs, "distinct_codes": distinct},
                   passed=d0 < B.pigeonhole_dim(n) and not any(guarantee_holds),
                   details={"inner_check_accuracy_eq_1": ["PASS" if g else "FAIL" for g in guarantee_holds],
                            "max_distinct_codes": 2**d0})


def code_threshold(n, margin, seed, d0_range, salt=0, full_curve=False):
    """Smallest d0 in d0_range whose spherical codes have gap 1 - max coherence >= margin, and the gaps
    seen (up to the threshold, or over the whole range with ``full_curve``)."""
    gaps, found = [], None
    for d0 in d0_range:
        gap = min_pairwise_gap(attribute_codes(n, d0, "spherical", _rng(seed, 2, n, d0, salt)))
        gaps.append(gap)
        if gap >= margin and found is None:
            found = d0
            if not full_curve:
                break
    return found, gaps


@claim("geometric.single_hop.log_scaling", source=f"{SRC}, log dimension suffices (abstract)",
       provenance="abstract",
       statement="the smallest d0 with margin >= 0.25 grows linearly in ln N: the fit of the per-N mean "
                 "d0* = a ln N + b has a > 0 and R^2 >= 0.9, and d0*/ln N varies by < 2x over the range "
                 "(derived criterion)",
       quick={"n_values": [128, 256, 512, 1024, 2048], "margin": 0.25, "seeds": 3, "d0_max": 64},
       full={"n_values": [128, 512, 2048, 8192, 32768, 100000], "margin": 0.25, "seeds": 3, "d0_max": 120})
def log_scaling(p, ctx):
    rows, curves = [], {}
    d0_range = range(2, p["d0_max"] + 1)
    for n in p["n_values"]:
        found = []
        for seed in ctx.seeds(p["seeds"]):
            d0, gaps = code_threshold(n, p["margin"], seed, d0_range, full_curve=seed == ctx.seed)
            if d0 is None:
                raise ValueError(f"no d0 <= {p['d0_max']} reached margin {p['margin']} at N={n}")
            found.append(d0)
            if seed == ctx.seed:
                curves[str(n)] = gaps
        rows.append({"N": n, "d0_star": found, "mean": float(np.mean(found)), "sd": float(np.std(found))})
    # the threshold is measured on the codes; through the exactness lemma it is the model's margin.
    # Confirm on the built weights at the smallest N: model margin at d0* and d0*-1 matches.
    n0, d_star = p["n_values"][0], rows[0]["d0_star"][0]
    at = model_decoding(build_block_model(make_bijections(n0, 2, ctx.rng(9)), codes=attribute_codes(
        n0, d_star, "spherical", _rng(ctx.seed, 2, n0, d_star, 0)))).min_margin
    # fit on the per-N means (the quantity the figure shows, mean +- sd over seeds); the fit on the
    # individual seeds, noisier by the code-draw spread, is kept in details for the reader.
    fit = linear_fit([math.log(r["N"]) for r in rows], [r["mean"] for r in rows])
    fit_points = linear_fit([math.log(r["N"]) for r in rows for _ in r["d0_star"]],
                            [d for r in rows for d in r["d0_star"]])
    ratios = [r["mean"] / math.log(r["N"]) for r in rows]
    spread = max(ratios) / min(ratios)
    return Outcome(predicted={"slope": "> 0", "r2": ">= 0.9", "ratio_spread": "< 2"},
                   measured={"slope": fit["slope"], "intercept": fit["intercept"], "r2": fit["r2"],
                             "ratio_spread": spread},
                   passed=fit["slope"] > 0 and fit["r2"] >= 0.9 and spread < 2 and at >= p["margin"],
                   details={"rows": rows, "ratios": ratios, "gap_curves_seed0": curves,
                            "fit_on_individual_seeds": fit_points,
                            "model_margin_at_threshold": at,
                            "d0_suff_t": [B.d0_sufficient(r["N"], 1 - p["margin"], 0.01) for r in rows],
                            "d0_nec": [B.d0_necessary(r["N"], p["margin"]) for r in rows]})


@claim("geometric.single_hop.dim_indep_R", source=f"{SRC}, block construction §5.1", provenance="derived",
       statement="the per-block threshold d0* (margin >= 0.25 over all N*R facts of the built model, "
                 "mean over seeds) does not depend on R: values for R in {2,4,8} lie within 2 of each other",
       quick={"n_subjects": 512, "relations": [2, 4, 8], "margin": 0.25, "seeds": 3},
       full={"n_subjects": 512, "relations": [2, 4, 8, 16, 32], "margin": 0.25, "seeds": 5})
def dim_indep_R(p, ctx):
    """Common random numbers: for each seed the same code draw serves every R (the bijections differ),
    so the comparison isolates R; independent code draws would add the code-draw spread (sd 1-2.5 at
    N=512, see log_scaling) and measure that noise instead. What can depend on R is the built model:
    crosstalk between blocks through leaky gates would move its threshold."""
    n, m = p["n_subjects"], p["margin"]
    means, checks = {}, []
    for r in p["relations"]:
        found = []
        for seed in ctx.seeds(p["seeds"]):
            d0, _ = code_threshold(n, m, seed, range(2, 121))
            perms = make_bijections(n, r, _rng(seed, 1, n, r))
            # the threshold on the built weights: margin over all N*R facts reaches m at d0, not at d0-1
            hi = model_decoding(build_block_model(perms, codes=attribute_codes(n, d0, "spherical",
                                                                               _rng(seed, 2, n, d0, 0))))
            lo = model_decoding(build_block_model(perms, codes=attribute_codes(n, d0 - 1, "spherical",
                                                                               _rng(seed, 2, n, d0 - 1, 0))))
            checks.append(hi.min_margin >= m and lo.min_margin < m)
            found.append(d0)
        means[str(r)] = float(np.mean(found))
    spread = max(means.values()) - min(means.values())
    return Outcome(predicted={"spread": "<= 2"}, measured={"mean_d0_star": means, "spread": spread},
                   passed=spread <= 2 and all(checks), details={"model_confirms_threshold": checks})


@claim("geometric.single_hop.rotation_variant", source=f"{SRC}, shared-space variant §5.2", provenance="derived",
       statement="the rotation variant reaches accuracy >= 0.98 at d = 100 (about 4 R ln N) and falls "
                 "below 0.5 at d = 8, where crosstalk variance (R-1)/d is large",
       quick={"n_subjects": 512, "n_relations": 4, "dims": [8, 100]},
       full={"n_subjects": 512, "n_relations": 4, "dims": [8, 16, 32, 64, 100, 150, 200]})
def rotation_variant(p, ctx):
    n, r = p["n_subjects"], p["n_relations"]
    perms = make_bijections(n, r, ctx.rng(1))
    subj, rel, target = single_hop_dataset(perms)
    accs = {}
    for d in p["dims"]:
        model = build_rotation_model(perms, d, ctx.rng(3, d))
        accs[str(d)] = decode(model.selector_output(subj, rel), model.codes, target).accuracy
    lo, hi = str(min(p["dims"])), str(max(p["dims"]))
    return Outcome(predicted={f"acc(d={hi})": ">= 0.98", f"acc(d={lo})": "< 0.5"}, measured=accs,
                   passed=accs[hi] >= 0.98 and accs[lo] < 0.5,
                   details={"4_R_lnN": 4 * r * math.log(n), "crosstalk_var": {k: (r - 1) / int(k) for k in accs}})


@claim("geometric.single_hop.info_bound", source=f"{SRC}, matching lower bound (abstract); B1",
       provenance="derived",
       statement="B1 = R log2(N!) equals the spec's reference values to 0.1 bit and the exact sympy "
                 "evaluation to 1e-6 relative",
       quick={"cases": [[256, 4, 6736.0], [1000, 4, 34117.6], [10000, 8, 947665.1]]},
       full={"cases": [[256, 4, 6736.0], [1000, 4, 34117.6], [10000, 8, 947665.1]]})
def info_bound(p, ctx):
    measured, exact, ok = [], [], True
    for n, r, ref in p["cases"]:
        value = B.info_bits(n, r)
        sym = float((r * sp.log(sp.factorial(n), 2)).evalf(30))
        measured.append(value)
        exact.append(sym)
        ok &= abs(value - ref) <= 0.1 and abs(value - sym) <= 1e-6 * sym
    return Outcome(predicted=[c[2] for c in p["cases"]], measured=measured, passed=ok,
                   details={"sympy_exact": exact,
                            "bits_per_fact": [B.bits_per_fact(n, r) for n, r, _ in p["cases"]]})


@claim("geometric.single_hop.param_count", source=f"{SRC}, selector MLP §5.1", provenance="derived",
       statement="the selector has 2d^2 + 2d + 2d*d0 parameters (31584 at d=112, d0=28), counted "
                 "from the arrays, and bit-identical weights for two different bijection tables",
       quick={"n_subjects": 1000, "n_relations": 4, "block_dim": 28},
       full={"n_subjects": 1000, "n_relations": 4, "block_dim": 28})
def param_count(p, ctx):
    n, r, d0 = p["n_subjects"], p["n_relations"], p["block_dim"]
    d = r * d0
    formula = 2 * d * d + 2 * d + 2 * d * d0
    a = build_block_model(make_bijections(n, r, ctx.rng(1)), d0, rng=ctx.rng(2))
    b = build_block_model(make_bijections(n, r, ctx.rng(3)), d0, rng=ctx.rng(2))
    same = all(np.array_equal(getattr(a.selector, f), getattr(b.selector, f))
               for f in ("w_in", "gate_bias", "w_out"))
    return Outcome(predicted=formula, measured={"counted": [a.selector.param_count(), b.selector.param_count()],
                                                "identical_weights": same},
                   passed=a.selector.param_count() == formula == b.selector.param_count() and same,
                   details={"counts": a.param_counts()})


@claim("geometric.single_hop.construct_transfer",
       source=f"{SRC}, zero-shot transfer of the MLP (abstract)", provenance="abstract",
       statement="swapping in new bijections changes only the subject-embedding rows: every other "
                 "weight is bit-identical and the same MLP gives accuracy 1 on the new facts",
       quick={"n_subjects": 1000, "n_relations": 4, "block_dim": 21},
       full={"n_subjects": 10000, "n_relations": 8, "block_dim": 28})
def construct_transfer(p, ctx):
    n, r, d0 = p["n_subjects"], p["n_relations"], p["block_dim"]
    model = build_block_model(make_bijections(n, r, ctx.rng(1)), d0, rng=ctx.rng(2), device=ctx.device,
                              dtype=ctx.torch_dtype())
    new = swap_bijections(model, make_bijections(n, r, ctx.rng(4)))
    old_t, new_t = model.transformer.tensors(), new.transformer.tensors()
    changed = [k for k in old_t if not (old_t[k].shape == new_t[k].shape and bool((old_t[k] == new_t[k]).all()))]
    rows_changed = (old_t["embed"] != new_t["embed"]).any(dim=1).nonzero().flatten().tolist()
    acc = model_decoding(new).accuracy
    only_subject_rows = changed == ["embed"] and max(rows_changed, default=-1) < n
    return Outcome(predicted={"accuracy": 1.0, "changed": "subject embedding rows only"},
                   measured={"accuracy": acc, "changed_tensors": changed,
                             "changed_rows_max": max(rows_changed, default=-1)},
                   passed=acc == 1.0 and only_subject_rows,
                   details={"n_changed_rows": len(rows_changed)})
