"""What verify.retrieval.early_gd shares with .gd_capacity: the test-set size. Registers no claim."""

from __future__ import annotations

N_TEST = 4096
