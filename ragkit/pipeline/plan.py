"""Planning an ingest: which loaded documents may be stored, and which stored ones are gone.

A document's key (its absolute path, plus ``#id`` for a record) names it in the index, so
two documents with one key cannot both be stored: :func:`without_key_collisions` keeps the
first and reports the others. Chunking and embedding cost grows with a document's length, so
documents longer than :func:`max_document_chars` are reported instead (:func:`without_oversized`),
as are those whose id, key, source or title no backend stores
(:func:`ragkit.store.records.oversized_field`). ``--prune`` removes only what is positively gone
(:func:`stale_keys`; given records only by :func:`stale_records`): a root must exist (:func:`check_roots_exist`) and nothing below a file or
folder that could not be read is removed.

Example:
    >>> from ragkit.documents import Document
    >>> record = Document("c.jsonl#x.md", "c.jsonl", "Record text.", "h1", [])
    >>> file = Document("c.jsonl#x.md", "c.jsonl#x.md", "File text.", "h2", [])
    >>> kept = without_key_collisions(LoadResult([record, file]), {})
    >>> [d.source for d in kept.documents], [s.path for s in kept.skipped]
    (['c.jsonl'], ['c.jsonl#x.md'])
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ragkit.documents import (
    Identified,
    LoadResult,
    SkippedFile,
    display_path,
    document_key,
)
from ragkit.documents.given import is_record_source
from ragkit.environment import read
from ragkit.errors import RagkitError
from ragkit.store.records import oversized_field

SHOWN_KEY = 200  # characters of a skipped document's key shown in reports
I = TypeVar("I", bound=Identified)


def max_document_chars() -> int:
    """The longest document text an ingest chunks: ``RAGKIT_MAX_DOCUMENT_CHARS`` characters
    (default 4,000,000, about 2,000 pages). Chunking and embedding time grow with the text
    (adaptive chunking: minutes per million characters), so a longer document — one huge
    line or a whole library in one file — is refused with its length instead.

    Example:
        >>> import os
        >>> max_document_chars() == int(os.environ.get("RAGKIT_MAX_DOCUMENT_CHARS", 4_000_000))
        True
    """
    return read("max_document_chars")


def without_oversized(loaded: LoadResult, limit: int) -> LoadResult:
    """``loaded`` without the documents whose text is longer than ``limit`` characters, or
    whose id, key, source or title is too long to store, each reported as skipped (its key
    shortened when long).

    Example:
        >>> from ragkit.documents import Document
        >>> long = Document("a.txt", "a.txt", "x" * 50, "h", [], language="en")
        >>> [s.reason for s in without_oversized(LoadResult([long]), 10).skipped]
        ['50 characters is over the 10-character document limit; split it or raise RAGKIT_MAX_DOCUMENT_CHARS']
    """
    result = LoadResult(skipped=list(loaded.skipped))
    for document in loaded.documents:
        reason = oversized_field(document)
        if reason is None and len(document.text) > limit:
            reason = (
                f"{len(document.text):,} characters is over the {limit:,}-character document "
                "limit; split it or raise RAGKIT_MAX_DOCUMENT_CHARS"
            )
        if reason is None:
            result.documents.append(document)
            continue
        key = display_path(document.key)
        shown = key if len(key) <= SHOWN_KEY else f"{key[:SHOWN_KEY]}… ({len(key):,} characters)"
        result.skipped.append(SkippedFile(shown, reason))
    return result


def without_key_collisions(loaded: LoadResult, sources: dict[str, str]) -> LoadResult:
    """``loaded`` without the documents whose key is already taken — by a document loaded
    before it, or by a stored document of another file (``sources``: key → file) — each
    reported as skipped with the file that holds the key."""
    kept, skipped = first_of_each_key(loaded.documents, sources)
    return LoadResult(kept, [*loaded.skipped, *skipped])


def first_of_each_key(
    documents: Sequence[I], sources: dict[str, str]
) -> tuple[list[I], list[SkippedFile]]:
    """:func:`without_key_collisions` of any documents or their :class:`Identified` records:
    those kept, and one skipped entry for each of the others."""
    taken: dict[str, str] = {}
    kept: list[I] = []
    skipped: list[SkippedFile] = []
    for document in documents:
        owner = taken.get(document.key) or sources.get(document.key, document.source)
        if document.key in taken or owner != document.source:
            if is_record_source(document.source):
                place, fix = f"id {document.key!r}", "give the record another id"
            else:
                place = display_path(document.key)
                fix = "rename the file (keys are file paths, plus '#id' for JSONL records)"
            reason = f"document key already taken by {display_path(owner)}; {fix}"
            skipped.append(SkippedFile(place, reason))
            continue
        taken[document.key] = document.source
        kept.append(document)
    return kept, skipped


@dataclass(frozen=True)
class PruneGuard:
    """Limits on what a prune may remove. ``max_delete``: at most this many documents (``20``)
    or this share of the stored ones (``"10%"``), like rsync's ``--max-delete``; None: no
    limit. ``allow_empty``: a root that yields no file at all (an unmounted share, an emptied
    folder) or a records call that gives no record may remove what was indexed from it.

    Example:
        >>> PruneGuard("10%").limit(200), PruneGuard(20).limit(200), PruneGuard().limit(200)
        (20, 20, None)
    """

    max_delete: int | str | None = None
    allow_empty: bool = False

    def __post_init__(self) -> None:
        self.limit(0)  # a malformed --max-delete fails before anything is read

    def limit(self, stored: int) -> int | None:
        """The most documents a prune may remove from an index of ``stored`` documents."""
        value = self.max_delete
        if value is None:
            return None
        text = str(value).strip()
        number = text.removesuffix("%")
        if isinstance(value, bool) or not number.isdigit():
            raise RagkitError(
                f"--max-delete {value!r}: give a number of documents (e.g. 50) or a share of "
                "the stored ones (e.g. 10%)"
            )
        if text.endswith("%"):
            return stored * int(number) // 100
        return int(number)

    def check(self, gone: Sequence[str], stored: int) -> None:
        """Refuse (nothing removed) when ``gone`` is more than :meth:`limit` allows."""
        limit = self.limit(stored)
        if limit is not None and len(gone) > limit:
            raise RagkitError(
                f"--prune would remove {len(gone)} of {stored} documents, over --max-delete "
                f"{self.max_delete}; nothing was removed (raise --max-delete, or check the "
                "paths)"
            )


def check_roots_yield(
    roots: Sequence[Path],
    documents: Sequence[Identified],
    skipped: Sequence[SkippedFile],
    sources: dict[str, str],
) -> None:
    """Refuse to prune under a root that yields no file now although documents were indexed
    from it: an unmounted network share leaves an empty mount point, and "everything there
    was deleted" is almost never what happened (:attr:`PruneGuard.allow_empty` overrides).

    Example:
        >>> check_roots_yield([Path("/mnt/share")], [], [], {"/mnt/share/a.txt": "/mnt/share/a.txt"})
        Traceback (most recent call last):
        ...
        ragkit.errors.RagkitError: /mnt/share: no file found there now, but documents indexed from it: 1 (an unmounted share or an emptied folder?); nothing was removed — pass --prune-empty to remove them
    """
    found = {_parts(d.source) for d in documents} | {_parts(s.path) for s in skipped}
    for root in roots:
        within = {_parts(root)}
        if any(_below_any(parts, within) for parts in found):
            continue
        held = [
            key
            for key, source in sources.items()
            if not is_record_source(source) and _below_any(_parts(source), within)
        ]
        if held:
            raise RagkitError(
                f"{root}: no file found there now, but documents indexed from it: "
                f"{len(held)} (an unmounted share or an emptied folder?); nothing was removed — "
                "pass --prune-empty to remove them"
            )


def check_roots_exist(roots: Sequence[Path]) -> None:
    """Refuse to prune under a root that is missing: a typo or an unmounted disk must not read
    as "every document there was deleted"."""
    for root in roots:
        if not root.exists():
            raise RagkitError(
                f"{root}: no such file or folder; --prune removes documents only under paths "
                "that exist (check the path, or run without --prune)"
            )


def stale_records(
    present: Collection[str], complete: bool, source: str, sources: dict[str, str]
) -> list[str]:
    """Keys of stored records of ``source`` (``sources``: key → source) that were not given:
    not among the ids ``present`` (those of valid records, and of skipped ones, whose stored
    versions are kept); nothing when not ``complete`` (an entry without an id was skipped:
    :class:`~ragkit.documents.given.RecordReader`).

    Example:
        >>> from ragkit.documents.given import RecordReader
        >>> reader = RecordReader()
        >>> _ = reader.read([{"id": "a", "text": "A."}, {"id": "b", "text": ""}])
        >>> stored = {"a": "<records>", "b": "<records>", "c": "<records>", "/d.txt": "/d.txt"}
        >>> stale_records(reader.present(), reader.complete, "<records>", stored)
        ['c']
    """
    if not complete:
        return []
    return [key for key, held in sources.items() if held == source and key not in present]


def stale_keys(
    documents: Sequence[Identified],
    roots: list[Path],
    sources: dict[str, str],
    skipped: list[SkippedFile],
) -> list[str]:
    """Keys of stored documents (``sources``: key → file) that are positively gone: their file
    lies under one of ``roots`` and this ingest did not find them, although neither the file
    nor a folder above it was passed over for a read error. A JSONL file with lines that did
    not parse keeps all its records (a bad line may hold any of them). Paths are compared
    absolute (:func:`~ragkit.documents.discovery.document_key`): roots and skipped paths as
    typed, and sources stored relative by earlier versions, against the current folder.

    Example:
        >>> gone = SkippedFile("/docs/locked", "cannot list folder (Permission denied)")
        >>> sources = {"/docs/a.txt": "/docs/a.txt", "/docs/locked/b.txt": "/docs/locked/b.txt"}
        >>> stale_keys([], [Path("/docs/../docs")], sources, [gone])
        ['/docs/a.txt']
    """
    present = {d.key for d in documents}
    sources = {key: source for key, source in sources.items() if not is_record_source(source)}
    within_roots = {_parts(r) for r in roots}
    unread = {_parts(s.path) for s in skipped if not s.empty}  # an empty file was read
    unread |= {
        _parts(jsonl)
        for jsonl, _, line in (s.path.rpartition(":") for s in skipped)
        if line.isdigit()
    }
    return [
        key
        for key, source in sources.items()
        if key not in present
        and _below_any(_parts(source), within_roots)
        and not _below_any(_parts(source), unread)
    ]


def _parts(path: str | Path) -> tuple[str, ...]:
    """The parts of ``path``'s document key (absolute, normalized).

    Example:
        >>> _parts("/docs/./sub/../a.txt")
        ('/', 'docs', 'a.txt')
    """
    return Path(document_key(path)).parts


def _below_any(parts: tuple[str, ...], folders: set[tuple[str, ...]]) -> bool:
    """Whether the path of ``parts`` is one of ``folders`` (as parts) or lies below one.

    Example:
        >>> _below_any(("/", "docs", "a.txt"), {("/", "docs")})
        True
    """
    return any(parts[:depth] in folders for depth in range(len(parts) + 1))
