"""Explicit weights for single-hop geometric recall (docs/geometric.md#setting).

The structure — subject embeddings that superpose their attribute vectors and a relation-gated
ReLU selector MLP — is the paper's [abstract]. The exact block layout, the gate biases, the
one-layer transformer wiring and all constants are this project's formalisation [derived].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from constructions.decode import KERNEL_TIE_SOURCE, Decoding, kernel_tolerances, predict
from constructions.decode import decode as decode_kernel
from constructions.geometric.codes import attribute_codes, check_codes
from constructions.tasks import check_bijections, require_size, single_hop_dataset
from theory.geometric.single_hop import require_sufficient_block_dim
from theory.validate import require_memory

if TYPE_CHECKING:
    from constructions.measure import Facts

ATTENTION_SCORE = 80.0  # softmax weight on the subject token is 1/(1+e^-80) == 1.0 in float64


def block_subject_embeddings(perms, codes) -> np.ndarray:
    """E_subj (N, R*d0) with block r of row s equal to U0[pi_r(s)]: e_s = sum_r B_r u_{pi_r(s)} [derived]."""
    perms = check_bijections(perms)
    codes = check_codes(codes)
    if codes.shape[0] != perms.shape[1]:
        raise ValueError(f"{codes.shape[0]} codes for N={perms.shape[1]} attributes")
    return np.concatenate([codes[perms[r]] for r in range(perms.shape[0])], axis=1)


@dataclass(frozen=True)
class SelectorMLP:
    """MLP(x, r) = W2 ReLU(W1 x + b1(r)) of the block construction [derived].

    w_in = [I_d; -I_d] (2d, d); gate_bias[r] (2d,) is 0 on block r in both halves and -beta
    elsewhere; w_out = [S, -S] (d0, 2d) with S = [I_d0 ... I_d0] summing the R blocks.
    Exactness lemma [derived]: if beta > max_i |x_i| then MLP(e_s, r) = u_{pi_r(s)} exactly, since
    ReLU(t) - ReLU(-t) = t on the open block and both ReLUs vanish on the closed blocks.
    None of these weights depends on the bijections.
    """

    w_in: np.ndarray
    gate_bias: np.ndarray
    w_out: np.ndarray
    beta: float

    @property
    def dim(self) -> int:
        return self.w_in.shape[1]

    def __call__(self, x, rel) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        rel = np.asarray(rel)
        if np.max(np.abs(x)) >= self.beta:
            raise ValueError(
                f"gate bias beta={self.beta} must exceed max |x_i| = "
                f"{np.max(np.abs(x)):.3g} (hypothesis of the exactness lemma)"
            )
        return np.maximum(x @ self.w_in.T + self.gate_bias[rel], 0.0) @ self.w_out.T

    def param_count(self) -> int:
        """Counted from the arrays: W1 + one gate-bias vector b1(r) + W2 = 2d^2 + 2d + 2d*d0."""
        return int(self.w_in.size + self.gate_bias.shape[1] + self.w_out.size)


def build_selector(n_relations: int, block_dim: int, gate_bias: float = 10.0) -> SelectorMLP:
    """The fact-independent selector of the block construction for R relations and block dimension d0.

    >>> build_selector(2, 3).param_count()  # 2d^2 + 2d + 2d*d0 with d = R d0 = 6
    120
    """
    r_, d0 = (
        require_size("n_relations", n_relations, 1, "R"),
        require_size("block_dim", block_dim, 1, "d0", "block_dim d0"),
    )
    if not gate_bias > 0:
        raise ValueError(f"gate_bias beta={gate_bias} violates the hypothesis beta > 0")
    d = r_ * d0
    eye = np.eye(d)
    w_in = np.concatenate([eye, -eye])
    bias = np.full((r_, 2 * d), -float(gate_bias))
    for r in range(r_):
        bias[r, r * d0 : (r + 1) * d0] = 0.0
        bias[r, d + r * d0 : d + (r + 1) * d0] = 0.0
    s = np.tile(np.eye(d0), (1, r_))
    w_out = np.concatenate([s, -s], axis=1)
    return SelectorMLP(w_in=w_in, gate_bias=bias, w_out=w_out, beta=float(gate_bias))


@dataclass
class OneLayerTransformer:
    """A one-layer, one-head transformer given by explicit weights (torch), read at the last position.

    Residual stream x_t = embed[token_t]; attention h = x_T + W_O sum_t softmax_t(q.k_t) W_V x_t with
    q = W_Q x_T, k_t = W_K x_t (causal; no scaling); MLP out = h + W_out ReLU(W_in h + b_in);
    logits = unembed @ out. ``final_hidden`` returns ``out`` so that decoding can be chunked.
    """

    embed: torch.Tensor
    w_q: torch.Tensor
    w_k: torch.Tensor
    w_v: torch.Tensor
    w_o: torch.Tensor
    w_in: torch.Tensor
    b_in: torch.Tensor
    w_out: torch.Tensor
    unembed: torch.Tensor

    @torch.no_grad()
    def final_hidden(self, tokens) -> torch.Tensor:
        tokens = torch.as_tensor(tokens, device=self.embed.device).long()
        x = self.embed[tokens]  # (B, T, D)
        q = x[:, -1] @ self.w_q.T  # (B, h)
        k = x @ self.w_k.T  # (B, T, h)
        att = torch.softmax(torch.einsum("bh,bth->bt", q, k), dim=1)
        h = x[:, -1] + (torch.einsum("bt,btd->bd", att, x) @ self.w_v.T) @ self.w_o.T
        return h + torch.relu(h @ self.w_in.T + self.b_in) @ self.w_out.T

    @torch.no_grad()
    def logits(self, tokens) -> torch.Tensor:
        return self.final_hidden(tokens) @ self.unembed.T

    def tensors(self) -> dict[str, torch.Tensor]:
        return {k: v for k, v in self.__dict__.items() if isinstance(v, torch.Tensor)}


@dataclass
class BlockModel:
    """Single-hop block-superposition model: codes, bijections, selector and transformer weights."""

    perms: np.ndarray
    codes: np.ndarray
    selector: SelectorMLP
    transformer: OneLayerTransformer
    #: where :meth:`tie_tolerances` comes from (verify.fact_check reports it)
    tie_source = KERNEL_TIE_SOURCE

    @property
    def n_subjects(self) -> int:
        return self.perms.shape[1]

    @property
    def n_relations(self) -> int:
        return self.perms.shape[0]

    @property
    def block_dim(self) -> int:
        return self.codes.shape[1]

    @property
    def subject_embeddings(self) -> np.ndarray:
        return block_subject_embeddings(self.perms, self.codes)

    def tokens(self, subj, rel) -> torch.Tensor:
        """Token layout [derived]: [s, N + r]; prediction read at the last position."""
        subj, rel = np.asarray(subj), np.asarray(rel)
        return torch.from_numpy(np.stack([subj, self.n_subjects + rel], axis=1))

    def final_hidden(self, subj, rel) -> torch.Tensor:
        return self.transformer.final_hidden(self.tokens(subj, rel))

    def param_counts(self) -> dict:
        """Parameter counts: selector 2d^2+2d+2d*d0 (from the arrays), subject N*d, relation R*d, unembedding
        N*d0."""
        n, r, d0 = self.n_subjects, self.n_relations, self.block_dim
        d = r * d0
        return {
            "selector": self.selector.param_count(),
            "subject_embeddings": n * d,
            "relation_embeddings": r * d,
            "unembedding": n * d0,
            "total": self.selector.param_count() + n * d + r * d + n * d0,
        }

    # --- the measurement interface shared with FactMLP (constructions/measure.py) -------------
    def fact_queries(self, facts: Facts | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(subjects, relations, targets) of ``facts``: None (the model's own bijections), a
        relation table (R, N) of bijections (all N*R facts, subject major) or such a triple.

        >>> import numpy as np
        >>> from constructions import build_block_model
        >>> model = build_block_model(np.array([[1, 0, 2]]), 3, rng=np.random.default_rng(0))
        >>> [a.tolist() for a in model.fact_queries()]
        [[0, 1, 2], [0, 0, 0], [1, 0, 2]]
        """
        if facts is None:
            facts = self.perms
        if isinstance(facts, tuple):
            from constructions.measure import _triple

            subj, rel, target = _triple(facts)
        else:
            table = check_bijections(facts)
            if table.shape != self.perms.shape:
                raise ValueError(
                    f"relation table {table.shape} must match the model's (R, N) = {self.perms.shape}"
                )
            subj, rel, target = single_hop_dataset(table)
        for name, ids, bound in (
            ("subjects", subj, self.n_subjects),
            ("relations", rel, self.n_relations),
            ("targets", target, self.n_subjects),
        ):
            if len(ids) and (ids.min() < 0 or ids.max() >= bound):
                raise ValueError(f"{name} must lie in [0, {bound})")
        return subj, rel, target

    def _decoding(self, facts: Facts | None, return_margins: bool, chunk: int = 1 << 15) -> Decoding:
        """The decode kernel over the facts' final hidden states, ``chunk`` facts at a time."""
        subj, rel, target = self.fact_queries(facts)
        unembed = self.transformer.unembed
        n_correct, mins, tols, parts = 0, [float("inf")], [0.0], []
        for at in range(0, len(subj), chunk):
            h = self.final_hidden(subj[at : at + chunk], rel[at : at + chunk])
            res = decode_kernel(
                h, unembed, torch.as_tensor(target[at : at + chunk]), return_margins=return_margins
            )
            n_correct += res.n_correct
            mins.append(res.min_margin)
            tols.append(res.tie_tolerance)
            if return_margins:
                parts.append(res.margins)
        n = len(subj)
        return Decoding(
            accuracy=n_correct / max(n, 1),
            min_margin=min(mins),
            n_correct=n_correct,
            n_queries=n,
            margins=(np.concatenate(parts) if parts else np.zeros(0)) if return_margins else None,
            tie_tolerance=max(tols),
        )

    def decode(self, facts: Facts | None = None, chunk: int = 1 << 15) -> np.ndarray:
        """The attribute the model outputs for every fact (-1 where the two best logits tie), in
        the order of :meth:`fact_queries`; ``facts`` as there (default: the model's own).

        >>> import numpy as np
        >>> from constructions import build_block_model
        >>> model = build_block_model(np.array([[1, 0, 2]]), 3, rng=np.random.default_rng(0))
        >>> model.decode().tolist()
        [1, 0, 2]
        """
        subj, rel, _ = self.fact_queries(facts)
        out = [
            predict(self.final_hidden(subj[at : at + chunk], rel[at : at + chunk]), self.transformer.unembed)
            for at in range(0, len(subj), chunk)
        ]
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)

    def tie_tolerances(self, facts: Facts | None = None, chunk: int = 1 << 15) -> np.ndarray:
        """The tie tolerance of every fact under the decode kernel's tie rule (float64,
        :func:`constructions.decode.kernel_tolerances`; in the order of :meth:`fact_queries`).

        >>> import numpy as np
        >>> from constructions import build_block_model
        >>> model = build_block_model(np.array([[1, 0, 2]]), 3, codes=np.eye(3))
        >>> bool((model.margins() > model.tie_tolerances()).all())
        True
        """
        subj, rel, _ = self.fact_queries(facts)
        parts = [
            kernel_tolerances(
                self.final_hidden(subj[at : at + chunk], rel[at : at + chunk]), self.transformer.unembed
            )
            for at in range(0, len(subj), chunk)
        ]
        return np.concatenate(parts) if parts else np.zeros(0)

    def accuracy(self, facts: Facts | None = None) -> float:
        """The fraction of ``facts`` decoded correctly, ties counted as errors (the decode kernel).

        >>> import numpy as np
        >>> from constructions import build_block_model
        >>> model = build_block_model(np.array([[1, 0, 2]]), 3, rng=np.random.default_rng(0))
        >>> model.accuracy(), model.accuracy(np.array([[0, 1, 2]]))
        (1.0, 0.3333333333333333)
        """
        return float(self._decoding(facts, return_margins=False).accuracy)

    def margins(self, facts: Facts | None = None) -> np.ndarray:
        """The decoding margin of every fact: the logit of its attribute minus the best other
        logit (float64, in the order of :meth:`fact_queries`).

        >>> import numpy as np
        >>> from constructions import build_block_model
        >>> model = build_block_model(np.array([[1, 0, 2]]), 3, codes=np.eye(3))
        >>> model.margins().tolist()
        [1.0, 1.0, 1.0]
        """
        return self._decoding(facts, return_margins=True).margins


