"""The SQLite side of an index folder: its tables, connection settings and migrations.

``ragkit.sqlite`` holds ``state`` (settings, dimension, generation), ``documents`` (one row per
document, with its text and chunking record), ``chunks`` (offsets, text, matching key, sparse
terms and vector of each chunk) and ``runs`` (the ingest log). :func:`connect` opens it in WAL
mode with foreign keys on; :func:`create_tables` makes a new one; :func:`migrate` adds the
columns that indexes built by earlier versions lack, so they keep opening.

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> connection = connect(folder)
    >>> create_tables(connection)
    >>> sorted(r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type='table'"))
    ['chunks', 'documents', 'runs', 'state']
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

DB_NAME = "ragkit.sqlite"

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
    foreign keys, and a 30 s wait for a busy database; usable from any thread."""
    connection = sqlite3.connect(folder / DB_NAME, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA foreign_keys=ON")
    connection.execute("PRAGMA busy_timeout=30000")
    return connection


def create_tables(connection: sqlite3.Connection) -> None:
    """Create the tables of a new index (existing ones are left alone)."""
    connection.executescript(_TABLES)


def migrate(connection: sqlite3.Connection) -> None:
    """Add the columns an index built by an earlier version lacks."""
    for table, wanted in _ADDED_COLUMNS.items():
        columns = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
        for column, definition in wanted.items():
            if column not in columns:
                connection.execute(f"ALTER TABLE {table} ADD COLUMN {column} {definition}")
