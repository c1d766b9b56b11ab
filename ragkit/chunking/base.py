"""The chunk record, token counting, the ``Chunker`` interface and the registry by name.

Every chunk points into the document's **original** text: ``text[c.start:c.end] == c.text``.
Chunkers return spans; :mod:`ragkit.chunking.postprocess` turns them into chunks that tile the
text exactly (gap repair), with oversized chunks split and small ones merged.

Example:
    >>> count_tokens("Hello, world!")
    4
    >>> sorted(available_chunkers())
    ['fixed', 'recursive', 'semantic', 'sentence', 'structure']
"""

from __future__ import annotations

import functools
import logging
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ragkit.errors import RagkitError

if TYPE_CHECKING:
    from ragkit.chunking.context import DocumentContext
    from ragkit.documents import Block

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
        from ragkit.tokenize import tokenizer_for

        return tokenizer_for(language).count
    except RagkitError as error:
        log.warning("%s; chunk budgets count regex tokens", error)
        return count_tokens


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
        from ragkit.chunking.postprocess import finalize

        return finalize(context, self.spans(context), self.label, self.min_tokens, self.max_tokens)

    def chunk(
        self, text: str, blocks: Sequence[Block] | None = None, language: str = ""
    ) -> list[Chunk]:
        """Chunk ``text`` (blocks from :func:`ragkit.documents.text_blocks` when omitted)."""
        from ragkit.chunking.context import DocumentContext

        counter = self.counter or counter_for(language)
        context = DocumentContext.build(text, blocks, language, counter, embed=self._embed())
        return self.chunk_context(context)

    def _embed(self) -> Callable[[list[str]], Any] | None:
        return None


_REGISTRY: dict[str, type[Chunker]] = {}
C = TypeVar("C", bound=type[Chunker])


def register(cls: C) -> C:
    """Class decorator: make a chunker available by its ``name``."""
    if not cls.name:
        raise RagkitError(f"{cls.__qualname__}: a registered chunker needs a name")
    _REGISTRY[cls.name] = cls
    return cls


def available_chunkers() -> list[str]:
    """Registered chunker names."""
    _load_builtins()
    return list(_REGISTRY)


def get_chunker(name: str, **options: Any) -> Chunker:
    """A chunker by registry name, e.g. ``get_chunker("fixed", max_tokens=128)``.

    Example:
        >>> get_chunker("fixed", max_tokens=64).label
        'fixed-64'
    """
    _load_builtins()
    if name not in _REGISTRY:
        raise RagkitError(f"unknown chunker {name!r}; choose one of {sorted(_REGISTRY)}")
    return _REGISTRY[name](**options)


def _load_builtins() -> None:
    import ragkit.chunking.fixed
    import ragkit.chunking.recursive
    import ragkit.chunking.semantic
    import ragkit.chunking.sentence
    import ragkit.chunking.structure  # noqa: F401
