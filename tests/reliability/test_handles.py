"""Index handles that live across other writers' commits (issue 24, items 7 and 8)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ragkit import Index


def test_a_handle_opened_before_the_first_ingest_follows_it(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Glaciers carve deep valleys in mountains.\n")
    early = Index.open(tmp_path / "index", create=True)  # model auto: chosen at first ingest
    assert early.search("glaciers valleys") == []
    command = [str(Path(sys.executable).with_name("ragkit")), "ingest", str(docs)]
    command += ["--index", str(tmp_path / "index")]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    subprocess.run(command, capture_output=True, text=True, env=env, check=True)

    hits = early.search("glaciers valleys", k=3)  # hybrid: needs the chosen model
    assert [Path(h.source).name for h in hits] == ["a.txt"]
    (docs / "b.txt").write_text("Rivers carry sediment to the sea.\n")
    report = early.ingest([docs])
    assert (report.documents_added, report.documents_unchanged) == (1, 1)
    assert early.settings.embedding_model == early.store.settings.embedding_model != "auto"
    early.close()
