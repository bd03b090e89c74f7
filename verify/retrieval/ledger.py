"""Ledger of the retrieval claims whose verdict flips with the base seed (criterion kept, numbers
here: verify/ledger.py). Quick scale; "base seed S" is ``verify run --seed S``. Registers no claim.
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
