"""The second reliability pass (issue 43): prune guards, creation leftovers, a vectors file
named outside the folder, exports into the index, damaged vectors, silent empty results, TSV
ids and empty files — each as a user hits it (CLI or API)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import faiss
import numpy as np
import pytest
from typer.testing import CliRunner

from conftest import MODEL
from ragkit import Index, RagkitError
from ragkit.cli import app
from ragkit.store.folder.doctor import diagnose

RUNNER = CliRunner()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small index over three documents (built once; tests that change it copy it)."""
    folder = tmp_path_factory.mktemp("second")
    docs = folder / "docs"
    docs.mkdir()
    for name, text in {
        "water.txt": "Water boils at 100 degrees Celsius at sea level.",
        "cats.txt": "Cats are small domesticated carnivores that sleep a lot.",
        "trains.md": "# Trains\n\nSteam locomotives pulled early trains across the plains.",
    }.items():
        (docs / name).write_text(text, encoding="utf-8")
    with Index.open(folder / "index", create=True, model=MODEL) as index:
        index.ingest([docs])
    return folder


@pytest.fixture
def copy(built: Path, tmp_path: Path) -> Path:
    """A copy of the built folder (docs and index) this test may change; the index's keys
    still name the built folder's documents."""
    import shutil

    shutil.copytree(built, tmp_path / "copy")
    return tmp_path / "copy"


def _ingest(*arguments: str) -> tuple[int, str]:
    result = RUNNER.invoke(app, ["ingest", *arguments, "-q"])
    return result.exit_code, result.output


def test_prune_of_an_emptied_root_and_max_delete_through_the_cli(
    built: Path, tmp_path: Path
) -> None:
    import shutil

    docs, index = tmp_path / "docs", str(tmp_path / "index")
    shutil.copytree(built / "docs", docs)
    assert _ingest(str(docs), "--index", index, "--model", MODEL)[0] == 0
    for path in docs.iterdir():
        path.unlink()
    code, output = _ingest(str(docs), "--index", index, "--prune")
    assert code == 2 and "no file found there now" in output and "--prune-empty" in output
    assert Index.open(index).info().documents == 3
    (docs / "water.txt").write_text("Water boils at 100 degrees Celsius at sea level.")
    code, output = _ingest(str(docs), "--index", index, "--prune", "--max-delete", "1")
    assert code == 2 and "would remove 2 of 3 documents, over --max-delete 1" in output
    code, output = _ingest(str(docs), "--index", index, "--prune", "--max-delete", "70%")
    assert code == 0 and "removed 2" in output


def test_creation_leftovers_are_reported_and_removed(copy: Path) -> None:
    index = copy / "index"
    leftovers = [index / ".ragkit.sqlite.4242.tmp", index / ".ragkit.sqlite.4242.tmp-journal"]
    for path in leftovers:
        path.write_bytes(b"left by a killed creation")
    assert any(".ragkit.sqlite.4242.tmp" in note for note in diagnose(index).notes)
    (copy / "docs" / "new.txt").write_text("Rivers carry sediment to the sea.", encoding="utf-8")
    assert _ingest(str(copy / "docs"), "--index", str(index))[0] == 0
    assert not any(path.exists() for path in leftovers)


def test_a_vectors_file_named_outside_the_folder_is_refused(copy: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.faiss"
    faiss.write_index(faiss.IndexFlatIP(384), str(outside))
    db = sqlite3.connect(copy / "index" / "ragkit.sqlite")
    layout = json.dumps({"main": str(outside), "added": [], "checksums": {}})
    db.execute("INSERT OR REPLACE INTO state(key, value) VALUES ('vectors', ?)", (layout,))
    db.commit()
    db.close()
    result = RUNNER.invoke(app, ["query", "water", "--index", str(copy / "index")])
    assert result.exit_code == 4 and "not a vectors file of the index folder" in result.output


def test_export_never_writes_inside_the_index(copy: Path) -> None:
    index = copy / "index"
    database = (index / "ragkit.sqlite").read_bytes()
    for target in ("ragkit.sqlite", "vectors-1.faiss", "sub/chunks.jsonl", "."):
        result = RUNNER.invoke(app, ["export", "--index", str(index), "-o", str(index / target)])
        assert result.exit_code == 2 and "inside the index folder" in result.output
    assert (index / "ragkit.sqlite").read_bytes() == database
    assert Index.open(index).search("water", k=1)[0].source.endswith("water.txt")
    written = copy / "chunks.jsonl"
    assert RUNNER.invoke(app, ["export", "--index", str(index), "-o", str(written)]).exit_code == 0
    assert len(written.read_text().splitlines()) == 3
    assert not list(copy.glob(".chunks.jsonl.*.tmp"))


def test_damaged_vectors_give_an_error_not_absurd_scores(copy: Path) -> None:
    index = copy / "index"
    (name,) = [p.name for p in index.glob("vectors-*.faiss")]
    damaged = faiss.IndexIDMap2(faiss.IndexFlatIP(384))
    damaged.add_with_ids(np.full((3, 384), 1e12, dtype=np.float32), np.arange(1, 4))
    faiss.write_index(damaged, str(index / name))
    with Index.open(index) as opened, pytest.raises(RagkitError, match="doctor .*--repair"):
        opened.search("water boils", k=2, mode="dense")
    wrong = faiss.IndexIDMap2(faiss.IndexFlatIP(16))
    faiss.write_index(wrong, str(index / name))
    with pytest.raises(RagkitError, match="16-d vectors in a 384-d index"):
        Index.open(index)


def test_silent_empty_results_are_said(copy: Path) -> None:
    docs, index = str(copy / "docs"), str(copy / "index")
    code, output = _ingest(docs, "--index", index, "--include", "[")
    assert code == 2 and "a '[' that no ']' closes" in output
    code, output = _ingest(docs, "--index", index, "--include", "*.rst")
    assert code == 1 and "no file matches --include '*.rst'" in output
    code, output = _ingest(index, "--index", index)
    assert code == 2 and "the folder of documents cannot be the index folder" in output
    result = RUNNER.invoke(app, ["query", "water", "--index", index, "--filter", "year=>2000"])
    assert result.exit_code == 2 and "did you mean 'year>=2000'" in result.output


def test_a_tsv_row_with_an_empty_id_is_keyed_by_its_line(tmp_path: Path) -> None:
    table = tmp_path / "faq.tsv"
    table.write_text("id\ttext\n\tWater boils.\n\tIce melts.\nq3\tSteam rises.\n")
    with Index.open(tmp_path / "index", create=True, model=MODEL) as index:
        report = index.ingest([table])
        assert report.documents_added == 3 and report.skipped == []
        keys = sorted(d.key.rsplit("#", 1)[1] for d in index.documents())
    assert keys == ["2", "3", "q3"]


def test_an_empty_file_is_reported_without_failing_the_run(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Glaciers carve valleys.", encoding="utf-8")
    (docs / "empty.txt").write_text("  \n", encoding="utf-8")
    (docs / "empty.jsonl").write_text("", encoding="utf-8")
    index = str(tmp_path / "index")
    code, output = _ingest(str(docs), "--index", index, "--model", MODEL)
    assert code == 0 and "2 empty (nothing to index)" in output
    assert _ingest(str(docs), "--index", index, "--strict")[0] == 1
    (docs / "a.txt").write_text("", encoding="utf-8")  # emptied: positively nothing there now
    code, output = _ingest(str(docs), "--index", index, "--prune", "--prune-empty")
    assert code == 0 and "removed 1" in output
