"""recall-bounds verify: claims (predicted vs measured), training loops, sweeps and the CLI.

The stable names (``__all__``), loaded on first use so that ``import verify`` imports neither
torch nor the claims:

- the claim runner: ``run_claim`` (one claim by id -> its record), ``run_claims`` (the claims of
  some ids or globs, here or on a Dask cluster) and ``list_claims``;
- measurement of a fact-storing model (a block model, a fact MLP, or any object with
  ``decode``/``accuracy``/``margins``, constructions/measure.py): ``accuracy``, ``margins``,
  ``smallest_storing_size``; ``smallest_size``, the one search for the smallest size at which a
  predicate holds (bisection or scan, constructions/search.py) that every search of the claims
  uses; and ``decodability``, the exact decodability rho of a value table;
- criteria as objects (verify/criteria.py), each giving a verdict (pass, fail or inconclusive)
  and what the verdict rules out: ``Threshold``, ``IntervalTest``, ``Bracket``, ``EverySeed``,
  ``KOfN`` (with ``binomial_k``), ``Agreement``, ``all_of``, ``growth_exponent`` and
  ``growth_law_judgement``, returning a ``Judgement``;
- ``PROJECT_ROOT`` (the folder that holds this package), ``shadowing_distributions`` and
  ``check_not_shadowed`` (another distribution's ``verify`` package on the path).

``verify.testing`` (hypothesis strategies and assertions for a user's own tests) is a separate
module that needs hypothesis; it is not imported here. See README.md, "Use it from Python".

>>> import verify
>>> verify.run_claim("chapters.router.mixing_weights")["status"]
'pass'
"""

from __future__ import annotations

import importlib
import os
from typing import Any

#: The folder above this package (the repository root in a source checkout).
PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: name -> the module that defines it (imported on first access)
_EXPORTS = {
    "run_claim": "verify.api",
    "run_claims": "verify.api",
    "list_claims": "verify.api",
    "accuracy": "constructions.measure",
    "margins": "constructions.measure",
    "smallest_storing_size": "constructions.measure",
    "smallest_size": "constructions.search",
    "decodability": "theory.fact_mlp.rho",
    "Judgement": "verify.criteria",
    "Threshold": "verify.criteria",
    "IntervalTest": "verify.criteria",
    "Bracket": "verify.criteria",
    "EverySeed": "verify.criteria",
    "KOfN": "verify.criteria",
    "Agreement": "verify.criteria",
    "binomial_k": "verify.criteria",
    "all_of": "verify.criteria",
    "growth_exponent": "verify.criteria",
    "growth_law_judgement": "verify.criteria",
}

__all__ = [
    "Agreement",
    "Bracket",
    "EverySeed",
    "KOfN",
    "IntervalTest",
    "Judgement",
    "PROJECT_ROOT",
    "Threshold",
    "all_of",
    "binomial_k",
    "growth_exponent",
    "growth_law_judgement",
    "accuracy",
    "check_not_shadowed",
    "decodability",
    "list_claims",
    "margins",
    "run_claim",
    "run_claims",
    "shadowing_distributions",
    "smallest_size",
    "smallest_storing_size",
]


def __getattr__(name: str) -> Any:
    """The public names defined elsewhere, imported on first access (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def shadowing_distributions() -> list[str]:
    """Other installed distributions that ship a top-level ``verify`` package (a distribution
    named ``verify`` exists on the package index): installed beside recall-bounds, whichever
    comes first on sys.path wins, silently. ``name version (location)`` of each."""
    from importlib import metadata

    found = []
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if name == "recall-bounds":
            continue
        top = (dist.read_text("top_level.txt") or "").split()
        if name == "verify" or "verify" in top:
            where = getattr(dist, "_path", None)
            found.append(f"{dist.metadata['Name']} {dist.version} ({where})")
    return found


def check_not_shadowed() -> None:
    """Fail loudly (exit status 1, the reason on stderr) when another distribution's ``verify`` is installed."""
    others = shadowing_distributions()
    if others:
        raise SystemExit(
            "recall-bounds: another distribution ships a top-level 'verify' package: "
            + "; ".join(others)
            + f". The toolkit's verify lives in {PROJECT_ROOT}; with both "
            "installed, whichever comes first on sys.path wins. Uninstall the other one "
            "(pip uninstall verify) or use a separate environment."
        )
