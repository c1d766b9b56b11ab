"""``--prune`` removes only documents that are positively gone (issue 24, items 2 and 3).

A missing root, a folder that cannot be listed and a file that cannot be read are read errors,
not deletions; roots typed as ``.`` and JSONL files given as roots prune like any other.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import MODEL
from hostile import reader_prefix
from killharness import ingest_command

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
