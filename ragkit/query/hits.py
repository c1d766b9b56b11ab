"""What a search returns: :class:`Hit`, a chunk with offsets into its document's original
text, and :class:`ExplainedHit`, a hit with how its first-stage score came about.

Example:
    >>> Hit("Water boils.", 0.9, "faq-1", "<records>", 0, 12).text
    'Water boils.'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ragkit.search.contributions import Contribution
from ragkit.store import StoredChunk


@dataclass(frozen=True)
class Hit:
    """One search result: a chunk of a document, with offsets into the document's original text.

    ``document_id`` is the record's own id (a JSONL or CSV ``id``, what relevance judgments
    name) or, for a file, its key; ``key`` is the document's key in the index, as ``ragkit ls``,
    ``rm`` and ``info --document`` take it (``path#id`` for a record).
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


@dataclass(frozen=True)
class ExplainedHit:
    """A hit of :meth:`ragkit.Index.explain` and how its first-stage score came about
    (:class:`ragkit.search.contributions.Contribution`); ``reranked``: ``hit.score`` is the
    reranker's, ``contribution.score`` the first stage's."""

    hit: Hit
    contribution: Contribution
    reranked: bool = False


def hit_of(row: StoredChunk, score: float, duplicates: list[str] | None = None) -> Hit:
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
    )
