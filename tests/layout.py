"""Helpers of the layout tests: the repository root and the modules that carry an area prefix."""
from pathlib import Path

ROOT = Path(__file__).resolve().parent
while not (ROOT / "pyproject.toml").exists():
    ROOT = ROOT.parent

STAGES = ("theory", "constructions", "verify", "paper_figs")
AREAS = ("geometric", "fact_mlp", "icrecall", "hopfield", "chapters", "retrieval", "lm", "atlas")


def prefixed_modules(root: Path = ROOT) -> list[str]:
    """Modules ``<area>_<concept>.py`` anywhere in the four stages (``<area>.py`` is allowed)."""
    found = []
    for stage in STAGES:
        if not (root / stage).is_dir():
            continue
        for f in sorted((root / stage).rglob("*.py")):
            if any(f.stem.startswith(area + "_") for area in AREAS):
                found.append(f.relative_to(root).as_posix())
    return found
