"""What crosses the store interface (:class:`ragkit.store.base.IndexStore`), whatever the
backend: a document ready to commit, a stored chunk as search returns it, a stored document as
``ragkit ls`` lists it.

Example:
    >>> StoredChunk.from_row((7, "Water boils.", 0, 12, "/d/a.txt", "", "/d/a.txt", "", "en",
    ...                       '{"year": 2020}')).metadata
    {'year': 2020}
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ragkit.chunking import Chunk, ChunkingRecord
from ragkit.documents import Document

__all__ = ["DocumentEntry", "PendingDocument", "StoredChunk"]


@dataclass(frozen=True)
class StoredChunk:
    """A chunk joined with its document, as search returns it."""

    chunk_id: int
    text: str
    start: int
    end: int
    document_key: str
    external_id: str
    source: str
    title: str
    language: str
    metadata: dict

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> StoredChunk:
        """From a ``chunks ⋈ documents`` row (metadata as stored JSON)."""
        columns = list(row)
        columns[-1] = json.loads(columns[-1])
        return cls(*columns)


@dataclass(frozen=True)
class PendingDocument:
    """A document with its chunks and their vectors, ready to commit."""

    document: Document
    chunks: list[Chunk]
    vectors: np.ndarray
    match_texts: list[str]  # each chunk's normalized matching key (ragkit.normalize)
    terms: list[str]  # each chunk's sparse terms: space-joined SentencePiece pieces
    chunking: ChunkingRecord = field(default_factory=ChunkingRecord)  # chunker choice, scores


@dataclass(frozen=True)
class DocumentEntry:
    """One stored document as ``ragkit ls`` shows it."""

    key: str
    source: str
    title: str
    language: str
    chunks: int
    characters: int
    content_hash: str
    metadata: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
