"""The index folder: SQLite metadata + FAISS vectors + BM25 terms, committed by generation.

Layout of an index folder::

    ragkit.sqlite        documents, chunks (offsets, text, matching key, terms, vector),
                         settings, run log (:mod:`ragkit.store.schema`)
    vectors-<B>.faiss    the main FAISS index, written by the commit of generation B
                         (:mod:`ragkit.search.dense`)
    vectors-<G>-added.faiss  the vectors generation G's commit appended beside it (a tail
                         segment); SQLite names the files of the committed generation
                         (:mod:`ragkit.store.vectors`)
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
    >>> store = Store.create(Path(tempfile.mkdtemp()) / "idx", Settings(), dimension=4)
    >>> store.generation
    0
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import faiss
import numpy as np

from ragkit.chunking import ChunkingRecord
from ragkit.config import ANALYSIS_SETTINGS, Settings
from ragkit.errors import IndexDamagedError, IndexExistsError, IndexNotFoundError, RagkitError
from ragkit.normalize.detect import RULES_VERSION, LanguageGuess
from ragkit.paths import file_sha256
from ragkit.search import dense
from ragkit.search.dense import DenseVectors
from ragkit.search.sparse import SparseIndex
from ragkit.store import catalog, language_rules, near_duplicates, stored, tokenizers
from ragkit.store.damage import damaged, names_damage
from ragkit.store.filters import check_known, where_clause
from ragkit.store.lock import WriteLock, if_unlocked
from ragkit.store.manifest import MANIFEST_NAME, vector_file, write_manifest
from ragkit.store.records import DocumentEntry, PendingDocument, StoredChunk
from ragkit.store.schema import DB_NAME, connect, create_tables, migrate
from ragkit.store.space import commit_bytes, disk_full, is_disk_full
from ragkit.store.vectors import Layout, added_file, committed, load, record
from ragkit.store.vectors import write as write_vectors

__all__ = [
    "DB_NAME",
    "MANIFEST_NAME",
    "IndexExistsError",
    "PendingDocument",
    "Store",
    "StoredChunk",
    "stored_vectors",
]

logger = logging.getLogger(__name__)


# The scratch database a creation builds (and SQLite's journal of it) before renaming it into
# place; left behind when the creating process is killed.
# The largest |score| a search accepts: inner products of unit vectors are cosines (≤ 1); the
# margin covers approximate (PQ) scores.
_MAX_SCORE = 1.5
CREATION_SCRATCH = (f".{DB_NAME}.*.tmp", f".{DB_NAME}.*.tmp-journal")


def _check_folder(folder: Path) -> None:
    """Refuse an index path that names a file: an index is a folder."""
    if folder.exists() and not folder.is_dir():
        raise RagkitError(
            f"{folder}: a file, not an index folder; give --index a folder (a new one is "
            "created when missing)"
        )


def stored_vectors(
    db: sqlite3.Connection, dimension: int, batch: int = 20_000
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The (chunk ids, vectors) stored in SQLite, in id order, ``batch`` rows at a time."""
    cursor = db.execute("SELECT id, vector FROM chunks ORDER BY id")
    while rows := cursor.fetchmany(batch):
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
        yield ids, vectors.reshape(len(rows), dimension)


