"""The generic simulator of :mod:`verify.oc`: any claim whose criterion is built from the
criterion objects of :mod:`verify.criteria` (README.md, "Kinds of claim, controls and verdicts
over seeds") with at least one part that varies with the seed.

The claim's criterion is rebuilt from its stored record, part by part (the leaves of its
:func:`verify.criteria.all_of` tree): an :class:`~verify.criteria.EverySeed` or
:class:`~verify.criteria.KOfN` rule over seeds or draws, a :class:`~verify.criteria.Threshold` on a
95% interval over seeds, a Threshold on a point or an :class:`~verify.criteria.Agreement`
(deterministic parts, held at their stored value). A Threshold on a point that is a *summary* of
per-seed values, their mean over the seeds (a mean accuracy, a pooled value), is no deterministic
part: it is found by its stored value, the mean of a part's per-seed values (it then summarises
that part's draws) or of a per-seed list the record's details store (one value per seed of the
claim's parameters ``seeds``, ``draws`` or ``n_seeds``; drawn as that list's mean and spread),
and on each draw it is computed from the per-seed values drawn, never held at its stored value
(:func:`summaries`). A rebuilt part must give back, on the stored measurement, the stored
resolution's text and value exactly; otherwise the claim is not covered. Every draw is judged by
the rebuilt objects' own ``judge`` and combined by ``all_of``, so the rule is never written a
second time here.

What the laws are (a threshold names a side, not a value, so the theory's law is the record):

A :class:`~verify.criteria.Sequential` part is drawn at its cap (its last look) and judged by its
own rule, which stops at the first look that decides: the rates are those of the whole staged
procedure, optional stopping included; at more seeds its looks are continued to the new cap.

* ``as measured`` (the theory): each part's per-seed values drawn from a normal with the record's
  per-seed mean and spread (sd, ddof 1), 0/1 values from a Bernoulli with the measured fraction;
  an interval part's per-seed sd is read back from its 95% Student-t interval and the seed count of
  the claim's parameters (``seeds``, else ``draws``);
* ``control <name>`` (the hypothesis dropped): each part drawn from that control's own stored
  value at the part's place, read by the control's own name for it (a control may measure its
  own quantity: another evaluation, routing or width; :func:`control_value`), at its mean and its
  own spread where it has one, else the record's. A part where the control stores no value of its
  own is drawn as measured, and the characteristic says so: its ``noise["controls"]`` names, for
  each control, the quantity each part was read from and why any part was drawn as measured (a
  control with no value for any part is not a law, and is listed as not simulated);
* ``<part> at the threshold`` (the nearest violating value), one for each part of the
  criterion that varies: that part's mean placed on its own threshold with the record's spread,
  the other parts as measured. A summary part is placed on its threshold by drawing the per-seed
  values it summarises with their mean there; a part over the same per-seed values is judged on
  that same draw (one measurement judged by two parts, as the claim judges it). Only for a part
  whose values vary (sd > 0, not 0/1; a summary of 0/1 values at a threshold strictly between 0
  and 1): a part measured the same on every seed gives no spread to place there.

A claim none of whose parts varies with the seed is not covered (the record shows no noise to
draw from), nor is one with a part this module cannot rebuild (an interval test, a bracket, a
rule over grid points whose values are not replicates).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import numpy as np

from verify.oc.simulators import NotCovered, Setup

#: a seed rule that names a 95% Student-t interval over seeds (the only interval read back here)
T_INTERVAL = re.compile(r"student-t|\bt[- ]intervals?\b", re.IGNORECASE)

#: the units of a rule over seeds whose values are replicates of one random experiment
REPLICATES = ("seeds", "draws", "paired draws", "instances")


@dataclass(frozen=True)
class Part:
    """One leaf of a claim's criterion: the rebuilt ``rule``, how it is measured (``form``:
    "seeds" per-seed values, "interval" a t-interval over ``n`` seeds, "summary" a point that is
    the mean of ``n`` per-seed values, "fixed" a stored value) and the record's per-seed ``mean``
    and ``sd`` (``binary``: 0/1 values, drawn as Bernoulli). A summary of another part's per-seed
    values names that part in ``of`` and is computed from its draw.

    >>> from verify.criteria import EverySeed
    >>> p = Part("r2", EverySeed("r2", 0.3), "seeds", 3, 0.6, 0.01)
    >>> p.judge(np.random.default_rng(0), 0.6, 0.01).verdict
    'pass'
    """

    name: str
    rule: object
    form: str
    n: int = 1
    mean: float = 0.0
    sd: float = 0.0
    binary: bool = False
    stored: object = None
    unit: str = "seeds"
    of: str | None = None
    values_from: str = ""

    @property
    def varies(self) -> bool:
        """Whether the part's draws differ from seed to seed (an interval, a spread, a fraction
        strictly between 0 and 1)."""
        return self.form == "interval" or (
            self.form in ("seeds", "summary") and (self.sd > 0 if not self.binary else 0 < self.mean < 1)
        )

    def draw(self, rng: np.random.Generator, mean: float, sd: float, stored=None) -> np.ndarray:
        """``n`` per-seed values of a part over seeds or a summary: normal at ``mean`` and ``sd``,
        Bernoulli at ``mean`` for 0/1 values, or ``stored`` values resampled.

        >>> from verify.criteria import Threshold
        >>> Part("m", Threshold("m", 0.5), "summary", 4, binary=True).draw(
        ...     np.random.default_rng(0), 1.0, 0.0).tolist()
        [1.0, 1.0, 1.0, 1.0]
        """
        if stored is not None:  # a control's non-finite values: resampled as they are
            return rng.choice(np.asarray(stored, dtype=float), self.n)
        if self.binary:
            return (rng.random(self.n) < mean).astype(float)
        return mean + sd * rng.standard_normal(self.n)

    def judge_values(self, x: np.ndarray):
        """The rule's own judgement of drawn per-seed values ``x``: a rule over seeds judges each,
        a summary judges their mean.

        >>> from verify.criteria import Threshold
        >>> Part("m", Threshold("m", 0.99), "summary", 2).judge_values(np.array([0.98, 0.99])).verdict
        'fail'
        """
        if self.form == "summary":
            return self.rule.judge(float(np.mean(x)))
        return self.rule.judge(np.asarray(x).tolist(), seeds=list(range(len(x))))

    def judge(self, rng: np.random.Generator, mean: float, sd: float, stored=None):
        """The rule's own judgement of one draw at ``mean`` and ``sd`` (a fixed part: of
        ``stored``, else the record's value; a part over seeds given ``stored`` values: those
        values resampled; a summary: the mean of its drawn per-seed values).

        >>> from verify.criteria import Threshold
        >>> Part("x", Threshold("x", 1.0), "fixed", stored=2.0).judge(None, 0.0, 0.0).verdict
        'pass'
        """
        if self.form == "fixed":
            return self.rule.judge(self.stored if stored is None else stored)
        if self.form == "interval":
            from verify.measure import t_interval

            x = mean + sd * rng.standard_normal(self.n)
            return self.rule.judge(list(t_interval(x)), seeds=self.n)
        return self.judge_values(self.draw(rng, mean, sd, stored))


def _side_value(text: str) -> tuple[str, float]:
    side, rest = str(text).split(" ", 1)
    return side, float(rest.split(" ", 1)[0])


def _rebuilt(candidates, measurement, res) -> object:
    """The first candidate rule whose judgement of the stored measurement gives back the stored
    resolution's text and value."""
    for rule in candidates:
        try:
            j = rule.judge(measurement) if not isinstance(measurement, tuple) else rule.judge(*measurement)
        except ValueError:
            continue
        value, stored = j.resolution.get("value"), res.get("value")
        same = value == stored or (
            isinstance(value, (int, float))
            and isinstance(stored, (int, float))
            and math.isclose(value, stored, rel_tol=1e-9, abs_tol=1e-12)
        )
        if j.resolution.get("text") == res.get("text") and same:
            return rule
    raise NotCovered(f"the record's criterion could not be rebuilt exactly ({res.get('text', '')[:80]})")


