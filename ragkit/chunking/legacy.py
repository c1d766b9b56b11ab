"""The interim chunker (ingest uses it until adaptive chunking is wired in): recursive
paragraph → sentence → token split under a token budget.

Budgets are counted by a ``counter`` (ragkit passes the document language's SentencePiece
tokenizer, :func:`ragkit.tokenize.tokenizer_for`); without one, regex word/punctuation tokens
(``\\w+`` or one symbol) are counted. Every chunk carries offsets into the original text, so
``document.text[chunk.start:chunk.end] == chunk.text``.

Example:
    >>> chunks = RecursiveTokenChunker(budget=8).chunk("One two three. Four five six seven.\\n\\nEight.")
    >>> [c.text for c in chunks]
    ['One two three.', 'Four five six seven.\\n\\nEight.']
"""

from __future__ import annotations

import re

from ragkit.chunking.base import TOKEN_PATTERN as _TOKEN
from ragkit.chunking.base import Chunk, TokenCounter, count_tokens
from ragkit.documents import Block, text_blocks

# Sentence ends: Latin, Arabic (؟ ۔), Ethiopic (። ፧ ፨), Devanagari (।), ellipsis; then space.
_SENTENCE_END = re.compile(r"(?<=[.!?…؟۔।።፧፨])\s+|\n+")


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


def _token_windows(
    text: str, start: int, end: int, budget: int, counter: TokenCounter
) -> list[tuple[int, int]]:
    """Windows of ``budget`` regex tokens, halved until ``counter`` says each one fits."""
    tokens = [m.span() for m in _TOKEN.finditer(text, start, end)]
    pending = [tokens[i : i + budget] for i in range(0, len(tokens), budget)]
    windows: list[tuple[int, int]] = []
    while pending:
        window = pending.pop(0)
        span = (window[0][0], window[-1][1])
        if len(window) > 1 and counter(text[span[0] : span[1]]) > budget:
            half = len(window) // 2
            pending[:0] = [window[:half], window[half:]]
        else:
            windows.append(span)
    return windows


class RecursiveTokenChunker:
    """Split blocks into sentences and sentences into token windows until each piece fits,
    then pack neighbouring pieces greedily up to ``budget`` tokens."""

    name = "recursive-token"

    def __init__(self, budget: int = 256, counter: TokenCounter = count_tokens) -> None:
        if budget < 1:
            raise ValueError("budget must be at least 1 token")
        self.budget = budget
        self.count = counter

    def _pieces(self, text: str, start: int, end: int) -> list[tuple[int, int, int]]:
        count_tokens = self.count
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
            windows = _token_windows(text, s_start, s_end, self.budget, count_tokens)
            for w_start, w_end in windows:
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
