"""The must-fail bracket as a criterion object (part of :mod:`verify.criteria`, which re-exports
it; README.md#kinds-of-claim-controls-and-verdicts-over-seeds).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from verify.criteria_base import Judgement


@dataclass(frozen=True)
class Bracket:
    """A must-fail bracket: the guarantee breaks at ``below`` and holds at ``above`` around the
    theory's ``boundary`` (a size, a dimension, an inverse temperature: any positive scale).

    The resolution is max(boundary/below, above/boundary): how far from the boundary the two
    sides were tested. The rule asks for at most 2 (``max_factor``); a wider bracket is reported
    coarse. ``closed=True`` is for a condition that includes its boundary (the guarantee holds
    at the boundary itself): the hold side may then be the boundary, the sharpest test there is. ``judge(breaks_below, holds_above)`` gives pass when both sides behave, fail otherwise.

    >>> b = Bracket("d0", boundary=6.29, below=4, above=9)
    >>> round(b.factor, 2), b.coarse
    (1.57, False)
    >>> b.judge(True, True).verdict, b.judge(True, False).verdict
    ('pass', 'fail')
    >>> Bracket("H", boundary=16, below=15, above=16, closed=True).coarse
    False
    """

    quantity: str
    boundary: float
    below: float
    above: float
    max_factor: float = 2.0
    closed: bool = False

    def __post_init__(self):
        if not 0 < self.below < self.above:
            raise ValueError(
                f"bracket of {self.quantity}: need 0 < below < above (got {self.below}, {self.above})"
            )
        if self.boundary <= 0:
            raise ValueError(
                f"bracket of {self.quantity}: the boundary must be positive (got {self.boundary})"
            )

    @property
    def factor(self) -> float:
        return max(self.boundary / self.below, self.above / self.boundary)

    @property
    def straddles(self) -> bool:
        """below < boundary < above; with ``closed`` (the theory's condition holds AT the
        boundary, e.g. H d >= F) the hold side may sit on the boundary itself."""
        if self.closed:
            return self.below < self.boundary <= self.above
        return self.below < self.boundary < self.above

    @property
    def coarse(self) -> bool:
        return not self.straddles or self.factor > self.max_factor

    def judge(self, breaks_below: bool, holds_above: bool) -> Judgement:
        verdict = "pass" if breaks_below and holds_above else "fail"
        text = (
            f"{self.quantity} = {self.below:.4g} (breaks) and {self.above:.4g} (holds) around the "
            f"boundary {self.boundary:.4g}: within a factor {self.factor:.3g}"
        )
        if not self.straddles:
            text += " (does not straddle the boundary)"
        if verdict == "fail":
            found = ([] if breaks_below else [f"does not break at {self.below:.4g}"]) + (
                [] if holds_above else [f"does not hold at {self.above:.4g}"]
            )
            text += "; measured: it " + " and ".join(found)
        return Judgement(
            verdict,
            {
                "boundary": self.boundary,
                "below": self.below,
                "above": self.above,
                "breaks_below": True,
                "holds_above": True,
            },
            {"breaks_below": bool(breaks_below), "holds_above": bool(holds_above)},
            {
                "rule": "bracket",
                "value": self.factor,
                "kind": "bracket_factor",
                "unit": "ratio (dimensionless)",
                "coarse": self.coarse,
                "text": text,
            },
        )

    def details(self, bound: str, breaks_by: str) -> dict:
        """The record's ``details["bracket"]``: where "it breaks" was measured (below) and where it
        does not (above), around the boundary of the cited ``bound`` (docs/verdicts.md).

        >>> Bracket("d", boundary=40, below=27, above=60).details("fact_mlp.cover", "acc < 0.95")["factor"]
        1.5
        """
        return {
            "bound": str(bound),
            "quantity": self.quantity,
            "boundary": float(self.boundary),
            "below": float(self.below),
            "above": float(self.above),
            "factor": float(self.factor),
            "breaks_by": str(breaks_by),
        }

    def judge_side(self, side: str, breaks_below: bool, breaks_above: bool) -> Judgement:
        """A must-fail claim (``side="below"``) and its control (``side="above"``) from one
        measurement of both points. Below: :meth:`judge`, the guarantee holding above where the
        demonstration's criterion ("it breaks") does not. Above: that criterion read at the above
        point, so the control fails as required exactly when the guarantee holds there.

        >>> b = Bracket("d0", boundary=6.29, below=4, above=9)
        >>> b.judge_side("below", True, False).verdict, b.judge_side("above", True, False).verdict
        ('pass', 'fail')
        """
        if side == "below":
            return self.judge(breaks_below, not breaks_above)
        if side != "above":
            raise ValueError(f"side must be 'below' or 'above', not {side!r}")
        resolution = self.judge(breaks_below, not breaks_above).resolution
        text = f"{self.quantity} = {self.above:.4g}, above the boundary {self.boundary:.4g}: "
        return Judgement(
            "pass" if breaks_above else "fail",
            {"boundary": self.boundary, "above": self.above, "breaks_above": "must not (control)"},
            {"breaks_above": bool(breaks_above)},
            {**dict(resolution), "text": text + ("breaks" if breaks_above else "holds")},
        )

    def side_read(
        self,
        side: str,
        verdict: str,
        breaks_below: bool,
        breaks_above: bool,
        reads: Mapping[object, Judgement],
    ) -> Judgement:
        """:meth:`judge_side` when each point's "it breaks" is itself read by a criterion with an
        inconclusive band (``reads``: one judgement per point read, e.g. a 95% interval per point):
        ``verdict`` is the side's verdict from those reads, the measurement and the resolution's
        text join every read's, and an inconclusive verdict carries the first inconclusive read's
        budget. ``breaks_below`` / ``breaks_above``: whether each side's read passed.

        >>> from verify.criteria import Threshold
        >>> b = Bracket("rho", boundary=0.35, below=0.3, above=0.4)
        >>> reads = {0.3: Threshold("x", 0.0, "<", "theory").judge(-1.0),
        ...          0.4: Threshold("x", 0.0, "<", "theory").judge(1.0)}
        >>> j = b.side_read("below", "pass", True, False, reads)
        >>> j.verdict, j.resolution["text"].count("; ")
        ('pass', 2)
        """
        base = self.judge_side(side, breaks_below, breaks_above)
        measured = {**base.measured, **{k: v for r in reads.values() for k, v in r.measured.items()}}
        text = base.resolution["text"] + "".join(f"; {r.resolution['text']}" for r in reads.values())
        budget = next((r.budget for r in reads.values() if r.verdict == "inconclusive"), None)
        return Judgement(
            verdict,
            base.predicted,
            measured,
            {**base.resolution, "text": text},
            budget if verdict == "inconclusive" else None,
        )
