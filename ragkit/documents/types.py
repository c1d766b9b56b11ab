"""The document record: text, origin, block boundaries, script and language.

Example:
    >>> doc = Document("a.txt", "a.txt", "Water boils.", content_hash(b"x"), [Block("paragraph", 0, 12)])
    >>> doc.script, doc.language
    ('Latn', 'en')
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Protocol

from ragkit.documents.discovery import SkippedFile
from ragkit.normalize.detect import LanguageGuess, detect_script, identify


@dataclass(frozen=True)
class Block:
    """A structural span of a document's text: ``text[start:end]`` is the block."""

    kind: str  # heading | paragraph | list | table | code
    start: int
    end: int


@dataclass
class Document:
    """One document: its text, where it came from, and its block boundaries.

    ``language`` is decided script first (:func:`ragkit.normalize.detect.identify`) unless
    given; ``language_confidence`` and ``language_method`` say how sure and what decided
    (``profile``: the text was too short to tell, the collection's language was taken).
    """

    key: str  # unique within an index: absolute source path, plus "#id" for records
    source: str
    text: str
    content_hash: str
    blocks: list[Block]
    title: str = ""
    external_id: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    script: str = ""
    language: str = ""
    language_confidence: float = 0.0
    language_method: str = ""

    def __post_init__(self) -> None:
        if not self.script:
            self.script = detect_script(self.text)
        if not self.language:
            self.decide_language(identify(self.text))

    def decide_language(self, guess: LanguageGuess) -> None:
        """Record a language decision (its language, confidence and method)."""
        self.language = guess.language
        self.language_confidence = guess.confidence
        self.language_method = guess.method

    @property
    def language_guess(self) -> LanguageGuess:
        """The recorded decision as a :class:`~ragkit.normalize.detect.LanguageGuess`."""
        return LanguageGuess(
            self.language,
            self.script,
            self.language_confidence,
            self.language_method or "default",  # type: ignore[arg-type]
        )


class Identified(Protocol):
    """What names a document in an index, without its text: a :class:`Document`, or the
    small record an ingest keeps of one while its text waits on disk."""

    @property
    def key(self) -> str: ...

    @property
    def source(self) -> str: ...

    @property
    def content_hash(self) -> str: ...


@dataclass
class LoadResult:
    documents: list[Document] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
