"""Two cross-paper probes on a real language model [derived]: superposition and in-context override.

(a) Superposition (after Geometric Factual Recall, 2605.12426): for subjects with several
attributes (a country's capital, continent, language, currency), is the residual stream at the
subject's last token linearly predictable from the unembedding vectors of its attributes' answer
tokens? Held-out ridge R^2 per layer (:func:`superposition_r2`).

(b) In-context override (after Fine-Tuning Dynamics of In-Context Factual Recall, 2605.27774, and
Context-Gated Associative Retrieval, 2605.10970): a context stating a counterfactual ("In this
story, the capital of France is Rome.") repeated n times before the query; how often the model
follows the context rather than its stored fact, against the first-order gate prediction
argmax_C(l0|_C + b), b the centred context-only logits (:func:`override_probe`).

Both are our operationalisations; neither paper's own protocol could be obtained.
"""

from __future__ import annotations

import numpy as np

from constructions.lm.prefix import batch_last, nested_last, padded_batches

SUBJECT_PROMPT = "Facts about {s}"
STORY = "In this story, {q} {a}.\n"


def batch_states(model, id_lists, device="cpu", chunk=16) -> np.ndarray:
    """Residual stream after every layer at each sequence's last token: (n, n_layers + 1, d).

    Right-padded batches (causal attention: padding after the last token cannot change it)."""
    import torch

    out_states = [None] * len(id_lists)
    for idx, lens, batch in padded_batches(id_lists, chunk):
        with torch.inference_mode():
            hs = model.model(input_ids=batch.to(device), output_hidden_states=True).hidden_states
        for row, i in enumerate(idx):
            out_states[i] = np.stack([h[row, lens[row] - 1].double().cpu().numpy() for h in hs])
    states = np.stack(out_states)
    if not np.all(np.isfinite(states)):
        raise ValueError("model produced non-finite hidden states")
    return states


def unembedding(model, rows=None):
    """The output (unembedding) matrix, vocab x d, float64; with ``rows`` (token ids) only those
    rows, as a dict token id -> float64 row (the same values, without converting a whole
    vocabulary: 262,144 x 640 for Gemma 3).

    >>> from constructions.hopfield.lm import tiny_llama
    >>> model = tiny_llama(0)
    >>> U = unembedding(model)
    >>> U.shape, bool((unembedding(model, [3, 7])[7] == U[7]).all())
    ((512, 64), True)
    """
    weight = model.get_output_embeddings().weight.detach()
    if rows is None:
        return weight.double().cpu().numpy()
    ids = sorted({int(t) for t in rows})
    block = weight[ids].double().cpu().numpy()
    return {t: block[k] for k, t in enumerate(ids)}


def ridge_cv_r2(features, targets, folds, alpha_scale=1.0) -> float:
    """Held-out R^2 of ridge regression targets ~ features over the given folds.

    Kernel form: W = F^T (F F^T + alpha I)^{-1} Y on each training split (features and targets
    centred on the training split), alpha = alpha_scale * trace(F F^T) / n_train (fixed, not
    tuned). R^2 = 1 - sum of squared held-out errors / sum of squared deviations of the held-out
    targets from the training mean, pooled over folds and target dimensions.
    """
    return ridge_cv_r2_many(features, [targets], folds, alpha_scale)[0]


def ridge_cv_r2_many(features, targets_list, folds, alpha_scale=1.0) -> list:
    """:func:`ridge_cv_r2` of the same features and folds for each targets array of
    ``targets_list`` (the layers of a residual stream): what depends on the features only (the
    splits' centred features, their kernel and its penalty, the held-out rows against the training
    ones) is computed once per fold, then each target runs its own solve. Every number is the one
    :func:`ridge_cv_r2` computes alone, by the same operations."""
    F = np.asarray(features, float)
    targets_list = [np.asarray(t, float) for t in targets_list]
    if any(F.shape[0] != Y.shape[0] for Y in targets_list) or F.shape[0] < 4:
        raise ValueError("ridge needs the same number (>= 4) of feature and target rows")
    splits = []
    for test in folds:
        train = np.setdiff1d(np.arange(F.shape[0]), test)
        fm = F[train].mean(0)
        Ft = F[train] - fm
        K = Ft @ Ft.T
        alpha = alpha_scale * np.trace(K) / len(train)
        # pred = ((F[test] - fm) @ Ft.T) @ coef = (F[test] - fm) @ (Ft.T @ coef), fewer flops
        splits.append((test, train, K + alpha * np.eye(len(train)), (F[test] - fm) @ Ft.T))
    out = []
    for Y in targets_list:
        sse = sst = 0.0
        for test, train, A, cross in splits:
            ym = Y[train].mean(0)
            coef = np.linalg.solve(A, Y[train] - ym)
            pred = cross @ coef
            sse += float(np.sum((Y[test] - ym - pred) ** 2))
            sst += float(np.sum((Y[test] - ym) ** 2))
        if sst <= 0:
            raise ValueError("held-out targets have no variance")
        out.append(1.0 - sse / sst)
    return out


