"""One-call contract check of a fact-storing model (docs/testing.md), re-exported by
:mod:`verify.testing` as :func:`check_fact_model`.

A fact-storing model (constructions/measure.py) answers ``decode(facts)``, ``accuracy(facts)``
and ``margins(facts)``. Whatever the construction, the three answers must agree with each other
and the model's size must respect the information bound B1 (docs/fact_mlp.md). The check
recomputes what it can from the model's own answers and lists every contract that is broken:

1. ``decode`` gives one value index per fact, in [0, n_V), or -1 for a tie;
2. ``margins`` gives one finite number per fact;
3. the reported accuracy is the mean of (decode == target);
4. ties count as errors: a fact whose margin is within its tie tolerance (a tie or a loss) must
   not decode to its value;
5. a fact whose margin exceeds its tie tolerance decodes to its value, so a minimum margin above
   the tolerance implies accuracy 1, and accuracy 1 with a tie is impossible;
6. a model that stores every fact has at least as many parameter bits as the facts carry (B1:
   F log2 n_V bits, log2 F! for a bijection; ``theory.fact_mlp.bounds``): the report gives the
   ratio of ``n_params * bits_per_param`` to that bound, and a ratio below 1 with every fact
   stored means the parameter count leaves out numbers the model stores.

Contracts 4 and 5 and the count of stored facts use one tie rule, the decode kernel's
(:func:`constructions.decode.tie_tolerance`): a margin at most ``TIE_ULPS * eps(dtype) * scale``
is a tie, and a tie is an error, so a fact is stored exactly when it decodes to its value *and*
its margin clears the tolerance. Where the check takes the tolerance from is in
:func:`check_fact_model`. A torch module or a callable that maps a batch of facts to logits is
checked through :class:`ModuleFactModel` (its calling convention is there).
"""

from __future__ import annotations

import math
import numbers
import sys
import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["FactModelReport", "ModuleFactModel", "check_fact_model"]

#: Bits per parameter of the toolkit's models (float64 numbers): the ``b`` of B1 when the model's
#: dtype cannot be read (:func:`check_fact_model`).
BITS_PER_PARAM = 64


@dataclass(frozen=True)
class FactModelReport:
    """What :func:`check_fact_model` found.

    - ``accuracy``: the fraction of facts stored under the tie rule, ``n_stored / n_facts`` (a
      fact is stored when it decodes to its value and its margin clears its tie tolerance);
      ``reported_accuracy``: what the model's ``accuracy(facts)`` said (the two are equal when
      contracts 3-5 hold);
    - ``min_margin``: the smallest margin the model reports;
    - ``n_params``, ``bound`` (B1, in bits), ``ratio`` = n_params * bits_per_param / bound (None
      without a parameter count; inf for a bound of 0 bits), ``bits_per_param`` and
      ``bits_source`` (given, or read from the model's dtype, and which);
    - ``tie_tolerance`` (the largest per-fact tolerance used) and ``tie_source`` (where it came
      from);
    - ``problems``: one line per broken contract (empty when the model keeps them all).

    ``stores`` is True when every fact is stored, ``contracts_kept`` when ``problems`` is empty,
    and ``ok`` when both hold: a model that keeps every contract but loses a fact is not ok.
    """

    accuracy: float
    min_margin: float
    n_params: int | None
    bound: float
    ratio: float | None
    problems: list[str] = field(default_factory=list)
    n_stored: int = 0
    n_facts: int = 0
    reported_accuracy: float = 0.0
    bits_per_param: float = float(BITS_PER_PARAM)
    bits_source: str = ""
    tie_tolerance: float = 0.0
    tie_source: str = ""

    @property
    def stores(self) -> bool:
        """True when every fact is stored (``n_stored == n_facts``)."""
        return self.n_stored == self.n_facts

    @property
    def contracts_kept(self) -> bool:
        """True when no contract is broken (``problems`` is empty)."""
        return not self.problems

    @property
    def ok(self) -> bool:
        """True when no contract is broken and every fact is stored."""
        return self.contracts_kept and self.stores


def _param_count(model: Any) -> int | None:
    """The model's parameter count: the distinct numbers that write it down where it says so."""
    for attr in ("params_unique", "n_params", "params_standard"):
        value = getattr(model, attr, None)
        if value is not None and not callable(value):
            return int(value)
    counts = getattr(model, "param_counts", None)
    if callable(counts):
        return int(counts()["total"])
    return None