def _spread(vals) -> tuple[float, float, bool]:
    x = np.asarray(vals, dtype=float)
    binary = bool(np.all((x == 0) | (x == 1)))
    return float(x.mean()), float(x.std(ddof=1)) if len(x) > 1 else 0.0, binary


def _part(name: str, res: Mapping, meas, pred, n0) -> Part:
    from verify.criteria import Agreement, EverySeed, IntervalTest, KOfN, Sequential, Threshold

    rule = res.get("rule")
    where = f"part {name or '(whole)'}"
    if rule == "bracket":
        raise NotCovered(
            f"{where}: a bracket of two verdicts (breaks below, holds above); the record keeps no "
            "per-seed spread of either side in the criterion's form"
        )
    if rule in ("interval_test", "threshold") and not (isinstance(n0, int) and n0 >= 2):
        if rule == "interval_test" or _is_interval(meas):
            raise NotCovered(
                f"{where}: no Student-t interval over a seed count (params seeds, draws or n_seeds "
                ">= 2 and a seed rule naming a t-interval) to read the interval's spread from"
            )
    if not isinstance(meas, dict) or not isinstance(pred, dict):
        raise NotCovered(f"{where}: the record's measurement is not stored in the criterion's form")
    qs = [k for k in pred if k in meas and k not in ("threshold_source", "tolerance_source")]
    if len(qs) != 1:
        raise NotCovered(f"{where}: the record's measurement is not stored in the criterion's form")
    q = qs[0]
    value = meas[q]
    if rule in ("every_seed", "k_of_n"):
        units = [k for k in meas if k not in (q, "cleared")]
        if len(units) != 1 or not isinstance(value, list) or not value:
            raise NotCovered(f"part {name or '(whole)'}: no per-seed values stored")
        unit, labels = units[0], meas[units[0]]
        if unit not in REPLICATES:
            raise NotCovered(
                f"part {name or '(whole)'}: a rule over {unit}, whose values are not replicates "
                "(no spread to draw from)"
            )
        side, thr = _side_value(pred[q])
        src = pred.get("threshold_source", "theory")
        if rule == "every_seed":
            i = labels.index(res["worst_seed"]) if res.get("worst_seed") in labels else 0
            exact = value[i] - (1.0 if side in (">=", ">") else -1.0) * float(res["value"])
            cands = [EverySeed(q, v, side, src, unit) for v in (thr, exact)]
        else:
            k = int(pred[q].split(" on at least ", 1)[1].split(" ", 1)[0])
            cands = [KOfN(q, thr, side, k, src, unit)]
        built = _rebuilt(cands, (value, labels), res)
        if not np.all(np.isfinite(np.asarray(value, dtype=float))):
            raise NotCovered(f"part {name or '(whole)'}: a per-seed value is not finite in the record")
        mean, sd, binary = _spread(value)
        return Part(name, built, "seeds", len(value), mean, sd, binary, unit=unit)
    if rule == "sequential":
        unit = res.get("over", "seeds")
        labels = meas.get(unit)
        if not isinstance(value, list) or not value or not isinstance(labels, list):
            raise NotCovered(f"{where}: no per-seed values stored")
        if unit not in REPLICATES:
            raise NotCovered(f"{where}: a sequential rule over {unit}, whose values are not replicates")
        side, thr = _side_value(pred[q])
        src = pred.get("threshold_source", "theory")
        looked = meas.get("looks") or [{}]
        lo, hi = (looked[-1].get("bounds") or [thr, thr])[:2]
        near = lo if side in (">=", ">") else hi
        # the printed threshold is rounded: the exact one is the stopping look's near bound less the
        # clearance (a pass), as for EverySeed's worst seed
        exact = near - (1.0 if side in (">=", ">") else -1.0) * float(res.get("value") or 0.0)
        cands = [
            Sequential(q, t, side, src, tuple(res["looks"]), float(res["alpha"]), unit) for t in (thr, exact)
        ]
        built = _rebuilt(cands, (value, labels), res)
        mean, sd, binary = _spread(value)
        # drawn at the cap: the rule stops at the first look that decides, as the claim does
        return Part(name, built, "seeds", built.cap, mean, sd, binary, unit=unit)
    if rule == "threshold":
        side, thr = _side_value(pred[q])
        src = pred.get("threshold_source", "theory")
        interval = isinstance(value, list) and len(value) == 2 and value[1] > value[0]
        lo = value[0] if isinstance(value, list) else value
        near = lo if side in (">=", ">") else (value[1] if isinstance(value, list) else value)
        exact = near - (1.0 if side in (">=", ">") else -1.0) * float(res.get("value") or 0.0)
        cands = [Threshold(q, v, side, src) for v in (thr, exact)]
        if not interval:
            return Part(name, _rebuilt(cands, value, res), "fixed", stored=value)
        built = _rebuilt([_AtSeeds(c, n0) for c in cands], value, res).rule
        return Part(name, built, "interval", n0, (value[0] + value[1]) / 2, _t_sd(value, n0))
    if rule == "interval_test":
        if not _is_interval({q: value}):
            raise NotCovered(f"{where}: an interval test on a point")
        text, alts = str(pred[q]), dict(pred.get("alternatives") or {})
        head, name_part = text.removeprefix("interval contains ").split(" ", 1)
        theory_name = name_part.strip("()")
        step = float(res["value"]) if isinstance(res.get("value"), (int, float)) else 0.0
        exact = [float(v) + sign * step for v in alts.values() for sign in (1.0, -1.0)]
        cands = [IntervalTest(q, t, alts, theory_name) for t in (float(head), *exact)]
        built = _rebuilt([_AtSeeds(c, n0) for c in cands], value, res).rule
        return Part(name, built, "interval", n0, (value[0] + value[1]) / 2, _t_sd(value, n0))
    if rule == "agreement":
        op, tol = _side_value(pred[q])
        src = pred.get("tolerance_source", "convention")
        cands = [Agreement(q, tol, "convention" if src == "exact" else src, op == "<")]
        return Part(name, _rebuilt(cands, value, res), "fixed", stored=value)
    raise NotCovered(f"part {name or '(whole)'}: a {rule} rule (not a threshold or a rule over seeds)")