def kfolds(n, k, gen: np.random.Generator) -> list:
    return [np.sort(f) for f in np.array_split(gen.permutation(n), int(k))]


def subject_states(model, tokenizer, subjects, device="cpu") -> np.ndarray:
    """(n_subjects, n_layers + 1, d): residual stream at the last token of "Facts about {s}"."""
    return batch_states(
        model, [list(tokenizer(SUBJECT_PROMPT.replace("{s}", s))["input_ids"]) for s in subjects], device
    )


def attribute_r2(U, states, table, token_of, gen, k_folds=5, shuffle=False) -> list:
    """Held-out ridge R^2, layer by layer, of the subject states on their attributes' unembeddings.

    table: [(subject, {relation: answer})], every relation present; token_of: relation -> answer
    -> token id; features of a subject: the unembedding rows of its answers' tokens, concatenated
    over relations. shuffle: each relation's answers permuted across subjects (the control).
    """
    relations = sorted(table[0][1])
    answers = {r: [attrs[r] for _, attrs in table] for r in relations}
    if shuffle:
        answers = {r: [answers[r][i] for i in gen.permutation(len(table))] for r in relations}
    feats = np.stack(
        [np.concatenate([U[token_of[r][answers[r][i]]] for r in relations]) for i in range(len(table))]
    )
    folds = kfolds(len(table), k_folds, gen)
    return ridge_cv_r2_many(feats, [states[:, layer] for layer in range(states.shape[1])], folds)


def zero_shot_known(model, encoder, pairs, device="cpu") -> list:
    """For every fact, whether its zero-shot greedy token over the whole vocabulary is the answer's."""
    # the model's own dtype (argmax of the same values)
    logits, _ = batch_last(model, [encoder.zero_shot(s) for s, _ in pairs], device, native=True)
    return [bool(int(np.argmax(row)) == encoder.candidate(a)) for row, (_, a) in zip(logits, pairs)]


def known_facts(model, encoder, pairs, gen, count, device="cpu", known=None) -> tuple[list, int]:
    """Up to ``count`` facts (in a seeded random order) that the model knows zero-shot (``known``,
    from :func:`zero_shot_known` when not given); returns (facts, number of facts looked at)."""
    known = zero_shot_known(model, encoder, pairs, device) if known is None else known
    found, tried = [], 0
    for i in gen.permutation(len(pairs)):
        tried += 1
        if known[i]:
            found.append(pairs[i])
            if len(found) >= count:
                break
    return found, tried


def _lower_first(text):
    return text[:1].lower() + text[1:]


def _story(encoder, subject, alt, n):
    return STORY.replace("{q}", _lower_first(encoder.query_text(subject))).replace("{a}", alt) * int(n)


