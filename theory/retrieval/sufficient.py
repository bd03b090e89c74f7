"""A true sufficient condition for exact recall of the one-step value memory, and its N -> infinity
plateau (2603.15923; docs/retrieval.md#statements-and-proof-sketches). Every statement here is
**[derived]** (this project's own), built from standard tail bounds [reference]: Gaussian
Lipschitz concentration, the Gaussian tail, Laurent-Massart for chi-square, the multiplicative
Chernoff bound and Bernstein's inequality. None of it is the paper's.

Setting (the one-step value memory of docs/retrieval.md#setting, eta = 1, -1/V dropped). Write G = E E^T (Gram
matrix of the token embeddings), s_x = ||e_x||^2, x_y = pi^-1(y), n_y the number of training sequences
labelled y, and M_y the counts of the (L-1) n_y noise tokens of those sequences (C[y] = n_y e_{x_y} + M_y).
The oracle logit of token x for label y is, up to the common factor 1/(L N),

    score(x, y) = n_y (G[x_y, x] + c_x) + D_{y,x},   c_x = <z_trig, e_x> + (L-1) <e_bar, e_x>,

where D_{y,x} = sum_j (G[U_j, x] - <e_bar, e_x>) over the (L-1) n_y noise draws U_j ~ U[V]
(centred). Exact recall is score(x, pi(x)) > score(x, y') for every x and y' != pi(x).

N -> infinity (``plateau_accuracy``). n_y / (N/V) -> 1 and D / N -> 0 almost surely, so
score / (N/V) -> G[x_y, x] + c_x with c_x common to all labels: token x is recalled in the limit
iff s_x > max_{x' != x} G[x', x]. Given e_x, G[x', x] / s_x are i.i.d. N(0, 1/(d s_x)), so
P(x recalled in the limit | e_x) = Phi(sqrt(d s_x))^(V-1) with d s_x ~ chi^2_d, and the expected
limiting accuracy is E[Phi(chi_d)^(V-1)]. It is below 1 for every d: when V Phi-bar(chi_d) is not
small (d up to a few times ln V) the accuracy plateaus visibly below 1 and exact recall has
vanishing probability for large N ("no finite N").
"""

from __future__ import annotations

import math

from theory.papers import paper
from theory.registry import Bound, register_bound
from theory.validate import require_int, require_real

SOURCE = paper("retrieval")
N_EVENTS = 6  # delta is split equally over the six events of the proof sketch


def plateau_accuracy(vocab_size: int, d_model: int) -> float:
    """Expected oracle accuracy of the one-step memory as N -> infinity: E[Phi(chi_d)^(V-1)]
    (Gaussian embeddings; module docstring) [derived]. One-dimensional quadrature over chi_d.

    Examples
    --------
    V = 256 tokens in d = 16 plateau at an expected accuracy of 0.919:
    >>> round(plateau_accuracy(256, 16), 3)
    0.919
    """
    V = require_int("vocab_size", vocab_size, 2)
    d = require_int("d_model", d_model, 1)
    from scipy import integrate, special, stats

    def integrand(r: float) -> float:
        return math.exp((V - 1) * special.log_ndtr(r) + stats.chi.logpdf(r, d))

    mode = math.sqrt(max(d - 1, 0))
    lo, hi = max(mode - 12.0, 0.0), mode + 12.0
    value, _ = integrate.quad(integrand, lo, hi, points=[mode], limit=200, epsabs=1e-12, epsrel=1e-10)
    return float(min(max(value, 0.0), 1.0))


def plateau_dimension(vocab_size: int, target: float) -> float:
    """The real d* at which plateau_accuracy(V, d) (interpolated in d) crosses ``target``: for
    d < d* even infinitely many samples give expected oracle accuracy below the target [derived]."""
    V = require_int("vocab_size", vocab_size, 2)
    target = require_real("target", target, 0.0, 1.0, low_open=True, high_open=True)
    d = 1
    prev = plateau_accuracy(V, d)
    while prev < target:
        cur = plateau_accuracy(V, d + 1)
        if cur >= target:
            return d + (target - prev) / (cur - prev)
        d, prev = d + 1, cur
        if d > 10**6:
            raise ValueError(f"target={target} not reached by d = 10^6 at vocab_size={V}")
    return float(d)


