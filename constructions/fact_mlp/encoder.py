"""The [derived] encoder-decoder fact MLP (docs/fact_mlp.md#setting).

Architecture class from the abstract and the reference code: a gated encoder followed by a
random-projection decoder. The gadget itself is ours (the paper's was not obtainable):

* Decoder: Rp in R^{m_c x d}, i.i.d. N(0, 1/m_c); target code of value j is c_j = Rp u*_j,
  with u*_j the exact separator of :func:`theory.fact_mlp.rho.decodability`.
* Encoder: gates G (H x d) and features phi(x) = vec(ReLU(G x) (x) x) in R^{H d}; A solves
  Phi A = C_f exactly (C_f has rows c_{f(i)}). Output M(x) = Rp^T A^T phi(x), so
  M(k_i) = Rp^T Rp u*_{f(i)}.
* Gates: H = ceil(F/d); H - 1 are i.i.d. N(0, I_d) and the last one is the minimum-norm
  gate open on every key that opened none of the others (:func:`covering_gates`) [derived
  refinement of our first gate-count rule, which adds gates until every key opens one; its
  H >= 12 floor is not needed]. Antipodal pairs (g, -g) would also cover every key but make Phi rank
  deficient: sum_p g_p beta_p^T antisymmetric gives C(H/2, 2) column dependencies.
  Full rank is NOT implied by H d >= F and covering. Hall-type necessary condition [derived]:
  the feature row of key i lies in the blocks of its open gates O(i), so for every set T of
  gates the keys with O(i) inside T have features in a |T| d-dimensional subspace, and
  rank(Phi) = F requires #{i : O(i) subset of T} <= d |T| for every T. It fails, e.g., when
  more than d keys open one and the same single gate (F=8, d=4, H=2, found by the property test;
  d=2, H=3 with 6 keys: three keys opening only gate 0 give rank <= 5). We do not prove that
  the condition is sufficient for keys in general position (conjecture, consistent with every
  case tried). [derived] remedy: the builder checks the Cholesky factor of Phi Phi^T and appends
  one N(0, I_d) gate at a time until it is well conditioned (``size["extra_gates"]`` counts
  them; parameter counts use the final H); random extra gates split such groups. Checked
  numerically by ``fact_mlp.encoder.encoder_exact`` (H = ceil(F/d) with no extra gate,
  rank(Phi) = F, max error < 1e-8).
* Duplicate keys are found up front (:func:`unique_keys`): a key repeated with different values
  cannot be stored by any function and raises ValueError naming both facts; a key repeated with
  the same value is stored once (the fit uses the distinct keys; H = ceil(F_distinct/d)).
* Exact fit: when H d >= F, A = Phi^T alpha with (Phi Phi^T) alpha = C_f, and
  Phi Phi^T = (R R^T) * (K K^T) (R = ReLU(K G^T)): an F x F solve. When H d < F the
  least-squares solution of Phi A = C_f is used (it cannot be exact: encoder_underparam).

Decoding argument [derived, B2 in docs/fact_mlp.md#statements-and-proof-sketches]: <Rp^T Rp u*, v_i - v_j> >=
(rho - eps) ||v_i - v_j|| whenever Rp preserves the relevant inner products to +-eps, which JL gives at m_c =
O(log n_V / rho^2) (theory.fact_mlp.bounds.jl_code_dim).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from constructions.fact_mlp.facts import FactMLP, FactSet, require_fact_set
from constructions.tasks import check_generator, require_size
from theory.validate import require_int

if TYPE_CHECKING:
    from theory.fact_mlp.rho import Decodability


def unique_keys(keys: np.ndarray, fact_map: np.ndarray, tol: float = 1e-9):
    """Indices of the distinct keys (first occurrences) and, for every key, the index of its
    distinct representative. Keys closer than ``tol`` times the largest key norm count as equal.
    Raises ValueError when two equal keys map to different values (no function stores both)."""
    K = np.asarray(keys, dtype=np.float64)
    scale = max(float(np.max(np.linalg.norm(K, axis=1))), 1e-300)
    q = np.round(K / (scale * tol)).astype(np.int64) if tol > 0 else K
    _, first, inverse = np.unique(q, axis=0, return_index=True, return_inverse=True)
    inverse = np.asarray(inverse).reshape(-1)
    rep = first[inverse]
    clash = np.flatnonzero(fact_map != fact_map[rep])
    if len(clash):
        i, j = int(rep[clash[0]]), int(clash[0])
        raise ValueError(
            f"keys[{i}] and keys[{j}] are equal (within {tol:g} relative) but map to "
            f"values {int(fact_map[i])} and {int(fact_map[j])}: no function stores "
            "both facts (duplicate keys must be consistent)"
        )
    order = np.sort(first)
    position = np.empty(len(K), dtype=np.int64)
    position[order] = np.arange(len(order))
    return order, position[rep]


def covering_gates(keys: np.ndarray, n_gates: int, rng: np.random.Generator) -> np.ndarray:
    """H gate rows such that every key opens at least one gate (the gate-count rule).

    [derived] H - 1 rows are i.i.d. N(0, I_d); the last row is the minimum-norm g with
    g . k = 1 on the keys that opened none of them (an exact solve, possible when at most d
    such keys are in general position). If more than d keys remain uncovered, the last row is
    random as well and covering rows are appended, d uncovered keys at a time, so H grows only
    when it must. Returns G (H', d) with H' >= H; nothing is dropped silently.
    """
    F, d = keys.shape
    n_gates = require_size("n_gates", n_gates, 1, "H")
    G = rng.standard_normal((n_gates - 1, d))
    while True:
        open_any = (keys @ G.T > 0).any(axis=1) if len(G) else np.zeros(F, dtype=bool)
        todo = np.flatnonzero(~open_any)
        if len(todo) == 0:
            if len(G) < n_gates:  # every key already covered: the last gate is random too
                G = np.vstack([G, rng.standard_normal((n_gates - len(G), d))])
            return G
        if len(todo) > d and len(G) < n_gates:
            G = np.vstack([G, rng.standard_normal((1, d))])
            continue
        Ku = keys[todo[:d]]
        g = np.linalg.lstsq(Ku, np.ones(len(Ku)), rcond=None)[0]
        if not np.all(Ku @ g > 0):
            raise ValueError(
                f"keys {todo[:5].tolist()} cannot be covered by one gate: they are "
                "not in general position (e.g. a key and its negative)"
            )
        G = np.vstack([G, g])


def gate_features(keys: np.ndarray, gates: np.ndarray) -> np.ndarray:
    """Phi (n, H d): row i is vec(ReLU(G k_i) (x) k_i), gate-major."""
    R = np.maximum(keys @ gates.T, 0.0)
    return (R[:, :, None] * keys[:, None, :]).reshape(len(keys), -1)


def random_projection(
    code_dim: int, d: int, rng: np.random.Generator, orthogonal: bool = False
) -> np.ndarray:
    """Rp (m_c, d) with i.i.d. N(0, 1/m_c) entries. ``orthogonal`` (needs m_c >= d)
    [derived]: Rp with orthonormal columns, so Rp^T Rp = I and M(k_i) = u*_{f(i)} exactly; then
    every feasible fact set (all used rho_j > 0, B4) is decoded with margin rho ||v_i - v_j||.
    Sizes are integers: ``code_dim`` 4.0 is 4, 2.5 a ValueError naming it.

    >>> import numpy as np
    >>> random_projection(3, 5, np.random.default_rng(0)).shape
    (3, 5)
    >>> random_projection(2.5, 5, np.random.default_rng(0))
    Traceback (most recent call last):
    ...
    ValueError: code_dim=2.5 must be an integer
    """
    code_dim, d = require_size("code_dim", code_dim, 1, "m_c"), require_int("d", d, 1)
    if orthogonal:
        if code_dim < d:
            raise ValueError(f"an orthogonal decoder needs m_c >= d, got m_c={code_dim}, d={d}")
        Q, _ = np.linalg.qr(rng.standard_normal((code_dim, d)))
        return Q
    return rng.standard_normal((code_dim, d)) / np.sqrt(code_dim)


def build_encoder_decoder(
    facts: FactSet,
    code_dim: int,
    rng: np.random.Generator,
    n_gates: int | None = None,
    decodability: Decodability | None = None,
    allow_undecodable: bool = False,
    orthogonal: bool = False,
) -> FactMLP:
    """The [derived] encoder-decoder construction. ``decodability``: a precomputed
    :class:`theory.fact_mlp.rho.Decodability` of ``facts.values`` (else computed).
    ``n_gates`` defaults to :func:`theory.fact_mlp.bounds.n_gates` = ceil(F/d). A used value inside
    the hull of the others (rho_j = 0, B4) raises ValueError naming it, unless
    ``allow_undecodable`` (then its separator is 0 and its facts are ties: must-fail claims).
    ``facts`` must be a :class:`FactSet` (else a TypeError naming it); ``code_dim`` and
    ``n_gates`` are integers (4.0 is 4, 2.5 a ValueError naming the parameter).

    >>> import numpy as np
    >>> from constructions.fact_mlp import fact_set
    >>> facts = fact_set(20, 5, 8, np.random.default_rng(0))
    >>> build_encoder_decoder(facts, 8, np.random.default_rng(1)).accuracy()
    1.0
    >>> build_encoder_decoder(facts, 2.5, np.random.default_rng(1))
    Traceback (most recent call last):
    ...
    ValueError: code_dim=2.5 must be an integer
    """
    require_fact_set(facts)
    return encoder_decoder_family(
        facts, [code_dim], rng, n_gates, decodability, allow_undecodable, orthogonal
    )[0]


def encoder_decoder_family(
    facts: FactSet,
    code_dims,
    rng: np.random.Generator,
    n_gates: int | None = None,
    decodability=None,
    allow_undecodable: bool = False,
    orthogonal: bool = False,
) -> list[FactMLP]:
    """One encoder-decoder MLP per code dimension m_c in ``code_dims``, sharing the gates and
    the factorised F x F solve (only the decoder Rp and the target codes depend on m_c).
    Every code dimension is checked (an integer >= 1) before anything is built.

    >>> import numpy as np
    >>> from constructions.fact_mlp import fact_set
    >>> facts = fact_set(20, 5, 8, np.random.default_rng(0))
    >>> [m.size["code_dim"] for m in encoder_decoder_family(facts, [4, 8], np.random.default_rng(1))]
    [4, 8]
    """
    from theory.fact_mlp.bounds import n_gates as default_gates
    from theory.fact_mlp.rho import decodability as compute_rho

    require_fact_set(facts)
    check_generator(rng)
    code_dims = [require_size("code_dim", m, 1, "m_c") for m in code_dims]
    if n_gates is not None:
        n_gates = require_size("n_gates", n_gates, 1, "H")
    V = facts.values
    distinct, _ = unique_keys(facts.keys, facts.fact_map)
    K, f = facts.keys[distinct], facts.fact_map[distinct]  # consistent duplicates stored once
    F, d = K.shape
    H = default_gates(F, d) if n_gates is None else n_gates
    rho = compute_rho(V) if decodability is None else decodability
    if rho.separators.shape != V.shape:
        raise ValueError(f"decodability separators {rho.separators.shape} do not match values {V.shape}")
    used = np.unique(f)
    bad = used[rho.per_value[used] <= 1e-9]
    if len(bad) and not allow_undecodable:
        raise ValueError(
            f"values[{int(bad[0])}] lies in the convex hull of the other values "
            f"(rho = {rho.per_value[bad[0]]:.2e}): no argmax decoder can output it "
            "(B4 feasibility); undecodable used values: " + str(bad[:10].tolist())
        )
    G = covering_gates(K, H, rng)
    extra = 0
    while len(G) * d >= F:
        R = np.maximum(K @ G.T, 0.0)  # (F, H)
        gram = (R @ R.T) * (K @ K.T)
        factor = _well_conditioned_cholesky(gram)
        if factor is not None:
            break
        if extra >= F:
            raise ValueError(
                f"the encoder's feature Gram stays singular after {extra} extra gates: "
                "the keys are not in general position"
            )
        G = np.vstack([G, rng.standard_normal((1, d))])  # split keys sharing one gate pattern
        extra += 1
    H = len(G)
    R = np.maximum(K @ G.T, 0.0)  # (F, H)
    if H * d >= F:

        def solve(target):
            A_flat = _adjoint(K, R, cho_solve(factor, target))  # A = Phi^T alpha
            for _ in range(3):  # iterative refinement on the fit: A += Phi^T gram^-1 (C - Phi A)
                A_flat += _adjoint(K, R, cho_solve(factor, target - _apply(K, R, A_flat)))
            return A_flat
    else:
        Phi = gate_features(K, G)

        def solve(target):
            A = np.linalg.lstsq(Phi, target, rcond=None)[0].reshape(H, d, -1)
            return A.transpose(1, 0, 2).reshape(d, -1)

    out = []
    for code_dim in code_dims:
        m_c = code_dim
        Rp = random_projection(m_c, d, rng, orthogonal)
        target = (rho.separators @ Rp.T)[f]  # rows c_{f(i)} = Rp u*_{f(i)}
        A_flat = solve(target)
        codes = rho.separators @ Rp.T
        mlp = _assemble(facts, G, Rp, A_flat, codes[facts.fact_map], rho.rho)
        mlp.size["extra_gates"] = extra
        out.append(mlp)
    return out


def _well_conditioned_cholesky(gram: np.ndarray, rcond: float = 1e-12):
    """cho_factor of ``gram`` when it is positive definite with min(diag L)^2 / max(diag gram) above
    ``rcond`` (a cheap conditioning proxy), else None."""
    from numpy.linalg import LinAlgError

    try:
        factor = cho_factor(gram, lower=True, check_finite=True)
    except LinAlgError:
        return None
    diag = np.diag(factor[0])
    if np.min(diag) ** 2 < rcond * np.max(np.diag(gram)):
        return None
    return factor


def _assemble(facts, G, Rp, A_flat, target, rho) -> FactMLP:
    d = facts.d_model
    H, m_c = len(G), Rp.shape[0]
    A = A_flat.reshape(d, H, m_c).transpose(1, 0, 2)  # (H, d, m_c): A_h

    def forward(X):
        X = np.asarray(X, dtype=np.float64)
        return _apply(X, np.maximum(X @ G.T, 0.0), A_flat) @ Rp

    gated = {
        "W_gate": np.repeat(G, m_c, axis=0),  # unit (h, r) -> G[h]
        "W_up": A.transpose(0, 2, 1).reshape(H * m_c, d),  # unit (h, r) -> A_h[:, r]
        "W_down": np.tile(Rp.T, (1, H)),
    }  # unit (h, r) -> Rp[r, :]
    return FactMLP(
        name="encoder_decoder",
        forward=forward,
        params_standard=3 * d * H * m_c,
        params_unique=H * d + H * d * m_c + m_c * d,
        facts=facts,
        size={"code_dim": m_c, "n_gates": H, "hidden": H * m_c},
        gated=gated,
        info={"rho": rho, "code_targets": target, "gates": G, "projection": Rp, "encoder": A_flat},
    )


def _apply(X: np.ndarray, R: np.ndarray, A_flat: np.ndarray) -> np.ndarray:
    """Phi(X) A = sum_h ReLU(g_h . x) (x^T A_h), with A_flat (d, H m_c) gate-major."""
    n, H = R.shape
    return np.einsum("nh,nhr->nr", R, (X @ A_flat).reshape(n, H, -1))


def _adjoint(K: np.ndarray, R: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """Phi^T alpha as A_flat (d, H m_c): A_h = K^T diag(R[:, h]) alpha."""
    F, H = R.shape
    return K.T @ (R[:, :, None] * alpha[:, None, :]).reshape(F, -1)


def fit_error(mlp: FactMLP) -> float:
    """max |Phi A - C_f| of an encoder-decoder MLP: its code outputs against the target codes."""
    K = mlp.facts.keys
    G = mlp.info["gates"]
    code = _apply(K, np.maximum(K @ G.T, 0.0), mlp.info["encoder"])
    return float(np.max(np.abs(code - mlp.info["code_targets"])))


def feature_rank(mlp: FactMLP) -> int:
    """rank(Phi) of the encoder's feature matrix (SVD)."""
    return int(np.linalg.matrix_rank(gate_features(mlp.facts.keys, mlp.info["gates"])))