def _is_interval(meas) -> bool:
    value = next(iter(meas.values()), None) if isinstance(meas, dict) and len(meas) == 1 else None
    return isinstance(value, list) and len(value) == 2 and value[1] > value[0]


def _t_sd(interval, n: int) -> float:
    """The per-seed sd behind a 95% Student-t interval of the mean over ``n`` seeds."""
    from scipy import stats

    return (interval[1] - interval[0]) / 2 * math.sqrt(n) / float(stats.t.ppf(0.975, n - 1))


@dataclass(frozen=True)
class _AtSeeds:
    """A Threshold judged with its interval's seed count (the budget text depends on it)."""

    rule: object
    n: int

    def judge(self, measured):
        return self.rule.judge(measured, seeds=self.n)


def _tree(res: Mapping, meas, pred, n0, path=()):
    """The claim's criterion as a tree: a Part at a leaf, {name: subtree} under an all_of."""
    if res.get("rule") == "all_of":
        meas = meas if isinstance(meas, dict) else {}
        pred = pred if isinstance(pred, dict) else {}
        return {
            name: _tree(part, meas.get(name), pred.get(name), n0, (*path, name))
            for name, part in (res.get("parts") or {}).items()
        }
    return _part(".".join(path), res, meas, pred, n0)


def _flat(tree) -> list[Part]:
    return [tree] if isinstance(tree, Part) else [p for sub in tree.values() for p in _flat(sub)]


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _per_seed_list(v, count) -> bool:
    """Whether ``v`` is a list of ``count`` (>= 2) finite numbers that are not all equal."""
    if not isinstance(v, list) or len(v) < 2 or len(v) != count or not all(_number(x) for x in v):
        return False
    x = np.asarray(v, dtype=float)
    return bool(np.all(np.isfinite(x))) and float(x.std()) > 0


