"""``RagkitDocumentStore``: a ragkit index as a Haystack ``DocumentStore``.

A Haystack ``Document`` is one ragkit record: its ``id`` the record's id (the document's key),
``content`` its text, ``meta`` its metadata. ragkit analyzes what is written as it analyzes
any record (language, adaptive chunking, normalization, its index model's embedding, BM25
terms), so the index stays searchable by :class:`RagkitRetriever` and ``ragkit query``.

Example:
    >>> from haystack import Document
    >>> store = RagkitDocumentStore("my-index", model="all-minilm-l6-v2")  # doctest: +SKIP
    >>> store.write_documents([Document(id="faq-1", content="Water boils at 100 C.")])  # doctest: +SKIP
    1
    >>> store.filter_documents({"field": "id", "operator": "==", "value": "faq-1"})  # doctest: +SKIP
    [Document(id=faq-1, content: 'Water boils at 100 C.')]
"""

import asyncio
import logging
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from haystack import Document, default_from_dict, default_to_dict
from haystack.document_stores.errors import DuplicateDocumentError
from haystack.document_stores.types import DuplicatePolicy

from ragkit.documents.given import check_source, is_record_source
from ragkit.errors import InvalidArgumentError
from ragkit.index import Index
from ragkit.integrations.common import add_records, delete_records, open_index
from ragkit.integrations.haystack.filters import HaystackFilterError, haystack_filters
from ragkit.store.records import FIELD_BYTES, DocumentEntry

log = logging.getLogger(__name__)

SOURCE = "<haystack>"


