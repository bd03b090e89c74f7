"""The geometry of a language model's answer tables, measured against the fact-MLP and geometric
theory (docs/fact_mlp.md#setting, docs/geometric.md#setting).

A relation's *answer table* is our formalisation [derived] of "the values a relation can output"
on a real model: the unembedding rows (``model.get_output_embeddings().weight``, vocab x d) of
the first tokens of the relation's distinct answers, each row scaled to unit norm (one row per
distinct answer token). The first token of an answer is the one
:class:`constructions.lm.text.TextEncoder` finds after the relation's template; answers whose
first tokens collide are dropped and counted there (the tokenisation report).

:func:`table_geometry` then computes, for one table:

* the decodability rho of docs/fact_mlp.md#setting ([reference definition]), exactly, with its
  primal-dual certificate (``theory.fact_mlp.rho.decodability``);
* the code dimension B2 of docs/fact_mlp.md asks for, m_c = 8 ln n_V / rho^2 ([derived] there,
  ``theory.fact_mlp.bounds.jl_code_dim``), beside the model width d. Reading "does d suffice" as
  "m_c <= d" is our comparison: B2 bounds the code dimension of a random-projection decoder, not
  a model's residual width;
* the coherence of the row directions and the margin it leaves. For unit rows the nearest-row
  readout (argmax of inner products) of row i has margin 1 - max_{j != i} <u_i, u_j>, so the
  smallest margin over the table is 1 - max_{i != j} <u_i, u_j>. This is the margin of
  docs/geometric.md#setting ("decoding is correct when the margin 1 - max_{a != b} <u_a, u_b> is
  positive", the block construction's criterion, and B2 there, ``theory.geometric.single_hop``);
  applying it to a real unembedding is our formalisation;
* the lower bound rho >= sqrt((1 - mu) / 2) of ``theory.fact_mlp.rho.rho_lower_bound`` ([derived],
  unit rows, mu the signed coherence), a consistency check between the two numbers.

:func:`random_table` draws the control: a table of the same shape with i.i.d. Gaussian rows
scaled to unit norm, from ``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, NamedTuple

import numpy as np

from constructions.seeding import rng_for

#: the certificate holds when the primal-dual gap of every rho_i is at most this
CERTIFICATE_TOL = 1e-9


# The functional form gives the fields their types as objects: under ``from __future__ import
# annotations`` the class form would store them as the strings 'list', 'np.ndarray', 'dict', which
# the generated ``__new__`` cannot resolve (its globals are not this module's).
AnswerTable = NamedTuple("AnswerTable", [("answers", list), ("rows", np.ndarray), ("report", dict)])
AnswerTable.__doc__ = """One relation's answer table: the distinct answers (sorted), their unit
unembedding rows (n_V x d, float64, in the order of ``answers``) and the tokenisation report of
:meth:`constructions.lm.text.TextEncoder.prepare` with ``answer_tokens`` (answer -> token id) added."""


@dataclass(frozen=True)
class TableGeometry:
    """The numbers :func:`table_geometry` measures on one table (see the module docstring).

    n_values, width: n_V and d of the table. rho: the decodability (the smallest rho_i, the
    primal value of the certificate); rho_argmin: the row attaining it. certificate_gap: max_i
    (dual_i - primal_i) >= 0, an upper bound on the error of every rho_i; certificate_holds:
    gap <= CERTIFICATE_TOL. b2_code_dim: 8 ln n_V / rho^2 (inf when rho = 0); b2_suffices:
    b2_code_dim <= width. coherence: max_{i != j} |<u_i, u_j>| (absolute cosine);
    coherence_signed: max_{i != j} <u_i, u_j> (``theory.fact_mlp.rho.coherence``, normalise=True);
    min_margin: 1 - coherence_signed, the smallest nearest-row readout margin (always >= 1 -
    coherence); rho_lower_bound: sqrt((1 - coherence_signed) / 2) <= rho.
    """

    n_values: int
    width: int
    rho: float
    rho_argmin: int
    certificate_gap: float
    certificate_holds: bool
    b2_code_dim: float
    b2_suffices: bool
    coherence: float
    coherence_signed: float
    min_margin: float
    rho_lower_bound: float

    def as_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (for strict JSON: ``theory.cli_support.dumps``).

        Examples
        --------
        >>> table_geometry(np.eye(3)).as_dict()["n_values"]
        3
        """
        return asdict(self)


def unit_rows(rows) -> np.ndarray:
    """``rows`` (n x d) as float64 with every row scaled to unit norm; a zero or non-finite row
    is a ValueError naming it.

    Examples
    --------
    >>> unit_rows([[3.0, 4.0], [0.0, 2.0]]).tolist()
    [[0.6, 0.8], [0.0, 1.0]]
    """
    X = np.asarray(rows, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"rows must have shape (n, d), got shape {X.shape}")
    norms = np.linalg.norm(X, axis=1)
    bad = np.flatnonzero(~np.isfinite(norms) | (norms == 0))
    if len(bad):
        raise ValueError(f"row {int(bad[0])} is zero or not finite: it has no direction")
    return X / norms[:, None]


def _weight(model) -> np.ndarray:
    """The output-embedding (unembedding) matrix, vocab x d, as float64 numpy."""
    weight = model.get_output_embeddings().weight
    if hasattr(weight, "detach"):  # a torch tensor
        weight = weight.detach().float().cpu().numpy()
    return np.asarray(weight, dtype=np.float64)


