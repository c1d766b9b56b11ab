"""Ingest reads a folder in groups and keeps their texts on disk until their batch commits:
memory holds at most one group of loaded texts, whatever the corpus size (issue 44, item 6).
Records on a pipe that stays open are committed while it does (issue 51, item 5)."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import time
import weakref
from pathlib import Path

from conftest import MODEL
from ragkit import Index
from ragkit.config import Settings
from ragkit.documents import Document, LoadResult
from ragkit.pipeline import LocalStages
from ragkit.pipeline.scheduling import EncoderSource
from ragkit.pipeline.stages import PreparedDocument

GROUP = 3


class CountingStages(LocalStages):
    """Local stages that count the loaded documents still alive each time a group is loaded,
    and the documents each batch prepares."""

    def __init__(self) -> None:
        super().__init__()
        self.live = 0
        self.live_at_load: list[int] = []
        self.prepared: list[int] = []

    def _dead(self) -> None:
        self.live -= 1

    def load_files(self, files: list[Path]) -> LoadResult:
        gc.collect()
        self.live_at_load.append(self.live)
        loaded = super().load_files(files)
        for document in loaded.documents:
            self.live += 1
            weakref.finalize(document, self._dead)
        return loaded

    def prepare(
        self,
        documents: list[Document],
        settings: Settings,
        encoder: EncoderSource,
        seconds: dict[str, float],
    ) -> list[PreparedDocument]:
        self.prepared.append(len(documents))
        return super().prepare(documents, settings, encoder, seconds)


def test_loader_holds_one_group_of_texts_at_a_time(tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for n in range(11):
        body = f"Document {n} tells how the lighthouse keeper logged ship {n} at dawn."
        (folder / f"d{n:02}.txt").write_text(body)
    for n in range(3):  # copies: committed after the originals, from the spool too
        (folder / f"copy{n}.txt").write_text(
            "Document 1 tells how the lighthouse keeper logged ship 1 at dawn."
        )
    stages = CountingStages()
    with Index.open(
        tmp_path / "index",
        create=True,
        model=MODEL,
        chunker="sentence",
        commit_every_documents=GROUP,
    ) as index:
        report = index.ingest([folder], stages=stages)
        assert report.files_seen == 14
        assert (report.documents_added, report.documents_copied) == (14, 3)
        assert len(stages.live_at_load) == 5  # 14 files in groups of 3
        assert max(stages.live_at_load) <= GROUP  # the group before, never more
        assert max(stages.prepared) <= GROUP
        gc.collect()
        assert stages.live == 0  # no loaded text outlives the run
        again = index.ingest([folder], stages=CountingStages())
        assert (again.documents_unchanged, again.documents_added) == (14, 0)
        hits = index.search("lighthouse keeper ship 7", k=1)
        assert Path(hits[0].key).name == "d07.txt"


def _stored_keys(index: Path) -> set[str]:
    with Index.open(index) as opened:
        return {entry.key for entry in opened.documents()}


def _wait_for(index: Path, keys: set[str], process: subprocess.Popen[bytes]) -> set[str]:
    """The stored keys once they hold ``keys`` (or the ingest ended, or 3 minutes passed)."""
    deadline = time.monotonic() + 180
    stored = _stored_keys(index)
    while not keys <= stored and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
        stored = _stored_keys(index)
    return stored


def test_ingest_from_an_open_pipe_commits_while_it_stays_open(tmp_path: Path) -> None:
    index = tmp_path / "index"
    Index.open(
        index, create=True, model=MODEL, chunker="sentence", commit_every_seconds=1.0
    ).close()
    command = [str(Path(sys.executable).parent / "ragkit"), "ingest", "-", "--index", str(index)]
    environment = {**os.environ, "HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment,
    )
    assert process.stdin is not None
    try:

        def send(key: str, text: str) -> None:
            assert process.stdin is not None
            process.stdin.write((json.dumps({"id": key, "text": text}) + "\n").encode())
            process.stdin.flush()

        send("boil", "Water boils at 100 degrees Celsius at sea level.")
        send("melt", "Ice melts at zero degrees.")
        assert _wait_for(index, {"boil", "melt"}, process) == {"boil", "melt"}
        assert process.poll() is None  # committed while the producer is quiet, pipe open
        send("cats", "Cats sleep most of the day.")
        assert _wait_for(index, {"cats"}, process) == {"boil", "melt", "cats"}
        assert process.poll() is None
        process.stdin.close()
        assert process.wait(timeout=120) == 0, process.stderr.read() if process.stderr else ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.stdout is not None
    assert "records seen 3 · documents added 3" in process.stdout.read().decode()