def summaries(parts: list[Part], record: Mapping) -> list[Part]:
    """``parts`` with each Threshold on a point that is a summary of per-seed values made a
    "summary" part (module docstring): its stored value is the mean of a varying part's per-seed
    values (``of`` names that part: the summary is computed from its draw) or of a per-seed list in
    the record's details, one finite value per seed of the claim's parameters ``seeds``, ``draws``
    or ``n_seeds``, not all equal (``values_from`` names it: drawn at that list's mean and spread).
    Any other part is returned as it is.

    >>> from verify.criteria import EverySeed, Threshold
    >>> every = Part("every_seed", EverySeed("acc", 0.98), "seeds", 3, 0.99, 0.005)
    >>> mean = Part("mean", Threshold("mean acc", 0.99), "fixed", stored=0.99)
    >>> [(q.form, q.of, q.n) for q in summaries([mean, every], {})]
    [('summary', 'every_seed', 3), ('seeds', None, 3)]
    >>> loss = Part("leak", Threshold("mean loss", 2.5, "<="), "fixed", stored=2.0)
    >>> q = summaries([loss], {"params": {"seeds": 2}, "details": {"per_seed": [1.9, 2.1]}})[0]
    >>> q.form, q.values_from, q.n, round(q.sd, 4)
    ('summary', 'details per_seed', 2, 0.1414)
    """
    from verify.criteria import Threshold

    params = record.get("params") or {}
    count = next((params[k] for k in ("seeds", "draws", "n_seeds") if k in params), None)
    details = record.get("details") if isinstance(record.get("details"), Mapping) else {}
    out = []
    for p in parts:
        if p.form != "fixed" or type(p.rule) is not Threshold or not _number(p.stored):
            out.append(p)
            continue
        value = float(p.stored)
        src = next(
            (q for q in parts if q.form == "seeds" and q.n >= 2 and q.varies and _same(q.mean, value)), None
        )
        if src is not None:
            out.append(
                replace(p, form="summary", n=src.n, mean=src.mean, sd=src.sd, binary=src.binary, of=src.name)
            )
            continue
        own = next(
            (k for k, v in details.items() if _per_seed_list(v, count) and _same(float(np.mean(v)), value)),
            None,
        )
        if own is None:
            out.append(p)
            continue
        mean, sd, binary = _spread(details[own])
        out.append(
            replace(
                p,
                form="summary",
                n=len(details[own]),
                mean=mean,
                sd=sd,
                binary=binary,
                values_from=f"details {own}",
            )
        )
    return out


