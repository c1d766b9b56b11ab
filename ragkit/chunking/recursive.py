"""``recursive``: split on a separator hierarchy until every piece fits, then merge neighbours.

Levels, coarsest first: markdown headings, list items, blank lines, newlines, sentence ends
(the document's sentence units), clauses (``, ; :`` and ``، ؛ ፣ ፤ ፥``), spaces, characters.
A span over ``max_tokens`` is cut at every match of the first level present in it, each piece
still over the budget is split at the next levels, and the resulting pieces are merged with
their neighbours greedily up to the budget; pieces under ``min_tokens`` are merged into a
neighbour by post-processing.

Example:
    >>> chunker = RecursiveChunker(max_tokens=20, min_tokens=1, counter=len)
    >>> [c.text for c in chunker.chunk("# A\\nshort text\\n\\n# B\\nmore words here")]
    ['# A\\nshort text\\n\\n', '# B\\nmore words here']
"""

from __future__ import annotations

import itertools
import re

from ragkit.chunking.base import Chunker
from ragkit.chunking.context import DocumentContext
from ragkit.chunking.types import Span

SEPARATORS: tuple[re.Pattern[str] | None, ...] = (
    re.compile(r"\n+(?=#{1,6}\s)"),
    re.compile(r"\n+(?=[ \t]*(?:[-*+•]|\d+[.)])\s)"),
    re.compile(r"\n[ \t]*\n\s*"),
    re.compile(r"\n+"),
    None,  # sentence ends: the context's units
    re.compile(r"[,;:،؛፣፤፥]\s+"),
    re.compile(r"\s+"),
)


class RecursiveChunker(Chunker):
    """Separator-hierarchy split, then greedy merge of neighbouring pieces."""

    name = "recursive"

    def spans(self, context: DocumentContext) -> list[Span]:
        return [(s, e) for s, e, _ in self._split(context, 0, len(context.text), 0)]

    def _cuts(self, context: DocumentContext, start: int, end: int, level: int) -> list[int]:
        pattern = SEPARATORS[level]
        if pattern is None:
            i, j = context.unit_range(start, end)
            return [s for s, _ in context.units[i:j] if start < s < end]
        return [
            m.end() for m in pattern.finditer(context.text, start, end) if start < m.end() < end
        ]

    def _split(
        self, context: DocumentContext, start: int, end: int, level: int
    ) -> list[tuple[int, int, int]]:
        size = context.counter(context.text[start:end])
        if size <= self.max_tokens:
            return [(start, end, size)]
        if level >= len(SEPARATORS):
            return self._characters(context, start, end, size)
        cuts = self._cuts(context, start, end, level)
        if not cuts:
            return self._split(context, start, end, level + 1)
        bounds = [start, *cuts, end]
        pieces: list[tuple[int, int, int]] = []
        for s, e in itertools.pairwise(bounds):
            pieces.extend(self._split(context, s, e, level + 1))
        return self._merge(pieces)

    def _merge(self, pieces: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
        merged: list[tuple[int, int, int]] = []
        for s, e, size in pieces:
            if merged and merged[-1][2] + size <= self.max_tokens:
                merged[-1] = (merged[-1][0], e, merged[-1][2] + size)
            else:
                merged.append((s, e, size))
        return merged

    def _characters(
        self, context: DocumentContext, start: int, end: int, size: int
    ) -> list[tuple[int, int, int]]:
        step = max(1, (end - start) * self.max_tokens // max(size, 1))
        pieces = []
        for s in range(start, end, step):
            e = min(end, s + step)
            pieces.append((s, e, context.counter(context.text[s:e])))
        return pieces
