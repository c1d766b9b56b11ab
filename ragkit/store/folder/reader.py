"""The index folder read: the last committed generation followed, searched and listed.

:class:`FolderReader` opens an index folder (:mod:`ragkit.store.folder.store` explains its
layout and how a generation is committed) and answers everything a search, ``ragkit
documents`` or ``ragkit export`` asks of it: each thread reads SQLite through its own
connection, and every read follows the last committed generation (:meth:`FolderReader.refresh`:
the FAISS files SQLite names for it, its settings). BM25 is derived from the terms in SQLite:
the first sparse search of a generation whose ``bm25-<G>`` folder is missing rebuilds it and,
while no writer works, saves it. :class:`ragkit.store.folder.FolderStore` adds the writes.

Example:
    >>> import tempfile
    >>> from ragkit.config import Settings
    >>> from ragkit.store.folder import FolderStore
    >>> folder = Path(tempfile.mkdtemp()) / "idx"
    >>> FolderStore.create(folder, Settings(), dimension=4).close()
    >>> reader = FolderReader.open(folder)
    >>> reader.generation, reader.counts()
    (0, {'documents': 0, 'chunks': 0, 'vectors': 0})
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import threading
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Self

import numpy as np

from ragkit.chunking import ChunkingRecord
from ragkit.config import Settings
from ragkit.errors import IndexDamagedError, IndexNotFoundError, RagkitError
from ragkit.normalize.detect import LanguageGuess
from ragkit.paths import file_sha256
from ragkit.search import dense
from ragkit.search.dense import DenseVectors
from ragkit.search.sparse import SparseIndex
from ragkit.store import catalog, tokenizers
from ragkit.store.filters import check_known, where_clause
from ragkit.store.folder import near_duplicates, stored
from ragkit.store.folder.damage import damaged, names_damage
from ragkit.store.folder.lock import if_unlocked
from ragkit.store.folder.manifest import write_manifest
from ragkit.store.folder.schema import DB_NAME, connect, migrate
from ragkit.store.folder.vectors import Layout, committed, load
from ragkit.store.records import DocumentEntry, PendingDocument, StoredChunk

__all__ = ["FolderReader", "check_folder"]

# The largest |score| a search accepts: inner products of unit vectors are cosines (≤ 1); the
# margin covers approximate (PQ) scores.
_MAX_SCORE = 1.5

TEXT_BATCH = 500  # keys per query reading documents' texts (SQLite binds each)


def check_folder(folder: Path) -> None:
    """Refuse an index path that names a file: an index is a folder."""
    if folder.exists() and not folder.is_dir():
        raise RagkitError(
            f"{folder}: a file, not an index folder; give --index a folder (a new one is "
            "created when missing)"
        )


class FolderReader:
    """One index folder, read. Open with :meth:`open`; any number of readers and reading
    threads (:class:`ragkit.store.folder.FolderStore`, its subclass, writes).

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
    def open(cls, folder: Path) -> Self:
        """Open the last committed generation of the index at ``folder``; a damaged database
        or FAISS file is a :class:`RagkitError` naming the file and the fix."""
        check_folder(folder)
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
        """Each document's MinHash signature by key (:mod:`ragkit.store.folder.near_duplicates`)."""
        return near_duplicates.signatures(self.db)

    @names_damage
    def near_duplicate_groups(self, keys: Iterable[str] | None = None) -> dict[str, str]:
        """Key → near-duplicate group key of the documents ``keys`` (all when None) in one."""
        return near_duplicates.groups(self.db, keys)

    def document_texts(self) -> Iterator[str]:
        """The original text of every stored document."""
        return (text for (text,) in self.db.execute("SELECT text FROM documents"))

    @names_damage
    def list_documents(
        self, pattern: str | None = None, filters: Mapping[str, Any] | None = None
    ) -> list[DocumentEntry]:
        """The documents whose key or source matches ``pattern`` (all when None) and that
        match ``filters``, by key (:func:`ragkit.store.catalog.list_documents`)."""
        return catalog.list_documents(self.db, pattern, filters)

    @names_damage
    def texts_of(self, keys: Sequence[str]) -> dict[str, str]:
        """The original text of each stored document of ``keys`` (absent ones left out)."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, str] = {}
        for start in range(0, len(wanted), TEXT_BATCH):
            batch = wanted[start : start + TEXT_BATCH]
            marks = ",".join("?" * len(batch))
            rows = self.db.execute(f"SELECT key, text FROM documents WHERE key IN ({marks})", batch)
            found.update(rows)
        return found

    def chunk_records(self, vectors: bool = False) -> Iterator[dict[str, Any]]:
        """Every chunk as ``ragkit export`` writes it
        (:func:`ragkit.store.catalog.chunk_records`)."""
        return catalog.chunk_records(self.db, vectors)

    @names_damage
    def stored_documents(self, keys: Iterable[str]) -> list[PendingDocument]:
        """The documents ``keys`` read back whole (:mod:`ragkit.store.folder.stored`)."""
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
    def term_idf(self, terms: list[str]) -> list[float]:
        """The BM25 IDF of each of ``terms`` (:meth:`ragkit.search.sparse.SparseIndex.idf`)."""
        self.refresh()
        return self.ensure_sparse().idf(terms)

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
        """Ids of chunks whose document matches ``filters`` (:mod:`ragkit.store.filters`, as
        SQL over the documents table: :func:`~ragkit.store.filters.where_clause`)."""
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

    # -- derived data ------------------------------------------------------------------------
    def stale_tokenizers(self) -> tokenizers.Record:
        """Languages whose stored sparse pieces another tokenizer than today's cut
        (:mod:`ragkit.store.tokenizers`); empty when all match, or nothing was recorded."""
        return tokenizers.stale_in(self.db, self.settings)

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