def block_model_bytes(
    n_subjects: int, n_relations: int, block_dim: int, dtype: torch.dtype = torch.float64, device: str = "cpu"
) -> float:
    """An estimate of the bytes :func:`build_block_model` allocates for N subjects, R relations and
    block dimension d0 (d = R d0, width D = d + R + 1 + d0): its float64 arrays, the codes (N d0),
    the selector (3 d^2 + 2 d R + 3 d d0 with the identity it is built from), the subject
    embeddings (2 N d with the blocks they are joined from) and the transformer's weights
    ((2N + R + 6d + 2) D + 2d), plus a copy of those weights where ``dtype`` is not float64 or
    ``device`` is not the CPU (the tensors then do not share the arrays' memory).

    >>> block_model_bytes(100_000, 16, 35) / 2**30  # the largest block model of the claims
    1.79...
    """
    n, r, d0 = int(n_subjects), int(n_relations), int(block_dim)
    d = r * d0
    width = d + r + 1 + d0
    weights = (2 * n + r + 6 * d + 2) * width + 2 * d
    arrays = n * d0 + 3 * d * d + 2 * d * r + 3 * d * d0 + 2 * n * d + weights
    copy = 0 if (dtype == torch.float64 and str(device) == "cpu") else weights * dtype.itemsize
    return 8.0 * arrays + copy


