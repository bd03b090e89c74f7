"""Every claim, bound and figure id is unchanged, in the same order: a move of files or a refactor
keeps ids (tests/registry_ids.txt is written by ``python tools/registry_snapshot.py --write``)."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent
while not (ROOT / "pyproject.toml").exists():
    ROOT = ROOT.parent


def _snapshot_module():
    spec = importlib.util.spec_from_file_location(
        "registry_snapshot", ROOT / "tools" / "registry_snapshot.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_registry_ids_unchanged():
    stored = (ROOT / "tests" / "registry_ids.txt").read_text().splitlines()
    now = _snapshot_module().snapshot()
    lost = [x for x in stored if x not in now]
    new = [x for x in now if x not in stored]
    assert not lost and not new, (
        f"ids lost {lost[:10]}, new {new[:10]}; if on purpose: python tools/registry_snapshot.py --write"
    )
    assert now == stored, "the same ids in another order (registration order changed)"
