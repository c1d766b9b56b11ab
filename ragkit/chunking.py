"""The interim chunker: recursive paragraph → sentence → token split under a token budget.

Tokens here are regex word/punctuation tokens (``\\w+`` or one symbol), a stand-in until the
language-specific SentencePiece tokenizers land. Every chunk carries offsets into the original
text, so ``document.text[chunk.start:chunk.end] == chunk.text``.

Example:
    >>> chunks = RecursiveTokenChunker(budget=8).chunk("One two three. Four five six seven.\\n\\nEight.")
    >>> [c.text for c in chunks]
    ['One two three.', 'Four five six seven.\\n\\nEight.']
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragkit.documents import Block, text_blocks

_TOKEN = re.compile(r"\w+|[^\w\s]")
# Sentence ends: Latin, Arabic (؟ ۔), Ethiopic (። ፧ ፨), Devanagari (।), ellipsis; then space.
_SENTENCE_END = re.compile(r"(?<=[.!?…؟۔।።፧፨])\s+|\n+")


@dataclass(frozen=True)
class Chunk:
    """A span of a document's original text and its size in tokens."""

    text: str
    start: int
    end: int
    token_count: int
    chunker: str


def count_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


def _sentence_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    position = start
    for match in _SENTENCE_END.finditer(text, start, end):
        if match.start() > position:
            spans.append((position, match.start()))
        position = match.end()
    if position < end:
        spans.append((position, end))
    return spans


def _token_windows(text: str, start: int, end: int, budget: int) -> list[tuple[int, int]]:
    tokens = [m.span() for m in _TOKEN.finditer(text, start, end)]
    return [
        (tokens[i][0], tokens[min(i + budget, len(tokens)) - 1][1])
        for i in range(0, len(tokens), budget)
    ]


class RecursiveTokenChunker:
    """Split blocks into sentences and sentences into token windows until each piece fits,
    then pack neighbouring pieces greedily up to ``budget`` tokens."""

    name = "recursive-token"

    def __init__(self, budget: int = 256) -> None:
        if budget < 1:
            raise ValueError("budget must be at least 1 token")
        self.budget = budget

    def _pieces(self, text: str, start: int, end: int) -> list[tuple[int, int, int]]:
        size = count_tokens(text[start:end])
        if size <= self.budget:
            return [(start, end, size)] if size else []
        pieces: list[tuple[int, int, int]] = []
        sentences = _sentence_spans(text, start, end)
        for s_start, s_end in sentences:
            s_size = count_tokens(text[s_start:s_end])
            if s_size <= self.budget:
                if s_size:
                    pieces.append((s_start, s_end, s_size))
                continue
            for w_start, w_end in _token_windows(text, s_start, s_end, self.budget):
                pieces.append((w_start, w_end, count_tokens(text[w_start:w_end])))
        return pieces

    def chunk(self, text: str, blocks: list[Block] | None = None) -> list[Chunk]:
        spans = [(b.start, b.end) for b in (blocks or text_blocks(text))]
        pieces = [p for s, e in spans for p in self._pieces(text, s, e)]
        chunks: list[Chunk] = []
        current: list[tuple[int, int, int]] = []
        for piece in pieces:
            if current and sum(p[2] for p in current) + piece[2] > self.budget:
                chunks.append(self._make(text, current))
                current = []
            current.append(piece)
        if current:
            chunks.append(self._make(text, current))
        return chunks

    def _make(self, text: str, pieces: list[tuple[int, int, int]]) -> Chunk:
        start, end = pieces[0][0], pieces[-1][1]
        return Chunk(text[start:end], start, end, sum(p[2] for p in pieces), self.name)