def _embedding_constants(V: int, d: int, L: int, delta: float, embedding: str):
    """Bounds that hold together with probability >= 1 - 4 delta/6 over the embeddings and
    trigger: s_lo <= s_x, |G[x',x]|/s_x <= rho, Var(G[U,x])/s_x^2 <= var_rel, |c_x|/s_x <= c_rel.
    None when the population margin bound 1 - rho is not positive (no finite N is promised)."""
    t = math.log(N_EVENTS / delta)
    mean_chi = d / math.sqrt(d + 1.0)  # E chi_d >= d / sqrt(d + 1)
    t6 = math.log(4.0 * V) + t
    if embedding == "orthogonal":  # c_x = z_x + (L-1)/V, z = g/||g||: events (1) and (6) for g
        norm = mean_chi - math.sqrt(2.0 * t)
        z_max = min(1.0, math.sqrt(2.0 * t6) / norm) if norm > 0 else 1.0
        return 1.0, 0.0, 1.0 / V, z_max + (L - 1) / V
    root = mean_chi - math.sqrt(2.0 * (math.log(V) + t))  # Lipschitz: chi_d >= E chi_d - sqrt(2 t1)
    if root <= 0.0:
        return None
    s_lo = root * root / d
    rho = math.sqrt(2.0 * (math.log(2.0 * V * V) + t) / (d * s_lo))  # Gaussian tail, V^2 pairs
    if rho >= 1.0:
        return None
    t5 = math.log(V) + t
    chi2_hi = (V - 1) + 2.0 * math.sqrt((V - 1) * t5) + 2.0 * t5  # Laurent-Massart, V tokens
    var_rel = (1.0 + chi2_hi / (d * s_lo)) / V
    c_rel = math.sqrt(2.0 * t6 / d) / s_lo + (L - 1) / V * (1.0 + math.sqrt(2.0 * t6 * (V - 1) / (d * s_lo)))
    return s_lo, rho, var_rel, c_rel


def margin_lower_bound(
    n_samples: float, vocab_size: int, d_model: int, seq_len: int, delta: float, embedding: str = "gaussian"
) -> float:
    """Lower bound on min_{x, y'} [score(x, pi(x)) - score(x, y')] / (nu s_x), nu = N/V, valid with
    probability >= 1 - delta (see :func:`n_sufficient`); -inf when no bound is available."""
    V, d, L = int(vocab_size), int(d_model), int(seq_len)
    consts = _embedding_constants(V, d, L, delta, embedding)
    if consts is None:
        return -math.inf
    _, rho, var_rel, c_rel = consts
    t = math.log(N_EVENTS / delta)
    nu = float(n_samples) / V
    eps = math.sqrt(3.0 * (math.log(2.0 * V) + t) / nu)  # Chernoff, every n_y within (1 +- eps) nu
    if eps >= 1.0:
        return -math.inf
    t4 = math.log(2.0 * V * V) + t  # Bernstein, V^2 (x, y) pairs
    m = (L - 1) * nu * (1.0 + eps)
    b_rel = 2.0 * max(1.0, rho)
    u_rel = math.sqrt(2.0 * m * var_rel * t4) + 2.0 / 3.0 * b_rel * t4
    return (1.0 - rho) - eps * (1.0 + rho + 2.0 * c_rel) - 2.0 * u_rel / nu


