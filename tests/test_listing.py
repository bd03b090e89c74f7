"""``python -m verify list --where``: every printed location exists and holds the claim's check
function; every bound a claim names is registered by theory (with its label where it has one)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from theory.registry import load_all as load_bounds
from verify.claims import Claim, load_all
from verify.listing import ROOT, bound_rows, location, where_text


def test_every_location_holds_the_check_function():
    claims = load_all()
    for c in claims.values():
        loc = location(c.check)
        path = ROOT / loc.path
        assert path.is_file(), f"{c.id}: {loc} does not exist"
        line = path.read_text().splitlines()[loc.line - 1].strip()
        assert line.startswith((f"def {c.check.__name__}(", f"async def {c.check.__name__}(")), (
            f"{c.id}: line {loc} reads {line!r}, not the def of {c.check.__name__}"
        )


def test_every_named_bound_exists_and_labels_are_printed():
    bounds = load_bounds()
    named = [b for c in load_all().values() for b in c.bounds]
    assert named, "no claim names a bound"
    missing = sorted({b for b in named if b not in bounds})
    assert not missing, f"claims name unregistered bounds: {missing}"
    text = where_text(list(load_all().values()))
    assert "geometric.d0_suff (B2)" in text and "hopfield.capacity_shift (D3)" in text


def test_an_unknown_bound_id_is_refused():
    fake = Claim(
        id="geometric.fake.where",
        source="s",
        provenance="derived",
        statement="s",
        quick={},
        full={},
        check=lambda p, ctx: None,
        kind="identity",
        independence="x",
        bounds=("geometric.no_such_bound",),
    )
    with pytest.raises(ValueError, match="no_such_bound"):
        bound_rows(fake)


def test_list_where_cli_prints_existing_locations(monkeypatch, capsys):
    from verify.cli import main

    monkeypatch.chdir(ROOT)
    assert main(["list", "--where", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert len(rows) == len(load_all())
    for r in rows:
        path, line = r["location"].rsplit(":", 1)
        assert not Path(path).is_absolute() and (ROOT / path).is_file()
        assert int(line) >= 1


def test_paper_figs_where_adds_the_figures(monkeypatch, capsys):
    from paper_figs.__main__ import main

    monkeypatch.chdir(ROOT)
    assert main(["where"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("geometric.single_hop.margin_suff "))
    assert "verify/" in line and "geometric.d0_suff (B2)" in line and "geometric.fig_margin" in line


def test_verify_docs_points_to_the_new_command():
    done = subprocess.run([sys.executable, "-m", "verify", "docs"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2 and "python -m paper_figs docs" in done.stderr


def test_bound_labels_agree_with_the_labels_their_text_names():
    import re

    for name, b in load_bounds().items():
        named = set(re.findall(r"\b([BDFR][1-9])\b", b.statement + " " + b.source))
        if b.label is not None:
            assert re.fullmatch(r"[A-Z][0-9]{1,2}", b.label), (name, b.label)
            assert b.label in named, f"{name}: label {b.label} but its text names {sorted(named)}"
        else:
            assert not named, f"{name} names {sorted(named)} but has no label"


def test_list_takes_a_filter(capsys):
    """`python -m verify list PATTERN`: an area, an id prefix or a glob; no match is not a usage error."""
    from verify.cli import main

    assert main(["list", "hopfield.capacity"]) == 0
    heads = [line.split()[0] for line in capsys.readouterr().out.splitlines() if not line.startswith(" ")]
    assert heads and all(h.startswith("hopfield.capacity.") for h in heads)
    assert main(["list", "zzz*"]) == 0
    out, err = capsys.readouterr()
    assert out == "" and "no claim matches 'zzz*'" in err
