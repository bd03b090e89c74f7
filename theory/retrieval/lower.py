"""A lower bound showing that the multiplicative (L/d) scaling of the retrieval task is intrinsic
(2603.15923; the abstract: "a lower bound for the underlying statistical problem shows
that this multiplicative scaling is intrinsic when embeddings are not orthogonal").

The paper's lower-bound statement, its estimator class and its constants could not be obtained
(docs/retrieval.md#what-the-paper-says-and-what-this-repository-adds). Everything here is **[derived]**, this
project's own formalisation, built from standard tools [reference]: Fano's inequality, the Gaussian KL
divergence, a genie (two-point) argument and the union bound. No constant here is the paper's.

The statistical problem (pooled-state observation model) [derived]. V tokens with known embeddings e_1..e_V in
R^d and a known trigger z; an unknown bijection pi drawn uniformly from the V! bijections. Each of N samples
is (y_n, u_n) with y_n ~ U[V] and u_n = e_{pi^-1(y_n)} + z + xi_n, xi_n ~ N(0, sigma^2 I_d), sigma^2 = (L -
1)/d. This is the uniform-attention (pooled) hidden state sum_l h_l of the task (docs/retrieval.md#setting),
the only statistic the first GD step sees, with the L - 1 noise tokens drawn from a fresh Gaussian vocabulary
N(0, I_d/d) (their sum is exactly N(0, (L-1)/d I_d)). The estimators covered are all functions of (E, z, (u_n,
y_n)_n), the one-step memory included.
With orthogonal embeddings and noise tokens from the same V tokens the pooled state reveals the
bag of tokens and this noise model does not apply ("beyond orthogonal"; F3 of theory/retrieval/bounds.py).

(A) Fano lower bound. For every estimator pi_hat,
        P(pi_hat = pi | E) <= (N S_E / (2 sigma^2) + ln 2) / ln V!,
    S_E = (1/V) sum_x ||e_x - e_bar||^2 (about (V-1)/V for Gaussian embeddings). Sketch:
    I(pi; data | E) <= E_pi KL(P_pi || Q) for Q the product of N(e_bar + z, sigma^2 I) given y_n;
    the KL of sample n is ||e_{pi^-1(y_n)} - e_bar||^2 / (2 sigma^2), whose mean over y_n ~ U[V]
    is S_E / (2 sigma^2) for every pi; Fano with the uniform prior on V! bijections. Hence exact
    recall with probability >= p needs
        N >= N_lb = 2 sigma^2 (p ln V! - ln 2) / S_E = 2 (L - 1) (p ln V! - ln 2) / (d S_E),
    about 2 (L - 1)/d * V (ln V - 1) / S_E at p = 1: multiplicative in V, L - 1 and 1/d, and
    through (L - 1)/d only (``fano_n_lower_symbolic``).
(B) Genie (swap) bound, sharper at finite V. Pair up tokens by a matching M. A genie that reveals
    pi up to swaps inside the pairs leaves 2^|M| equally likely bijections whose likelihood
    factorises over the pairs (the label means of different pairs are independent), so the best
    estimator decides each pair by a likelihood-ratio test between two Gaussians at Mahalanobis
    distance D = ||e_x - e_x'|| sqrt((n_y + n_y') / sigma^2) (n_y the count of label y), with
    error Phi-bar(D/2). Any estimator (genie-less) therefore has
        P(pi_hat = pi | E, counts) <= prod_{(x, x') in M} Phi(D_{x x'} / 2).
    Averaged over the multinomial counts: the count sums of disjoint label pairs are negatively
    associated and each factor Phi(a sqrt(n)) is nondecreasing and concave in n, so
    E[prod] <= prod E <= prod_k Phi(Delta_k sqrt(2N/(V sigma^2)) / 2) (Jensen). Hence
    ``swap_n_lower``: below the smallest N making this product >= p, every estimator recovers pi
    exactly with probability < p given E. It scales like (A): sigma^2 V ln(V) / Delta^2.
(C) Sufficient side (the bracket's upper end). The nearest-codeword decoder
    x_hat(y) = argmin_x ||u_bar_y - z - e_x|| errs at label y with true token x only if
    <xi_bar, e_x' - e_x> >= ||e_x - e_x'||^2 / 2 for some x', xi_bar ~ N(0, sigma^2/n_y I); the
    union bound gives P(some error | E, counts) <= sum_x sum_{x' != x} Phi-bar(Delta_{x x'}
    sqrt(n_{pi(x)}) / (2 sigma)). So if every label has count >= n_req(E), the smallest n making
    the double sum <= delta/2, and V P(Bin(N, 1/V) < n_req) <= delta/2, the decoder is exact with
    probability >= 1 - delta; ``n_sufficient_decoder`` is the smallest such N. The maximum-
    likelihood bijection (the MAP estimate under the uniform prior) maximises P(exact | data),
    so it does at least as well on average. With Delta^2 about 2 this is
    N of order V * 4 (L - 1)/d * ln(V^2/delta): the same (L - 1)/d * V ln V scaling as (A), so
    the optimal sample size is pinned between two multiples of V ln V (L - 1)/d.

No torch here (theory/ stays importable without a deep-learning stack).
"""

