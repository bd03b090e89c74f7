"""First-order context-gate probe of a causal language model (docs/hopfield.md) [derived].

Our operationalisation of the Llama-3 experiment of Context-Gated Associative Retrieval
(2605.10970), whose prompts, layers and metrics could not be obtained. Three forward passes give
next-token logits at the last position: l0 (zero-shot query line), lc (demonstrations + a
placeholder query line) and lf (demonstrations + the real query line). With C the candidate
answer tokens, the context-only gate bias is b = lc|_C - mean(lc|_C) and the first-order
prediction is l1 = l0|_C + b (the context acts as an additive log-prior on the candidates, as the
log-gates u0 of the first-order approximation).

Needs torch; the Hugging Face parts need ``transformers`` (optional extra ``lm``), imported lazily.
Nothing is downloaded: models load with ``local_files_only=True``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from constructions.hopfield.gate import gate_split, gated_token, log_softmax
from constructions.lm.prefix import batch_last, grouped_last, last_logits, padded_batches  # noqa: F401
from constructions.lm.text import DEFAULT_TEMPLATE, TextEncoder, facts_path, read_facts, read_pairs  # noqa: F401
from constructions.seeding import torch_generator
from theory.validate import require_int

ARROW, NEWLINE, PLACEHOLDER = 3, 4, 5
SUBJECT_IDS = range(10, 110)
ANSWER_IDS = range(110, 210)


# ---------------------------------------------------------------------------------------------
# prompts
def relational_prompts(pairs, k_demo, gen: np.random.Generator, max_prompts=None) -> list:
    """(demonstrations, query subject, answer) triples of one relation.

    Each pair in turn (in a random order, at most ``max_prompts``) is the query; ``k_demo``
    demonstrations are drawn without replacement from the other pairs.
    """
    pairs = list(pairs)
    if len(pairs) < 2:
        raise ValueError("relational prompts need at least 2 pairs")
    k = min(int(k_demo), len(pairs) - 1)
    if k < 1:
        raise ValueError(f"k_demo={k_demo} must be >= 1")
    order = gen.permutation(len(pairs))
    if max_prompts is not None:
        order = order[: int(max_prompts)]
    prompts = []
    for q in order:
        others = [j for j in range(len(pairs)) if j != q]
        demos = [pairs[j] for j in gen.choice(others, size=k, replace=False)]
        prompts.append((demos, pairs[q][0], pairs[q][1]))
    return prompts


class SyntheticEncoder:
    """Token ids for the tiny random model: subjects and answers are ids themselves."""

    def demos(self, demos):
        return [t for s, a in demos for t in (int(s), ARROW, int(a), NEWLINE)]

    def full(self, demos, subject):
        return self.demos(demos) + [int(subject), ARROW]

    def zero_shot(self, subject):
        return [int(subject), ARROW]

    def context_only(self, demos):
        return self.demos(demos) + [PLACEHOLDER, ARROW]

    def candidate(self, answer):
        return int(answer)


# ---------------------------------------------------------------------------------------------
# models
def tiny_llama(seed: int, dtype="float64"):
    """The tiny random Llama of the pipeline check; its weights come from an explicit
    torch.Generator(seed)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=512,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
    )
    with torch.random.fork_rng(devices=[]):  # transformers' own init draws from the global RNG:
        model = LlamaForCausalLM(config)  # keep it untouched, then overwrite every weight
    gen = torch_generator(require_int("seed", seed, 0))
    with torch.no_grad():  # weights from the explicit generator only: N(0, 0.02), norms at 1
        for name, param in sorted(model.named_parameters()):
            if "norm" in name:
                param.fill_(1.0)
            else:
                param.copy_(torch.randn(param.shape, generator=gen, dtype=param.dtype) * 0.02)
    return model.to({"float64": torch.float64, "float32": torch.float32}[dtype]).eval()


