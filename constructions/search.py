"""The one search for "the smallest size that stores" (docs/README.md, "Searches").

Every search of the registry and the atlas asks the same question: over candidate sizes (a code
dimension, a width, an embedding dimension, a bank size), which is the smallest at which a model
stores its facts? The answer depends on a *stores* predicate, which holds the draws and the rule
over them (every draw, k of n draws, a margin reached), and on a *strategy*:

- ``"bisect"``: binary search over the sorted sizes, assuming that a size that stores stores at
  every larger size. The sizes below the smallest candidate are taken not to store. With
  ``top_stores=True`` the largest candidate is taken to store and is probed only when the answer
  depends on it (it is then checked, and the search gives None if it does not store): the form
  for an interval whose lower end is known to fail and whose upper end is costly.
- ``"scan"``: the sizes in the given order, stopping at the first that stores (no monotonicity
  assumed below the answer; the sizes above it are not probed).

:func:`smallest_size_geometric` is the same question over an integer range too wide to list (a
number of training samples from 10 to 10^7): the range's ends first, then geometric midpoints,
until the bracket's ratio is small enough.

:class:`Bisection` is the bisection's state, one probe at a time, for searches that run many at
once (one per draw, batched as one model). The probes are the same as :func:`smallest_size`'s.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

__all__ = ["Bisection", "Search", "smallest_size", "smallest_size_geometric", "STRATEGIES"]

STRATEGIES = ("bisect", "scan")

#: The most candidate sizes a bisection lists (it sorts them and checks that they are distinct,
#: about 100 bytes of memory per candidate: 10^6 candidates take about 100 MB, and bisect in 20
#: probes). More is a ValueError naming the count, raised before any is listed; an integer range
#: too wide to list is :func:`smallest_size_geometric`'s (10 to 10^7 samples in a few dozen
#: probes). A scan reads its sizes one at a time and has no such limit.
MAX_CANDIDATES = 10**6


@dataclass(frozen=True)
class Search:
    """A search's answer: the smallest storing size (None when no candidate stores) and every
    probe in the order made, as (size, stored).

    >>> Search(4, ((8, True), (4, True), (2, False), (3, False))).probed
    (8, 4, 2, 3)
    >>> Search(4, ((8, True), (4, True), (2, False), (3, False))).below
    3
    """

    size: int | None
    tried: tuple[tuple[int, bool], ...]

    @property
    def probed(self) -> tuple[int, ...]:
        return tuple(s for s, _ in self.tried)

    @property
    def below(self) -> int | None:
        """The largest probed size below the answer that does not store (the lower end of the
        answer's bracket; every probe when none stores), None when there is none."""
        return max(
            (s for s, ok in self.tried if not ok and (self.size is None or s < self.size)), default=None
        )


@dataclass
class Bisection:
    """Binary search over sorted candidate sizes, one probe at a time: ``probe`` is the next size to
    try (None when done), ``record(stored)`` gives its outcome, ``size`` the answer once done.

    >>> b = Bisection([1, 2, 3, 4, 5, 6, 7, 8])
    >>> while b.probe is not None:
    ...     b.record(b.probe >= 6)
    >>> b.size, b.tried
    (6, [(4, False), (6, True), (5, False)])
    """

    sizes: Sequence[int]
    top_stores: bool = False
    tried: list = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sizes = _sorted_sizes(self.sizes)
        # open interval (lo, hi) of indices: lo does not store, hi stores (n: above every size)
        self._lo = -1
        self._hi = len(self.sizes) - 1 if self.top_stores else len(self.sizes)
        self._checked_top = not self.top_stores
        self._top_failed = False

    @property
    def probe(self) -> int | None:
        if self._top_failed:
            return None
        if self._hi - self._lo > 1:
            return self.sizes[(self._lo + self._hi) // 2]
        if not self._checked_top and self._hi == len(self.sizes) - 1:
            return self.sizes[self._hi]
        return None

    def record(self, stored: bool) -> None:
        size = self.probe
        if size is None:
            raise ValueError("the bisection is finished: there is no probe to record")
        self.tried.append((size, bool(stored)))
        if self._hi - self._lo > 1:
            mid = (self._lo + self._hi) // 2
            self._lo, self._hi = (self._lo, mid) if stored else (mid, self._hi)
        else:  # the assumed top, checked
            self._checked_top = True
            self._top_failed = not stored

    @property
    def size(self) -> int | None:
        if self.probe is not None:
            raise ValueError("the bisection is not finished: record the pending probes first")
        if self._top_failed or self._hi == len(self.sizes):
            return None
        return self.sizes[self._hi]


def smallest_size(
    sizes: Iterable[int],
    stores: Callable[[int], bool],
    strategy: str = "bisect",
    top_stores: bool = False,
) -> Search:
    """The smallest size in ``sizes`` at which ``stores(size)`` holds, by ``strategy`` (module
    docstring); ``stores`` is called once per probed size. A bisection over more than
    :data:`MAX_CANDIDATES` sizes is a ValueError naming ``sizes``, raised before they are listed.

    >>> smallest_size(range(1, 17), lambda d: d >= 11)
    Search(size=11, tried=((8, False), (12, True), (10, False), (11, True)))
    >>> smallest_size([2, 3, 4, 5], lambda d: d in (3, 5), strategy="scan").size
    3
    >>> smallest_size(range(1, 9), lambda d: False).size is None
    True
    >>> smallest_size(range(1, 10**12), lambda d: d >= 11)
    Traceback (most recent call last):
    ...
    ValueError: sizes holds 999,999,999,999 candidate sizes, above the budget of a bisection, constructions.search.MAX_CANDIDATES = 1,000,000 (about 100 bytes each when listed and sorted); give fewer sizes, or search a range too wide to list with smallest_size_geometric(low, high, stores, ratio)
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    if strategy == "scan":
        if top_stores:
            raise ValueError("top_stores is a bisection's assumption; a scan probes every size it needs")
        tried = []
        for size in sizes:
            tried.append((int(size), bool(stores(size))))
            if tried[-1][1]:
                return Search(int(size), tuple(tried))
        return Search(None, tuple(tried))
    search = Bisection(sizes, top_stores=top_stores)  # type: ignore[arg-type]
    while search.probe is not None:
        search.record(stores(search.probe))
    return Search(search.size, tuple(search.tried))


def smallest_size_geometric(low: int, high: int, stores: Callable[[int], bool], ratio: float) -> Search:
    """The smallest integer size in [low, high] at which ``stores`` holds, to a ratio: ``high`` is
    probed first (size None when it does not store), then ``low`` (the answer when it stores), then
    the rounded geometric midpoints of the bracket (below, size] until size / below <= ``ratio`` or
    the midpoint rounds onto an end. ``size`` stores and ``below`` does not (None when ``low``
    stores, ``high`` when nothing stores); the true smallest size lies in (below, size] when storing
    is monotone.

    >>> found = smallest_size_geometric(10, 10**7, lambda n: n >= 5000, ratio=1.1)
    >>> found.below, found.size, found.size / found.below <= 1.1
    (4958, 5233, True)
    >>> found.probed[:3]
    (10000000, 10, 10000)
    """
    low, high = int(low), int(high)
    if not 0 < low < high or not ratio > 1:
        raise ValueError(f"a geometric search needs 0 < low < high and ratio > 1, got {low}, {high}, {ratio}")
    tried = [(high, bool(stores(high)))]
    if not tried[-1][1]:
        return Search(None, tuple(tried))
    tried.append((low, bool(stores(low))))
    if tried[-1][1]:
        return Search(low, tuple(tried))
    lo, hi = low, high
    while hi / lo > ratio:
        mid = int(round(math.sqrt(lo * hi)))
        if mid in (lo, hi):
            break
        tried.append((mid, bool(stores(mid))))
        lo, hi = (lo, mid) if tried[-1][1] else (mid, hi)
    return Search(hi, tuple(tried))


def _sorted_sizes(sizes: Iterable[int]) -> list[int]:
    """The candidate sizes sorted, checked: at least one, all distinct, at most
    :data:`MAX_CANDIDATES` (counted before they are listed where ``sizes`` has a length)."""
    try:
        count, held = len(sizes), None  # type: ignore[arg-type]
    except TypeError:  # an iterator: read one more than the budget, no further
        sizes = list(itertools.islice(sizes, MAX_CANDIDATES + 1))
        count, held = len(sizes), f"more than {MAX_CANDIDATES:,}"
    if count > MAX_CANDIDATES:
        raise ValueError(
            f"sizes holds {held or f'{count:,}'} candidate sizes, above the budget of a bisection, "
            f"constructions.search.MAX_CANDIDATES = {MAX_CANDIDATES:,} (about 100 bytes each when "
            "listed and sorted); give fewer sizes, or search a range too wide to list with "
            "smallest_size_geometric(low, high, stores, ratio)"
        )
    out = sorted(int(s) for s in sizes)
    if not out:
        raise ValueError("a search needs at least one candidate size")
    if len(set(out)) != len(out):
        raise ValueError(f"candidate sizes must be distinct, got {out}")
    return out
