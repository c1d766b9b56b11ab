"""The index folder written: SQLite metadata + FAISS vectors + BM25 terms, committed by
generation (the reads: :mod:`ragkit.store.folder.reader`).

Layout of an index folder::

    ragkit.sqlite        documents, chunks (offsets, text, matching key, terms, vector),
                         settings, run log (:mod:`ragkit.store.folder.schema`)
    vectors-<B>.faiss    the main FAISS index, written by the commit of generation B
                         (:mod:`ragkit.search.dense`)
    vectors-<G>-added.faiss  the vectors generation G's commit appended beside it (a tail
                         segment); SQLite names the files of the committed generation
                         (:mod:`ragkit.store.folder.vectors`)
    bm25-<G>/            the BM25 index of generation G (:mod:`ragkit.search.sparse`)
    MANIFEST.json        generation, counts and file checksums (rewritten after each commit)

Commit protocol: the new FAISS file is written first — a tail segment
``vectors-<G+1>-added.faiss`` holding only this commit's vectors while the tail is small, else a
new main ``vectors-<G+1>.faiss``, generation G's index carried forward with the tail and this
commit's changes (:func:`ragkit.search.dense.advance`). Vectors this store did not write itself
are first compared with the vectors in SQLite and rebuilt from them when they differ, so a
damaged FAISS file is never carried into a new generation. Then one SQLite transaction stores
the rows, the list of generation G+1's FAISS files and ``generation = G+1``. That transaction
is the commit point: a crash before it leaves generation G intact (its files are never changed;
the orphan file is removed on the next commit), a crash after it leaves a complete generation
G+1. BM25 is derived from the terms in
SQLite: ``bm25-<G>`` is built after the commit (once per ingest, not per batch, since it is a
full rebuild) and is only ever read for generation G; when it is missing — a crash, or an ingest
still running — the first sparse search rebuilds it.

Example:
    >>> import tempfile, numpy as np
    >>> store = FolderStore.create(Path(tempfile.mkdtemp()) / "idx", Settings(), dimension=4)
    >>> store.generation
    0
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Self

import faiss
import numpy as np

from ragkit.config import ANALYSIS_SETTINGS, Settings
from ragkit.errors import IndexExistsError, RagkitError
from ragkit.normalize.detect import RULES_VERSION
from ragkit.search import dense
from ragkit.search.dense import DenseVectors
from ragkit.store import language_rules, tokenizers
from ragkit.store.folder import near_duplicates
from ragkit.store.folder.damage import names_damage
from ragkit.store.folder.lock import WriteLock
from ragkit.store.folder.manifest import MANIFEST_NAME, vector_file, write_manifest
from ragkit.store.folder.reader import FolderReader, check_folder
from ragkit.store.folder.schema import DB_NAME, connect, create_tables
from ragkit.store.folder.space import commit_bytes, disk_full, is_disk_full
from ragkit.store.folder.vectors import Layout, added_file, committed, record
from ragkit.store.folder.vectors import write as write_vectors
from ragkit.store.records import PendingDocument

__all__ = ["CREATION_SCRATCH", "FolderStore", "stored_vectors"]

logger = logging.getLogger(__name__)

# The scratch database a creation builds (and SQLite's journal of it) before renaming it into
# place; left behind when the creating process is killed.
CREATION_SCRATCH = (f".{DB_NAME}.*.tmp", f".{DB_NAME}.*.tmp-journal")


def stored_vectors(
    db: sqlite3.Connection, dimension: int, batch: int = 20_000
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The (chunk ids, vectors) stored in SQLite, in id order, ``batch`` rows at a time."""
    cursor = db.execute("SELECT id, vector FROM chunks ORDER BY id")
    while rows := cursor.fetchmany(batch):
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        yield ids, vectors.reshape(len(rows), dimension)


