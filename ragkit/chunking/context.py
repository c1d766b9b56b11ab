"""Per-document work shared by every chunker and metric: blocks, sentence units, token counts
and one embedding cache.

Units are the document's sentences (per block), with sentences over ``unit_max_tokens`` cut
into word windows, so that every unit fits an encoder's input. Unit vectors are computed at
most once per document, on first use, through the injected ``embed(texts) -> array`` callable;
a chunk's vector is the token-weighted mean of the unit vectors it overlaps (weights: the
share of each unit inside the chunk), so scoring five chunkings costs one embedding pass.

Example:
    >>> ctx = DocumentContext.build("One. Two three.\\n\\nFour.", None, "en", len)
    >>> [ctx.text[s:e] for s, e in ctx.units]
    ['One.', 'Two three.', 'Four.']
    >>> ctx.tokens_between(0, len(ctx.text)) == sum(ctx.unit_tokens)
    True
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ragkit.chunking.sentences import sentence_spans
from ragkit.chunking.types import Span, TokenCounter
from ragkit.documents import Block, text_blocks
from ragkit.errors import RagkitError

Embed = Callable[[list[str]], np.ndarray]
_WORD = re.compile(r"\S+")


def word_windows(text: str, start: int, end: int, limit: int, counter: TokenCounter) -> list[Span]:
    """``text[start:end]`` cut at whitespace into windows of at most ``limit`` tokens.

    Windows grow word by word (estimated from each word's own count) and are shrunk until
    ``counter`` confirms the budget; a single word over the limit stays whole.

    Example:
        >>> text = "a b c d e"
        >>> [text[s:e] for s, e in word_windows(text, 0, len(text), 2, len)]
        ['a', 'b', 'c', 'd', 'e']
        >>> [text[s:e] for s, e in word_windows(text, 0, len(text), 3, len)]
        ['a b', 'c d', 'e']
    """
    words = [m.span() for m in _WORD.finditer(text, start, end)]
    sizes = [max(1, counter(text[s:e])) for s, e in words]
    windows: list[Span] = []
    i = 0
    while i < len(words):
        j, total = i + 1, sizes[i]
        while j < len(words) and total + sizes[j] <= limit:
            total += sizes[j]
            j += 1
        while j - i > 1 and counter(text[words[i][0] : words[j - 1][1]]) > limit:
            j -= 1
        windows.append((words[i][0], words[j - 1][1]))
        i = j
    return windows


@dataclass
class DocumentContext:
    """One document prepared for chunking and scoring."""

    text: str
    blocks: list[Block]
    language: str
    counter: TokenCounter
    units: list[Span]
    unit_tokens: list[int]
    embed: Embed | None = None
    _unit_vectors: np.ndarray | None = field(default=None, repr=False)
    _starts: list[int] = field(default_factory=list, repr=False)
    _prefix: list[int] = field(default_factory=list, repr=False)

    @classmethod
    def build(
        cls,
        text: str,
        blocks: Sequence[Block] | None,
        language: str,
        counter: TokenCounter,
        embed: Embed | None = None,
        unit_max_tokens: int = 128,
    ) -> DocumentContext:
        blocks = list(blocks) if blocks is not None else text_blocks(text)
        units: list[Span] = []
        tokens: list[int] = []
        for block in blocks or [Block("paragraph", 0, len(text))]:
            for s, e in sentence_spans(text, block.start, block.end, language):
                size = counter(text[s:e])
                if size > unit_max_tokens:
                    for ws, we in word_windows(text, s, e, unit_max_tokens, counter):
                        units.append((ws, we))
                        tokens.append(counter(text[ws:we]))
                elif size:
                    units.append((s, e))
                    tokens.append(size)
        context = cls(text, blocks, language, counter, units, tokens, embed)
        context._starts = [s for s, _ in units]
        context._prefix = [0]
        for size in tokens:
            context._prefix.append(context._prefix[-1] + size)
        return context

    def unit_range(self, start: int, end: int) -> tuple[int, int]:
        """Indices ``[i, j)`` of the units overlapping ``[start, end)``."""
        i = bisect.bisect_right(self._starts, start) - 1
        if i < 0 or self.units[i][1] <= start:
            i += 1
        j = bisect.bisect_left(self._starts, end)
        return i, max(i, j)

    def tokens_between(self, start: int, end: int) -> int:
        """Estimated tokens in ``[start, end)``: whole units inside plus shares of cut ones."""
        i, j = self.unit_range(start, end)
        total = 0.0
        for k in (i, j - 1) if j - i >= 2 else range(i, j):
            total += self.unit_tokens[k] * self.share(k, start, end)
        if j - i > 2:
            total += self._prefix[j - 1] - self._prefix[i + 1]
        return round(total)

    def share(self, k: int, start: int, end: int) -> float:
        """The share of unit ``k``'s characters inside ``[start, end)``."""
        s, e = self.units[k]
        return max(0, min(e, end) - max(s, start)) / max(1, e - s)

    @property
    def unit_vectors(self) -> np.ndarray:
        """Unit embeddings (computed once, L2-normalized rows)."""
        if self._unit_vectors is None:
            if self.embed is None:
                raise RagkitError(
                    "this chunker or metric needs embeddings: pass embed=Encoder(...)."
                    "encode_passages (or any texts → vectors callable)"
                )
            texts = [self.text[s:e] for s, e in self.units]
            vectors = np.asarray(self.embed(texts), dtype=np.float32) if texts else None
            self.set_unit_vectors(np.zeros((0, 1), np.float32) if vectors is None else vectors)
        assert self._unit_vectors is not None
        return self._unit_vectors

    def set_unit_vectors(self, vectors: np.ndarray) -> None:
        """Provide the unit vectors (one row per unit, computed elsewhere, e.g. batched over
        several documents); rows are L2-normalized here."""
        if len(vectors) != len(self.units):
            raise RagkitError(f"{len(vectors)} unit vectors for {len(self.units)} units")
        vectors = np.asarray(vectors, dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        self._unit_vectors = vectors / np.maximum(norms, 1e-12)

    def span_vector(self, start: int, end: int) -> np.ndarray | None:
        """Normalized weighted mean of the unit vectors overlapping ``[start, end)``."""
        i, j = self.unit_range(start, end)
        if j <= i:
            return None
        weights = np.array(
            [self.unit_tokens[k] * self.share(k, start, end) for k in range(i, j)],
            dtype=np.float32,
        )
        vector = weights @ self.unit_vectors[i:j]
        norm = float(np.linalg.norm(vector))
        return vector / norm if norm > 0 else None