#: keys of a control's measurement or prediction at a part that never name its quantity
NOT_QUANTITY = ("cleared", "threshold_source", "tolerance_source", "alternatives")

#: why a part is drawn as measured under a control: it stores no value of its own there
AS_MEASURED = "as measured: the control stores no value of its own for this part"


def _at(tree, path):
    for name in path:
        tree = tree.get(name) if isinstance(tree, Mapping) else None
    return tree


def control_value(control: Mapping, part: Part) -> tuple[str | None, object, str]:
    """``(quantity, value, why)``: the control's own measured value of ``part``, read at the part's
    place in the control's measurement by the control's own name for it (the quantity its
    prediction names there, or, with no prediction, its one measured quantity that is not a seed
    label), never by the claim's name alone. A control may measure a quantity of its own (another
    evaluation, another routing, another width), so the claim's name is used only to choose among
    several. ``quantity`` is None where the control stores no value of its own for the part;
    ``why`` then says why.

    >>> from verify.criteria import EverySeed
    >>> part = Part("evaluated", EverySeed("loss, prefix", 2.7), "seeds", 2, 3.0, 0.1)
    >>> control = {"predicted": {"evaluated": {"loss, full": ">= 2.7 on every seed"}},
    ...            "measured": {"evaluated": {"loss, full": [2.3, 2.4], "seeds": [0, 1]}}}
    >>> control_value(control, part)[:2]
    ('loss, full', [2.3, 2.4])
    >>> control_value({"measured": {"other": {"loss, full": [2.3]}}}, part)[2]
    'as measured: the control stores no value of its own for this part (no measurement at evaluated)'
    """
    path = part.name.split(".") if part.name else []
    where = ".".join(path) or "the claim's place"
    meas = _at(control.get("measured"), path)
    if not isinstance(meas, Mapping):
        return None, None, f"{AS_MEASURED} (no measurement at {where})"
    pred = _at(control.get("predicted"), path)
    if isinstance(pred, Mapping):
        names = [k for k in pred if k in meas and k not in NOT_QUANTITY]
    else:
        names = [k for k in meas if k not in (*NOT_QUANTITY, *REPLICATES, part.unit)]
    names = [k for k in names if not isinstance(meas[k], Mapping)]
    if part.rule.quantity in names:
        return part.rule.quantity, meas[part.rule.quantity], ""
    if len(names) == 1:
        return names[0], meas[names[0]], ""
    what = "no quantity" if not names else f"{len(names)} quantities ({', '.join(names)}), none the claim's"
    return None, None, f"{AS_MEASURED} ({what} at {where})"