class FolderStore(FolderReader):
    """One index folder. Open with :meth:`open` or :meth:`create`; a single writer at a time
    (:class:`ragkit.store.folder.lock.WriteLock`), any number of readers and reading threads
    (the reads: :class:`ragkit.store.folder.reader.FolderReader`).

    Each thread gets its own SQLite connection (:attr:`db`); searches follow the last
    committed generation (:meth:`refresh`).
    """

    @contextmanager
    def writing(self, wait: bool | float = True) -> Iterator[None]:
        """Hold the folder's writer lock (``wait``: :class:`ragkit.store.folder.lock.WriteLock`),
        then follow the last commit and clear the files of writes that died. A full disk met by
        the writes in the block (BM25, the run log…) is one error (:mod:`.space`)."""
        with WriteLock(self.folder, wait):
            self.refresh()  # another writer may have committed while this one waited
            self.remove_stale_files()
            try:
                yield
            except (OSError, RuntimeError, sqlite3.Error) as error:  # a commit says its own
                if not is_disk_full(error):
                    raise
                state = (
                    f"generation {self.generation} is the last committed; once space is free, "
                    f"run `ragkit doctor --index {self.folder} --repair`"
                )
                raise disk_full(self.folder, None, state) from error

    # -- opening -----------------------------------------------------------------------------
    @classmethod
    def create(cls, folder: Path, settings: Settings, dimension: int) -> Self:
        """Create an empty index at ``folder``; raises :class:`IndexExistsError` when it
        already holds one (another process may have created it a moment ago).

        Creation holds the writer lock, and the database appears complete or not at all: it
        is built under a temporary name and renamed into place, so a reader never sees an
        index without tables and a crash mid-creation leaves nothing to repair.
        """
        check_folder(folder)
        with WriteLock(folder):
            if (folder / DB_NAME).exists():
                raise IndexExistsError(f"{folder}: already holds a ragkit index; open it instead")
            # Under the lock no other creation runs: temporary databases are of dead ones,
            # WAL files of an index deleted without them.
            wal = [folder / f"{DB_NAME}{end}" for end in ("-wal", "-shm")]
            for leftover in [*(p for g in CREATION_SCRATCH for p in folder.glob(g)), *wal]:
                leftover.unlink(missing_ok=True)
            scratch = folder / f".{DB_NAME}.{os.getpid()}.tmp"
            connection = sqlite3.connect(scratch, isolation_level=None)
            try:
                create_tables(connection)
                state = [("settings", settings.model_dump_json()), ("dimension", str(dimension))]
                connection.executemany(
                    "INSERT INTO state(key, value) VALUES (?, ?)", [*state, ("generation", "0")]
                )
            finally:
                connection.close()
            faiss.write_index(dense.empty_index(dimension), str(folder / "vectors-0.faiss"))
            empty = {"documents": 0, "chunks": 0, "vectors": 0}
            write_manifest(folder, 0, dimension, settings.embedding_model, empty)
            os.replace(scratch, folder / DB_NAME)  # the index exists from here on, complete
            return cls(folder, connect(folder))

    def replace_settings(self, settings: Settings) -> None:
        """Store new settings for an index that has no chunks yet (an ``auto`` model resolved
        before the first commit), or that differ only in ``ANALYSIS_SETTINGS`` (after a
        re-analysis); the manifest follows."""
        with self._lock:
            old, new = self.settings.model_dump(), settings.model_dump()
            changed = {name for name in new if new[name] != old.get(name)}
            if self.counts()["chunks"] and changed - ANALYSIS_SETTINGS:
                raise RagkitError(f"{self.folder}: settings of an index with chunks are fixed")
            with self.db:
                self.db.execute(
                    "UPDATE state SET value = ? WHERE key = 'settings'",
                    (settings.model_dump_json(),),
                )
            self.settings = settings
            self._write_manifest()

    def remove_stale_files(self) -> None:
        """Delete FAISS files and BM25 folders of other generations (crash or superseded), and
        the BM25 and manifest scratch copies of other processes' writes that died, and the
        scratch database (and its journal) of a creation that was killed (under the writer lock
        no other process writes them)."""
        generation, layout = committed(self.db)
        keep = {*layout.files, self._sparse_path(generation).name}
        scratch = [".bm25-*.tmp", f".{MANIFEST_NAME}.*.tmp", *CREATION_SCRATCH]
        mine = f".{os.getpid()}."  # this process's threads may be writing theirs
        leftovers = [
            p for pattern in scratch for p in self.folder.glob(pattern) if mine not in p.name
        ]
        stale = [*self.folder.glob("vectors-*.faiss*"), *self.folder.glob("bm25-*"), *leftovers]
        for path in stale:
            if path.name in keep:
                continue
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)

    def write_near_duplicates(
        self, rows: Mapping[str, tuple[bytes, str | None]], removed: Iterable[str] = ()
    ) -> None:
        """Write signatures and groups (key → (signature, group key or None)) and drop the
        entries of ``removed`` keys."""
        near_duplicates.write(self.db, rows, removed)

    # -- writing -----------------------------------------------------------------------------
    def _rebuilt_index(self) -> faiss.Index:
        """A FAISS index rebuilt from the vectors stored in SQLite (kind chosen by size)."""
        total = self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        return dense.build_index(self.dimension, total, self.settings, self._stored_vectors)

    def _stored_vectors(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        return stored_vectors(self.db, self.dimension)

    def _next_vectors(
        self, removed: list[int], ids: list[int], vectors: np.ndarray
    ) -> DenseVectors:
        """The vectors of the next generation (SQLite already holds its rows): this
        generation's advanced (:func:`ragkit.search.dense.advance`), or rebuilt from SQLite when
        its kind changes, HNSW loses chunks, or they do not hold what SQLite held (checked
        before the rows changed, for vectors this store did not write: damage is not carried)."""
        total = self.vectors.ntotal - len(removed) + len(ids)
        advanced = None
        if self._trusted:
            advanced = dense.advance(self.vectors, total, self.settings, removed, ids, vectors)
        return DenseVectors.of(self._rebuilt_index()) if advanced is None else advanced

    def _check_vectors(self) -> None:
        """Compare vectors read from disk with the rows SQLite holds (once per store, inside
        the commit's transaction, before its changes); trusted from then on if they match."""
        if not self._trusted and (found := dense.mismatch(self.vectors, self._stored_vectors)):
            logger.warning("%s: %s; rebuilt from SQLite", ", ".join(self.layout.files), found)
            return
        self._trusted = True

    def commit(self, pending: list[PendingDocument], remove_keys: Iterable[str] = ()) -> int:
        """Replace/insert ``pending`` documents and delete ``remove_keys`` in one generation;
        on a full disk nothing is committed and one error says so (:mod:`.space`)."""
        index_bytes, before = self.vectors.ntotal * self.vectors.main.d * 4, self.generation

        def state() -> str:
            if self.generation == before:
                return f"nothing was committed: generation {before} is unchanged"
            return (  # committed, its manifest not rewritten
                f"generation {self.generation} was committed; once space is free, run `ragkit "
                f"doctor --index {self.folder} --repair`"
            )

        try:
            return self._commit(pending, remove_keys)
        except (OSError, RuntimeError, sqlite3.Error) as error:
            if not is_disk_full(error):
                raise
            with suppress(sqlite3.Error):  # give back what the write-ahead log took
                self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            raise disk_full(self.folder, commit_bytes(pending, index_bytes), state()) from error

    def _commit(self, pending: list[PendingDocument], remove_keys: Iterable[str]) -> int:
        replaced = [p.document.key for p in pending]
        removing = list(dict.fromkeys([*remove_keys, *replaced]))
        target = self.generation + 1
        written: Path | None = None
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self._check_vectors()
            rules = language_rules.read(self.db)
            had_documents = (
                rules is None
                and self.db.execute("SELECT 1 FROM documents LIMIT 1").fetchone() is not None
            )
            removed_ids = self._delete_documents(removing)
            new_ids, new_vectors = self._insert(pending)
            vectors = self._next_vectors(removed_ids, new_ids, new_vectors)
            layout = self.layout
            if vectors.main is not self.vectors.main:  # a new main index, an empty tail
                written = self.folder / vector_file(target)
                layout = Layout(
                    written.name, (), {written.name: write_vectors(vectors.main, written)}
                )
            elif new_ids:  # appended: this commit's vectors are one new tail segment
                written = self.folder / added_file(target)
                segment = dense.flat_index(np.asarray(new_ids), new_vectors)
                layout = layout.extended(written.name, write_vectors(segment, written))
            record(self.db, layout)
            if pending:
                used = tokenizers.current({p.document.language for p in pending}, self.settings)
                tokenizers.write(self.db, tokenizers.merged(tokenizers.read(self.db), used))
                language_rules.write(self.db, language_rules.after_commit(rules, had_documents))
            self.db.execute("UPDATE state SET value = ? WHERE key = 'generation'", (str(target),))
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:  # SQLite ends it itself on some errors (disk full)
                self.db.execute("ROLLBACK")
            if written is not None:
                written.unlink(missing_ok=True)
            raise
        self.generation, self.layout, self.vectors = target, layout, vectors
        self._trusted = True
        self.remove_stale_files()
        self._write_manifest()
        return target

    def reset_tokenizers(self) -> None:
        """Record today's tokenizers as the ones that cut every language's pieces (after
        :func:`ragkit.pipeline.reanalyze.reanalyze` re-cut them all)."""
        held = {language for _, language in self.languages()}
        now = tokenizers.current(held, self.settings)
        tokenizers.write(self.db, {language: [print_] for language, print_ in now.items()})

    def reset_language_rules(self) -> None:
        """Record today's language rules as those that decided every document (after
        :func:`ragkit.pipeline.reanalyze.reanalyze` decided them all again)."""
        language_rules.write(self.db, RULES_VERSION)

    def _delete_documents(self, keys: list[str]) -> list[int]:
        removed: list[int] = []
        for key in keys:
            removed.extend(
                row[0]
                for row in self.db.execute(
                    "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id "
                    "WHERE d.key = ?",
                    (key,),
                )
            )
            self.db.execute("DELETE FROM documents WHERE key = ?", (key,))
        return removed

    def _insert(self, pending: list[PendingDocument]) -> tuple[list[int], np.ndarray]:
        ids: list[int] = []
        vectors: list[np.ndarray] = []
        for item in pending:
            doc = item.document
            document_id = self.db.execute(
                "INSERT INTO documents(key, source, external_id, title, content_hash, script, "
                "language, metadata, text, chunking, language_confidence, language_method) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    doc.key,
                    doc.source,
                    doc.external_id,
                    doc.title,
                    doc.content_hash,
                    doc.script,
                    doc.language,
                    json.dumps(doc.metadata, ensure_ascii=False),
                    doc.text,
                    json.dumps(item.chunking.as_dict(), ensure_ascii=False),
                    doc.language_confidence,
                    doc.language_method,
                ),
            ).lastrowid
            rows = zip(item.chunks, item.vectors, item.match_texts, item.terms, strict=True)
            for chunk, vector, match_text, terms in rows:
                chunk_id = self.db.execute(
                    "INSERT INTO chunks(document_id, start, end, token_count, chunker, text, "
                    "match_text, terms, vector) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        document_id,
                        chunk.start,
                        chunk.end,
                        chunk.token_count,
                        chunk.chunker,
                        chunk.text,
                        match_text,
                        terms,
                        np.asarray(vector, dtype=np.float32).tobytes(),
                    ),
                ).lastrowid
                assert chunk_id is not None  # sqlite3 sets it after every INSERT
                ids.append(chunk_id)
                vectors.append(vector)
        matrix = (
            np.vstack(vectors).astype(np.float32)
            if vectors
            else np.zeros((0, self.dimension), np.float32)
        )
        return ids, matrix

    def log_run(self, started: str, summary: dict) -> None:
        self.db.execute(
            "INSERT INTO runs(started, summary) VALUES (?, ?)",
            (started, json.dumps(summary, ensure_ascii=False)),
        )

    @names_damage
    def rename_documents(self, renames: Mapping[str, tuple[str, str]]) -> int:
        """Give stored documents new keys and sources (``renames``: old key → (new key, new
        source)) in one transaction, keeping their chunks, vectors and BM25 terms: a file that
        was moved, or a key written before keys were absolute. Returns how many were renamed.

        Example:
            >>> store.rename_documents({"docs/a.txt": ("/home/me/docs/a.txt",  # doctest: +SKIP
            ...                                        "/home/me/docs/a.txt")})
            1
        """
        if not renames:
            return 0
        rows = [(key, source, old) for old, (key, source) in renames.items()]
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                cursor = self.db.executemany(
                    "UPDATE documents SET key = ?, source = ? WHERE key = ?", rows
                )
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
        return cursor.rowcount
