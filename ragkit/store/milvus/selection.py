"""Filters and globs over Milvus document rows, with exactly the folder store's rules.

Search filters (``language``, ``source`` globs, typed metadata values, ranges over numbers and
text that spells one) and ``ls``/``rm`` patterns are SQL conditions on ``documents d``
(:mod:`ragkit.store.filters`, :func:`ragkit.store.catalog.document_where`). A Milvus index
evaluates the same conditions on its document rows, loaded into an in-memory SQLite table
with ragkit's SQL functions, and hands Milvus only the ids of the documents selected: a filter
value never becomes part of a Milvus expression, and both backends select the same documents.
That table is built in memory from Milvus's rows, so an SQLite error evaluating it can only
come from the filter or pattern: it is a :class:`~ragkit.errors.RagkitError` about the input.

Example:
    >>> table = DocumentTable([{"id": 5, "key": "/d/a.md", "source": "/d/a.md", "title": "",
    ...     "language": "en", "metadata": {"year": "2019"}, "content_hash": "h",
    ...     "chunk_count": 1, "characters": 9}])
    >>> table.ids({"year": {">=": 2000}}).tolist(), table.ids({"source": "*.txt"}).tolist()
    ([5], [])
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

from ragkit.errors import RagkitError
from ragkit.store.catalog import listing_where
from ragkit.store.filters import check_known, number_of, path_match, where_clause
from ragkit.store.records import DocumentEntry

__all__ = ["FIELDS", "DocumentTable"]

FIELDS = ["key", "source", "title", "language", "metadata", "content_hash", "chunk_count",
          "characters"]  # fmt: skip


class DocumentTable:
    """Document rows (:data:`FIELDS` and ``id``) in an in-memory SQLite table ``documents``."""

    def __init__(self, rows: Iterable[Mapping[str, Any]]) -> None:
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.create_function("path_match", 2, path_match, deterministic=True)
        self.db.create_function("number_of", 1, number_of, deterministic=True)
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

    def ids(self, filters: Mapping[str, Any]) -> np.ndarray:
        """Ids of the documents matching every filter; a metadata key no document has is a
        :class:`ragkit.errors.RagkitError` when nothing matched (as in the folder store)."""
        where, values = where_clause(filters)
        with _about("filters", "give fewer or simpler ones"):
            rows = self.db.execute(f"SELECT d.id FROM documents d WHERE {where}", values)
            ids = np.fromiter((r[0] for r in rows), dtype=np.int64)
        if not len(ids):
            fields = self.db.execute(
                "SELECT DISTINCT m.key FROM documents d, json_each(d.metadata) m"
            )
            check_known(filters, {str(field) for (field,) in fields})
        return ids

    def entries(
        self, pattern: str | None = None, filters: Mapping[str, Any] | None = None
    ) -> list[DocumentEntry]:
        """The documents whose key or source matches ``pattern`` (all when None) and that
        match ``filters`` (:func:`~ragkit.store.catalog.listing_where`), by key."""
        clause, values = listing_where(pattern, filters)
        what = f"pattern {str(pattern)[:40]!r}" if pattern is not None else "filters"
        with _about(what, "give a simpler one"):
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
