"""What verify.fact_mlp.compare shares with .minimal: the source and the ratio grids; and the
scales of compare's capacity grid. Registers no claim."""

from __future__ import annotations

from theory.papers import paper

SRC = paper("fact_mlp")
#: ratio between consecutive sizes of every search grid
RATIO = 2**0.25
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
