"""``--prune`` removes only documents that are positively gone (issue 24, items 2 and 3).

A missing root, a folder that cannot be listed and a file that cannot be read are read errors,
not deletions; roots typed as ``.`` and JSONL files given as roots prune like any other.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hostile import reader_prefix
from killharness import ingest_command

from conftest import MODEL
from ragkit import Index, RagkitError


def _prune(paths: list[str], index: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``ragkit ingest PATHS --index INDEX --prune`` run from ``cwd`` (no model loads: nothing
    new to embed)."""
    prefix, _ = reader_prefix()
    command = [*prefix, *ingest_command(Path(paths[0]), index), *paths[1:], "--prune"]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)


def _keys(index: Path) -> set[str]:
    opened = Index.open(index)
    try:
        return set(opened.store.document_hashes())
    finally:
        opened.close()


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text("Glaciers carve valleys.\n", encoding="utf-8")
    (folder / "b.txt").write_text("Rivers carry sediment.\n", encoding="utf-8")
    (folder / "sub" / "c.txt").write_text("Tides rise twice a day.\n", encoding="utf-8")
    records = [{"id": "r1", "text": "Steam trains."}, {"id": "r2", "text": "Two wheels."}]
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def _ingest(tmp_path: Path, roots: list[Path]) -> Path:
    index = Index.open(tmp_path / "index", create=True, model=MODEL)
    index.ingest(roots)
    index.close()
    return tmp_path / "index"


def test_prune_refuses_a_missing_root_and_keeps_everything(tmp_path: Path, docs: Path) -> None:
    index = _ingest(tmp_path, [docs])
    before = _keys(index)
    moved = tmp_path / "elsewhere"
    docs.rename(moved)
    done = _prune([str(docs)], index, tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{docs}: no such file or folder" in done.stderr
    assert _keys(index) == before
    opened = Index.open(index)
    with pytest.raises(RagkitError, match="no such file or folder"):
        opened.ingest([docs], prune=True)
    opened.close()


@pytest.mark.skipif(reader_prefix()[1], reason="this user reads mode-000 files and folders")
def test_prune_keeps_documents_it_could_not_read(tmp_path: Path, docs: Path) -> None:
    index = _ingest(tmp_path, [docs])
    before = _keys(index)
    (docs / "sub").chmod(0)  # a folder that cannot be listed
    (docs / "a.txt").chmod(0)  # a file that cannot be read
    try:
        done = _prune([str(docs)], index, tmp_path)
    finally:
        (docs / "sub").chmod(0o755)
        (docs / "a.txt").chmod(0o644)
    assert done.returncode == 1, done.stderr  # files skipped, nothing removed
    assert "removed 0" in done.stdout
    assert _keys(index) == before


def test_prune_from_dot_and_of_a_jsonl_root(
    tmp_path: Path, docs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(docs)  # typed relative to the folder; keys are absolute all the same
    index = _ingest(tmp_path, [Path(".")])
    (docs / "b.txt").unlink()
    done = _prune(["."], index, docs)
    assert done.returncode == 0, done.stderr
    assert "removed 1" in done.stdout
    assert str(docs / "b.txt") not in _keys(index)

    (docs / "records.jsonl").write_text(json.dumps({"id": "r1", "text": "Steam trains."}) + "\n")
    done = _prune(["records.jsonl"], index, docs)
    assert done.returncode == 0, done.stderr
    keys = _keys(index)
    assert f"{docs}/records.jsonl#r2" not in keys and f"{docs}/records.jsonl#r1" in keys
    opened = Index.open(index)
    assert all(hit.document_id != "r2" for hit in opened.search("two wheels", k=5))
    opened.close()


def test_a_jsonl_file_with_a_bad_line_keeps_its_records(tmp_path: Path, docs: Path) -> None:
    index = _ingest(tmp_path, [docs])
    (docs / "records.jsonl").write_text('{"id": "r1", "text": "Steam trains."}\n{"id": "r2", ')
    done = _prune([str(docs)], index, tmp_path)
    assert done.returncode == 1 and "invalid JSON" in done.stdout
    assert f"{docs}/records.jsonl#r2" in _keys(index)  # its line may be the broken one


def test_prune_refuses_a_root_that_yields_no_file(tmp_path: Path, docs: Path) -> None:
    """An unmounted share leaves an empty mount point: nothing is removed without the flag."""
    index = _ingest(tmp_path, [docs])
    before = _keys(index)
    for path in sorted(docs.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    with Index.open(index) as opened:
        with pytest.raises(RagkitError, match="no file found there now.*--prune-empty"):
            opened.ingest([docs], prune=True)
        assert set(opened.store.document_hashes()) == before
        assert opened.ingest([docs], prune=True, prune_empty=True).documents_removed == 5


def test_max_delete_caps_a_prune(tmp_path: Path, docs: Path) -> None:
    index = _ingest(tmp_path, [docs])
    (docs / "a.txt").unlink()
    (docs / "b.txt").unlink()
    with Index.open(index) as opened:
        with pytest.raises(RagkitError, match="would remove 2 of 5 documents, over --max-delete 1"):
            opened.ingest([docs], prune=True, max_delete=1)
        with pytest.raises(RagkitError, match="over --max-delete 20%"):
            opened.ingest([docs], prune=True, max_delete="20%")
        assert len(opened.store.document_hashes()) == 5
        with pytest.raises(RagkitError, match="give a number of documents"):
            opened.ingest([docs], prune=True, max_delete="many")
        assert opened.ingest([docs], prune=True, max_delete="40%").documents_removed == 2


def test_records_prune_with_no_record_removes_nothing(tmp_path: Path) -> None:
    with Index.open(tmp_path / "index", create=True, model=MODEL) as opened:
        opened.add([{"id": "a", "text": "Alpha."}, {"id": "b", "text": "Beta."}])
        with pytest.raises(RagkitError, match="no record given"):
            opened.add([], prune=True)
        assert opened.add([], prune=True, prune_empty=True).documents_removed == 2
