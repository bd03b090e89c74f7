"""Bounds of *Learning to Recall with Transformers Beyond Orthogonal Embeddings* (2603.15923).

Area ``retrieval``. The paper's capacity formulas and its lower-bound statement could not be obtained
(docs/retrieval.md#what-the-paper-says-and-what-this-repository-adds): every formula here is **[derived]**,
this project's own formalisation of the one-step value memory (docs/retrieval.md#setting), except the
coupon-collector floor which is standard **[reference]** reasoning applied to the task. None of them is "a
theorem of the paper".

Notation: V ``vocab_size`` tokens = labels, d ``d_model``, L ``seq_len``, N
``n_samples``, delta failure probability, b bits per stored parameter.

F1 ``retrieval.nc_pred``      N_c^pred = 4 V L ln V / (d (1 - sqrt(2 ln V / d))^2)   [derived]
                              a scaling heuristic, NOT a guarantee (see below)
F2 ``retrieval.coupon_floor`` N >= V (ln V + ln(1/delta)) suffices for every token  [derived]
                              to be seen (coupon-collector union bound [reference])
F3 ``retrieval.orth_scale``   N_c^orth = Theta(V ln V), independent of d            [derived]
F4 ``retrieval.param_floor``  d >= log2(V!) / (V b)                                 [derived]
F5 ``retrieval.v_max``        V_max(N, d, L) solves N = N_c^pred(V; d, L)           [derived]

F1 was first stated as a guarantee and is false as one: at N = N_c^pred the
oracle accuracy was 0.83-0.94 at four grid points, for d between 2 ln V and about 4 ln V the
accuracy plateaus below 1 for every N, and for d >> V it asks fewer samples than labels. The true
statements are in theory/retrieval/sufficient.py: a sufficient condition for exact recall
(``retrieval.n_sufficient``), the N -> infinity plateau (``retrieval.plateau_accuracy``) and the
necessary side of the coupon floor (``retrieval.all_seen_upper``). The lower bound that makes
the multiplicative L/d scaling intrinsic (abstract) is in theory/retrieval/lower.py
(``retrieval.fano_n_lower``, [derived]).

No torch here (theory/ stays importable without a deep-learning stack).
"""

from __future__ import annotations

import math

from theory.papers import paper
from theory.registry import Bound, register_bound
from theory.validate import require_int, require_real

SOURCE = paper("retrieval")


def _symbols():
    import sympy

    return sympy.symbols("V d L N delta b", positive=True)


def population_margin(vocab_size: int, d_model: int) -> float:
    """F1 population margin 1 - sqrt(2 ln V / d) [derived].

    The population crosstalk <e_{pi^-1(y')}, e_x> of Gaussian embeddings with variance 1/d per
    coordinate has std 1/sqrt(d); its maximum over the V - 1 wrong labels is about
    sqrt(2 ln V / d) (Gaussian maximum), while the signal ||e_x||^2 is about 1. The margin is the
    fraction of the signal left after the worst population crosstalk; it is non-positive when
    d <= 2 ln V, and then no sample size makes the one-step memory exact.
    """
    V = require_int("vocab_size", vocab_size, 2)
    d = require_int("d_model", d_model, 1)
    return 1.0 - math.sqrt(2.0 * math.log(V) / d)


def nc_pred(vocab_size: int, d_model: int, seq_len: int) -> float:
    """F1: scaling heuristic for the capacity threshold of the one-step memory [derived].

    A heuristic, not a sufficient condition: it takes the crosstalk maximum over the V - 1 wrong
    labels of one token instead of all V (V - 1) pairs, treats ||e_x||^2 as 1 and has no coupon
    term. Use ``theory.retrieval.sufficient.n_sufficient`` for a guarantee.

    N_c^pred = 4 V L ln V / (d (1 - sqrt(2 ln V / d))^2), and +inf when d <= 2 ln V.

    Sketch: with uniform attention and eta = 1, W_v^(1) e_x has signal 1/(V L) on the correct
    label (N/V samples carry x at the informative position, each contributing ||e_x||^2 / L). The
    sample crosstalk on a wrong label sums about (N/V) L token inner products of variance 1/d,
    scaled by 1/(N L): std sqrt(1/(N V L d)). So SNR^2 = N d / (V L). A union bound over V^2
    (token, wrong label) pairs needs SNR^2 >= 2 ln V^2 = 4 ln V after the population crosstalk has
    eaten the fraction sqrt(2 ln V / d) of the signal (``population_margin``); solving for N gives
    the formula. Claims compare only its exponents with measured ones (``scaling.fit``).

    Examples
    --------
    V = 256, d = 64, L = 8 predicts a threshold near 2083 samples; at d = 8 <= 2 ln 256, none:
    >>> round(nc_pred(256, 64, 8), 1), nc_pred(256, 8, 8)
    (2083.1, inf)
    """
    V = require_int("vocab_size", vocab_size, 2)
    d = require_int("d_model", d_model, 1)
    L = require_int("seq_len", seq_len, 1)
    margin = population_margin(V, d)
    if margin <= 0.0:
        return math.inf
    return 4.0 * V * L * math.log(V) / (d * margin**2)


