"""The document record: text, origin, block boundaries, script and language.

Example:
    >>> doc = Document("a.txt", "a.txt", "Water boils.", content_hash(b"x"), [Block("paragraph", 0, 12)])
    >>> doc.script, doc.language
    ('Latn', 'en')
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from ragkit.documents.discovery import SkippedFile
from ragkit.normalize.detect import detect_language, detect_script


@dataclass(frozen=True)
class Block:
    """A structural span of a document's text: ``text[start:end]`` is the block."""

    kind: str  # heading | paragraph | list | table | code
    start: int
    end: int


@dataclass
class Document:
    """One document: its text, where it came from, and its block boundaries."""

    key: str  # unique within an index: source path, plus "#id" for JSONL records
    source: str
    text: str
    content_hash: str
    blocks: list[Block]
    title: str = ""
    external_id: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    script: str = ""
    language: str = ""

    def __post_init__(self) -> None:
        if not self.script:
            self.script = detect_script(self.text)
        if not self.language:
            self.language = detect_language(self.text, self.script)


@dataclass
class LoadResult:
    documents: list[Document] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
