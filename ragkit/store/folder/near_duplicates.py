"""The index folder's near-duplicate table: one MinHash signature per document key and the key
of the near-duplicate group it is in (:mod:`ragkit.pipeline.near_duplicates` computes both).

``near_duplicates(key, signature, group_key)`` lives beside ``documents`` in ``ragkit.sqlite``
but outside the generations: it is derived data, written after an ingest's commits (under the
writer lock) and read by ``ragkit ls --duplicates``, ``info`` and search's ``collapse``. An
index built before it existed has no such table: reads find nothing, and the first write (the
next ingest) creates it. An empty signature marks a document too short to compare.

Example:
    >>> import sqlite3
    >>> db = sqlite3.connect(":memory:", isolation_level=None)
    >>> signatures(db)
    {}
    >>> write(db, {"/a": (b"\\x01", "/a"), "/b": (b"\\x01", "/a"), "/c": (b"", None)}, [])
    >>> groups(db, ["/b", "/c"]), sorted(signatures(db))
    ({'/b': '/a'}, ['/a', '/b', '/c'])
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping

TABLE = """
CREATE TABLE IF NOT EXISTS near_duplicates (
    key TEXT PRIMARY KEY,
    signature BLOB NOT NULL,
    group_key TEXT
);
CREATE INDEX IF NOT EXISTS near_duplicates_group ON near_duplicates(group_key);
"""
LOOKUP_BATCH = 500  # keys per ``IN (...)``: well under SQLite's bound-parameter limit


def _exists(db: sqlite3.Connection) -> bool:
    row = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'near_duplicates'"
    ).fetchone()
    return row is not None


def signatures(db: sqlite3.Connection) -> dict[str, bytes]:
    """Every stored signature by document key (none before the table exists)."""
    if not _exists(db):
        return {}
    return {
        key: bytes(blob) for key, blob in db.execute("SELECT key, signature FROM near_duplicates")
    }


def groups(db: sqlite3.Connection, keys: Iterable[str] | None = None) -> dict[str, str]:
    """Key → group key of the documents ``keys`` (all when None) that are in a group."""
    if not _exists(db):
        return {}
    if keys is None:
        rows = db.execute("SELECT key, group_key FROM near_duplicates WHERE group_key IS NOT NULL")
        return dict(rows)
    wanted = list(dict.fromkeys(keys))
    found: dict[str, str] = {}
    for start in range(0, len(wanted), LOOKUP_BATCH):
        part = wanted[start : start + LOOKUP_BATCH]
        marks = ",".join("?" * len(part))
        found.update(
            db.execute(
                f"SELECT key, group_key FROM near_duplicates WHERE key IN ({marks}) "
                "AND group_key IS NOT NULL",
                part,
            )
        )
    return found


def write(
    db: sqlite3.Connection,
    rows: Mapping[str, tuple[bytes, str | None]],
    removed: Iterable[str],
) -> None:
    """Write ``rows`` (key → (signature, group key or None)) and delete the entries of
    ``removed`` keys, in one transaction (the table is created when missing)."""
    db.executescript(TABLE)
    db.execute("BEGIN IMMEDIATE")
    try:
        db.executemany("DELETE FROM near_duplicates WHERE key = ?", [(key,) for key in removed])
        db.executemany(
            "INSERT OR REPLACE INTO near_duplicates(key, signature, group_key) VALUES (?, ?, ?)",
            [(key, blob, group) for key, (blob, group) in rows.items()],
        )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
