"""Property-testing helpers for a user's own constructions: hypothesis strategies and assertions.

This module needs hypothesis (``pip install hypothesis``, part of the ``dev`` extra); it is not
imported by ``import verify``. docs/examples/test_my_construction.py is a complete test file
that uses it (README.md, "Use it from Python").

Strategies draw only small scalars with hypothesis (sizes and a seed) and build every array from
a seeded ``numpy.random.Generator``, so examples shrink well and never build large arrays element
by element. A size argument is an int or a hypothesis strategy of ints.

- :func:`bijections`: (relation table of R random bijections of [N], seed);
- :func:`relation_tables`: an int array (R, N), bijections or arbitrary maps [N] -> [n_values];
- :func:`fact_sets`: a :class:`~constructions.fact_mlp.facts.FactSet` (keys, values, fact map);
- :func:`value_tables`: values (n_V, d) whose decodability rho is at least a given minimum;
- :func:`spherical_codes`: unit codes (n, d), spherical or +-1/sqrt(d).

Assertions (each raises AssertionError with a message that names what failed):

- :func:`assert_stores`: every fact decoded correctly; names the first failing facts and their
  margins;
- :func:`assert_margin_at_least`: every decoding margin at least a value;
- :func:`assert_bound_holds`: a measured number on the right side of a bound; names the bound,
  its value and its parameters.

The assertions take any fact-storing model (constructions/measure.py): a block model, a fact
MLP, or an object of the user's with ``decode``, ``accuracy`` and ``margins``.

:func:`check_fact_model` (from :mod:`verify.fact_check`, docs/testing.md) checks, in one call,
that such a model's three answers agree under the decode kernel's one tie rule (a margin within
the tie tolerance is a tie, and a tie is an error; the accuracy is the mean of decode == target;
a margin above the tolerance is a stored fact), counts the facts it stores, and checks that its
parameter count respects the information bound of its facts at the bits of its dtype; it returns
a :class:`FactModelReport` (``ok`` only when no contract is broken and every fact is stored). A
torch module or a callable that maps a batch of facts to logits is checked as it is, through
:class:`ModuleFactModel`.

:func:`check_associative_memory` (from :mod:`verify.memory_check`, docs/testing.md) checks, in one
call, an associative memory (a callable or torch module mapping queries to retrieved states)
against the modern Hopfield bounds R1, D1 and R4 of docs/hopfield.md: whether each pattern is
retrieved from a query at R1's radius, every separation Delta_i, each bound's hypotheses on the
given patterns and beta, and the memory against each bound's prediction; it returns an
:class:`AssociativeMemoryReport`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Union

import numpy as np
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from constructions.seeding import rng_for
from verify.fact_check import FactModelReport, ModuleFactModel, check_fact_model
from verify.memory_check import AssociativeMemoryReport, check_associative_memory

if TYPE_CHECKING:
    from constructions.measure import FactModel, Facts
    from theory.registry import Bound

__all__ = [
    "AssociativeMemoryReport",
    "FactModelReport",
    "ModuleFactModel",
    "assert_bound_holds",
    "assert_margin_at_least",
    "assert_stores",
    "bijections",
    "block_dims",
    "check_associative_memory",
    "check_fact_model",
    "fact_sets",
    "n_relations",
    "n_subjects",
    "relation_tables",
    "rng_from",
    "seeds",
    "spherical_codes",
    "value_tables",
]

#: A size: an int, or a strategy that draws one.
Size = Union[int, SearchStrategy]

#: Seeds of the numpy Generators the strategies build their arrays from.
seeds: SearchStrategy = st.integers(min_value=0, max_value=2**32 - 1)
#: Numbers of subjects N (the default of :func:`bijections`).
n_subjects: SearchStrategy = st.integers(min_value=2, max_value=300)
#: Numbers of relations R (the default of :func:`bijections`).
n_relations: SearchStrategy = st.integers(min_value=1, max_value=6)
#: Block dimensions d0 of the geometric block model.
block_dims: SearchStrategy = st.integers(min_value=1, max_value=64)

# the default sizes of the other strategies (module-level, so that no default is built per call)
_TABLE_N, _TABLE_R = st.integers(2, 64), st.integers(1, 4)
_VALUES_N, _VALUES_D = st.integers(2, 32), st.integers(4, 32)
_FACTS_F, _FACTS_N, _FACTS_D = st.integers(1, 64), st.integers(2, 16), st.integers(4, 32)
_CODES_N, _CODES_D = st.integers(2, 64), st.integers(1, 32)

#: Tries (new seeds) a value table gets to reach its minimum decodability before the example is
#: rejected (hypothesis.reject).
DECODABILITY_TRIES = 8


def rng_from(seed: int) -> np.random.Generator:
    """The numpy Generator of a drawn seed (the one way the strategies make arrays).

    >>> rng_from(0).integers(0, 10, 3).tolist()
    [8, 6, 5]
    """
    return rng_for(int(seed))


def _ints(size: Size, name: str) -> SearchStrategy:
    if isinstance(size, SearchStrategy):
        return size
    if isinstance(size, (int, np.integer)) and not isinstance(size, bool):
        return st.just(int(size))
    raise TypeError(f"{name} must be an int or a hypothesis strategy of ints, got {type(size).__name__}")


def bijections(n: Size = n_subjects, r: Size = n_relations) -> SearchStrategy:
    """(perms, seed): a relation table of R random bijections of [N], int64 (R, N), row r the
    bijection pi_r (:func:`constructions.tasks.make_bijections`), and the seed it was built from.

    >>> from hypothesis import find
    >>> perms, seed = find(bijections(n=5, r=2), lambda x: True)
    >>> perms.shape, sorted(perms[0].tolist())
    ((2, 5), [0, 1, 2, 3, 4])
    """
    n_s, r_s = _ints(n, "n"), _ints(r, "r")

    @st.composite
    def draw_bijections(draw):
        from constructions.tasks import make_bijections

        n_, r_, seed = draw(n_s), draw(r_s), draw(seeds)
        return make_bijections(n_, r_, rng_from(seed)), seed

    return draw_bijections()


def relation_tables(n: Size = _TABLE_N, r: Size = _TABLE_R, n_values: Size | None = None) -> SearchStrategy:
    """Relation tables, int64 (R, N): row r maps subject s to the value of (s, r). With
    ``n_values`` None every row is a bijection of [N] (the facts of a block model); otherwise each
    entry is drawn uniformly from [0, n_values) (arbitrary maps, repeats allowed).

    >>> from hypothesis import find
    >>> table = find(relation_tables(n=4, r=3, n_values=2), lambda t: True)
    >>> table.shape, bool(table.max() < 2)
    ((3, 4), True)
    """
    n_s, r_s = _ints(n, "n"), _ints(r, "r")
    v_s = None if n_values is None else _ints(n_values, "n_values")

    @st.composite
    def draw_table(draw):
        n_, r_ = draw(n_s), draw(r_s)
        rng = rng_from(draw(seeds))
        if v_s is None:
            return np.stack([rng.permutation(n_) for _ in range(r_)]).astype(np.int64)
        return rng.integers(0, draw(v_s), size=(r_, n_)).astype(np.int64)

    return draw_table()


def _decodable(values: np.ndarray, minimum: float | None) -> bool:
    if not minimum:
        return True
    from theory.fact_mlp.rho import decodability

    return decodability(values).rho >= minimum


def value_tables(
    n_values: Size = _VALUES_N, d: Size = _VALUES_D, min_decodability: float = 0.0
) -> SearchStrategy:
    """Value tables (n_V, d) of unit rows (i.i.d. spherical) whose decodability rho
    (:func:`theory.fact_mlp.rho.decodability`, docs/fact_mlp.md) is at least
    ``min_decodability``: a draw below it is redrawn from new seeds, and after
    ``DECODABILITY_TRIES`` the example is rejected (so ask for a minimum the sizes can reach).

    >>> from hypothesis import find
    >>> from theory import decodability
    >>> values = find(value_tables(n_values=8, d=8, min_decodability=0.3), lambda v: True)
    >>> values.shape, bool(decodability(values).rho >= 0.3)
    ((8, 8), True)
    """
    from hypothesis import reject

    nv_s, d_s = _ints(n_values, "n_values"), _ints(d, "d")
    minimum = float(min_decodability)

    @st.composite
    def draw_values(draw):
        from constructions.fact_mlp.facts import spherical

        n_, d_, seed = draw(nv_s), draw(d_s), draw(seeds)
        for k in range(DECODABILITY_TRIES):
            values = spherical(n_, d_, rng_for(seed, k))
            if _decodable(values, minimum):
                return values
        reject()

    return draw_values()


def fact_sets(
    n_facts: Size = _FACTS_F,
    n_values: Size = _FACTS_N,
    d: Size = _FACTS_D,
    *,
    tied: bool = False,
    geometry: str = "spherical",
    min_decodability: float = 0.0,
) -> SearchStrategy:
    """Fact sets (:class:`~constructions.fact_mlp.facts.FactSet`): F keys and n_V values in
    R^d from ``geometry`` ("spherical", "gaussian", "spiked", "clustered") and a fact map drawn
    uniformly (:func:`constructions.fact_mlp.facts.fact_set`). ``tied``: F = n_V, the keys are
    the values and the map a permutation. ``min_decodability``: as in :func:`value_tables`.

    >>> from hypothesis import find
    >>> facts = find(fact_sets(n_facts=12, n_values=4, d=8), lambda f: True)
    >>> facts.keys.shape, facts.values.shape, facts.fact_map.shape
    ((12, 8), (4, 8), (12,))
    """
    from hypothesis import reject

    f_s, v_s, d_s = _ints(n_facts, "n_facts"), _ints(n_values, "n_values"), _ints(d, "d")
    minimum = float(min_decodability)

    @st.composite
    def draw_facts(draw):
        from constructions.fact_mlp.facts import fact_set

        n_v, d_ = draw(v_s), draw(d_s)
        n_f = n_v if tied else draw(f_s)
        seed = draw(seeds)
        for k in range(DECODABILITY_TRIES):
            facts = fact_set(n_f, n_v, d_, rng_for(seed, k), tied=tied, geometry=geometry)
            if _decodable(facts.values, minimum):
                return facts
        reject()

    return draw_facts()


def spherical_codes(n: Size = _CODES_N, d: Size = _CODES_D, kind: str = "spherical") -> SearchStrategy:
    """Attribute codes (n, d) with unit rows (:func:`constructions.geometric.single_hop.attribute_codes`):
    ``kind`` "spherical" (normalised Gaussians), "rademacher" (entries +-1/sqrt(d)) or
    "rademacher_distinct" (distinct sign patterns while the 2^d last).

    >>> from hypothesis import find
    >>> import numpy as np
    >>> codes = find(spherical_codes(n=6, d=3), lambda c: True)
    >>> codes.shape, np.allclose(np.linalg.norm(codes, axis=1), 1.0)
    ((6, 3), True)
    """
    n_s, d_s = _ints(n, "n"), _ints(d, "d")

    @st.composite
    def draw_codes(draw):
        from constructions.geometric.single_hop import attribute_codes

        n_, d_, seed = draw(n_s), draw(d_s), draw(seeds)
        return attribute_codes(n_, d_, kind, rng_from(seed))

    return draw_codes()


# --- assertions ------------------------------------------------------------------------------
def _facts_of(model: Any, facts: Any) -> Any:
    if facts is not None:
        return facts
    for attr in ("facts", "perms"):
        own = getattr(model, attr, None)
        if own is not None:
            return own
    raise ValueError(f"give the facts to check: {type(model).__name__} has no facts of its own")


def _fmt(x: float) -> str:
    return f"{float(x):.6g}"


def assert_stores(model: FactModel, facts: Facts | None = None, *, show: int = 5) -> None:
    """Assert that ``model`` decodes every fact of ``facts`` (default: the model's own) to its
    value. The message counts the failures and names the first ``show`` failing facts with what
    they decoded to and their margins (a tie decodes to -1).

    >>> import numpy as np
    >>> from constructions import build_block_model
    >>> perms = np.array([[1, 0, 2]])
    >>> model = build_block_model(perms, 3, codes=np.eye(3))
    >>> assert_stores(model, perms)
    >>> assert_stores(model, np.array([[0, 1, 2]]))
    Traceback (most recent call last):
    ...
    AssertionError: the model does not store 2 of 3 facts (accuracy 0.333333); first failures: fact 0 (subject 0, relation 0): value 0 expected, decoded 1, margin -1; fact 1 (subject 1, relation 0): value 1 expected, decoded 0, margin -1
    """
    from constructions.measure import describe_fact, fact_targets

    facts = _facts_of(model, facts)
    decoded = np.asarray(model.decode(facts))
    targets = fact_targets(facts)
    if decoded.shape != targets.shape:
        raise AssertionError(f"decode returned shape {decoded.shape} for {targets.shape[0]} facts")
    wrong = np.flatnonzero(decoded != targets)
    if not len(wrong):
        return
    margins = np.asarray(model.margins(facts))
    parts = []
    for i in wrong[: int(show)]:
        got = "a tie (-1)" if decoded[i] < 0 else str(int(decoded[i]))
        parts.append(
            f"{describe_fact(facts, i)}: value {int(targets[i])} expected, decoded {got}, "
            f"margin {_fmt(margins[i])}"
        )
    more = f"; and {len(wrong) - len(parts)} more" if len(wrong) > len(parts) else ""
    raise AssertionError(
        f"the model does not store {len(wrong)} of {len(targets)} facts (accuracy "
        f"{_fmt(1 - len(wrong) / len(targets))}); first failures: " + "; ".join(parts) + more
    )


def assert_margin_at_least(model: FactModel, facts: Facts | None, margin: float, *, show: int = 5) -> None:
    """Assert that every fact's decoding margin is at least ``margin``. The message names the
    smallest margin and the first ``show`` facts below ``margin``.

    >>> import numpy as np
    >>> from constructions import build_block_model
    >>> perms = np.array([[1, 0, 2]])
    >>> model = build_block_model(perms, 3, codes=np.eye(3))
    >>> assert_margin_at_least(model, perms, 0.9)
    >>> assert_margin_at_least(model, perms, 1.5)
    Traceback (most recent call last):
    ...
    AssertionError: 3 of 3 facts have a margin below 1.5 (smallest 1 at fact 0 (subject 0, relation 0)); first: fact 0 (subject 0, relation 0): margin 1; fact 1 (subject 1, relation 0): margin 1; fact 2 (subject 2, relation 0): margin 1
    """
    from constructions.measure import describe_fact

    facts = _facts_of(model, facts)
    margins = np.asarray(model.margins(facts), dtype=np.float64)
    low = np.flatnonzero(~(margins >= float(margin)))  # NaN counts as below
    if not len(low):
        return
    worst = int(np.nanargmin(margins)) if not np.isnan(margins).all() else int(low[0])
    parts = [f"{describe_fact(facts, i)}: margin {_fmt(margins[i])}" for i in low[: int(show)]]
    more = f"; and {len(low) - len(parts)} more" if len(low) > len(parts) else ""
    raise AssertionError(
        f"{len(low)} of {len(margins)} facts have a margin below {_fmt(margin)} (smallest "
        f"{_fmt(margins[worst])} at {describe_fact(facts, worst)}); first: " + "; ".join(parts) + more
    )


def assert_bound_holds(
    bound: str | Bound, measured: float, /, *, sense: str = ">=", rtol: float = 0.0, **params: Any
) -> None:
    """Assert that ``measured`` lies on the bound's side: ``sense`` ">=" (the default) for a
    lower bound (measured >= bound(**params)), "<=" for an upper bound; ``rtol`` relaxes the
    bound by that fraction of its value. ``bound`` is a name of ``python -m theory list`` or a
    :class:`~theory.registry.Bound`. The message names the bound, its value, the parameters and
    the bound's statement.

    >>> assert_bound_holds("geometric.d0_nec", 7, N=1000, gamma=0.5)
    >>> assert_bound_holds("geometric.d0_nec", 5, N=1000, gamma=0.5)
    Traceback (most recent call last):
    ...
    AssertionError: bound geometric.d0_nec = 6.28771 at N=1000, gamma=0.5: measured 5 is not >= 6.28771 ...
    """
    from theory.registry import get_bound

    if sense not in (">=", "<="):
        raise ValueError(f"sense must be '>=' (a lower bound) or '<=' (an upper bound), got {sense!r}")
    b = get_bound(bound) if isinstance(bound, str) else bound
    value = float(b.evaluate(**params))
    slack = abs(value) * float(rtol)
    x = float(measured)
    holds = x >= value - slack if sense == ">=" else x <= value + slack
    if holds:
        return
    point = ", ".join(f"{k}={v!r}" for k, v in params.items())
    tol = f" (rtol {rtol})" if rtol else ""
    raise AssertionError(
        f"bound {b.name} = {_fmt(value)} at {point}: measured {_fmt(x)} is not {sense} {_fmt(value)}"
        f"{tol} ({b.provenance}: {b.statement})"
    )
