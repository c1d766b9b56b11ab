"""LlamaIndex components (``pip install "ragkit[llama-index]"``): a ragkit index as a
``BaseRetriever`` and ragkit's adaptive chunker as a ``NodeParser``.

:class:`RagkitRetriever` returns ``NodeWithScore`` objects whose ``TextNode`` carries the
passage's ``start_char_idx`` / ``end_char_idx`` in its document's original text and the
document as its source (``node.ref_doc_id``). :class:`RagkitNodeParser` chunks documents as
``ragkit chunk`` does, with the same offsets and the chosen chunker in ``metadata["chunker"]``.

Example:
    >>> retriever = RagkitRetriever("my-index", similarity_top_k=3)  # doctest: +SKIP
    >>> [n.node.ref_doc_id for n in retriever.retrieve("boiling point of water")]  # doctest: +SKIP
    ['/docs/water.md', '/docs/water.md', 'faq-1']
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragkit.embed.models import AUTO_MODEL
from ragkit.errors import RagkitError
from ragkit.index import Hit, Index
from ragkit.integrations.common import (
    FrameworkNotInstalled,
    TextChunker,
    add_records,
    check_k,
    check_metadata,
    checked_filter,
    hit_metadata,
    open_index,
)
from ragkit.query import SearchOptions
from ragkit.search.fusion import SearchMode

try:
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.bridge.pydantic import Field, PrivateAttr
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.node_parser import NodeParser
    from llama_index.core.node_parser.node_utils import build_nodes_from_splits
    from llama_index.core.schema import (
        BaseNode,
        Document,
        MetadataMode,
        NodeRelationship,
        NodeWithScore,
        QueryBundle,
        RelatedNodeInfo,
        TextNode,
    )
    from llama_index.core.vector_stores.types import (
        FilterCondition,
        MetadataFilter,
        MetadataFilters,
    )
except ImportError as error:
    raise FrameworkNotInstalled.of("llama-index-core", "llama-index", error) from error

log = logging.getLogger(__name__)

CHUNKER_KEY = "chunker"


OPERATORS = {
    "==": "$eq", "!=": "$ne", ">": "$gt", ">=": "$gte", "<": "$lt", "<=": "$lte",
    "in": "$in", "nin": "$nin", "contains": "$contains", "text_match": "$contains",
    "text_match_insensitive": "$icontains",
}  # fmt: skip


def llama_index_filters(
    filters: MetadataFilters | Mapping[str, Any] | None,
) -> dict[str, Any] | None:
    """LlamaIndex ``MetadataFilters`` as a ragkit filter (:mod:`ragkit.store.filters`).

    Every ``FilterOperator`` translates: ``==`` ``!=`` ``>`` ``>=`` ``<`` ``<=`` ``in`` ``nin``
    ``contains`` as ragkit's ``$eq``…``$contains``; ``text_match`` (a substring) as
    ``$contains``, ``text_match_insensitive`` as ``$icontains``; ``any`` / ``all`` (some / every
    value in a list field, or in a text field's text) as an ``$or`` / ``$and`` of
    ``$contains``; ``is_empty`` (missing, null, ``""`` or ``[]``) as ``$empty``. Conditions
    ``and``, ``or`` and ``not`` (none of them holds) nest. Keys name metadata fields, except
    ``language`` (the document's language), ``file_path`` and ``source`` (a glob on the
    document's path, or the ``<name>`` of added records); ``meta.language`` and ``meta.source``
    name metadata fields called so. A dict is taken as a ragkit filter as it is. A value of
    the wrong type (a list with ``==``, text that is neither a number nor a date with ``>``)
    is a :class:`RagkitError`, never an empty result.

    Example:
        >>> llama_index_filters(MetadataFilters(filters=[
        ...     MetadataFilter(key="year", value=2000, operator=">="),
        ...     MetadataFilter(key="tags", value=["x", "y"], operator="any"),
        ... ], condition="or"))
        {'$or': [{'year': {'$gte': 2000}}, {'$or': [{'tags': {'$contains': 'x'}}, {'tags': {'$contains': 'y'}}]}]}
    """
    if filters is None:
        return None
    if isinstance(filters, Mapping):
        return checked_filter(dict(filters), "LlamaIndex")
    if not isinstance(filters, MetadataFilters):
        raise RagkitError(
            f"filters={filters!r:.60}: give llama_index MetadataFilters or a ragkit filter dict"
        )
    return checked_filter(_translated(filters), "LlamaIndex")


def _translated(filters: MetadataFilters) -> dict[str, Any]:
    parts = [
        _translated(item) if isinstance(item, MetadataFilters) else _condition(item)
        for item in filters.filters
    ]
    condition = filters.condition or FilterCondition.AND
    if condition == FilterCondition.NOT:  # LlamaIndex: none of them holds
        return {"$not": {"$or": parts}}
    return {"$or" if condition == FilterCondition.OR else "$and": parts}


def _condition(item: MetadataFilter) -> dict[str, Any]:
    key = "source" if item.key == "file_path" else item.key
    operator, value = item.operator.value, item.value
    if operator in ("any", "all"):
        if not isinstance(value, list):
            raise RagkitError(
                f"LlamaIndex filter {item.key} {operator} {value!r:.60}: give a list of values"
            )
        contained = [{key: {"$contains": each}} for each in value]
        return {"$or" if operator == "any" else "$and": contained}
    if operator == "is_empty":
        return {key: {"$empty": True}}
    if operator not in OPERATORS:
        raise RagkitError(f"LlamaIndex filter {item.key} {operator}: no such operator in ragkit")
    return {key: {OPERATORS[operator]: value}}


class RagkitRetriever(BaseRetriever):
    """A ragkit :class:`~ragkit.Index` as a LlamaIndex retriever.

    ``index`` is an open :class:`~ragkit.Index` or its location. Each result is a
    ``NodeWithScore``: the passage as a ``TextNode`` (id ``KEY:START-END``; the document key
    as ``ref_doc_id``; ``start_char_idx`` / ``end_char_idx`` into the document's original
    text; metadata: the document's own plus ``file_path``, ``language`` and ``title``) with
    ragkit's score. ``similarity_top_k`` results; ``mode`` (``hybrid``, ``dense``,
    ``sparse``), ``filters`` (``MetadataFilters`` or a ragkit filter dict:
    :func:`llama_index_filters`), ``rerank`` and ``language`` (analyze queries as this ISO
    639 language) as in :meth:`ragkit.Index.search`.

    Example:
        >>> from llama_index.core.query_engine import RetrieverQueryEngine
        >>> retriever = RagkitRetriever("my-index", similarity_top_k=5, rerank=True)  # doctest: +SKIP
        >>> engine = RetrieverQueryEngine.from_args(retriever, llm=llm)  # doctest: +SKIP
        >>> engine.query("When does water boil?").source_nodes[0].node.start_char_idx  # doctest: +SKIP
        0
    """

    def __init__(
        self,
        index: Index | str | Path,
        similarity_top_k: int = 10,
        mode: SearchMode = "hybrid",
        filters: MetadataFilters | Mapping[str, Any] | None = None,
        rerank: bool = False,
        language: str | None = None,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        self.index = open_index(index)
        self.similarity_top_k = check_k(similarity_top_k, "similarity_top_k")
        self.options = SearchOptions.of(mode=mode, rerank=rerank, language=language)
        self.filters = llama_index_filters(filters)
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if self.similarity_top_k == 0:
            return []
        hits = self.index.search(
            query_bundle.query_str, self.options, k=self.similarity_top_k, filters=self.filters
        )
        return [NodeWithScore(node=hit_node(hit), score=hit.score) for hit in hits]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._retrieve, query_bundle)

    @classmethod
    def from_documents(
        cls,
        documents: Sequence[Document],
        index: Index | str | Path,
        source: str = "<llama-index>",
        **retriever: Any,
    ) -> RagkitRetriever:
        """A retriever over ``index`` (created when missing) after adding ``documents`` (what
        a LlamaIndex reader such as ``SimpleDirectoryReader(...).load_data()`` returns) as
        records: the document id as key, its text, its JSON metadata. ``retriever``: the
        options of the class (``similarity_top_k``, ``filters``…).

        Example:
            >>> documents = SimpleDirectoryReader("docs").load_data()  # doctest: +SKIP
            >>> retriever = RagkitRetriever.from_documents(documents, "my-index")  # doctest: +SKIP
        """
        opened = open_index(index, create=True)
        records = [
            {
                "id": document.doc_id,
                "text": document.text,
                "metadata": check_metadata(document.metadata, document.doc_id),
            }
            for document in documents
        ]
        add_records(opened, records, source)
        return cls(opened, **retriever)


def hit_node(hit: Hit) -> TextNode:
    """A hit as a LlamaIndex ``TextNode`` (see :class:`RagkitRetriever`)."""
    return TextNode(
        id_=f"{hit.key}:{hit.start}-{hit.end}",
        text=hit.text,
        start_char_idx=hit.start,
        end_char_idx=hit.end,
        metadata=hit_metadata(hit),
        relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=hit.key)},
    )


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
