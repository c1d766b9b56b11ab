"""Damaged index files and wrong paths give one clear line naming the file and the fix, exit 2,
never a traceback, also when only a query reaches the damage (issue 24, item 12)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import MODEL
from ragkit import Index
from ragkit.store import DB_NAME

DAMAGE = {
    "faiss-truncated": lambda f: os.truncate(f / "vectors-1.faiss", 100),
    "faiss-garbled": lambda f: _overwrite(f / "vectors-1.faiss", 40, os.urandom(64)),
    "bm25-params-empty": lambda f: (f / "bm25-1" / "params.index.json").write_text("{}"),
    "sqlite-header": lambda f: _overwrite(f / DB_NAME, 0, b"garbage" * 3),
    "sqlite-truncated": lambda f: os.truncate(f / DB_NAME, 8192),
    # damage only a query reaches: the index opens, the rows of the hits do not read
    "sqlite-text-undecodable": lambda f: _at_text(f, lambda at, _: (at, b"\xff\xfe\xff")),
    "sqlite-data-page": lambda f: _at_text(f, lambda at, size: (at - at % size, b"\7" * size)),
}
NAMED = {
    "faiss-truncated": "vectors-1.faiss: unreadable (damaged or truncated); `ragkit doctor",
    "faiss-garbled": "vectors-1.faiss: unreadable (damaged or truncated); `ragkit doctor",
    "bm25-params-empty": "bm25-1: BM25 index unreadable (ValueError: params.index.json",
    "sqlite-header": f"{DB_NAME}: unreadable (file is not a database); restore the index",
    "sqlite-truncated": f"{DB_NAME}: unreadable (database disk image is malformed); restore",
    "sqlite-text-undecodable": f"{DB_NAME}: unreadable (Could not decode to UTF-8",
    "sqlite-data-page": f"{DB_NAME}: unreadable (database disk image is malformed); restore",
}


def _overwrite(path: Path, offset: int, data: bytes) -> None:
    with path.open("r+b") as handle:
        handle.seek(offset)
        handle.write(data)


def _at_text(folder: Path, damage: Callable[[int, int], tuple[int, bytes]]) -> None:
    """Overwrite the SQLite bytes ``damage(offset, page size)`` names, wherever the document's
    text is stored (its row and its chunk's)."""
    data = (folder / DB_NAME).read_bytes()
    found = [at for at in range(len(data)) if data.startswith(b"Glaciers carve", at)]
    assert found, "the text is not in the main database file"
    for at in found:
        _overwrite(folder / DB_NAME, *damage(at, int.from_bytes(data[16:18], "big")))


def _ragkit(*args: str) -> subprocess.CompletedProcess[str]:
    command = [str(Path(sys.executable).with_name("ragkit")), *args]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False)


def _one_clear_line(done: subprocess.CompletedProcess[str], named: str, code: int = 2) -> None:
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert [x.startswith("error:") for x in done.stderr.splitlines()] == [True]
    assert named in done.stderr, done.stderr


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("damage")
    (folder / "docs").mkdir()
    (folder / "docs" / "a.txt").write_text("Glaciers carve deep valleys in mountains.\n")
    with Index.open(folder / "index", create=True, model=MODEL) as index:
        index.ingest([folder / "docs"])
    return folder / "index"


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_a_damaged_index_file_is_one_clear_line(built: Path, tmp_path: Path, case: str) -> None:
    folder = tmp_path / "index"
    shutil.copytree(built, folder)
    DAMAGE[case](folder)
    done = _ragkit("query", "glaciers", "--index", str(folder), "--mode", "sparse")
    _one_clear_line(done, NAMED[case], code=4)  # IndexDamagedError: doctor --repair


def test_an_index_path_naming_a_file(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Glaciers carve deep valleys.\n")
    named = f"{tmp_path / 'a.txt'}: a file, not an index folder; give --index a folder"
    _one_clear_line(_ragkit("ingest", str(tmp_path), "--index", str(tmp_path / "a.txt")), named)


@pytest.mark.parametrize(
    ("config", "weights", "named"),
    [
        ('{"x":', b"", "config.json: not a reranker config"),
        ("{}", b"not safetensors", "model.safetensors: not weights for this config"),
    ],
)
def test_a_damaged_reranker_folder(
    built: Path, tmp_path: Path, config: str, weights: bytes, named: str
) -> None:
    (tmp_path / "config.json").write_text(config)
    (tmp_path / "model.safetensors").write_bytes(weights)
    args = ["--mode", "sparse", "--rerank", "--reranker", str(tmp_path)]
    _one_clear_line(_ragkit("query", "glaciers", "--index", str(built), *args), named)
