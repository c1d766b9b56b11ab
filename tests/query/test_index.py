from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import MODEL
from ragkit import Index, RagkitError
from ragkit.cli import app


@pytest.fixture
def index(tmp_path: Path) -> Index:
    return Index.open(tmp_path / "index", create=True, model=MODEL)


def _chunk_rows(index: Index) -> list[tuple]:
    return index.store.db.execute("SELECT document_id, start, end, text FROM chunks").fetchall()


def test_ingest_query_round_trip_offsets(index: Index, corpus: Path) -> None:
    report = index.ingest([corpus])
    assert report.documents_added == 5 and report.skipped == []
    hits = index.search("At what temperature does water boil?", k=3)
    assert Path(hits[0].source).name == "water.md"
    original = (corpus / "water.md").read_text(encoding="utf-8")
    assert original[hits[0].start : hits[0].end] == hits[0].text
    assert hits[0].score >= hits[1].score
    record = index.search("steam locomotive trains", k=1)[0]
    assert record.document_id == "r1" and record.title == "Trains"


def test_reingest_unchanged_is_noop_and_changed_replaces(index: Index, corpus: Path) -> None:
    index.ingest([corpus])
    before = _chunk_rows(index)
    generation = index.store.generation
    again = index.ingest([corpus])
    assert again.documents_added == 0 and again.documents_unchanged == 5
    assert _chunk_rows(index) == before and index.store.generation == generation

    (corpus / "sub" / "cats.txt").write_text("Dogs bark loudly at night.", encoding="utf-8")
    changed = index.ingest([corpus])
    assert changed.documents_added == 1
    texts = [row[3] for row in _chunk_rows(index)]
    assert "Dogs bark loudly at night." in texts
    assert not any("Cats" in t for t in texts)
    assert index.store.counts()["chunks"] == index.store.vectors.ntotal == len(before)


def test_prune_removes_vanished_files(index: Index, corpus: Path) -> None:
    index.ingest([corpus])
    (corpus / "water.md").unlink()
    report = index.ingest([corpus], prune=True)
    assert report.documents_removed == 1
    assert all(Path(h.source).name != "water.md" for h in index.search("water boils", k=10))
    counts = index.store.counts()
    assert counts["chunks"] == counts["vectors"]


def test_reopen_sees_committed_generation_and_drops_orphans(index: Index, corpus: Path) -> None:
    index.ingest([corpus])
    folder, generation = index.store.folder, index.store.generation
    index.close()
    orphan = folder / f"vectors-{generation + 1}.faiss"
    orphan.write_bytes(b"half-written")  # a crash after writing FAISS, before the SQLite commit
    reopened = Index.open(folder)
    assert reopened.store.generation == generation
    assert reopened.store.counts()["vectors"] == reopened.store.counts()["chunks"] > 0
    reopened.ingest([corpus])
    assert not orphan.exists()
    manifest = json.loads((folder / "MANIFEST.json").read_text())
    assert manifest["generation"] == reopened.store.generation
    assert manifest["embedding_model"] == MODEL


def test_failed_commit_rolls_back(
    index: Index, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index.ingest([corpus / "water.md"])
    counts = index.store.counts()

    def explode(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("faiss.write_index", explode)
    with pytest.raises(OSError):
        index.ingest([corpus / "sub"])
    assert index.store.counts() == counts
    rows = sqlite3.connect(index.store.folder / "ragkit.sqlite").execute(
        "SELECT COUNT(*) FROM documents"
    )
    assert rows.fetchone()[0] == counts["documents"]


def test_open_missing_index_names_folder(tmp_path: Path) -> None:
    with pytest.raises(RagkitError, match="no ragkit index"):
        Index.open(tmp_path / "nothing")


def test_cli_ingest_query_info(tmp_path: Path, corpus: Path) -> None:
    runner = CliRunner()
    folder = str(tmp_path / "cli-index")
    (corpus / "bad.txt").write_bytes(b"\xff\xfe\xfa not utf8 \x00\x00")
    result = runner.invoke(app, ["ingest", str(corpus), "--index", folder, "--model", MODEL])
    assert result.exit_code == 1, result.output  # one file skipped
    assert "bad.txt" in result.output and "documents added 5" in result.output
    result = runner.invoke(app, ["query", "water boiling", "--index", folder, "-k", "2", "--json"])
    assert result.exit_code == 0, result.output
    hits = json.loads(result.output)
    assert len(hits) == 2 and Path(hits[0]["source"]).name == "water.md"
    result = runner.invoke(app, ["info", "--index", folder])
    assert result.exit_code == 0 and MODEL in result.output
    result = runner.invoke(app, ["query", "x", "--index", str(tmp_path / "none")])
    assert result.exit_code == 2


def test_python_type_mistakes_are_ragkit_errors(index: Index, corpus: Path) -> None:
    for query in (None, b"water", 42):
        with pytest.raises(RagkitError, match="give text"):
            index.search(query, k=3)  # type: ignore[arg-type]
    with pytest.raises(RagkitError, match="give a dict"):
        index.search("water", filters=[("language", "en")])  # type: ignore[arg-type]
    with pytest.raises(RagkitError, match=r"give a list of paths, e\.g\. Index\.ingest\(\["):
        index.ingest(str(corpus))  # type: ignore[arg-type]
    assert index.info().documents == 0
