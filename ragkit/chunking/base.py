"""The ``Chunker`` interface: spans over a shared document context, finished into chunks.

Chunkers return spans; :mod:`ragkit.chunking.postprocess` turns them into chunks that tile the
text exactly (gap repair), with oversized chunks split and small ones merged.

Example:
    >>> class Halves(Chunker):
    ...     name = "halves"
    ...     def spans(self, context):
    ...         middle = len(context.text) // 2
    ...         return [(0, middle), (middle, len(context.text))]
    >>> [c.chunker for c in Halves(max_tokens=64, counter=len).chunk("One. Two.")]
    ['halves']
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ragkit.chunking.context import DocumentContext
from ragkit.chunking.postprocess import finalize
from ragkit.chunking.types import Chunk, Span, TokenCounter, counter_for
from ragkit.errors import RagkitError

if TYPE_CHECKING:
    from ragkit.documents import Block


class Chunker(ABC):
    """Splits one document into spans under a token budget ``[min_tokens, max_tokens]``.

    Subclasses implement :meth:`spans` over a shared :class:`DocumentContext` (sentences,
    token counts, cached embeddings), so several chunkers of one document share that work.
    """

    name: str = ""

    def __init__(
        self,
        max_tokens: int = 256,
        min_tokens: int | None = None,
        counter: TokenCounter | None = None,
    ) -> None:
        if max_tokens < 1:
            raise RagkitError(f"chunker {self.name}: max_tokens must be ≥ 1, got {max_tokens}")
        self.max_tokens = max_tokens
        self.min_tokens = max(1, max_tokens // 8) if min_tokens is None else min_tokens
        if not 0 <= self.min_tokens <= max_tokens:
            raise RagkitError(
                f"chunker {self.name}: min_tokens {self.min_tokens} must lie in [0, {max_tokens}]"
            )
        self.counter = counter

    @property
    def label(self) -> str:
        """The name recorded on each chunk (``fixed`` adds its size: ``fixed-256``)."""
        return self.name

    @abstractmethod
    def spans(self, context: DocumentContext) -> list[Span]:
        """Raw spans in document order; post-processing repairs gaps and sizes."""

    def chunk_context(self, context: DocumentContext) -> list[Chunk]:
        """Chunks for a prepared context (what :class:`AdaptiveChunker` calls)."""
        return finalize(context, self.spans(context), self.label, self.min_tokens, self.max_tokens)

    def chunk(
        self, text: str, blocks: Sequence[Block] | None = None, language: str = ""
    ) -> list[Chunk]:
        """Chunk ``text`` (blocks from :func:`ragkit.documents.text_blocks` when omitted)."""
        counter = self.counter or counter_for(language)
        context = DocumentContext.build(text, blocks, language, counter, embed=self._embed())
        return self.chunk_context(context)

    def _embed(self) -> Callable[[list[str]], Any] | None:
        return None
