"""recall-bounds verify: claims (predicted vs measured), training loops, sweeps and the CLI."""

from __future__ import annotations

import os

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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
