"""Committed documents read back whole — text, chunks, vectors, chunking record — in the form
:meth:`ragkit.store.FolderStore.commit` takes, so a derived part (languages, matching keys, sparse
terms) can be re-derived and committed again without re-embedding.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> from ragkit.config import Settings
    >>> from ragkit.store import FolderStore
    >>> store = FolderStore.create(Path(tempfile.mkdtemp()) / "idx", Settings(), dimension=4)
    >>> stored_documents(store.db, store.dimension, ["missing.txt"])
    []
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

import numpy as np

from ragkit.chunking import Chunk, ChunkingRecord
from ragkit.documents import Document
from ragkit.store.records import PendingDocument


def stored_documents(
    db: sqlite3.Connection, dimension: int, keys: Sequence[str]
) -> list[PendingDocument]:
    """The committed documents ``keys`` (those that exist), with their stored chunks and
    vectors.

    Documents come back without their block structure (blocks only shape chunking, which is
    not redone); ``match_texts`` and ``terms`` are the stored ones.
    """
    found: list[PendingDocument] = []
    for key in keys:
        row = db.execute(
            "SELECT id, key, source, external_id, title, content_hash, script, language, "
            "metadata, text, chunking, language_confidence, language_method FROM documents "
            "WHERE key = ?",
            (key,),
        ).fetchone()
        if row is not None:
            found.append(_pending(db, dimension, row))
    return found


def _pending(db: sqlite3.Connection, dimension: int, row: tuple) -> PendingDocument:
    document_id, key, source, external_id, title, digest, script, language, metadata = row[:9]
    text, chunking, confidence, method = row[9:]
    document = Document(
        key=key,
        source=source,
        text=text,
        content_hash=digest,
        blocks=[],
        title=title,
        external_id=external_id,
        metadata=json.loads(metadata),
        script=script,
        language=language,
        language_confidence=float(confidence),
        language_method=method,
    )
    chunks: list[Chunk] = []
    vectors: list[np.ndarray] = []
    keys: list[str] = []
    terms: list[str] = []
    for start, end, tokens, chunker, chunk_text, match_text, chunk_terms, blob in db.execute(
        "SELECT start, end, token_count, chunker, text, match_text, terms, vector FROM chunks "
        "WHERE document_id = ? ORDER BY id",
        (document_id,),
    ):
        chunks.append(Chunk(chunk_text, start, end, tokens, chunker))
        vectors.append(np.frombuffer(blob, dtype=np.float32))
        keys.append(match_text)
        terms.append(chunk_terms)
    matrix = np.stack(vectors) if vectors else np.zeros((0, dimension), dtype=np.float32)
    record = ChunkingRecord.from_dict(json.loads(chunking or "{}"))
    return PendingDocument(document, chunks, matrix, keys, terms, record)
