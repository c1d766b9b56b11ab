"""``ragkit doctor`` of an index folder: verify it and rebuild its derived structures from SQLite.

Checks, in order: SQLite opens and passes ``quick_check``; the committed generation has its
FAISS files (a main index and tail segments, :mod:`ragkit.store.folder.vectors`); ``MANIFEST.json``
names that generation and lists each of them, and its checksums match the files; FAISS ids,
SQLite chunk ids and BM25 ids are the same set (BM25 may be absent — it is rebuilt on the first
sparse search) and each FAISS vector is the one SQLite stores for its chunk; no chunk is stored
twice; no chunk lacks its document; no files of other generations are left over; every
document's metadata is JSON to SQLite (not ``NaN``: :mod:`ragkit.store.folder.metadata`). SQLite is
the source of truth: ``repair`` (under the writer lock) drops non-finite metadata values,
rewrites the FAISS files of the committed generation as one main index and its BM25 folder from
the stored vectors and terms, removes leftovers and rewrites the manifest.

Example:
    >>> import tempfile
    >>> from ragkit.config import Settings
    >>> folder = Path(tempfile.mkdtemp()) / "idx"
    >>> FolderStore.create(folder, Settings(embedding_model="m"), dimension=4).close()
    >>> diagnose(folder).healthy
    True
    >>> (folder / "vectors-0.faiss").write_bytes(b"junk") and diagnose(folder).healthy
    False
    >>> repair(folder).healthy
    True
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import numpy as np

from ragkit.config import Settings
from ragkit.errors import IndexDamagedError, IndexNotFoundError, RagkitError
from ragkit.search import dense
from ragkit.search.sparse import SparseIndex
from ragkit.store import language_rules, tokenizers
from ragkit.store.diagnosis import Diagnosis
from ragkit.store.folder import metadata, vectors
from ragkit.store.folder.lock import WriteLock
from ragkit.store.folder.manifest import (
    MANIFEST_NAME,
    read_manifest,
    sparse_folder,
    vector_file,
    verify_checksums,
)
from ragkit.store.folder.schema import DB_NAME, connect, connect_read_only
from ragkit.store.folder.store import CREATION_SCRATCH, FolderStore, stored_vectors

FOLDER_REPAIR = "rebuild it from SQLite"
FOLDER_CHECKS = "checksums and SQLite ↔ FAISS ↔ BM25 ids agree"


def _chunk_ids(db: sqlite3.Connection) -> np.ndarray:
    rows = db.execute("SELECT id FROM chunks ORDER BY id")
    return np.fromiter((r[0] for r in rows), dtype=np.int64)


def _check_sqlite(db: sqlite3.Connection, found: Diagnosis) -> None:
    verdict = db.execute("PRAGMA quick_check").fetchone()[0]
    if verdict != "ok":
        found.problems.append(f"{DB_NAME}: quick_check says {verdict!r} (restore from a backup)")
    duplicates = db.execute(
        "SELECT COUNT(*) FROM (SELECT document_id, start, end FROM chunks "
        "GROUP BY document_id, start, end HAVING COUNT(*) > 1)"
    ).fetchone()[0]
    if duplicates:
        found.problems.append(f"{DB_NAME}: {duplicates} chunk spans stored more than once")
    orphans = db.execute(
        "SELECT COUNT(*) FROM chunks WHERE document_id NOT IN (SELECT id FROM documents)"
    ).fetchone()[0]
    if orphans:
        found.problems.append(f"{DB_NAME}: {orphans} chunks without their document")
    empty = db.execute(
        "SELECT COUNT(*) FROM documents WHERE id NOT IN (SELECT document_id FROM chunks)"
    ).fetchone()[0]
    if empty:
        found.notes.append(f"{DB_NAME}: {empty} documents without chunks")
    if unreadable := metadata.unreadable_rows(db):
        found.problems.append(metadata.problem(unreadable))
        found.repair = "drop those metadata values and rebuild the rest from SQLite"


def _check_vectors(
    folder: Path, db: sqlite3.Connection, layout: vectors.Layout, found: Diagnosis
) -> None:
    """The committed FAISS files hold the ids and vectors SQLite stores (read in ``db``'s
    snapshot)."""
    dimension = int(db.execute("SELECT value FROM state WHERE key = 'dimension'").fetchone()[0])
    try:
        index = vectors.load(folder, layout, "--repair rebuilds it from SQLite")
    except RagkitError as error:
        found.problems.append(str(error).replace(str(folder) + "/", "")[:200])
        return
    if differs := dense.mismatch(index, lambda: stored_vectors(db, dimension)):
        found.problems.append(f"{', '.join(layout.files)}: {differs}")


def _check_derived(folder: Path, ids: np.ndarray, found: Diagnosis) -> None:
    sparse = folder / sparse_folder(found.generation)
    if not sparse.is_dir():
        found.notes.append(f"{sparse.name}: absent; the first search rebuilds it from SQLite")
        return
    try:
        sparse_ids = np.sort(SparseIndex.load(sparse).chunk_ids)
    except RagkitError as error:
        found.problems.append(str(error).replace(str(folder) + "/", ""))
        return
    if not np.array_equal(sparse_ids, ids):
        found.problems.append(f"{sparse.name}: chunk ids differ from SQLite")


def _check_files(folder: Path, layout: vectors.Layout, found: Diagnosis) -> None:
    try:
        manifest = read_manifest(folder)
    except RagkitError as error:
        found.problems.append(str(error))
        return
    if manifest.get("generation") != found.generation:
        found.problems.append(
            f"{MANIFEST_NAME}: records generation {manifest.get('generation')}, SQLite "
            f"committed {found.generation} (a crash before the manifest was rewritten)"
        )
        return
    reported = {problem.split(":", 1)[0] for problem in found.problems}
    found.problems += [
        p for p in verify_checksums(folder, manifest) if p.split(":")[0] not in reported
    ]
    unlisted = [name for name in layout.files if name not in manifest["files"]]
    if unlisted:
        found.problems.append(f"{', '.join(unlisted)}: not listed in {MANIFEST_NAME}")
    keep = {*layout.files, sparse_folder(found.generation)}
    leftovers = [
        p.name
        for pattern in (
            "vectors-*.faiss*",
            "bm25-*",
            ".bm25-*.tmp",
            f".{MANIFEST_NAME}.*",
            *CREATION_SCRATCH,
        )
        for p in folder.glob(pattern)
        if p.name not in keep
    ]
    if leftovers:
        found.notes.append(
            f"{len(leftovers)} leftover files of other generations or crashed writes "
            f"({', '.join(sorted(leftovers)[:3])}…); the next ingest or --repair removes them"
        )


def diagnose(folder: str | Path) -> Diagnosis:
    """Check ``folder`` without changing it."""
    folder = Path(folder)
    found = Diagnosis(folder, repair=FOLDER_REPAIR, checked=FOLDER_CHECKS)
    if not (folder / DB_NAME).is_file():
        raise IndexNotFoundError(f"{folder}: no ragkit index here ({DB_NAME} missing)")
    db = connect_read_only(folder)
    try:
        db.execute("BEGIN")  # one snapshot for every count and id below
        try:
            found.generation, layout = vectors.committed(db)
        except RagkitError as error:
            raise IndexDamagedError(
                f"{folder / DB_NAME}: no committed generation; index is damaged"
            ) from error
        _check_sqlite(db, found)
        settings = db.execute("SELECT value FROM state WHERE key = 'settings'").fetchone()
        if settings is not None:
            found.notes += tokenizers.notes(folder, db, Settings.from_index(settings[0]))
        found.notes += language_rules.notes(folder, db)
        ids = _chunk_ids(db)
        documents = db.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
        found.counts = {"documents": documents, "chunks": len(ids)}
        _check_vectors(folder, db, layout, found)
        db.execute("COMMIT")
    except sqlite3.DatabaseError as error:
        raise IndexDamagedError(
            f"{folder / DB_NAME}: unreadable ({error}); restore a backup"
        ) from error
    finally:
        db.close()
    _check_derived(folder, ids, found)
    _check_files(folder, layout, found)
    return found


def repair(folder: str | Path, wait: bool | float = True) -> Diagnosis:
    """Rebuild FAISS and BM25 of the committed generation from SQLite; then diagnose again."""
    folder = Path(folder)
    before = diagnose(folder)
    with WriteLock(folder, wait):
        db = connect(folder)
        try:
            generation = int(
                db.execute("SELECT value FROM state WHERE key='generation'").fetchone()[0]
            )
            settings = Settings.from_index(
                db.execute("SELECT value FROM state WHERE key='settings'").fetchone()[0]
            )
            dimension = int(
                db.execute("SELECT value FROM state WHERE key='dimension'").fetchone()[0]
            )
            db.execute("DELETE FROM chunks WHERE document_id NOT IN (SELECT id FROM documents)")
            made_json = metadata.repair(db)
            total = db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
            index = dense.build_index(
                dimension, total, settings, lambda: stored_vectors(db, dimension)
            )
            # One main file for the generation; SQLite names it once it is whole (a crash
            # before leaves the files it named, which may be damaged but are no worse).
            target = folder / vector_file(generation)
            checksum = vectors.write(index, target)
            with db:
                vectors.record(db, vectors.Layout(target.name, (), {target.name: checksum}))
        finally:
            db.close()
        store = FolderStore.open(folder)
        try:
            shutil.rmtree(folder / sparse_folder(generation), ignore_errors=True)
            store.build_sparse()  # saves bm25-<G> and rewrites the manifest (lock held)
            store.remove_stale_files()
        finally:
            store.close()
    after = diagnose(folder)
    after.repaired = [
        f"rebuilt {target.name} ({total} vectors) and {sparse_folder(generation)} from SQLite",
        *made_json,
        *(f"was: {problem}" for problem in before.problems),
    ]
    return after
