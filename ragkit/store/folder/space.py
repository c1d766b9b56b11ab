"""A full disk met while writing an index folder: one error naming the folder, the space free
on its disk and about how much the write needed.

The disk fills in three voices: an :class:`OSError` with ``ENOSPC`` (or ``EDQUOT``, a quota),
SQLite's ``database or disk is full``, and FAISS's ``RuntimeError`` whose message ends in
``(No space left on device)``; :func:`is_disk_full` knows each, and :func:`disk_full` is the
one :class:`~ragkit.errors.RagkitError` raised instead (the write that failed was undone by
its caller, so the message says what the index still holds).

Example:
    >>> import tempfile
    >>> full = OSError(errno.ENOSPC, "No space left on device")
    >>> is_disk_full(full)
    True
    >>> print(disk_full(Path(tempfile.mkdtemp()), 5 * 2**20, "generation 3 is unchanged"))  # doctest: +ELLIPSIS
    /...: the disk is full (... free there; this write needs about 5.0 MiB); free space or move the index folder, then run the command again (generation 3 is unchanged)
"""

from __future__ import annotations

import errno
import shutil
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from ragkit.errors import RagkitError
from ragkit.store.records import PendingDocument

_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)
_FULL_WORDS = ("No space left on device", "Disk quota exceeded")


def is_disk_full(error: BaseException) -> bool:
    """Whether ``error`` says the disk (or the user's quota) is full.

    Example:
        >>> is_disk_full(sqlite3.OperationalError("database or disk is full"))
        True
        >>> is_disk_full(RuntimeError("write error in x.faiss: 8 != 64 (No space left on device)"))
        True
        >>> is_disk_full(OSError(errno.EACCES, "Permission denied"))
        False
    """
    if isinstance(error, OSError):
        return error.errno in _FULL_ERRNOS
    if isinstance(error, sqlite3.Error):
        return getattr(error, "sqlite_errorcode", 0) == sqlite3.SQLITE_FULL or (
            "database or disk is full" in str(error)
        )
    return isinstance(error, RuntimeError) and any(word in str(error) for word in _FULL_WORDS)


def size(count: int) -> str:
    """``count`` bytes in KiB below a MiB, else in MiB.

    Example:
        >>> size(3 * 2**19), size(2000), size(10), size(0)
        ('1.5 MiB', '2 KiB', '1 KiB', '0 KiB')
    """
    if count < 2**20:
        return f"{round(count / 2**10) or min(count, 1)} KiB"
    return f"{count / 2**20:,.1f} MiB"


def disk_full(folder: Path, needed: int | None, state: str) -> RagkitError:
    """The error for a write of about ``needed`` bytes (None: not known) into ``folder`` that
    found its disk full; ``state`` says what the index still holds."""
    try:
        free = size(shutil.disk_usage(folder).free)
    except OSError:
        free = "unknown space"
    needs = f"; this write needs about {size(needed)}" if needed is not None else ""
    return RagkitError(
        f"{folder}: the disk is full ({free} free there{needs}); free space or move the index "
        f"folder, then run the command again ({state})"
    )


def commit_bytes(pending: Iterable[PendingDocument], index_bytes: int) -> int:
    """About how many bytes a commit of ``pending`` writes: SQLite's rows twice (its
    write-ahead log, then the database: each document's text, its chunks' texts, matching keys,
    terms and vectors) and, at most, the whole vector index again (``index_bytes`` now, plus the
    new vectors) when a new main index is written.

    Example:
        >>> commit_bytes([], 4096)
        4096
    """
    rows = added = 0
    for item in pending:
        text = len(item.document.text.encode("utf-8", "surrogatepass"))
        keys = sum(len(key.encode("utf-8", "surrogatepass")) for key in item.match_texts)
        terms = sum(len(term.encode("utf-8", "surrogatepass")) for term in item.terms)
        rows += 2 * text + keys + terms + item.vectors.nbytes
        added += item.vectors.nbytes
    return 2 * rows + index_bytes + added
