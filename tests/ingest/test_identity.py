"""Stable document identity (issue 21 item 1, issue 24 item 4), through the CLI.

A document's key is its absolute, normalized path (plus ``#id`` for a record), whatever the
spelling and folder an ingest was run with; keys stored relative by earlier releases are
migrated, and moved files are renamed in place by content hash, without embedding again.
"""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import chdir
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from conftest import MODEL
from ragkit import Index
from ragkit.cli import app
from ragkit.documents import Document
from ragkit.pipeline.identity import StoredIdentity, plan_renames

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _ragkit(*args: str, cwd: Path) -> Result:
    """``ragkit ARGS`` run from ``cwd`` (in this process: what is tested is the paths typed,
    relative to the working folder, not the process); fails the test when it does not exit 0."""
    with chdir(cwd):
        done = CliRunner().invoke(app, list(args))
    assert done.exit_code == 0, done.output
    return done


def _rows(index: Path) -> dict[str, list[tuple[int, bytes]]]:
    """Each stored document's key → its chunks' ids and vector bytes."""
    db = sqlite3.connect(index / "ragkit.sqlite")
    try:
        rows: dict[str, list[tuple[int, bytes]]] = {}
        for (key,) in db.execute("SELECT key FROM documents"):
            rows[key] = []
        query = (
            "SELECT d.key, c.id, c.vector FROM chunks c JOIN documents d ON d.id = c.document_id"
        )
        for key, chunk_id, vector in db.execute(query + " ORDER BY c.id"):
            rows[key].append((chunk_id, vector))
        return rows
    finally:
        db.close()


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text("Glaciers carve valleys.\n", encoding="utf-8")
    (folder / "b.txt").write_text("Rivers carry sediment.\n", encoding="utf-8")
    (folder / "records.jsonl").write_text('{"id": "r1", "text": "Steam trains."}\n')
    return folder


@pytest.fixture
def index(tmp_path: Path) -> Path:
    Index.open(tmp_path / "index", create=True, model=MODEL).close()
    return tmp_path / "index"


def test_every_spelling_of_a_folder_gives_one_copy(tmp_path: Path, docs: Path, index: Path) -> None:
    for spelling in ("docs", str(docs), "docs/../docs", "./docs/"):
        _ragkit("ingest", spelling, "--index", str(index), cwd=tmp_path)
    assert set(_rows(index)) == {
        str(docs / "a.txt"),
        str(docs / "b.txt"),
        f"{docs}/records.jsonl#r1",
    }


def test_prune_from_inside_the_folder_removes_a_deleted_file(
    tmp_path: Path, docs: Path, index: Path
) -> None:
    _ragkit("ingest", "docs", "--index", str(index), cwd=tmp_path)
    (docs / "b.txt").unlink()
    done = _ragkit("ingest", ".", "--index", str(index), "--prune", cwd=docs)
    assert "removed 1" in done.stdout
    assert str(docs / "b.txt") not in _rows(index)
    assert str(docs / "a.txt") in _rows(index)


def test_same_relative_path_from_two_folders_is_two_documents(tmp_path: Path, index: Path) -> None:
    for name, text in (("A", "Deserts are dry."), ("B", "Forests are green.")):
        (tmp_path / name / "docs").mkdir(parents=True)
        (tmp_path / name / "docs" / "a.txt").write_text(text, encoding="utf-8")
        _ragkit("ingest", "docs/a.txt", "--index", str(index), cwd=tmp_path / name)
    assert set(_rows(index)) == {str(tmp_path / "A/docs/a.txt"), str(tmp_path / "B/docs/a.txt")}


def test_a_renamed_file_keeps_its_chunks_and_vectors(
    tmp_path: Path, docs: Path, index: Path
) -> None:
    _ragkit("ingest", "docs", "--index", str(index), cwd=tmp_path)
    before = _rows(index)
    (docs / "a.txt").rename(docs / "moved.txt")
    (docs / "records.jsonl").rename(docs / "trains.jsonl")
    done = _ragkit("ingest", "docs", "--index", str(index), "--prune", cwd=tmp_path)
    assert "documents added 0" in done.stdout and "renamed 2" in done.stdout, done.stdout
    after = _rows(index)
    assert after[str(docs / "moved.txt")] == before[str(docs / "a.txt")]
    assert after[f"{docs}/trains.jsonl#r1"] == before[f"{docs}/records.jsonl#r1"]
    assert len(after) == 3