def n_sufficient(
    vocab_size: int, d_model: int, seq_len: int, delta: float = 0.1, embedding: str = "gaussian"
) -> float:
    """Sufficient sample size for exact recall of the one-step memory [derived].

    Statement. Gaussian embeddings N(0, I_d/d) (or orthogonal ones, ``embedding="orthogonal"``), trigger a
    unit vector independent of them, task of docs/retrieval.md#setting. If N >= n_sufficient(V, d, L, delta) <
    infinity, then with probability >= 1 - delta over embeddings and data the oracle accuracy of the one-step
    memory W_v^(1) equals 1. +inf means the statement promises nothing (it never claims that no N works;
    ``plateau_accuracy`` shows the plateau below 1).

    Proof sketch (t = ln(6/delta); each of six events fails with probability <= delta/6):
    (1) chi_d = sqrt(d s_x) >= d/sqrt(d+1) - sqrt(2 (ln V + t)) for all x (Lipschitz concentration
        of the Gaussian norm, E chi_d >= d/sqrt(d+1)); this gives s_lo <= s_x.
    (2) given e_x, G[x',x]/s_x ~ N(0, 1/(d s_x)): |G[x',x]| <= rho s_x for all V^2 pairs with
        rho = sqrt(2 (ln 2V^2 + t) / (d s_lo)); rho < 1 is the population margin.
    (3) every n_y lies in nu (1 +- eps), nu = N/V, eps = sqrt(3 (ln 2V + t) / nu) (Chernoff).
    (4) Bernstein for D_{y,x} given n_y: (L-1) n_y centred draws bounded by 2 max_v |G[v,x]|
        <= 2 s_x, of variance <= (1/V) sum_v G[v,x]^2; |D| <= u for all V^2 pairs with
        u = sqrt(2 m sigma^2 (ln 2V^2 + t)) + (2/3) b (ln 2V^2 + t), m = (L-1) nu (1+eps).
    (5) sum_{v != x} (G[v,x]/s_x)^2 = chi^2_{V-1}/(d s_x) is bounded by Laurent-Massart: sigma^2.
    (6) |<z, e_x>| <= sqrt(2 (ln 4V + t)/d) and |sum_{v != x} G[v,x]/s_x| <= sqrt(2 (ln 4V + t)
        (V-1)/(d s_x)) for all x (Gaussian tails): |c_x|/s_x <= c_rel.
    On these events score(x, pi(x)) - score(x, y') >= nu s_x [(1 - rho) - eps (1 + rho + 2 c_rel)
    - 2 u/(nu s_x)] (n_{pi(x)} s_x >= nu (1-eps) s_x, n_y' G[x',x] <= nu G + eps nu |G|,
    (n_pi(x) - n_y') c_x >= -2 eps nu |c_x|, |D| <= u twice). The bracket increases in N, so the
    smallest N = V nu making it positive (found by bisection) suffices; eps < 1 also forces every
    n_y >= 1, so the coupon floor is implied. Orthogonal embeddings: s_x = 1, rho = 0,
    sigma^2 <= 1/V, events (2) and (5) hold surely, and |c_x| <= |z_x| + (L-1)/V with
    |z_x| = |g_x|/||g|| bounded by events (6) and (1) applied to the trigger's Gaussian g.
    The bound is conservative (union bounds, worst-case constants): claims report its ratio to the
    measured threshold; it is finite only once d is several times 4 ln V.

    Examples
    --------
    V = 64, d = 256, L = 8: about 10^5 samples guarantee exact recall with probability >= 0.9:
    >>> f"{n_sufficient(64, 256, 8):.3g}"
    '1.02e+05'
    """
    V = require_int("vocab_size", vocab_size, 2)
    d = require_int("d_model", d_model, 1)
    L = require_int("seq_len", seq_len, 1)
    delta = require_real("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    if embedding not in ("gaussian", "orthogonal"):
        raise ValueError(f"embedding={embedding!r} must be 'gaussian' or 'orthogonal'")
    if embedding == "orthogonal" and d < V:
        raise ValueError(
            f"orthogonal embeddings need d_model >= vocab_size; got d_model={d} < vocab_size={V}"
        )
    if _embedding_constants(V, d, L, delta, embedding) is None:
        return math.inf

    def ok(n: float) -> bool:
        return margin_lower_bound(n, V, d, L, delta, embedding) > 0.0

    hi = float(V)
    while not ok(hi):
        hi *= 2.0
        if hi > 1e30:
            return math.inf
    lo = hi / 2.0
    while hi - lo > 0.5:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return float(math.ceil(hi))


def n_sufficient_orthogonal(vocab_size: int, seq_len: int, delta: float = 0.1) -> float:
    """:func:`n_sufficient` for orthogonal embeddings (d >= V; the bound does not depend on d)."""
    V = require_int("vocab_size", vocab_size, 2)
    return n_sufficient(V, V, seq_len, delta, "orthogonal")


def all_seen_upper(vocab_size: int, n_samples: float) -> float:
    """Necessary side of the coupon floor [derived]: P(every token at the informative position at
    least once) <= 1/mu, mu = V (1 - 1/V)^N the expected number of unseen tokens (second moment:
    the unseen indicators are negatively correlated, so Var X <= E X and P(X = 0) <= 1/E X).

    Examples
    --------
    1000 samples see all 256 tokens with probability at most 0.196:
    >>> round(all_seen_upper(256, 1000), 4)
    0.1957
    """
    V = require_int("vocab_size", vocab_size, 2)
    N = require_real("n_samples", n_samples, 0.0)
    mu = V * math.exp(N * math.log1p(-1.0 / V))
    return min(1.0, 1.0 / mu)


register_bound(
    Bound(
        name="retrieval.n_sufficient",
        provenance="derived",
        source=SOURCE + ", one-step value memory (docs/retrieval.md)",
        statement="if N >= n_sufficient(V, d, L, delta) the one-step value memory recalls every token "
        "(oracle accuracy 1) with probability >= 1 - delta; +inf: nothing is promised",
        params={
            "vocab_size": "V",
            "d_model": "d",
            "seq_len": "L",
            "delta": "failure probability in (0, 1)",
            "embedding": "'gaussian' or 'orthogonal' (d >= V)",
        },
        numeric=n_sufficient,
        aliases={"V": "vocab_size", "d": "d_model", "L": "seq_len"},
    )
)

register_bound(
    Bound(
        name="retrieval.plateau_accuracy",
        provenance="derived",
        source=SOURCE + ", one-step value memory (docs/retrieval.md)",
        statement="as N -> infinity the expected oracle accuracy of the one-step memory tends to "
        "E[Phi(chi_d)^(V-1)] < 1 (Gaussian embeddings)",
        params={"vocab_size": "V", "d_model": "d"},
        numeric=plateau_accuracy,
        aliases={"V": "vocab_size", "d": "d_model"},
    )
)

register_bound(
    Bound(
        name="retrieval.all_seen_upper",
        provenance="derived",
        source=SOURCE + ", our F2 (necessary side; docs/retrieval.md)",
        statement="P(every token seen at the informative position after N samples) <= 1 / (V (1 - 1/V)^N)",
        params={"vocab_size": "V", "n_samples": "N"},
        numeric=all_seen_upper,
        aliases={"V": "vocab_size", "N": "n_samples"},
        label="F2",
    )
)
