"""Test package. Registries load here, before any test module imports an area module, so claims,
bounds and figures register in discovery order (the order of ``python -m verify list``, the
README tables and tests/registry_ids.txt), whatever order pytest collects the test files in."""

from paper_figs.registry import load_all as _load_figures
from theory.registry import load_all as _load_bounds
from verify.claims import load_all as _load_claims

_load_claims()
_load_bounds()
_load_figures()
