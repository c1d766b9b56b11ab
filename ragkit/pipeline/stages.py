"""Ingest stages: load → chunk → normalize → embed → commit, one function per stage.

:class:`ragkit.pipeline.ingest.Ingest` orders them (the one ingest sequence, for
:meth:`ragkit.Index.ingest` and the Prefect flow in ``flows/ingest.py``), so both paths
chunk, normalize and embed identically; only the scheduling differs.

- **load**: :func:`load` reads one file into documents (skip reasons for what cannot load);
- **chunk**: :class:`DocumentChunker` applies the index's ``chunker`` setting — adaptive
  selection (:class:`ragkit.chunking.AdaptiveChunker`) or one named chunker — and returns the
  chunks with the selection record the index keeps per document;
- **normalize**: :func:`normalize_document_chunks` gives each chunk its matching key and sparse
  terms (the document title's terms included);
- **embed**: :func:`embedding_texts` lists what the encoder embeds (a chunk cut away from its
  title after the title, :func:`context_titles`), :func:`attach_vectors`
  pairs the vectors back with their documents for :meth:`ragkit.store.FolderStore.commit`.

Example:
    >>> from ragkit.documents import Document, text_blocks
    >>> text = "Water boils at 100 degrees. Ice melts at zero."
    >>> doc = Document("a.txt", "a.txt", text, "hash", text_blocks(text))
    >>> settings = Settings(chunker="sentence")
    >>> (prepared,) = prepare([doc], DocumentChunker(settings), settings)
    >>> [c.text for c in prepared.chunks], prepared.chunking.chosen
    (['Water boils at 100 degrees. Ice melts at zero.'], 'sentence')
    >>> prepared.terms
    ['water boil 100 degre ice melt zero']
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ragkit.chunking import AdaptiveChunker, Chunk, Chunker, ChunkingRecord, get_chunker
from ragkit.chunking.context import Embed
from ragkit.config import Settings
from ragkit.documents import Document, LoadResult, SkippedFile, load_file
from ragkit.embed import Encoder
from ragkit.embed.static import StaticEncoder
from ragkit.errors import RagkitError
from ragkit.normalize import detect_language, normalize_document
from ragkit.pipeline.languages import language_script
from ragkit.search.sparse import EXACT_TERM_LANGUAGES, analyze, uses_pieces
from ragkit.store import PendingDocument
from ragkit.tokenize import Tokenizer, tokenizer_for

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PreparedDocument:
    """A document chunked and normalized, waiting for its vectors.

    ``chunking`` is the record the index keeps for the document: the chosen chunker and, for
    adaptive chunking, every candidate's metric scores (:class:`ragkit.chunking.ChunkingRecord`).
    """

    document: Document
    chunks: list[Chunk]
    match_texts: list[str]
    terms: list[str]
    chunking: ChunkingRecord


def is_io_error(error: BaseException) -> bool:
    """True when a loading error came from the file system (worth retrying), not the content."""
    return isinstance(error, OSError) or isinstance(error.__cause__, OSError)


def load(path: Path, raise_io_errors: bool = False, text_field: str = "text") -> LoadResult:
    """The documents of one file; a file that cannot be loaded becomes a ``skipped`` entry.

    With ``raise_io_errors`` a read failure (:func:`is_io_error`) is raised instead, so a
    scheduler can retry it; content problems (not UTF-8, empty, broken PDF) are still skipped.
    ``text_field``: the field or column of a record's text (``.json``, ``.csv``, ``.tsv``).
    """
    result = LoadResult()
    try:
        load_file(path, result, text_field)
    except RagkitError as error:
        if raise_io_errors and is_io_error(error):
            raise
        result.skipped.append(SkippedFile.of_error(path, error))
    return result


_static_failed: set[str] = set()


def chunk_embed(settings: Settings, encoder: Callable[[], Encoder]) -> Embed:
    """The ``embed`` callable chunk selection uses (adaptive ICC/DCC, the ``semantic`` cuts),
    by the ``chunk_vectors`` setting: ``static`` token vectors from the index's encoder, made
    once per token met (:class:`ragkit.embed.static.StaticEncoder`), or the ``encoder`` itself.
    ``encoder`` is called on first use only (short documents never need vectors). When static
    vectors cannot be had (model2vec missing, a model without a transformer to pass tokens
    through), the encoder is used, with one warning per model.
    """
    if settings.chunk_vectors == "encoder":
        return lambda texts: encoder().encode_passages(texts)

    def embed(texts: list[str]) -> np.ndarray:
        loaded = encoder()
        if loaded.spec.location not in _static_failed:
            try:
                return StaticEncoder.for_encoder(loaded).encode(texts)
            except (RagkitError, ImportError, OSError, ValueError) as error:
                _static_failed.add(loaded.spec.location)
                log.warning(
                    "static chunk vectors unavailable for %s (%s); choosing chunks with the "
                    "full encoder",
                    loaded.spec.name,
                    error,
                )
        return loaded.encode_passages(texts)

    return embed


class DocumentChunker:
    """The chunk stage as an index's settings define it.

    ``settings.chunker == "adaptive"``: every candidate chunker runs and the best by the
    weighted metrics (``settings.chunk_weights``) is kept; ``embed`` (:func:`chunk_embed`:
    static vectors from the index's encoder, or the encoder itself) feeds the ``semantic``
    candidate and the ICC/DCC metrics, and is only called for documents longer than one
    budget. Any other value names one chunker (``fixed``, ``sentence``, ``recursive``, ``structure``,
    ``semantic``). Budgets are counted with the document language's tokenizer.
    """

    def __init__(self, settings: Settings, embed: Embed | None = None) -> None:
        self.settings = settings
        options: dict[str, Any] = {
            "max_tokens": settings.chunk_tokens,
            "min_tokens": settings.chunk_min_tokens,
        }
        self.adaptive: AdaptiveChunker | None = None
        self.single: Chunker | None = None
        if settings.chunker == "adaptive":
            self.adaptive = AdaptiveChunker(embed=embed, weights=settings.chunk_weights, **options)
        else:
            if settings.chunker == "semantic":
                if embed is None:
                    raise RagkitError(
                        "chunker 'semantic' needs embeddings: pass embed= (the index encoder)"
                    )
                options["embed"] = embed
            self.single = get_chunker(settings.chunker, **options)

    def __call__(self, documents: Sequence[Document]) -> list[tuple[list[Chunk], ChunkingRecord]]:
        """Each document's chunks and the chunking record the index stores for it (adaptive
        scoring embeds the sentences of all ``documents`` in one batched call)."""
        if self.adaptive is not None:
            return [(s.chunks, s.record) for s in self.adaptive.chunk_many(documents)]
        assert self.single is not None
        label = ChunkingRecord(self.single.label)
        return [(self.single.chunk(d.text, d.blocks, d.language), label) for d in documents]


@functools.cache
def _tokenizer(language: str) -> Tokenizer | None:
    """The language's tokenizer, or None (logged once) when no models are installed."""
    try:
        return tokenizer_for(language)
    except RagkitError as error:
        log.warning("%s; matching regex word tokens instead", error)
        return None