def additive_stub(vocab_size: int, seed: int, interaction: float = 0.0):
    """A model whose last-position logits are q(query token) + h(context) (the probe's identities).

    ``interaction`` != 0 adds interaction * q * h (elementwise): the context effect then depends on
    the query, the first-order identities no longer hold (the control of the pipeline claim).

    q(t) = Q[t] with Q[PLACEHOLDER] = 0, h(context) = sum of H[t] over the tokens before the
    query line (h(empty) = 0). For it, l_f - l0 = h and b = h - mean(h), so r = 1 and l1 = l_f - const.
    """
    import torch

    vocab_size = require_int("vocab_size", vocab_size, PLACEHOLDER + 1)  # Q[PLACEHOLDER] exists
    gen = torch_generator(require_int("seed", seed, 0))
    Q = torch.randn(vocab_size, vocab_size, generator=gen, dtype=torch.float64)
    Q[PLACEHOLDER] = 0.0
    H = torch.randn(vocab_size, vocab_size, generator=gen, dtype=torch.float64)

    class Stub(torch.nn.Module):
        def forward(self, input_ids, output_hidden_states=False):
            ids = input_ids[0]
            logits = torch.zeros(1, ids.shape[0], vocab_size, dtype=torch.float64)
            q, h = Q[ids[-2]], H[ids[:-2]].sum(0)
            logits[0, -1] = q + h + interaction * q * h

            @dataclass
            class Out:
                logits: object
                hidden_states: object

            return Out(logits=logits, hidden_states=(logits,))

    return Stub().eval()


# ---------------------------------------------------------------------------------------------
# probe
def pearson(x, y) -> float:
    x, y = np.asarray(x, float) - np.mean(x), np.asarray(y, float) - np.mean(y)
    den = math.sqrt(float(x @ x) * float(y @ y))
    if den == 0.0:
        raise ValueError("Pearson correlation undefined: a constant vector")
    return float(x @ y) / den


def candidate_mass(logits, cand) -> float:
    """m_C = sum_{c in C} softmax(l)_c over the full vocabulary."""
    z = logits - logits.max()
    return float(np.exp(z[cand]).sum() / np.exp(z).sum())


def participation_ratio_logits(values) -> float:
    """PR of softmax(values)."""
    p = np.exp(values - values.max())
    p /= p.sum()
    return float(1.0 / np.sum(p * p))


def spectrum_pr(states) -> float:
    """PR of the eigenvalues of the covariance of the rows of ``states``: (sum w)^2 / sum w^2.

    With n rows in d > n dimensions the covariance (d x d) has rank < n and its nonzero
    eigenvalues are those of the rows' centred Gram matrix divided by n - 1 (n x n): that matrix
    is decomposed instead (the same PR up to float round-off; 2 rows of a 640-wide residual
    stream: a 2 x 2 problem instead of 640 x 640).

    >>> gen = np.random.default_rng(0)
    >>> S = gen.normal(size=(5, 40))
    >>> w = np.clip(np.linalg.eigvalsh(np.cov(S, rowvar=False)), 0, None)
    >>> bool(np.isclose(spectrum_pr(S), w.sum() ** 2 / np.sum(w * w), rtol=1e-12))
    True
    """
    S = np.asarray(states, float)
    if S.ndim != 2 or S.shape[0] < 2:
        raise ValueError(f"spectrum_pr needs at least 2 rows of states, got shape {S.shape}")
    if S.shape[0] <= S.shape[1]:
        centred = S - S.mean(0)
        w = np.linalg.eigvalsh(centred @ centred.T / (S.shape[0] - 1))
    else:
        w = np.linalg.eigvalsh(np.cov(S, rowvar=False))
    w = np.clip(w, 0, None)
    return float(w.sum() ** 2 / np.sum(w * w)) if np.sum(w * w) > 0 else 0.0


def margin(values, answer_pos) -> float:
    """l[a] - max_{c in C, c != a} l[c] on candidate-restricted logits."""
    others = np.delete(values, answer_pos)
    return float(values[answer_pos] - others.max())


