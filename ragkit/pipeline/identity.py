"""Document identity across ingests: stored documents renamed instead of embedded again.

A key is the document's absolute, normalized path (plus ``#id`` for a record:
:func:`ragkit.documents.discovery.document_key`). Before planning, an ingest renames stored
documents in place (their chunks and vectors kept) when :func:`plan_renames` finds

- **a key written as a relative path** (indexes built before keys were absolute) whose
  absolute form, taken against the current folder, is the key of a loaded document: the folder
  it was relative to is unknown, so it is migrated only when a loaded document claims it; if
  that absolute key is already stored too, the relative one is a duplicate and is removed;
- **a moved or renamed file**: a loaded document with a new key whose content hash (and
  ``#id`` part) equals that of a stored document whose file no longer exists. Only stored
  documents with absolute sources take part: whether a relative one's file exists cannot be
  told.

Example:
    >>> import os
    >>> from ragkit.documents import Document
    >>> moved = Document("/docs/new.txt", "/docs/new.txt", "Text.", "h1", [])
    >>> stored = {"/docs/old.txt": StoredIdentity("/docs/old.txt", "h1")}
    >>> plan_renames([moved], stored, exists=lambda path: False).renames
    {'/docs/old.txt': ('/docs/new.txt', '/docs/new.txt')}
    >>> old = {"a.txt": StoredIdentity("a.txt", "h0")}
    >>> here = Document(os.path.abspath("a.txt"), os.path.abspath("a.txt"), "Text.", "h2", [])
    >>> plan_renames([here], old).renames == {"a.txt": (here.key, here.source)}
    True
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from ragkit.documents import Identified, document_key


@dataclass(frozen=True)
class StoredIdentity:
    """What identifies a stored document besides its key: its file and content hash."""

    source: str
    content_hash: str


@dataclass
class RenamePlan:
    """Stored documents to rename (old key → (new key, new source)) and relative-key
    duplicates of documents already stored under their absolute key (to remove)."""

    renames: dict[str, tuple[str, str]] = field(default_factory=dict)
    duplicates: list[str] = field(default_factory=list)


def fragment(key: str, source: str) -> str:
    """The part of ``key`` after its file (``#id`` for a record, empty for a file).

    Example:
        >>> fragment("/docs/c.jsonl#7", "/docs/c.jsonl"), fragment("/docs/a.txt", "/docs/a.txt")
        ('#7', '')
    """
    return key.removeprefix(source)


def plan_renames(
    documents: Sequence[Identified],
    stored: Mapping[str, StoredIdentity],
    exists: Callable[[str], bool] = os.path.exists,
) -> RenamePlan:
    """Which ``stored`` documents (key → identity) the loaded ``documents`` rename: relative
    keys migrated to their absolute form, then moved files matched by content hash (each
    stored document at most once; ``exists`` tells whether a stored file is still there)."""
    plan = RenamePlan()
    loaded = {d.key: d for d in documents}
    for key, identity in stored.items():
        if os.path.isabs(identity.source):
            continue
        document = loaded.get(document_key(identity.source) + fragment(key, identity.source))
        if document is None:
            continue
        if document.key in stored:
            plan.duplicates.append(key)
        else:
            plan.renames[key] = (document.key, document.source)
    claimed = {new for new, _ in plan.renames.values()}
    new = [d for d in documents if d.key not in stored and d.key not in claimed]
    gone = _gone(stored, loaded.keys() | plan.renames.keys(), exists) if new else {}
    for document in new:
        candidates = gone.get((document.content_hash, fragment(document.key, document.source)))
        if candidates:
            plan.renames[candidates.pop(0)] = (document.key, document.source)
    return plan


def _gone(
    stored: Mapping[str, StoredIdentity], taken: AbstractSet[str], exists: Callable[[str], bool]
) -> dict[tuple[str, str], list[str]]:
    """Stored documents (not in ``taken``) whose absolute source file no longer exists, by
    (content hash, ``#id`` part); each file is checked once."""
    present: dict[str, bool] = {}
    gone: dict[tuple[str, str], list[str]] = {}
    for key, identity in stored.items():
        source = identity.source
        if key in taken or not os.path.isabs(source):
            continue
        if source not in present:
            present[source] = exists(source)
        if not present[source]:
            gone.setdefault((identity.content_hash, fragment(key, source)), []).append(key)
    return gone
