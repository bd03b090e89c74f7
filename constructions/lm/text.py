"""Facts files and text prompts of the language-model probes (docs/hopfield.md) [derived].

The facts file shipped with the package (``constructions/data/facts.tsv``, written by the project)
holds (subject, answer, relation) lines and one prompt template per relation. :class:`TextEncoder`
turns a relation's facts into token ids and finds each answer's token in a way that works for
every tokenizer family (SentencePiece and byte-level BPE).
"""

from __future__ import annotations

import os

DEFAULT_TEMPLATE = "{s} ->"


def read_facts(path) -> tuple[dict, dict]:
    """Read ``subject<TAB>answer[<TAB>relation]`` lines and ``@template<TAB>text<TAB>relation`` lines.

    Returns (relation -> [(subject, answer)], relation -> template). A template holds ``{s}``; the
    answer follows it after one space. Relations without a template use ``"{s} ->"``;
    a line without a relation belongs to the relation "relation". Blank lines and lines starting
    with '#' are skipped. A relation needs at least 2 facts.
    """
    if not os.path.isfile(path):
        raise ValueError(f"pairs file {path!r} not found")
    relations: dict = {}
    templates: dict = {}
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split("\t")]
            if len(parts) not in (2, 3) or not parts[0] or not parts[1]:
                raise ValueError(f"{path}:{lineno}: expected 'subject<TAB>answer[<TAB>relation]'")
            rel = parts[2] if len(parts) == 3 and parts[2] else "relation"
            if parts[0] == "@template":
                if "{s}" not in parts[1]:
                    raise ValueError(f"{path}:{lineno}: a template needs the subject slot {{s}}")
                templates[rel] = parts[1]
            else:
                relations.setdefault(rel, []).append((parts[0], parts[1]))
    small = [r for r, p in relations.items() if len(p) < 2]
    if not relations or small:
        raise ValueError(
            f"every relation needs at least 2 (subject, answer) pairs; too few in {small or path}"
        )
    return relations, {r: templates.get(r, DEFAULT_TEMPLATE) for r in relations}


def read_pairs(path) -> dict:
    """relation -> [(subject, answer)] of a facts file (see :func:`read_facts`)."""
    return read_facts(path)[0]


def facts_path() -> str:
    """The facts file shipped with the package (constructions/data/facts.tsv)."""
    return os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "facts.tsv")


class TextEncoder:
    """Prompts of one relation from its template: ``template(s) + " " + a + "\\n"`` per demonstration,
    ``template(s_q)`` for the query, ``template("?")`` as the placeholder query (with the
    arrow ``"{s} ->"`` as the default template).

    The answer's token is the token at position len(ids(prompt)) of ids(prompt + " " + answer), so
    it is right for SentencePiece tokenizers (where " " + answer alone starts with a bare "▁") and
    for byte-level BPE alike. :meth:`prepare` computes it for every fact, checks that the prompt's
    ids are a prefix, and drops (with counts) facts whose prompt is not a prefix and answers whose
    first tokens collide; nothing is merged silently.
    """

    def __init__(self, tokenizer, template: str = DEFAULT_TEMPLATE):
        if "{s}" not in template:
            raise ValueError(f"template {template!r} has no subject slot {{s}}")
        self.tokenizer = tokenizer
        self.template = template
        self.tokens: dict = {}

    def _ids(self, text):
        return list(self.tokenizer(text, add_special_tokens=True)["input_ids"])

    def query_text(self, subject):
        return self.template.replace("{s}", subject)

    def _demo_text(self, demos):
        return "".join(f"{self.query_text(s)} {a}\n" for s, a in demos)

    def full(self, demos, subject):
        return self._ids(self._demo_text(demos) + self.query_text(subject))

    def zero_shot(self, subject):
        return self._ids(self.query_text(subject))

    def context_only(self, demos):
        return self._ids(self._demo_text(demos) + self.query_text("?"))

    def answer_token(self, prompt_text, answer):
        """(token id, prefix_ok): the token at len(ids(prompt)) of ids(prompt + " " + answer)."""
        head = self._ids(prompt_text)
        both = self._ids(prompt_text + " " + answer)
        if len(both) <= len(head):
            raise ValueError(f"answer {answer!r} adds no token after {prompt_text!r}")
        return int(both[len(head)]), both[: len(head)] == head

    def prepare(self, pairs) -> tuple[list, dict]:
        """Keep the facts whose answer token is well defined and unique to their answer.

        Returns (kept pairs, report). report: n_facts, dropped_not_prefix (facts whose prompt ids
        are not a prefix of prompt + answer), dropped_collisions (facts whose answer shares its
        first token with a different answer) and the colliding groups.
        """
        token_of, not_prefix = {}, []
        for s, a in pairs:
            tok, ok = self.answer_token(self.query_text(s), a)
            if not ok:
                not_prefix.append((s, a))
            elif a not in token_of:
                token_of[a] = tok
        by_token: dict = {}
        for a, tok in token_of.items():
            by_token.setdefault(tok, []).append(a)
        clash = {a for group in by_token.values() if len(group) > 1 for a in group}
        kept = [(s, a) for s, a in pairs if a in token_of and a not in clash and (s, a) not in not_prefix]
        self.tokens = {a: t for a, t in token_of.items() if a not in clash}
        report = {
            "n_facts": len(pairs),
            "dropped_not_prefix": len(not_prefix),
            "dropped_collisions": sum(1 for s, a in pairs if a in clash),
            "colliding_answers": sorted(sorted(g) for g in by_token.values() if len(g) > 1),
            "kept": len(kept),
            "distinct_answers": len({a for _, a in kept}),
        }
        return kept, report

    def candidate(self, answer):
        if answer not in self.tokens:
            raise ValueError(
                f"answer {answer!r} has no prepared token: call prepare(pairs) first "
                "(it drops answers whose first tokens collide)"
            )
        return self.tokens[answer]
