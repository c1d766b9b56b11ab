"""A read-only index folder: readers open SQLite read-only and write nothing, a writer fails
with one clear line (issue 24, item 10)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hostile import reader_prefix

from conftest import MODEL
from ragkit import Index

pytestmark = pytest.mark.skipif(
    reader_prefix()[1], reason="this user writes into read-only folders (root without setpriv)"
)


def _ragkit(*args: str) -> subprocess.CompletedProcess[str]:
    prefix, _ = reader_prefix()
    command = [*prefix, str(Path(sys.executable).with_name("ragkit")), *args]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False)


def _make_read_only(folder: Path, writable: bool = False) -> None:
    for path in [*folder.rglob("*"), folder]:
        mode = (
            (0o755 if path.is_dir() else 0o644) if writable else (0o555 if path.is_dir() else 0o444)
        )
        path.chmod(mode)


def test_a_read_only_index_answers_queries_and_refuses_ingest(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Glaciers carve deep valleys in mountains.\n")
    folder = tmp_path / "index"
    with Index.open(folder, create=True, model=MODEL) as index:
        index.ingest([docs])
    for sparse in folder.glob("bm25-*"):
        shutil.rmtree(sparse)  # the first sparse search must rebuild it, in memory only
    assert not list(folder.glob("*-wal")) and not list(folder.glob("*-shm"))
    before = sorted(p.name for p in folder.iterdir())
    _make_read_only(folder)
    try:
        query = _ragkit("query", "glaciers valleys", "--index", str(folder), "--mode", "sparse")
        info = _ragkit("info", "--index", str(folder))
        doctor = _ragkit("doctor", "--index", str(folder))
        ingest = _ragkit("ingest", str(docs), "--index", str(folder))
        after = sorted(p.name for p in folder.iterdir())
    finally:
        _make_read_only(folder, writable=True)
    assert query.returncode == 0 and "mountains" in query.stdout, query.stderr
    assert info.returncode == 0 and "documents" in info.stdout, info.stderr
    assert doctor.returncode == 1 and "Traceback" not in doctor.stderr  # it reads the index:
    assert re.search(r"bm25-\d+/: listed in MANIFEST.json \(\d+ files\) but missing", doctor.stdout)
    assert ingest.returncode == 2 and "Traceback" not in ingest.stderr
    assert f"{folder}: cannot write here (Permission denied)" in ingest.stderr
    assert after == before  # nothing written: no -wal, -shm, lock or BM25 files
