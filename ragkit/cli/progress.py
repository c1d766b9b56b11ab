"""Ingest progress wherever standard error goes: bars on a terminal, a line every 30 s in a log.

An ingest reports each phase as it goes (:data:`ragkit.pipeline.ProgressCallback`): files read,
documents chunked, chunks embedded, documents committed. On a terminal, ``ragkit ingest`` draws
one bar per phase (:func:`ragkit.cli.output.progress_bar`). Outside one (cron, a Prefect flow,
``2> ingest.log``) bars would be noise, so :class:`ProgressLog` prints one line every
``RAGKIT_PROGRESS_SECONDS`` seconds (default 30) instead: elapsed time, each phase's count, its
rate, and the time left. Both take rates and times left from rich's tasks, measured over the
last :data:`SPEED_WINDOW` seconds. ``--quiet`` shows neither.

Example:
    >>> lines, now = [], [0.0]
    >>> labels = {"files": "files read", "chunk": "documents chunked",
    ...           "embed": "chunks embedded", "documents": "documents committed"}
    >>> log = ProgressLog(30, lines.append, labels, clock=lambda: now[0])
    >>> def at(seconds, *event):
    ...     now[0] = seconds
    ...     log(*event)
    >>> at(10, "files", 4_088, 4_088)  # read by 10 s; then the totals are known:
    >>> at(60, "chunk", 0, 3_900); at(60, "embed", 0, 0); at(60, "documents", 0, 3_900)
    >>> at(120, "chunk", 100, 3_900); at(120, "embed", 1_000, 0)  # a step a minute
    >>> at(180, "chunk", 200, 3_900); at(180, "embed", 2_000, 0)
    >>> at(240, "documents", 200, 3_900)  # the first commit
    >>> now[0] = 600
    >>> print(log.line())
    ingest 10m00s · files read 4,088/4,088 · documents chunked 200/3,900 (1.7/s) · chunks embedded 2,000 (16.7/s) · documents committed 200/3,900 · ETA 37m00s
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from types import TracebackType
from typing import Self

from rich.progress import Progress

from ragkit.cli.output import errors, progress_bar, stage_progress
from ragkit.documents import reporting_reads
from ragkit.environment import read

# Rates and times left are measured over this many seconds: a phase moves in steps (a commit
# every ~30 s), so rich's default window (30 s) would often hold one step and no rate.
SPEED_WINDOW = 300.0
Report = Callable[[str, int, int], None]  # (stage, done, total), as ragkit.pipeline reports


def progress_seconds() -> float:
    """Seconds between two progress lines in a log: ``RAGKIT_PROGRESS_SECONDS`` (default 30).

    Example:
        >>> import os
        >>> progress_seconds() == float(os.environ.get("RAGKIT_PROGRESS_SECONDS", "30"))
        True
    """
    return float(read("progress_seconds"))


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
    """An ingest progress callback (``(stage, done, total)``) that keeps one rich task per
    stage, described by ``labels``, without drawing it; entered as a context, a thread
    ``write``\\ s :meth:`line` every ``interval`` seconds until the block ends."""

    def __init__(
        self,
        interval: float,
        write: Callable[[str], None],
        labels: Mapping[str, str],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.interval = interval
        self.write = write
        self.clock = clock
        self.started = clock()
        self.tasks = Progress(disable=True, get_time=clock, speed_estimate_period=SPEED_WINDOW)
        self._report = stage_progress(self.tasks, labels)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __call__(self, stage: str, done: int, total: int) -> None:
        with self._lock:
            self._report(stage, done, total)

    def line(self) -> str:
        """The state now, as one line (``ingest 2m30s · files read 1,200/4,088 · …``): each
        stage's count, its rate while it runs (once rich measured one), and the longest time
        left of them."""
        with self._lock:
            parts = [f"ingest {duration(self.clock() - self.started)}"]
            if not self.tasks.tasks:
                parts.append("reading input")
            left = 0.0
            for task in self.tasks.tasks:
                count = f"{task.completed:,.0f}" + (f"/{task.total:,.0f}" if task.total else "")
                speed = None if task.finished else task.speed
                rate = f" ({speed:,.1f}/s)" if speed else ""
                parts.append(f"{task.description} {count}{rate}")
                if not task.finished and task.time_remaining is not None:
                    left = max(left, task.time_remaining)
            if left:
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
            report = stage_progress(stack.enter_context(progress_bar(SPEED_WINDOW)), labels)
        else:
            report = stack.enter_context(ProgressLog(progress_seconds(), _write_line, labels))
        stack.enter_context(reporting_reads(lambda done, total: report("files", done, total)))
        yield report
