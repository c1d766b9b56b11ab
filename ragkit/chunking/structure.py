"""``structure``: split on the section markers the document itself uses.

Marker kinds ragkit looks for at line starts: markdown (``# Title``) and setext headings,
numbered sections (``1.2 Scope``, ``3. Results``), ``Article 5`` / ``Section 2`` / ``Chapter
IV`` (and their French, Spanish and German forms), Arabic ``المادة`` / ``الباب`` / ``الفصل`` /
``القسم`` / ``كتاب``, Amharic ``ክፍል`` / ``አንቀጽ`` / ``ምዕራፍ``, page breaks (form feed, ``Page 3``,
``- 3 -``) and short all-caps lines; blocks typed ``heading`` by the loader count too. A kind
is *inferred* as the document's marker when it occurs at least ``min_occurrences`` times (once
for markdown headings, page breaks and loader headings) on heading-like lines (short, and not
more than half of the document's lines, which would make it a list rather than structure).

An optional ``propose_pattern(sample) -> regex | None`` hook (e.g. an LLM shown the first
4,000 characters) may supply the marker instead; an invalid or unmatched regex falls back to
inference. Sections over the budget are cut at sentences by post-processing; a section under
``min_tokens`` (a bare heading, say) is joined to the section after it.

Example:
    >>> text = "المادة 1\\nنص المادة الأولى.\\nالمادة 2\\nنص المادة الثانية."
    >>> [m.kind for m in infer_markers(text)]
    ['arabic']
    >>> chunker = StructureChunker(max_tokens=40, min_tokens=1, counter=len)
    >>> [c.text.split("\\n")[0] for c in chunker.chunk(text)]
    ['المادة 1', 'المادة 2']
"""

from __future__ import annotations

import itertools
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ragkit.chunking.base import Chunker
from ragkit.chunking.context import DocumentContext
from ragkit.chunking.types import Span, TokenCounter
from ragkit.documents import Block

log = logging.getLogger(__name__)

ProposePattern = Callable[[str], "str | None"]
MAX_HEADING_CHARS = 100

MARKER_PATTERNS: dict[str, re.Pattern[str]] = {
    "markdown": re.compile(r"^#{1,6}[ \t]+\S", re.MULTILINE),
    # The lookahead keeps this linear in the line length ("[^\n]*\S[^\n]*\n" backtracks
    # quadratically on a long line without a newline).
    "setext": re.compile(r"^(?=[^\n]*\S)[^\n]*\n(?==+[ \t]*$|-{3,}[ \t]*$)", re.MULTILINE),
    "numbered": re.compile(r"^[ \t]*(?:\d{1,3}\.){0,3}\d{1,3}\.?[ \t]+\w[^\n]*$", re.MULTILINE),
    "article": re.compile(
        r"^[ \t]*(?:Article|ARTICLE|Art\.|Section|SECTION|Chapter|CHAPTER|Part|PART|Artículo"
        r"|Capítulo|Artikel|Kapitel|Abschnitt|Chapitre|Titre)[ \t]+(?:\d+|[IVXLC]+)\b[^\n]*$",
        re.MULTILINE,
    ),
    "arabic": re.compile(
        r"^[ \t]*(?:المادة|مادة|الباب|الفصل|القسم|الجزء|كتاب|باب)[ \t]+\S[^\n]*$", re.MULTILINE
    ),
    "amharic": re.compile(r"^[ \t]*(?:ክፍል|አንቀጽ|ምዕራፍ|ንዑስ አንቀጽ)[ \t]*\S[^\n]*$", re.MULTILINE),
    "page": re.compile(
        r"\f|^[ \t]*(?:-+[ \t]*)?(?:Page|PAGE|page|صفحة|ገጽ)[ \t]+\d+(?:[ \t]+of[ \t]+\d+)?"
        r"(?:[ \t]*-+)?[ \t]*$|^[ \t]*-[ \t]*\d+[ \t]*-[ \t]*$",
        re.MULTILINE,
    ),
    "caps": re.compile(r"^[ \t]*[^\n\w]*[A-Z][^\na-z]*$", re.MULTILINE),
}
_ALWAYS = frozenset({"markdown", "page"})
_LINE = re.compile(r"^[ \t]*\S[^\n]*$", re.MULTILINE)


