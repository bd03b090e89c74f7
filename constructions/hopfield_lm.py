"""First-order context-gate probe of a causal language model (spec hopfield.md §7.1) [derived].

Our operationalisation of the Llama-3 experiment of Context-Gated Associative Retrieval
(2605.10970), whose prompts, layers and metrics could not be obtained. Three forward passes give
next-token logits at the last position: l0 (zero-shot query line), lc (demonstrations + a
placeholder query line) and lf (demonstrations + the real query line). With C the candidate
answer tokens, the context-only gate bias is b = lc|_C - mean(lc|_C) and the first-order
prediction is l1 = l0|_C + b (the context acts as an additive log-prior on the candidates, as the
log-gates u0 of spec §5.4).

Needs torch; the Hugging Face parts need ``transformers`` (optional extra ``lm``), imported lazily.
Nothing is downloaded: models load with ``local_files_only=True``.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

import numpy as np

ARROW, NEWLINE, PLACEHOLDER = 3, 4, 5
SUBJECT_IDS = range(10, 110)
ANSWER_IDS = range(110, 210)


# ---------------------------------------------------------------------------------------------
# prompts
def read_pairs(path) -> dict:
    """Read ``subject<TAB>answer[<TAB>relation]`` lines; returns relation -> [(subject, answer)].

    Blank lines and lines starting with '#' are skipped. A relation needs at least 2 pairs.
    """
    if not os.path.isfile(path):
        raise ValueError(f"pairs file {path!r} not found")
    relations: dict = {}
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) not in (2, 3) or not parts[0].strip() or not parts[1].strip():
                raise ValueError(f"{path}:{lineno}: expected 'subject<TAB>answer[<TAB>relation]'")
            rel = parts[2].strip() if len(parts) == 3 else "relation"
            relations.setdefault(rel, []).append((parts[0].strip(), parts[1].strip()))
    small = [r for r, p in relations.items() if len(p) < 2]
    if not relations or small:
        raise ValueError(f"every relation needs at least 2 (subject, answer) pairs; too few in {small or path}")
    return relations


def relational_prompts(pairs, k_demo, gen: np.random.Generator, max_prompts=None) -> list:
    """(demonstrations, query subject, answer) triples of one relation (spec §4).

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
    """Token ids for the tiny random model (spec §7.1): subjects and answers are ids themselves."""

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


class TextEncoder:
    """Prompts ``"{s} -> {a}\\n"`` per demonstration and ``"{s_q} ->"`` for the query, tokenised."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    def _ids(self, text):
        return list(self.tokenizer(text, add_special_tokens=True)["input_ids"])

    def _demo_text(self, demos):
        return "".join(f"{s} -> {a}\n" for s, a in demos)

    def full(self, demos, subject):
        return self._ids(self._demo_text(demos) + f"{subject} ->")

    def zero_shot(self, subject):
        return self._ids(f"{subject} ->")

    def context_only(self, demos):
        return self._ids(self._demo_text(demos) + "? ->")

    def candidate(self, answer):
        ids = self.tokenizer(" " + answer, add_special_tokens=False)["input_ids"]
        if not ids:
            raise ValueError(f"answer {answer!r} tokenises to nothing")
        return int(ids[0])


# ---------------------------------------------------------------------------------------------
# models
def tiny_llama(seed: int, dtype="float64"):
    """The tiny random Llama of spec §7.1; its weights come from an explicit torch.Generator(seed)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)
    with torch.random.fork_rng(devices=[]):  # transformers' own init draws from the global RNG:
        model = LlamaForCausalLM(config)       # keep it untouched, then overwrite every weight
    gen = torch.Generator().manual_seed(int(seed))
    with torch.no_grad():  # weights from the explicit generator only: N(0, 0.02), norms at 1
        for name, param in sorted(model.named_parameters()):
            if "norm" in name:
                param.fill_(1.0)
            else:
                param.copy_(torch.randn(param.shape, generator=gen, dtype=param.dtype) * 0.02)
    return model.to({"float64": torch.float64, "float32": torch.float32}[dtype]).eval()


def load_local_model(path, device="cpu"):
    """(model, tokenizer) from a local folder; never downloads. A missing path is a ValueError."""
    if not path or not os.path.isdir(path):
        raise ValueError(f"model path {path!r} not found: give a local Hugging Face model folder "
                         "(nothing is downloaded at run time)")
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise ValueError(f"the language-model probe needs transformers (pip install "
                         f"'recall-bounds[lm]'): {exc}") from None
    dtype = torch.float32 if device == "cpu" else torch.bfloat16
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, dtype=dtype)
    return model.to(device).eval(), tokenizer


