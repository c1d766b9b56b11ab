"""Ingest progress wherever standard error goes: bars on a terminal, a line every 30 s in a log.

On a terminal, ``ragkit ingest`` draws one bar per stage (:func:`ragkit.cli.output.progress_bar`).
Outside one (cron, a Prefect flow, ``2> ingest.log``) bars would be noise, so
:class:`ProgressLog` prints one line every ``RAGKIT_PROGRESS_SECONDS`` seconds (default 30)
instead: elapsed time, files read, documents committed, chunks embedded, the rates and the
time left once a commit has measured it. ``--quiet`` shows neither.

Example:
    >>> lines = []
    >>> log = ProgressLog(30, lines.append, clock=iter([0, 60, 120, 600]).__next__)
    >>> log("files", 4_088, 4_088)  # read by 60 s
    >>> log("documents", 0, 3_900)
    >>> log("embed", 12_800, 12_800)  # the first batch embedded from 120 s, committed:
    >>> log("documents", 500, 3_900)
    >>> print(log.line())  # at 600 s
    ingest 10m00s · files read 4,088/4,088 · documents committed 500/3,900 (0.9/s) · chunks embedded 12,800 (26.7/s) · ETA 1h01m
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from types import TracebackType
from typing import Self

from ragkit.cli.output import errors, progress_bar, stage_progress
from ragkit.documents import reporting_reads
from ragkit.errors import RagkitError

DEFAULT_SECONDS = 30.0
Report = Callable[[str, int, int], None]  # (stage, done, total), as ragkit.pipeline reports


def progress_seconds() -> float:
    """Seconds between two progress lines in a log: ``RAGKIT_PROGRESS_SECONDS`` (default 30).

    Example:
        >>> progress_seconds() == float(os.environ.get("RAGKIT_PROGRESS_SECONDS", "30"))
        True
    """
    value = os.environ.get("RAGKIT_PROGRESS_SECONDS", str(DEFAULT_SECONDS))
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not seconds > 0 or seconds == float("inf"):
        raise RagkitError(
            f"RAGKIT_PROGRESS_SECONDS={value!r}: give the seconds between progress lines in a "
            "log, a number over 0 (default 30)"
        )
    return seconds


def duration(seconds: float) -> str:
    """``seconds`` as ``45s``, ``2m30s`` or ``1h02m``.

    Example:
        >>> duration(45.2), duration(150), duration(3720)
        ('45s', '2m30s', '1h02m')
    """
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


class ProgressLog:
    """An ingest progress callback (``(stage, done, total)``: ``files``, ``documents``,
    ``chunk``, ``embed``) that keeps the counts, and, entered as a context, a thread that
    ``write``\\ s :meth:`line` every ``interval`` seconds until the block ends.

    ``embed`` counts restart with each commit batch; the chunks of committed batches are kept.
    The ETA is the documents left at the rate documents were committed since the first
    ``documents`` report, so it appears after the first commit.
    """

    def __init__(
        self,
        interval: float,
        write: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.interval = interval
        self.write = write
        self.clock = clock
        self.started = clock()
        self.files: tuple[int, int] | None = None
        self.documents: tuple[int, int] | None = None
        self.documents_since = 0.0  # when the documents to commit were known
        self.chunks_committed = 0  # chunks embedded in batches already committed
        self.chunks_batch = 0  # chunks embedded in the current batch
        self.chunks_since: float | None = None  # when the first chunk was embedded
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        with self._lock:
            if stage == "files":
                self.files = (done, total)
            elif stage == "documents":
                if self.documents is None:
                    self.documents_since = self.clock()
                self.documents = (done, total)
                self.chunks_committed += self.chunks_batch  # a commit ends a batch
                self.chunks_batch = 0
            elif stage == "embed":
                if self.chunks_since is None:
                    self.chunks_since = self.clock()
                self.chunks_batch = done

    def line(self) -> str:
        """The state now, as one line (``ingest 2m30s · files read 1,200/4,088 (40.0/s) · …``)."""
        with self._lock:
            now = self.clock()
            parts = [f"ingest {duration(now - self.started)}"]
            if self.files is None and self.documents is None:
                parts.append("reading input")
            if self.files is not None:
                done, total = self.files
                reading = self.documents is None and 0 < done < total
                rate = f" ({_rate(done, now - self.started)})" if reading else ""
                parts.append(f"files read {done:,}/{total:,}{rate}")
            if self.documents is not None:
                done, total = self.documents
                rate = f" ({_rate(done, now - self.documents_since)})" if done else ""
                parts.append(f"documents committed {done:,}/{total:,}{rate}")
                chunks = self.chunks_committed + self.chunks_batch
                since = now - self.chunks_since if self.chunks_since is not None else 0.0
                rate = f" ({_rate(chunks, since)})" if chunks else ""
                parts.append(f"chunks embedded {chunks:,}{rate}")
                if 0 < done < total:
                    left = (total - done) * (now - self.documents_since) / done
                    parts.append(f"ETA {duration(left)}")
            return " · ".join(parts)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.write(self.line())

    def __enter__(self) -> Self:
        self._thread = threading.Thread(target=self._run, name="ragkit-progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def _rate(count: int, seconds: float) -> str:
    return f"{count / seconds:,.1f}/s" if seconds > 0 else "-"


def _write_line(line: str) -> None:
    errors.print(line, markup=False, highlight=False, soft_wrap=True)


@contextmanager
def ingest_progress(labels: Mapping[str, str], quiet: bool = False) -> Iterator[Report | None]:
    """The progress callback of an ingest, or None with ``quiet``: bars described by
    ``labels`` on a terminal, a :class:`ProgressLog` line every :func:`progress_seconds`
    otherwise; files read are reported too (:func:`ragkit.documents.reporting_reads`)."""
    if quiet:
        yield None
        return
    with ExitStack() as stack:
        report: Report
        if errors.is_terminal:
            report = stage_progress(stack.enter_context(progress_bar()), labels)
        else:
            report = stack.enter_context(ProgressLog(progress_seconds(), _write_line))
        stack.enter_context(reporting_reads(lambda done, total: report("files", done, total)))
        yield report
