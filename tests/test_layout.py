"""Layout of the four stages (docs/README.md, "Layout"): no module carries an area prefix; an area
with several modules in a stage is a subpackage (``verify/fact_mlp/``)."""

from tests.layout import prefixed_modules


def test_no_area_prefix_in_stages():
    assert prefixed_modules() == []


def test_prefixed_modules_finds_a_prefix(tmp_path):
    (tmp_path / "verify").mkdir()
    for name in ("fact_mlp_capacity.py", "claims.py", "hopfield.py"):
        (tmp_path / "verify" / name).write_text("")
    (tmp_path / "verify" / "geometric").mkdir()
    (tmp_path / "verify" / "geometric" / "gd.py").write_text("")
    (tmp_path / "verify" / "geometric" / "geometric_gd.py").write_text("")
    (tmp_path / "verify" / "geometric" / "hopfield_lm.py").write_text("")
    assert prefixed_modules(tmp_path) == ["verify/fact_mlp_capacity.py", "verify/geometric/geometric_gd.py"]