class RagkitDocumentStore:
    """A ragkit :class:`~ragkit.Index` as a Haystack ``DocumentStore``, for
    ``DocumentWriter`` and ragkit's :class:`RagkitRetriever` (``document_store=store``).

    ``index`` is an open :class:`~ragkit.Index` or its location (a folder, ``milvus://…``),
    created when missing with ``model`` and any other ragkit ``settings`` (``chunker``…).
    Documents are written as records of ``source`` (``<haystack>``): ``id`` → the record id,
    ``content`` → its text, ``meta`` → its metadata (JSON). What ragkit derives itself is not
    taken from the document: an ``embedding`` or ``sparse_embedding`` is not stored (ragkit
    embeds with its index's model and scores with BM25; a warning says so once), nor a
    ``score`` (a retriever's), nor a ``blob`` (a document needs text ``content``; a blob
    beside it is dropped with the same warning).

    :meth:`filter_documents` lists every document of the index — also those ingested from
    files or added otherwise, by their key, with ``file_path`` in ``meta`` for a file and
    ``title`` when it has one — with its whole original text; returned documents have no
    ``embedding`` and no ``score``, ordered by id.

    ``DuplicatePolicy.NONE`` (``DocumentWriter``'s default) is ``FAIL``, as in Haystack's
    in-memory store; ``OVERWRITE`` replaces the text and metadata of an id (an unchanged
    document is not analyzed again), ``SKIP`` passes over the ids already stored. An id
    another source already holds (a file, another ``source``'s record) is refused.

    Args:
        index: an open :class:`~ragkit.Index`, or where one is (or is to be created).
        model: the embedding model of a new index (``auto`` when None).
        source: the records' source, in angle brackets.
        **settings: other ragkit settings of a new index (``chunker="sentence"``…).

    Raises:
        RagkitError: settings that do not match an existing index, a ``source`` not in angle
            brackets, settings given with an open ``Index``.

    Example:
        >>> from haystack import Pipeline
        >>> from haystack.components.writers import DocumentWriter
        >>> store = RagkitDocumentStore("my-index", model="all-minilm-l6-v2")  # doctest: +SKIP
        >>> indexing = Pipeline()  # doctest: +SKIP
        >>> indexing.add_component("writer", DocumentWriter(store))  # doctest: +SKIP
        >>> indexing.run({"writer": {"documents": [Document(content="Ice floats.")]}})  # doctest: +SKIP
        {'writer': {'documents_written': 1}}
    """

    def __init__(
        self,
        index: Index | str | Path,
        *,
        model: str | None = None,
        source: str = SOURCE,
        **settings: Any,
    ) -> None:
        self.source = check_source(source)
        self._given = ({"model": model} if model is not None else {}) | settings
        self.index = open_index(index, create=True, **self._given)
        self._warned = False

    def to_dict(self) -> dict[str, Any]:
        """The store as a dict: the index by its location, the settings it was opened with."""
        return default_to_dict(
            self, index=str(self.index.store.location), source=self.source, **self._given
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RagkitDocumentStore":
        """The store :meth:`to_dict` wrote."""
        return default_from_dict(cls, data)

    def count_documents(self) -> int:
        """How many documents the index holds."""
        self.index.store.refresh()
        return self.index.store.counts()["documents"]

    def filter_documents(self, filters: dict[str, Any] | None = None) -> list[Document]:
        """The documents matching Haystack ``filters`` (all when None or empty), by id.

        :param filters: Haystack filters (:func:`haystack_filters`); ``id`` and ``content``
            are the document's id and text, ``meta.*`` its metadata.
        :returns: the documents, with their whole text and metadata.
        :raises FilterError: a filter ragkit cannot apply, or a malformed one
            (:class:`HaystackFilterError`, also a ragkit error).
        """
        with _as_filter_error():
            native = haystack_filters(filters) if filters else None
            entries = self.index.documents(filters=native)
        texts = self.index.store.texts_of([entry.key for entry in entries])
        return [
            Document(id=entry.key, content=texts[entry.key], meta=_meta(entry))
            for entry in entries
            if entry.key in texts  # removed since it was listed
        ]

    def write_documents(
        self, documents: list[Document], policy: DuplicatePolicy = DuplicatePolicy.NONE
    ) -> int:
        """Write ``documents`` as records (see the class); the number written.

        :param documents: Haystack documents with text ``content``.
        :param policy: what an id already stored (or given twice) does: ``FAIL`` (and
            ``NONE``) raises ``DuplicateDocumentError`` and writes nothing, ``SKIP`` keeps the
            stored one (and the first of an id given twice), ``OVERWRITE`` the last given.
        :returns: how many documents were written (``OVERWRITE``: as many as given).
        :raises ValueError: not a list of Documents, or a document ragkit cannot store (no
            text, an id over 65,535 bytes), before anything is written.
        """
        given = _checked(documents)
        if policy == DuplicatePolicy.NONE:
            policy = DuplicatePolicy.FAIL
        chosen: dict[str, Document] = {}
        for document in given:
            if document.id in chosen:
                if policy == DuplicatePolicy.FAIL:
                    raise DuplicateDocumentError(f"document id {document.id!r:.80} given twice")
                if policy == DuplicatePolicy.SKIP:
                    continue
                del chosen[document.id]  # OVERWRITE: the last one given counts
            chosen[document.id] = document
        if policy != DuplicatePolicy.OVERWRITE:
            stored = self._stored(list(chosen))
            if stored and policy == DuplicatePolicy.FAIL:
                shown = ", ".join(repr(i[:80]) for i in stored[:5])
                raise DuplicateDocumentError(
                    f"{len(stored)} document id(s) already stored: {shown} (write with "
                    "policy=DuplicatePolicy.OVERWRITE to replace them, or SKIP)"
                )
            for document_id in stored:
                del chosen[document_id]
        self._warn_unused(chosen.values())
        records = [
            {"id": d.id, "text": d.content, "metadata": dict(d.meta)} for d in chosen.values()
        ]
        if records:
            add_records(self.index, records, self.source)
        return len(given) if policy == DuplicatePolicy.OVERWRITE else len(records)

    def delete_documents(self, document_ids: list[str]) -> None:
        """Remove the documents ``document_ids`` (exact ids, never patterns; absent ones are
        passed over)."""
        if isinstance(document_ids, str) or not isinstance(document_ids, Sequence):
            raise InvalidArgumentError(
                f"document_ids={document_ids!r:.60}: give a list of document ids"
            )
        if document_ids:
            delete_records(self.index, document_ids)

    async def count_documents_async(self) -> int:
        """:meth:`count_documents` in a worker thread."""
        return await asyncio.to_thread(self.count_documents)

    async def filter_documents_async(self, filters: dict[str, Any] | None = None) -> list[Document]:
        """:meth:`filter_documents` in a worker thread."""
        return await asyncio.to_thread(self.filter_documents, filters)

    async def write_documents_async(
        self, documents: list[Document], policy: DuplicatePolicy = DuplicatePolicy.NONE
    ) -> int:
        """:meth:`write_documents` in a worker thread (``DocumentWriter.run_async``)."""
        return await asyncio.to_thread(self.write_documents, documents, policy)

    async def delete_documents_async(self, document_ids: list[str]) -> None:
        """:meth:`delete_documents` in a worker thread."""
        await asyncio.to_thread(self.delete_documents, document_ids)

    def _stored(self, ids: list[str]) -> list[str]:
        """Those of ``ids`` the index holds (a few queries for many ids, also on Milvus)."""
        self.index.store.refresh()
        held = self.index.store.texts_of(ids)
        return [i for i in ids if i in held]

    def _warn_unused(self, documents: Iterable[Document]) -> None:
        """Say once what of the written documents ragkit does not store."""
        if self._warned:
            return
        given = list(documents)
        unused = [
            name
            for name in ("embedding", "sparse_embedding", "blob")
            if any(getattr(document, name) is not None for document in given)
        ]
        if unused:
            self._warned = True
            log.warning(
                "RagkitDocumentStore stores the documents' text and metadata, not their %s "
                "(ragkit embeds with its index's model, %s, and scores terms with BM25)",
                " and ".join(unused),
                self.index.settings.embedding_model,
            )


def _checked(documents: Any) -> list[Document]:
    """``documents`` when ragkit can store every one, else a ``ValueError`` naming why."""
    if not isinstance(documents, list | tuple) or not all(
        isinstance(d, Document) for d in documents
    ):
        raise InvalidArgumentError(
            f"write_documents({type(documents).__name__}): give a list of Haystack Documents"
        )
    for document in documents:
        if not isinstance(document.id, str) or not document.id:
            raise InvalidArgumentError(f"document {document.id!r:.60}: give it an id (text)")
        size = len(document.id.encode("utf-8", "surrogatepass"))
        if size > FIELD_BYTES:
            raise InvalidArgumentError(
                f"document id {document.id[:40]!r}… is {size:,} bytes: ragkit stores ids of at "
                f"most {FIELD_BYTES:,} bytes (UTF-8); give the document a shorter id"
            )
        if document.content is None or not document.content.strip():
            raise InvalidArgumentError(
                f"document {document.id!r:.80}: no text content; ragkit stores and indexes text "
                "(leave empty documents out, e.g. with a splitter's skip_empty_documents)"
            )
    return list(documents)


def _meta(entry: DocumentEntry) -> dict[str, Any]:
    """A stored document's ``meta``: its metadata, beside ``file_path`` (a file's documents)
    and ``title`` when it has one (a metadata field of the same name keeps its value)."""
    fields: dict[str, Any] = {} if is_record_source(entry.source) else {"file_path": entry.source}
    if entry.title:
        fields["title"] = entry.title
    return fields | dict(entry.metadata)


@contextmanager
def _as_filter_error() -> Iterator[None]:
    """A filter the store refuses (an :class:`InvalidArgumentError`: a limit, a malformed
    native filter) as Haystack's ``FilterError`` too."""
    try:
        yield
    except HaystackFilterError:
        raise
    except InvalidArgumentError as error:
        raise HaystackFilterError(str(error)) from error
