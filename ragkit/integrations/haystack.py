"""Haystack 2 components (``pip install "ragkit-pipeline[haystack]"``): a retriever over a ragkit
index and a splitter running ragkit's adaptive chunker, both ``@component`` classes.

Their documents carry offsets the way Haystack's ``DocumentSplitter`` writes them:
``source_id`` (the document a passage comes from), ``split_idx_start`` and
``split_idx_end`` (``text[split_idx_start:split_idx_end]`` is the passage).

Example:
    >>> from haystack import Pipeline
    >>> pipeline = Pipeline()  # doctest: +SKIP
    >>> pipeline.add_component("retriever", RagkitRetriever("my-index", top_k=3))  # doctest: +SKIP
    >>> pipeline.run({"retriever": {"query": "boiling point"}})["retriever"]["documents"]  # doctest: +SKIP
    [Document(id=/docs/water.md:0-52, content: 'Water boils at 100 …', score: 0.93, …)]
"""

import asyncio
from collections.abc import Mapping
from copy import deepcopy
from pathlib import Path
from typing import Any

from ragkit.embed.models import AUTO_MODEL
from ragkit.errors import InvalidArgumentError, RagkitError
from ragkit.index import Hit, Index
from ragkit.integrations.common import (
    FrameworkNotInstalled,
    TextChunker,
    check_k,
    checked_filter,
    hit_metadata,
    index_location,
    open_index,
)
from ragkit.query import SearchOptions
from ragkit.search.fusion import SearchMode
from ragkit.store.filters import instant_of

# No ``from __future__ import annotations`` here: Haystack 2 matches sockets by the run
# methods' evaluated annotations.

try:
    from haystack import Document, component, default_from_dict, default_to_dict
    from haystack.document_stores.types import FilterPolicy, apply_filter_policy
    from haystack.errors import FilterError
except ImportError as error:
    raise FrameworkNotInstalled.of("haystack-ai", "haystack", error) from error

try:  # Haystack 3 loads pipelines' classes from allowed modules only: these are plain settings
    from haystack.core.serialization import allow_deserialization_module
except ImportError:  # Haystack 2
    pass
else:
    allow_deserialization_module(__name__)

FIELDS = {"meta.file_path": "source", "meta.language": "language", "meta.source": "meta.source"}
COMPARISONS = {"==": "$eq", "!=": "$ne", ">": "$gt", ">=": "$gte", "<": "$lt", "<=": "$lte",
               "in": "$in", "not in": "$nin"}  # fmt: skip
RANGES = (">", ">=", "<", "<=")


class HaystackFilterError(InvalidArgumentError, FilterError):
    """A Haystack filter ragkit cannot apply: a ragkit error (exit 2, HTTP 422) that is also
    Haystack's ``FilterError``, as Haystack's document stores raise it."""


def _key(field: Any) -> str:
    """The ragkit filter key of a Haystack field: ``content``, ``id`` or ``meta.*``."""
    if field in ("content", "id"):
        return field
    if not isinstance(field, str) or not field.startswith("meta."):
        raise HaystackFilterError(
            f"Haystack filter on {field!r}: ragkit filters on content, id and meta.* fields"
        )
    return FIELDS.get(field, field.removeprefix("meta."))


