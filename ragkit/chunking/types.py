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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

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


@dataclass(frozen=True)
class ChunkingRecord:
    """How one document was chunked, as its index keeps it.

    ``chosen`` names the chunker whose chunks were kept (``""``: indexed before ragkit
    recorded this). Adaptive chunking also keeps every candidate's metric scores
    (``scores[label][metric]``, with ``score`` the weighted mean), the ``weights``, the
    ``seconds`` spent and the metrics it did not compute (``skipped``).

    Example:
        >>> ChunkingRecord("fixed-256").as_dict()
        {'chosen': 'fixed-256'}
        >>> ChunkingRecord.from_dict({}).recorded, ChunkingRecord.from_dict({}).adaptive
        (False, False)
    """

    chosen: str = ""
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    weights: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0
    skipped: tuple[str, ...] = ()

    @property
    def recorded(self) -> bool:
        """False for documents indexed before the choice was recorded."""
        return bool(self.chosen)

    @property
    def adaptive(self) -> bool:
        """True when candidates were scored (adaptive chunking), not fixed by settings."""
        return bool(self.scores)

    def as_dict(self) -> dict[str, Any]:
        """The JSON the index stores (``{}`` unrecorded, ``{"chosen": …}`` fixed)."""
        if not self.recorded:
            return {}
        if not self.adaptive:
            return {"chosen": self.chosen}
        return {
            "chosen": self.chosen,
            "scores": self.scores,
            "weights": self.weights,
            "seconds": round(self.seconds, 4),
            "skipped": list(self.skipped),
        }

    @classmethod
    def from_dict(cls, stored: Mapping[str, Any]) -> ChunkingRecord:
        """A record from its stored JSON (:meth:`as_dict`)."""
        return cls(
            chosen=str(stored.get("chosen", "")),
            scores=dict(stored.get("scores") or {}),
            weights=dict(stored.get("weights") or {}),
            seconds=float(stored.get("seconds", 0.0)),
            skipped=tuple(stored.get("skipped") or ()),
        )
