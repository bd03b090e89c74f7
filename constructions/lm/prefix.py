"""Forward passes of a causal language model read at the last position: one sequence
(:func:`last_logits`), right-padded batches (:func:`batch_last`), and groups that share a common
prefix (the language-model probe of docs/hopfield.md, a speed-up only) [derived].

The probes read the last position of sequences that come in groups with a common beginning: the
full prompt and the context-only prompt share their demonstrations (or their repeated
counterfactual story) and differ only in the query line. :func:`prefix_last` runs each group's
prefix once, keeps its keys and values (a ``DynamicCache``), and runs only the suffixes on top:
the same causal computation as one pass over prefix + suffix, up to float round-off (different
matmul shapes). Prefixes are right-padded in a batch and masked out for the suffixes (attention
mask), and each suffix's positions continue from its own prefix's length, so the result does not
depend on the padding. ``tests/hopfield/test_lm.py`` compares it with one pass per sequence.
"""

from __future__ import annotations

import numpy as np


def common_prefix(sequences) -> int:
    """Length of the longest common prefix of token-id lists, leaving >= 1 token in each."""
    seqs = [list(s) for s in sequences]
    if not seqs or min(len(s) for s in seqs) < 2:
        raise ValueError("a shared prefix needs sequences of at least 2 tokens each")
    n = 0
    limit = min(len(s) for s in seqs) - 1
    while n < limit and all(s[n] == seqs[0][n] for s in seqs):
        n += 1
    return n


def is_causal_lm(model) -> bool:
    """A Hugging Face causal LM whose body (``model.model``) and head (``lm_head``) we can call."""
    return hasattr(model, "model") and hasattr(model, "lm_head")


def _padded(rows):
    import torch

    width = max(len(r) for r in rows)
    ids = torch.zeros(len(rows), width, dtype=torch.long)
    mask = torch.zeros(len(rows), width, dtype=torch.long)
    for k, r in enumerate(rows):
        ids[k, : len(r)] = torch.tensor(r, dtype=torch.long)
        mask[k, : len(r)] = 1
    return ids, mask


def last_logits(model, ids, device="cpu"):
    """Next-token logits (float64 numpy, full vocabulary) and final hidden state at the last position."""
    import torch

    kwargs = {"logits_to_keep": 1} if hasattr(model, "config") else {}  # HF models: last logits only
    with torch.no_grad():
        out = model(torch.tensor([ids], device=device), output_hidden_states=True, **kwargs)
    logits = out.logits[0, -1].double().cpu().numpy()
    hidden = out.hidden_states[-1][0, -1].double().cpu().numpy()
    if not np.all(np.isfinite(logits)):
        raise ValueError("model produced non-finite logits")
    return logits, hidden


def padded_batches(id_lists, chunk=16):
    """Right-padded batches of token-id lists, shortest first: yields (indices, lengths, ids tensor).
    Causal attention: padding after a sequence's last token cannot change that token's state."""
    import torch

    order = sorted(range(len(id_lists)), key=lambda i: len(id_lists[i]))
    for start in range(0, len(order), int(chunk)):
        idx = order[start : start + int(chunk)]
        lens = [len(id_lists[i]) for i in idx]
        batch = torch.zeros(len(idx), max(lens), dtype=torch.long)
        for row, i in enumerate(idx):
            batch[row, : lens[row]] = torch.tensor(id_lists[i])
        yield idx, lens, batch


def _rows_out(n_rows: tuple, out, native: bool) -> np.ndarray:
    """An empty numpy array of shape ``n_rows + out.shape[1:]`` for the rows of a model output
    ``out`` (a torch tensor): of its own dtype when ``native`` (float32 logits stay float32), else
    float64. Filled chunk by chunk: no float64 copy of a chunk, no stack of the rows at the end."""
    import torch

    dtype = {torch.float32: np.float32, torch.float64: np.float64}.get(out.dtype) if native else None
    return np.empty(tuple(n_rows) + tuple(out.shape[1:]), dtype=dtype or np.float64)


