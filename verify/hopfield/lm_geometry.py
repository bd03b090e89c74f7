"""``python -m verify lm-geometry``: the geometry of each real model's answer tables beside a random
control of the same shape, stored in ``results/lm_geometry.json``. Registers no claim.

For every model and every relation of the facts file: n_V, d, the decodability rho with its
certificate, B2's code dimension 8 ln n_V / rho^2 against d, the coherence and the smallest
nearest-row margin (:mod:`constructions.lm.geometry`, whose docstring says which parts are the
papers' statements, docs/fact_mlp.md#setting and docs/geometric.md#setting, and which are our
formalisation), and the same numbers for a table of i.i.d. Gaussian unit rows drawn from
``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

#: the file the command writes in the results folder (and the figure and README table read)
RESULTS_NAME = "lm_geometry.json"


def default_model_specs() -> list[str]:
    """The models measured when no ``--model`` is given: the installed aliases of the lm claims
    (:func:`constructions.lm.load.installed_aliases`: smollm2, gemma3-270m).

    Examples
    --------
    >>> specs = default_model_specs()
    >>> isinstance(specs, list) and set(specs) <= {"smollm2", "gemma3-270m"}
    True
    """
    from constructions.lm.load import installed_aliases

    return installed_aliases()


def _facts_name(path: str) -> str:
    from verify.results import REPO

    try:
        return Path(path).resolve().relative_to(REPO).as_posix()
    except ValueError:
        return str(path)


def measure_model(model, tokenizer, seed: int = 0, facts_path: str | None = None) -> dict:
    """relation -> {answers, tokenisation, real, random} for one loaded model: ``real`` is
    :func:`constructions.lm.geometry.table_geometry` of the relation's answer table (or
    ``{"error": ...}`` when the theory refuses the table), ``random`` the same numbers for
    ``random_table(n_V, d, seed)`` with the seed recorded; ``seconds`` holds the compute time.

    Examples
    --------
    >>> import types, numpy as np
    >>> vocab = {w: k for k, w in enumerate("the capital of is france italy paris rome".split())}
    >>> tok = lambda text, add_special_tokens=True: {"input_ids": [vocab[w] for w in text.split()]}
    >>> head = types.SimpleNamespace(weight=np.random.default_rng(0).standard_normal((8, 16)))
    >>> model = types.SimpleNamespace(get_output_embeddings=lambda: head)
    >>> import os, tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as fh:
    ...     _ = fh.write("@template\\tthe capital of {s} is\\tcapital\\n"
    ...                  "france\\tparis\\tcapital\\nitaly\\trome\\tcapital\\n")
    >>> out = measure_model(model, tok, seed=3, facts_path=fh.name)
    >>> os.unlink(fh.name)
    >>> rel = out["relations"]["capital"]
    >>> rel["answers"], rel["real"]["n_values"], rel["real"]["width"], rel["random"]["seed"]
    (['paris', 'rome'], 2, 16, 3)
    """
    from constructions.lm.geometry import answer_tables, random_table, table_geometry

    start = time.perf_counter()
    tables = answer_tables(model, tokenizer, facts_path)
    t_tables = time.perf_counter() - start
    relations = {}
    for rel, table in tables.items():
        n, d = table.rows.shape
        entry = {"answers": table.answers, "tokenisation": table.report}
        try:
            entry["real"] = table_geometry(table.rows).as_dict()
        except ValueError as exc:
            entry["real"] = {"n_values": int(n), "width": int(d), "error": str(exc)}
        if n >= 2:
            entry["random"] = dict(table_geometry(random_table(n, d, seed)).as_dict(), seed=int(seed))
        else:
            entry["random"] = {"seed": int(seed), "error": f"n_V = {n} < 2: no table to compare"}
        relations[rel] = entry
    return {
        "relations": relations,
        "seconds": {
            "answer_tables": round(t_tables, 3),
            "geometry": round(time.perf_counter() - start - t_tables, 3),
        },
    }


def run(specs, seed: int = 0, device: str = "cpu", dtype: str = "float32", facts_path=None) -> dict:
    """The whole record of ``python -m verify lm-geometry``: every model spec loaded with
    ``constructions.lm.load.load_model`` (all specs are resolved first, so an unknown one is a
    ValueError before any model loads) and measured with :func:`measure_model`; with the seed,
    device, dtype, versions and git revision.

    Examples
    --------
    >>> run(["no-such-model-anywhere"])
    Traceback (most recent call last):
    ...
    ValueError: model path 'no-such-model-anywhere' not found: ...
    """
    from constructions.lm.load import load_model, resolve_model
    from constructions.lm.text import facts_path as shipped
    from verify.results import git_revision, versions

    specs = list(specs)
    if not specs:
        raise ValueError(
            "no model to measure: pass --model (an alias, a .gguf file or a local Hugging Face folder)"
        )
    for spec in specs:
        resolve_model(spec)
    facts = facts_path or shipped()
    models = []
    for spec in specs:
        model, tokenizer, info = load_model(spec, device, dtype)
        measured = measure_model(model, tokenizer, seed, facts)
        measured["seconds"] = {"load": info["load_seconds"], **measured["seconds"]}
        models.append({"spec": spec, "model": info, "device": device, "dtype": dtype, **measured})
        del model
    return {
        "command": "python -m verify lm-geometry",
        "seed": int(seed),
        "facts": _facts_name(facts),
        "device": device,
        "dtype": dtype,
        "git": git_revision(),
        "versions": versions(),
        "definitions": {
            "answer_table": "unit unembedding rows of the first tokens of a relation's distinct answers "
            "[our formalisation]",
            "rho": "decodability of docs/fact_mlp.md#setting, exact, with its primal-dual certificate",
            "b2_code_dim": "8 ln n_V / rho^2, B2 of docs/fact_mlp.md (code dimension of the "
            "random-projection decoder); b2_suffices: b2_code_dim <= width [our comparison]",
            "coherence": "max_{i != j} |cos(u_i, u_j)| (absolute); coherence_signed: max_{i != j} cos",
            "min_margin": "1 - coherence_signed: smallest nearest-row readout margin of unit rows "
            "(the margin of docs/geometric.md#setting, applied to a real unembedding)",
            "random": "i.i.d. Gaussian rows of the same n_V x d, normalised, numpy default_rng(seed)",
        },
        "models": models,
    }


def main(args) -> int:
    """``python -m verify lm-geometry [--model SPEC ...] [--pairs FILE] [--seed N] [--device D] [--out DIR]
    [--json]``:
    writes DIR/lm_geometry.json; a bad model spec or device is exit 2 with the reason."""
    from constructions.device import resolve_device
    from theory.cli_support import dumps
    from verify.hopfield.lm_setup import _transformers_missing

    try:
        missing = _transformers_missing()
        if missing:
            raise ValueError(missing)
        specs = args.model or default_model_specs()
        device = resolve_device(args.device or "cpu")
        record = run(specs, args.seed, device, facts_path=args.pairs)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    text = dumps(record, indent=1)
    (out / RESULTS_NAME).write_text(text + "\n")
    if args.json:
        print(text)
        return 0
    for m in record["models"]:
        s = m["seconds"]
        print(
            f"{m['model']['model']}: load {s['load']} s, tables {s['answer_tables']} s, "
            f"geometry {s['geometry']} s"
        )
        for rel, e in m["relations"].items():
            r, c = e["real"], e["random"]
            if "error" in r:
                print(f"  {rel:>14}: {r['error']}")
                continue
            print(
                f"  {rel:>14}: n_V={r['n_values']:3d} d={r['width']} rho={r['rho']:.3f} "
                f"(gap {r['certificate_gap']:.1e}) B2 m_c={r['b2_code_dim']:.0f} "
                f"mu={r['coherence']:.3f} 1-mu={1 - r['coherence']:.3f}; random rho={c['rho']:.3f} "
                f"mu={c['coherence']:.3f}"
            )
    print(f"written {out / RESULTS_NAME}")
    return 0