def answer_tables(model, tokenizer, facts_path: str | None = None) -> dict[str, AnswerTable]:
    """relation -> :class:`AnswerTable` of every relation of a facts file (default the shipped
    ``constructions/data/facts.tsv``), in sorted relation order.

    The answers' first tokens come from ``TextEncoder(tokenizer, template).prepare(pairs)``
    (facts whose prompt is not a token prefix, and answers whose first tokens collide, are
    dropped and counted in the report); the rows are the unembedding rows of those tokens,
    normalised. A relation left with fewer than 2 distinct answers is returned as it is
    (:func:`table_geometry` refuses it).

    Examples
    --------
    A whitespace tokenizer and a 4 x 2 unembedding stand in for a model:

    >>> import os, tempfile, types
    >>> vocab = {"the": 0, "capital": 1, "paris": 2, "rome": 3}
    >>> tok = lambda text, add_special_tokens=True: {"input_ids": [vocab[w] for w in text.split()]}
    >>> head = types.SimpleNamespace(weight=np.array([[1.0, 0], [0, 1], [3, 4], [0, -2]]))
    >>> model = types.SimpleNamespace(get_output_embeddings=lambda: head)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "facts.tsv")
    ...     with open(path, "w") as fh:
    ...         _ = fh.write("@template\\tthe capital {s}\\tcap\\ncapital paris\\tparis\\tcap\\n"
    ...                      "rome the\\trome\\tcap\\n")
    ...     tables = answer_tables(model, tok, path)
    >>> tables["cap"].answers, tables["cap"].rows.tolist()
    (['paris', 'rome'], [[0.6, 0.8], [0.0, -1.0]])
    >>> tables["cap"].report["answer_tokens"], tables["cap"].report["dropped_collisions"]
    ({'paris': 2, 'rome': 3}, 0)
    """
    from constructions.lm.text import TextEncoder, read_facts
    from constructions.lm.text import facts_path as shipped

    relations, templates = read_facts(facts_path or shipped())
    weight = _weight(model)
    out = {}
    for rel in sorted(relations):
        encoder = TextEncoder(tokenizer, templates[rel])
        kept, report = encoder.prepare(relations[rel])
        answers = sorted({a for _, a in kept})
        tokens = {a: int(encoder.candidate(a)) for a in answers}
        ids = np.array([tokens[a] for a in answers], dtype=np.int64)
        rows = unit_rows(weight[ids]) if len(ids) else np.zeros((0, weight.shape[1]))
        out[rel] = AnswerTable(answers, rows, dict(report, answer_tokens=tokens))
    return out


def table_geometry(rows) -> TableGeometry:
    """The geometry of a table's row directions (rows are scaled to unit norm first): n_V, d, the
    exact decodability rho with its certificate gap, B2's code dimension against d, the
    coherence and the smallest nearest-row margin (module docstring: what is the papers'
    statement and what is our formalisation).

    A table with n_V < 2, or two rows of the same direction, is refused with the ValueError of
    ``theory.fact_mlp.rho.decodability`` (a duplicated value cannot be decoded: rho = 0).

    Examples
    --------
    Three orthonormal rows: rho = sqrt(1/2 + 1/(2 (n_V - 1))) = sqrt(3)/2, margin 1:

    >>> g = table_geometry(np.eye(3))
    >>> round(g.rho, 6), g.certificate_holds, g.coherence, g.min_margin
    (0.866025, True, 0.0, 1.0)
    >>> round(g.b2_code_dim, 2), g.width, g.b2_suffices
    (11.72, 3, False)
    >>> table_geometry([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]])
    Traceback (most recent call last):
    ...
    ValueError: values[0] and values[1] are duplicate values ...
    """
    from theory.fact_mlp.bounds import jl_code_dim
    from theory.fact_mlp.rho import coherence, decodability, rho_lower_bound

    U = unit_rows(rows)
    n, d = U.shape
    res = decodability(U)
    rho = float(res.rho)
    mu_signed = coherence(U, normalise=True)
    G = np.abs(U @ U.T)
    np.fill_diagonal(G, -np.inf)
    mu_abs = float(G.max())
    m_c = jl_code_dim(n, min(rho, 1.0)) if rho > 0 else math.inf
    return TableGeometry(
        n_values=int(n),
        width=int(d),
        rho=rho,
        rho_argmin=res.argmin,
        certificate_gap=float(res.gap),
        certificate_holds=bool(res.gap <= CERTIFICATE_TOL),
        b2_code_dim=float(m_c),
        b2_suffices=bool(m_c <= d),
        coherence=mu_abs,
        coherence_signed=float(mu_signed),
        min_margin=float(1.0 - mu_signed),
        rho_lower_bound=rho_lower_bound(max(-1.0, min(1.0, mu_signed))),
    )


def random_table(n: int, d: int, seed: int) -> np.ndarray:
    """The control table: n rows of dimension d, i.i.d. standard Gaussian entries from
    ``numpy.random.default_rng(seed)``, each row scaled to unit norm (a uniform random direction).

    Examples
    --------
    >>> a, b = random_table(4, 8, seed=0), random_table(4, 8, seed=0)
    >>> a.shape, bool(np.array_equal(a, b)), bool(np.allclose(np.linalg.norm(a, axis=1), 1))
    ((4, 8), True, True)
    >>> bool(np.array_equal(a, random_table(4, 8, seed=1)))
    False
    """
    if int(n) != n or int(d) != d or n < 1 or d < 1:
        raise ValueError(f"random_table needs integers n >= 1 and d >= 1, got n={n}, d={d}")
    rng = rng_for(int(seed))
    return unit_rows(rng.standard_normal((int(n), int(d))))