from __future__ import annotations

import math

import numpy as np

from theory.registry import Bound, register_bound
from theory.validate import require_int, require_real

SOURCE = "Learning to Recall with Transformers Beyond Orthogonal Embeddings (2603.15923)"


def pooled_noise_variance(d_model: int, seq_len: int) -> float:
    """sigma^2 = (L - 1)/d: per-coordinate variance of the sum of L - 1 noise tokens with fresh
    N(0, I_d/d) embeddings (module docstring) [derived]."""
    d = require_int("d_model", d_model, 1)
    L = require_int("seq_len", seq_len, 2)
    return (L - 1) / d


def fano_exact_upper(
    n_samples: float, vocab_size: int, d_model: int, seq_len: int, spread: float = 1.0
) -> float:
    """(A): upper bound on P(exact recovery of pi | E) for every estimator [derived];
    ``spread`` is S_E = (1/V) sum_x ||e_x - e_bar||^2."""
    N = require_real("n_samples", n_samples, 0.0)
    V = require_int("vocab_size", vocab_size, 2)
    S = require_real("spread", spread, 0.0, low_open=True)
    sigma2 = pooled_noise_variance(d_model, seq_len)
    return min(1.0, (N * S / (2.0 * sigma2) + math.log(2.0)) / math.lgamma(V + 1))


def fano_n_lower(vocab_size: int, d_model: int, seq_len: int, p: float = 0.5, spread: float = 1.0) -> float:
    """(A): N_lb = 2 (L-1) (p ln V! - ln 2) / (d S_E); for N < N_lb every estimator recovers pi
    exactly with probability < p [derived]. 0 when p ln V! <= ln 2 (Fano says nothing).

    Examples
    --------
    Below about 128 samples (V = 256, d = 64, L = 8) no estimator recovers pi with probability 1/2:
    >>> round(fano_n_lower(256, 64, 8), 1)
    127.5
    """
    V = require_int("vocab_size", vocab_size, 2)
    p = require_real("p", p, 0.0, 1.0, low_open=True)
    S = require_real("spread", spread, 0.0, low_open=True)
    sigma2 = pooled_noise_variance(d_model, seq_len)
    return max(0.0, 2.0 * sigma2 * (p * math.lgamma(V + 1) - math.log(2.0)) / S)


def fano_n_lower_symbolic():
    """(A) in sympy: N_lb(V, d, L, p, S) = 2 (L - 1)(p log Gamma(V + 1) - log 2)/(d S)."""
    import sympy

    V, d, L, p, S = sympy.symbols("V d L p S", positive=True)
    return 2 * (L - 1) * (p * sympy.loggamma(V + 1) - sympy.log(2)) / (d * S)


def swap_exact_upper(dist2, count_sums, sigma2: float) -> float:
    """(B): prod_k Phi(D_k / 2), D_k^2 = dist2_k * count_sums_k / sigma^2, over the disjoint pairs
    of a matching (squared distances of the paired embeddings, summed label counts) [derived]."""
    from scipy.special import log_ndtr

    dist2 = np.asarray(dist2, dtype=float)
    counts = np.asarray(count_sums, dtype=float)
    if dist2.shape != counts.shape or np.any(dist2 < 0) or np.any(counts < 0):
        raise ValueError("dist2 and count_sums must be non-negative arrays of the same shape (one per pair)")
    sigma2 = require_real("sigma2", sigma2, 0.0, low_open=True)
    D = np.sqrt(dist2 * counts / sigma2)
    return float(math.exp(float(np.sum(log_ndtr(D / 2.0)))))


