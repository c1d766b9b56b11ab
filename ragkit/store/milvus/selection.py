"""``ls`` and ``rm`` patterns over Milvus document rows, with exactly the folder store's rules.

A pattern is an SQL condition on ``documents d`` (:func:`ragkit.store.catalog.document_where`:
globs over keys and sources). A Milvus index evaluates it on its document rows, loaded into an
in-memory SQLite table with ragkit's ``path_match``, so both backends list the same documents.
That table is built in memory from Milvus's rows, so an SQLite error evaluating it can only
come from the pattern: it is a :class:`~ragkit.errors.RagkitError` about the input. (Search
filters are Milvus expressions instead: :mod:`ragkit.store.milvus.filtering`.)

Example:
    >>> table = DocumentTable([{"id": 5, "key": "/d/a.md", "source": "/d/a.md", "title": "",
    ...     "language": "en", "metadata": {"year": "2019"}, "content_hash": "h",
    ...     "chunk_count": 1, "characters": 9}])
    >>> [entry.key for entry in table.entries("*.md")], table.entries("*.txt")
    (['/d/a.md'], [])
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ragkit.errors import RagkitError
from ragkit.store.catalog import document_where
from ragkit.store.filters import path_match
from ragkit.store.records import DocumentEntry

__all__ = ["FIELDS", "DocumentTable"]

FIELDS = ["key", "source", "title", "language", "metadata", "content_hash", "chunk_count",
          "characters"]  # fmt: skip


class DocumentTable:
    """Document rows (:data:`FIELDS` and ``id``) in an in-memory SQLite table ``documents``."""

    def __init__(self, rows: Iterable[Mapping[str, Any]]) -> None:
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.create_function("path_match", 2, path_match, deterministic=True)
        self.db.execute(
            "CREATE TABLE documents (id INTEGER PRIMARY KEY, key TEXT, source TEXT, title TEXT, "
            "language TEXT, metadata TEXT, content_hash TEXT, chunk_count INTEGER, "
            "characters INTEGER)"
        )
        self.db.executemany(
            "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                (
                    int(row["id"]),
                    row["key"],
                    row["source"],
                    row["title"],
                    row["language"],
                    json.dumps(row["metadata"], ensure_ascii=False),
                    row["content_hash"],
                    int(row["chunk_count"]),
                    int(row["characters"]),
                )
                for row in rows
            ),
        )

    def entries(self, pattern: str | None = None) -> list[DocumentEntry]:
        """The documents whose key or source matches ``pattern`` (all when None), by key."""
        clause, values = document_where(pattern) if pattern is not None else ("1", ())
        with _about(f"pattern {str(pattern)[:40]!r}", "give a simpler one"):
            rows = self.db.execute(
                "SELECT d.key, d.source, d.title, d.language, d.chunk_count, d.characters, "
                f"d.content_hash, d.metadata FROM documents d WHERE {clause} ORDER BY d.key",
                values,
            ).fetchall()
        return [
            DocumentEntry(key, source, title, language, chunks, chars, digest, json.loads(meta))
            for key, source, title, language, chunks, chars, digest, meta in rows
        ]

    def close(self) -> None:
        self.db.close()


@contextmanager
def _about(what: str, fix: str) -> Iterator[None]:
    """SQLite errors of a query on the in-memory table as a fault of the user's ``what``,
    with ``fix``."""
    try:
        yield
    except sqlite3.Error as error:
        raise RagkitError(f"{what}: SQLite cannot evaluate it ({error}); {fix}") from error