def additive_stub(vocab_size: int, seed: int):
    """A model whose last-position logits are q(query token) + h(context) (spec §7.1 identities).

    q(t) = Q[t] with Q[PLACEHOLDER] = 0, h(context) = sum of H[t] over the tokens before the
    query line (h(empty) = 0). For it, l_f - l0 = h and b = h - mean(h), so r = 1 and l1 = l_f - const.
    """
    import torch

    gen = torch.Generator().manual_seed(int(seed))
    Q = torch.randn(vocab_size, vocab_size, generator=gen, dtype=torch.float64)
    Q[PLACEHOLDER] = 0.0
    H = torch.randn(vocab_size, vocab_size, generator=gen, dtype=torch.float64)

    class Stub(torch.nn.Module):
        def forward(self, input_ids, output_hidden_states=False):
            ids = input_ids[0]
            logits = torch.zeros(1, ids.shape[0], vocab_size, dtype=torch.float64)
            logits[0, -1] = Q[ids[-2]] + H[ids[:-2]].sum(0)

            @dataclass
            class Out:
                logits: object
                hidden_states: object

            return Out(logits=logits, hidden_states=(logits,))

    return Stub().eval()


# ---------------------------------------------------------------------------------------------
# probe
def last_logits(model, ids, device="cpu"):
    """Next-token logits (float64 numpy, full vocabulary) and final hidden state at the last position."""
    import torch

    with torch.no_grad():
        out = model(torch.tensor([ids], device=device), output_hidden_states=True)
    logits = out.logits[0, -1].double().cpu().numpy()
    hidden = out.hidden_states[-1][0, -1].double().cpu().numpy()
    if not np.all(np.isfinite(logits)):
        raise ValueError("model produced non-finite logits")
    return logits, hidden


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
    """PR of the eigenvalues of the covariance of the rows of ``states``: (sum w)^2 / sum w^2."""
    S = np.asarray(states, float)
    w = np.clip(np.linalg.eigvalsh(np.cov(S, rowvar=False)), 0, None)
    return float(w.sum() ** 2 / np.sum(w * w)) if np.sum(w * w) > 0 else 0.0


def margin(values, answer_pos) -> float:
    """l[a] - max_{c in C, c != a} l[c] on candidate-restricted logits."""
    others = np.delete(values, answer_pos)
    return float(values[answer_pos] - others.max())


def probe(model, encoder, prompts, answers, device="cpu") -> dict:
    """Run the three passes on every prompt and compute the per-prompt metrics of spec §7.1.

    answers: every answer of the relation (defines C). Returns lists per prompt plus summary
    rates; raises ValueError on non-finite values.
    """
    cand = sorted({encoder.candidate(a) for a in answers})
    if len(cand) < 2:
        raise ValueError("the candidate set C needs at least 2 distinct first tokens")
    pos = {c: k for k, c in enumerate(cand)}
    rows = {k: [] for k in ("r", "agree", "margin0", "marginf", "mass0", "massf", "pr0", "prf",
                            "acc0_C", "accf_V", "delta", "bias")}
    h0, hf = [], []
    for demos, subject, answer in prompts:
        l0, s0 = last_logits(model, encoder.zero_shot(subject), device)
        lc, _ = last_logits(model, encoder.context_only(demos), device)
        lf, sf = last_logits(model, encoder.full(demos, subject), device)
        h0.append(s0)
        hf.append(sf)
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
        rows["delta"].append((lfC - l0C).tolist())
        rows["bias"].append(b.tolist())
    for key, vals in rows.items():
        if not np.all(np.isfinite(np.asarray(vals, dtype=float))):
            raise ValueError(f"non-finite probe metric {key}")
    rows["n_candidates"] = len(cand)
    rows["subspace_pr_zero_shot"] = spectrum_pr(h0) if len(h0) > 1 else 0.0
    rows["subspace_pr_full"] = spectrum_pr(hf) if len(hf) > 1 else 0.0
    return rows


def summarise(rows) -> dict:
    """The lm_* criteria's numbers (spec §7 table): medians and rates over prompts."""
    m0, mf = np.asarray(rows["margin0"]), np.asarray(rows["marginf"])
    return {
        "prompts": len(rows["r"]),
        "median_r": float(np.median(rows["r"])),
        "agreement": float(np.mean(rows["agree"])),
        "margin_up_rate": float(np.mean(mf > m0)),
        "mass_up_rate": float(np.mean(np.asarray(rows["massf"]) > np.asarray(rows["mass0"]))),
        "acc_zero_shot_in_C": float(np.mean(rows["acc0_C"])),
        "acc_full_in_V": float(np.mean(rows["accf_V"])),
        "subspace_pr_zero_shot": rows["subspace_pr_zero_shot"],
        "subspace_pr_full": rows["subspace_pr_full"],
    }
