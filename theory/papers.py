"""The six papers, one entry per area: the single spelling of each title.

Every ``SOURCE``/``SRC``/``PAPER`` constant of the area modules is :func:`paper` of its area, so a
claim's or bound's source names its paper the same way everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Paper:
    area: str
    title: str  # the full title
    short: str  # the short title used in sources
    arxiv: str

    @property
    def cite(self) -> str:
        return f"{self.short} ({self.arxiv})"


PAPERS = {
    p.area: p
    for p in (
        Paper(
            "geometric", "Geometric Factual Recall in Transformers", "Geometric Factual Recall", "2605.12426"
        ),
        Paper(
            "fact_mlp",
            "Constructing Efficient Fact-Storing MLPs for Transformers",
            "Constructing Efficient Fact-Storing MLPs",
            "2512.00207",
        ),
        Paper(
            "icrecall",
            "Fine-Tuning Dynamics of In-Context Factual Recall in Transformers",
            "Fine-Tuning Dynamics of In-Context Factual Recall",
            "2605.27774",
        ),
        Paper(
            "hopfield",
            "Context-Gated Associative Retrieval: From Theory to Transformers",
            "Context-Gated Associative Retrieval",
            "2605.10970",
        ),
        Paper(
            "chapters",
            "Mixture of Chapters: Scaling Learnt Memory in Transformers",
            "Mixture of Chapters",
            "2603.21096",
        ),
        Paper(
            "retrieval",
            "Learning to Recall with Transformers Beyond Orthogonal Embeddings",
            "Learning to Recall with Transformers Beyond Orthogonal Embeddings",
            "2603.15923",
        ),
    )
}


def paper(area: str) -> str:
    """``short title (arXiv id)`` of the area's paper: the source string of its claims and bounds."""
    try:
        return PAPERS[area].cite
    except KeyError:
        raise ValueError(f"unknown area {area!r}; the papers are {sorted(PAPERS)}") from None
