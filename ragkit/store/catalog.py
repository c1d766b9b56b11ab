"""What an index holds, listed and exported: documents by key or glob, chunks as records.

:func:`list_documents` and :func:`select_keys` read the committed documents (``ragkit ls``,
``ragkit rm``); :func:`chunk_records` yields every chunk with its offsets into the original
text, its document's language and metadata and, on request, its vector (``ragkit export``).
Removing documents is :meth:`ragkit.store.FolderStore.commit` with ``remove_keys``: one new
generation, as atomic as an ingest.

A pattern matches a document when it equals the document's key or source (a JSONL file's
path selects all its records). A pattern holding ``*``, ``?`` or ``[`` is a glob matched as
a search filter's ``source`` is (:func:`ragkit.store.filters.path_match`): ``*`` and ``?``
stay in one folder and ``**`` crosses folders, so ``rm 'docs/*.md'`` never reaches
``docs/en/a.md``; a relative glob matches the end of the key or source (``*.md``, ``*#r1``),
an absolute one (or one that opens with ``./`` or ``../``, read from the current folder) all
of it. Keys are absolute paths, so a relative path is also tried against the current folder
(:func:`patterns_for`): ``docs/a.md`` finds ``$PWD/docs/a.md``.

Example:
    >>> [is_glob(p) for p in ("docs/*.md", "docs/a.md", "corpus.jsonl#r[12]")]
    [True, False, True]
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

from ragkit.documents.discovery import document_key
from ragkit.errors import IndexDamagedError
from ragkit.store.filters import path_glob, where_clause
from ragkit.store.records import DocumentEntry

if TYPE_CHECKING:
    from ragkit.store.base import IndexStore

_GLOB_CHARACTERS = frozenset("*?[")
EXPORT_FORMATS = ("jsonl",)


def is_glob(pattern: str) -> bool:
    """Whether ``pattern`` holds a glob character (``*``, ``?``, ``[``).

    Example:
        >>> is_glob("docs/*.md"), is_glob("docs/a.md")
        (True, False)
    """
    return not _GLOB_CHARACTERS.isdisjoint(pattern)


def patterns_for(pattern: str) -> list[str]:
    """``pattern`` as given and, when relative, also as a path from the current folder
    (:func:`~ragkit.documents.discovery.document_key`: absolute, ``.``/``..`` folded).

    Example:
        >>> patterns_for("/docs/a.md")
        ['/docs/a.md']
        >>> patterns_for("docs/../docs/a.md")[1] == os.path.join(os.getcwd(), "docs", "a.md")
        True
    """
    if os.path.isabs(pattern):
        return [pattern]
    return [pattern, document_key(pattern)]


def document_where(pattern: str) -> tuple[str, tuple[str, ...]]:
    """The SQL condition on ``documents d`` that selects the documents ``pattern`` matches,
    and its parameters (used on the folder's database and on Milvus rows held in SQLite)."""
    if is_glob(pattern):
        if pattern.startswith(("./", "../")):  # from the current folder, as typed
            pattern = document_key(pattern)
        (on_key, key_values), (on_source, source_values) = (
            path_glob(column, pattern) for column in ("d.key", "d.source")
        )
        return f"({on_key} OR {on_source})", (*key_values, *source_values)
    tried = patterns_for(pattern)
    clause = " OR ".join("d.key = ? OR d.source = ?" for _ in tried)
    return f"({clause})", tuple(p for p in tried for _ in range(2))


def listing_where(
    pattern: str | None, filters: Mapping[str, Any] | None
) -> tuple[str, tuple[Any, ...]]:
    """The SQL condition on ``documents d`` selecting the documents ``pattern`` matches (all
    when None) that also match the search ``filters`` (:mod:`ragkit.store.filters`; all when
    None or empty), and its parameters. A listing answers which documents match: a metadata
    field no document has selects none, never an error.

    Example:
        >>> listing_where(None, None)
        ('1', ())
        >>> clause, values = listing_where("/d/a.md", {"year": 2020})
        >>> values[:2]
        ('/d/a.md', '/d/a.md')
    """
    clause, values = document_where(pattern) if pattern is not None else ("1", ())
    if filters:
        where, given = where_clause(filters)
        clause, values = f"{clause} AND ({where})", (*values, *given)
    return clause, tuple(values)


def list_documents(
    db: sqlite3.Connection,
    pattern: str | None = None,
    filters: Mapping[str, Any] | None = None,
) -> list[DocumentEntry]:
    """The committed documents of the folder database ``db`` (those matching ``pattern`` and
    ``filters``: :func:`listing_where`), by key."""
    clause, values = listing_where(pattern, filters)
    # SQLite's LENGTH() of text stops at the first NUL: a text holding one is measured in
    # Python (read back whole), any other in SQLite.
    rows = db.execute(
        "SELECT d.key, d.source, d.title, d.language, COUNT(c.id), LENGTH(d.text), "
        "instr(CAST(d.text AS BLOB), x'00'), d.id, d.content_hash, d.metadata FROM documents d "
        f"LEFT JOIN chunks c ON c.document_id = d.id WHERE {clause} GROUP BY d.id ORDER BY d.key",
        values,
    )
    return [
        DocumentEntry(
            key,
            source,
            title,
            language,
            int(chunks),
            _characters(db, row_id) if nul else int(chars),
            digest,
            json.loads(meta),
        )
        for key, source, title, language, chunks, chars, nul, row_id, digest, meta in rows
    ]


def _characters(db: sqlite3.Connection, row_id: int) -> int:
    """The length in characters of the text of document ``row_id``, NULs included."""
    return len(db.execute("SELECT text FROM documents WHERE id = ?", (row_id,)).fetchone()[0])


def select_keys(store: IndexStore, patterns: Sequence[str]) -> dict[str, list[str]]:
    """The keys of the documents each pattern matches (an empty list when none)."""
    return {pattern: [d.key for d in store.list_documents(pattern)] for pattern in patterns}


def exact_keys(store: IndexStore, ids: Sequence[str]) -> dict[str, str | None]:
    """The stored key each id names exactly (None when the index holds none): the id itself
    when it is a key, else, for a relative path, the key of that path from the current folder
    (:func:`patterns_for`). No id is ever read as a glob or a source.

    Example:
        >>> class Two:
        ...     def language_decision(self, key):
        ...         return "found" if key in {"*", os.path.abspath("a.md")} else None
        >>> found = exact_keys(Two(), ["*", "a.md", "b"])
        >>> found["*"], found["a.md"] == os.path.abspath("a.md"), found["b"]
        ('*', True, None)
    """

    def held(wanted: str) -> str | None:
        return next((k for k in patterns_for(wanted) if store.language_decision(k)), None)

    return {wanted: held(wanted) for wanted in dict.fromkeys(ids)}


def chunk_records(db: sqlite3.Connection, vectors: bool = False) -> Iterator[dict[str, Any]]:
    """Every chunk, by document key then position: its text and ``start``/``end`` offsets into
    the document's original text, the document's key, source, title, language, script and
    metadata, the chunker and token count, and with ``vectors`` its embedding (floats).

    Rows are read in one snapshot, so a commit meanwhile does not mix generations.
    """
    cursor = db.execute(
        "SELECT c.id AS chunk_id, d.key AS document, d.source, d.external_id, d.title, d.language, d.script, c.start, "
        "c.end, c.token_count, c.chunker, c.text, d.metadata, c.vector FROM chunks c "
        "JOIN documents d ON d.id = c.document_id ORDER BY d.key, c.start, c.id"
    )
    names = [column[0] for column in cursor.description]
    while rows := cursor.fetchmany(1000):
        for row in rows:
            record = dict(zip(names, row, strict=True))
            record["metadata"] = json.loads(record["metadata"])
            blob = record.pop("vector")
            if vectors:
                record["vector"] = np.frombuffer(blob, dtype=np.float32).tolist()
            yield record


def write_jsonl(records: Iterable[dict[str, Any]], stream: TextIO) -> int:
    """Write ``records`` to ``stream`` one JSON object per line (UTF-8 as is); how many. A
    record holding NaN or Infinity (not JSON) is refused with a :class:`RagkitError`.

    Example:
        >>> import io
        >>> out = io.StringIO()
        >>> write_jsonl([{"text": "ماء"}], out), out.getvalue()
        (1, '{"text": "ماء"}\\n')
    """
    count = 0
    for record in records:
        try:
            line = json.dumps(record, ensure_ascii=False, allow_nan=False)
        except ValueError as error:  # NaN or Infinity, stored by an earlier release
            raise IndexDamagedError(
                f"document {record.get('document')!r}: metadata holds NaN or Infinity, which "
                "is not JSON; run `ragkit doctor --repair` on the index to drop those values"
            ) from error
        stream.write(line + "\n")
        count += 1
    return count
