"""Figure titles state the verdict with the hypothesis, never the hypothesis alone: the verdict
(status, scale, seed) comes from the stored record the figure is drawn from. Also: the figures'
command line rejects a seed that is not a non-negative integer, as verify's does."""

from __future__ import annotations

import re

import pytest

from paper_figs.__main__ import main as figs_main

#: (figure, claim whose record carries the verdict, words of the title that state its hypothesis)
HYPOTHESES = (
    ("geometric.fig_threshold", "geometric.single_hop.log_scaling", "threshold grows like ln N"),
    ("geometric.fig_multihop", "geometric.multihop.nocot_single_fail", "2 hops in one pass"),
    ("fact_mlp.fig_geometry", "fact_mlp.decodability.rho_anisotropy", "Anisotropy lowers rho"),
    ("fact_mlp.fig_geometry", "fact_mlp.capacity.geometry_penalty", "m_c*"),
    ("fact_mlp.fig_tradeoff", "fact_mlp.usability.noise_usability", "whitened readout loses more"),
    ("fact_mlp.fig_tradeoff", "fact_mlp.transformer.tradeoff", "Spearman"),
    ("retrieval.fig_phase", "retrieval.capacity.plateau", "Plateau below 1"),
    ("retrieval.fig_attention", "retrieval.attention.focus", "After step 2"),
    ("retrieval.fig_attention", "retrieval.attention.focus_n", "Score gap"),
    ("hopfield.fig_error_vs_separation", "hopfield.error.exponential_in_beta", "exponential in beta"),
    ("hopfield.fig_tightness", "hopfield.capacity.r4_tightness", "R4 is loose"),
    ("hopfield.fig_tightness", "hopfield.sparsity.pr", "D5 needs hard gates"),
    ("hopfield.fig_tightness", "hopfield.separation.violated_fails", "R1 (d="),
    ("chapters.fig_flop_breakdown", "chapters.flops.model_totals", "MoC/iso-FLOP"),
)

SENTINEL = "status-from-the-record"


@pytest.fixture(scope="module")
def records():
    from paper_figs.api import stored_records

    try:
        return stored_records()
    except LookupError as exc:
        pytest.skip(str(exc))


def _titles(figure_id: str, records: dict) -> list[str]:
    from paper_figs.api import draw_figure
    from paper_figs.registry import pyplot

    fig = draw_figure(figure_id, records=records)
    try:
        titles = [ax.get_title(loc) for ax in fig.axes for loc in ("left", "center", "right")]
        if fig._suptitle is not None:
            titles.append(fig._suptitle.get_text())
        return [t for t in titles if t]
    finally:
        pyplot().close(fig)


def _states_verdict(titles: list[str], hypothesis: str, verdict: str) -> bool:
    """Some title holds ``hypothesis`` followed (before any other verdict) by ' — <verdict>'."""
    pattern = re.escape(hypothesis) + r"[^—]*— " + re.escape(verdict)
    return any(re.search(pattern, t, re.S) for t in titles)


def test_verdict_title_words():
    from paper_figs.registry import verdict_title

    rec = {"status": "inconclusive", "scale": "quick", "seed": 0}
    assert (
        verdict_title("log scaling of d0 with N", rec)
        == "log scaling of d0 with N — inconclusive (quick, seed 0)"
    )
    assert verdict_title("h", None) == "h — no stored record"
    with pytest.raises(ValueError, match="no status"):
        verdict_title("h", {"scale": "quick"})


def test_hypothesis_titles_carry_the_stored_verdict(records):
    """Drawn from the stored records, each hypothesis title ends in its record's verdict."""
    missing = [c for _, c, _ in HYPOTHESES if c not in records]
    if missing:
        pytest.skip(f"no stored record of {missing}")
    bad = []
    for fid in dict.fromkeys(f for f, _, _ in HYPOTHESES):
        titles = _titles(fid, records)
        for f, claim, words in HYPOTHESES:
            rec = records[claim]
            verdict = f"{rec['status']} ({rec['scale']}, seed {rec['seed']})"
            if f == fid and not _states_verdict(titles, words, verdict):
                bad.append((fid, words, verdict, titles))
    assert bad == []


def test_verdicts_come_from_the_records_not_the_code(records):
    """With every stored status replaced by a sentinel and the seed by 7, every hypothesis title
    shows the sentinel, and no title of any figure still says 'reproduced' or 'ledgered'."""
    from paper_figs.api import list_figures

    changed = {cid: dict(rec, status=SENTINEL, seed=7) for cid, rec in records.items()}
    hard_coded, bad = [], []
    for fid in list_figures():
        try:
            titles = _titles(fid, changed)
        except LookupError:
            continue  # a figure whose stored inputs are missing is skipped, as the command does
        hard_coded += [(fid, t) for t in titles if re.search(r"reproduced|ledgered", t)]
        for f, claim, words in HYPOTHESES:
            if f == fid and not _states_verdict(
                titles, words, f"{SENTINEL} ({records[claim]['scale']}, seed 7)"
            ):
                bad.append((fid, words, titles))
    assert hard_coded == []
    assert bad == []


@pytest.mark.parametrize("seed", ["-1", "1.5", "x", "--seed=-3"])
def test_seed_must_be_a_non_negative_integer(seed, capsys):
    argv = [seed] if seed.startswith("--") else ["--seed", seed]
    with pytest.raises(SystemExit) as exc:
        figs_main([*argv, "--list", "geometric.*"])
    assert exc.value.code == 2
    assert "is not a non-negative integer" in capsys.readouterr().err


def test_seed_accepts_zero_and_positive(capsys):
    assert figs_main(["--seed", "0", "--list", "geometric.fig_threshold"]) == 0
    assert figs_main(["--seed", "12", "--list", "geometric.fig_threshold"]) == 0