def _numpy(t) -> np.ndarray:
    """A torch tensor as numpy on the CPU: float32 and float64 as they are (a copy only off the
    CPU), any other dtype (bfloat16) through float64."""
    import torch

    if t.dtype not in (torch.float32, torch.float64):
        t = t.double()
    return t.cpu().numpy()


def batch_last(model, id_lists, device="cpu", chunk=16, native=False):
    """Next-token logits (n x V) and final hidden states (n x d) at the last position of each
    sequence, float64 numpy; with ``native`` the logits in the dtype the model computes them
    (float32 for a float32 model: half the memory of a 262,144-token vocabulary; every value
    the same, a row converted to float64 equals the float64 row).

    Hugging Face models run in batches: sequences are right-padded, so with causal attention the
    padding (after each sequence's last token) cannot change the positions read; positions start
    at 0 as for a single sequence. Logits come from the LM head on the gathered final states
    only. Other models (the stubs) run one sequence at a time through :func:`last_logits`.

    >>> from constructions.hopfield.lm import tiny_llama
    >>> model = tiny_llama(0, "float32")
    >>> L64, H = batch_last(model, [[11, 12, 3], [13, 3]])
    >>> L32, _ = batch_last(model, [[11, 12, 3], [13, 3]], native=True)
    >>> L64.dtype, L32.dtype, bool((L32.astype(float) == L64).all()), H.shape
    (dtype('float64'), dtype('float32'), True, (2, 64))
    """
    if not (hasattr(model, "model") and hasattr(model, "lm_head")):
        pairs = [last_logits(model, ids, device) for ids in id_lists]
        return np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs])
    import torch

    logits = hidden = None
    for idx, lens, batch in padded_batches(id_lists, chunk):
        with torch.inference_mode():
            states = model.model(input_ids=batch.to(device)).last_hidden_state
            last = states[
                torch.arange(len(idx), device=states.device), torch.tensor(lens, device=states.device) - 1
            ]
            out = model.lm_head(last)
        if logits is None:
            logits = _rows_out((len(id_lists),), out, native)
            hidden = _rows_out((len(id_lists),), last, False)
        logits[idx] = _numpy(out)
        hidden[idx] = _numpy(last)
    if not np.all(np.isfinite(logits)):
        raise ValueError("model produced non-finite logits")
    return logits, hidden


