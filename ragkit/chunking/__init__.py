"""Chunking: five chunkers, five intrinsic metrics and per-document adaptive selection.

- :mod:`~ragkit.chunking.types`: :class:`Chunk`, spans, token counting;
- :mod:`~ragkit.chunking.base`: the :class:`Chunker` interface;
- :mod:`~ragkit.chunking.registry`: chunkers by name (:func:`get_chunker`, :func:`register`);
- chunkers: ``fixed``, ``sentence``, ``recursive``, ``structure``, ``semantic`` (one per module),
  all finished by :mod:`~ragkit.chunking.postprocess` (gap repair, oversize split, small merge);
- :mod:`~ragkit.chunking.metrics` (SC, BI, ICC, DCC) and :mod:`~ragkit.chunking.references`
  (RC);
- :mod:`~ragkit.chunking.adaptive`: :class:`AdaptiveChunker` runs the candidates on one
  document, scores them and keeps the best (:class:`Selection`).

Example:
    >>> chunks = get_chunker("sentence", max_tokens=64).chunk("One. Two.", language="en")
    >>> [(c.start, c.end, c.chunker) for c in chunks]
    [(0, 9, 'sentence')]
"""

from ragkit.chunking.adaptive import AdaptiveChunker, Selection, explain
from ragkit.chunking.base import Chunker
from ragkit.chunking.context import DocumentContext
from ragkit.chunking.fixed import FixedChunker
from ragkit.chunking.recursive import RecursiveChunker
from ragkit.chunking.registry import available_chunkers, get_chunker, register
from ragkit.chunking.semantic import SemanticChunker
from ragkit.chunking.sentence import SentenceChunker
from ragkit.chunking.structure import StructureChunker
from ragkit.chunking.types import Chunk, ChunkingRecord, TokenCounter, count_tokens, counter_for

__all__ = [
    "AdaptiveChunker",
    "Chunk",
    "Chunker",
    "ChunkingRecord",
    "DocumentContext",
    "FixedChunker",
    "RecursiveChunker",
    "Selection",
    "SemanticChunker",
    "SentenceChunker",
    "StructureChunker",
    "TokenCounter",
    "available_chunkers",
    "count_tokens",
    "counter_for",
    "explain",
    "get_chunker",
    "register",
]