@dataclass(frozen=True)
class Marker:
    """An inferred marker kind and the offsets of the lines it starts sections at."""

    kind: str
    starts: tuple[int, ...]


def _heading_like(text: str, start: int, end: int, kind: str) -> bool:
    line = text[start:end].strip()
    if kind == "page":
        return True
    if not line or len(line) > MAX_HEADING_CHARS:
        return False
    if kind == "caps":
        return sum(ch.isalpha() for ch in line) >= 3 and line.isupper()
    if kind == "numbered":
        return not line.endswith((".", ",", ";", ":")) or len(line) < 40
    return True


def infer_markers(
    text: str, blocks: Sequence[Block] = (), min_occurrences: int = 2
) -> list[Marker]:
    """The marker kinds this document uses, with their section start offsets.

    Example:
        >>> [m.kind for m in infer_markers("1. Scope\\nText here.\\n2. Terms\\nMore text.")]
        ['numbered']
    """
    lines = max(1, len(_LINE.findall(text)))
    markers: list[Marker] = []
    for kind, pattern in MARKER_PATTERNS.items():
        starts = tuple(
            m.end() if m.group().startswith("\f") else m.start()
            for m in pattern.finditer(text)
            if _heading_like(text, m.start(), m.end(), kind)
        )
        needed = 1 if kind in _ALWAYS else min_occurrences
        if len(starts) >= needed and (kind in _ALWAYS or len(starts) <= lines / 2):
            markers.append(Marker(kind, starts))
    headings = tuple(b.start for b in blocks if b.kind == "heading")
    if headings:
        markers.append(Marker("heading-blocks", headings))
    return markers


class StructureChunker(Chunker):
    """Sections from inferred (or proposed) markers; oversize sections split by sentences."""

    name = "structure"

    def __init__(
        self,
        max_tokens: int = 256,
        min_tokens: int | None = None,
        counter: TokenCounter | None = None,
        propose_pattern: ProposePattern | None = None,
        min_occurrences: int = 2,
    ) -> None:
        super().__init__(max_tokens, min_tokens, counter)
        self.propose_pattern = propose_pattern
        self.min_occurrences = min_occurrences

    def section_starts(self, text: str, blocks: Sequence[Block]) -> list[int]:
        """Offsets where sections begin (always including 0)."""
        proposed = self._proposed(text)
        if proposed is not None:
            return sorted({0, *proposed})
        starts = {0}
        for marker in infer_markers(text, blocks, self.min_occurrences):
            starts.update(marker.starts)
        return sorted(starts)

    def _proposed(self, text: str) -> list[int] | None:
        if self.propose_pattern is None:
            return None
        pattern = self.propose_pattern(text[:4000])
        if not pattern:
            return None
        try:
            compiled = re.compile(pattern, re.MULTILINE)
        except re.error as error:
            log.warning("proposed section pattern %r is invalid (%s); inferring", pattern, error)
            return None
        starts = [m.start() for m in compiled.finditer(text)]
        if not starts:
            log.warning("proposed section pattern %r matches nothing; inferring", pattern)
            return None
        return starts

    def spans(self, context: DocumentContext) -> list[Span]:
        text = context.text
        bounds = [*self.section_starts(text, context.blocks), len(text)]
        sections = [(s, e) for s, e in itertools.pairwise(bounds) if e > s]
        joined: list[Span] = []
        pending: int | None = None  # start of a small section waiting for the next one
        for s, e in sections:
            start = s if pending is None else pending
            size = context.tokens_between(start, e)
            if size < self.min_tokens and (s, e) != sections[-1]:
                pending = start
                continue
            if pending is not None and size > self.max_tokens:
                joined.append((pending, s))  # the heading alone: post-processing merges it
                start = s
            joined.append((start, e))
            pending = None
        if pending is not None:
            joined.append((pending, len(text)))
        return joined
