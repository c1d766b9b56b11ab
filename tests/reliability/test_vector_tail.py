"""A commit that only adds writes one small tail segment beside the main FAISS index instead of
rewriting it; SQLite names the files of each generation in the committing transaction (issue 24,
item 15). Crash safety and damage checks hold for the new files: a crash between writing a
segment and the commit leaves the old generation intact, and doctor finds a damaged, missing or
unlisted segment."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from ragkit.chunking import Chunk
from ragkit.config import Settings
from ragkit.documents import Document
from ragkit.paths import file_sha256
from ragkit.search import dense
from ragkit.store import FolderStore, PendingDocument
from ragkit.store.folder.doctor import diagnose, repair
from ragkit.store.folder.manifest import read_manifest, write_manifest
from ragkit.store.folder.vectors import committed

DIMENSION = 8
# A tail of up to half the main index, at most 30 vectors.
TAIL = {"dense_tail_fraction": 0.5, "dense_tail_max": 30, "embedding_model": "m"}


def _vector(n: int) -> np.ndarray:
    vector = np.random.default_rng(n).standard_normal((1, DIMENSION)).astype(np.float32)
    return vector / np.linalg.norm(vector)


def _pending(numbers: range, salt: int = 0) -> list[PendingDocument]:
    documents = []
    for n in numbers:
        text = f"document {n} {salt}"
        document = Document(key=f"/d/{n}", source="/d", text=text, content_hash=text, blocks=[])
        chunk = Chunk(text=text, start=0, end=len(text), token_count=3, chunker="fixed")
        documents.append(PendingDocument(document, [chunk], _vector(n + salt), [text], ["doc"]))
    return documents


def _store(folder: Path, **settings: float | str) -> FolderStore:
    return FolderStore.create(folder, Settings(**{**TAIL, **settings}), dimension=DIMENSION)


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("vectors-*"))


def _nearest(store: FolderStore, n: int, salt: int = 0) -> int:
    return store.search_vectors(_vector(n + salt)[0], k=1)[0][0]


def test_commits_append_segments_until_the_tail_is_full(tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    store = _store(folder)
    store.commit(_pending(range(40)))  # tail limit of an empty main is 0: a new main
    main = store.vectors.main
    store.commit(_pending(range(40, 50)))
    store.commit(_pending(range(50, 60)))
    assert store.vectors.main is main and store.vectors.tail.ntotal == 20
    assert _files(folder) == ["vectors-1.faiss", "vectors-2-added.faiss", "vectors-3-added.faiss"]
    assert store.counts() == {"documents": 60, "chunks": 60, "vectors": 60}
    chunk_of_55 = store.db.execute("SELECT id FROM chunks WHERE text = 'document 55 0'")
    assert _nearest(store, 55) == chunk_of_55.fetchone()[0]  # found in the tail

    manifest = read_manifest(folder)
    assert set(manifest["files"]) == set(_files(folder))
    assert diagnose(folder).healthy

    store.commit(_pending(range(60, 75)))  # 20 + 15 > 20 (half of 40): merged into a new main
    assert store.vectors.tail.ntotal == 0 and store.vectors.main.ntotal == 75
    assert _files(folder) == ["vectors-4.faiss"]
    assert diagnose(folder).healthy
    store.close()


def test_a_reader_loads_only_the_new_segments(tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    writer = _store(folder)
    writer.commit(_pending(range(40)))
    reader = FolderStore.open(folder)
    main = reader.vectors.main
    writer.commit(_pending(range(40, 45)))
    writer.commit(_pending(range(45, 50)))
    reader.refresh()
    assert reader.generation == 3 and reader.vectors.main is main
    assert reader.vectors.ntotal == 50
    reopened = FolderStore.open(folder)
    assert reopened.vectors.ntotal == 50 and reopened.vectors.tail.ntotal == 10
    for store in (writer, reader, reopened):
        store.close()


def test_replacing_documents_of_the_tail_keeps_the_hnsw_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds: list[int] = []
    build = dense.build_index
    monkeypatch.setattr(
        dense, "build_index", lambda d, total, *rest: builds.append(total) or build(d, total, *rest)
    )
    store = _store(tmp_path / "idx", hnsw_threshold=30)
    store.commit(_pending(range(40)))
    assert dense.kind_of(store.vectors) == "hnsw" and builds == [40]
    store.commit(_pending(range(40, 50)))
    store.commit(_pending(range(45, 50), salt=1000))  # replaced: their chunks leave the tail
    assert builds == [40] and store.vectors.ntotal == 50
    chunk = store.db.execute("SELECT id FROM chunks WHERE text = 'document 47 1000'").fetchone()
    assert _nearest(store, 47, salt=1000) == chunk[0]
    store.commit(_pending(range(5)), remove_keys=["/d/30"])  # chunks leave the graph: rebuilt
    assert builds == [40, 49]
    store.close()


CRASH = """
import os, signal, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_vector_tail import _pending
from ragkit.store import FolderStore
from ragkit.store.folder import store as module

def killed(*args):
    os.kill(os.getpid(), signal.SIGKILL)  # the segment is written, SQLite not yet committed