def lead(values, k: int) -> float:
    """values[k] - max of the other values: > 0 exactly where ``k`` is the strict argmax.

    >>> lead(np.array([1.0, 3.0, 2.5]), 1), lead(np.array([1.0, 3.0, 2.5]), 0)
    (0.5, -2.0)
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or len(v) < 2 or not 0 <= k < len(v):
        raise ValueError(
            f"lead needs a 1-d vector of at least 2 values and an index in it, got {v.shape}, {k}"
        )
    return float(v[k] - np.delete(v, k).max())


def override_probe(
    model, encoder, known, all_answers, reps, gen, n_prompts, device="cpu", other_context=True
):
    """Counterfactual contexts repeated n times (n in ``reps``) before a query the model knows.

    encoder: a prepared TextEncoder of the relation; known: [(subject, answer)] the model answers
    right zero-shot; all_answers: the candidate answers (C). For each chosen fact a counterfactual
    answer a' != a is drawn. Per (prompt, n): follows = argmax_C l_f == a'; predicted =
    argmax_C (l0|_C + b) == a' with b the centred logits of the context followed by the
    placeholder query; predicted_other uses b of the NEXT prompt's context (control). n = 0 has
    no context: l_f = l0, b = 0. At the largest n, ``follows_other_context`` and
    ``predicted_other_context`` read the story of the next fact whose counterfactual differs from
    this fact's answer, told before this fact's query (the other-subject control): whether the
    model, and the first-order prediction, answer that story's counterfactual
    (``other_context=False`` leaves these passes out). Each boolean of a' has its margin beside it
    (``follows_margin``, ``predicted_margin`` and at the largest n ``follows_other_context_margin``,
    ``predicted_other_context_margin``): the logit of a' less the largest other candidate's
    (:func:`lead`), > 0 exactly where the boolean is true (ties aside).
    """
    if len(known) < 2:
        raise ValueError("the override probe needs at least 2 facts the model knows")
    cand_answers = sorted(set(all_answers))
    cand = [encoder.candidate(a) for a in cand_answers]
    chosen = [known[i] for i in gen.permutation(len(known))[: int(n_prompts)]]
    facts = []
    for s, a in chosen:
        others = [x for x in cand_answers if x != a]
        facts.append((s, a, others[int(gen.integers(len(others)))]))
    # every logit read below is a candidate's: the passes keep the model's own dtype and only
    # the candidates' columns are converted to float64 (the same numbers as whole float64 rows)
    L0, _ = batch_last(model, [encoder.zero_shot(s) for s, _, _ in facts], device, native=True)
    l0s = {s: L0[k, cand].astype(np.float64) for k, (s, _, _) in enumerate(facts)}
    # every repetition count's full and context-only prompt of a fact share the story told once,
    # and each is a story told n times: the longest runs once (constructions.lm.prefix.nested_last)
    with_ctx = [int(n) for n in reps if n != 0]
    if with_ctx:
        G, _ = nested_last(
            model,
            [
                [
                    encoder._ids(_story(encoder, s, alt, n) + encoder.query_text(q))
                    for n in with_ctx
                    for q in (s, "?")
                ]
                for s, _, alt in facts
            ],
            device,
            native=True,
        )
        G = G[:, :, cand].astype(np.float64)  # candidates' columns only
    # control rows at the largest count: the story of another fact (its subject and its
    # counterfactual, chosen != this fact's answer) before this fact's query
    other_of, other_rows = {}, {}
    if with_ctx and other_context:
        top = max(with_ctx)
        for i, (_, a, _) in enumerate(facts):
            other_of[i] = next(
                (j % len(facts) for j in range(i + 1, i + len(facts)) if facts[j % len(facts)][2] != a), None
            )
        pairs = [(i, j) for i, j in other_of.items() if j is not None]
        if pairs:
            LO, _ = batch_last(
                model,
                [
                    encoder._ids(
                        _story(encoder, facts[j][0], facts[j][2], top) + encoder.query_text(facts[i][0])
                    )
                    for i, j in pairs
                ],
                device,
                native=True,
            )
            LO = LO[:, cand].astype(np.float64)
            jt = 2 * with_ctx.index(top)
            for (i, j), row in zip(pairs, LO):
                k_alt = cand_answers.index(facts[j][2])
                b_j = G[j, jt + 1] - G[j, jt + 1].mean()
                other_rows[i] = {
                    "follows_other_context": bool(np.argmax(row) == k_alt),
                    "predicted_other_context": bool(np.argmax(l0s[facts[i][0]] + b_j) == k_alt),
                    "follows_other_context_margin": lead(row, k_alt),
                    "predicted_other_context_margin": lead(l0s[facts[i][0]] + b_j, k_alt),
                }
    rows = []
    for n in reps:
        if n == 0:
            fulls = [l0s[s] for s, _, _ in facts]
            biases = [np.zeros(len(cand)) for _ in facts]
        else:
            j = 2 * with_ctx.index(int(n))
            LF, LC = G[:, j], G[:, j + 1]
            fulls = [LF[k] for k in range(len(facts))]
            biases = [LC[k] - LC[k].mean() for k in range(len(facts))]
        for i, (s, a, alt) in enumerate(facts):
            k_alt, k_true = cand_answers.index(alt), cand_answers.index(a)
            b_other = biases[(i + 1) % len(facts)]
            rows.append(
                {
                    "n": int(n),
                    "subject": s,
                    "answer": a,
                    "counterfactual": alt,
                    "follows": bool(np.argmax(fulls[i]) == k_alt),
                    "keeps_fact": bool(np.argmax(fulls[i]) == k_true),
                    "predicted": bool(np.argmax(l0s[s] + biases[i]) == k_alt),
                    "predicted_other": bool(np.argmax(l0s[s] + b_other) == k_alt),
                    "follows_margin": lead(fulls[i], k_alt),
                    "predicted_margin": lead(l0s[s] + biases[i], k_alt),
                    **(other_rows.get(i, {}) if with_ctx and n == max(with_ctx) else {}),
                }
            )
    return rows


def override_summary(rows, bias_from="own") -> dict:
    """Override rate, first-order predicted rate and per-prompt agreement, by repetition count."""
    key = "predicted" if bias_from == "own" else "predicted_other"
    reps = sorted({r["n"] for r in rows})
    by = {n: [r for r in rows if r["n"] == n] for n in reps}
    with_ctx = [r for r in rows if r["n"] >= 1]
    return {
        "reps": reps,
        "override_rate": [float(np.mean([r["follows"] for r in by[n]])) for n in reps],
        "keeps_fact_rate": [float(np.mean([r["keeps_fact"] for r in by[n]])) for n in reps],
        "predicted_rate": [float(np.mean([r[key] for r in by[n]])) for n in reps],
        "agreement_with_context": float(np.mean([r["follows"] == r[key] for r in with_ctx])),
        "override_at_max": float(np.mean([r["follows"] for r in by[reps[-1]]])),
    }
