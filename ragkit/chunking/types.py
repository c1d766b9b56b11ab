"""The chunk record, spans and token counting, shared by every chunker and metric.

Every chunk points into the document's **original** text: ``text[c.start:c.end] == c.text``.

Example:
    >>> count_tokens("Hello, world!")
    4
    >>> Chunk("Hello", 0, 5, 1, "fixed-8").end
    5
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from ragkit.errors import RagkitError
from ragkit.tokenize import tokenizer_for

log = logging.getLogger(__name__)

TokenCounter = Callable[[str], int]
Span = tuple[int, int]

TOKEN_PATTERN = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class Chunk:
    """A span of a document's original text, its size in tokens and the blocks it touches.

    ``chunker`` names the chunker that made it (``fixed-256``, ``semantic``…); ``block_ids``
    are indices into the document's block list that the chunk overlaps.
    """

    text: str
    start: int
    end: int
    token_count: int
    chunker: str
    block_ids: tuple[int, ...] = ()


def count_tokens(text: str) -> int:
    """Regex word/punctuation tokens: the counter used when no tokenizer is available."""
    return len(TOKEN_PATTERN.findall(text))


@functools.cache
def counter_for(language: str) -> TokenCounter:
    """The document language's SentencePiece counter, or :func:`count_tokens` without models.

    Example:
        >>> counter_for("xx-none")("two words") >= 2
        True
    """
    try:
        return tokenizer_for(language).count
    except RagkitError as error:
        log.warning("%s; chunk budgets count regex tokens", error)
        return count_tokens
