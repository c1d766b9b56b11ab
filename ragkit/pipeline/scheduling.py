"""How an ingest's stages are scheduled: the :class:`IngestStages` protocol and
:class:`LocalStages`, which runs them in this process (the Prefect flow passes its own tasks,
:mod:`ragkit.flows.ingest`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import numpy as np

from ragkit.config import Settings
from ragkit.documents import (
    Document,
    LoadResult,
    SkippedFile,
    discover,
    load_files,
    max_file_bytes,
)
from ragkit.documents.load import report_reads
from ragkit.documents.options import LoadOptions
from ragkit.embed import Encoder
from ragkit.pipeline.stages import (
    DocumentChunker,
    PreparedDocument,
    chunk_embed,
    prepare,
)
from ragkit.store import IndexStore, PendingDocument

EncoderSource = Callable[[], Encoder]
"""The index's encoder, loaded on first call (the Prefect stages load their own per worker)."""


class IngestStages(Protocol):
    """The stages an ingest may schedule its own way: loading, preparing (chunk + normalize),
    embedding, and committing (always in the writer's process). ``seconds`` accumulates stage
    times into the report. :attr:`embeds_beside_chunking`: whether one step's :meth:`embed`
    may run on a worker thread while the next step's :meth:`prepare` runs
    (:mod:`ragkit.pipeline.ahead`)."""

    embeds_beside_chunking: bool

    def discover(self, roots: list[Path]) -> tuple[list[Path], list[SkippedFile]]:
        """The files to read under ``roots``, and the entries passed over."""
        ...

    def load_files(self, files: list[Path]) -> LoadResult:
        """The documents of ``files`` (one group of those :meth:`discover` found, in order);
        what cannot be loaded is a skipped file."""
        ...

    def prepare(
        self,
        documents: list[Document],
        settings: Settings,
        encoder: EncoderSource,
        seconds: dict[str, float],
    ) -> list[PreparedDocument]:
        """``documents`` chunked and normalized, in order."""
        ...

    def embed(
        self,
        texts: list[str],
        settings: Settings,
        encoder: EncoderSource,
        progress: Callable[[int], None] | None,
    ) -> np.ndarray:
        """One vector per text, in order."""
        ...

    def commit(self, store: IndexStore, pending: list[PendingDocument]) -> int:
        """Commit one batch as a new generation, in this process (the one writer)."""
        ...


class LocalStages:
    """Every stage in this process, with the index's own encoder (``ragkit ingest``).

    The chunker is made once per settings, so adaptive scoring and the ``semantic`` chunker
    embed with the same encoder as the chunks. ``loading`` chooses the files read under the
    roots (include/exclude globs) and the text field of records. A step's passages embed on
    ONNX Runtime's threads while the next step is chunked on this one: on two cores that
    keeps both busy through the chunking steps.
    """

    embeds_beside_chunking = True

    def __init__(self, loading: LoadOptions | None = None) -> None:
        self._chunkers: dict[str, DocumentChunker] = {}
        self.loading = loading or LoadOptions()
        self._reads = (0, 0)  # files read, files found (reported while reading in groups)

    def discover(self, roots: list[Path]) -> tuple[list[Path], list[SkippedFile]]:
        files, skipped = discover(roots, self.loading)
        max_file_bytes()  # a bad RAGKIT_MAX_FILE_MB fails the whole run, not every file
        self._reads = (0, len(files))
        report_reads(0, len(files))
        return files, skipped

    def load_files(self, files: list[Path]) -> LoadResult:
        done, total = self._reads
        self._reads = (done + len(files), total)
        return load_files(files, self.loading, done, total)

    def prepare(
        self,
        documents: list[Document],
        settings: Settings,
        encoder: EncoderSource,
        seconds: dict[str, float],
    ) -> list[PreparedDocument]:
        key = settings.model_dump_json()
        if key not in self._chunkers:
            self._chunkers[key] = DocumentChunker(settings, embed=chunk_embed(settings, encoder))
        return prepare(documents, self._chunkers[key], settings, seconds)

    def embed(
        self,
        texts: list[str],
        settings: Settings,
        encoder: EncoderSource,
        progress: Callable[[int], None] | None,
    ) -> np.ndarray:
        return encoder().encode_passages(texts, progress=progress)

    def commit(self, store: IndexStore, pending: list[PendingDocument]) -> int:
        return store.commit(pending)