def _information_bound(facts: Any, targets: np.ndarray) -> tuple[float, int, str]:
    """(bits, n_V, name of the bound) for the facts: B1 of docs/fact_mlp.md."""
    from theory.fact_mlp.bounds import info_bits, info_bits_tied

    values = getattr(facts, "values", None)
    if values is not None and getattr(facts, "fact_map", None) is not None:
        n_values = int(np.asarray(values).shape[0])
    elif not isinstance(facts, tuple):  # a relation table: R bijections of [N]
        table = np.asarray(facts)
        n_rel, n = table.shape
        return n_rel * info_bits_tied(n), n, f"fact_mlp.info_bits_tied (R={n_rel} bijections of N={n})"
    else:
        n_values = int(targets.max()) + 1 if len(targets) else 1
    n_facts = len(targets)
    if n_values < 2:
        return 0.0, n_values, "fact_mlp.info_bits (one value: 0 bits)"
    if n_facts == n_values and np.array_equal(np.sort(targets), np.arange(n_values)):
        return info_bits_tied(n_facts), n_values, f"fact_mlp.info_bits_tied (a bijection of F={n_facts})"
    return info_bits(n_facts, n_values), n_values, f"fact_mlp.info_bits (F={n_facts}, n_V={n_values})"


def _facts(facts: Any, i: np.ndarray, show: int) -> str:
    from constructions.measure import describe_fact

    more = f" and {len(i) - show} more" if len(i) > show else ""
    return ", ".join(describe_fact(facts, int(k)) for k in i[:show]) + more


# --- dtypes: the bits of a parameter and the rounding of the logits ----------------------------
def _dtype_name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")


def _dtype_bits(dtype: Any) -> int:
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(dtype, torch.dtype):
        return int(dtype.itemsize) * 8
    return int(np.dtype(dtype).itemsize) * 8


def _is_float_dtype(dtype: Any) -> bool:
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(dtype, torch.dtype):
        return dtype.is_floating_point
    try:
        return np.dtype(dtype).kind == "f"
    except TypeError:
        return False


#: Attributes that hold a model's facts, not its parameters: skipped when its arrays are counted.
_FACT_ATTRIBUTES = ("facts", "perms")
_NOT_PARAMETERS = (types.FunctionType, types.MethodType, types.BuiltinFunctionType, types.ModuleType, type)


def _float_census(model: Any, depth: int = 3) -> dict[Any, int]:
    """{dtype: count} of the floating-point numbers the model holds: the parameters of a torch
    module, else the float arrays and tensors among its attributes, in dicts, lists and tuples and
    in the attributes of objects it holds, ``depth`` levels down (its facts skipped; each array
    once)."""
    torch = sys.modules.get("torch")
    census: dict[Any, int] = {}
    seen: set[int] = set()

    def add(dtype: Any, count: int) -> None:
        census[dtype] = census.get(dtype, 0) + int(count)

    def visit(obj: Any, level: int) -> None:
        if id(obj) in seen or obj is None or isinstance(obj, (str, bytes, numbers.Number)):
            return
        seen.add(id(obj))
        if isinstance(obj, np.ndarray):
            if obj.dtype.kind == "f":
                add(obj.dtype, obj.size)
            return
        if torch is not None and isinstance(obj, torch.Tensor):
            if obj.is_floating_point():
                add(obj.dtype, obj.numel())
            return
        if torch is not None and isinstance(obj, torch.nn.Module):
            for p in obj.parameters():
                visit(p, level)
            return
        if level >= depth or isinstance(obj, _NOT_PARAMETERS):
            return
        if isinstance(obj, dict):
            items = list(obj.values())
        elif isinstance(obj, (list, tuple)):
            items = list(obj)
        elif hasattr(obj, "__dict__") and getattr(obj, "fact_map", None) is None:
            items = [v for k, v in vars(obj).items() if k not in _FACT_ATTRIBUTES]
        else:
            return
        for item in items:
            visit(item, level + 1)

    visit(model, 0)
    return census


def _model_dtypes(model: Any) -> tuple[dict[Any, int], str]:
    """{dtype: count} of the model's floating-point numbers and where they were read: the wrapped
    module of a :class:`ModuleFactModel`, the model's ``dtype`` attribute, or its arrays."""
    if isinstance(model, ModuleFactModel):
        return model.dtype_census()
    declared = getattr(model, "dtype", None)
    if declared is not None and _is_float_dtype(declared):
        torch = sys.modules.get("torch")
        if torch is None or not isinstance(declared, torch.dtype):
            declared = np.dtype(declared)
        return {declared: 1}, "the model's dtype attribute"
    return _float_census(model), "the model's floating-point arrays"


