"""LlamaIndex components (``pip install "ragkit-pipeline[llama-index]"``): a ragkit index as a vector
store and as a ``BaseRetriever``, and ragkit's adaptive chunker as a ``NodeParser``.

:class:`RagkitVectorStore` is a ``BasePydanticVectorStore`` that stores text, so LlamaIndex's
``VectorStoreIndex`` builds on it (``StorageContext.from_defaults(vector_store=store)``):
ragkit analyzes, chunks and embeds every node's text with the index's own model, and searches
hybrid, sparse, dense or by vector, with MMR. :class:`RagkitRetriever` returns
``NodeWithScore`` objects whose ``TextNode`` carries the passage's ``start_char_idx`` /
``end_char_idx`` in its document's original text and the document as its source
(``node.ref_doc_id``). :class:`RagkitNodeParser` chunks documents as ``ragkit chunk`` does,
with the same offsets and the chosen chunker in ``metadata["chunker"]``.

Example:
    >>> store = RagkitVectorStore("my-index", model="all-minilm-l6-v2")  # doctest: +SKIP
    >>> context = StorageContext.from_defaults(vector_store=store)  # doctest: +SKIP
    >>> index = VectorStoreIndex.from_documents(documents, storage_context=context)  # doctest: +SKIP
    >>> retriever = RagkitRetriever("my-index", similarity_top_k=3)  # doctest: +SKIP
    >>> [n.node.ref_doc_id for n in retriever.retrieve("boiling point of water")]  # doctest: +SKIP
    ['/docs/water.md', '/docs/water.md', 'faq-1']
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragkit.documents.given import check_source
from ragkit.errors import InvalidArgumentError, RagkitError
from ragkit.index import Index
from ragkit.integrations.common import (
    FrameworkNotInstalled,
    add_records,
    check_k,
    checked_filter,
    delete_records,
    open_index,
    stored_texts,
)
from ragkit.integrations.llama_index_embedding import RagkitEmbedding
from ragkit.integrations.llama_index_nodes import (
    DocumentIds,
    hit_node,
    node_record,
    stored_node,
)
from ragkit.integrations.llama_index_parser import CHUNKER_KEY, RagkitNodeParser
from ragkit.integrations.llama_index_store import StoredNodes, query_mode, search_options
from ragkit.query import SearchOptions
from ragkit.search.fusion import SearchMode

try:
    from llama_index.core import Settings as LlamaSettings
    from llama_index.core.base.base_retriever import BaseRetriever
    from llama_index.core.bridge.pydantic import Field, PrivateAttr
    from llama_index.core.callbacks import CallbackManager
    from llama_index.core.schema import (
        BaseNode,
        Document,
        NodeWithScore,
        QueryBundle,
    )
    from llama_index.core.vector_stores.types import (
        BasePydanticVectorStore,
        FilterCondition,
        MetadataFilter,
        MetadataFilters,
        VectorStoreQuery,
        VectorStoreQueryMode,
        VectorStoreQueryResult,
    )
except ImportError as error:
    raise FrameworkNotInstalled.of("llama-index-core", "llama-index", error) from error

__all__ = [
    "CHUNKER_KEY",
    "RagkitEmbedding",
    "RagkitNodeParser",
    "RagkitRetriever",
    "RagkitVectorStore",
    "llama_index_filters",
]

SOURCE = "<llama-index>"
BY_VECTOR = (VectorStoreQueryMode.DEFAULT, VectorStoreQueryMode.MMR)  # modes searching a vector


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
    its relevance as the score (``Hit.relevance``: in [0, 1] and comparable across queries,
    so ``SimilarityPostprocessor(similarity_cutoff=0.5)`` drops what the index cannot
    answer; the nodes come in ragkit's rank order). ``similarity_top_k`` results; ``mode`` (``hybrid``, ``dense``,
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
        return [NodeWithScore(node=hit_node(hit), score=hit.relevance) for hit in hits]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return await asyncio.to_thread(self._retrieve, query_bundle)

    @classmethod
    def from_documents(
        cls,
        documents: Sequence[Document],
        index: Index | str | Path,
        source: str = SOURCE,
        *,
        model: str | None = None,
        **retriever: Any,
    ) -> RagkitRetriever:
        """A retriever over ``index`` (created when missing, embedding with ``model``: ``auto``
        by default) after adding ``documents`` (what a LlamaIndex reader such as
        ``SimpleDirectoryReader(...).load_data()`` returns) as records: each under its stable
        id (a reader's document under its file's path, so reading the folder again updates
        them: :class:`~ragkit.integrations.llama_index_nodes.DocumentIds`), with its text,
        its JSON metadata and the keys it leaves out of what the LLM sees, which the nodes
        retrieved keep. ``retriever``: the options of the class (``similarity_top_k``,
        ``filters``…).

        Example:
            >>> documents = SimpleDirectoryReader("docs").load_data()  # doctest: +SKIP
            >>> retriever = RagkitRetriever.from_documents(  # doctest: +SKIP
            ...     documents, "my-index", model="all-minilm-l6-v2"
            ... )
        """
        opened = open_index(index, create=True, **({"model": model} if model else {}))
        ids = DocumentIds()
        ids.assign(documents)
        records = {r.key: r.fields for r in (node_record(d, ids) for d in documents)}
        add_records(opened, list(records.values()), source)
        return cls(opened, **retriever)


class RagkitVectorStore(BasePydanticVectorStore):
    """A ragkit :class:`~ragkit.Index` as a LlamaIndex vector store that stores text.

    ``index`` is an open :class:`~ragkit.Index` or its location (a folder, ``milvus://…``),
    created when missing with ``model`` (``auto`` when None) and any other ragkit
    ``settings``. ``VectorStoreIndex`` hands the store its nodes; ragkit adds each as a record
    of ``source`` (``<llama-index>``) and analyzes, chunks and embeds its text with the index's
    own model (the vectors LlamaIndex computed are not used). A document is stored under a
    stable id — a reader's document under its file's path — so building again from the same
    folder updates what changed instead of adding everything twice, and the nodes of a
    document whose version (hash) changed replace its old ones
    (:mod:`ragkit.integrations.llama_index_nodes`).

    Queries: ragkit searches the query text itself (LlamaIndex need not embed it:
    ``is_embedding_query`` is False); a query with only an embedding is searched by vector.
    Query modes: ``default`` is the store's ``mode`` (``hybrid``, dense + BM25: ragkit's
    default), ``sparse`` and ``text_search`` BM25, ``hybrid`` both, with ``alpha`` as the dense
    list's weight (0: BM25 only, 1: dense only), ``semantic_hybrid`` hybrid then ragkit's
    reranker, ``mmr`` maximal marginal relevance over the default mode's candidates
    (``mmr_threshold``, 0.5 when not given, 1 being relevance only; ``mmr_prefetch_k`` or
    ``mmr_prefetch_factor`` candidates); the learner modes (``svm``…) are refused. Filters are
    ``MetadataFilters`` (:func:`llama_index_filters`); ``doc_ids`` keep those documents'
    nodes. Search options (``rerank``, ``language``, ``fusion``…) may come as
    ``vector_store_kwargs``; the store's ``rerank`` and ``language`` are their defaults. Scores
    are ragkit's relevance, in [0, 1] and comparable across queries, so
    ``SimilarityPostprocessor(similarity_cutoff=…)`` applies.

    LlamaIndex embeds every node before handing it to a vector store: when it has no
    embedding model set (``Settings.embed_model``), the store sets its own
    (:attr:`embed_model`, the index's encoder), so nothing reaches for OpenAI.

    Example:
        >>> from llama_index.core import SimpleDirectoryReader, StorageContext, VectorStoreIndex
        >>> store = RagkitVectorStore("my-index", model="all-minilm-l6-v2")  # doctest: +SKIP
        >>> documents = SimpleDirectoryReader("docs").load_data()  # doctest: +SKIP
        >>> index = VectorStoreIndex.from_documents(  # doctest: +SKIP
        ...     documents, storage_context=StorageContext.from_defaults(vector_store=store)
        ... )
        >>> index.as_retriever(similarity_top_k=3).retrieve("boiling point")[0].node.ref_doc_id  # doctest: +SKIP
        '/home/me/docs/water.md'
    """

    stores_text: bool = True
    is_embedding_query: bool = False
    flat_metadata: bool = False
    source: str = Field(default=SOURCE, description="The records source of the nodes added.")
    mode: SearchMode = Field(default="hybrid", description="The mode of default queries.")
    rerank: bool = Field(default=False, description="Rerank with ragkit's reranker.")
    language: str | None = Field(default=None, description="Analyze queries as this language.")
    _nodes: StoredNodes = PrivateAttr()
    _embedding: RagkitEmbedding = PrivateAttr()

    def __init__(
        self,
        index: Index | str | Path,
        *,
        model: str | None = None,
        source: str = SOURCE,
        mode: SearchMode = "hybrid",
        rerank: bool = False,
        language: str | None = None,
        **settings: Any,
    ) -> None:
        check_source(source)
        checked = SearchOptions.of(mode=mode, rerank=rerank, language=language)
        fields: dict[str, Any] = {
            "source": source,
            "mode": mode,
            "rerank": rerank,
            "language": checked.language,
        }
        super().__init__(**fields)  # this class's fields (the base's signature lacks them)
        if model is not None:
            settings["model"] = model
        opened = open_index(index, create=True, **settings)
        self._nodes = StoredNodes(opened, source)
        self._embedding = RagkitEmbedding(opened)
        held = LlamaSettings._embed_model
        if held is None or isinstance(held, RagkitEmbedding):
            LlamaSettings.embed_model = self._embedding

    @classmethod
    def class_name(cls) -> str:
        return "RagkitVectorStore"

    @property
    def client(self) -> Index:
        """The ragkit index."""
        return self._nodes.index

    @property
    def index(self) -> Index:
        """The ragkit index."""
        return self._nodes.index

    @property
    def embed_model(self) -> RagkitEmbedding:
        """The index's encoder as a LlamaIndex embedding model (:class:`RagkitEmbedding`)."""
        return self._embedding

    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        """Store ``nodes`` (their text analyzed, chunked and embedded by ragkit) and return
        their ids: ``DOCUMENT#START-END`` for a node of a document, its own id for a node
        without one. A node stored before under its id is replaced when it changed and left as
        it is otherwise; the nodes a document had in another version are removed. Nodes the
        index cannot take (no text, metadata that is not JSON, an unpaired surrogate) raise one
        :class:`RagkitError` naming each, after the others are stored. ``model`` (passed on by
        ``VectorStoreIndex.from_documents(..., model=…)``) must name the index's model."""
        self._nodes.check_model(add_kwargs.pop("model", None))
        if add_kwargs:
            raise InvalidArgumentError(
                f"RagkitVectorStore.add: unknown argument(s) {', '.join(sorted(add_kwargs))}"
            )
        return self._nodes.add(list(nodes))

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Remove the nodes of the document ``ref_doc_id``: its stable id (a query's
        ``node.ref_doc_id``, a file's path) or the id LlamaIndex gave it when it was added
        (``document.doc_id``); a document ragkit ingested itself is removed by its key."""
        self._nodes.delete_document(ref_doc_id)

    def delete_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
        **delete_kwargs: Any,
    ) -> None:
        """Remove the nodes ``node_ids`` names (the ids :meth:`add` and queries return; a
        passage's ``ID:START-END`` names its node) that match ``filters``; with neither, every
        node of the store's source, as LlamaIndex's stores do."""
        selected = self._nodes.selected(node_ids, llama_index_filters(filters))
        delete_records(self.index, selected)

    def get_nodes(
        self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None
    ) -> list[BaseNode]:
        """The stored nodes ``node_ids`` names that match ``filters`` (with neither, all of the
        store's source), whole, in the order given."""
        selected = self._nodes.selected(node_ids, llama_index_filters(filters))
        found = {doc.key: (doc, text) for doc, text in stored_texts(self.index, selected)}
        return [stored_node(*found[key]) for key in selected if key in found]

    def clear(self) -> None:
        """Remove every node of the store's source."""
        delete_records(self.index, [entry.key for entry in self._nodes.entries()])

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """The nodes best matching ``query`` (see the class for modes, filters and options),
        each with its relevance as similarity."""
        defaults = SearchOptions.of(mode=self.mode, rerank=self.rerank, language=self.language)
        filters = llama_index_filters(query.filters)
        options = search_options(query, kwargs, defaults, filters, self._nodes.ids)
        if options is None:
            return VectorStoreQueryResult(nodes=[], similarities=[], ids=[])
        if query.query_str:
            hits = self.index.search(query.query_str, options)
        elif query.query_embedding is None:
            raise InvalidArgumentError("VectorStoreQuery: give query_str or query_embedding")
        elif query_mode(query) not in BY_VECTOR:
            raise InvalidArgumentError(
                f"query mode {query_mode(query).value!r} searches text: give query_str (an embedding "
                "alone is searched in the default and mmr modes)"
            )
        else:  # by vector: dense, and no reranker (it reads query text) unless asked for
            dense = {"mode": "dense"} | ({} if kwargs.get("rerank") else {"rerank": False})
            hits = self.index.search_by_vector(query.query_embedding, options, **dense)
        nodes = [hit_node(hit) for hit in hits]
        return VectorStoreQueryResult(
            nodes=nodes,
            similarities=[hit.relevance for hit in hits],
            ids=[node.node_id for node in nodes],
        )

    async def async_add(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[str]:
        return await asyncio.to_thread(self.add, nodes, **kwargs)

    async def adelete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        await asyncio.to_thread(self.delete, ref_doc_id, **delete_kwargs)

    async def adelete_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
        **delete_kwargs: Any,
    ) -> None:
        await asyncio.to_thread(self.delete_nodes, node_ids, filters, **delete_kwargs)

    async def aget_nodes(
        self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None
    ) -> list[BaseNode]:
        return await asyncio.to_thread(self.get_nodes, node_ids, filters)

    async def aclear(self) -> None:
        await asyncio.to_thread(self.clear)

    async def aquery(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        return await asyncio.to_thread(self.query, query, **kwargs)
