"""Ingest reads a folder in groups and keeps their texts on disk until their batch commits:
memory holds at most one group of loaded texts, whatever the corpus size (issue 44, item 6)."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path

from conftest import MODEL
from ragkit import Index
from ragkit.config import Settings
from ragkit.documents import Document, LoadResult
from ragkit.pipeline import LocalStages
from ragkit.pipeline.ingest import EncoderSource
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
