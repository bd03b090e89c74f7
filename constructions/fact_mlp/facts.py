"""Fact sets, embedding geometries and the common interface of every fact-storing MLP.

docs/fact_mlp.md#setting. Randomness only through an explicit ``numpy.random.Generator``.

Every construction (the [derived] encoder-decoder of :mod:`constructions.fact_mlp.encoder` and
the baselines of :mod:`constructions.fact_mlp.baselines`) returns a :class:`FactMLP`:
``forward(keys) -> outputs`` in value space (decoded by argmax of <output, v_j>), its standard
and unique parameter counts, the fact set it was built for, and -- for the gated ones -- the
weights of the equivalent gated MLP ``y = W_down[(W_up x) * ReLU(W_gate x)]`` so that a
Transformer can hold it (:meth:`FactMLP.torch_module`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, overload

import numpy as np

from constructions.tasks import check_generator
from theory.validate import require_int


def spherical(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """n i.i.d. N(0, I_d) rows, each normalised to unit length. Sizes are integers (4.0 is 4;
    2.5 is a ValueError naming the parameter, never truncated).

    >>> import numpy as np
    >>> spherical(3, 4, np.random.default_rng(0)).shape
    (3, 4)
    """
    check_generator(rng)
    n, d = require_int("n", n), require_int("d", d)
    if n < 1 or d < 1:
        raise ValueError(f"spherical needs n >= 1 and d >= 1, got n={n}, d={d}")
    X = rng.standard_normal((n, d))
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def gaussian(n: int, d: int, rng: np.random.Generator) -> np.ndarray:
    """Un-normalised N(0, I_d / d) rows (norms fluctuate around 1).

    >>> import numpy as np
    >>> gaussian(3, 4, np.random.default_rng(0)).shape
    (3, 4)
    """
    check_generator(rng)
    n, d = require_int("n", n, 1), require_int("d", d, 1)
    return rng.standard_normal((n, d)) / np.sqrt(d)


def spike(X: np.ndarray, beta: float, u: np.ndarray) -> np.ndarray:
    """Anisotropy [reference]: x -> x + beta <x, u> u, then renormalised (u unit)."""
    X = np.asarray(X, dtype=np.float64)
    u = np.asarray(u, dtype=np.float64).reshape(-1)
    if X.ndim != 2 or u.shape != (X.shape[1],):
        raise ValueError(f"spike needs X (n, d) and u (d,), got {X.shape} and {u.shape}")
    if beta < 0:
        raise ValueError(f"spike strength beta={beta} violates the hypothesis beta >= 0")
    u = u / np.linalg.norm(u)
    Y = X + beta * (X @ u)[:, None] * u[None, :]
    return Y / np.linalg.norm(Y, axis=1, keepdims=True)


def clustered(
    n: int, d: int, rng: np.random.Generator, n_clusters: int = 8, spread: float = 0.5
) -> np.ndarray:
    """Unit rows drawn around ``n_clusters`` random unit centres: c + spread * g / sqrt(d).

    >>> import numpy as np
    >>> clustered(5, 4, np.random.default_rng(0), n_clusters=2).shape
    (5, 4)
    """
    check_generator(rng)
    n, d = require_int("n", n, 1), require_int("d", d, 1)
    n_clusters = require_int("n_clusters", n_clusters, 1)
    centres = spherical(n_clusters, d, rng)
    X = centres[rng.integers(0, n_clusters, n)] + spread * rng.standard_normal((n, d)) / np.sqrt(d)
    return X / np.linalg.norm(X, axis=1, keepdims=True)


GEOMETRIES = ("spherical", "gaussian", "spiked", "clustered")


def embed(
    n: int, d: int, rng: np.random.Generator, geometry: str = "spherical", beta: float = 3.0
) -> np.ndarray:
    """n embeddings of one of GEOMETRIES (spiked: spike(spherical, beta, u), u = spherical(1, d)).

    >>> import numpy as np
    >>> embed(3, 4, np.random.default_rng(0), "spiked").shape
    (3, 4)
    """
    if geometry == "spherical":
        return spherical(n, d, rng)
    if geometry == "gaussian":
        return gaussian(n, d, rng)
    if geometry == "spiked":
        X = spherical(n, d, rng)
        return spike(X, beta, spherical(1, d, rng)[0])
    if geometry == "clustered":
        return clustered(n, d, rng)
    raise ValueError(f"geometry {geometry!r} is not one of {GEOMETRIES}")


@dataclass(frozen=True)
class FactSet:
    """Keys K (F, d), values V (n_V, d) and the map f: [F] -> [n_V] (docs/fact_mlp.md#setting)."""

    keys: np.ndarray
    values: np.ndarray
    fact_map: np.ndarray

    def __post_init__(self):
        check_fact_set(self.keys, self.values, self.fact_map)

    @property
    def n_facts(self) -> int:
        return self.keys.shape[0]

    @property
    def d_model(self) -> int:
        return self.keys.shape[1]

    @property
    def n_values(self) -> int:
        return self.values.shape[0]

    @property
    def targets(self) -> np.ndarray:
        """The value embedding of each fact, V_f (F, d)."""
        return self.values[self.fact_map]


def require_fact_set(facts: FactSet, name: str = "facts") -> FactSet:
    """``facts`` itself when it is a :class:`FactSet`; otherwise a TypeError naming FactSet and
    the type given (a list, a dict or a tuple of arrays is not a fact set: build one with
    ``FactSet(keys, values, fact_map)``).

    >>> import numpy as np
    >>> facts = fact_set(4, 2, 3, np.random.default_rng(0))
    >>> require_fact_set(facts) is facts
    True
    >>> require_fact_set([facts.keys, facts.values, facts.fact_map])
    Traceback (most recent call last):
    ...
    TypeError: facts must be a FactSet (keys, values, fact_map), got list
    """
    if not isinstance(facts, FactSet):
        raise TypeError(f"{name} must be a FactSet (keys, values, fact_map), got {type(facts).__name__}")
    return facts


def check_fact_set(keys, values, fact_map) -> None:
    """Shapes, finiteness and range of a fact set; ValueError naming the offending shape."""
    K, V, f = np.asarray(keys), np.asarray(values), np.asarray(fact_map)
    if K.ndim != 2 or V.ndim != 2 or K.shape[1] != V.shape[1]:
        raise ValueError(f"keys {K.shape} and values {V.shape} must be (F, d) and (n_V, d) with the same d")
    if f.shape != (K.shape[0],):
        raise ValueError(f"fact_map shape {f.shape} must be (F,) = ({K.shape[0]},)")
    if not np.issubdtype(f.dtype, np.integer):
        raise ValueError("fact_map must hold integer value ids")
    if len(f) and (f.min() < 0 or f.max() >= V.shape[0]):
        raise ValueError(f"fact_map entries must lie in [0, {V.shape[0]})")
    for name, X in (("keys", K), ("values", V)):
        bad = np.argwhere(~np.isfinite(X))
        if len(bad):
            raise ValueError(f"{name}[{bad[0][0]}] holds a NaN or infinite entry")


def fact_set(
    n_facts: int,
    n_values: int,
    d: int,
    rng: np.random.Generator,
    tied: bool = False,
    geometry: str = "spherical",
    beta: float = 3.0,
) -> FactSet:
    """Untied: keys, values from ``geometry``, f = rng.integers(0, n_V, F);
    tied: F = n_V, keys = values, f = rng.permutation(F). Sizes are integers (4.0 is 4).

    >>> import numpy as np
    >>> facts = fact_set(6, 3, 4, np.random.default_rng(0))
    >>> facts.keys.shape, facts.values.shape, facts.fact_map.shape
    ((6, 4), (3, 4), (6,))
    """
    check_generator(rng)
    n_facts, n_values = require_int("n_facts", n_facts, 1), require_int("n_values", n_values, 1)
    d = require_int("d", d, 1)
    if tied:
        if n_facts != n_values:
            raise ValueError(f"tied fact set needs F = n_V, got F={n_facts}, n_V={n_values}")
        V = embed(n_values, d, rng, geometry, beta)
        return FactSet(V, V, rng.permutation(n_facts).astype(np.int64))
    K = embed(n_facts, d, rng, geometry, beta)
    V = embed(n_values, d, rng, geometry, beta)
    return FactSet(K, V, rng.integers(0, n_values, n_facts).astype(np.int64))


def interior_value(values: np.ndarray) -> np.ndarray:
    """Append (v_1 + v_2)/2, a point of conv(V) that is not a vertex (undecodable)."""
    V = np.asarray(values, dtype=np.float64)
    return np.vstack([V, (V[0] + V[1]) / 2.0])


def feasibility(values, fact_map) -> tuple[bool, list[int]]:
    """B4 [derived]: storable iff every used value is a vertex of conv(V) (rho_{f(i)} > 0)."""
    from theory.fact_mlp.rho import is_feasible

    return is_feasible(values, fact_map)


@dataclass
class FactMLP:
    """A fact-storing MLP built for one fact set.

    forward: keys (n, d) -> outputs (n, d) in value space. params_standard: parameters as a
    dense (gated) MLP; params_unique: distinct numbers needed to write it down. gated: None or
    dict with W_gate (m, d), W_up (m, d), W_down (d, m) and optional b_gate, b_up, b_down.
    """

    name: str
    forward: Callable[[np.ndarray], np.ndarray]
    params_standard: int
    params_unique: int
    facts: FactSet
    size: dict = field(default_factory=dict)
    gated: dict | None = None
    info: dict = field(default_factory=dict)

    @overload
    def decode(self) -> tuple[float, float]: ...

    @overload
    def decode(self, facts: FactSet) -> np.ndarray: ...

    def decode(self, facts: FactSet | None = None) -> tuple[float, float] | np.ndarray:
        """Without an argument: (accuracy, min margin) over the fact set the MLP was built for,
        ties counted as errors (chunked), as it always returned. With a fact set (the
        measurement interface shared with the block model, constructions/measure.py): the value
        index the MLP outputs for every fact, argmax_j <forward(k_i), v_j>, -1 for a tie.

        >>> import numpy as np
        >>> from constructions.fact_mlp import build_encoder_decoder, fact_set
        >>> facts = fact_set(20, 5, 8, np.random.default_rng(0))
        >>> mlp = build_encoder_decoder(facts, 8, np.random.default_rng(1))
        >>> bool((mlp.decode(facts) == facts.fact_map).all())
        True
        >>> [round(x, 3) for x in mlp.decode()] == [1.0, round(float(mlp.margins().min()), 3)]
        True
        """
        if facts is None:
            return decode_numpy(self.forward(self.facts.keys), self.facts.values, self.facts.fact_map)
        from constructions.decode import predict

        fs = self._fact_set(facts)
        return predict(self._outputs(fs), np.asarray(fs.values, dtype=np.float64))

    def accuracy(self, facts: FactSet | None = None) -> float:
        """The fraction of ``facts`` (default: the MLP's own) decoded correctly, ties counted as
        errors (the decode kernel of constructions/decode.py).

        >>> import numpy as np
        >>> from constructions.fact_mlp import FactSet, build_encoder_decoder, fact_set
        >>> facts = fact_set(20, 5, 8, np.random.default_rng(0))
        >>> mlp = build_encoder_decoder(facts, 8, np.random.default_rng(1))
        >>> mlp.accuracy()
        1.0
        >>> other = FactSet(facts.keys, facts.values, (facts.fact_map + 1) % 5)
        >>> mlp.accuracy(other)
        0.0
        """
        return float(self._decoding(facts, return_margins=False).accuracy)

    def margins(self, facts: FactSet | None = None) -> np.ndarray:
        """The decoding margin of every fact (default: the MLP's own), <y_i, v_f(i)> - max_{j !=
        f(i)} <y_i, v_j> for the output y_i of key i (float64).

        >>> import numpy as np
        >>> from constructions.fact_mlp import build_encoder_decoder, fact_set
        >>> facts = fact_set(20, 5, 8, np.random.default_rng(0))
        >>> mlp = build_encoder_decoder(facts, 8, np.random.default_rng(1))
        >>> m = mlp.margins()
        >>> m.shape, bool(m.min() > 0)
        ((20,), True)
        """
        return self._decoding(facts, return_margins=True).margins

    @property
    def tie_source(self) -> str:
        """Where :meth:`tie_tolerances` comes from (``verify.fact_check`` reports it)."""
        from constructions.decode import KERNEL_TIE_SOURCE

        return KERNEL_TIE_SOURCE

    def tie_tolerances(self, facts: FactSet | None = None) -> np.ndarray:
        """The tie tolerance of every fact (default: the MLP's own) under the decode kernel's tie
        rule (float64, :func:`constructions.decode.kernel_tolerances`): a margin at most it is a tie.

        >>> import numpy as np
        >>> from constructions.fact_mlp import build_encoder_decoder, fact_set
        >>> facts = fact_set(20, 5, 8, np.random.default_rng(0))
        >>> mlp = build_encoder_decoder(facts, 8, np.random.default_rng(1))
        >>> tol = mlp.tie_tolerances()
        >>> tol.shape, bool((tol > 0).all() and (mlp.margins() > tol).all())
        ((20,), True)
        """
        from constructions.decode import kernel_tolerances

        fs = self._fact_set(facts)
        return kernel_tolerances(self._outputs(fs), np.asarray(fs.values, dtype=np.float64))

    def _fact_set(self, facts: FactSet | None) -> FactSet:
        if facts is None:
            return self.facts
        if not all(hasattr(facts, a) for a in ("keys", "values", "fact_map")):
            raise TypeError(
                f"facts of a FactMLP must be a FactSet (keys, values, fact_map), got {type(facts).__name__}"
            )
        return facts

    def _outputs(self, facts: FactSet) -> np.ndarray:
        H = np.asarray(self.forward(facts.keys), dtype=np.float64)
        if np.isnan(H).any():
            raise ValueError("NaN in the MLP outputs")
        return H

    def _decoding(self, facts: FactSet | None, return_margins: bool):
        from constructions.decode import decode

        fs = self._fact_set(facts)
        return decode(
            self._outputs(fs),
            np.asarray(fs.values, dtype=np.float64),
            np.asarray(fs.fact_map),
            return_margins=return_margins,
        )

    def torch_module(self, device: str = "cpu", dtype=None):
        """The gated form as a torch ``nn.Module`` (for insertion in a Transformer)."""
        if self.gated is None:
            raise ValueError(f"{self.name} has no gated-MLP form")
        return GatedMLPModule(self.gated, device=device, dtype=dtype)


def decode_numpy(outputs, values, fact_map, chunk: int | None = None) -> tuple[float, float]:
    """Accuracy and minimum margin of argmax_j <output_i, v_j> against f(i); ties are errors.

    The one decode kernel (:func:`constructions.decode.decode`, also ``verify.measure.decode``)
    in float64: a margin within the kernel's rounding tolerance counts as a tie, hence an error.
    """
    from constructions.decode import decode

    H = np.asarray(outputs, dtype=np.float64)
    if np.isnan(H).any():
        raise ValueError("NaN in the MLP outputs")
    res = decode(H, np.asarray(values, dtype=np.float64), np.asarray(fact_map), chunk=chunk)
    return res.accuracy, res.min_margin


def gated_forward(gated: dict, X: np.ndarray) -> np.ndarray:
    """y = W_down[(W_up x + b_up) * ReLU(W_gate x + b_gate)] + b_down, rows of X."""
    X = np.asarray(X, dtype=np.float64)
    g = X @ gated["W_gate"].T + gated.get("b_gate", 0.0)
    u = X @ gated["W_up"].T + gated.get("b_up", 0.0)
    return (u * np.maximum(g, 0.0)) @ gated["W_down"].T + gated.get("b_down", 0.0)


def GatedMLPModule(gated: dict, device: str = "cpu", dtype=None):
    """torch module of a gated MLP with the given weights (device given as a string, never hard-coded)."""
    import torch
    from torch import nn

    dtype = dtype or torch.float64

    class _Gated(nn.Module):
        def __init__(self):
            super().__init__()
            m, d = gated["W_gate"].shape
            self.gate = nn.Linear(d, m, bias="b_gate" in gated)
            self.up = nn.Linear(d, m, bias="b_up" in gated)
            self.down = nn.Linear(m, d, bias="b_down" in gated)
            self.to(device=device, dtype=dtype)  # before copying: no float32 round trip
            with torch.no_grad():
                for lin, w, b in (
                    (self.gate, "W_gate", "b_gate"),
                    (self.up, "W_up", "b_up"),
                    (self.down, "W_down", "b_down"),
                ):
                    lin.weight.copy_(torch.as_tensor(gated[w], dtype=dtype))
                    if b in gated:
                        lin.bias.copy_(torch.as_tensor(gated[b], dtype=dtype))

        def forward(self, x):
            return self.down(self.up(x) * torch.relu(self.gate(x)))

    return _Gated().to(device=device, dtype=dtype)
