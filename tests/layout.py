"""Helpers of the layout tests: the repository root and the modules that carry an area prefix."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent
while not (ROOT / "pyproject.toml").exists():
    ROOT = ROOT.parent

STAGES = ("theory", "constructions", "verify", "paper_figs")
AREAS = ("geometric", "fact_mlp", "icrecall", "hopfield", "chapters", "retrieval", "lm", "atlas")


def prefixed_modules(root: Path = ROOT) -> list[str]:
    """Modules ``<area>_<concept>.py`` directly in a stage, and modules that repeat their own
    area's prefix inside an area package (``verify/geometric/geometric_gd.py``). ``<area>.py``
    is allowed (an area with one module in a stage), and so is a concept named after another
    area inside a package (``verify/hopfield/lm_probes.py``)."""
    found = []
    for stage in STAGES:
        if not (root / stage).is_dir():
            continue
        for f in sorted((root / stage).rglob("*.py")):
            rel = f.relative_to(root / stage).parts
            owner = AREAS if len(rel) == 1 else (rel[0],) if rel[0] in AREAS else ()
            if any(f.stem.startswith(area + "_") for area in owner):
                found.append(f.relative_to(root).as_posix())
    return found