class Store:
    """One index folder. Open with :meth:`open` or :meth:`create`; a single writer at a time
    (:class:`ragkit.store.lock.WriteLock`), any number of readers and reading threads.

    Each thread gets its own SQLite connection (:attr:`db`); searches follow the last
    committed generation (:meth:`refresh`).
    """

    def __init__(self, folder: Path, connection: sqlite3.Connection) -> None:
        self.folder = folder
        self._local = threading.local()
        self._local.db = connection
        self._connections = [connection]
        self._lock = threading.RLock()
        self.settings = Settings.from_index(self._state("settings"))
        self.dimension = int(self._state("dimension"))
        self.generation, self.layout = committed(self.db)
        self.vectors = self._read_vectors(self.layout)
        self._trusted = False  # whether self.vectors are known to match SQLite's rows
        self._checksums: dict[str, str] = {}  # of FAISS files the layout names no checksum of
        self._sparse: SparseIndex | None = None
        self._sparse_generation = -1
        self._languages: tuple[int, dict[tuple[str, str], int]] | None = None

    @property
    def db(self) -> sqlite3.Connection:
        """This thread's connection to ``ragkit.sqlite`` (opened on first use)."""
        connection = getattr(self._local, "db", None)
        if connection is None:
            connection = self._local.db = connect(self.folder)
            with self._lock:
                self._connections.append(connection)
        return connection

    @property
    def location(self) -> str:
        """The index folder, as messages name it."""
        return str(self.folder)

    @contextmanager
    def writing(self, wait: bool | float = True) -> Iterator[None]:
        """Hold the folder's writer lock (``wait``: :class:`ragkit.store.lock.WriteLock`), then
        follow the last commit and clear the files of writes that died. A full disk met by the
        writes in the block (BM25, the run log…) is one error (:mod:`.space`)."""
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

    @names_damage
    def committed_generation(self) -> int:
        """The generation the last commit (of any writer) made."""
        return int(self._state("generation"))

    @names_damage
    def refresh(self) -> None:
        """Follow the last committed generation when another process committed since (with
        the settings it was committed with: the first ingest of an ``auto`` index chose its
        model)."""
        with self._lock:
            while (latest := committed(self.db))[0] != self.generation:
                try:
                    vectors = self._read_vectors(latest[1], (self.layout, self.vectors))
                except RagkitError:  # superseded and removed meanwhile: read again
                    if int(self._state("generation")) == latest[0]:
                        raise
                    continue
                (self.generation, self.layout), self.vectors = latest, vectors
                self._trusted = False
                self.settings = Settings.from_index(self._state("settings"))

    # -- opening -----------------------------------------------------------------------------
    @classmethod
    def create(cls, folder: Path, settings: Settings, dimension: int) -> Store:
        """Create an empty index at ``folder``; raises :class:`IndexExistsError` when it
        already holds one (another process may have created it a moment ago).

        Creation holds the writer lock, and the database appears complete or not at all: it
        is built under a temporary name and renamed into place, so a reader never sees an
        index without tables and a crash mid-creation leaves nothing to repair.
        """
        _check_folder(folder)
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

    @classmethod
    def open(cls, folder: Path) -> Store:
        """Open the last committed generation of the index at ``folder``; a damaged database
        or FAISS file is a :class:`RagkitError` naming the file and the fix."""
        _check_folder(folder)
        if not (folder / DB_NAME).exists():
            raise IndexNotFoundError(
                f"{folder}: no ragkit index here ({DB_NAME} missing); "
                f"create one with `ragkit ingest PATH --index {folder}`"
            )
        try:
            connection = connect(folder)
            migrate(connection)
            return cls(folder, connection)
        except sqlite3.DatabaseError as error:
            raise damaged(folder, error) from error

    def _state(self, key: str) -> str:
        row = self.db.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise IndexDamagedError(
                f"{self.folder / DB_NAME}: state {key!r} missing; index is damaged"
            )
        return row[0]

    def _read_vectors(
        self, layout: Layout, known: tuple[Layout, DenseVectors] | None = None
    ) -> DenseVectors:
        """The vectors ``layout`` names (of them, ``known`` lends what it holds); a missing or
        damaged file is a :class:`RagkitError`."""
        repair = f"`ragkit doctor --index {self.folder} --repair` rebuilds it from SQLite"
        vectors = load(self.folder, layout, repair, known)
        if vectors.main.d != self.dimension:
            raise IndexDamagedError(
                f"{self.folder / layout.main}: {vectors.main.d}-d vectors in a "
                f"{self.dimension}-d index (damaged or replaced); {repair}"
            )
        return vectors

    def _sane(self, scored: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """``scored`` when every score is one normalized vectors can give (a cosine, with room
        for approximate indexes); a damaged vectors file gives absurd ones (1e27, NaN)."""
        if any(not -_MAX_SCORE <= score <= _MAX_SCORE for _, score in scored):
            worst = next(s for _, s in scored if not -_MAX_SCORE <= s <= _MAX_SCORE)
            raise IndexDamagedError(
                f"{self.folder}: the stored vectors give a score of {worst:.3g}, which "
                "normalized vectors cannot (a damaged vectors file or chunk vector); "
                f"`ragkit doctor --index {self.folder} --repair` rebuilds them from SQLite"
            )
        return scored

    def _sparse_path(self, generation: int) -> Path:
        return self.folder / f"bm25-{generation}"

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

    @names_damage
    def ensure_sparse(self) -> SparseIndex:
        """The BM25 index of the committed generation, rebuilt from SQLite when missing."""
        with self._lock:  # one rebuild, however many threads search at once
            while self._sparse is None or self._sparse_generation != self.generation:
                generation, path = self.generation, self._sparse_path(self.generation)
                try:
                    sparse = SparseIndex.load(path) if path.is_dir() else self.build_sparse()
                except RagkitError:  # removed as superseded while loading: follow the writer
                    self.refresh()
                    if self.generation == generation:
                        raise
                    continue
                self._sparse, self._sparse_generation = sparse, generation
            return self._sparse

    def build_sparse(self) -> SparseIndex:
        """Rebuild BM25 from the terms stored in SQLite and save it for this generation.

        The rows are read in one snapshot; when another writer committed since this store's
        generation, the index is returned but not saved (it belongs to no file's generation),
        and so it is when another thread or process saved this generation's first (a saved
        BM25 folder is never replaced under its readers).
        """
        self.db.execute("BEGIN")
        try:
            committed = int(self._state("generation"))
            rows = self.db.execute("SELECT id, terms FROM chunks ORDER BY id")
            index = SparseIndex.build((int(i), terms) for i, terms in rows)  # one at a time
        finally:
            self.db.execute("COMMIT")
        with if_unlocked(self.folder) as free:  # a reader saves only while no writer works
            if not free or not committed == self.generation == int(self._state("generation")):
                return index
            target = self._sparse_path(self.generation)
            if target.is_dir():
                return index
            scratch = self.folder / f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp"
            try:
                index.save(scratch)
                os.replace(scratch, target)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
            self._sparse, self._sparse_generation = index, self.generation
            self._write_manifest()
        return index

    # -- reading -----------------------------------------------------------------------------
    def document_hashes(self) -> dict[str, str]:
        return dict(self.db.execute("SELECT key, content_hash FROM documents"))

    def document_sources(self) -> dict[str, str]:
        """Each stored document's key and the file it came from."""
        return dict(self.db.execute("SELECT key, source FROM documents"))

    def sources(self) -> set[str]:
        return {row[0] for row in self.db.execute("SELECT DISTINCT source FROM documents")}

    @names_damage
    def signatures(self) -> dict[str, bytes]:
        """Each document's MinHash signature by key (:mod:`ragkit.store.near_duplicates`)."""
        return near_duplicates.signatures(self.db)

    @names_damage
    def near_duplicate_groups(self, keys: Iterable[str] | None = None) -> dict[str, str]:
        """Key → near-duplicate group key of the documents ``keys`` (all when None) in one."""
        return near_duplicates.groups(self.db, keys)

    def write_near_duplicates(
        self, rows: Mapping[str, tuple[bytes, str | None]], removed: Iterable[str] = ()
    ) -> None:
        """Write signatures and groups (key → (signature, group key or None)) and drop the
        entries of ``removed`` keys."""
        near_duplicates.write(self.db, rows, removed)

    def document_texts(self) -> Iterator[str]:
        """The original text of every stored document."""
        return (text for (text,) in self.db.execute("SELECT text FROM documents"))

    @names_damage
    def list_documents(self, pattern: str | None = None) -> list[DocumentEntry]:
        """The documents whose key or source matches ``pattern`` (all when None), by key
        (:func:`ragkit.store.catalog.list_documents`)."""
        return catalog.list_documents(self.db, pattern)

    def chunk_records(self, vectors: bool = False) -> Iterator[dict[str, Any]]:
        """Every chunk as ``ragkit export`` writes it (:func:`ragkit.store.catalog.chunk_records`)."""
        return catalog.chunk_records(self.db, vectors)

    @names_damage
    def stored_documents(self, keys: Iterable[str]) -> list[PendingDocument]:
        """The documents ``keys`` read back whole (:mod:`ragkit.store.stored`)."""
        return stored.stored_documents(self.db, self.dimension, list(keys))

    @names_damage
    def chunker_counts(self) -> dict[str, int]:
        """How many documents each chunker was chosen for (``unrecorded``: older indexes)."""
        rows = self.db.execute(
            "SELECT COALESCE(json_extract(chunking, '$.chosen'), 'unrecorded'), COUNT(*) "
            "FROM documents GROUP BY 1 ORDER BY 2 DESC, 1"
        )
        return {str(name): int(count) for name, count in rows}

    @names_damage
    def chunking(self, key: str) -> ChunkingRecord | None:
        """The chunking record of the document ``key`` (None when no such document)."""
        row = self.db.execute("SELECT chunking FROM documents WHERE key = ?", (key,)).fetchone()
        return None if row is None else ChunkingRecord.from_dict(json.loads(row[0]))

    @names_damage
    def language_decision(self, key: str) -> LanguageGuess | None:
        """How the language of the document ``key`` was decided (None: no such document)."""
        row = self.db.execute(
            "SELECT language, script, language_confidence, language_method FROM documents "
            "WHERE key = ?",
            (key,),
        ).fetchone()
        if row is None:
            return None
        language, script, confidence, method = row
        return LanguageGuess(language, script, float(confidence), method or "default")

    @names_damage
    def languages(self) -> dict[tuple[str, str], int]:
        """Characters of text per ``(script, language)`` the index holds, most first (read
        once per generation)."""
        self.refresh()
        cached = self._languages
        if cached is None or cached[0] != self.generation:
            rows = self.db.execute(
                "SELECT script, language, SUM(LENGTH(text)) FROM documents "
                "GROUP BY script, language ORDER BY 3 DESC, 2"
            )
            held = {(str(script), str(language)): int(chars) for script, language, chars in rows}
            cached = self._languages = (self.generation, held)
        return cached[1]

    @names_damage
    def counts(self) -> dict[str, int]:
        documents = self.db.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
        chunks = self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
        return {"documents": documents, "chunks": chunks, "vectors": int(self.vectors.ntotal)}

    @names_damage
    def search_vectors(
        self, query: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """Chunk ids and inner-product scores of the ``k`` nearest vectors (among ``allowed``)."""
        self.refresh()
        found = dense.search(self.vectors, query, k, self.settings, allowed, self.vectors_by_id)
        return self._sane(found)

    @names_damage
    def search_terms(
        self,
        terms: list[str],
        k: int,
        allowed: np.ndarray | None = None,
        include: Collection[int] = (),
    ) -> list[tuple[int, float]]:
        """Chunk ids and BM25 scores of the ``k`` best matches of ``terms``, plus the scores
        of the ``include`` chunk ids (:meth:`ragkit.search.sparse.SparseIndex.search`)."""
        self.refresh()
        return self.ensure_sparse().search(terms, k, allowed, include)

    @names_damage
    def score_vectors(self, query: np.ndarray, ids: list[int]) -> list[tuple[int, float]]:
        """Exact inner products of ``query`` with the stored vectors of the chunks ``ids``."""
        vectors = self.vectors_by_id(ids) if ids else {}
        return self._sane([(i, float(vectors[i] @ query)) for i in ids if i in vectors])

    @names_damage
    def vectors_by_id(self, ids: list[int]) -> dict[int, np.ndarray]:
        """The stored vectors of the chunks ``ids`` (ids no longer stored are left out)."""
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(f"SELECT id, vector FROM chunks WHERE id IN ({marks})", ids)
        return {int(i): np.frombuffer(blob, dtype=np.float32) for i, blob in rows}

    @names_damage
    def terms_by_id(self, ids: list[int]) -> dict[int, list[str]]:
        """The stored sparse terms of the chunks ``ids`` (ids no longer stored are left out)."""
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(f"SELECT id, terms FROM chunks WHERE id IN ({marks})", ids)
        return {int(i): str(terms).split() for i, terms in rows}

    @names_damage
    def filtered_chunk_ids(self, filters: dict[str, Any]) -> np.ndarray:
        """Ids of chunks whose document matches every filter (a value, or a list of values
        any of which matches; :mod:`ragkit.store.filters`).

        ``language`` and ``source`` (a glob, e.g. ``"docs/*.md"``) are columns; any other key
        is looked up in the document's metadata.
        """
        where, values = where_clause(filters)
        rows = self.db.execute(
            f"SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id WHERE {where}",
            values,
        )
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64)
        if not len(ids):  # nothing matched: a mistyped key should say so, not return nothing
            fields = self.db.execute(
                "SELECT DISTINCT m.key FROM documents d, json_each(d.metadata) m"
            )
            check_known(filters, {str(field) for (field,) in fields})
        return ids

    @names_damage
    def chunks_by_id(self, ids: Iterable[int]) -> dict[int, StoredChunk]:
        wanted = list(ids)
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        rows = self.db.execute(
            "SELECT c.id, c.text, c.start, c.end, d.key, d.external_id, d.source, d.title, "
            f"d.language, d.metadata FROM chunks c JOIN documents d ON d.id = c.document_id "
            f"WHERE c.id IN ({marks})",
            wanted,
        ).fetchall()
        return {row[0]: StoredChunk.from_row(row) for row in rows}

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

    def stale_tokenizers(self) -> tokenizers.Record:
        """Languages whose stored sparse pieces another tokenizer than today's cut
        (:mod:`ragkit.store.tokenizers`); empty when all match, or nothing was recorded."""
        return tokenizers.stale_in(self.db, self.settings)

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

    def _write_manifest(self) -> None:
        write_manifest(
            self.folder,
            self.generation,
            self.dimension,
            self.settings.embedding_model,
            self.counts(),
            self._vector_checksums(),
        )

    def _vector_checksums(self) -> dict[str, str]:
        """The checksum of each FAISS file of this generation: taken when it was written
        (stored with the layout), or hashed once for an index written before layouts were."""
        sums = {}
        for name in self.layout.files:
            if name not in self.layout.checksums and name not in self._checksums:
                self._checksums[name] = file_sha256(self.folder / name)
            sums[name] = self.layout.checksums.get(name) or self._checksums[name]
        return sums

    def close(self) -> None:
        with self._lock:
            for connection in self._connections:
                connection.close()
            self._connections.clear()
            self._local = threading.local()

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
