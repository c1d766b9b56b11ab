"""SQLite damage found while reading: one :class:`~ragkit.errors.IndexDamagedError` naming the database and the fix.

A damaged page may lie where only some reads reach it (the text of one chunk, a page of the
documents table): the index opens, and a query fails part-way with ``database disk image is
malformed`` or ``Could not decode to UTF-8``. :func:`names_damage` wraps the read methods of
:class:`ragkit.store.FolderStore` so such errors say which file is damaged and what to do,
instead of surfacing as a traceback. A busy or locked database is not damage: those errors pass unchanged.

Example:
    >>> import sqlite3
    >>> class Reader:
    ...     folder = Path("idx")
    ...     @names_damage
    ...     def read(self) -> None:
    ...         raise sqlite3.DatabaseError("database disk image is malformed")
    >>> try:
    ...     Reader().read()
    ... except IndexDamagedError as error:
    ...     print(str(error)[:64])
    idx/ragkit.sqlite: unreadable (database disk image is malformed)
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from ragkit.errors import IndexDamagedError
from ragkit.store.folder.schema import DB_NAME

__all__ = ["damaged", "names_damage"]


class HasFolder(Protocol):
    folder: Path


S = TypeVar("S", bound=HasFolder)
P = ParamSpec("P")
R = TypeVar("R")
_SHOWN = 120  # characters of SQLite's message shown (it may quote a whole damaged text)
_BUSY = {5, 6}  # SQLITE_BUSY, SQLITE_LOCKED (extended codes share the low byte)


def damaged(folder: Path, error: sqlite3.DatabaseError) -> IndexDamagedError:
    """The error to raise for ``error``, met reading the database of the index at ``folder``."""
    detail = str(error) if len(str(error)) <= _SHOWN else f"{str(error)[: _SHOWN - 1]}…"
    if detail == "malformed JSON":  # metadata with NaN or Infinity (ragkit.store.folder.metadata)
        return IndexDamagedError(
            f"{folder / DB_NAME}: metadata that is not JSON (NaN or Infinity, written by an "
            f"earlier release); run `ragkit doctor --index {folder} --repair` to drop those values"
        )
    return IndexDamagedError(
        f"{folder / DB_NAME}: unreadable ({detail}); restore the index folder from a backup, or "
        "delete it and ingest again"
    )


def names_damage(read: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """``read`` (a method of an object with a ``folder``), its SQLite errors made
    :func:`damaged` errors."""

    @functools.wraps(read)
    def named(self: S, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return read(self, *args, **kwargs)
        except sqlite3.DatabaseError as error:
            if getattr(error, "sqlite_errorcode", 0) & 0xFF in _BUSY:
                raise
            raise damaged(self.folder, error) from error

    return named
