"""What an ingest reports: :class:`IngestReport` (counts, skipped files, seconds per stage) and
the progress callback it calls while it runs.

Example:
    >>> IngestReport(files_seen=2, documents_added=2).as_dict()["documents_added"]
    2
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragkit.documents import (
    Identified,
    SkippedFile,
)

ProgressCallback = Callable[[str, int, int], None]
"""``(stage, done, total)``, each count from the start of the run, a total of 0 unknown: per
phase, ``("chunk", n, total)`` documents chunked, ``("embed", n, 0)`` chunks embedded (per
encoder batch while a step embeds; how many there will be is not known before chunking) and
``("documents", n, total)`` documents committed; all three are reported (``n = 0``) once the
documents to ingest are known, in that order. Records read over time (:meth:`Ingest.run_records`)
raise the totals as each window of them is read."""

# The stages timed after loading, in IngestReport.seconds (then "sparse", BM25 once at the end).
TIMED = ("chunk", "normalize", "embed", "commit", "near_duplicates")


@dataclass
class IngestReport:
    """What an ingest did: counts, per-file skip reasons and time per stage (seconds)."""

    files_seen: int = 0
    records_seen: int = 0  # records given from Python or standard input (Index.add)
    documents_added: int = 0
    documents_unchanged: int = 0
    documents_removed: int = 0
    documents_renamed: int = 0
    chunks_added: int = 0
    chunks_embedded: int = 0  # distinct texts embedded (a text repeated is embedded once)
    documents_copied: int = 0  # copies of stored content: not chunked or embedded again
    near_duplicate_documents: int = 0  # after this run: documents in near-duplicate groups
    near_duplicate_groups: int = 0
    skipped: list[SkippedFile] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    generation: int = 0
    model_choice: str = ""  # the model an ``auto`` index chose at this ingest, and why
    languages_from_collection: int = 0  # documents too short to tell, given the collection's

    def record_loaded(self, documents: Sequence[Identified], skipped: list[SkippedFile]) -> None:
        """Count the files seen (those that gave documents, and skipped ones) and keep the
        skip reasons."""
        self.skipped = list(skipped)
        self.files_seen = len({d.source for d in documents}) + len(skipped)

    def as_dict(self) -> dict[str, Any]:
        return {
            "files_seen": self.files_seen,
            "records_seen": self.records_seen,
            "documents_added": self.documents_added,
            "documents_unchanged": self.documents_unchanged,
            "documents_removed": self.documents_removed,
            "documents_renamed": self.documents_renamed,
            "chunks_added": self.chunks_added,
            "chunks_embedded": self.chunks_embedded,
            "documents_copied": self.documents_copied,
            "near_duplicate_documents": self.near_duplicate_documents,
            "near_duplicate_groups": self.near_duplicate_groups,
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
            "seconds": self.seconds,
            "generation": self.generation,
            "model_choice": self.model_choice,
            "languages_from_collection": self.languages_from_collection,
        }
