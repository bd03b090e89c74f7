"""recall-bounds theory: symbolic (sympy) and numeric bounds, one module per area.

This package never imports torch (``tests/test_light_import.py`` proves it in a subprocess),
so bounds and plots stay usable without a deep-learning stack.

Every bound is registered in :mod:`theory.registry` with its statement and provenance:
``abstract``/``paper`` (the paper says it), ``reference`` (standard literature) or
``derived`` (this project's own formalisation, with a proof sketch in the docstring).
"""

from theory.registry import BOUNDS, Bound, get_bound, load_all

__all__ = ["BOUNDS", "Bound", "get_bound", "load_all"]
