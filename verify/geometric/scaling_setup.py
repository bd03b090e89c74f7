"""What the scaling claim modules share (verify.geometric.scaling and .gd_threshold): the
competing growth laws and their controls. Registers no claim."""

from __future__ import annotations

import math

from verify.claims import Control

LAWS = {
    "quarter": lambda n: n**0.25,
    "cuberoot": lambda n: n ** (1 / 3),
    "lnsq": lambda n: math.log(n) ** 2,
    "constant": lambda n: 1.0,
}


LAW_CONTROLS = [
    Control(
        f"law_{name}",
        {"control": f"law_{name}"},
        f"synthetic thresholds growing like {label} from each seed's smallest-N value: "
        "their growth factor is that law's, which the criterion must reject",
    )
    for name, label in (
        ("quarter", "N^(1/4)"),
        ("cuberoot", "N^(1/3)"),
        ("lnsq", "(ln N)^2"),
        ("constant", "a constant"),
    )
]