def probe_passes(model, jobs, device="cpu", chunk=16) -> list[tuple]:
    """The passes of :func:`probe` for several prompt lists at once: ``jobs`` = [(encoder,
    prompts)]; one (L0, H0, G, GH) per job, as :func:`probe` computes them for that job alone
    (zero-shot logits and states, then the full and context-only prompts' logits and states as
    n x 2 arrays; the logits in the model's own dtype, the states float64), up to float round-off
    from other batch shapes. A speed-up only: larger batches
    read every weight matrix (the LM head's included) fewer times, which dominates the short
    suffix passes of a CPU run.

    >>> enc, model = SyntheticEncoder(), tiny_llama(0)
    >>> prompts = [([(1, 11), (2, 12)], 3, 13), ([(4, 14), (5, 15)], 6, 16)]
    >>> [p[0].shape[0] for p in probe_passes(model, [(enc, prompts[:1]), (enc, prompts[1:])])]
    [1, 1]
    """
    zero = [encoder.zero_shot(s) for encoder, prompts in jobs for _, s, _ in prompts]
    groups = [
        [encoder.full(d, s), encoder.context_only(d)] for encoder, prompts in jobs for d, s, _ in prompts
    ]
    if not zero:
        raise ValueError("probe_passes needs at least one prompt")
    # logits in the model's own dtype (float32: half the memory of the float64 rows, each row
    # converted to float64 where :func:`probe` reads it: the same numbers)
    L0, H0 = batch_last(model, zero, device, chunk, native=True)
    # full and context-only prompts share their demonstrations: run them once (constructions.lm.prefix)
    G, GH = grouped_last(model, groups, device, chunk, native=True)
    out, start = [], 0
    for _, prompts in jobs:
        end = start + len(prompts)
        out.append((L0[start:end], H0[start:end], G[start:end], GH[start:end]))
        start = end
    return out


def probe(model, encoder, prompts, answers, device="cpu", other_sets=None, passes=None) -> dict:
    """Run the three passes on every prompt and compute the per-prompt metrics of the probe.

    answers: every answer of the relation (defines C). Returns lists per prompt plus summary
    rates; raises ValueError on non-finite values. ``other_sets`` (name -> candidate tokens of
    another relation) adds, per prompt, :func:`gate_split` of its zero-shot distribution against
    each other set (``split_other``), from which a gate of another relation is evaluated later.

    Per prompt, besides the first probe's metrics: ``mC`` (the context-only pass's mass on C),
    ``acc1_V`` (the gated first-order prediction argmax_V(log softmax(l0) + u) is the answer,
    :func:`gated_token`), ``acc1_V_shuffled_query`` (the same gate on the zero-shot
    distribution of the next prompt with another answer), ``acc_product_V`` (argmax_V of
    log softmax(l0) + log softmax(lc)) and ``chance3`` (3 / |C|). ``passes``: this job's entry
    of :func:`probe_passes` when it ran together with others (else they run here).
    """
    cand = sorted({encoder.candidate(a) for a in answers})
    if len(cand) < 2:
        raise ValueError("the candidate set C needs at least 2 distinct first tokens")
    pos = {c: k for k, c in enumerate(cand)}
    rows = {
        k: []
        for k in (
            "r",
            "agree",
            "margin0",
            "marginf",
            "mass0",
            "massf",
            "pr0",
            "prf",
            "acc0_C",
            "accf_V",
            "acc0_V",
            "delta",
            "bias",
            "mC",
            "acc1_V",
            "acc_product_V",
            "chance3",
        )
    }
    splits, split_other = [], []
    h0, hf, saved = [], [], []
    L0, H0, G, GH = passes if passes is not None else probe_passes(model, [(encoder, prompts)], device)[0]
    LF, HF, LC = G[:, 0], GH[:, 0], G[:, 1]
    for k, (demos, subject, answer) in enumerate(prompts):
        l0, lc, lf = (np.asarray(x[k], dtype=np.float64) for x in (L0, LC, LF))
        h0.append(H0[k])
        hf.append(HF[k])
        l0C, lcC, lfC = l0[cand], lc[cand], lf[cand]
        b = lcC - lcC.mean()
        l1 = l0C + b
        a = pos[encoder.candidate(answer)]
        rows["r"].append(pearson(lfC - l0C, b))
        rows["agree"].append(float(np.argmax(l1) == np.argmax(lfC)))
        rows["margin0"].append(margin(l0C, a))
        rows["marginf"].append(margin(lfC, a))
        rows["mass0"].append(candidate_mass(l0, cand))
        rows["massf"].append(candidate_mass(lf, cand))
        rows["pr0"].append(participation_ratio_logits(l0C))
        rows["prf"].append(participation_ratio_logits(lfC))
        rows["acc0_C"].append(float(np.argmax(l0C) == a))
        rows["accf_V"].append(float(np.argmax(lf) == cand[a]))
        rows["acc0_V"].append(float(np.argmax(l0) == cand[a]))
        saved.append((l0C, lfC, b, a))
        lp0 = log_softmax(l0)
        m_c = candidate_mass(lc, cand)
        splits.append(gate_split(lp0, cand))
        if other_sets:
            split_other.append({name: gate_split(lp0, toks) for name, toks in other_sets.items()})
        rows["mC"].append(m_c)
        rows["acc1_V"].append(float(gated_token(splits[-1], m_c) == cand[a]))
        rows["acc_product_V"].append(float(np.argmax(lp0 + log_softmax(lc)) == cand[a]))
        rows["chance3"].append(3.0 / len(cand))
        rows["delta"].append((lfC - l0C).tolist())
        rows["bias"].append(b.tolist())
    # control: the context bias of another prompt (the next one, cyclically) in place of its own
    # and the zero-shot query of another fact with a different answer (the next such prompt)
    rows["r_other"], rows["agree_other"], rows["acc0_C_shuffled"] = [], [], []
    rows["acc1_V_shuffled_query"] = []
    n = len(saved)
    for i, (l0C, lfC, _, a) in enumerate(saved):
        b_other = saved[(i + 1) % n][2]
        rows["r_other"].append(pearson(lfC - l0C, b_other))
        rows["agree_other"].append(float(np.argmax(l0C + b_other) == np.argmax(lfC)))
        j = next((j % n for j in range(i + 1, i + n) if saved[j % n][3] != a), None)
        rows["acc0_C_shuffled"].append(float(j is not None and np.argmax(saved[j][0]) == a))
        shuffled = j is not None and gated_token(splits[j], rows["mC"][i]) == cand[a]
        rows["acc1_V_shuffled_query"].append(float(shuffled))
    for key, vals in rows.items():
        if not np.all(np.isfinite(np.asarray(vals, dtype=float))):
            raise ValueError(f"non-finite probe metric {key}")
    rows["n_candidates"] = len(cand)
    rows["answer_token"] = [int(cand[t[3]]) for t in saved]
    if other_sets:
        rows["split_other"] = split_other
    rows["subspace_pr_zero_shot"] = spectrum_pr(h0) if len(h0) > 1 else 0.0
    rows["subspace_pr_full"] = spectrum_pr(hf) if len(hf) > 1 else 0.0
    return rows