module.record = killed
FolderStore.open(Path({folder!r})).commit(_pending(range(45, 50)))
"""


def test_a_crash_between_segment_and_commit_leaves_the_old_generation(tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    store = _store(folder)
    store.commit(_pending(range(40)))
    store.commit(_pending(range(40, 45)))
    store.close()
    script = CRASH.format(tests=str(Path(__file__).parent), folder=str(folder))
    died = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], check=False)
    assert died.returncode == -signal.SIGKILL
    assert (folder / "vectors-3-added.faiss").exists()  # written, named by no generation

    store = FolderStore.open(folder)
    assert store.generation == 2 and store.vectors.ntotal == store.counts()["chunks"] == 45
    found = diagnose(folder)
    assert found.healthy and any("leftover" in note for note in found.notes)
    store.commit(_pending(range(45, 50)))  # the next commit writes and names its own
    assert committed(store.db)[1].added == ("vectors-2-added.faiss", "vectors-3-added.faiss")
    assert store.vectors.ntotal == 50 and diagnose(folder).healthy
    store.close()


def _damage_first_vector(path: Path) -> None:
    data = bytearray(path.read_bytes())
    vector = _vector(40).tobytes()
    at = data.find(vector)
    assert at >= 0
    data[at : at + len(vector)] = (-_vector(40)).tobytes()
    path.write_bytes(bytes(data))


def test_doctor_finds_a_damaged_missing_or_unlisted_segment(tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    store = _store(folder)
    store.commit(_pending(range(40)))
    store.commit(_pending(range(40, 45)))
    store.commit(_pending(range(45, 50)))
    store.close()
    segment = folder / "vectors-2-added.faiss"

    _damage_first_vector(segment)
    problems = diagnose(folder).problems
    assert "vectors-2-added.faiss: checksum differs from MANIFEST.json (file damaged)" in problems
    assert any("1 vectors differ from SQLite" in problem for problem in problems)

    manifest = json.loads((folder / "MANIFEST.json").read_text())
    del manifest["files"]["vectors-3-added.faiss"]
    (folder / "MANIFEST.json").write_text(json.dumps(manifest))
    assert "vectors-3-added.faiss: not listed in MANIFEST.json" in diagnose(folder).problems

    (folder / "vectors-3-added.faiss").unlink()
    problems = diagnose(folder).problems
    assert any(p.startswith("vectors-3-added.faiss: missing") for p in problems), problems

    fixed = repair(folder)
    assert fixed.healthy, fixed.problems
    assert _files(folder) == ["vectors-3.faiss"]
    store = FolderStore.open(folder)
    assert store.vectors.ntotal == 50 and store.vectors.tail.ntotal == 0
    store.close()


def test_doctor_reports_a_missing_file_once(tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    store = _store(folder)
    store.commit(_pending(range(10)))
    store.close()
    (folder / "vectors-1.faiss").unlink()
    problems = diagnose(folder).problems
    assert [p for p in problems if p.startswith("vectors-1.faiss")] == [
        "vectors-1.faiss: missing for the committed generation; --repair rebuilds it from SQLite"
    ]


def test_a_damaged_segment_is_not_carried_by_the_next_commit(tmp_path: Path) -> None:
    folder = tmp_path / "idx"
    store = _store(folder)
    store.commit(_pending(range(40)))
    store.commit(_pending(range(40, 45)))
    store.close()
    _damage_first_vector(folder / "vectors-2-added.faiss")
    sums = {name: file_sha256(folder / name) for name in _files(folder)}  # over the damage
    write_manifest(folder, 2, DIMENSION, "m", {"documents": 45, "chunks": 45, "vectors": 45}, sums)
    assert diagnose(folder).problems == [
        "vectors-1.faiss, vectors-2-added.faiss: 1 vectors differ from SQLite"
    ]

    store = FolderStore.open(folder)  # reads the damaged segment; its next commit compares it
    store.commit(_pending(range(45, 47)))
    assert _files(folder) == ["vectors-3.faiss"]  # rebuilt from SQLite, not appended to
    assert diagnose(folder).healthy
    chunk = store.db.execute("SELECT id FROM chunks WHERE text = 'document 40 0'").fetchone()
    assert _nearest(store, 40) == chunk[0]
    store.close()


def test_an_index_without_a_stored_layout_opens_and_appends(tmp_path: Path) -> None:
    """Indexes written before layouts were stored name ``vectors-<G>.faiss`` only."""
    folder = tmp_path / "idx"
    store = _store(folder)
    store.commit(_pending(range(40)))
    store.close()
    with sqlite3.connect(folder / "ragkit.sqlite") as db:
        db.execute("DELETE FROM state WHERE key = 'vectors'")
    store = FolderStore.open(folder)
    assert store.vectors.ntotal == 40
    store.commit(_pending(range(40, 45)))
    assert _files(folder) == ["vectors-1.faiss", "vectors-2-added.faiss"]
    assert diagnose(folder).healthy
    store.close()
    assert os.path.getsize(folder / "vectors-2-added.faiss") < os.path.getsize(
        folder / "vectors-1.faiss"
    )
