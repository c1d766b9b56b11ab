"""Two documents with one key: the second is reported on its own and the batch goes on
(issue 24, item 5)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from hostile import reader_prefix
from killharness import ingest_command

from conftest import MODEL
from ragkit import Index


def test_a_file_named_like_a_jsonl_record_is_skipped_not_a_crash(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    records = [{"id": "x.md", "text": "Steam trains."}, {"id": "y", "text": "Two wheels."}]
    (docs / "c.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (docs / "c.jsonl#x.md").write_text("# A file\n\nIts name is a record's key.\n")
    (docs / "d.txt").write_text("Glaciers carve valleys.\n")
    Index.open(tmp_path / "index", create=True, model=MODEL).close()

    prefix, _ = reader_prefix()
    command = [*prefix, *ingest_command(docs, tmp_path / "index")]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr  # skipped, not crashed
    assert f"  {docs}/c.jsonl#x.md: document key already taken by {docs}/c.jsonl;" in done.stdout
    assert "documents added 3" in done.stdout

    index = Index.open(tmp_path / "index")
    assert index.store.document_sources() == {
        f"{docs}/c.jsonl#x.md": f"{docs}/c.jsonl",
        f"{docs}/c.jsonl#y": f"{docs}/c.jsonl",
        f"{docs}/d.txt": f"{docs}/d.txt",
    }
    # The key stays with its stored owner when the file is ingested on its own later.
    report = index.ingest([docs / "c.jsonl#x.md"])
    assert report.documents_added == 0 and len(report.skipped) == 1
    assert "already taken by" in report.skipped[0].reason
    assert index.search("steam trains", k=1)[0].document_id == "x.md"
    index.close()
