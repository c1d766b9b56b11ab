"""ragkit's adaptive chunker as a LlamaIndex ``NodeParser``: :class:`RagkitNodeParser`
(imported from :mod:`ragkit.integrations.llama_index` too).

Example:
    >>> from llama_index.core import Document
    >>> RagkitNodeParser.from_defaults(chunker="sentence")([Document(text="A. B.")])[0].text
    'A. B.'
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from ragkit.embed.models import AUTO_MODEL
from ragkit.integrations.common import FrameworkNotInstalled, TextChunker

try:
    from llama_index.core.bridge.pydantic import Field, PrivateAttr
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.node_parser import NodeParser
    from llama_index.core.node_parser.node_utils import build_nodes_from_splits
    from llama_index.core.schema import BaseNode, Document, MetadataMode, TextNode
except ImportError as error:
    raise FrameworkNotInstalled.of("llama-index-core", "llama-index", error) from error

log = logging.getLogger(__name__)

CHUNKER_KEY = "chunker"


class RagkitNodeParser(NodeParser):
    """ragkit's adaptive chunker as a LlamaIndex ``NodeParser``: every candidate chunker runs
    on each document and the best by ragkit's chunk metrics is kept (or the one ``chunker``
    names: ``fixed``, ``sentence``, ``recursive``, ``structure``, ``semantic``).

    ``chunk_size`` is a budget in tokens of the document's language (ragkit's tokenizers);
    chunks do not overlap (a ``chunk_overlap`` is ignored with a warning). Each node has ``start_char_idx`` / ``end_char_idx`` in its
    document's text, the document as its source, its neighbours as previous / next, the
    document's metadata and ``metadata["chunker"]`` (the chunker chosen for the document;
    left out of the text embedded and shown to the LLM). ``model`` embeds sentences for the
    metrics (``auto``: by language), ``markdown`` reads headings, lists and code as blocks,
    ``language`` overrides detection.

    Example:
        >>> parser = RagkitNodeParser.from_defaults(chunk_size=64, chunker="sentence")
        >>> node = parser.get_nodes_from_documents([Document(text="One. Two.")])[0]
        >>> node.start_char_idx, node.end_char_idx, node.metadata
        (0, 9, {'chunker': 'sentence'})
    """

    chunk_size: int = Field(default=256, gt=0, description="Token budget per chunk.")
    chunk_overlap: int = Field(default=0, ge=0, description="Ignored: chunks do not overlap.")
    chunker: str = Field(default="adaptive", description="adaptive, or one chunker's name.")
    model: str = Field(default=AUTO_MODEL, description="Embedding model for chunk metrics.")
    weights: dict[str, float] | None = Field(default=None, description="Chunk metric weights.")
    markdown: bool = Field(default=False, description="Read Markdown blocks.")
    language: str | None = Field(default=None, description="ISO 639 code; detected if None.")
    _chunk: TextChunker = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        if self.chunk_overlap:
            log.warning("RagkitNodeParser: chunk_overlap ignored (ragkit's chunks do not overlap)")
        self._chunk = TextChunker(
            self.chunker, self.chunk_size, self.model, self.weights, self.markdown, self.language
        )

    @classmethod
    def class_name(cls) -> str:
        return "RagkitNodeParser"

    @classmethod
    def from_defaults(
        cls,
        chunk_size: int = 256,
        chunker: str = "adaptive",
        model: str = AUTO_MODEL,
        weights: dict[str, float] | None = None,
        markdown: bool = False,
        language: str | None = None,
        include_metadata: bool = True,
        include_prev_next_rel: bool = True,
        callback_manager: CallbackManager | None = None,
    ) -> RagkitNodeParser:
        """A parser with these settings (LlamaIndex's constructor convention)."""
        return cls(
            chunk_size=chunk_size,
            chunker=chunker,
            model=model,
            weights=weights,
            markdown=markdown,
            language=language,
            include_metadata=include_metadata,
            include_prev_next_rel=include_prev_next_rel,
            callback_manager=callback_manager or CallbackManager([]),
        )

    def _parse_nodes(
        self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any
    ) -> list[BaseNode]:
        texts = [node.get_content(metadata_mode=MetadataMode.NONE) for node in nodes]
        parsed: list[BaseNode] = []
        for node, chunked in zip(nodes, self._chunk(texts), strict=True):
            pieces = build_nodes_from_splits(
                [chunk.text for chunk in chunked.chunks], node, id_func=self.id_func
            )
            for piece, chunk in zip(pieces, chunked.chunks, strict=True):
                piece.start_char_idx, piece.end_char_idx = chunk.start, chunk.end
                piece.metadata[CHUNKER_KEY] = chunked.chosen
                piece.excluded_embed_metadata_keys = [
                    *node.excluded_embed_metadata_keys,
                    CHUNKER_KEY,
                ]
                piece.excluded_llm_metadata_keys = [*node.excluded_llm_metadata_keys, CHUNKER_KEY]
            parsed.extend(pieces)
        return parsed

    async def _aparse_nodes(
        self, nodes: Sequence[BaseNode], show_progress: bool = False, **kwargs: Any
    ) -> list[BaseNode]:
        return await asyncio.to_thread(self._parse_nodes, nodes, show_progress, **kwargs)

    def _postprocess_parsed_nodes(
        self, nodes: list[BaseNode], parent_doc_map: dict[str, Document]
    ) -> list[BaseNode]:
        """The base class's relationships and metadata, with the chunker's own offsets kept
        (the base class finds each node's text again, which a repeated passage can fool)."""
        offsets = [
            (n.start_char_idx, n.end_char_idx) if isinstance(n, TextNode) else None for n in nodes
        ]
        nodes = super()._postprocess_parsed_nodes(nodes, parent_doc_map)
        for node, span in zip(nodes, offsets, strict=True):
            if span is not None and isinstance(node, TextNode):
                node.start_char_idx, node.end_char_idx = span
        return nodes
