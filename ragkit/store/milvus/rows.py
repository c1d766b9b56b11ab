"""Documents to Milvus rows and back: one row per chunk, one per document, the text in parts.

Row ids are stable (:func:`~ragkit.store.milvus.collections.row_id`): a document's id comes
from its key, its ``version`` and its chunks' ids from its key and content hash. Writing the
same document again replaces its rows instead of adding copies, so a writer killed mid-batch
and run again leaves no duplicate.

Example:
    >>> from ragkit.chunking import Chunk
    >>> from ragkit.documents import Document
    >>> doc = Document("/d/a.txt", "/d/a.txt", "Water boils.", "h1", [], language="en")
    >>> item = PendingDocument(doc, [Chunk("Water boils.", 0, 12, 3, "sentence")],
    ...                        np.ones((1, 2), np.float32), ["water boils."], ["water boil"])
    >>> rows = document_rows(item)
    >>> rows.document["chunk_count"], rows.chunks[0]["bm25_text"].count(" ")
    (1, 1)
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragkit.chunking import Chunk, ChunkingRecord
from ragkit.documents import Document
from ragkit.errors import RagkitError
from ragkit.store.milvus.collections import PLACEHOLDER, TEXT_PART_CHARS, VARCHAR_BYTES, row_id
from ragkit.store.milvus.terms import spelled
from ragkit.store.records import PendingDocument, StoredChunk, oversized_field

__all__ = [
    "DocumentRows",
    "document_id",
    "document_rows",
    "pending_from",
    "stored_chunk",
    "version",
]

DOCUMENT_FIELDS = ["key", "source", "external_id", "title", "content_hash", "version", "script",
                   "language", "language_confidence", "language_method", "metadata", "chunking",
                   "characters", "chunk_count", "text_parts"]  # fmt: skip
CHUNK_FIELDS = ["document_id", "version", "position", "start", "end", "token_count", "chunker",
                "text", "match_text", "terms"]  # fmt: skip


def document_id(key: str) -> int:
    """The id of the document row of ``key``."""
    return row_id("document", key)


def version(content_hash: str) -> int:
    """The version number of a document's content (chunks of another version are hidden)."""
    return row_id("version", content_hash)


@dataclass(frozen=True)
class DocumentRows:
    """The rows of one document: its chunks, its text parts, and its document row (written
    last: the commit point)."""

    document: dict[str, Any]
    chunks: list[dict[str, Any]]
    texts: list[dict[str, Any]]


def document_rows(item: PendingDocument) -> DocumentRows:
    """The rows that store ``item``; an id, key, source or title (ingest refuses those
    first), or a chunk, too long for a Milvus text field is a :class:`RagkitError` naming the
    document."""
    doc = item.document
    if (problem := oversized_field(doc)) is not None:
        raise RagkitError(f"{doc.key[:200]}: {problem}")
    ids = document_id(doc.key), version(doc.content_hash)
    chunks = []
    rows = zip(item.chunks, item.vectors, item.match_texts, item.terms, strict=True)
    for position, (chunk, vector, match_text, terms) in enumerate(rows):
        for name, text in (("text", chunk.text), ("matching key", match_text), ("terms", terms)):
            if len(text.encode("utf-8", "surrogatepass")) > VARCHAR_BYTES:
                raise RagkitError(
                    f"{doc.key}: chunk {position} ({chunk.start}-{chunk.end}): its {name} is "
                    f"over Milvus's {VARCHAR_BYTES:,}-byte text limit; index with a smaller "
                    "--chunk-tokens"
                )
        chunks.append(
            {
                "id": row_id("chunk", doc.key, doc.content_hash, str(position)),
                "document_id": ids[0],
                "version": ids[1],
                "position": position,
                "start": chunk.start,
                "end": chunk.end,
                "token_count": chunk.token_count,
                "chunker": chunk.chunker,
                "text": chunk.text,
                "match_text": match_text,
                "terms": terms,
                "bm25_text": spelled(terms),
                "vector": np.asarray(vector, dtype=np.float32).tolist(),
            }
        )
    parts = [doc.text[i : i + TEXT_PART_CHARS] for i in range(0, len(doc.text), TEXT_PART_CHARS)]
    texts = [
        {
            "id": row_id("text", doc.key, doc.content_hash, str(part)),
            "document_id": ids[0],
            "version": ids[1],
            "part": part,
            "text": text,
            "placeholder": PLACEHOLDER,
        }
        for part, text in enumerate(parts)
    ]
    document = {
        "id": ids[0],
        "version": ids[1],
        "key": doc.key,
        "source": doc.source,
        "external_id": doc.external_id,
        "title": doc.title,
        "content_hash": doc.content_hash,
        "script": doc.script,
        "language": doc.language,
        "language_confidence": float(doc.language_confidence),
        "language_method": doc.language_method,
        "metadata": doc.metadata,
        "chunking": json.dumps(item.chunking.as_dict(), ensure_ascii=False),
        "characters": len(doc.text),
        "chunk_count": len(chunks),
        "text_parts": len(texts),
        "placeholder": PLACEHOLDER,
    }
    return DocumentRows(document, chunks, texts)


def stored_chunk(chunk: Mapping[str, Any], document: Mapping[str, Any]) -> StoredChunk:
    """A chunk row with its document row, as search returns it."""
    return StoredChunk(
        chunk_id=int(chunk["id"]),
        text=chunk["text"],
        start=int(chunk["start"]),
        end=int(chunk["end"]),
        document_key=document["key"],
        external_id=document["external_id"],
        source=document["source"],
        title=document["title"],
        language=document["language"],
        metadata=dict(document["metadata"] or {}),
    )


def pending_from(
    document: Mapping[str, Any],
    chunks: Sequence[Mapping[str, Any]],
    texts: Sequence[Mapping[str, Any]],
    dimension: int,
) -> PendingDocument:
    """A stored document read back whole, in the form a commit takes (chunks by position,
    text parts by part)."""
    text = "".join(part["text"] for part in sorted(texts, key=lambda row: row["part"]))
    restored = Document(
        key=document["key"],
        source=document["source"],
        text=text,
        content_hash=document["content_hash"],
        blocks=[],
        title=document["title"],
        external_id=document["external_id"],
        metadata=dict(document["metadata"] or {}),
        script=document["script"],
        language=document["language"],
        language_confidence=float(document["language_confidence"]),
        language_method=document["language_method"],
    )
    ordered = sorted(chunks, key=lambda row: row["position"])
    vectors = (
        np.asarray([row["vector"] for row in ordered], dtype=np.float32)
        if ordered
        else np.zeros((0, dimension), dtype=np.float32)
    )
    return PendingDocument(
        restored,
        [Chunk(r["text"], r["start"], r["end"], r["token_count"], r["chunker"]) for r in ordered],
        vectors,
        [row["match_text"] for row in ordered],
        [row["terms"] for row in ordered],
        ChunkingRecord.from_dict(json.loads(document["chunking"] or "{}")),
    )
