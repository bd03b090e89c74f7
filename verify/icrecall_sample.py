"""Sample complexity of IC-recall fine-tuning (spec icrecall.md §6-§7, claim sample_complexity).

N*(eps) is the smallest N_train on an ascending grid whose held-out accuracy is >= 1 - eps
[derived proxy for the abstract's polylog(#triplets) statement]. Worlds grow in S at fixed R, so
N_f = S R spans a factor 10; d = ceil(32 ln N_f) (the spec's heuristic memory dimension) grows
with it, as in the spec's full scale (d = 128 -> 256). Model: P-full with slot embeddings, as in
:mod:`verify.icrecall_finetune`. The fit of N* against N_f is :func:`theory.icrecall.fit_sample_complexity`.
"""
from __future__ import annotations

import math

from theory.icrecall import SOURCE, fit_sample_complexity
from verify.claims import Outcome, claim
from verify.icrecall_finetune import PFULL, train_run

QUICK = dict(PFULL, subjects=[20, 63, 200], grid=[1, 4, 16, 64, 256], eps=0.1)
FULL = dict(PFULL, n_ans_per_rel=20, subjects=[200, 2000, 20000],
            grid=[2 ** k for k in range(13)], eps=0.1)


def sample_need(p, ctx, n_subj):
    """(N*, curve): N* is the first grid point with accuracy >= 1 - eps (None if none)."""
    q = dict(p, n_subj=n_subj, dim=math.ceil(32 * math.log(n_subj * p["n_rel"])))
    for k in ("subjects", "grid", "eps"):
        q.pop(k)
    curve = []
    for n_train in p["grid"]:
        run = train_run(q, ctx, n_train=n_train)
        curve.append({"n_train": n_train, "acc": run["acc"], "query_share": run["metrics"]["query_share"]})
        if run["acc"] >= 1 - p["eps"]:
            return n_train, curve, q["dim"]
    return None, curve, q["dim"]


@claim("icrecall.sample_complexity.polylog", source=SOURCE + ", polylog(#triplets) samples [abstract]",
       provenance="derived",
       statement="the fine-tuning sample need N*(eps=0.1) of P-full with slot embeddings grows at most "
                 "polylogarithmically in N_f over a factor 10: N*(largest N_f) <= 2 N*(smallest), "
                 "N*(smallest) above the grid floor, power-law exponent < 0.5 and the polylog fit "
                 "at least as good as the power law", quick=QUICK, full=FULL)
def _polylog(p, ctx):
    rows = []
    for S in p["subjects"]:
        n_star, curve, dim = sample_need(p, ctx, S)
        rows.append({"n_subj": S, "n_facts": S * p["n_rel"], "dim": dim, "n_star": n_star, "curve": curve})
    stars = [r["n_star"] for r in rows]
    details = {"rows": rows, "grid": list(p["grid"]), "eps": p["eps"]}
    if any(s is None for s in stars):
        return Outcome(predicted="N* on the grid for every N_f", measured={"n_star": stars},
                       passed=False, details=details)
    fit = fit_sample_complexity([r["n_facts"] for r in rows], stars)
    details["fit"] = fit
    ok = (stars[-1] <= 2 * stars[0] and stars[0] > p["grid"][0] and fit["power_exponent"] < 0.5
          and fit["polylog_better"])
    return Outcome(predicted="N*(max)/N*(min) <= 2, N*(min) > floor, k < 0.5, polylog fit better",
                   measured={"n_star": stars, "power_exponent": fit["power_exponent"],
                             "polylog_exponent": fit["polylog_exponent"],
                             "sse_power": fit["sse_power"], "sse_polylog": fit["sse_polylog"]},
                   passed=ok, details=details)
