"""The answer-table geometry table of docs/lm_geometry.md, from results/lm_geometry.json (written by
``python -m verify lm-geometry``); used by ``paper_figs.docs`` and the figure
``lm.fig_answer_geometry``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent  # the repository root
NAME = "lm_geometry.json"


def load_lm_geometry(results: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The stored record of ``python -m verify lm-geometry`` in the results folder ``results``
    (None: RECALL_RESULTS, else runs/ when it holds the file, else the committed results/,
    :func:`verify.results.reading_root`); a LookupError naming the file and the command that
    writes it when it is missing.

    Examples
    --------
    >>> load_lm_geometry("/nonexistent")
    Traceback (most recent call last):
    ...
    LookupError: no stored /nonexistent/lm_geometry.json: `python -m verify lm-geometry --out /nonexistent` writes it
    """
    from verify.results import reading_root

    folder = reading_root(results, NAME)
    path = folder / NAME
    if not path.is_file():
        raise LookupError(f"no stored {path}: `python -m verify lm-geometry --out {folder}` writes it")
    return json.loads(path.read_text())


def model_label(model: dict[str, Any]) -> str:
    """A short name of a measured model: its alias, or its file or folder name without ``.gguf``.

    Examples
    --------
    >>> model_label({"spec": "/x/gemma-3-270m-q4_k_m.gguf"}), model_label({"spec": "smollm2"})
    ('gemma-3-270m-q4_k_m', 'smollm2')
    """
    name = os.path.basename(str(model["spec"]).rstrip("/"))
    return name[: -len(".gguf")] if name.endswith(".gguf") else name


def _num(value, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def lm_geometry_table(path: Path | None = None) -> str:
    """Per model and relation: n_V, d, rho with its certificate gap, B2's code dimension
    8 ln n_V / rho^2, the coherence mu (max |cos|) and the smallest nearest-row margin
    1 - max cos, then the random control's rho and mu; from the stored record.

    Examples
    --------
    >>> lm_geometry_table(Path("/nonexistent/lm_geometry.json"))
    'No stored answer-table geometry: run `python -m verify lm-geometry`.'
    """
    path = path or ROOT / "results" / NAME
    if not path.exists():
        return "No stored answer-table geometry: run `python -m verify lm-geometry`."
    rec = json.loads(path.read_text())
    lines = [
        "From `results/lm_geometry.json` (`python -m verify lm-geometry`, seed "
        f"{rec['seed']}; `python -m paper_figs lm.fig_answer_geometry` draws it). The answer table "
        "of a relation is the unit unembedding rows of its distinct answers' first tokens [our "
        "formalisation]; rho is the decodability of [docs/fact_mlp.md](fact_mlp.md"
        "#setting) "
        "with its certificate gap, B2 m_c = 8 ln n_V / rho^2 its code dimension (compared with d "
        "by us), mu = max |cos| between rows, and 1 - max cos the smallest nearest-row margin "
        "(the margin of [docs/geometric.md](geometric.md"
        "#setting)). The control is a table "
        "of i.i.d. Gaussian unit rows of the same n_V x d.",
        "",
        "| model | relation | n_V | d | rho | gap | B2 m_c | m_c <= d | mu | 1 - max cos "
        "| random rho | random mu |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m in rec["models"]:
        for rel, e in m["relations"].items():
            r, c = e["real"], e["random"]
            if "error" in r:
                lines.append(
                    f"| {model_label(m)} | {rel} | {r['n_values']} | {r['width']} | "
                    f"{r['error'].replace('|', '/')} ||||||||"
                )
                continue
            lines.append(
                f"| {model_label(m)} | {rel} | {r['n_values']} | {r['width']} | {r['rho']:.3f} | "
                f"{r['certificate_gap']:.1e} | {_num(r.get('b2_code_dim'), '.0f')} | "
                f"{'yes' if r['b2_suffices'] else 'no'} | {r['coherence']:.3f} | "
                f"{r['min_margin']:.3f} | {_num(c.get('rho'), '.3f')} | {_num(c.get('coherence'), '.3f')} |"
            )
    return "\n".join(lines)
