"""One ingest step's embedding on a worker thread while the next step is chunked.

Chunking and normalizing are Python on one core; embedding runs in ONNX Runtime (or torch),
which releases the interpreter while it computes. Done one after the other, a two-core machine
leaves a core idle through every chunking step. :class:`OneAhead` keeps at most one piece of
work running beside the caller: :meth:`OneAhead.push` starts the next piece and hands back the
one before it, finished, so results come back in order and at most two steps are held in
memory. Disabled, it runs each piece at once (what stages that schedule their own workers, or
that share the encoder with chunking, need).

Example:
    >>> with OneAhead(enabled=True) as ahead:
    ...     first = ahead.push(lambda: 1)
    ...     second = ahead.push(lambda: 2)
    ...     rest = ahead.drain()
    >>> first, second, rest
    ([], [1], [2])
    >>> with OneAhead(enabled=False) as inline:
    ...     inline.push(lambda: 1), inline.drain()
    ([1], [])
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import Any, Generic, TypeVar

T = TypeVar("T")
C = TypeVar("C", bound=Callable[..., Any])


def one_at_a_time(callback: C | None) -> C | None:
    """``callback`` behind a lock: progress is reported from the caller's thread and from the
    worker's, never from both at once.

    Example:
        >>> seen = []
        >>> report = one_at_a_time(lambda stage, done, total: seen.append((stage, done)))
        >>> report("embed", 3, 0), seen
        (None, [('embed', 3)])
        >>> one_at_a_time(None) is None
        True
    """
    if callback is None:
        return None
    lock = threading.Lock()

    def locked(*args: Any) -> Any:
        with lock:
            return callback(*args)

    return locked  # type: ignore[return-value]


class OneAhead(Generic[T]):
    """Runs pushed work on one worker thread, one piece at a time, beside the caller."""

    def __init__(self, enabled: bool) -> None:
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="ragkit-embed") if enabled else None
        self._running: Future[T] | None = None

    def push(self, work: Callable[[], T]) -> list[T]:
        """Start ``work``; return what the piece started before it gave (waiting for it), or
        with the worker disabled ``work``'s own result. An error of a piece is raised here."""
        if self._pool is None:
            return [work()]
        finished = self.drain()
        self._running = self._pool.submit(work)
        return finished

    def drain(self) -> list[T]:
        """The result of the piece still running (waited for), if any."""
        running, self._running = self._running, None
        return [running.result()] if running is not None else []

    def __enter__(self) -> OneAhead[T]:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        """Wait for the piece still running (its result unused when the caller failed), so
        nothing embeds after the ingest has returned or raised."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