def _bits_per_param(census: dict[Any, int], where: str, given: float | None) -> tuple[float, str]:
    """(bits per parameter, why): ``given`` when not None; else the bits of the model's dtype (the
    mean over its numbers when they have several); else float64's."""
    if given is not None:
        return float(given), f"given (bits_per_param={given:g})"
    if not census:
        return float(BITS_PER_PARAM), (
            f"float64 by default: no floating-point parameters found ({where}); give bits_per_param="
        )
    total = sum(census.values())
    bits = sum(_dtype_bits(d) * n for d, n in census.items()) / total
    if len(census) == 1:
        (dtype,) = census
        return bits, f"{_dtype_name(dtype)}: {where}"
    parts = " and ".join(f"{n} {_dtype_name(d)}" for d, n in census.items())
    return bits, f"the mean over {where} ({parts} numbers)"


def _rounding_dtype(census: dict[Any, int]) -> Any:
    """The coarsest floating dtype of the model's numbers (float64 when none): the rounding its
    logits carry."""
    from constructions.decode import rounding_eps

    return max(census, key=rounding_eps) if census else np.dtype(np.float64)


def _tie_tolerances(
    model: Any, facts: Any, n_facts: int, margin_atol: float | None, rounding: Any, problems: list[str]
) -> tuple[np.ndarray, str]:
    """(per-fact tolerance, where it came from): ``margin_atol`` when given; the model's
    ``tie_tolerances(facts)`` (named by its ``tie_source`` where it has one: the toolkit's models
    give the decode kernel's); else the tie rule at scale 1 in the model's coarsest dtype."""
    from constructions.decode import tie_tolerance

    if margin_atol is not None:
        return np.full(n_facts, float(margin_atol)), f"margin_atol={margin_atol:g} (given)"
    own = getattr(model, "tie_tolerances", None)
    if callable(own):
        tol = np.asarray(own(facts), dtype=np.float64)
        if tol.shape == (n_facts,) and not (np.isnan(tol) | (tol < 0)).any():
            return tol, getattr(model, "tie_source", "the model's tie_tolerances(facts)")
        got = f"shape {tol.shape}" if tol.shape != (n_facts,) else "NaN or negative numbers"
        problems.append(f"tie_tolerances must give one number >= 0 per fact, shape ({n_facts},); got {got}")
    name = _dtype_name(rounding)
    return np.full(n_facts, float(tie_tolerance(1.0, rounding))), (
        f"tie_tolerance(1, {name}): the model gives no logit scale, so logits of magnitude about 1 are "
        "assumed (give it a tie_tolerances(facts) method, or margin_atol=)"
    )


