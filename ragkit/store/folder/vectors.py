"""The FAISS files of a generation: one main index and the tail segments added after it.

A generation's vectors (:class:`ragkit.search.dense.DenseVectors`) live in files that are
written once and never changed: ``vectors-<B>.faiss``, the main index written by the commit of
generation B, and ``vectors-<G>-added.faiss``, the vectors the commit of generation G appended
(an exact flat index each). Later generations list the same files instead of copying them; the
list (:class:`Layout`) is stored in SQLite's ``state`` table under ``vectors`` by the same
transaction that commits the generation, so the files a generation names always exist and are
complete: they are written before that transaction, and a crash before it leaves only files no
generation names (removed on the next commit, see ``FolderStore.remove_stale_files``). An index
written before tails existed has no ``vectors`` row: its generation G is ``vectors-<G>.faiss``.

Each file's checksum is computed once, when it is written, and carried from one manifest to the
next; ``ragkit doctor`` re-hashes every file the manifest lists.

Example:
    >>> layout = Layout("vectors-3.faiss", ("vectors-4-added.faiss",))
    >>> Layout.from_json(layout.to_json()) == layout, layout.files
    (True, ('vectors-3.faiss', 'vectors-4-added.faiss'))
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import faiss
import numpy as np

from ragkit.errors import IndexDamagedError, RagkitError
from ragkit.paths import file_sha256
from ragkit.search.dense import DenseVectors, held
from ragkit.store.folder.manifest import vector_file

STATE_KEY = "vectors"
_FILE_NAME = re.compile(r"vectors-[0-9]+(-added)?\.faiss")


def added_file(generation: int) -> str:
    """The tail segment the commit of ``generation`` appended."""
    return f"vectors-{generation}-added.faiss"


@dataclass(frozen=True)
class Layout:
    """The files of one generation's vectors: ``main``, then the tail segments, oldest first,
    with the SHA-256 of each file taken when it was written (``checksums``; empty for an index
    written before layouts were stored)."""

    main: str
    added: tuple[str, ...] = ()
    checksums: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def files(self) -> tuple[str, ...]:
        return (self.main, *self.added)

    def extended(self, name: str, checksum: str) -> Layout:
        """This layout with the segment ``name`` appended."""
        return Layout(self.main, (*self.added, name), {**self.checksums, name: checksum})

    def to_json(self) -> str:
        return json.dumps(
            {"main": self.main, "added": list(self.added), "checksums": self.checksums}
        )

    @classmethod
    def from_json(cls, stored: str) -> Layout:
        """The layout SQLite stores; a name that is not a vectors file of the index folder
        itself (a path, ``..``) is refused, so a tampered state never opens another file.

        Example:
            >>> Layout.from_json('{"main": "/etc/x.faiss", "added": []}')
            Traceback (most recent call last):
            ...
            ragkit.errors.IndexDamagedError: ragkit.sqlite: state 'vectors' names '/etc/x.faiss', not a vectors file of the index folder; index is damaged (restore a backup)
        """
        values = json.loads(stored)
        added = tuple(str(name) for name in values["added"])
        for name in (str(values["main"]), *added):
            if not _FILE_NAME.fullmatch(name):
                raise IndexDamagedError(
                    f"ragkit.sqlite: state 'vectors' names {name!r}, not a vectors file of the "
                    "index folder; index is damaged (restore a backup)"
                )
        return cls(str(values["main"]), added, dict(values.get("checksums", {})))


def committed(db: sqlite3.Connection) -> tuple[int, Layout]:
    """The committed generation and its layout, read in one statement (one snapshot)."""
    rows = dict(
        db.execute("SELECT key, value FROM state WHERE key IN ('generation', ?)", (STATE_KEY,))
    )
    if "generation" not in rows:
        raise IndexDamagedError("ragkit.sqlite: state 'generation' missing; index is damaged")
    generation = int(rows["generation"])
    stored = rows.get(STATE_KEY)
    return generation, Layout(vector_file(generation)) if stored is None else Layout.from_json(
        stored
    )


def record(db: sqlite3.Connection, layout: Layout) -> None:
    """Store ``layout`` as the committed generation's (inside the committing transaction)."""
    db.execute(
        "INSERT OR REPLACE INTO state(key, value) VALUES (?, ?)", (STATE_KEY, layout.to_json())
    )


def write(index: faiss.Index, path: Path) -> str:
    """Write ``index`` at ``path`` whole or not at all (a temporary name, then a rename);
    returns the file's SHA-256."""
    scratch = Path(f"{path}.{os.getpid()}.tmp")
    try:
        faiss.write_index(index, str(scratch))
        checksum = file_sha256(scratch)
        os.replace(scratch, path)
    finally:
        scratch.unlink(missing_ok=True)
    return checksum


def read(path: Path, repair: str) -> faiss.Index:
    """The FAISS index at ``path``; missing or damaged is a :class:`RagkitError` ending in
    ``repair`` (how to fix it)."""
    if not path.exists():
        raise RagkitError(f"{path}: missing for the committed generation; {repair}")
    try:
        return faiss.read_index(str(path))
    except RuntimeError as error:
        raise IndexDamagedError(f"{path}: unreadable (damaged or truncated); {repair}") from error


def load(
    folder: Path, layout: Layout, repair: str, known: tuple[Layout, DenseVectors] | None = None
) -> DenseVectors:
    """The vectors ``layout`` names; ``known`` (an earlier layout and its vectors) lends its
    main index and tail when ``layout`` extends it, so only the new segments are read."""
    vectors, new = None, layout.added
    if known is not None and known[0].main == layout.main:
        start = known[0].added
        if layout.added[: len(start)] == start:
            vectors, new = known[1], layout.added[len(start) :]
    if vectors is None:
        vectors = DenseVectors.of(read(folder / layout.main, repair))
    if not new:
        return vectors
    segments = [held(read(folder / name, repair)) for name in new]
    ids = np.concatenate([segment_ids for segment_ids, _ in segments])
    return vectors.appended(ids, np.vstack([segment for _, segment in segments]))
