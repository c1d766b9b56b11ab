"""What a search returns: :class:`Hit`, a chunk with offsets into its document's original
text, and :class:`ExplainedHit`, a hit with how its first-stage score came about.

Example:
    >>> Hit("Water boils.", 0.9, "faq-1", "<records>", 0, 12).text
    'Water boils.'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragkit.query.relevance import Evidence
from ragkit.search.contributions import Contribution
from ragkit.store import StoredChunk


@dataclass(frozen=True)
class Hit:
    """One search result: a chunk of a document, with offsets into the document's original text.

    ``document_id`` is the record's own id (a JSONL or CSV ``id``, what relevance judgments
    name) or, for a file, its key; ``key`` is the document's key in the index, as ``ragkit ls``,
    ``rm`` and ``info --document`` take it (``path#id`` for a record).

    ``score`` orders the hits of one query (fused, rescaled per query, or the reranker's);
    ``relevance``, in [0, 1], says how well the chunk answers the query and compares across
    queries: the score to set a threshold on (0.5 keeps what is likely relevant;
    :mod:`ragkit.query.relevance`).
    """

    text: str
    score: float
    document_id: str
    source: str
    start: int
    end: int
    title: str = ""
    language: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    key: str = ""
    duplicates: list[str] = field(default_factory=list)
    relevance: float = 0.0


@dataclass(frozen=True)
class ExplainedHit:
    """A hit of :meth:`ragkit.Index.explain` and how its first-stage score came about
    (:class:`ragkit.search.contributions.Contribution`); ``reranked``: ``hit.score`` is the
    reranker's, ``contribution.score`` the first stage's; ``evidence``: what ``hit.relevance``
    was calibrated from (:class:`ragkit.query.relevance.Evidence`)."""

    hit: Hit
    contribution: Contribution
    reranked: bool = False
    evidence: Evidence = field(default_factory=Evidence)


def hit_of(
    row: StoredChunk, score: float, duplicates: list[str] | None = None, relevance: float = 0.0
) -> Hit:
    """The hit of a stored chunk."""
    return Hit(
        text=row.text,
        score=score,
        document_id=row.external_id or row.document_key,
        source=row.source,
        start=row.start,
        end=row.end,
        title=row.title,
        language=row.language,
        metadata=row.metadata,
        key=row.document_key,
        duplicates=duplicates or [],
        relevance=relevance,
    )