# --- torch modules and callables ----------------------------------------------------------------
class ModuleFactModel:
    """A torch module, or any callable, that maps a batch of facts to logits over the candidates,
    seen as a fact-storing model: ``decode``, ``accuracy``, ``margins`` and ``tie_tolerances``
    (constructions/measure.py), all under the decode kernel's tie rule. :func:`check_fact_model`
    wraps a model in it when the model is callable and has none of the three methods.

    The calling convention (docs/testing.md, "Torch modules and callables"):

    - facts a relation table (R, N) or a triple (subjects, relations, targets): ``module(pairs)``
      on a batch of B (subject, relation) index pairs, shape (B, 2), column 0 the subject and
      column 1 the relation, in the order of ``constructions.measure.fact_targets`` (subject major
      for a table); it returns logits over the candidates, shape (B, N) for a relation table (the
      candidates are the N subjects' ids) and (B, W) with W > every target for a triple;
    - facts a :class:`~constructions.fact_mlp.facts.FactSet`: ``module(keys)`` on a batch of B
      rows of ``facts.keys``, shape (B, d); it returns logits over the n_V values, shape (B, n_V)
      (``output="logits"``), or, with ``output="values"``, outputs in value space, shape (B, d_V),
      decoded by the decode kernel against ``facts.values`` (the form of ``FactMLP.forward`` and
      ``FactMLP.torch_module()``).

    A ``torch.nn.Module`` gets torch tensors (the pairs as int64, the keys in the dtype of its
    floating-point parameters, float64 when it has none, on its parameters' device) and is called
    as it is (train or eval mode untouched) under ``torch.no_grad()``; any other callable gets
    numpy arrays (the pairs as int64, the keys as given). The output may be a torch tensor or
    anything ``numpy.asarray`` takes. Facts go ``batch_size`` at a time; the output of the first
    batch is checked, and a call that fails or an output of another shape is a TypeError that
    names the convention. Within one :func:`check_fact_model` the module runs once over the facts
    (its answers are kept for that check and the facts it is given); each direct
    call of ``decode``, ``margins``, ``accuracy`` or ``tie_tolerances`` runs it again.

    The tie rule on logits (:func:`constructions.decode.decode_logits`): tolerance
    ``tie_tolerance(max_j |z_ij|, dtype)``, with ``dtype`` the coarser of the logits' dtype and
    the module's parameters'. ``n_params`` is the number of the module's parameters (shared ones
    once; numbers in buffers are not counted), None for a callable that is not a module.

    >>> import numpy as np
    >>> table = np.array([[1, 0, 2]])  # one relation, a bijection of N = 3 subjects
    >>> def logits(pairs):  # subject s -> candidate table[0, s]
    ...     return np.eye(3)[table[0, pairs[:, 0]]]
    >>> model = ModuleFactModel(logits)
    >>> model.decode(table).tolist(), model.accuracy(table), model.margins(table).tolist()
    ([1, 0, 2], 1.0, [1.0, 1.0, 1.0])
    >>> model.tie_tolerances(table).tolist(), model.n_params  # 64 ulps of float64 at scale 1
    ([1.4210854715202004e-14, 1.4210854715202004e-14, 1.4210854715202004e-14], None)
    >>> model.dtype_census()
    ({torch.float64: 1}, "the dtype of the callable's logits (it has no parameters to read)")
    >>> ModuleFactModel(lambda pairs: np.ones((len(pairs), 5))).decode(table)
    Traceback (most recent call last):
    ...
    TypeError: the module must map a batch of B (subject, relation) index pairs, shape (B, 2) (int64: a torch tensor for a torch module, a numpy array for another callable), to logits over the 3 candidates, shape (B, 3); got shape (3, 5) for a batch of shape (3, 2) (docs/testing.md, "Torch modules and callables")
    """

    def __init__(self, module: Any, *, output: str = "logits", batch_size: int = 1024) -> None:
        from theory.validate import require_int

        if not callable(module):
            raise TypeError(
                f"module must be a torch module or a callable that maps a batch of facts to logits, "
                f"not {type(module).__name__}"
            )
        if output not in ("logits", "values"):
            raise ValueError(
                f"output={output!r} must be 'logits' (logits over the candidates) or 'values' "
                "(outputs in value space, decoded against a fact set's values)"
            )
        self.module = module
        self.output = output
        self.batch_size = require_int("batch_size", batch_size, 1)
        #: The number of candidates the module's logits covered (None before its first call).
        self.n_candidates: int | None = None
        #: The dtype of the module's outputs (None before its first call).
        self.output_dtype: Any = None
        self._cache: tuple[Any, tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None
        self._memo = False  # keep the answers: only while check_fact_model runs

    # --- what the module is made of -------------------------------------------------------------
    def _torch_module(self) -> Any:
        torch = sys.modules.get("torch")
        return self.module if torch is not None and isinstance(self.module, torch.nn.Module) else None

    @property
    def n_params(self) -> int | None:
        """The number of the module's parameters (shared ones once); None for another callable."""
        module = self._torch_module()
        return None if module is None else int(sum(p.numel() for p in module.parameters()))

    def dtype_census(self) -> tuple[dict[Any, int], str]:
        """({dtype: count} of the module's floating-point parameters, where they were read); for a
        callable that is not a module, the dtype of its outputs once it has been called."""
        module = self._torch_module()
        if module is not None:
            return _float_census(module), "the torch module's parameters"
        if self.output_dtype is not None and _is_float_dtype(self.output_dtype):
            return {self.output_dtype: 1}, "the dtype of the callable's logits (it has no parameters to read)"
        return {}, "a callable without parameters"

    # --- the calling convention -----------------------------------------------------------------
    def _batches(self, facts: Any) -> tuple[str, np.ndarray, np.ndarray, np.ndarray | None, int, bool]:
        """(kind, inputs, targets, candidates, width, exact width) for ``facts``."""
        from constructions.measure import _table_form, _triple
        from constructions.tasks import single_hop_dataset

        if getattr(facts, "fact_map", None) is not None:
            values = np.asarray(facts.values)
            targets = np.asarray(facts.fact_map, dtype=np.int64)
            if self.output == "values":
                return "keys", np.asarray(facts.keys), targets, values, int(values.shape[1]), True
            return "keys", np.asarray(facts.keys), targets, None, int(values.shape[0]), True
        if self.output == "values":
            raise ValueError(
                "output='values' needs facts that are a FactSet (the values to decode against); "
                f"got {type(facts).__name__}: give logits over the candidates (output='logits')"
            )
        if isinstance(facts, tuple):
            subj, rel, targets = _triple(facts)
            width, exact = max(int(targets.max()) + 1 if len(targets) else 0, 2), False
        else:
            table = _table_form(facts)
            subj, rel, targets = single_hop_dataset(table)
            width, exact = int(table.shape[1]), True
        pairs = np.stack([subj, rel], axis=1).astype(np.int64)
        return "pairs", pairs, np.asarray(targets, dtype=np.int64), None, width, exact

    def _convention(self, kind: str, width: int, exact: bool) -> str:
        shape = f"(B, {width})" if exact else f"(B, W) with W >= {width}"
        if kind == "pairs":
            return (
                "the module must map a batch of B (subject, relation) index pairs, shape (B, 2) (int64: "
                "a torch tensor for a torch module, a numpy array for another callable), to logits over "
                f"the {width} candidates, shape {shape}"
            )
        if self.output == "values":
            return (
                "the module (output='values') must map a batch of B keys, shape (B, d), to outputs in "
                f"value space, shape {shape}"
            )
        return (
            "the module must map a batch of B keys, rows of facts.keys, shape (B, d), to logits over "
            f"the {width} values, shape {shape} (a module with outputs in value space: "
            "verify.fact_check.ModuleFactModel(module, output='values'))"
        )

    def _call(self, batch: np.ndarray, kind: str) -> Any:
        import torch

        module = self._torch_module()
        if module is None:
            return self.module(batch)
        first = next(iter(module.parameters()), None)
        if first is None:
            first = next(iter(module.buffers()), None)
        device = first.device if first is not None else torch.device("cpu")
        if kind == "pairs":
            x = torch.as_tensor(batch, dtype=torch.int64, device=device)
        else:
            floats = [p.dtype for p in module.parameters() if p.is_floating_point()]
            x = torch.as_tensor(batch, dtype=floats[0] if floats else torch.float64, device=device)
        with torch.no_grad():
            return module(x)

    def _evaluate(self, facts: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(decoded, margins, tolerances) of every fact, computed once per set of facts."""
        import torch

        from constructions.decode import decode, decode_logits, kernel_tolerances, predict, rounding_eps

        if self._memo and self._cache is not None and self._cache[0] is facts:
            return self._cache[1]
        kind, inputs, targets, candidates, width, exact = self._batches(facts)
        convention = self._convention(kind, width, exact)
        where = '(docs/testing.md, "Torch modules and callables")'
        census, _ = self.dtype_census()
        parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        for start in range(0, len(targets), self.batch_size):
            batch = inputs[start : start + self.batch_size]
            t = targets[start : start + self.batch_size]
            try:
                out = self._call(batch, kind)
            except Exception as exc:  # noqa: BLE001 -- named in the TypeError with the convention
                if start:
                    raise
                raise TypeError(
                    f"{convention}; calling it on a batch of shape {batch.shape} failed: "
                    f"{type(exc).__name__}: {exc} {where}"
                ) from exc
            out = out.detach().cpu() if isinstance(out, torch.Tensor) else torch.as_tensor(np.asarray(out))
            if start == 0:
                fits = out.ndim == 2 and out.shape[0] == len(batch)
                fits = fits and (out.shape[1] == width if exact else out.shape[1] >= width)
                if not fits:
                    raise TypeError(
                        f"{convention}; got shape {tuple(out.shape)} for a batch of shape {batch.shape} {where}"
                    )
                if out.dtype.is_complex or out.dtype == torch.bool:
                    raise TypeError(f"{convention}; got {out.dtype} numbers, not real ones {where}")
                self.n_candidates = int(out.shape[1]) if self.output == "logits" else len(candidates)
                self.output_dtype = out.dtype
            if self.output == "values":
                U = torch.as_tensor(np.asarray(candidates, dtype=np.float64))
                res = decode(out, U, torch.as_tensor(t), return_margins=True)
                parts.append((predict(out, U), res.margins, kernel_tolerances(out, U)))
            else:
                dtypes = [out.dtype, *census]
                res = decode_logits(out, t, dtype=max(dtypes, key=rounding_eps))
                parts.append((res.decoded, res.margins, res.tolerances))
        if parts:
            answers = tuple(np.concatenate([p[i] for p in parts]) for i in range(3))
        else:
            answers = (np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0))
        if self._memo:
            self._cache = (facts, answers)  # type: ignore[assignment]
        return answers  # type: ignore[return-value]

    # --- the measurement interface ----------------------------------------------------------------
    def decode(self, facts: Any) -> np.ndarray:
        """The decoded candidate of every fact (int64; -1 for a tie under the tie rule)."""
        return self._evaluate(facts)[0]

    def margins(self, facts: Any) -> np.ndarray:
        """The margin of every fact: its value's logit minus the best other (float64)."""
        return self._evaluate(facts)[1]

    def tie_tolerances(self, facts: Any) -> np.ndarray:
        """The tie rule's tolerance of every fact (float64): a margin at most it is a tie."""
        return self._evaluate(facts)[2]

    def accuracy(self, facts: Any) -> float:
        """The fraction of facts decoded to their value (ties are errors)."""
        from constructions.measure import fact_targets

        decoded = self._evaluate(facts)[0]
        return float(np.mean(decoded == fact_targets(facts))) if len(decoded) else 1.0


#: The methods a fact-storing model answers (constructions/measure.py, ``FactModel``).
METHODS = ("decode", "accuracy", "margins")


def _as_fact_model(model: Any) -> Any:
    """``model`` itself when it has any of the three methods (the arguments check then names the
    missing ones); a :class:`ModuleFactModel` around a callable that has none of them."""
    if any(callable(getattr(model, m, None)) for m in METHODS) or not callable(model):
        return model
    return ModuleFactModel(model)


def _check_arguments(model: Any, n_params: Any, bits_per_param: Any, margin_atol: Any, show: Any) -> None:
    """The arguments of :func:`check_fact_model` other than the facts, checked before the model is
    asked anything: a model without the three methods, or an argument of the wrong type, is a
    TypeError naming it; a count, a bit width or a tolerance outside its range a ValueError.

    >>> _check_arguments(object(), None, 64, 1e-9, 3)
    Traceback (most recent call last):
    ...
    TypeError: model must be a fact-storing model with the methods decode(facts), accuracy(facts) and margins(facts) (constructions.measure.FactModel, docs/testing.md), or a torch module or callable that maps a batch of facts to logits (ModuleFactModel); object has none of them
    >>> class Model:
    ...     def decode(self, facts): ...
    ...     def accuracy(self, facts): ...
    ...     def margins(self, facts): ...
    >>> _check_arguments(Model(), None, float("nan"), 1e-9, 3)
    Traceback (most recent call last):
    ...
    ValueError: bits_per_param=nan must be a positive finite number (the bits b of each parameter in B1, 64 for float64)
    """
    from theory.validate import require_int

    missing = [m for m in METHODS if not callable(getattr(model, m, None))]
    if missing:
        lacks = "has none of them" if len(missing) == len(METHODS) else f"lacks {', '.join(missing)}"
        raise TypeError(
            "model must be a fact-storing model with the methods decode(facts), accuracy(facts) and "
            "margins(facts) (constructions.measure.FactModel, docs/testing.md), or a torch module or "
            f"callable that maps a batch of facts to logits (ModuleFactModel); {type(model).__name__} {lacks}"
        )
    if n_params is not None:
        require_int("n_params", n_params, 0)
    for name, value, holds, need in (
        ("bits_per_param", bits_per_param, lambda v: v > 0, "a positive finite number"),
        ("margin_atol", margin_atol, lambda v: v >= 0, "a finite number >= 0"),
    ):
        if value is None:
            continue
        why = (
            f" (the bits b of each parameter in B1, {BITS_PER_PARAM} for float64)"
            if name == "bits_per_param"
            else ""
        )
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
            raise TypeError(f"{name}={value!r} must be {need}{why}, not {type(value).__name__}")
        if not (math.isfinite(value) and holds(value)):
            raise ValueError(f"{name}={value!r} must be {need}{why}")
    require_int("show", show, 0)


def _lost(
    facts: Any,
    lost: np.ndarray,
    targets: np.ndarray,
    decoded: np.ndarray | None,
    margins: np.ndarray | None,
    tol: np.ndarray,
    show: int,
) -> str:
    """The first ``show`` facts not stored, each with why: a wrong decode, or its margin within
    the tie tolerance."""
    from constructions.measure import describe_fact

    parts = []
    for i in lost[:show]:
        why = []
        if decoded is not None and decoded[i] != targets[i]:
            why.append(
                "a tie (-1)" if decoded[i] < 0 else f"decoded {int(decoded[i])}, not {int(targets[i])}"
            )
        if margins is not None and not margins[i] > tol[i]:
            why.append(f"margin {margins[i]:.3g} <= tie tolerance {tol[i]:.3g}")
        parts.append(describe_fact(facts, int(i)) + (f" ({'; '.join(why)})" if why else ""))
    more = f" and {len(lost) - show} more" if len(lost) > show else ""
    return ", ".join(parts) + more


def check_fact_model(
    model: Any,
    facts: Any = None,
    *,
    n_params: int | None = None,
    bits_per_param: float | None = None,
    margin_atol: float | None = None,
    raise_on_failure: bool = True,
    show: int = 3,
) -> FactModelReport:
    """Check the contracts of a fact-storing model on ``facts`` (default: the model's own), count
    the facts it stores, and return a :class:`FactModelReport`; with ``raise_on_failure`` (the
    default) an AssertionError lists every broken contract and the facts not stored when the
    report is not ``ok`` (module docstring; docs/testing.md).

    ``model``: an object with ``decode``, ``accuracy`` and ``margins`` (constructions/measure.py),
    or a torch module or callable that maps a batch of facts to logits (wrapped in
    :class:`ModuleFactModel`, whose docstring gives the calling convention). ``facts``: a
    :class:`~constructions.fact_mlp.facts.FactSet`, a relation table (R, N) or a triple
    (constructions/measure.py). ``n_params``: the parameter count when the model does not carry
    one (``params_unique``, ``n_params``, ``params_standard`` or ``param_counts()["total"]``).

    ``bits_per_param``: the b of B1; None (the default) reads it from the model's dtype: the
    parameters of a torch module, else the model's ``dtype`` attribute, else the floating-point
    arrays and tensors it holds (float64 64 bits, float32 32, float16 and bfloat16 16; the mean
    over its numbers when they have several dtypes; 64 when none is found). A number given wins.
    The report's ``bits_source`` says which was used and why.

    The tie rule (:func:`constructions.decode.tie_tolerance`) needs each fact's tolerance; the
    check takes it from the model's ``tie_tolerances(facts)`` when it has one (a
    :class:`ModuleFactModel` does, and the toolkit's ``FactMLP`` and ``BlockModel`` give the decode
    kernel's), and otherwise assumes logits of magnitude about 1 in the model's coarsest
    dtype (``tie_tolerance(1, dtype)``: 1.4e-14 in float64). ``margin_atol``: a number replaces
    it by that absolute tolerance for every fact. The report's ``tie_source`` says which.

    A model without the three methods that is not callable, ``facts`` of another form, or an
    argument outside its range (``bits_per_param`` a positive finite number, ``margin_atol`` a
    finite number >= 0, ``n_params`` and ``show`` non-negative integers) is a TypeError or
    ValueError naming it, raised before the model is asked anything.

    >>> import numpy as np
    >>> from constructions.fact_mlp import build_encoder_decoder, fact_set
    >>> facts = fact_set(40, 8, 16, np.random.default_rng(0))
    >>> mlp = build_encoder_decoder(facts, 16, np.random.default_rng(1))
    >>> report = check_fact_model(mlp, facts)
    >>> report.ok, report.accuracy, report.problems, report.n_params, round(report.bound, 1)
    (True, 1.0, [], 1072, 120.0)
    >>> round(report.ratio, 1), report.bits_source  # 1072 float64 parameters for 120 bits
    (571.7, "float64: the model's floating-point arrays")
    >>> class Cheat:  # decodes every fact to its value, ties included
    ...     def decode(self, f): return f.fact_map.copy()
    ...     def accuracy(self, f): return 1.0
    ...     def margins(self, f): return np.zeros(f.n_facts)
    >>> check_fact_model(Cheat(), facts, n_params=1072)
    Traceback (most recent call last):
    ...
    AssertionError: the fact model breaks 2 contracts: ties count as errors: 40 facts have a margin within the tie tolerance (<= 1.42e-14) but decode to their value (fact 0 (keys[0]), fact 1 (keys[1]), fact 2 (keys[2]) and 37 more); accuracy 1 with a tie is impossible: the minimum margin is 0 (tie tolerance 1.42e-14); and it stores 0 of 40 facts: fact 0 (keys[0]) (margin 0 <= tie tolerance 1.42e-14), fact 1 (keys[1]) (margin 0 <= tie tolerance 1.42e-14), fact 2 (keys[2]) (margin 0 <= tie tolerance 1.42e-14) and 37 more
    """
    model = _as_fact_model(model)
    _check_arguments(model, n_params, bits_per_param, margin_atol, show)
    if not isinstance(model, ModuleFactModel):
        return _check(model, facts, n_params, bits_per_param, margin_atol, raise_on_failure, show)
    model._memo = True
    try:
        return _check(model, facts, n_params, bits_per_param, margin_atol, raise_on_failure, show)
    finally:
        model._memo, model._cache = False, None


def _check(
    model: Any,
    facts: Any,
    n_params: int | None,
    bits_per_param: float | None,
    margin_atol: float | None,
    raise_on_failure: bool,
    show: int,
) -> FactModelReport:
    """The body of :func:`check_fact_model`, on a model whose arguments are checked."""
    from constructions.measure import fact_targets

    if facts is None:
        facts = getattr(model, "facts", None)
        if facts is None:
            facts = getattr(model, "perms", None)
        if facts is None:
            raise ValueError(f"give the facts to check: {type(model).__name__} has no facts of its own")
    targets = fact_targets(facts)
    bound, n_values, bound_name = _information_bound(facts, targets)
    problems: list[str] = []
    F = len(targets)

    decoded = np.asarray(model.decode(facts))
    n_range = max(n_values, int(getattr(model, "n_candidates", None) or 0))
    if decoded.shape != (F,) or (F and not np.issubdtype(decoded.dtype, np.integer)):
        problems.append(
            f"decode must give one integer per fact, shape ({F},); got {decoded.dtype} {decoded.shape}"
        )
        decoded = None
    elif F and (decoded.min() < -1 or decoded.max() >= n_range):
        problems.append(f"decode gives indices outside [-1, {n_range}) (n_V = {n_range}; -1 is a tie)")
    margins = np.asarray(model.margins(facts), dtype=np.float64)
    if margins.shape != (F,):
        problems.append(f"margins must give one number per fact, shape ({F},); got {margins.shape}")
        margins = None
    elif not np.isfinite(margins).all():
        problems.append(
            f"margins are not finite for {_facts(facts, np.flatnonzero(~np.isfinite(margins)), show)}"
        )
    reported = float(model.accuracy(facts))
    min_margin = float(np.min(margins)) if margins is not None and F else math.inf

    census, where = _model_dtypes(model)
    from constructions.decode import clears_tie

    tol, tie_source = _tie_tolerances(model, facts, F, margin_atol, _rounding_dtype(census), problems)
    clear = clears_tie(margins, tol) if margins is not None else None
    stored = np.ones(F, dtype=bool)
    if decoded is not None:
        correct = decoded == targets
        stored &= correct
        mean = float(correct.mean()) if F else 1.0
        if not math.isclose(reported, mean, rel_tol=0.0, abs_tol=1e-12):
            problems.append(
                f"accuracy reports {reported:.6g} but the mean of (decode == target) is {mean:.6g}"
            )
        if clear is not None:
            tie_correct = np.flatnonzero(correct & ~clear)
            if len(tie_correct):
                problems.append(
                    f"ties count as errors: {len(tie_correct)} facts have a margin within the tie "
                    f"tolerance (<= {tol[tie_correct].max():.3g}) but decode to their value "
                    f"({_facts(facts, tie_correct, show)})"
                )
            wrong_positive = np.flatnonzero(~correct & clear)
            if len(wrong_positive):
                problems.append(
                    f"a positive margin means a stored fact: {len(wrong_positive)} facts have a margin "
                    f"above the tie tolerance but do not decode to their value "
                    f"({_facts(facts, wrong_positive, show)})"
                )
    if clear is not None:
        stored &= clear
        if F and clear.all() and reported < 1.0:
            problems.append(
                f"a positive minimum margin ({min_margin:.6g}, above the tie tolerance) implies "
                f"accuracy 1, not {reported:.6g}"
            )
        if F and reported == 1.0 and not clear.all():
            problems.append(
                f"accuracy 1 with a tie is impossible: the minimum margin is {min_margin:.6g} "
                f"(tie tolerance {tol[~clear].max():.3g})"
            )
    if decoded is None and margins is None:  # nothing to judge by: the reported accuracy
        stored = np.arange(F) < round(reported * F)
    n_stored = int(stored.sum())

    bits_per, bits_source = _bits_per_param(census, where, bits_per_param)
    count = _param_count(model) if n_params is None else int(n_params)
    ratio = None
    if count is None:
        problems.append("no parameter count: give n_params= (or a params_unique / n_params attribute)")
    else:
        bits = count * bits_per
        ratio = bits / bound if bound > 0 else math.inf
        if ratio < 1.0 and n_stored == F:
            problems.append(
                f"the model stores all {F} facts with {count} parameters x {bits_per:g} bits = "
                f"{bits:.6g} bits, below the {bound:.6g} bits the facts carry ({bound_name}, B1 of "
                f"docs/fact_mlp.md; ratio {ratio:.3g}): the parameter count leaves out stored numbers"
            )
    report = FactModelReport(
        accuracy=n_stored / F if F else 1.0,
        min_margin=min_margin,
        n_params=count,
        bound=bound,
        ratio=ratio,
        problems=problems,
        n_stored=n_stored,
        n_facts=F,
        reported_accuracy=reported,
        bits_per_param=bits_per,
        bits_source=bits_source,
        tie_tolerance=float(tol.max()) if F else 0.0,
        tie_source=tie_source,
    )
    if raise_on_failure and not report.ok:
        n = len(problems)
        parts = []
        if problems:
            parts.append(f"breaks {n} contract{'s' * (n != 1)}: " + "; ".join(problems))
        if not report.stores:
            lost = _lost(facts, np.flatnonzero(~stored), targets, decoded, margins, tol, show)
            parts.append(f"stores {n_stored} of {F} facts: {lost}")
        raise AssertionError("the fact model " + "; and it ".join(parts))
    return report
