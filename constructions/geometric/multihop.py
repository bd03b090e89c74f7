"""Multi-hop recall with and without chain of thought (B5, docs/geometric.md#statements-and-proof-sketches).

The existence of both constructions and the capacity-depth tradeoff are the paper's [abstract];
the R^k-block layout, the per-position gate embeddings and the greedy CoT loop are this project's
formalisation [derived]. Entities are both subjects and attributes (A = S): the answer id of one
hop is the subject token of the next.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import torch

from constructions.geometric.single_hop import (
    BlockModel,
    attribute_codes,
    block_subject_embeddings,
    build_selector,
    check_codes,
)
from constructions.tasks import check_bijections, check_generator, require_size
from theory.geometric.multihop import dim_nocot

QUERY_CHUNK = 4096
#: entries of one chunk of selector pre-activations (2 MiB in float64): small enough to stay in cache
SELECTOR_CHUNK_ENTRIES = 1 << 18


def check_chains(chains, n_relations: int) -> np.ndarray:
    """Validate relation chains: int array (B, k), k >= 1, every entry a relation id in [0, R)."""
    chains = np.asarray(chains)
    if chains.ndim == 1:
        chains = chains[None, :]
    if chains.ndim != 2 or chains.shape[1] < 1:
        raise ValueError(f"chains must have shape (B, k) with k >= 1 hops, got {chains.shape}")
    if chains.size and (not np.issubdtype(chains.dtype, np.integer)):
        if np.any(chains != np.round(chains)):
            raise ValueError("chains must hold integer relation ids")
        chains = chains.astype(np.int64)
    if chains.size and (chains.min() < 0 or chains.max() >= n_relations):
        bad = chains[(chains < 0) | (chains >= n_relations)][0]
        raise ValueError(f"chain names unknown relation {bad}; relations are 0..{n_relations - 1}")
    return chains.astype(np.int64)


def compose(perms, chains, start) -> np.ndarray:
    """pi_rho(x) = pi_{r_k} o ... o pi_{r_1}(x) for every (x, rho) pair."""
    perms = check_bijections(perms)
    chains = check_chains(chains, perms.shape[0])
    y = np.asarray(start, dtype=np.int64).copy()
    if y.shape != (chains.shape[0],):
        raise ValueError(f"{y.shape} starts for {chains.shape[0]} chains")
    if y.size and (y.min() < 0 or y.max() >= perms.shape[1]):
        raise ValueError(f"start entities must lie in [0, {perms.shape[1]})")
    for j in range(chains.shape[1]):
        y = perms[chains[:, j], y]
    return y


def multi_hop_queries(perms, n_hops: int, n_queries: int, rng: np.random.Generator):
    """Random k-hop queries: start x uniform on [N], chain uniform on [R]^k.

    Returns (start (Q,), chains (Q, k), target (Q,)) with target = pi_rho(x).
    """
    perms = check_bijections(perms)
    check_generator(rng)
    n_hops, n_queries = (
        require_size("n_hops", n_hops, 1, "k", "n_hops k"),
        require_size("n_queries", n_queries, 1),
    )
    n_rel, n = perms.shape
    start = rng.integers(0, n, size=n_queries)
    chains = rng.integers(0, n_rel, size=(n_queries, n_hops))
    return start, chains, compose(perms, chains, start)


def all_chains(n_relations: int, n_hops: int) -> np.ndarray:
    """Every chain in [R]^k, shape (R^k, k), in mixed-radix order (r_1 most significant).

    >>> all_chains(2, 2).tolist()
    [[0, 0], [0, 1], [1, 0], [1, 1]]
    """
    n_relations, n_hops = (
        require_size("n_relations", n_relations, 1, "R"),
        require_size("n_hops", n_hops, 1, "k", "n_hops k"),
    )
    grids = np.meshgrid(*[np.arange(n_relations)] * n_hops, indexing="ij")
    return np.stack([g.ravel() for g in grids], axis=1).astype(np.int64)


def all_multi_hop_queries(perms, n_hops: int):
    """All N * R^k k-hop queries (start major, chain minor) with their targets."""
    perms = check_bijections(perms)
    n_rel, n = perms.shape
    chains = all_chains(n_rel, n_hops)
    start = np.repeat(np.arange(n), len(chains))
    chains = np.tile(chains, (n, 1))
    return start, chains, compose(perms, chains, start)


def cot_trace(x: int, chain, perms) -> list[int]:
    """The intermediate entities y_1..y_k with y_j = pi_{r_j}(y_{j-1}), y_0 = x."""
    perms = check_bijections(perms)
    chain = check_chains(chain, perms.shape[0])[0]
    if not 0 <= int(x) < perms.shape[1]:
        raise ValueError(f"start entity {x} not in [0, {perms.shape[1]})")
    out, y = [], int(x)
    for r in chain:
        y = int(perms[r, y])
        out.append(y)
    return out


# ---------------------------------------------------------------------------------------------
def chain_index(chains, n_relations: int) -> np.ndarray:
    """Mixed-radix index of each chain in [R]^k (r_1 most significant), matching :func:`all_chains`."""
    idx = np.zeros(chains.shape[0], dtype=np.int64)
    for j in range(chains.shape[1]):
        idx = idx * n_relations + chains[:, j]
    return idx


@dataclass
class NoCoTModel:
    """One-pass k-hop model [derived]: the block construction with one block per chain.

    composite[rho] = pi_rho is the composite bijection of chain rho; e_x holds block rho equal to
    u_{pi_rho(x)} (d = R^k d0). The selector is the single-hop one with R^k gate groups, but its gate bias is
    written by the chain tokens as a sum of per-position relation embeddings:
    gate[j, r] (2d,) is -beta on group rho when rho_j != r and 0 otherwise, so chain (r_1..r_k)
    puts bias -beta * #{j: r_j != rho_j} on group rho: 0 on its own group, <= -beta elsewhere.
    With beta > max |x_i| exactly one group opens and the output is u_{pi_rho(x)} (exactness lemma).
    """

    perms: np.ndarray
    n_hops: int
    codes: np.ndarray
    composite: np.ndarray
    w_in: np.ndarray
    w_out: np.ndarray
    gate: np.ndarray  # (k, R, 2d)
    beta: float

    @property
    def dim(self) -> int:
        return self.w_in.shape[1]

    @property
    def subject_embeddings(self) -> np.ndarray:
        return block_subject_embeddings(self.composite, self.codes)

    def gate_bias(self, chains) -> np.ndarray:
        chains = check_chains(chains, self.perms.shape[0])
        if chains.shape[1] != self.n_hops:
            raise ValueError(f"the model answers {self.n_hops}-hop chains, got {chains.shape[1]} hops")
        return sum(self.gate[j, chains[:, j]] for j in range(self.n_hops))

    @cached_property
    def _sparse_weights(self):
        """W1 and W2 as CSR matrices (the selector's nonzeros: one +-1 per row of W1, 2 R^k per
        row of W2)."""
        from scipy.sparse import csr_matrix

        return csr_matrix(self.w_in), csr_matrix(self.w_out)

    def selector_output(self, start, chains) -> np.ndarray:
        """MLP(e_x, chain) = W2 ReLU(W1 e_x + sum_j gate[j, r_j]) (B, d0), in chunks of queries.

        The two products run over the nonzero weights only (:attr:`_sparse_weights`), equal
        bitwise to the dense products: every unit of W1 e_x is one exact product +-x_i, and
        within the |x_i| < beta checked here every output of W2 sums exact zeros (closed
        groups) and at most one nonzero +-ReLU(+-x_i) of the open group, so no sum rounds
        (tests/geometric/test_fast_paths.py compares both)."""
        chains = check_chains(chains, self.perms.shape[0])
        start = np.asarray(start, dtype=np.int64)
        emb = self.subject_embeddings
        if np.max(np.abs(emb)) >= self.beta:
            raise ValueError(f"gate bias beta={self.beta} must exceed max |x_i| = {np.max(np.abs(emb)):.3g}")
        w_in, w_out = self._sparse_weights
        out = np.empty((len(start), self.codes.shape[1]))
        rows = max(1, SELECTOR_CHUNK_ENTRIES // w_in.shape[0])
        for i in range(0, len(start), rows):
            sl = slice(i, i + rows)
            pre = (w_in @ emb[start[sl]].T).T + self.gate_bias(chains[sl])
            out[sl] = (w_out @ np.maximum(pre, 0.0).T).T
        return out

    def dense_selector_output(self, start, chains) -> np.ndarray:
        """:meth:`selector_output` through the dense weight matrices (the reference it equals)."""
        chains = check_chains(chains, self.perms.shape[0])
        start = np.asarray(start, dtype=np.int64)
        emb = self.subject_embeddings
        out = np.empty((len(start), self.codes.shape[1]))
        for i in range(0, len(start), QUERY_CHUNK):
            sl = slice(i, i + QUERY_CHUNK)
            pre = emb[start[sl]] @ self.w_in.T + self.gate_bias(chains[sl])
            out[sl] = np.maximum(pre, 0.0) @ self.w_out.T
        return out

    def param_counts(self) -> dict:
        n, d = self.perms.shape[1], self.dim
        return {
            "selector_width": self.w_in.shape[0],
            "selector": int(self.w_in.size + self.w_out.size),
            "gate_embeddings": int(self.gate.size),
            "subject_embeddings": n * d,
            "unembedding": int(self.codes.size),
        }


def build_nocot_model(
    perms,
    n_hops: int,
    block_dim: int | None = None,
    *,
    codes=None,
    rng: np.random.Generator | None = None,
    code_kind: str = "spherical",
    gate_bias: float = 10.0,
    dim_budget: int | None = None,
) -> NoCoTModel:
    """Build the R^k-block one-pass model [derived].

    ``dim_budget`` d: refuse (ValueError naming B5) when R^k d0 > d, i.e. k > k_max(d).
    """
    perms = check_bijections(perms)
    n_rel, n = perms.shape
    n_hops = require_size("n_hops", n_hops, 1, "k", "n_hops k")
    if codes is None:
        if block_dim is None or rng is None:
            raise ValueError("give codes, or block_dim together with rng")
        codes = attribute_codes(n, block_dim, code_kind, rng)
    codes = check_codes(codes)
    d0 = codes.shape[1]
    need = dim_nocot(n_rel, n_hops, d0)
    if dim_budget is not None and need > dim_budget:
        raise ValueError(
            f"dim={dim_budget} is below the no-CoT dimension R^k d0 = {need} for R={n_rel}, "
            f"k={n_hops}, d0={d0} (bound B5: k exceeds k_max)"
        )
    chains = all_chains(n_rel, n_hops)
    composite = np.stack([compose(perms, np.tile(c, (n, 1)), np.arange(n)) for c in chains])
    sel = build_selector(len(chains), d0, gate_bias)
    d = need
    group = np.repeat(np.arange(len(chains)), d0)  # gate group of each coordinate
    group = np.concatenate([group, group])  # both ReLU halves
    gate = np.zeros((n_hops, n_rel, 2 * d))
    for j in range(n_hops):
        for r in range(n_rel):
            gate[j, r] = np.where(chains[group, j] != r, -float(gate_bias), 0.0)
    model = NoCoTModel(
        perms=perms,
        n_hops=int(n_hops),
        codes=codes,
        composite=composite,
        w_in=sel.w_in,
        w_out=sel.w_out,
        gate=gate,
        beta=float(gate_bias),
    )
    if np.max(np.abs(codes)) >= gate_bias:
        raise ValueError(
            f"gate bias beta={gate_bias} must exceed max |x_i| = {np.max(np.abs(codes)):.3g} "
            "(hypothesis of the exactness lemma)"
        )
    return model


# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CoTResult:
    """Greedy CoT run: predictions per step (B, k), final prediction and min margin per query."""

    steps: np.ndarray
    final: np.ndarray
    min_margin: np.ndarray


@torch.no_grad()
def run_cot(model: BlockModel, start, chains) -> CoTResult:
    """CoT with the single-hop block model [derived]: at step j feed (y_{j-1}, r_j),
    take the greedy argmax y_j over the N attributes and feed it back as the next subject token
    (A = S). Dimension and width do not depend on k; the cost is k forward passes. A tie at any step
    gives margin <= 0 there, which the caller counts as an error."""
    chains = check_chains(chains, model.n_relations)
    y = np.asarray(start, dtype=np.int64).copy()
    if y.shape != (chains.shape[0],):
        raise ValueError(f"{y.shape} starts for {chains.shape[0]} chains")
    unembed = model.transformer.unembed
    steps = np.empty(chains.shape, dtype=np.int64)
    min_margin = np.full(len(y), np.inf)
    for j in range(chains.shape[1]):
        for i in range(0, len(y), QUERY_CHUNK):
            sl = slice(i, i + QUERY_CHUNK)
            logits = model.final_hidden(y[sl], chains[sl, j]) @ unembed.T
            top = torch.topk(logits, 2, dim=1)
            steps[sl, j] = top.indices[:, 0].cpu().numpy()
            gap = (top.values[:, 0] - top.values[:, 1]).double().cpu().numpy()
            min_margin[sl] = np.minimum(min_margin[sl], gap)
        y = steps[:, j].copy()
    return CoTResult(steps=steps, final=steps[:, -1].copy(), min_margin=min_margin)