def summarise(rows, bias_from: str = "own") -> dict:
    """The numbers of the hopfield.lm.* criteria: medians and rates over prompts.

    bias_from="other" reads r and the agreement of the control whose context bias comes from
    another prompt.
    """
    if bias_from not in ("own", "other"):
        raise ValueError(f"bias_from={bias_from!r}: expected 'own' or 'other'")
    suffix = "" if bias_from == "own" else "_other"
    m0, mf = np.asarray(rows["margin0"]), np.asarray(rows["marginf"])
    return {
        "prompts": len(rows["r"]),
        "median_r": float(np.median(rows["r" + suffix])),
        "agreement": float(np.mean(rows["agree" + suffix])),
        "margin_up_rate": float(np.mean(mf > m0)),
        "mass_up_rate": float(np.mean(np.asarray(rows["massf"]) > np.asarray(rows["mass0"]))),
        "acc_zero_shot_in_C": float(np.mean(rows["acc0_C"])),
        "acc_full_in_V": float(np.mean(rows["accf_V"])),
        "acc_zero_shot_in_V": float(np.mean(rows["acc0_V"])),
        "acc_zero_shot_in_C_shuffled_query": float(np.mean(rows["acc0_C_shuffled"])),
        "subspace_pr_zero_shot": rows["subspace_pr_zero_shot"],
        "subspace_pr_full": rows["subspace_pr_full"],
        "acc_first_order_in_V": float(np.mean(rows["acc1_V"])),
        "acc_first_order_in_V_shuffled_query": float(np.mean(rows["acc1_V_shuffled_query"])),
        "acc_product_in_V": float(np.mean(rows["acc_product_V"])),
        "mean_context_mass_on_C": float(np.mean(rows["mC"])),
        "mean_chance3": float(np.mean(rows["chance3"])),
        **(
            {"acc_first_order_in_V_wrong_gate": float(np.mean(rows["acc1_V_wrong_gate"]))}
            if "acc1_V_wrong_gate" in rows
            else {}
        ),
    }
