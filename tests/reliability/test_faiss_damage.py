"""A damaged FAISS file is never carried into the next generation: a commit compares an index
it did not write itself with the vectors in SQLite and rebuilds it when they differ, and doctor
compares them too, whatever the manifest says (issue 24, item 9)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np

from conftest import MODEL, cli
from ragkit.store import DB_NAME
from ragkit.store.folder.manifest import write_manifest


def _negate_stored_vector(folder: Path, generation: int) -> None:
    """Flip the sign of the first chunk's vector where the FAISS file holds its bytes."""
    with sqlite3.connect(folder / DB_NAME) as db:
        blob = db.execute("SELECT vector FROM chunks ORDER BY id LIMIT 1").fetchone()[0]
    path = folder / f"vectors-{generation}.faiss"
    data = path.read_bytes()
    assert data.count(blob) == 1
    negated = (-np.frombuffer(blob, dtype=np.float32)).tobytes()
    path.write_bytes(data.replace(blob, negated))


def test_a_negated_vector_is_not_carried_by_the_next_ingest(tmp_path: Path) -> None:
    docs, folder = tmp_path / "docs", tmp_path / "index"
    docs.mkdir()
    (docs / "a.txt").write_text("Glaciers carve deep valleys in mountains.\n")
    (docs / "b.txt").write_text("Bees collect nectar from flowers in spring.\n")
    assert cli("ingest", str(docs), "--index", str(folder), "--model", MODEL).returncode == 0
    _negate_stored_vector(folder, 1)
    write_manifest(folder, 1, 384, MODEL, {"documents": 2, "chunks": 2, "vectors": 2})

    damaged = cli("doctor", "--index", str(folder))  # the checksums match the damage now
    assert damaged.returncode != 0
    assert "vectors-1.faiss: 1 vectors differ from SQLite" in damaged.stdout + damaged.stderr

    (docs / "c.txt").write_text("Volcanoes erupt molten rock and ash.\n")
    assert cli("ingest", str(docs), "--index", str(folder)).returncode == 0
    assert not (folder / "vectors-1.faiss").exists()
    checked = cli("doctor", "--index", str(folder))
    assert checked.returncode == 0, checked.stdout + checked.stderr

    query = ["glaciers carving valleys", "--index", str(folder), "--mode", "dense", "--json"]
    hits = json.loads(cli("query", *query).stdout)
    assert hits[0]["text"].startswith("Glaciers") and hits[0]["score"] > 0.5
