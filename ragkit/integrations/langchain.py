"""LangChain components (``pip install "ragkit[langchain]"``): a ragkit index as a
``VectorStore`` and ragkit's adaptive chunker as a ``TextSplitter``.

:class:`RagkitVectorStore` embeds, chunks and searches with ragkit (hybrid dense + BM25
search, multilingual normalization, optional reranking); the ``embedding`` LangChain passes
around is not used. :class:`RagkitTextSplitter` chunks as ``ragkit chunk`` does and puts the
offsets and the chosen chunker in each document's metadata.

Example:
    >>> from langchain_core.documents import Document
    >>> store = RagkitVectorStore(index="my-index", model="all-minilm-l6-v2")  # doctest: +SKIP
    >>> store.add_documents([Document("Water boils at 100 °C.", metadata={"year": 2021})])  # doctest: +SKIP
    ['5f0c…']
    >>> store.as_retriever(search_kwargs={"k": 1}).invoke("boiling point")  # doctest: +SKIP
    [Document(id='5f0c…', metadata={'year': 2021}, page_content='Water boils at 100 °C.')]
"""

from __future__ import annotations

import copy
import logging
import shutil
import tempfile
import uuid
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ragkit.documents.given import is_record_source
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
    delete_records,
    document_lengths,
    open_index,
    stored_texts,
)
from ragkit.query import SearchOptions
from ragkit.search.fusion import SearchMode

try:
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import VectorStore
    from langchain_text_splitters import TextSplitter
except ImportError as error:
    raise FrameworkNotInstalled.of(
        "langchain-core / langchain-text-splitters", "langchain", error
    ) from error

log = logging.getLogger(__name__)

SOURCE = "<langchain>"
# Search keywords: LangChain's ``filter`` and every search option but ``k`` and ``filters``.
SEARCH_OPTIONS = (
    "filter",
    *(name for name in SearchOptions.model_fields if name not in ("k", "filters")),
)
OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$contains")
LIKE = {"$like": "$contains", "$ilike": "$icontains"}  # a pattern %text%: a substring