def build_block_model(
    perms: np.ndarray,
    block_dim: int | None = None,
    *,
    codes: np.ndarray | None = None,
    code_kind: str = "spherical",
    rng: np.random.Generator | None = None,
    gate_bias: float = 10.0,
    guarantee: tuple[float, float] | None = None,
    device: str = "cpu",
    dtype: torch.dtype = torch.float64,
) -> BlockModel:
    """Build the one-layer transformer of the block construction for the bijections ``perms`` [derived].

    Give either ``codes`` (N, d0) or ``block_dim`` with ``code_kind`` and ``rng``. With
    ``guarantee=(t, delta)`` the block dimension must meet B2's sufficient dimension, else a
    ValueError names it. Residual stream layout (width D = d + R + 1 + d0): subject content
    [0, d), relation one-hot [d, d+R), subject flag d+R, answer channels [d+R+1, D).
    The relation token attends to the subject token (score 80 vs 0), the value/output maps copy
    the subject content, the MLP is the selector with b1(r) written by the relation one-hot through
    a fixed map, and its output lands in the answer channels, which the unembedding U0 reads.
    Sizes whose arrays would exceed the memory budget (:func:`block_model_bytes` above
    :data:`theory.validate.MEMORY_BUDGET_BYTES`) are a ValueError naming N, R, d0 and the
    estimate, raised before any array is built.

    >>> model = build_block_model(np.array([[1, 0, 2]]), 3, rng=np.random.default_rng(0))
    >>> model.accuracy(), model.param_counts()["total"]
    (1.0, 63)
    >>> build_block_model(np.array([[1, 0, 2]]), 10**8, rng=np.random.default_rng(0))
    Traceback (most recent call last):
    ...
    ValueError: build_block_model(N=3, R=1, block_dim d0=100000000): the block model's arrays (width D = R d0 + R + 1 + d0 = 200000002) would take about 1.25 EiB, above the memory budget of 4 GiB (theory.validate.MEMORY_BUDGET_BYTES)
    """
    perms = check_bijections(perms)
    n_rel, n = perms.shape
    if codes is None:
        if block_dim is None or rng is None:
            raise ValueError("give codes, or block_dim together with rng")
        d0 = require_size("block_dim", block_dim, 1, "d0", "block_dim d0")
    else:
        codes = check_codes(codes)
        if codes.shape[0] != n:
            raise ValueError(f"{codes.shape[0]} codes for N={n} attributes")
        d0 = codes.shape[1]
    if guarantee is not None:
        require_sufficient_block_dim(d0, n, *guarantee)
    require_memory(
        f"build_block_model(N={n}, R={n_rel}, block_dim d0={d0}): the block model's arrays (width "
        f"D = R d0 + R + 1 + d0 = {n_rel * d0 + n_rel + 1 + d0})",
        block_model_bytes(n, n_rel, d0, dtype, device),
    )
    if codes is None:
        codes = check_codes(attribute_codes(n, d0, code_kind, rng))
    selector = build_selector(n_rel, d0, gate_bias)
    e_subj = block_subject_embeddings(perms, codes)
    if np.max(np.abs(e_subj)) >= gate_bias:
        raise ValueError(
            f"gate bias beta={gate_bias} must exceed max |x_i| = {np.max(np.abs(e_subj)):.3g} "
            "(hypothesis of the exactness lemma)"
        )
    d = n_rel * d0
    width = d + n_rel + 1 + d0
    rel0, flag, ans0 = d, d + n_rel, d + n_rel + 1
    embed = np.zeros((n + n_rel, width))
    embed[:n, :d] = e_subj
    embed[:n, flag] = 1.0
    embed[n + np.arange(n_rel), rel0 + np.arange(n_rel)] = 1.0
    w_q = np.zeros((1, width))
    w_q[0, rel0 : rel0 + n_rel] = ATTENTION_SCORE
    w_k = np.zeros((1, width))
    w_k[0, flag] = 1.0
    w_v = np.zeros((d, width))
    w_v[:, :d] = np.eye(d)
    w_o = np.zeros((width, d))
    w_o[:d, :] = np.eye(d)
    w_in = np.zeros((2 * d, width))
    w_in[:, :d] = selector.w_in
    w_in[:, rel0 : rel0 + n_rel] = selector.gate_bias.T
    w_out = np.zeros((width, 2 * d))
    w_out[ans0:, :] = selector.w_out
    unembed = np.zeros((n, width))
    unembed[:, ans0:] = codes

    def t(a):
        return torch.as_tensor(a, dtype=dtype, device=device)

    transformer = OneLayerTransformer(
        embed=t(embed),
        w_q=t(w_q),
        w_k=t(w_k),
        w_v=t(w_v),
        w_o=t(w_o),
        w_in=t(w_in),
        b_in=t(np.zeros(2 * d)),
        w_out=t(w_out),
        unembed=t(unembed),
    )
    return BlockModel(perms=perms, codes=codes, selector=selector, transformer=transformer)


def swap_bijections(model: BlockModel, new_perms: np.ndarray) -> BlockModel:
    """Transfer [abstract/derived]: new bijections change only the subject-embedding rows; every other
    weight tensor is reused as the same object."""
    new_perms = check_bijections(new_perms)
    if new_perms.shape != model.perms.shape:
        raise ValueError(f"new bijections {new_perms.shape} must match {model.perms.shape}")
    tr = model.transformer
    embed = tr.embed.clone()
    n, d = model.n_subjects, model.n_relations * model.block_dim
    embed[:n, :d] = torch.as_tensor(
        block_subject_embeddings(new_perms, model.codes), dtype=embed.dtype, device=embed.device
    )
    new_tr = OneLayerTransformer(**{**tr.tensors(), "embed": embed})
    return BlockModel(perms=new_perms, codes=model.codes, selector=model.selector, transformer=new_tr)
