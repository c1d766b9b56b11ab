"""Reads made of several queries — vector search, BM25, then the rows of the hits — must see one
committed generation: a commit in between deletes the rows of replaced chunks, and the hits
found in the older generation would come back without them (fewer than ``k``).

:func:`one_generation` wraps such a read: it runs it again when a commit landed while it ran.
Commits are rare next to searches, so a search almost never runs twice, and a run during which
the committed generation stayed the same read vectors, terms and rows of that generation.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> from ragkit.config import Settings
    >>> from ragkit.store import FolderStore
    >>> class Reader:
    ...     def __init__(self, store: FolderStore) -> None:
    ...         self.store, self.runs = store, 0
    ...     @one_generation
    ...     def read(self) -> int:
    ...         self.runs += 1
    ...         if self.runs == 1:  # a writer commits while the first run reads
    ...             self.store.commit([])
    ...         return self.store.generation
    >>> reader = Reader(FolderStore.create(Path(tempfile.mkdtemp()) / "idx", Settings(), 4))
    >>> reader.read(), reader.runs
    (1, 2)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from ragkit.store.base import IndexReader

__all__ = ["one_generation"]

ATTEMPTS = 3  # after this many runs that each saw a commit, the last result is returned


class HasStore(Protocol):
    @property
    def store(self) -> IndexReader:
        """The store the read reads (it needs only :meth:`IndexReader.committed_generation`)."""
        ...


S = TypeVar("S", bound=HasStore)
P = ParamSpec("P")
R = TypeVar("R")


def one_generation(read: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """``read`` (a method of an object with a ``store``), run again when the committed
    generation changed while it ran, at most ``ATTEMPTS`` times."""

    @functools.wraps(read)
    def consistent(self: S, *args: P.args, **kwargs: P.kwargs) -> R:
        for _ in range(ATTEMPTS):
            before = self.store.committed_generation()
            result = read(self, *args, **kwargs)
            if self.store.committed_generation() == before:
                break
        return result

    return consistent