def haystack_filters(filters: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Haystack filters as a ragkit filter (:mod:`ragkit.store.filters`).

    Comparisons (``{"field": "meta.year", "operator": ">=", "value": 2000}``) with ``==``,
    ``!=``, ``>``, ``>=``, ``<``, ``<=``, ``in``, ``not in``, joined by ``AND``, ``OR`` and
    ``NOT`` (none… of its conditions all hold) to any depth, translate with Haystack's
    semantics: ``== None`` matches a missing field too, ``!=`` and ``not in`` match documents
    lacking the field, a comparison takes a number or an ISO 8601 date (text that is neither,
    or a list, is refused), ``in`` and ``not in`` take a list. ``content`` is the document's
    text, ``id`` its id, ``meta.file_path`` its path (a glob), ``meta.language`` its language,
    any other ``meta.*`` field its metadata. A dict without ``operator`` (nor ``field`` or
    ``conditions``) is taken as a ragkit filter as it is. A filter ragkit cannot apply is a
    :class:`HaystackFilterError` — a :class:`RagkitError` and Haystack's ``FilterError`` —
    never an empty result.

    Example:
        >>> haystack_filters({"operator": "NOT", "conditions": [
        ...     {"field": "meta.year", "operator": ">=", "value": 2000},
        ...     {"field": "meta.language", "operator": "in", "value": ["ar", "fa"]},
        ... ]})
        {'$not': {'$and': [{'year': {'$gte': 2000}}, {'language': {'$in': ['ar', 'fa']}}]}}
    """
    if filters is None:
        return None
    if not isinstance(filters, Mapping):
        raise HaystackFilterError(f"filters={filters!r:.60}: give Haystack filters (a dict)")
    if "operator" not in filters:
        if {"field", "conditions"} & set(filters):
            raise HaystackFilterError(
                f"Haystack filters {dict(filters)!r:.60}: no 'operator' (a comparison has field, "
                "operator and value; a logic filter operator and conditions)"
            )
        translated = dict(filters)  # a ragkit filter
    else:
        translated = _translated(filters)
    try:
        return checked_filter(translated, "Haystack")
    except InvalidArgumentError as error:
        raise HaystackFilterError(str(error)) from None


def _translated(filters: Any) -> dict[str, Any]:
    if not isinstance(filters, Mapping) or "operator" not in filters:
        raise HaystackFilterError(
            f"Haystack filter {filters!r:.60}: a condition is a dict with field, operator and "
            "value, or with operator and conditions"
        )
    operator = filters["operator"]
    if "conditions" not in filters:
        return _comparison(filters, operator)
    conditions = filters["conditions"]
    if not isinstance(conditions, list):
        raise HaystackFilterError(
            f"Haystack filter {operator!r}: 'conditions' is a list of conditions, not "
            f"{type(conditions).__name__}"
        )
    if operator not in ("AND", "OR", "NOT"):
        raise HaystackFilterError(
            f"Haystack filter {operator!r}: join conditions with AND, OR or NOT"
        )
    parts = [_translated(condition) for condition in conditions]
    if operator == "NOT":  # Haystack: NOT of all the conditions together
        return {"$not": {"$and": parts}}
    return {"$and" if operator == "AND" else "$or": parts}


def _comparison(filters: Mapping[str, Any], operator: Any) -> dict[str, Any]:
    if "field" not in filters:
        raise HaystackFilterError(
            f"Haystack filter {dict(filters)!r:.60}: a condition has field, operator and value"
        )
    field = filters["field"]
    key = _key(field)
    if "value" not in filters:
        raise HaystackFilterError(
            f"Haystack filter on {field!r}: no 'value' (a comparison has field, operator and value)"
        )
    value = filters["value"]
    if operator not in COMPARISONS:
        raise HaystackFilterError(
            f"Haystack filter on {field!r}: operator {operator!r}; use {', '.join(COMPARISONS)}"
        )
    if operator in RANGES and not _comparable(value):
        raise HaystackFilterError(
            f"Haystack filter {field} {operator} {value!r:.60}: compare with a number or an "
            "ISO 8601 date"
        )
    if operator in ("in", "not in") and not isinstance(value, list):
        raise HaystackFilterError(
            f"Haystack filter {field} {operator} {value!r:.60}: give a list of values"
        )
    return {key: {COMPARISONS[operator]: value}}


def _comparable(value: Any) -> bool:
    """What Haystack compares with ``>``…: a number, ISO 8601 text, or None (nothing)."""
    if value is None or isinstance(value, str) and instant_of(value) is not None:
        return True
    return isinstance(value, int | float) and not isinstance(value, bool)


@component
class RagkitRetriever:
    """Retrieves passages from a ragkit index: hybrid dense + BM25 search with ragkit's
    multilingual normalization and, with ``rerank``, its groupwise reranker.

    ``index`` is an open :class:`~ragkit.Index` or its location. Each document is a passage:
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
        index: Index | str | Path,
        filters: dict[str, Any] | None = None,
        top_k: int = 10,
        mode: SearchMode = "hybrid",
        rerank: bool = False,
        language: str | None = None,
        filter_policy: FilterPolicy | str = FilterPolicy.REPLACE,
    ) -> None:
        self.index = open_index(index)
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
        """The component as a dict (the index by its location)."""
        return default_to_dict(
            self,
            index=index_location(self.index),
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
        return {"documents": [hit_document(hit) for hit in hits]}

    @component.output_types(documents=list[Document])
    async def run_async(
        self, query: str, filters: dict[str, Any] | None = None, top_k: int | None = None
    ) -> dict[str, list[Document]]:
        """:meth:`run` in a worker thread, for async pipelines."""
        return await asyncio.to_thread(self.run, query, filters, top_k)


def hit_document(hit: Hit) -> Document:
    """A hit as a Haystack ``Document`` (see :class:`RagkitRetriever`)."""
    meta = hit_metadata(hit) | {
        "source_id": hit.key,
        "split_idx_start": hit.start,
        "split_idx_end": hit.end,
    }
    return Document(
        id=f"{hit.key}:{hit.start}-{hit.end}", content=hit.text, meta=meta, score=hit.relevance
    )


@component
class RagkitDocumentSplitter:
    """Splits documents with ragkit's adaptive chunker: every candidate chunker runs on each
    document and the best by ragkit's chunk metrics is kept (or the one ``chunker`` names:
    ``fixed``, ``sentence``, ``recursive``, ``structure``, ``semantic``).

    ``split_length`` is a budget in tokens of the document's language (ragkit's
    tokenizers); splits do not overlap. Each split copies its document's ``meta`` and adds,
    as Haystack's ``DocumentSplitter`` does, ``source_id``, ``page_number`` (form feeds
    before it, plus one), ``split_id`` and ``split_idx_start``, and also ``split_idx_end``
    and ``chunker`` (the chunker chosen for the document). ``model`` embeds sentences for the
    metrics (``auto``: by language), ``markdown`` reads headings, lists and code as blocks,
    ``language`` overrides detection.

    Example:
        >>> splitter = RagkitDocumentSplitter(split_length=64, chunker="sentence")
        >>> split = splitter.run(documents=[Document(content="One. Two.")])["documents"][0]
        >>> split.meta["split_idx_start"], split.meta["split_idx_end"], split.meta["chunker"]
        (0, 9, 'sentence')
    """

    def __init__(
        self,
        split_length: int = 256,
        chunker: str = "adaptive",
        model: str = AUTO_MODEL,
        weights: dict[str, float] | None = None,
        markdown: bool = False,
        language: str | None = None,
        skip_empty_documents: bool = True,
    ) -> None:
        self.split_length = split_length
        self.chunker = chunker
        self.model = model
        self.weights = weights
        self.markdown = markdown
        self.language = language
        self.skip_empty_documents = skip_empty_documents
        self._chunk = TextChunker(chunker, split_length, model, weights, markdown, language)

    def to_dict(self) -> dict[str, Any]:
        """The component as a dict."""
        return default_to_dict(
            self,
            split_length=self.split_length,
            chunker=self.chunker,
            model=self.model,
            weights=self.weights,
            markdown=self.markdown,
            language=self.language,
            skip_empty_documents=self.skip_empty_documents,
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RagkitDocumentSplitter":
        """The component :meth:`to_dict` wrote."""
        return default_from_dict(cls, data)

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document]) -> dict[str, list[Document]]:
        """Split ``documents`` (chunked in one batch).

        :param documents: Haystack documents with text ``content``.
        :returns: ``{"documents": [...]}``, the splits of each document in order.
        """
        if not isinstance(documents, list) or not all(isinstance(d, Document) for d in documents):
            raise RagkitError("RagkitDocumentSplitter takes a list of Haystack Documents")
        for document in documents:
            if document.content is None:
                raise RagkitError(
                    f"document {document.id}: no text content (RagkitDocumentSplitter splits text)"
                )
        kept = [d for d in documents if d.content or not self.skip_empty_documents]
        splits: list[Document] = []
        for document, chunked in zip(
            kept, self._chunk([d.content or "" for d in kept]), strict=True
        ):
            for number, chunk in enumerate(chunked.chunks):
                meta = deepcopy(document.meta) | {
                    "source_id": document.id,
                    "page_number": chunked.text.count("\f", 0, chunk.start) + 1,
                    "split_id": number,
                    "split_idx_start": chunk.start,
                    "split_idx_end": chunk.end,
                    "chunker": chunked.chosen,
                }
                splits.append(Document(content=chunk.text, meta=meta))
        return {"documents": splits}

    @component.output_types(documents=list[Document])
    async def run_async(self, documents: list[Document]) -> dict[str, list[Document]]:
        """:meth:`run` in a worker thread, for async pipelines."""
        return await asyncio.to_thread(self.run, documents)
