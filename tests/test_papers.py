"""One spelling per paper: every source that names a paper's arXiv id spells its
title as theory.papers does."""

import pytest

from theory.papers import PAPERS, paper


def _sources():
    from theory.registry import load_all as bounds
    from verify.claims import load_all as claims

    return [(f"bound {b.name}", b.source) for b in bounds().values()] + [
        (f"claim {c.id}", c.source) for c in claims().values()
    ]


def test_every_source_spells_its_paper_one_way():
    wrong = [
        (who, src)
        for who, src in _sources()
        for p in PAPERS.values()
        if f"({p.arxiv})" in src and p.cite not in src
    ]
    assert wrong == []


def test_unknown_area():
    assert paper("geometric") == "Geometric Factual Recall (2605.12426)"
    with pytest.raises(ValueError, match="unknown area"):
        paper("nope")