def swap_n_lower(emb, seq_len: int, p: float = 0.5) -> float:
    """(B) averaged over the counts: the smallest N with prod_k Phi(Delta_k sqrt(2N/(V sigma^2))/2)
    >= p over the greedy close matching of ``emb`` (V, d); for N below it every estimator
    recovers pi exactly with probability < p given the embeddings [derived]."""
    E = np.asarray(emb, dtype=float)
    V, d = E.shape
    require_int("vocab_size", V, 2)
    p = require_real("p", p, 0.0, 1.0, low_open=True, high_open=True)
    sigma2 = pooled_noise_variance(d, seq_len)
    pairs = greedy_close_matching(E)
    dist2 = np.array([float(((E[i] - E[j]) ** 2).sum()) for i, j in pairs])

    def bound(N):
        return swap_exact_upper(dist2, np.full(len(pairs), 2.0 * N / V), sigma2)

    hi = float(V)
    while bound(hi) < p:
        hi *= 2.0
    lo = 0.0
    while hi - lo > 0.5:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if bound(mid) < p else (lo, mid)
    return float(math.ceil(hi))


def greedy_close_matching(emb) -> list:
    """A matching of the tokens that pairs close embeddings first (greedy on squared distance);
    any matching makes (B) valid, close pairs make it sharp."""
    E = np.asarray(emb, dtype=float)
    sq = (E * E).sum(1)
    dist2 = sq[:, None] + sq[None, :] - 2.0 * E @ E.T
    iu = np.triu_indices(len(E), 1)
    order = np.argsort(dist2[iu], kind="stable")
    used = np.zeros(len(E), dtype=bool)
    pairs = []
    for k in order:
        i, j = int(iu[0][k]), int(iu[1][k])
        if not used[i] and not used[j]:
            used[i] = used[j] = True
            pairs.append((i, j))
    return pairs


def decoder_union_bound(dist2_offdiag, n_per_label: float, sigma2: float) -> float:
    """(C): sum over ordered pairs x != x' of Phi-bar(Delta sqrt(n) / (2 sigma)) when every label
    has count n (the bound is decreasing in each count) [derived]."""
    from scipy.special import log_ndtr

    D = np.sqrt(np.asarray(dist2_offdiag, dtype=float) * float(n_per_label) / sigma2)
    return float(np.exp(log_ndtr(-D / 2.0)).sum())


def n_sufficient_decoder(emb, seq_len: int, delta: float = 0.5) -> float:
    """(C): the smallest N at which the nearest-codeword decoder is exact with probability
    >= 1 - delta given the embeddings ``emb`` (V, d) [derived]: the minimum label count
    n_req makes the union bound <= delta/2, and N makes V P(Bin(N, 1/V) < n_req) <= delta/2."""
    from scipy.stats import binom

    E = np.asarray(emb, dtype=float)
    V, d = E.shape
    require_int("vocab_size", V, 2)
    delta = require_real("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    sigma2 = pooled_noise_variance(d, seq_len)
    sq = (E * E).sum(1)
    dist2 = sq[:, None] + sq[None, :] - 2.0 * E @ E.T
    off = dist2[~np.eye(V, dtype=bool)]
    if np.any(off <= 0):
        return math.inf  # two identical embeddings: no N separates them

    def ok_n(n):
        return decoder_union_bound(off, n, sigma2) <= delta / 2.0

    n_hi = 1
    while not ok_n(n_hi):
        n_hi *= 2
    n_lo = n_hi // 2
    while n_hi - n_lo > 1:
        mid = (n_lo + n_hi) // 2
        n_lo, n_hi = (n_lo, mid) if ok_n(mid) else (mid, n_hi)
    n_req = n_hi

    def ok_N(N):
        return V * binom.cdf(n_req - 1, N, 1.0 / V) <= delta / 2.0

    N_hi = V * n_req
    while not ok_N(N_hi):
        N_hi *= 2
    N_lo = V * n_req // 2
    while N_hi - N_lo > 1:
        mid = (N_lo + N_hi) // 2
        N_lo, N_hi = (N_lo, mid) if ok_N(mid) else (mid, N_hi)
    return float(N_hi)


register_bound(
    Bound(
        name="retrieval.fano_n_lower",
        provenance="derived",
        source=SOURCE + ", abstract's lower bound",
        statement="pooled-state problem with Gaussian noise tokens: for N < 2 (L-1)(p ln V! - ln 2)/(d S_E) "
        "every estimator recovers the token-label bijection exactly with probability < p "
        "(Fano); the bound depends on L and d only through (L-1)/d",
        params={
            "vocab_size": "V",
            "d_model": "d",
            "seq_len": "L",
            "p": "target probability of exact recall",
            "spread": "S_E = mean ||e_x - e_bar||^2 (about 1)",
        },
        numeric=fano_n_lower,
        symbolic=fano_n_lower_symbolic,
        aliases={"V": "vocab_size", "d": "d_model", "L": "seq_len", "S_E": "spread"},
    )
)