def _number(v) -> bool:
    """Whether ``v`` is stored as a number (a non-finite one written as a string included)."""
    if isinstance(v, (list, tuple, Mapping)) or v is None:
        return False
    try:
        float(v)
    except (TypeError, ValueError):
        return False
    return True


def _control_draw(part: Part, value, n0) -> tuple[tuple | None, str]:
    """((mean, sd, stored) of a part under a control's stored ``value``, "") or (None, why the
    value cannot be drawn in the part's form: the part is then drawn as measured)."""
    numbers = isinstance(value, list) and bool(value) and all(_number(v) for v in value)
    if part.form == "fixed":
        if not (_number(value) or numbers):
            return None, f"{AS_MEASURED} (its value is not a number or a list of numbers)"
        try:
            part.rule.judge(value)
        except (ValueError, TypeError) as exc:
            return None, f"{AS_MEASURED} (its value is not in the part's form: {exc})"
        return (0.0, 0.0, value), ""
    if part.form == "summary" and _number(value):  # the control's own summary: its mean
        v = float(value)
        return ((v, part.sd, None) if math.isfinite(v) else (math.nan, math.nan, [v])), ""
    if part.form in ("seeds", "summary"):
        if not numbers:
            return None, f"{AS_MEASURED} (no per-seed values)"
        if not np.all(np.isfinite(np.asarray(value, dtype=float))):
            return (math.nan, math.nan, [float(v) for v in value]), ""
        mean, sd, binary = _spread(value)
        return (mean, sd if (len(value) > 1 or binary) else part.sd, None), ""
    if numbers and len(value) == 2:
        lo, hi = float(value[0]), float(value[1])
        sd = _t_sd([lo, hi], n0)
        return ((lo + hi) / 2, sd if sd > 0 else part.sd, None), ""
    if _number(value):
        return (float(value), part.sd, None), ""
    return None, f"{AS_MEASURED} (its value is not an interval or a number)"


