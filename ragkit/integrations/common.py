"""What the framework components share: the install hint, an index given by path or handle,
ragkit's chunk stage over texts held in memory, a framework's filter checked as ragkit's,
records removed by exact id.

Example:
    >>> chunked = TextChunker(chunker="sentence")(["Water boils. Ice melts."])[0]
    >>> [(c.start, c.end) for c in chunked.chunks], chunked.chosen
    ([(0, 23)], 'sentence')
    >>> checked_filter({"$or": [{"year": {"$gte": 2000}}, {"lang": {"$in": ["ar"]}}]}, "X")
    {'$or': [{'year': {'$gte': 2000}}, {'lang': {'$in': ['ar']}}]}
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragkit.chunking import Chunk
from ragkit.config import Settings
from ragkit.documents import Document, content_hash, text_blocks
from ragkit.documents.given import is_record_source
from ragkit.embed import Encoder
from ragkit.embed.models import AUTO_MODEL, choose_model
from ragkit.errors import InvalidArgumentError, RagkitError, validation_message
from ragkit.index import Hit, Index
from ragkit.normalize.detect import check_language
from ragkit.pipeline import DocumentChunker, chunk_embed
from ragkit.store.filters import parse_filter

log = logging.getLogger(__name__)


def install_hint(extra: str) -> str:
    """The command that installs a framework extra."""
    return f'pip install "ragkit[{extra}]"'


class FrameworkNotInstalled(RagkitError, ImportError):
    """A component module imported without its framework: names the extra that installs it
    (an :class:`ImportError` too, so ``except ImportError`` guards work as usual).

    Example:
        >>> str(FrameworkNotInstalled.of("haystack-ai", "haystack", ImportError("no haystack")))
        'haystack-ai is not installed (no haystack); install it with pip install "ragkit[haystack]"'
    """

    @classmethod
    def of(cls, package: str, extra: str, error: ImportError) -> FrameworkNotInstalled:
        """The error for ``package`` (installed by the ``extra``) missing, as ``error`` said."""
        return cls(f"{package} is not installed ({error}); install it with {install_hint(extra)}")


def open_index(index: Index | str | Path, create: bool = False, **options: Any) -> Index:
    """``index`` itself, or the index at that location (:meth:`ragkit.Index.open`)."""
    if isinstance(index, Index):
        if options:
            raise InvalidArgumentError(
                f"{', '.join(options)}: settings apply when an index is opened by path; "
                "give them to Index.open"
            )
        return index
    if not isinstance(index, str | Path):
        raise InvalidArgumentError(
            f"index={index!r:.60}: give a ragkit Index or its location (a folder, milvus://…)"
        )
    return Index.open(index, create=create, **options)


def index_location(index: Index) -> str:
    """Where ``index`` lives, as :meth:`ragkit.Index.open` takes it (for serialization)."""
    return str(index.store.location)


@dataclass(frozen=True)
class ChunkedText:
    """One text chunked: its chunks (offsets into ``text``), the chunker chosen for it and
    the language it was chunked as."""

    text: str
    chunks: list[Chunk]
    chosen: str
    language: str


class TextChunker:
    """ragkit's chunk stage (:class:`ragkit.pipeline.DocumentChunker`) over texts held in
    memory: ``adaptive`` runs every candidate chunker and keeps the best by the chunk metrics
    for each text, any other name (``fixed``, ``sentence``, ``recursive``, ``structure``,
    ``semantic``) uses that chunker. ``max_tokens`` is the budget in the text language's
    tokens; ``model`` embeds sentences for the metrics and the ``semantic`` candidate
    (``auto``: chosen from the texts' languages as an index would); ``markdown`` reads
    headings, lists, tables and code as blocks; ``language`` (ISO 639) overrides detection.
    """

    def __init__(
        self,
        chunker: str = "adaptive",
        max_tokens: int = 256,
        model: str = AUTO_MODEL,
        weights: Mapping[str, float] | None = None,
        markdown: bool = False,
        language: str | None = None,
    ) -> None:
        try:
            self.settings = Settings(
                chunker=chunker,
                chunk_tokens=max_tokens,
                chunk_weights=dict(weights) if weights is not None else None,
            )
        except ValidationError as error:
            setting = error.errors()[0]["loc"][0]
            raise RagkitError(f"{setting}: {validation_message(error)}") from error
        self.model = model
        self.markdown = markdown
        self.language = check_language(language, "language") if language else None
        self._encoders: dict[str, Encoder] = {}

    def _encoder(self, name: str) -> Callable[[], Encoder]:
        def load() -> Encoder:
            if name not in self._encoders:
                self._encoders[name] = Encoder(name)
            return self._encoders[name]

        return load

    def __call__(self, texts: Sequence[str]) -> list[ChunkedText]:
        """Each text's chunks, in order (an empty text has none)."""
        for position, text in enumerate(texts):
            if not isinstance(text, str):
                raise RagkitError(
                    f"text {position + 1} is {type(text).__name__}, not text: chunk strings"
                )
        documents = [
            Document(
                key=f"<text {position + 1}>",
                source="<text>",
                text=text,
                content_hash=content_hash(text.encode("utf-8", "surrogatepass")),
                blocks=text_blocks(text, markdown=self.markdown),
                language=self.language or "",
            )
            for position, text in enumerate(texts)
        ]
        if not documents:
            return []
        model = self.model
        if model == AUTO_MODEL:
            by_language: dict[str, int] = {}
            for document in documents:
                by_language[document.language] = by_language.get(document.language, 0) + len(
                    document.text
                )
            model, _ = choose_model(by_language)
        embed = chunk_embed(self.settings, self._encoder(model))
        chunked = DocumentChunker(self.settings, embed=embed)(documents)
        return [
            ChunkedText(document.text, chunks, record.chosen, document.language)
            for document, (chunks, record) in zip(documents, chunked, strict=True)
        ]


def checked_filter(filters: dict[str, Any], framework: str) -> dict[str, Any]:
    """``filters`` (a framework's filter translated to ragkit's), checked in the filter
    language (:func:`ragkit.store.filters.parse_filter`) so that a filter ragkit cannot apply
    fails where it is given; the error names the framework.

    Example:
        >>> checked_filter({"year": {"$gte": "recent"}}, "LangChain")
        Traceback (most recent call last):
        ...
        ragkit.errors.InvalidArgumentError: LangChain filter year$gte'recent': compare with a number or an ISO 8601 date (e.g. 2020-01-31 or 2020-01-31T12:00:00Z)
    """
    try:
        parse_filter(filters)
    except InvalidArgumentError as error:
        raise InvalidArgumentError(f"{framework} {error}") from None
    return filters


def check_metadata(metadata: Any, record_id: str) -> dict[str, Any]:
    """``metadata`` as a dict (what an index stores); its values are checked record by record
    when the records are added (:meth:`ragkit.Index.add`: a record whose metadata is not JSON
    is reported, the others are indexed)."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidArgumentError(
            f"record {record_id!r}: metadata is {type(metadata).__name__}; give a dict"
        )
    return dict(metadata)


def add_records(index: Index, records: list[dict[str, Any]], source: str) -> None:
    """``records`` added to ``index`` (:meth:`ragkit.Index.add`); a record the index could
    not take raises one :class:`RagkitError` naming each (the others are indexed)."""
    report = index.add(records, source=source)
    if report.skipped:
        problems = "; ".join(f"{s.path}: {s.reason}" for s in report.skipped)
        raise RagkitError(f"{len(report.skipped)} record(s) not indexed: {problems}")


def delete_records(index: Index, ids: Iterable[str], wait: bool | float = True) -> list[str]:
    """Remove the documents whose key is exactly one of ``ids`` with :meth:`ragkit.Index.delete`
    (never read as globs: ``"*"`` is the record ``*``; ids that are absent are passed over);
    the removed keys."""
    wanted = list(dict.fromkeys(str(i) for i in ids))
    index.store.refresh()
    present = [key for key in wanted if index.store.language_decision(key) is not None]
    return index.delete(present, wait=wait) if present else []


def stored_texts(index: Index, ids: Iterable[str]) -> list[tuple[Document, str]]:
    """The stored documents whose key is one of ``ids`` (absent ones left out), each with
    its text, read back whole."""
    index.store.refresh()
    found = index.store.stored_documents(list(dict.fromkeys(ids)))
    return [(item.document, item.document.text) for item in found]


def document_lengths(index: Index, keys: Iterable[str]) -> dict[str, int]:
    """The length in characters of each stored document ``keys`` names."""
    lengths: dict[str, int] = {}
    for key in dict.fromkeys(keys):
        for entry in index.store.list_documents(key):
            if entry.key == key:
                lengths[key] = entry.characters
    return lengths


def hit_metadata(hit: Hit) -> dict[str, Any]:
    """A hit's metadata for LlamaIndex and Haystack: the document's own, beside ragkit's
    ``file_path`` (for a document ingested from a file: its path, the key both frameworks'
    file readers use), ``language`` and ``title`` (when it has one); a metadata field of the
    same name keeps its own value."""
    fields: dict[str, Any] = {} if is_record_source(hit.source) else {"file_path": hit.source}
    fields["language"] = hit.language
    if hit.title:
        fields["title"] = hit.title
    return fields | dict(hit.metadata)


def check_k(k: Any, name: str) -> int:
    """``k`` as a number of results (0 allowed: nothing to retrieve)."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise InvalidArgumentError(f"{name}={k!r}: give a whole number ≥ 0")
    return k
