"""``fixed``: windows of a fixed token budget (64, 128, 256, 512, 1024…), optional overlap.

Windows are cut at whitespace; each holds at most ``max_tokens`` tokens as the document's
counter measures them. With ``overlap`` > 0, each window starts ``overlap`` tokens before the
previous one ends (the only chunker whose chunks overlap instead of tiling the text).

Example:
    >>> chunker = FixedChunker(max_tokens=3, min_tokens=1, counter=len)
    >>> [c.text for c in chunker.chunk("a b c d e f g")]
    ['a b ', 'c d ', 'e f ', 'g']
"""

from __future__ import annotations

import re

from ragkit.chunking.base import Chunker
from ragkit.chunking.context import DocumentContext, word_windows
from ragkit.chunking.types import Span, TokenCounter
from ragkit.errors import RagkitError

SIZES = (64, 128, 256, 512, 1024)
_WORD = re.compile(r"\S+")


class FixedChunker(Chunker):
    """Consecutive token windows of ``max_tokens`` (``overlap`` tokens shared when > 0)."""

    name = "fixed"

    def __init__(
        self,
        max_tokens: int = 256,
        min_tokens: int | None = None,
        counter: TokenCounter | None = None,
        overlap: int = 0,
    ) -> None:
        super().__init__(max_tokens, min_tokens, counter)
        if not 0 <= overlap < max_tokens:
            raise RagkitError(f"fixed: overlap must lie in [0, {max_tokens}), got {overlap}")
        self.overlap = overlap

    @property
    def label(self) -> str:
        return f"fixed-{self.max_tokens}"

    def spans(self, context: DocumentContext) -> list[Span]:
        text, counter = context.text, context.counter
        if not self.overlap:
            return word_windows(text, 0, len(text), self.max_tokens, counter)
        words = [m.span() for m in _WORD.finditer(text)]
        sizes = [max(1, counter(text[s:e])) for s, e in words]
        spans: list[Span] = []
        i = 0
        while i < len(words):
            j, total = i + 1, sizes[i]
            while j < len(words) and total + sizes[j] <= self.max_tokens:
                total += sizes[j]
                j += 1
            while j - i > 1 and counter(text[words[i][0] : words[j - 1][1]]) > self.max_tokens:
                j -= 1
            spans.append((words[i][0], words[j - 1][1]))
            if j >= len(words):
                break
            back, shared = j, 0
            while back - 1 > i and shared + sizes[back - 1] <= self.overlap:
                back -= 1
                shared += sizes[back]
            i = back
        return spans
