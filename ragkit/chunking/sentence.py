"""``sentence``: whole sentences packed greedily up to the token budget.

Sentences come from :func:`ragkit.chunking.sentences.sentence_spans` (multilingual terminators,
newline rules, numbers and per-language abbreviations kept whole). A sentence longer than the
budget is cut into word windows by post-processing.

Example:
    >>> chunker = SentenceChunker(max_tokens=14, min_tokens=1, counter=len)
    >>> [c.text for c in chunker.chunk("Hi there. Dr. No waits. ሰላም ነው። Bye.")]
    ['Hi there. ', 'Dr. No waits. ', 'ሰላም ነው። Bye.']
"""

from __future__ import annotations

from ragkit.chunking.base import Chunker
from ragkit.chunking.context import DocumentContext
from ragkit.chunking.types import Span


def pack(units: list[Span], sizes: list[int], budget: int) -> list[Span]:
    """Consecutive units grouped greedily so each group's token sum stays within ``budget``.

    Example:
        >>> pack([(0, 2), (3, 5), (6, 9)], [2, 2, 3], 4)
        [(0, 5), (6, 9)]
    """
    groups: list[Span] = []
    start, total, previous_end = -1, 0, 0
    for (s, e), size in zip(units, sizes, strict=True):
        if start >= 0 and total + size > budget:
            groups.append((start, previous_end))
            start, total = -1, 0
        if start < 0:
            start = s
        total += size
        previous_end = e
    if start >= 0:
        groups.append((start, previous_end))
    return groups


class SentenceChunker(Chunker):
    """Greedy sentence packing under ``max_tokens``."""

    name = "sentence"

    def spans(self, context: DocumentContext) -> list[Span]:
        return pack(context.units, context.unit_tokens, self.max_tokens)
