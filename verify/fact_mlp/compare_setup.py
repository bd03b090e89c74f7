"""What verify.fact_mlp.compare shares with .minimal: the source and the ratio grids. Registers no
claim."""

from __future__ import annotations

from theory.papers import paper

SRC = paper("fact_mlp")
#: ratio between consecutive sizes of every search grid
RATIO = 2**0.25
OURS_GRID = tuple(round(8 * RATIO**k) for k in range(17))  # m_c 8 .. 128
NTK_GRID = tuple(round(256 * RATIO**k) for k in range(25))  # width 256 .. 16384
