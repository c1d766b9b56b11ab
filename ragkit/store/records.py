"""What crosses the store interface (:class:`ragkit.store.base.IndexStore`), whatever the
backend: a document ready to commit, a stored chunk as search returns it, a stored document as
``ragkit ls`` lists it; and the longest id, key, source and title a document may have on any
backend (:func:`oversized_field`).

Example:
    >>> StoredChunk.from_row((7, "Water boils.", 0, 12, "/d/a.txt", "", "/d/a.txt", "", "en",
    ...                       '{"year": 2020}')).metadata
    {'year': 2020}
    >>> oversized_field(Document("k", "<records>", "Text.", "h", [], title="T" * 70_000))
    "its title is 70,000 bytes, over the 65,535-byte limit of a document's id, key, source and title"
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ragkit.chunking import Chunk, ChunkingRecord
from ragkit.documents import Document

__all__ = ["FIELD_BYTES", "DocumentEntry", "PendingDocument", "StoredChunk", "oversized_field"]

FIELD_BYTES = 65_535
"""The longest id, key, source or title of a document, in UTF-8 bytes: Milvus's longest text
field, refused alike by the folder so that both backends store the same documents."""


def oversized_field(document: Document) -> str | None:
    """Why ``document`` cannot be stored (an id, key, source or title over
    :data:`FIELD_BYTES`), or None."""
    fields = (("id", document.external_id), ("key", document.key),
              ("source", document.source), ("title", document.title))  # fmt: skip
    for name, value in fields:
        size = len(value.encode("utf-8", "surrogatepass"))
        if size > FIELD_BYTES:
            return (
                f"its {name} is {size:,} bytes, over the {FIELD_BYTES:,}-byte limit of a "
                "document's id, key, source and title"
            )
    return None


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
