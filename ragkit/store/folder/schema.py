"""The SQLite side of an index folder: its tables, connection settings and migrations.

``ragkit.sqlite`` holds ``state`` (settings, dimension, generation), ``documents`` (one row per
document, with its text and chunking record), ``chunks`` (offsets, text, matching key, sparse
terms and vector of each chunk), ``runs`` (the ingest log) and ``near_duplicates`` (MinHash
signatures and groups: :mod:`ragkit.store.folder.near_duplicates`). :func:`connect` opens it in WAL
mode with foreign keys on (read-only where the folder cannot be written); :func:`create_tables`
makes a new one; :func:`migrate` adds the columns that indexes built by earlier versions lack,
so they keep opening.

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> connection = connect(folder)
    >>> create_tables(connection)
    >>> sorted(r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type='table'"))
    ['chunks', 'documents', 'near_duplicates', 'runs', 'state']
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from ragkit.documents.discovery import INDEX_DATABASE
from ragkit.store.filters import instant_of, lower_text, number_of, path_match
from ragkit.store.folder.near_duplicates import TABLE as NEAR_DUPLICATES

DB_NAME = INDEX_DATABASE  # discovery passes over folders holding it

_TABLES = """
CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    source TEXT NOT NULL,
    external_id TEXT NOT NULL,
    title TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    script TEXT NOT NULL,
    language TEXT NOT NULL,
    metadata TEXT NOT NULL,
    text TEXT NOT NULL,
    chunking TEXT NOT NULL DEFAULT '{}',
    language_confidence REAL NOT NULL DEFAULT 0,
    language_method TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS documents_source ON documents(source);
CREATE TABLE IF NOT EXISTS chunks (
    id INTEGER PRIMARY KEY,
    document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    start INTEGER NOT NULL,
    end INTEGER NOT NULL,
    token_count INTEGER NOT NULL,
    chunker TEXT NOT NULL,
    text TEXT NOT NULL,
    match_text TEXT NOT NULL DEFAULT '',
    terms TEXT NOT NULL DEFAULT '',
    vector BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_document ON chunks(document_id);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    started TEXT NOT NULL,
    summary TEXT NOT NULL
);
"""

# Columns added after the first format, with the definition (and so the value) older rows get.
_ADDED_COLUMNS = {
    "chunks": {"match_text": "TEXT NOT NULL DEFAULT ''", "terms": "TEXT NOT NULL DEFAULT ''"},
    "documents": {
        "chunking": "TEXT NOT NULL DEFAULT '{}'",
        "language_confidence": "REAL NOT NULL DEFAULT 0",
        "language_method": "TEXT NOT NULL DEFAULT ''",
    },
}


def connect(folder: Path) -> sqlite3.Connection:
    """A connection to ``folder``'s database: autocommit (transactions are explicit), WAL,
    foreign keys, and a 30 s wait for a busy database; usable from any thread. In a folder this
    process cannot write, the connection is read-only (:func:`connect_read_only`)."""
    if not writable(folder):
        return connect_read_only(folder)
    connection = sqlite3.connect(folder / DB_NAME, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA foreign_keys=ON")
    return _with_functions(connection)


def writable(folder: Path) -> bool:
    """Whether this process may write ``folder``'s database (and the files SQLite and the
    writer lock create beside it).

    Example:
        >>> writable(Path("/no/such/folder"))
        False
    """
    database = folder / DB_NAME
    return os.access(folder, os.W_OK) and (not database.exists() or os.access(database, os.W_OK))


def connect_read_only(folder: Path) -> sqlite3.Connection:
    """A read-only connection to ``folder``'s database.

    SQLite reads a WAL database through a ``-shm`` file it creates beside it, which it cannot
    do in a folder this process cannot write: there, when no ``-wal`` file holds commits (no
    writer is at work), the database file alone is the whole index and is opened ``immutable``;
    otherwise the existing ``-wal``/``-shm`` pair is read as it is.
    """
    database = folder / DB_NAME
    wal = folder / f"{DB_NAME}-wal"
    settled = not (wal.exists() and wal.stat().st_size > 0)
    immutable = "&immutable=1" if settled and not writable(folder) else ""
    uri = f"{database.resolve().as_uri()}?mode=ro{immutable}"
    connection = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    return _with_functions(connection)


def _with_functions(connection: sqlite3.Connection) -> sqlite3.Connection:
    """``connection`` waiting up to 30 s for a busy database, with ragkit's SQL functions
    (``path_match``, ``number_of``, ``instant_of`` and ``lower_text`` of
    :mod:`ragkit.store.filters`)."""
    connection.execute("PRAGMA busy_timeout=30000")
    connection.create_function("path_match", 2, path_match, deterministic=True)
    for name, function in (("number_of", number_of), ("instant_of", instant_of),
                           ("lower_text", lower_text)):  # fmt: skip
        connection.create_function(name, 1, function, deterministic=True)
    return connection


def create_tables(connection: sqlite3.Connection) -> None:
    """Create the tables of a new index (existing ones are left alone)."""
    connection.executescript(_TABLES + NEAR_DUPLICATES)


def migrate(connection: sqlite3.Connection) -> None:
    """Add the columns an index built by an earlier version lacks."""
    for table, wanted in _ADDED_COLUMNS.items():
        columns = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
        for column, definition in wanted.items():
            if column not in columns:
                connection.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")
