"""``RagkitRetriever``: a Haystack ``@component`` retrieving passages from a ragkit index.

Example:
    >>> retriever = RagkitRetriever("my-index", top_k=2)  # doctest: +SKIP
    >>> retriever.run(query="boiling point")["documents"][0].meta["source_id"]  # doctest: +SKIP
    '/docs/water.md'
"""

import asyncio
from pathlib import Path
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict
from haystack.document_stores.types import FilterPolicy, apply_filter_policy

from ragkit.documents.given import is_record_source
from ragkit.embed.models import AUTO_MODEL
from ragkit.errors import InvalidArgumentError
from ragkit.index import Hit, Index
from ragkit.integrations.common import (
    check_k,
    document_lengths,
    hit_metadata,
    index_location,
    open_index,
)
from ragkit.integrations.haystack.document_store import RagkitDocumentStore
from ragkit.integrations.haystack.filters import haystack_filters
from ragkit.query import SearchOptions
from ragkit.search.fusion import SearchMode

# No ``from __future__ import annotations`` here: Haystack 2 matches sockets by the run
# methods' evaluated annotations.


@component
class RagkitRetriever:
    """Retrieves passages from a ragkit index: hybrid dense + BM25 search with ragkit's
    multilingual normalization and, with ``rerank``, its groupwise reranker.

    ``index`` is an open :class:`~ragkit.Index` or its location; or give
    ``document_store`` (a :class:`RagkitDocumentStore`, also accepted as the first argument,
    where Haystack's retrievers take their store) to search its index. Each document is a passage:
    ``content`` its text, ``score`` its relevance (``Hit.relevance``: in [0, 1] and comparable
    across queries, for thresholds; documents come in ragkit's rank order), ``meta`` the
    document's metadata with
    ``file_path`` (for files), ``language``, ``title``, ``source_id`` (the document key),
    ``split_idx_start`` / ``split_idx_end`` (offsets into the document's original text).
    ``filters`` (:func:`haystack_filters`) at run time replace those given here, or are
    combined with them (``filter_policy="merge"``); ``top_k`` passages; ``mode``
    (``hybrid``, ``dense``, ``sparse``) and ``language`` (analyze queries as this ISO 639
    language) as in :meth:`ragkit.Index.search`.

    Example:
        >>> retriever = RagkitRetriever("my-index", top_k=2)  # doctest: +SKIP
        >>> retriever.run(query="boiling point")["documents"][0].meta["split_idx_start"]  # doctest: +SKIP
        0
    """

    def __init__(
        self,
        index: Index | str | Path | RagkitDocumentStore | None = None,
        filters: dict[str, Any] | None = None,
        top_k: int = 10,
        mode: SearchMode = "hybrid",
        rerank: bool = False,
        language: str | None = None,
        filter_policy: FilterPolicy | str = FilterPolicy.REPLACE,
        *,
        document_store: RagkitDocumentStore | None = None,
    ) -> None:
        self.index, self.document_store = _searched(index, document_store)
        haystack_filters(filters)  # a filter ragkit cannot apply fails here, not at run time
        self.filters = filters
        self.top_k = check_k(top_k, "top_k")
        self.options = SearchOptions.of(mode=mode, rerank=rerank, language=language)
        self.filter_policy = (
            filter_policy
            if isinstance(filter_policy, FilterPolicy)
            else FilterPolicy.from_str(filter_policy)
        )

    def warm_up(self) -> None:
        """Load the index's encoder (and the reranker with ``rerank``) before the first query
        (``Pipeline.warm_up`` and ``Pipeline.run`` call this)."""
        if self.index.settings.embedding_model != AUTO_MODEL:
            _ = self.index.encoder
            if self.options.rerank:
                _ = self.index.reranker

    def to_dict(self) -> dict[str, Any]:
        """The component as a dict (the index by its location, or its document store)."""
        where = (
            {"document_store": self.document_store.to_dict()}
            if self.document_store is not None
            else {"index": index_location(self.index)}
        )
        return default_to_dict(
            self,
            **where,
            filters=self.filters,
            top_k=self.top_k,
            mode=self.options.mode,
            rerank=self.options.rerank,
            language=self.options.language,
            filter_policy=self.filter_policy.value,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RagkitRetriever":
        """The component :meth:`to_dict` wrote."""
        parameters = data.get("init_parameters", {})
        if isinstance(parameters.get("document_store"), dict):
            parameters["document_store"] = RagkitDocumentStore.from_dict(
                parameters["document_store"]
            )
        return default_from_dict(cls, data)

    @component.output_types(documents=list[Document])
    def run(
        self, query: str, filters: dict[str, Any] | None = None, top_k: int | None = None
    ) -> dict[str, list[Document]]:
        """The ``top_k`` best passages for ``query``.

        :param query: the query text.
        :param filters: Haystack filters, applied by ``filter_policy`` with the init filters.
        :param top_k: how many passages (default: the init ``top_k``; 0 returns none).
        :returns: ``{"documents": [...]}``, best first.
        """
        chosen = apply_filter_policy(self.filter_policy, self.filters, filters)
        k = check_k(self.top_k if top_k is None else top_k, "top_k")
        if k == 0:
            return {"documents": []}
        hits = self.index.search(query, self.options, k=k, filters=haystack_filters(chosen))
        starting = [hit.key for hit in hits if hit.start == 0]
        lengths = document_lengths(self.index, starting) if starting else {}
        return {"documents": [hit_document(hit, lengths.get(hit.key)) for hit in hits]}

    @component.output_types(documents=list[Document])
    async def run_async(
        self, query: str, filters: dict[str, Any] | None = None, top_k: int | None = None
    ) -> dict[str, list[Document]]:
        """:meth:`run` in a worker thread, for async pipelines."""
        return await asyncio.to_thread(self.run, query, filters, top_k)


def _searched(
    index: Index | str | Path | RagkitDocumentStore | None,
    document_store: RagkitDocumentStore | None,
) -> tuple[Index, RagkitDocumentStore | None]:
    """The index a retriever searches, and the store it came from (None: given an index)."""
    if isinstance(index, RagkitDocumentStore) and document_store is None:
        index, document_store = None, index
    if (index is None) == (document_store is None):
        raise InvalidArgumentError(
            "RagkitRetriever: give an index (an Index or its location) or a document_store (a "
            "RagkitDocumentStore), one of them"
        )
    if document_store is None:
        assert index is not None and not isinstance(index, RagkitDocumentStore)
        return open_index(index), None
    if not isinstance(document_store, RagkitDocumentStore):
        raise InvalidArgumentError(
            f"document_store={type(document_store).__name__}: RagkitRetriever searches a "
            "RagkitDocumentStore (another store's documents are not in a ragkit index)"
        )
    return document_store.index, document_store


def hit_document(hit: Hit, length: int | None = None) -> Document:
    """A hit as a Haystack ``Document`` (see :class:`RagkitRetriever`); ``length``: its
    document's length, when known (a hit that is the whole document takes the document's id).

    Example:
        >>> from ragkit.query.hits import Hit
        >>> split = {"source_id": "report", "split_idx_start": 100, "split_idx_end": 140}
        >>> hit = Hit(text="Ice floats.", score=0.8, document_id="s1", source="<haystack>",
        ...           start=0, end=11, language="en", metadata=split, key="s1")
        >>> found = hit_document(hit, length=40)
        >>> found.id, found.meta["source_id"], found.meta["split_idx_start"], found.meta["split_idx_end"]
        ('s1:0-11', 'report', 100, 111)
    """
    meta = hit_metadata(hit)
    base = meta.get("split_idx_start")
    if isinstance(base, int) and not isinstance(base, bool) and is_record_source(hit.source):
        # a split a splitter wrote: offsets into the document it was split from
        meta |= {"split_idx_start": base + hit.start, "split_idx_end": base + hit.end}
    else:
        meta |= {"source_id": hit.key, "split_idx_start": hit.start, "split_idx_end": hit.end}
    whole = hit.start == 0 and hit.end == length
    identifier = hit.key if whole else f"{hit.key}:{hit.start}-{hit.end}"
    return Document(id=identifier, content=hit.text, meta=meta, score=hit.relevance)
