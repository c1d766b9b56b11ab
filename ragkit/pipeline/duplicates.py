"""Exact duplicates cost nothing twice: a document whose content another document already has
is stored as a copy of it, and a text the encoder would embed twice is embedded once.

A document is a **copy** when its content hash (the bytes of its file, or of its record)
equals that of a stored document this ingest leaves alone, or of a document committed earlier
in this ingest. A copy keeps its own key, source, title and metadata — so filters, ``rm`` and
``--prune`` treat it as any document and removing one copy never touches the other — and
takes the chunks, vectors, matching keys, sparse terms, chunking record and language of the
document it copies: nothing is chunked or embedded again.

Example:
    >>> from ragkit.documents import Document, Identified
    >>> a = Document("/d/a.txt", "/d/a.txt", "Same text.", "h1", [], language="en")
    >>> b = Document("/d/b.txt", "/d/b.txt", "Same text.", "h1", [], language="en")
    >>> c = Document("/d/c.txt", "/d/c.txt", "Other.", "h2", [], language="en")
    >>> plan = plan_copies([a, b, c], {"/d/old.txt": "h2"})
    >>> [d.key for d in plan.originals], plan.copies
    (['/d/a.txt'], {'/d/b.txt': '/d/a.txt', '/d/c.txt': '/d/old.txt'})
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np

from ragkit.documents import Document, Identified
from ragkit.store import PendingDocument

I = TypeVar("I", bound=Identified)


@dataclass
class CopyPlan(Generic[I]):
    """The documents to chunk and embed (``originals``, in order) and the copies: copy key →
    the key of the document whose stored content it takes."""

    originals: list[I] = field(default_factory=list)
    copies: dict[str, str] = field(default_factory=dict)


def plan_copies(documents: Sequence[I], stable: Mapping[str, str]) -> CopyPlan[I]:
    """Split ``documents`` (new or changed) into originals and copies, given ``stable``: key →
    content hash of the stored documents this ingest neither changes nor removes."""
    holder = {content: key for key, content in stable.items()}
    plan: CopyPlan[I] = CopyPlan()
    for document in documents:
        first = holder.setdefault(document.content_hash, document.key)
        if first == document.key:
            plan.originals.append(document)
        else:
            plan.copies[document.key] = first
    return plan


def as_copy(document: Document, original: PendingDocument) -> PendingDocument:
    """``document`` with the stored content of ``original``: its chunks, vectors, keys, terms,
    chunking record and language decision (the terms were cut for that language).

    Example:
        >>> from ragkit.documents import Document, Identified
        >>> stored = PendingDocument(Document("a", "a", "Text.", "h", [], language="en"), [],
        ...                          np.zeros((0, 4), dtype=np.float32), [], [])
        >>> copy = as_copy(Document("b", "b", "Text.", "h", [], language="fr"), stored)
        >>> copy.document.key, copy.document.language
        ('b', 'en')
    """
    decided = original.document
    document = dataclasses.replace(
        document,
        script=decided.script,
        language=decided.language,
        language_confidence=decided.language_confidence,
        language_method=decided.language_method,
    )
    return PendingDocument(
        document,
        original.chunks,
        original.vectors,
        original.match_texts,
        original.terms,
        original.chunking,
    )


def embed_once(texts: Sequence[str], embed: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """One vector per text of ``texts``, in order, embedding each distinct text once.

    Example:
        >>> calls = []
        >>> def embed(batch):
        ...     calls.append(batch)
        ...     return np.array([[float(len(t))] for t in batch], dtype=np.float32)
        >>> embed_once(["ab", "c", "ab"], embed).ravel().tolist(), calls
        ([2.0, 1.0, 2.0], [['ab', 'c']])
    """
    position: dict[str, int] = {}
    for text in texts:
        position.setdefault(text, len(position))
    vectors = embed(list(position))
    return vectors[[position[text] for text in texts]]
