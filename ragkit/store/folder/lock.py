"""One writer per index folder: an exclusive ``flock`` on ``<index>/write.lock``.

A writer (``ragkit ingest``, ``ragkit doctor --repair``) holds the lock for the whole write.
A second writer either waits, saying once whom it waits for, or fails fast with an error that
names the holder — chosen by ``wait``. The kernel drops the lock when its holder dies (even by
SIGKILL), so a crashed writer never leaves the index locked. Readers take no lock: they see
the last committed generation (:mod:`ragkit.store`).

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> with WriteLock(folder, wait=False):
    ...     WriteLock(folder, wait=False).acquire()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ragkit.errors.IndexBusyError: ...: another writer (pid ...) is writing to this index; ...
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Self

from ragkit.errors import IndexBusyError, RagkitError

log = logging.getLogger(__name__)
LOCK_NAME = "write.lock"
_HELD: dict[Path, int] = {}  # index folder -> the thread of this process holding its lock


class WriteLock:
    """The index folder's writer lock; use as a context manager.

    ``wait``: True blocks until the other writer finishes, False raises at once, a number
    waits at most that many seconds. ``on_wait`` receives the message shown while waiting
    (default: logged as a warning).
    """

    def __init__(
        self,
        folder: Path,
        wait: bool | float = True,
        on_wait: Callable[[str], None] | None = None,
    ) -> None:
        self.path = Path(folder) / LOCK_NAME
        self.wait = wait
        self.on_wait = on_wait or log.warning
        self._fd: int | None = None

    def _holder(self) -> str:
        try:
            return self.path.read_text().strip() or "unknown"
        except OSError:
            return "unknown"

    def acquire(self) -> None:
        """Take the lock (waiting or failing as configured)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as error:
            raise RagkitError(
                f"{self.path.parent}: cannot write here ({error.strerror}); writing an index "
                "needs a folder this user may write (check its permissions, or copy the index "
                "to a writable place)"
            ) from error
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if self.wait is False:
                os.close(fd)
                raise IndexBusyError(
                    f"{self.path.parent}: another writer (pid {self._holder()}) is writing to "
                    "this index; wait for it to finish or run with --wait"
                ) from None
            self._block(fd)
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd
        _HELD[self.path.parent.resolve()] = threading.get_ident()

    def _block(self, fd: int) -> None:
        self.on_wait(
            f"{self.path.parent}: waiting for another writer (pid {self._holder()}) to finish"
        )
        deadline = None if self.wait is True else time.monotonic() + float(self.wait)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                if deadline is not None and time.monotonic() >= deadline:
                    os.close(fd)
                    raise IndexBusyError(
                        f"{self.path.parent}: still locked by another writer after "
                        f"{self.wait} s; try again later"
                    ) from None
                time.sleep(0.05)

    def release(self) -> None:
        if self._fd is not None:
            _HELD.pop(self.path.parent.resolve(), None)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Self:
        self.acquire()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.release()


def holds(folder: Path) -> bool:
    """Whether this thread holds ``folder``'s writer lock (another handle's thread writing in
    this process does not make this one a writer)."""
    return _HELD.get(Path(folder).resolve()) == threading.get_ident()


@contextmanager
def if_unlocked(folder: Path) -> Iterator[bool]:
    """Yield True when this process may write derived files now (it holds the lock, or took
    it without waiting); False while another writer works — then write nothing.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> with WriteLock(folder), if_unlocked(folder) as free:
        ...     free
        True
    """
    if holds(folder):
        yield True
        return
    lock = WriteLock(folder, wait=False)
    try:
        lock.acquire()
    except (RagkitError, OSError):  # another writer, or a folder this user cannot write
        yield False
        return
    try:
        yield True
    finally:
        lock.release()