def matching_key(text: str, language: str | None, settings: Settings) -> str:
    """``text`` normalized as ``settings`` say (``language`` detected when None).

    Example:
        >>> matching_key("إِلَى", "ar", Settings())
        'الي'
    """
    if settings.normalization == "off":
        return text
    return normalize_document(
        text,
        language or detect_language(text),
        geez_mode=settings.geez_mode,
        lexical=settings.lexical_normalization,
        orthography=settings.orthography,
    ).text


def sparse_terms(key: str, language: str, settings: Settings) -> list[str]:
    """Sparse terms of a matching key (:func:`ragkit.search.sparse.analyze`), by the
    ``sparse_terms`` and ``exact_terms`` settings.

    Example:
        >>> sparse_terms("the wings", "en", Settings())
        ['wing']
        >>> sparse_terms("بالاعمال", "ar", Settings())
        ['اعمال', '=بالاعمال']
    """
    tokenizer = _tokenizer(language) if uses_pieces(language, settings.sparse_terms) else None
    exact = settings.exact_terms == "on" or (
        settings.exact_terms == "auto" and language in EXACT_TERM_LANGUAGES
    )
    return analyze(key, language, tokenizer.pieces if tokenizer else None, exact)


def context_titles(document: Document, chunks: Sequence[Chunk], settings: Settings) -> list[str]:
    r"""The title each chunk is embedded with (``""``: the chunk's own text alone).

    With ``chunk_context = "title"`` (the default) a chunk that does not open with its
    document's title is embedded as title + chunk, so a passage cut away from its heading still
    says what the document is about. ``"none"``, or a document without a title, gives ``""``.
    The stored chunk text, matching key and offsets always stay the chunk's own.

    Example:
        >>> from ragkit.documents import text_blocks
        >>> text = "Boiling\n\nWater boils at 100 degrees."
        >>> doc = Document("a.txt", "a.txt", text, "h", text_blocks(text), title="Boiling")
        >>> chunks = [Chunk(text[:7], 0, 7, 1, "x"), Chunk(text[9:], 9, len(text), 6, "x")]
        >>> context_titles(doc, chunks, Settings())
        ['', 'Boiling']
    """
    title = document.title.strip()
    if settings.chunk_context == "none" or not title:
        return [""] * len(chunks)
    return ["" if chunk.text.lstrip().startswith(title) else title for chunk in chunks]


