"""Ingest in bounded memory: texts read in groups and kept on disk until their batch commits.

Planning an ingest needs every document (renames, key collisions, ``--prune``'s stale keys,
copies, the collection's languages and an ``auto`` model are decided before the first commit),
but none of it needs their texts. :func:`read_files` reads the files in groups of
``commit_every_documents`` and keeps of each document only a :class:`DocumentFacts` (key, file,
content hash, characters, letters, language guess); the texts of the documents the index does
not already hold go to a :class:`FileSpool` (a temporary file) and come back one at a time when
their batch is chunked and committed. Peak memory is then one group of texts plus the facts,
whatever the size of the corpus (``benchmarks/ingest_memory.py``).

Example:
    >>> from ragkit.documents import Document
    >>> spool = ListSpool([Document("a", "a", "Water boils.", "h1", [])])
    >>> facts = [DocumentFacts.of(document, 0) for document in spool.held]
    >>> facts[0].chars, facts[0].letters, [d.key for d in spool.documents([0])]
    (12, 10, ['a'])
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol, Self

from ragkit.documents import Block, Document, LoadResult, SkippedFile, iter_batches
from ragkit.normalize.detect import LanguageGuess
from ragkit.normalize.profile import resolve_language
from ragkit.pipeline.languages import collection_profile
from ragkit.pipeline.plan import without_oversized


@dataclass(frozen=True)
class DocumentFacts:
    """What an ingest keeps of a loaded document while its text waits: enough to plan
    (:class:`~ragkit.documents.Identified`), weigh its language in the collection and choose a
    model. ``position``: its text's place in the spool, -1 when the index already holds this
    content under this key (nothing to commit)."""

    key: str
    source: str
    content_hash: str
    chars: int
    letters: int
    guess: LanguageGuess
    position: int

    @classmethod
    def of(cls, document: Document, position: int) -> DocumentFacts:
        letters = sum(char.isalpha() for char in document.text)
        return cls(
            document.key,
            document.source,
            document.content_hash,
            len(document.text),
            letters,
            document.language_guess,
            position,
        )


class Spool(Protocol):
    """Documents put aside by position, read back in order."""

    def documents(self, positions: Iterable[int]) -> Iterator[Document]:
        """The documents at ``positions``, in position order, one at a time."""
        ...


class ListSpool:
    """Documents already in memory (records given from Python): nothing to put aside."""

    def __init__(self, documents: Sequence[Document]) -> None:
        self.held = list(documents)

    def documents(self, positions: Iterable[int]) -> Iterator[Document]:
        for position in sorted(positions):
            yield self.held[position]


class FileSpool:
    """Documents written as JSON lines into a temporary file (deleted on :meth:`close`);
    memory holds only their offsets. JSON, not pickle: nothing ragkit reads back can run code.

    Example:
        >>> from ragkit.documents import Block
        >>> with FileSpool() as spool:
        ...     at = spool.add(Document("a", "a", "Water.", "h", [Block("paragraph", 0, 6)],
        ...                             metadata={"year": 2021}, language="en"))
        ...     [(d.key, d.blocks, d.metadata, d.language) for d in spool.documents([at])]
        [('a', [Block(kind='paragraph', start=0, end=6)], {'year': 2021}, 'en')]
    """

    def __init__(self, folder: Path | None = None) -> None:
        # open for the spool's life, closed (and so deleted) by close()
        self._file: IO[bytes] = tempfile.TemporaryFile(  # noqa: SIM115
            prefix="ragkit-ingest-", dir=folder
        )
        self._offsets: list[int] = []

    def add(self, document: Document) -> int:
        """Put ``document`` aside; returns its position."""
        self._file.seek(0, 2)
        self._offsets.append(self._file.tell())
        fields = dataclasses.asdict(document)
        line = json.dumps(fields, ensure_ascii=False) + "\n"  # NaN kept, as records may hold
        self._file.write(line.encode("utf-8"))
        return len(self._offsets) - 1

    def documents(self, positions: Iterable[int]) -> Iterator[Document]:
        for position in sorted(positions):
            self._file.seek(self._offsets[position])
            fields = json.loads(self._file.readline().decode("utf-8"))
            fields["blocks"] = [Block(**block) for block in fields["blocks"]]
            yield Document(**fields)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class GroupLoader(Protocol):
    """How :func:`read_files` loads: ``IngestStages.load_files``."""

    def __call__(self, files: list[Path]) -> LoadResult: ...


def read_files(
    files: Sequence[Path],
    load_files: GroupLoader,
    group: int,
    longest: int,
    known: Mapping[str, str],
    spool: FileSpool,
) -> tuple[list[DocumentFacts], list[SkippedFile]]:
    """Load ``files`` ``group`` at a time: the facts of each document, in order, and the
    entries skipped (files that could not be read, then documents over ``longest``
    characters). The texts of documents whose content ``known`` (key → content hash of the
    stored documents) does not hold are put in ``spool``; no group outlives the next."""
    facts: list[DocumentFacts] = []
    unread: list[SkippedFile] = []
    oversized: list[SkippedFile] = []
    for batch in iter_batches(files, group):
        loaded = load_files(batch)
        unread.extend(loaded.skipped)
        kept = without_oversized(LoadResult(loaded.documents), longest)
        oversized.extend(kept.skipped)
        for document in kept.documents:
            stored = known.get(document.key) == document.content_hash
            facts.append(DocumentFacts.of(document, -1 if stored else spool.add(document)))
        del loaded, kept
    return facts, [*unread, *oversized]


def resolve_facts(
    held: Mapping[tuple[str, str], int], documents: Sequence[DocumentFacts]
) -> list[LanguageGuess]:
    """The language decision of each of ``documents`` with the collection (what the index
    holds, characters per ``(script, language)``, and ``documents``):
    :func:`ragkit.pipeline.languages.resolve_documents` without their texts.

    Example:
        >>> weak = LanguageGuess("it", "Latn", 0.2, "statistical")
        >>> facts = [DocumentFacts("t", "t", "h", 20, 16, weak, 0)]
        >>> [g.language for g in resolve_facts({("Latn", "en"): 5_000}, facts)]
        ['en']
    """
    profile = collection_profile(held, [])
    for document in documents:
        profile.add("", document.guess, letters=document.letters)
    return [
        resolve_language("", profile, guess=document.guess, letters=document.letters)
        for document in documents
    ]
