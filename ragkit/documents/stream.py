"""Records that arrive over time — ``ragkit ingest -`` on a pipe that stays open, a generator
given to :meth:`ragkit.Index.add` — cut into windows an ingest commits one after the other, so
what was given is searchable while the input goes on and memory holds one window.

A window closes after ``size`` records, once ``seconds`` passed since its first record, or at a
:data:`PAUSE`: :func:`timed_lines` reads a stream in a thread and puts a :data:`PAUSE` among its
lines when none came for ``seconds``, so records written before a producer went quiet are
committed without waiting for the next one.

Example:
    >>> list(windows(["a", "b", PAUSE, "c", "d", "e"], size=2, seconds=60))
    [['a', 'b'], ['c', 'd'], ['e']]
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any, Final


class Pause:
    """The marker of a producer gone quiet: an ingest commits the records before it."""

    def __repr__(self) -> str:
        return "PAUSE"


PAUSE: Final = Pause()


class _End:
    """What the reader thread puts last: the stream ended, or reading it failed (``error``)."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


def timed_lines(
    stream: IO[bytes], seconds: float, buffered: int = 1_000
) -> Iterator[bytes | Pause]:
    """The lines of ``stream``, read by a daemon thread (at most ``buffered`` lines ahead), with
    a :data:`PAUSE` each time ``seconds`` pass without one after the previous :data:`PAUSE`
    (or the start); an error reading the stream is raised here.

    Example:
        >>> import io
        >>> list(timed_lines(io.BytesIO(b'{"id": 1}\\n{"id": 2}\\n'), seconds=30))
        [b'{"id": 1}\\n', b'{"id": 2}\\n']
    """
    lines: queue.Queue[bytes | _End] = queue.Queue(maxsize=buffered)

    def read() -> None:
        try:
            for line in stream:
                lines.put(line)
        except BaseException as error:  # noqa: BLE001 - handed to the consumer, raised there
            lines.put(_End(error))
        else:
            lines.put(_End())

    threading.Thread(target=read, name="ragkit-stdin", daemon=True).start()
    deadline = time.monotonic() + seconds
    while True:
        try:
            line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            yield PAUSE
            deadline = time.monotonic() + seconds
            continue
        if isinstance(line, _End):
            if line.error is not None:
                raise line.error
            return
        yield line


def windows(
    records: Iterable[Any],
    size: int,
    seconds: float,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[list[Any]]:
    """``records`` in lists of at most ``size``, each closed as well once ``seconds`` passed
    since its first record (checked as the next one arrives) or at a :data:`PAUSE` (not kept).

    Example:
        >>> ticks = iter([0.0, 1.0, 90.0, 91.0])
        >>> list(windows("abcd", size=10, seconds=60, clock=ticks.__next__))
        [['a', 'b', 'c'], ['d']]
    """
    window: list[Any] = []
    opened = 0.0
    for record in records:
        if isinstance(record, Pause):
            if window:
                yield window
                window = []
            continue
        now = clock()
        if not window:
            opened = now
        window.append(record)
        if len(window) >= size or now - opened >= seconds:
            yield window
            window = []
    if window:
        yield window