def normalize_document_chunks(
    document: Document, chunks: Sequence[Chunk], settings: Settings
) -> tuple[list[str], list[str]]:
    """Each chunk's matching key and its space-joined sparse terms. With ``chunk_context =
    "title"`` every chunk's terms start with the document title's, as a title field would: a
    body chunk matches its document's title words, and the chunk that holds the title counts
    them twice (the usual title boost; Cranfield sparse nDCG@10 0.355 → 0.359, CISI 0.384 →
    0.385)."""
    language = document.language
    keys = [matching_key(c.text, language, settings) for c in chunks]
    title = document.title.strip() if settings.chunk_context == "title" else ""
    title_terms = sparse_terms(matching_key(title, language, settings), language, settings)
    terms = [" ".join(title_terms + sparse_terms(key, language, settings)) for key in keys]
    return keys, terms


def prepare(
    documents: Sequence[Document],
    chunker: DocumentChunker,
    settings: Settings,
    seconds: dict[str, float] | None = None,
) -> list[PreparedDocument]:
    """Chunk and normalize documents (the stages before embedding); ``seconds`` (when given)
    accumulates the time of each under ``chunk`` and ``normalize``."""
    clock = time.perf_counter()
    chunked = chunker(documents)
    chunk_seconds = time.perf_counter() - clock
    clock = time.perf_counter()
    prepared = [
        PreparedDocument(
            document, chunks, *normalize_document_chunks(document, chunks, settings), record
        )
        for document, (chunks, record) in zip(documents, chunked, strict=True)
    ]
    if seconds is not None:
        seconds["chunk"] = seconds.get("chunk", 0.0) + chunk_seconds
        seconds["normalize"] = seconds.get("normalize", 0.0) + time.perf_counter() - clock
    return prepared


NORMALIZED_EMBEDDING_SCRIPTS = frozenset({"Arab"})
"""Scripts whose text ``normalization = "auto"`` embeds normalized: diacritics and letter
variants only split words for the bundled encoders (``benchmarks/arabic_retrieval.py``)."""


def embeds_normalized(language: str, settings: Settings) -> bool:
    """Whether the encoder sees ``language``'s matching key rather than the text as written.

    Example:
        >>> embeds_normalized("ar", Settings()), embeds_normalized("en", Settings())
        (True, False)
        >>> embeds_normalized("en", Settings(normalization="pre-index"))
        True
    """
    if settings.normalization == "auto":
        return language_script(language) in NORMALIZED_EMBEDDING_SCRIPTS
    return settings.normalization == "pre-index"


def embedding_texts(prepared: Sequence[PreparedDocument], settings: Settings) -> list[str]:
    """What the encoder embeds, in order: each chunk's text (its matching key when
    :func:`embeds_normalized`), after its :func:`context_titles` entry when there is one."""
    texts: list[str] = []
    for item in prepared:
        pre_index = embeds_normalized(item.document.language, settings)
        titles = context_titles(item.document, item.chunks, settings)
        if pre_index and any(titles):  # one title per document: normalize it once
            key = matching_key(item.document.title.strip(), item.document.language, settings)
            titles = [key if title else "" for title in titles]
        for chunk, key, title in zip(item.chunks, item.match_texts, titles, strict=True):
            body = key if pre_index else chunk.text
            texts.append(f"{title}\n\n{body}" if title else body)
    return texts


def attach_vectors(
    prepared: Sequence[PreparedDocument], vectors: np.ndarray
) -> list[PendingDocument]:
    """Pair :func:`embedding_texts`' vectors back with their documents, ready to commit."""
    total = sum(len(item.chunks) for item in prepared)
    if len(vectors) != total:
        raise RagkitError(f"embedding stage returned {len(vectors)} vectors for {total} chunks")
    pending: list[PendingDocument] = []
    position = 0
    for item in prepared:
        size = len(item.chunks)
        pending.append(
            PendingDocument(
                item.document,
                item.chunks,
                vectors[position : position + size],
                item.match_texts,
                item.terms,
                item.chunking,
            )
        )
        position += size
    return pending