def nc_pred_symbolic():
    import sympy

    V, d, L, _, _, _ = _symbols()
    return 4 * V * L * sympy.log(V) / (d * (1 - sympy.sqrt(2 * sympy.log(V) / d)) ** 2)


def coupon_floor(vocab_size: int, delta: float) -> float:
    """F2: N >= V (ln V + ln(1/delta)) SUFFICES for every token to appear at least once at the
    informative position with probability >= 1 - delta [derived: the coupon-collector union bound,
    reference, applied to the task].

    By the union bound P(some token unseen after N draws) <= V (1 - 1/V)^N <= V exp(-N/V), which
    is <= delta once N >= V (ln V + ln(1/delta)). It is a sufficient condition, not "only if"
    (first written that way, and marginally false as such: P(all 256 seen) = 0.903 at N = 2000 <
    2009). The necessary side is ``retrieval.all_seen_upper``: P(all seen) <= 1/(V (1 - 1/V)^N).
    Every token seen is necessary for exact recall, not sufficient: ties from noise tokens push
    the practical orthogonal threshold to a few times V ln V.

    Examples
    --------
    2009 samples see all 256 tokens with probability >= 0.9:
    >>> round(coupon_floor(256, 0.1), 1)
    2009.0
    """
    V = require_int("vocab_size", vocab_size, 2)
    delta = require_real("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    return V * (math.log(V) + math.log(1.0 / delta))


def coupon_floor_symbolic():
    import sympy

    V, _, _, _, delta, _ = _symbols()
    return V * (sympy.log(V) + sympy.log(1 / delta))


def orth_scale(vocab_size: int, d_model: int) -> float:
    """F3: orthogonal control, N_c^orth = Theta(V ln V) independent of d [derived].

    With orthogonal embeddings (d >= V, e_v = standard basis vectors) the crosstalk
    <e_{x'}, e_x> vanishes unless x' = x, so the only errors come from missing tokens (F2) and
    exact noise-token collisions, whose count does not involve d. The threshold is therefore a
    constant times V ln V, with at most a weak dependence on L through the collision counts.
    Returns the scale V ln V; requires d >= V (orthogonal embeddings of V tokens need V dims).

    Examples
    --------
    The orthogonal scale V ln V at V = 256:
    >>> round(orth_scale(256, 256), 1)
    1419.6
    """
    V = require_int("vocab_size", vocab_size, 2)
    d = require_int("d_model", d_model, 1)
    if d < V:
        raise ValueError(
            f"orthogonal embeddings need d_model >= vocab_size; got d_model={d} < "
            f"vocab_size={V} (bound retrieval.orth_scale = V ln V = "
            f"{V * math.log(V):.4g})"
        )
    return V * math.log(V)


def orth_scale_symbolic():
    import sympy

    V, *_ = _symbols()
    return V * sympy.log(V)


def param_floor(vocab_size: int, bits: float) -> float:
    """F4: parameter-storage floor d >= log2(V!) / (V b) [derived].

    The value matrix W_v (V x d) stored at b bits per entry holds at most V d b bits; the label
    map pi is one of V! bijections, so log2(V!) bits must be stored: V d b >= log2(V!). Weak
    (it only asks d >= log2(V)/b roughly), included for completeness. V=1024, b=32 gives 0.268.

    Examples
    --------
    V = 1024 at 32 bits per entry needs d >= 0.268:
    >>> round(param_floor(1024, 32), 3)
    0.268
    """
    V = require_int("vocab_size", vocab_size, 2)
    b = require_real("bits", bits, 0.0, low_open=True)
    return math.lgamma(V + 1) / math.log(2.0) / (V * b)


def param_floor_symbolic():
    import sympy

    V, _, _, _, _, b = _symbols()
    return sympy.log(sympy.factorial(V), 2) / (V * b)


def v_max(n_samples: float, d_model: int, seq_len: int) -> float:
    """F5: capacity as a function, V_max(N, d, L) solving N = N_c^pred(V; d, L) [derived].

    N_c^pred(V) is continuous and strictly increasing in V on [1, exp(d/2)) (V ln V increases,
    the margin decreases), equals 0 at V = 1 and tends to +inf as V -> exp(d/2) where the
    population margin vanishes. So for every N > 0 there is exactly one root; it is found by
    brentq in t = ln V on (0, d/2), on the logarithm of the equation for numerical range.

    Examples
    --------
    10^5 samples at d = 64, L = 8 support a vocabulary of about 5401 tokens:
    >>> round(v_max(1e5, 64, 8))
    5401
    """
    N = require_real("n_samples", n_samples, 0.0, low_open=True)
    d = require_int("d_model", d_model, 1)
    L = require_int("seq_len", seq_len, 1)
    from scipy.optimize import brentq

    def gap(t: float) -> float:
        return (
            math.log(4.0 * L * t)
            + t
            - math.log(d)
            - 2.0 * math.log(1.0 - math.sqrt(2.0 * t / d))
            - math.log(N)
        )

    lo, hi = 1e-300, d / 2.0
    hi_t = hi * (1.0 - 1e-15)
    while gap(hi_t) < 0.0:  # only for astronomically large N
        hi_t = hi - (hi - hi_t) / 2.0**8
        if hi_t >= hi:
            raise ValueError(f"n_samples={N} too large to solve N = N_c^pred(V) in float64")
    t = brentq(gap, lo, hi_t, xtol=1e-14, rtol=1e-14, maxiter=500)
    return math.exp(t)


def v_max_equation():
    """The implicit equation N - N_c^pred(V; d, L) = 0 whose root in V is V_max (F5)."""
    _, _, _, N, _, _ = _symbols()
    return N - nc_pred_symbolic()


def v_max_sympy(n_samples: float, d_model: int, seq_len: int, guess: float | None = None) -> float:
    """F5 solved with sympy.nsolve (cross-check of :func:`v_max`) [derived]."""
    import sympy

    V, d, L, N, _, _ = _symbols()
    expr = v_max_equation().subs({N: n_samples, d: d_model, L: seq_len})
    start = guess if guess is not None else v_max(n_samples, d_model, seq_len)
    return float(sympy.nsolve(expr, V, start, tol=1e-20, prec=50))


def v_max_gradient(n_samples: float, d_model: int, seq_len: int) -> dict:
    """dV_max/dN, dV_max/dd, dV_max/dL by implicit differentiation of F5 (sympy) [derived].

    With G(V, N, d, L) = N - N_c^pred(V; d, L) = 0, dV/dx = -(dG/dx)/(dG/dV).
    """
    import sympy

    V, d, L, N, _, _ = _symbols()
    G = v_max_equation()
    root = v_max(n_samples, d_model, seq_len)
    at = {V: root, N: n_samples, d: d_model, L: seq_len}
    dG_dV = sympy.diff(G, V)
    return {
        name: float((-sympy.diff(G, sym) / dG_dV).subs(at).evalf(30))
        for name, sym in (("n_samples", N), ("d_model", d), ("seq_len", L))
    }


register_bound(
    Bound(
        name="retrieval.nc_pred",
        provenance="derived",
        source=SOURCE + ", our F1 (docs/retrieval.md)",
        statement="scaling heuristic (not a guarantee) for the one-step memory's threshold: "
        "4 V L ln V / (d (1 - sqrt(2 ln V/d))^2); +inf when d <= 2 ln V; see retrieval.n_sufficient",
        params={
            "vocab_size": "V, number of tokens = labels",
            "d_model": "d, embedding dimension",
            "seq_len": "L, sequence length",
        },
        numeric=nc_pred,
        aliases={"V": "vocab_size", "d": "d_model", "L": "seq_len"},
        symbolic=nc_pred_symbolic,
        label="F1",
    )
)

register_bound(
    Bound(
        name="retrieval.coupon_floor",
        provenance="derived",
        source=SOURCE + ", our F2 (coupon collector; docs/retrieval.md)",
        statement="N >= V (ln V + ln(1/delta)) is sufficient for every token to appear at the informative "
        "position with probability >= 1 - delta (necessary for exact recall, not sufficient)",
        params={"vocab_size": "V", "delta": "failure probability in (0, 1)"},
        numeric=coupon_floor,
        aliases={"V": "vocab_size"},
        symbolic=coupon_floor_symbolic,
        label="F2",
    )
)

register_bound(
    Bound(
        name="retrieval.orth_scale",
        provenance="derived",
        source=SOURCE + ", our F3 (docs/retrieval.md)",
        statement="with orthogonal embeddings (d >= V) N_c = Theta(V ln V), independent of d",
        params={"vocab_size": "V", "d_model": "d >= V"},
        numeric=orth_scale,
        aliases={"V": "vocab_size", "d": "d_model"},
        symbolic=orth_scale_symbolic,
        label="F3",
    )
)

register_bound(
    Bound(
        name="retrieval.param_floor",
        provenance="derived",
        source=SOURCE + ", our F4 (docs/retrieval.md)",
        statement="storing the label map in a V x d value matrix of b-bit entries needs d >= log2(V!)/(V b)",
        params={"vocab_size": "V", "bits": "b, bits per parameter"},
        numeric=param_floor,
        aliases={"V": "vocab_size", "b": "bits"},
        symbolic=param_floor_symbolic,
        label="F4",
    )
)

register_bound(
    Bound(
        name="retrieval.v_max",
        provenance="derived",
        source=SOURCE + ", our F5 (docs/retrieval.md)",
        statement="V_max(N, d, L) is the root in V of N = N_c^pred(V; d, L) "
        "(the F1 heuristic inverted; not a guarantee)",
        params={"n_samples": "N, training sequences", "d_model": "d", "seq_len": "L"},
        numeric=v_max,
        aliases={"N": "n_samples", "d": "d_model", "L": "seq_len"},
        symbolic=v_max_equation,
        label="F5",
    )
)
