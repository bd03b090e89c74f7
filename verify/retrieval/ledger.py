"""Ledger of the retrieval claims whose verdict flips with the base seed or fails at full scale
(criterion kept, numbers here: verify/ledger.py). Each entry names its scale; "base seed S" is
``verify run --seed S``. Registers no claim.
"""

from __future__ import annotations

from verify.ledger import LedgerEntry, record

record(
    LedgerEntry(
        claim_id="retrieval.gd.capacity",
        measured="quick scale, N_c^GD(0.5) (mean test accuracy of 3 draws) at base (V, d) = (64, 64) / "
        "V = 128 / d = 32, ratios against > 1.3: base seed 0 861 / 2435 / 2435 (2.83, 2.83), 1 861 / 3444 "
        "/ 3444 (4.0, 4.0), 2 1448 / 3444 / 3444 (2.38, 2.38), 3 1218 / 2896 / 2048 (2.38, 1.68), "
        "4 609 / 3444 / 2435 (5.66, 4.00), 11 1024 / 3444 / 2435 (3.36, 2.38), 13 2435 / 2435 / 4096 "
        "(1.0: fail, 1.68)",
        tried="nothing after the judged seeds (``verify stability``); the 1.3 ratio and the bisection kept",
        reason="the base model's accuracy curve is flat around 0.5 (0.47-0.60 from N = 724 to 2048 at "
        "seeds 0-4), so its crossing point N_c^GD(0.5) moves by 4x between draws (609 to 2435); at seed 13 "
        "the base crossing lands on the V = 128 model's, and the ratio is 1.0. The ordering holds at six of "
        "seven base seeds; the measurement's noise, not the direction, decides the seventh",
        flips_with_seed=True,
        scales=("quick",),
        seed_verdicts={0: "pass", 1: "pass", 2: "pass", 3: "pass", 4: "pass", 11: "pass", 13: "fail"},
    )
)


record(
    LedgerEntry(
        claim_id="retrieval.capacity.nc_increases_l",
        measured="full scale (V = 256, d = 32, L = 4 ... 256, 3 draws), seed 0: N_c = 5233, 6153, 9475, "
        "16253, 31060, 69783, 174657 (F1: 4196 ... 268534); per-seed log-log slopes 0.854, 0.804, 0.876, "
        "95% Student-t interval [0.752, 0.936]: excludes F1's 1 (and no growth). Controls law_flat and "
        "law_steep fail as required. Run of 2026-12-06 at revision b18dcc4",
        tried="one full-scale run at seed 0 under the criterion of the quick scale",
        reason="as at quick scale (entry beside the claim): N_c grows like A + B L, so the slope over "
        "L = 4..32 is about 0.5 and over L = 4..256 about 0.85; the local slope between L = 128 and 256 "
        "is 1.32 (seed 0). Whether it settles at 1 for larger L was not tried; the criterion is kept",
        scales=("full",),
    )
)


record(
    LedgerEntry(
        claim_id="retrieval.capacity.nc_increases_v",
        measured="full scale (d = 32, L = 8, V = 128 ... 8192, 3 draws per N_c), seed 0: N_c = 2738, "
        "6153, 15399, 38543, 96466, 254829, 673171 against F1's 3076 ... 1185385 (ratio N_c / F1 "
        "falls 0.89, 0.73, 0.68, 0.63, 0.59, 0.58, 0.57); per-seed log-log slopes 1.329, 1.282, "
        "1.312, 95% Student-t interval [1.248, 1.367]: excludes F1's 1.429 and V ln V's 1.148 (and no "
        "growth). Local slopes between neighbouring V: 1.17, 1.32, 1.32, 1.32, 1.40, 1.40 (F1's "
        "1.42-1.45, V ln V's 1.12-1.19). Controls law_sqrt and law_square fail as required. Run of "
        "2026-12-06 at revision 80dd953 (537 s)",
        tried="one full-scale run at seed 0 under the criterion of the quick scale",
        reason="as at quick scale (entry beside the claim): the measured slope sits between V ln V's "
        "and F1's; the local slope rises with V (1.17 at V = 128-256, 1.40 at V = 2048-8192) and "
        "N_c / F1 levels off near 0.57, so F1's slope may hold asymptotically while the small-V points "
        "pull the fitted slope below it. Larger V was not tried; the criterion is kept",
        scales=("full",),
    )
)


record(
    LedgerEntry(
        claim_id="retrieval.scaling.fit",
        measured="full grid V in {128 ... 2048}, d in {32, 64, 128, 256}, L in {4 ... 64} (100 points, "
        "each N_c over 3 draws), seed 0: a = 1.029 with 98.3% interval [0.967, 1.091] against F1's "
        "1.291; b = 0.557 [0.495, 0.619] against F1's 1; c' = -0.842 [-0.921, -0.763] against F1's "
        "-1.695; R^2 0.967. Every interval excludes F1's exponent and no dependence; those of a and c' "
        "also exclude the exponents of 4 V L ln V / d (1.163, -1.000). b + c' = -0.285 [-0.367, "
        "-0.203]. Control shuffled fails as required. Run of 2026-12-06 at revision 80dd953 (170 s)",
        tried="one full-scale run at seed 0 under the criterion of the quick scale",
        reason="as at quick scale (entry beside the claim): with multinomial label counts N_c behaves "
        "like A(V, d) + B(V, d) L, so b stays near 0.5; over d up to 256 N_c approaches the orthogonal "
        "threshold, which does not depend on d (retrieval.capacity.nc_decreases_d), so c' is shallower "
        "than at quick scale (-0.84 against -1.16) and a falls with it. The criterion is kept",
        scales=("full",),
    )
)