def control_law(control: Mapping, parts: list[Part], n0) -> tuple[dict, dict]:
    """(settings, note) of one control: ``settings`` {part name: (mean, sd, stored)} for each part
    drawn from the control's own measured value (:func:`control_value`), and ``note`` the record
    of where each part was read: {part: the control's quantity} under "own value", {part: why}
    under "as measured" for a part with no value of its own (drawn as the claim measured it). A
    summary of another part's values is computed from that part's draw under the control (under
    "summary"); where the control stores its own value for the summary but none for that part,
    that part's values are drawn at the control's summary.

    >>> from verify.criteria import EverySeed, Threshold
    >>> parts = [Part("a", EverySeed("x", 0.5), "seeds", 2, 0.8, 0.05),
    ...          Part("b", Threshold("y", 1.0), "fixed", stored=2.0)]
    >>> control = {"measured": {"a": {"x at init": [0.1, 0.2], "seeds": [0, 1]}}}
    >>> settings, note = control_law(control, parts, None)
    >>> sorted(settings), note["own value"]
    (['a'], {'a': 'x at init'})
    >>> note["as measured"]["b"]
    'as measured: the control stores no value of its own for this part (no measurement at b)'
    >>> mean = Part("m", Threshold("mean x", 0.5), "summary", 2, 0.8, 0.05, of="a")
    >>> settings, note = control_law({"measured": {"m": {"mean x": 0.15}}}, [parts[0], mean], None)
    >>> settings["a"][0], note["summary"]
    (0.15, {'m': "the mean of a's draws (drawn at the control's mean x)"})
    """
    settings, own, fallback, summary = {}, {}, {}, {}
    for p in sorted(parts, key=lambda q: q.of is not None):  # a part before its summaries
        quantity, value, why = control_value(control, p)
        if p.of is not None:
            summary[p.name] = f"the mean of {p.of}'s draws"
            source = next(q for q in parts if q.name == p.of)
            if p.of not in settings and quantity is not None and _number(value):
                settings[p.of] = (float(value), source.sd, None)
                own[p.name or "(whole)"] = quantity
                fallback.pop(p.of or "(whole)", None)
                summary[p.name] += f" (drawn at the control's {quantity})"
            continue
        if quantity is not None:
            got, why = _control_draw(p, value, n0)
            if got is not None:
                settings[p.name] = got
                own[p.name or "(whole)"] = quantity
                continue
        fallback[p.name or "(whole)"] = why
    note = {"own value": own} if own else {}
    if summary:
        note["summary"] = summary
    return settings, {**note, "as measured": fallback} if fallback else note


