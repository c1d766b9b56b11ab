"""Static token vectors made as a run meets their tokens, kept in a table that grows on disk.

A :class:`TokenTable` answers "the vectors of these rows" (float16, one per row of the static
vocabulary): from memory, else from its SQLite file, else made now by its ``make`` callable
(the encoder's pass and the basis: :mod:`ragkit.embed.static`) and written to the file before
they are returned. So a collection costs a forward pass only for the tokens it holds (a few
thousand word pieces for a typical collection, against the 250k of multilingual-e5-small's
vocabulary), each once per machine.

The file is SQLite's: each batch of new rows is one transaction, so a crash leaves the rows
written before it and nothing half-written, and two processes growing the same table at once
both end with every row (a row made twice is the same vector; the first kept). A file that
cannot be read as a table (damaged, or not a table) is replaced by a new one: it is a cache.

Example:
    >>> import tempfile
    >>> made = []
    >>> def make(rows):
    ...     made.extend(rows.tolist())
    ...     return np.repeat(rows[:, None], 4, axis=1).astype(np.float16)
    >>> table = TokenTable(Path(tempfile.mkdtemp()) / "t.sqlite", size=10, dimension=4, make=make)
    >>> table.vectors(np.array([[3, 5], [5, 5]]))[:, :, 0].tolist()
    [[3.0, 5.0], [5.0, 5.0]]
    >>> _ = table.vectors(np.array([3, 7])); made
    [3, 5, 7]
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ragkit.errors import RagkitError

log = logging.getLogger(__name__)

T = TypeVar("T")
MakeRows = Callable[[np.ndarray], np.ndarray]
"""Rows (int64, distinct) → their vectors (float16, rows × dimension)."""

_QUERY_ROWS = 900  # rows per SELECT … IN (…): under SQLite's bound-variable limit
_BUSY_SECONDS = 120.0  # how long a writer waits for another process's transaction


class TokenTable:
    """Vectors of a vocabulary's rows, made on first use and kept at ``path``."""

    def __init__(self, path: Path, size: int, dimension: int, make: MakeRows) -> None:
        self.path = path
        self.size = size
        self.dimension = dimension
        self.make = make
        self.slots = np.full(size, -1, dtype=np.int64)  # row → index into self.data
        self.data = np.zeros((64, dimension), dtype=np.float16)  # grows by doubling
        self.count = 0  # rows in memory
        self.made = 0  # rows this process made (not read)
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None

    def vectors(self, rows: np.ndarray) -> np.ndarray:
        """The vectors of ``rows`` (any shape of row numbers), as ``rows.shape + (d,)``."""
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size and (rows.min() < 0 or rows.max() >= self.size):
            raise RagkitError(f"{self.path}: rows outside the vocabulary of {self.size}")
        if (self.slots[rows] < 0).any():
            with self._lock:
                self._fill(np.unique(rows[self.slots[rows] < 0]))
        return self.data[self.slots[rows]]

    def add(self, rows: np.ndarray, vectors: np.ndarray) -> None:
        """Keep ``vectors`` (float16) of ``rows`` (distinct, none in memory yet), made by the
        caller: written to the file and held in memory."""
        with self._lock:
            self._write(rows, vectors)
            self._hold(dict(zip(rows.tolist(), vectors, strict=True)))

    def _fill(self, wanted: np.ndarray) -> None:
        """Bring the vectors of ``wanted`` into memory: read, else made and written."""
        wanted = wanted[self.slots[wanted] < 0]  # another thread may have brought some
        if not len(wanted):
            return
        found = dict(self._read(wanted))
        missing = np.array([row for row in wanted.tolist() if row not in found], dtype=np.int64)
        if len(missing):
            vectors = np.asarray(self.make(missing), dtype=np.float16)
            if vectors.shape != (len(missing), self.dimension):
                raise RagkitError(f"{self.path}: made vectors of shape {vectors.shape}")
            self._write(missing, vectors)
            self.made += len(missing)
            found.update(zip(missing.tolist(), vectors, strict=True))
        self._hold(found)

    def _hold(self, found: dict[int, np.ndarray]) -> None:
        if not found:
            return
        rows = np.fromiter(found, dtype=np.int64, count=len(found))
        end = self.count + len(rows)
        if end > len(self.data):
            grown = np.zeros((max(end, 2 * len(self.data)), self.dimension), dtype=np.float16)
            grown[: self.count] = self.data[: self.count]
            self.data = grown
        self.data[self.count : end] = np.stack(list(found.values()))
        self.slots[rows] = np.arange(self.count, end)
        self.count = end

    def _read(self, rows: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
        width = 2 * self.dimension
        for start in range(0, len(rows), _QUERY_ROWS):
            part = rows[start : start + _QUERY_ROWS].tolist()
            marks = ",".join("?" * len(part))
            query = f"SELECT row, vector FROM vectors WHERE row IN ({marks})"

            def select(
                connection: sqlite3.Connection, query: str = query, part: list[int] = part
            ) -> list[Any]:
                return connection.execute(query, part).fetchall()

            for row, blob in self._run(select):
                if len(blob) == width:
                    yield int(row), np.frombuffer(blob, dtype="<f2")

    def _write(self, rows: np.ndarray, vectors: np.ndarray) -> None:
        blobs = [vector.astype("<f2").tobytes() for vector in vectors]
        values = list(zip(rows.tolist(), blobs, strict=True))

        def insert(connection: sqlite3.Connection) -> None:
            connection.execute("BEGIN IMMEDIATE")  # one transaction: all of these rows or none
            try:
                connection.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?)", values)
            except BaseException:
                connection.execute("ROLLBACK")
                raise
            connection.execute("COMMIT")

        self._run(insert)

    def _run(self, call: Callable[[sqlite3.Connection], T]) -> T:
        """``call(connection)``; a file SQLite cannot use as the table is replaced once."""
        try:
            return call(self._open())
        except sqlite3.DatabaseError as error:
            if isinstance(error, sqlite3.OperationalError) and "locked" in str(error):
                raise RagkitError(
                    f"{self.path}: busy for {_BUSY_SECONDS:.0f} s ({error})"
                ) from error
            log.warning("%s could not be used (%s); starting it again", self.path, error)
            self.close()
            for suffix in ("", "-wal", "-shm", "-journal"):
                self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)
            return call(self._open())

    def _open(self) -> sqlite3.Connection:
        if self._connection is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            connection = sqlite3.connect(
                self.path, timeout=_BUSY_SECONDS, isolation_level=None, check_same_thread=False
            )
            try:
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute(
                    "CREATE TABLE IF NOT EXISTS vectors "
                    "(row INTEGER PRIMARY KEY, vector BLOB NOT NULL)"
                )
            except sqlite3.DatabaseError:
                connection.close()
                raise
            self._connection = connection
        return self._connection

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None
