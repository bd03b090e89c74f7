"""The measurement interface the fact-storing models share: ``decode``, ``accuracy``, ``margins``.

A *fact-storing model* (:class:`FactModel`) answers three questions about a set of facts:

- ``model.decode(facts)``: the decoded value of every fact (an int array, -1 where the two best
  candidates tie);
- ``model.accuracy(facts)``: the fraction of facts decoded correctly (a tie is an error);
- ``model.margins(facts)``: the decoding margin of every fact, the logit of its value minus the
  best other logit (float64; above the tie tolerance when the fact is stored).

A tie is what the tie rule of the decode kernel says it is (:func:`constructions.decode.tie_tolerance`,
docs/testing.md): a margin at most ``TIE_ULPS * eps(dtype) * scale``, with ``scale`` a bound on
the magnitude of the fact's logits, so a margin that rounding leaves at +1e-16 is a tie, and an
error. A model may also answer ``model.tie_tolerances(facts)``, the tolerance of every fact
(float64), so that a check (``verify.testing.check_fact_model``) judges its margins at the scale
of its own logits; ``verify.fact_check.ModuleFactModel`` gives the four answers for a torch module
or a callable that maps facts to logits.

The geometric block model (:class:`constructions.geometric.single_hop.BlockModel`) and the
fact-storing MLP (:class:`constructions.fact_mlp.facts.FactMLP`) implement it on the chunked
decode kernel of :mod:`constructions.decode`, so every number agrees with the claims'
measurements (docs/README.md). The forms ``facts`` may take:

- a :class:`constructions.fact_mlp.facts.FactSet` (keys, values, fact map): the facts of a MLP;
- a relation table, an int array (R, N) whose row r is the bijection pi_r: the N*R facts
  (s, r) -> pi_r(s) of a block model, subject major and relation minor (the order of
  :func:`constructions.tasks.single_hop_dataset`);
- a triple ``(subjects, relations, targets)`` of equal-length int arrays: some facts of a block
  model.

This module's functions work on any object with the three methods, so a user's own model can
use them, and the assertions of :mod:`verify.testing`, by implementing them.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Protocol, Tuple, Union, runtime_checkable

import numpy as np

from constructions.fact_mlp.facts import FactSet
from constructions.search import smallest_size

__all__ = [
    "FactModel",
    "Facts",
    "accuracy",
    "describe_fact",
    "fact_targets",
    "margins",
    "smallest_storing_size",
]


#: The forms ``facts`` may take (module docstring): a fact set, a relation table (R, N), or a
#: triple (subjects, relations, targets).
Facts = Union[FactSet, np.ndarray, Tuple[Any, Any, Any]]


@runtime_checkable
class FactModel(Protocol):
    """What a fact-storing model offers: ``decode``, ``accuracy`` and ``margins`` over facts
    (ties are errors under the decode kernel's tie rule; module docstring). The optional
    ``tie_tolerances(facts)`` is not part of the protocol's check.

    >>> import numpy as np
    >>> from constructions import build_block_model, make_bijections
    >>> perms = make_bijections(8, 2, np.random.default_rng(0))
    >>> isinstance(build_block_model(perms, 6, rng=np.random.default_rng(1)), FactModel)
    True
    """

    def decode(self, facts: Facts) -> np.ndarray:
        """The decoded value index of every fact (-1 for a tie)."""
        ...

    def accuracy(self, facts: Facts | None = None) -> float:
        """The fraction of facts decoded correctly (ties are errors)."""
        ...

    def margins(self, facts: Facts | None = None) -> np.ndarray:
        """The decoding margin of every fact (float64)."""
        ...


def fact_targets(facts: Facts) -> np.ndarray:
    """The value index each fact must decode to, for any form of ``facts`` (module docstring).

    >>> import numpy as np
    >>> fact_targets(np.array([[1, 0, 2], [2, 1, 0]])).tolist()  # (s, r): pi_r(s), s major
    [1, 2, 0, 1, 2, 0]
    >>> fact_targets(([0, 2], [1, 0], [1, 2])).tolist()
    [1, 2]
    >>> fact_targets("facts")
    Traceback (most recent call last):
    ...
    TypeError: facts must be a FactSet, a relation table (an int array of shape (R, N)) or a triple (subjects, relations, targets) of int arrays; got str 'facts'
    """
    fact_map = getattr(facts, "fact_map", None)
    if fact_map is not None:
        return np.asarray(fact_map, dtype=np.int64)
    if isinstance(facts, tuple):
        return np.asarray(_triple(facts)[2], dtype=np.int64)
    from constructions.tasks import single_hop_dataset

    return single_hop_dataset(_table_form(facts))[2]


def _table_form(facts: Any) -> np.ndarray:
    """``facts`` as an array when it can be a relation table, numbers in rows (its shape and its
    rows are checked by :func:`constructions.tasks.check_bijections`): text, a mapping, None or
    an array of anything but numbers is a TypeError naming the forms ``facts`` may take.

    >>> _table_form([[1, 0, 2]]).shape
    (1, 3)
    >>> _table_form({"a": 1})
    Traceback (most recent call last):
    ...
    TypeError: facts must be a FactSet, a relation table (an int array of shape (R, N)) or a triple (subjects, relations, targets) of int arrays; got dict {'a': 1}
    """
    import reprlib

    def wrong() -> TypeError:
        return TypeError(
            "facts must be a FactSet, a relation table (an int array of shape (R, N)) or a triple "
            f"(subjects, relations, targets) of int arrays; got {type(facts).__name__} {reprlib.repr(facts)}"
        )

    if facts is None or isinstance(facts, (str, bytes, dict, set)):
        raise wrong()
    try:
        table = np.asarray(facts)
    except ValueError as exc:  # rows of different lengths
        raise ValueError(f"facts: a relation table must be an int array of shape (R, N): {exc}") from None
    if table.dtype.kind not in "iuf":
        raise wrong()
    return table


def describe_fact(facts: Facts, index: int) -> str:
    """A short name of fact ``index`` of ``facts``: its subject and relation for a relation table
    or a triple, its key for a fact set.

    >>> import numpy as np
    >>> describe_fact(np.array([[1, 0, 2], [2, 1, 0]]), 3)
    'fact 3 (subject 1, relation 1)'
    """
    i = int(index)
    if getattr(facts, "fact_map", None) is not None:
        return f"fact {i} (keys[{i}])"
    if isinstance(facts, tuple):
        subj, rel, _ = _triple(facts)
    else:
        from constructions.tasks import single_hop_dataset

        subj, rel, _ = single_hop_dataset(facts)
    return f"fact {i} (subject {int(subj[i])}, relation {int(rel[i])})"


def _triple(facts: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if len(facts) != 3:
        raise ValueError(f"a fact triple is (subjects, relations, targets), got {len(facts)} arrays")
    subj, rel, target = (np.asarray(a) for a in facts)
    if not (subj.ndim == rel.ndim == target.ndim == 1 and len(subj) == len(rel) == len(target)):
        raise ValueError(
            "subjects, relations and targets must be 1-D arrays of one length, got shapes "
            f"{subj.shape}, {rel.shape}, {target.shape}"
        )
    for name, a in (("subjects", subj), ("relations", rel), ("targets", target)):
        if len(a) and not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"{name} must hold integer ids")
    return subj.astype(np.int64), rel.astype(np.int64), target.astype(np.int64)


def accuracy(model: FactModel, facts: Facts | None = None) -> float:
    """The fraction of ``facts`` that ``model`` decodes correctly (a tie is an error); ``facts``
    None means the facts the model was built for.

    >>> import numpy as np
    >>> from constructions import build_block_model, make_bijections
    >>> perms = make_bijections(8, 2, np.random.default_rng(0))
    >>> model = build_block_model(perms, 6, rng=np.random.default_rng(1))
    >>> accuracy(model, perms), accuracy(model, perms[::-1])
    (1.0, 0.125)
    """
    return float(model.accuracy(facts))


def margins(model: FactModel, facts: Facts | None = None) -> np.ndarray:
    """The decoding margin of every fact: the logit of its value minus the best other logit.

    >>> import numpy as np
    >>> from constructions import build_block_model, make_bijections
    >>> perms = make_bijections(8, 2, np.random.default_rng(0))
    >>> model = build_block_model(perms, 6, rng=np.random.default_rng(1))
    >>> m = margins(model, perms)
    >>> m.shape, bool(m.min() > 0)
    ((16,), True)
    """
    return np.asarray(model.margins(facts), dtype=np.float64)


def smallest_storing_size(
    build: Callable[[int], FactModel], sizes: Iterable[int], facts: Facts | None = None
) -> int | None:
    """The smallest size in ``sizes`` whose model ``build(size)`` decodes every fact (accuracy 1),
    by bisection over the sorted sizes (:func:`constructions.search.smallest_size`: it assumes
    that a size that stores, stores at every larger size); None when even the largest does not.
    ``facts`` None means each model's own. More than
    :data:`constructions.search.MAX_CANDIDATES` sizes is a ValueError naming ``sizes`` (raised
    before they are listed).

    >>> import numpy as np
    >>> from constructions import build_block_model, make_bijections
    >>> perms = make_bijections(64, 2, np.random.default_rng(0))
    >>> def build(d0):
    ...     return build_block_model(perms, d0, code_kind="rademacher_distinct",
    ...                              rng=np.random.default_rng(d0))
    >>> smallest_storing_size(build, range(1, 12))  # 64 distinct sign patterns need d0 = 6
    6
    """
    return smallest_size(sizes, lambda size: accuracy(build(size), facts) == 1.0).size