def over_seeds(record: Mapping, seeds: int | None = None) -> Setup:
    """The laws of a claim judged by rebuilt criterion objects (module docstring); ``seeds``
    redraws every rule over seeds or draws, and every interval, at that count.

    >>> from verify.oc.command import _records
    >>> setup = over_seeds(_records("quick")["geometric.gd.superposition"])
    >>> setup.theory, setup.alternatives
    ('as measured', ['control init', 'r2 at the threshold', 'control_r2 at the threshold'])
    """
    from verify.criteria import KOfN, all_of

    params = record.get("params", {})
    n0 = next((params[k] for k in ("seeds", "draws", "n_seeds") if k in params), None)
    if not T_INTERVAL.search(record.get("seed_rule") or ""):
        n0 = None  # an interval that is not a t-interval over seeds (a fit's, a binomial one)
    if not record.get("resolution"):
        raise NotCovered("the record holds no criterion resolution (made before the criterion objects)")
    tree = _tree(record.get("resolution") or {}, record.get("measured"), record.get("predicted"), n0)
    parts = summaries(_flat(tree), record)
    tree = _retree(tree, iter(parts))
    if not any(p.varies for p in parts):
        raise NotCovered(
            "no part varies with the seed in the record (every seed measured the same value, or "
            "one seed): no spread to draw from"
        )
    if seeds:
        if any(isinstance(p.rule, KOfN) for p in parts):
            raise NotCovered("the k of a k-of-n rule at another seed count is the claim's own choice")
        parts = [
            p if p.form == "fixed" else replace(p, n=int(seeds), rule=_at_cap(p.rule, int(seeds)))
            for p in parts
        ]
        tree = _retree(tree, iter(parts))
    by_name = {p.name: p for p in parts}
    shared = {p.of for p in parts if p.of is not None}  # parts whose draw a summary also judges

    def law(settings: Mapping[str, tuple]) -> Callable:
        def values(part, rng, drawn):
            if part.name not in drawn:  # one draw per part and replication, however many judge it
                drawn[part.name] = part.draw(rng, *(settings.get(part.name) or (part.mean, part.sd, None)))
            return drawn[part.name]

        def judge(node, rng, drawn):
            if isinstance(node, Part):
                if node.of is not None or node.name in shared:
                    return node.judge_values(values(by_name[node.of or node.name], rng, drawn))
                mean, sd, stored = settings.get(node.name) or (node.mean, node.sd, None)
                return node.judge(rng, mean, sd, stored)
            return all_of(**{name: judge(sub, rng, drawn) for name, sub in node.items()})

        return lambda rng: judge(tree, rng, {})

    tests = [p for p in parts if hasattr(p.rule, "alternatives")]
    theory = "as measured"
    if tests:  # the theory names a value: drawn there, each named alternative drawn at its own
        theory = "theory (" + ", ".join(p.rule.theory_name for p in tests) + ")"
    laws = {theory: law({p.name: (p.rule.theory, p.sd, None) for p in tests})}
    for p in tests:
        for alt, v in p.rule.alternatives.items():
            laws[f"{p.name} {alt}".strip()] = law({p.name: (float(v), p.sd, None)})
    controls = {}
    for control in record.get("controls") or []:
        name = f"control {control.get('name')}"
        if not isinstance(control.get("measured"), Mapping):
            controls[name] = {"not simulated": "the control stores no measurement"}
            continue
        settings, note = control_law(control, parts, n0)
        if settings:
            laws[name] = law(settings)
            controls[name] = note
        else:
            controls[name] = {"not simulated": "no value of its own for any part", **note}
    for p in parts:
        if p in tests or not p.varies:
            continue
        at = float(p.rule.value)
        if p.binary and not (p.form == "summary" and 0 < at < 1):
            continue
        label = f"{p.name} at the threshold" if p.name else "at the threshold"
        source = by_name[p.of] if p.of is not None else p
        laws[label] = law({source.name: (at, source.sd, None)})
    varying = [p for p in parts if p.varies]
    summarised = any(p.form == "summary" for p in parts)
    return Setup(
        theory,
        laws,
        {
            "parts": {p.name or "(whole)": _noise(p) for p in parts},
            "from": "the record's per-seed values (mean, sd ddof 1; 0/1 values: the fraction), "
            "an interval part's 95% t-interval over the record's seeds"
            + ("; a summary part is the mean of the per-seed values drawn" if summarised else ""),
            **({"controls": controls} if controls else {}),
        },
        {"seeds": max(p.n for p in varying)},
    )


def _at_cap(rule, n: int):
    """``rule`` at ``n`` seeds: a sequential rule's looks continued to a cap of ``n``, any other
    rule as it is (its seed count is the number of values drawn)."""
    return rule.with_cap(n) if hasattr(rule, "with_cap") else rule


def _noise(p: Part) -> dict:
    if p.form == "fixed":
        return {"form": "fixed"}
    out = {"form": p.form, "n": p.n, "mean": p.mean, "sd": p.sd}
    if p.form == "summary":
        out["mean of"] = f"the draws of part {p.of}" if p.of is not None else p.values_from
    return {**out, "binary": True} if p.binary else out


def _retree(tree, parts):
    if isinstance(tree, Part):
        return next(parts)
    return {name: _retree(sub, parts) for name, sub in tree.items()}