def langchain_filter(given: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A LangChain metadata filter as a ragkit filter (:mod:`ragkit.store.filters`).

    Keys name metadata fields, as in every LangChain store (``source`` is the metadata field
    loaders set; ``language`` is the document's language, detected or given; ``id`` the
    document's id); a value is matched as is, a list matches any of its values. Operators:
    ``$eq $ne $gt $gte $lt $lte $in $nin $exists $contains``, joined by ``$and``, ``$or`` and
    ``$not``; ``$like``/``$ilike`` with a pattern ``%text%`` (a substring: ``$contains`` /
    ``$icontains``) — any other pattern is refused (ragkit matches substrings, not prefixes).
    ragkit's own spellings (``{"year": {">=": 2000}}``) work too. A malformed filter (an empty
    operator dict, ``$and`` without a list of dicts, a key that is not text, a value of the
    wrong type) is a :class:`RagkitError`, never an empty result.

    Example:
        >>> langchain_filter({"$or": [{"year": {"$gte": 2000}}, {"source": "a.pdf"}]})
        {'$or': [{'year': {'$gte': 2000}}, {'meta.source': 'a.pdf'}]}
        >>> langchain_filter({"title": {"$like": "%boil%"}})
        {'title': {'$contains': 'boil'}}
    """
    if given is None:
        return None
    if not isinstance(given, Mapping):
        raise RagkitError(f"filter={given!r:.60}: give a dict of metadata field → value")
    return checked_filter(_translated(given), "LangChain")


def _translated(given: Mapping[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in given.items():
        if not isinstance(key, str):
            raise RagkitError(f"filter key {key!r}: name a metadata field (text)")
        if key in ("$and", "$or"):
            if not isinstance(value, list | tuple) or not all(
                isinstance(part, Mapping) for part in value
            ):
                raise RagkitError(f"filter {key} {value!r:.60}: give a list of filter dicts")
            found[key] = [_translated(part) for part in value]
        elif key == "$not":
            parts = value if isinstance(value, list | tuple) else [value]
            if not parts or not all(isinstance(part, Mapping) for part in parts):
                raise RagkitError(f"filter $not {value!r:.60}: give a filter dict")
            found[key] = {"$and": [_translated(part) for part in parts]}
        elif key.startswith("$"):
            raise RagkitError(
                f"filter {key!r}: join filters with $and, $or, $not; compare a field with "
                f"{', '.join(OPERATORS)}, $like, $ilike"
            )
        else:
            found["meta.source" if key == "source" else key] = _condition(key, value)
    return found


def _condition(key: str, value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    if not isinstance(value, Mapping):
        return value
    if not value:
        raise RagkitError(
            f"filter {key!r}: an empty operator dict; give a value, or e.g. "
            f"{{{key!r}: {{'$gte': 2000}}}}"
        )
    condition: dict[str, Any] = {}
    for operator, operand in value.items():
        if operator in LIKE:
            condition[LIKE[operator]] = _substring(key, operator, operand)
        else:  # $eq… and ragkit's own (>=): the filter language checks them
            condition[operator] = list(operand) if isinstance(operand, tuple) else operand
    return condition


def _substring(key: str, operator: str, pattern: Any) -> str:
    """The text a ``%text%`` pattern looks for."""
    inner = pattern[1:-1] if isinstance(pattern, str) and len(pattern) >= 2 else None
    if (
        inner is None
        or not pattern.startswith("%")
        or not pattern.endswith("%")
        or set(inner) & set("%_")
    ):
        raise RagkitError(
            f"filter {key!r} {operator} {pattern!r:.60}: ragkit matches substrings: write "
            "'%text%' (no other % or _), or $contains"
        )
    return inner


class RagkitVectorStore(VectorStore):
    """A ragkit :class:`~ragkit.Index` as a LangChain ``VectorStore``.

    ``index`` is an open :class:`~ragkit.Index` or its location (created when missing, with
    ``model`` and any other ragkit ``settings``); without one the store lives in a temporary
    folder removed with the store, like LangChain's in-memory store. Texts are added as
    records of ``source`` (``<langchain>``) keyed by their ids; the index chunks them
    adaptively, so a long text is found by its passages.

    A hit that is a whole added text comes back as it was added (``id``, text and metadata);
    a passage of one carries ``start_index`` and ``end_index`` into that text in its
    metadata (added to the ``start_index`` the text already had, as
    :class:`RagkitTextSplitter` and LangChain's splitters set it, so offsets stay in the
    original). Documents ingested from files carry their ``source`` path and offsets.

    Search options (``similarity_search`` arguments or ``as_retriever(search_kwargs=…)``):
    ``k``, ``filter`` (:func:`langchain_filter`), ``mode`` (``hybrid``, ``dense``,
    ``sparse``), ``rerank``, ``language`` (analyze the query as this ISO 639 language) and
    ``fusion``; the store's own ``mode``, ``rerank`` and ``language`` are the defaults.

    Example:
        >>> store = RagkitVectorStore.from_texts(  # doctest: +SKIP
        ...     ["Water boils at 100 °C.", "الماء يغلي عند مئة درجة"],
        ...     metadatas=[{"lang": "en"}, {"lang": "ar"}],
        ...     index="my-index",
        ... )
        >>> retriever = store.as_retriever(search_kwargs={"k": 1, "filter": {"lang": "ar"}})  # doctest: +SKIP
        >>> retriever.invoke("درجة غليان الماء")[0].metadata  # doctest: +SKIP
        {'lang': 'ar'}
    """

    def __init__(
        self,
        embedding: Embeddings | None = None,
        *,
        index: Index | str | Path | None = None,
        model: str | None = None,
        source: str = SOURCE,
        mode: SearchMode = "hybrid",
        rerank: bool = False,
        language: str | None = None,
        **settings: Any,
    ) -> None:
        if embedding is not None:
            log.warning(
                "RagkitVectorStore embeds with its index's own model; the %s given is not "
                "used (choose ragkit's model with model=…, e.g. 'all-minilm-l6-v2')",
                type(embedding).__name__,
            )
        self._temporary: Path | None = None
        if index is None:
            self._temporary = Path(tempfile.mkdtemp(prefix="ragkit-langchain-"))
            index = self._temporary / "index"
        if model is not None:
            settings["model"] = model
        self.index = open_index(index, create=True, **settings)
        if self._temporary is not None:
            weakref.finalize(self, _remove, self.index, self._temporary)
        if not is_record_source(source):
            raise RagkitError(f"source {source!r}: write it in angle brackets, e.g. '<notes>'")
        self.source = source
        self.options = SearchOptions.of(mode=mode, rerank=rerank, language=language)

    @property
    def embeddings(self) -> Embeddings | None:
        """None: ragkit embeds with its index's model (``store.index.encoder``)."""
        return None

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """Index ``texts`` (with ``metadatas``) under ``ids`` (new uuid4 ids where none are
        given); a text added again under its id replaces the stored one, an unchanged one
        is skipped. Returns the ids. Other keyword arguments (``batch_size``) are accepted
        and unused: the index batches itself."""
        texts = list(texts)
        if metadatas is not None and len(metadatas) != len(texts):
            raise RagkitError(f"{len(metadatas)} metadatas for {len(texts)} texts: give one each")
        if ids is not None and len(ids) != len(texts):
            raise RagkitError(f"{len(ids)} ids for {len(texts)} texts: give one each")
        given = list(ids) if ids is not None else [None] * len(texts)
        chosen = [str(i) if i is not None else str(uuid.uuid4()) for i in given]
        records: dict[str, dict[str, Any]] = {}
        for position, (record_id, text) in enumerate(zip(chosen, texts, strict=True)):
            metadata = check_metadata(metadatas[position] if metadatas else None, record_id)
            records.pop(record_id, None)  # an id given twice: the last text counts
            records[record_id] = {"id": record_id, "text": text, "metadata": metadata}
        if records:
            add_records(self.index, list(records.values()), self.source)
        return chosen

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Remove the documents whose id is exactly one of ``ids`` (never read as globs; ids
        not in the index are passed over: :func:`delete_records`); without ids, every record
        this store's ``source`` holds. True when done."""
        if ids is None:
            ids = [d.key for d in self.index.documents() if d.source == self.source]
        delete_records(self.index, ids)
        return True

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        """The stored documents ``ids``, whole (absent ids are left out)."""
        return [
            Document(id=document.key, page_content=text, metadata=_stored_metadata(document))
            for document, text in stored_texts(self.index, [str(i) for i in ids])
        ]

    def similarity_search(
        self, query: str, k: int = 4, filter: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> list[Document]:
        """The ``k`` best passages for ``query`` (search options as in the class doc)."""
        return [doc for doc, _ in self.similarity_search_with_score(query, k, filter, **kwargs)]

    def similarity_search_with_score(
        self, query: str, k: int = 4, filter: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """The ``k`` best passages for ``query`` with ragkit's scores (higher is better; for
        ``hybrid`` with weighted fusion in [0, 1])."""
        unknown = sorted(set(kwargs) - set(SEARCH_OPTIONS))
        if unknown:
            raise RagkitError(
                f"RagkitVectorStore search: unknown option(s) {', '.join(unknown)}; the options "
                f"are k, {', '.join(SEARCH_OPTIONS)}"
            )
        if check_k(k, "k") == 0:
            return []
        options = SearchOptions.of(self.options, **kwargs, k=k, filters=langchain_filter(filter))
        hits = self.index.search(query, options)
        return [(self._document(hit, n), hit.score) for hit, n in _with_lengths(self.index, hits)]

    def _document(self, hit: Hit, length: int | None) -> Document:
        metadata = dict(hit.metadata)
        record = is_record_source(hit.source)
        if not record:
            metadata.setdefault("source", hit.source)
            if hit.title:
                metadata.setdefault("title", hit.title)
        if not (record and hit.start == 0 and hit.end == length):
            base = metadata.get("start_index", 0) if record else 0
            base = base if isinstance(base, int) and not isinstance(base, bool) else 0
            metadata["start_index"] = base + hit.start
            metadata["end_index"] = base + hit.end
        return Document(id=hit.key, page_content=hit.text, metadata=metadata)

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        return lambda score: min(1.0, max(0.0, score))

    def similarity_search_by_vector(
        self, embedding: list[float], k: int = 4, **kwargs: Any
    ) -> list[Document]:
        """Not offered: ragkit embeds queries itself, with its index's model."""
        raise NotImplementedError(
            "RagkitVectorStore searches by query text (it embeds with its index's model): use "
            "similarity_search(query)"
        )

    def max_marginal_relevance_search(
        self, query: str, k: int = 4, fetch_k: int = 20, lambda_mult: float = 0.5, **kwargs: Any
    ) -> list[Document]:
        """Not offered: ragkit diversifies nothing; rank with its reranker instead
        (``as_retriever(search_kwargs={"rerank": True})``)."""
        raise NotImplementedError(
            "RagkitVectorStore has no MMR search; use search_type='similarity' (optionally "
            "with search_kwargs={'rerank': True})"
        )

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings | None = None,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> RagkitVectorStore:
        """A store (``kwargs``: ``index``, ``model``, ``source``… as in the class) holding
        ``texts``."""
        store = cls(embedding, **kwargs)
        store.add_texts(texts, metadatas, ids=ids)
        return store

    @classmethod
    def from_documents(
        cls, documents: list[Document], embedding: Embeddings | None = None, **kwargs: Any
    ) -> RagkitVectorStore:
        """A store holding ``documents`` (``embedding`` may be left out: ragkit embeds with
        its index's model), as :meth:`from_texts`.

        Example:
            >>> store = RagkitVectorStore.from_documents([Document("Water boils.")])  # doctest: +SKIP
        """
        texts = [document.page_content for document in documents]
        metadatas = [dict(document.metadata) for document in documents]
        if "ids" not in kwargs and any(document.id for document in documents):
            kwargs["ids"] = [document.id or str(uuid.uuid4()) for document in documents]
        return cls.from_texts(texts, embedding, metadatas, **kwargs)


def _with_lengths(index: Index, hits: list[Hit]) -> list[tuple[Hit, int | None]]:
    """Each hit with the length of its document when it is a record starting at 0 (the one
    case where it may be the whole record)."""
    keys = [h.key for h in hits if h.start == 0 and is_record_source(h.source)]
    lengths = document_lengths(index, keys) if keys else {}
    return [(hit, lengths.get(hit.key)) for hit in hits]


def _stored_metadata(document: Any) -> dict[str, Any]:
    metadata = dict(document.metadata)
    if not is_record_source(document.source):
        metadata.setdefault("source", document.source)
    return metadata


def _remove(index: Index, folder: Path) -> None:
    index.close()
    shutil.rmtree(folder, ignore_errors=True)


class RagkitTextSplitter(TextSplitter):
    """ragkit's adaptive chunker as a LangChain ``TextSplitter``: every candidate chunker
    runs on each text and the best by ragkit's chunk metrics is kept (or the one
    ``chunker`` names: ``fixed``, ``sentence``, ``recursive``, ``structure``, ``semantic``).

    ``chunk_size`` is a budget in tokens of the text's language (ragkit's tokenizers), not
    characters. Chunks do not overlap: a ``chunk_overlap`` is ignored (with a warning), as are
    options of character splitters (``length_function``, ``separators``…). Each document's
    metadata gets ``start_index`` and ``end_index`` (``text[start_index:end_index]`` is the
    chunk; leave them out with ``add_start_index=False``) and ``chunker``, the chunker chosen
    for the text. ``model`` embeds sentences for the metrics (``auto``: by language),
    ``markdown`` reads headings, lists and code as blocks, ``language`` overrides detection.

    Example:
        >>> splitter = RagkitTextSplitter(chunk_size=64, chunker="sentence")
        >>> text = "Water boils at 100 degrees. Ice melts at zero."
        >>> doc = splitter.create_documents([text])[0]
        >>> doc.metadata
        {'start_index': 0, 'end_index': 46, 'chunker': 'sentence'}
    """

    def __init__(
        self,
        chunk_size: int = 256,
        chunk_overlap: int = 0,
        *,
        chunker: str = "adaptive",
        model: str = AUTO_MODEL,
        weights: Mapping[str, float] | None = None,
        markdown: bool = False,
        language: str | None = None,
        add_start_index: bool = True,
        **kwargs: Any,
    ) -> None:
        ignored = sorted(kwargs) + (["chunk_overlap"] if chunk_overlap else [])
        if ignored:
            log.warning(
                "RagkitTextSplitter: %s ignored (ragkit chunks by tokens and structure, "
                "without overlap)",
                ", ".join(ignored),
            )
        super().__init__(chunk_size=chunk_size, chunk_overlap=0, add_start_index=add_start_index)
        self.chunker = TextChunker(chunker, chunk_size, model, weights, markdown, language)

    def split_text(self, text: str) -> list[str]:
        """The chunks of ``text``."""
        return [chunk.text for chunk in self.chunker([text])[0].chunks]

    def create_documents(
        self, texts: list[str], metadatas: list[dict[Any, Any]] | None = None
    ) -> list[Document]:
        """One document per chunk of each text, its metadata copied and completed with the
        chunk's offsets and the chosen chunker (texts are chunked in one batch)."""
        if metadatas is not None and len(metadatas) != len(texts):
            raise RagkitError(f"{len(metadatas)} metadatas for {len(texts)} texts: give one each")
        documents = []
        for position, chunked in enumerate(self.chunker(texts)):
            for chunk in chunked.chunks:
                metadata = copy.deepcopy(metadatas[position]) if metadatas else {}
                if self._add_start_index:
                    metadata["start_index"] = chunk.start
                    metadata["end_index"] = chunk.end
                metadata["chunker"] = chunked.chosen
                documents.append(Document(page_content=chunk.text, metadata=metadata))
        return documents