def test_ls_and_rm_take_the_path_as_typed(tmp_path: Path, docs: Path, index: Path) -> None:
    _ragkit("ingest", "docs", "--index", str(index), cwd=tmp_path)
    listed = _ragkit("ls", "--index", str(index), "--glob", "a.txt", cwd=docs)
    assert "1 document\n" in listed.stdout
    _ragkit("rm", "--index", str(index), "docs/a.txt", cwd=tmp_path)
    _ragkit("rm", "--index", str(index), str(docs / "b.txt"), cwd=tmp_path)
    _ragkit("rm", "--index", str(index), "../docs/records.jsonl", cwd=docs)
    assert _rows(index) == {}


def _relative_keys(index: Path, folder: Path) -> None:
    """Rewrite keys and sources relative to ``folder``, as releases before absolute keys
    stored them for an ingest run from that folder."""
    db = sqlite3.connect(index / "ragkit.sqlite")
    prefix = f"{folder}/"
    with db:
        db.execute(
            "UPDATE documents SET key = substr(key, ?), source = substr(source, ?)",
            (len(prefix) + 1, len(prefix) + 1),
        )
    db.close()


def test_an_index_with_relative_keys_is_migrated_without_embedding(
    tmp_path: Path, docs: Path, index: Path
) -> None:
    _ragkit("ingest", "docs", "--index", str(index), cwd=tmp_path)
    _relative_keys(index, tmp_path)
    old = _rows(index)
    assert set(old) == {"docs/a.txt", "docs/b.txt", "docs/records.jsonl#r1"}
    done = _ragkit("ingest", "docs", "--index", str(index), cwd=tmp_path)
    assert "documents added 0" in done.stdout and "renamed 3" in done.stdout, done.stdout
    new = _rows(index)
    assert new == {str(tmp_path / key): chunks for key, chunks in old.items()}


def test_a_relative_duplicate_of_an_absolute_key_is_removed(
    tmp_path: Path, docs: Path, index: Path
) -> None:
    _ragkit("ingest", "docs/a.txt", "--index", str(index), cwd=tmp_path)
    _relative_keys(index, tmp_path)  # "docs/a.txt", as the CLI stored it
    (docs / "a.txt").write_text("Glaciers carve deep valleys.\n", encoding="utf-8")
    # Run from elsewhere, the relative key is not claimed: the file is stored a second time
    # under its absolute key, as mixing a flow (absolute paths) and the CLI used to do.
    _ragkit("ingest", str(docs / "a.txt"), "--index", str(index), cwd=docs)
    assert set(_rows(index)) == {"docs/a.txt", str(docs / "a.txt")}
    _ragkit("ingest", "docs/a.txt", "--index", str(index), cwd=tmp_path)
    assert set(_rows(index)) == {str(docs / "a.txt")}


def test_a_stored_file_still_present_is_not_taken_by_a_copy(tmp_path: Path) -> None:
    copy = Document("/x/copy.txt", "/x/copy.txt", "Same text.", "h", [])
    stored = {"/x/a.txt": StoredIdentity("/x/a.txt", "h")}
    assert plan_renames([copy], stored, exists=lambda path: True).renames == {}
    assert plan_renames([copy], stored, exists=lambda path: False).renames == {
        "/x/a.txt": ("/x/copy.txt", "/x/copy.txt")
    }


def test_an_index_built_by_an_earlier_release_opens_and_migrates_without_loss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tests/fixtures/index-9e84a64: relative keys, no exact_terms or orthography setting."""
    shutil.copytree(FIXTURES / "index-9e84a64", tmp_path / "release", ignore=_readme)
    monkeypatch.chdir(tmp_path / "release")
    index = Index.open("old-index")
    assert (index.settings.exact_terms, index.settings.orthography) == ("off", "standard")
    assert index.search("boiling water", k=1, mode="sparse")[0].document_id == "docs/water.md"
    assert index.search("sleeping cats", k=1, mode="dense")[0].source == "docs/sub/cats.txt"
    vectors = dict(index.store.db.execute("SELECT text, vector FROM chunks"))

    report = index.ingest(["docs"])  # the same folder, typed as it was then
    assert (report.documents_added, report.documents_renamed) == (0, 3)
    keys = {key for (key,) in index.store.db.execute("SELECT key FROM documents")}
    assert keys == {
        str(tmp_path / "release" / "docs" / name)
        for name in ("water.md", "sub/cats.txt", "records.jsonl#r1")
    }
    assert dict(index.store.db.execute("SELECT text, vector FROM chunks")) == vectors
    assert index.search("steam trains", k=1)[0].document_id == "r1"
    result = CliRunner().invoke(app, ["doctor", "--index", "old-index"])
    assert result.exit_code == 0, result.output


def _readme(folder: str, names: list[str]) -> list[str]:
    return [name for name in names if name == "README.md"]