def prefix_last(model, groups, device="cpu", chunk=16, native=False):
    """Next-token logits (n x k x V) and final hidden states (n x k x d), float64 numpy, at the last
    token of prefix + suffix for ``groups`` = [(prefix ids, [k suffixes of ids])], the same k for
    every group, every prefix and suffix non-empty. A group may carry a third entry, the length
    of the prefix each suffix follows (1..len(prefix); default all of it): that suffix sees only
    the prefix's first tokens and its positions continue from there. Groups run ``chunk`` at a
    time, shortest prefix first. ``native``: the logits in the model's own dtype
    (:func:`batch_last`)."""
    import torch

    if not is_causal_lm(model):
        raise ValueError("prefix_last needs a Hugging Face causal LM (model.model and model.lm_head)")
    if not groups:
        raise ValueError("prefix_last needs at least one group")
    groups = [(g[0], g[1], g[2] if len(g) > 2 else [len(g[0])] * len(g[1])) for g in groups]
    k = len(groups[0][1])
    if k < 1 or any(len(s) != k or len(v) != k for _, s, v in groups):
        raise ValueError("every group needs the same number (>= 1) of suffixes")
    if any(len(p) < 1 for p, _, _ in groups) or any(len(x) < 1 for _, s, _ in groups for x in s):
        raise ValueError("prefixes and suffixes must be non-empty")
    if any(not 1 <= v <= len(p) for p, _, vs in groups for v in vs):
        raise ValueError("a suffix must follow 1..len(prefix) tokens of its prefix")
    logits = hidden = None
    order = sorted(range(len(groups)), key=lambda g: len(groups[g][0]))
    for start in range(0, len(order), int(chunk)):
        idx = order[start : start + int(chunk)]
        pre_ids, pre_mask = _padded([groups[g][0] for g in idx])
        sufs = [x for g in idx for x in groups[g][1]]
        suf_ids, suf_mask = _padded(sufs)
        plen = torch.tensor([v for g in idx for v in groups[g][2]])
        positions = plen[:, None] + torch.arange(suf_ids.shape[1])[None, :]
        seen = (torch.arange(pre_ids.shape[1])[None, :] < plen[:, None]).long()  # each suffix's prefix
        with torch.inference_mode():
            cache = model.model(
                input_ids=pre_ids.to(device), attention_mask=pre_mask.to(device), use_cache=True
            ).cache
            cache.batch_repeat_interleave(k)
            states = model.model(
                input_ids=suf_ids.to(device),
                attention_mask=torch.cat([seen, suf_mask], 1).to(device),
                position_ids=positions.to(device),
                cache=cache,
                use_cache=True,
            ).last_hidden_state
            rows = torch.arange(len(sufs), device=states.device)
            last = states[rows, torch.tensor([len(x) for x in sufs], device=states.device) - 1]
            out = model.lm_head(last)
        if logits is None:
            logits = _rows_out((len(groups), k), out, native)
            hidden = _rows_out((len(groups), k), last, False)
        logits[idx] = _numpy(out).reshape(len(idx), k, -1)
        hidden[idx] = _numpy(last).reshape(len(idx), k, -1)
    if not np.all(np.isfinite(logits)):
        raise ValueError("model produced non-finite logits")
    return logits, hidden


def grouped_last(model, sequences_per_group, device="cpu", chunk=16, native=False):
    """Like :func:`prefix_last` for groups given as whole sequences (the same number in each):
    each group's longest common prefix runs once. Returns (n x k x V, n x k x d). Models that are
    not Hugging Face causal LMs (the stubs), or a group without a common first token, take one
    plain pass per sequence (:func:`batch_last`). ``native``: the logits in the model's own dtype
    (:func:`batch_last`)."""
    cuts = [common_prefix(seqs) for seqs in sequences_per_group]
    if not is_causal_lm(model) or min(cuts, default=0) < 1:
        k = len(sequences_per_group[0])
        flat = [list(s) for seqs in sequences_per_group for s in seqs]
        if any(len(seqs) != k for seqs in sequences_per_group):
            raise ValueError("every group needs the same number of sequences")
        L, H = batch_last(model, flat, device, chunk, native)
        return L.reshape(len(sequences_per_group), k, -1), H.reshape(len(sequences_per_group), k, -1)
    groups = [(list(seqs[0][:p]), [list(s[p:]) for s in seqs]) for seqs, p in zip(sequences_per_group, cuts)]
    return prefix_last(model, groups, device, chunk, native)


def nested_last(model, sequences_per_group, device="cpu", chunk=16, native=False):
    """Like :func:`grouped_last`, for groups whose sequences nest (a story told once, twice, four
    times, then a query): the group's longest sequence runs once as the prefix (without its last
    token) and every sequence runs only what follows its common prefix with it. Returns
    (n x k x V, n x k x d); models that are not Hugging Face causal LMs take plain passes.
    ``native``: the logits in the model's own dtype (:func:`batch_last`)."""
    if not is_causal_lm(model):
        return grouped_last(model, sequences_per_group, device, chunk, native)
    groups = []
    for seqs in sequences_per_group:
        seqs = [list(s) for s in seqs]
        base = max(seqs, key=len)
        cuts = [common_prefix([s, base]) if s is not base else len(base) - 1 for s in seqs]
        if min(cuts) < 1:
            return grouped_last(model, sequences_per_group, device, chunk, native)
        groups.append((base[: max(cuts)], [s[c:] for s, c in zip(seqs, cuts)], cuts))
    return prefix_last(model, groups, device, chunk, native)
