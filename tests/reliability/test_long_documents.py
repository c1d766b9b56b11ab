"""A document longer than the document limit is refused with its length, the rest of the batch
is ingested (issue 24, item 20: a 50 MB single-line file ran for over 10 minutes)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from killharness import ingest_command

from conftest import MODEL
from ragkit import Index, RagkitError


def test_a_huge_single_line_file_is_refused_quickly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "line.txt").write_text("boundary layer " * 400_000)  # 6 MB on one line
    (docs / "small.txt").write_text("Glaciers carve valleys.\n")
    index = Index.open(tmp_path / "index", create=True, model=MODEL)
    report = index.ingest([docs])
    assert report.documents_added == 1
    (skipped,) = report.skipped
    assert skipped.path == str(docs / "line.txt")
    assert skipped.reason == (
        "6,000,000 characters is over the 4,000,000-character document limit; split it or "
        "raise RAGKIT_MAX_DOCUMENT_CHARS"
    )
    assert report.seconds["chunk"] < 5  # nothing long was chunked

    monkeypatch.setenv("RAGKIT_MAX_DOCUMENT_CHARS", "many")
    with pytest.raises(RagkitError, match="RAGKIT_MAX_DOCUMENT_CHARS='many'"):
        index.ingest([docs])
    index.close()

    done = subprocess.run(
        ingest_command(docs, tmp_path / "index"), capture_output=True, text=True, check=False
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "error: RAGKIT_MAX_DOCUMENT_CHARS='many'" in done.stderr


def test_a_long_jsonl_record_is_refused_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAGKIT_MAX_DOCUMENT_CHARS", "100")
    (tmp_path / "r.jsonl").write_text(
        '{"id": "long", "text": "' + "word " * 40 + '"}\n{"id": "short", "text": "Tides."}\n'
    )
    with Index.open(tmp_path / "index", create=True, model=MODEL) as index:
        report = index.ingest([tmp_path / "r.jsonl"])
    assert report.documents_added == 1
    assert [s.path for s in report.skipped] == [f"{tmp_path}/r.jsonl#long"]
