"""When an ingest commits, and how much it chunks and embeds between two checks.

An ingest works in steps — a few documents chunked, normalized and embedded — and after each
step commits what it holds once ``commit_every_documents`` documents, ``commit_every_chunks``
chunks or ``commit_every_seconds`` seconds since its last commit are reached, whichever comes
first. A step is sized from the rate of the step before so that it takes about a quarter of
the interval and holds no more chunks than a commit: however long the documents, a kill loses
at most about one interval of work.

Example:
    >>> ticks = iter([0.0, 10.0, 40.0])
    >>> cadence = Cadence(documents=500, chunks=2_000, seconds=30.0, clock=ticks.__next__)
    >>> cadence.due(documents=20, chunks=300), cadence.due(documents=40, chunks=600)
    (False, True)
    >>> cadence.measured(chars=100_000, chunks=100, seconds=5.0)  # 20,000 chars/s, 1,000/chunk
    >>> cadence.step_chars()  # 7.5 s of work at that rate
    150000
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ragkit.config import Settings

FIRST_STEP_CHARS = 50_000  # before anything is measured: a dozen pages
STEP_SHARE = 0.25  # of the commit interval a step aims to take


@dataclass
class Cadence:
    """The commit limits of one ingest (``documents``, ``chunks``, ``seconds``) and the rate
    its steps went at; the interval is counted from construction and from each
    :meth:`committed`."""

    documents: int
    chunks: int
    seconds: float
    clock: Callable[[], float] = time.monotonic
    last_commit: float = field(init=False)
    _chars: int = field(default=0, init=False)
    _chunks: int = field(default=0, init=False)
    _per_second: float = field(default=0.0, init=False)  # characters, in the last step

    def __post_init__(self) -> None:
        self.last_commit = self.clock()

    @classmethod
    def of(cls, settings: Settings) -> Cadence:
        """The cadence ``settings`` ask for (``commit_every_*``)."""
        return cls(
            settings.commit_every_documents,
            settings.commit_every_chunks,
            settings.commit_every_seconds,
        )

    def due(self, documents: int, chunks: int) -> bool:
        """Whether ``documents`` holding ``chunks``, not committed yet, should be now."""
        return (
            documents >= self.documents
            or chunks >= self.chunks
            or self.clock() - self.last_commit >= self.seconds
        )

    def committed(self) -> None:
        """A commit happened: the interval starts again."""
        self.last_commit = self.clock()

    def measured(self, chars: int, chunks: int, seconds: float) -> None:
        """A step turned ``chars`` characters of documents into ``chunks`` embedded chunks in
        ``seconds``."""
        self._chars += chars
        self._chunks += chunks
        if seconds > 0:
            self._per_second = chars / seconds

    def step_chars(self) -> int:
        """Characters of documents to take into the next step: :data:`STEP_SHARE` of the
        interval at the last step's rate (the first one's includes loading the model, so it
        is not carried further), and no more than a commit's chunks at the characters per
        chunk seen so far."""
        if not self._per_second:
            return FIRST_STEP_CHARS
        per_chunk = self._chars / max(self._chunks, 1)
        by_time = self._per_second * self.seconds * STEP_SHARE
        return max(1, int(min(by_time, per_chunk * self.chunks)))
