"""The Python API: open or create an index, ingest files, search.

Example:
    >>> from ragkit import Index
    >>> index = Index.open("my-index", create=True, model="all-minilm-l6-v2")  # doctest: +SKIP
    >>> report = index.ingest(["examples/"])  # doctest: +SKIP
    >>> index.search("boiling point of water", k=3)[0].source  # doctest: +SKIP
    'examples/en/water.md'
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ragkit.chunking import RecursiveTokenChunker, count_tokens
from ragkit.config import Settings
from ragkit.documents import Document, SkippedFile, iter_batches, load_paths
from ragkit.embed import Encoder
from ragkit.errors import RagkitError
from ragkit.lock import WriteLock
from ragkit.normalize import detect_language, normalize_document
from ragkit.retrieve import SEARCH_MODES, FusionMethod, SearchMode, fuse
from ragkit.sparse import analyze, has_stemmer
from ragkit.store import DB_NAME, PendingDocument, Store
from ragkit.tokenize import Tokenizer, tokenizer_for

log = logging.getLogger(__name__)


@functools.cache
def _tokenizer(language: str) -> Tokenizer | None:
    """The language's tokenizer, or None (logged once) when no models are installed."""
    try:
        return tokenizer_for(language)
    except RagkitError as error:
        log.warning("%s; counting and matching regex word tokens instead", error)
        return None


@dataclass(frozen=True)
class Hit:
    """One search result: a chunk of a document, with offsets into the document's original text."""

    text: str
    score: float
    document_id: str
    source: str
    start: int
    end: int
    title: str = ""
    language: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class IngestReport:
    """What an ingest did: counts, per-file skip reasons and time per stage (seconds)."""

    files_seen: int = 0
    documents_added: int = 0
    documents_unchanged: int = 0
    documents_removed: int = 0
    chunks_added: int = 0
    skipped: list[SkippedFile] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    generation: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "files_seen": self.files_seen,
            "documents_added": self.documents_added,
            "documents_unchanged": self.documents_unchanged,
            "documents_removed": self.documents_removed,
            "chunks_added": self.chunks_added,
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
            "seconds": self.seconds,
            "generation": self.generation,
        }


ProgressCallback = Callable[[str, int, int], None]


class Index:
    """A ragkit index folder: SQLite + FAISS, with the encoder it was built with."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.settings = store.settings
        self._encoder: Encoder | None = None
        self._chunkers: dict[str, RecursiveTokenChunker] = {}

    @classmethod
    def open(
        cls, path: str | Path, create: bool = False, model: str | None = None, **settings: Any
    ) -> Index:
        """Open the index at ``path``; with ``create=True`` make it when it does not exist."""
        folder = Path(path)
        if create and not (folder / DB_NAME).exists():
            chosen = Settings(**({"embedding_model": model} if model else {}), **settings)
            encoder = Encoder(chosen.embedding_model, chosen.embed_batch_size)
            index = cls(Store.create(folder, chosen, encoder.dimension))
            index._encoder = encoder
            return index
        index = cls(Store.open(folder))
        if model and model != index.settings.embedding_model:
            raise RagkitError(
                f"{folder}: built with {index.settings.embedding_model!r}, not {model!r}; "
                "use a new --index folder for another model"
            )
        for name, value in settings.items():
            if getattr(index.settings, name) != value:
                raise RagkitError(
                    f"{folder}: built with {name}={getattr(index.settings, name)!r}, not "
                    f"{value!r}; use a new --index folder for other settings"
                )
        return index

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = Encoder(self.settings.embedding_model, self.settings.embed_batch_size)
        return self._encoder

    def ingest(
        self,
        paths: Iterable[str | Path],
        prune: bool = False,
        progress: ProgressCallback | None = None,
        wait: bool | float = True,
    ) -> IngestReport:
        """Load, chunk, embed and commit files under the index's writer lock.

        ``wait``: while another writer holds the index, wait (True, logging whom for), fail at
        once with a :class:`RagkitError` (False) or wait at most that many seconds.
        """
        with WriteLock(self.store.folder, wait):
            self.store.refresh()  # another writer may have committed while this one waited
            return self._ingest(paths, prune, progress)

    def _ingest(
        self,
        paths: Iterable[str | Path],
        prune: bool = False,
        progress: ProgressCallback | None = None,
    ) -> IngestReport:
        """Load, chunk, embed and commit files; unchanged documents are skipped by content hash."""
        started = datetime.now(UTC).isoformat()
        report = IngestReport()
        self.store.remove_stale_files()  # leftovers of a crashed commit, now that we write
        clock = time.perf_counter()
        roots = [Path(p) for p in paths]
        loaded = load_paths(roots)
        report.skipped = loaded.skipped
        report.files_seen = len({d.source for d in loaded.documents}) + len(loaded.skipped)
        report.seconds["load"] = time.perf_counter() - clock

        known = self.store.document_hashes()
        changed = [d for d in loaded.documents if known.get(d.key) != d.content_hash]
        report.documents_unchanged = len(loaded.documents) - len(changed)
        stale = self._stale_keys(loaded.documents, roots, known) if prune else []
        report.documents_removed = len(stale)

        total_chunks = 0
        report.seconds.update(chunk=0.0, normalize=0.0, embed=0.0, commit=0.0)
        for batch in iter_batches(changed, self.settings.commit_every_documents):
            clock = time.perf_counter()
            chunked = [
                (doc, self.chunker(doc.language).chunk(doc.text, doc.blocks)) for doc in batch
            ]
            report.seconds["chunk"] += time.perf_counter() - clock
            clock = time.perf_counter()
            keys = [[self.matching_key(c.text, doc.language) for c in cs] for doc, cs in chunked]
            terms = [
                [" ".join(self.terms(key, doc.language)) for key in doc_keys]
                for (doc, _), doc_keys in zip(chunked, keys, strict=True)
            ]
            report.seconds["normalize"] += time.perf_counter() - clock
            clock = time.perf_counter()
            pre_index = self.settings.normalization == "pre-index"
            texts = [
                key if pre_index else chunk.text
                for (_, chunks), chunk_keys in zip(chunked, keys, strict=True)
                for chunk, key in zip(chunks, chunk_keys, strict=True)
            ]
            done = total_chunks
            vectors = self.encoder.encode_passages(
                texts,
                progress=(lambda n, done=done: progress("embed", done + n, 0))
                if progress
                else None,
            )
            report.seconds["embed"] += time.perf_counter() - clock
            clock = time.perf_counter()
            pending, position = [], 0
            for (doc, chunks), chunk_keys, chunk_terms in zip(chunked, keys, terms, strict=True):
                doc_vectors = vectors[position : position + len(chunks)]
                pending.append(PendingDocument(doc, chunks, doc_vectors, chunk_keys, chunk_terms))
                position += len(chunks)
            self.store.commit(pending)
            report.seconds["commit"] += time.perf_counter() - clock
            total_chunks += len(texts)
            report.documents_added += len(batch)
            if progress:
                progress("documents", report.documents_added, len(changed))
        if stale:
            self.store.commit([], remove_keys=stale)
        clock = time.perf_counter()
        self.store.ensure_sparse()  # once per ingest: a full rebuild after this run's commits
        report.seconds["sparse"] = time.perf_counter() - clock
        report.chunks_added = total_chunks
        report.generation = self.store.generation
        self.store.log_run(started, report.as_dict())
        return report

    def chunker(self, language: str) -> RecursiveTokenChunker:
        """The chunker for a language: budgets counted with its SentencePiece tokenizer."""
        if language not in self._chunkers:
            tokenizer = _tokenizer(language)
            counter = tokenizer.count if tokenizer else count_tokens
            self._chunkers[language] = RecursiveTokenChunker(self.settings.chunk_tokens, counter)
        return self._chunkers[language]

    def terms(self, key: str, language: str) -> list[str]:
        """Sparse terms of a matching key (:func:`ragkit.sparse.analyze`, ``sparse_terms``)."""
        choice = self.settings.sparse_terms
        tokenizer = None
        if choice == "pieces" or (choice == "auto" and not has_stemmer(language)):
            tokenizer = _tokenizer(language)
        return analyze(key, language, tokenizer.pieces if tokenizer else None)

    def matching_key(self, text: str, language: str | None = None) -> str:
        """``text`` normalized as this index normalizes (``language`` detected when None).

        Example:
            >>> index = Index.open("my-index")  # doctest: +SKIP
            >>> index.matching_key("إِلَى", "ar")  # doctest: +SKIP
            'الي'
        """
        if self.settings.normalization == "off":
            return text
        return normalize_document(
            text,
            language or detect_language(text),
            geez_mode=self.settings.geez_mode,
            lexical=self.settings.lexical_normalization,
        ).text

    @staticmethod
    def _stale_keys(
        documents: list[Document], roots: list[Path], known: dict[str, str]
    ) -> list[str]:
        """Keys of stored documents under ``roots`` that this ingest no longer found."""
        present = {d.key for d in documents}
        prefixes = [str(r) for r in roots]
        return [
            key
            for key in known
            if key not in present
            and any(key == p or key.startswith(p.rstrip("/") + "/") for p in prefixes)
        ]

    def search(
        self,
        query: str,
        k: int = 10,
        mode: SearchMode = "hybrid",
        filters: dict[str, Any] | None = None,
        fusion: FusionMethod = "rrf",
    ) -> list[Hit]:
        """The ``k`` best chunks for ``query``, best first.

        ``mode``: ``hybrid`` (dense + BM25, fused), ``dense`` or ``sparse``. ``filters`` keep
        chunks whose document matches every entry (``language``, ``source`` glob, or any
        metadata key) and apply before fusion. ``fusion``: ``rrf`` or ``weighted``.
        """
        if mode not in SEARCH_MODES:
            raise RagkitError(f"search mode {mode!r}: use one of {', '.join(SEARCH_MODES)}")
        allowed = self.store.filtered_chunk_ids(filters) if filters else None
        depth = max(k, self.settings.fusion_depth)
        rankings = []
        language = detect_language(query)
        key = self.matching_key(query, language)
        if mode in ("hybrid", "dense"):
            text = key if self.settings.normalization == "pre-index" else query
            vector = self.encoder.encode_queries([text])[0]
            rankings.append(self.store.search_vectors(vector, depth, allowed))
        if mode in ("hybrid", "sparse"):
            rankings.append(self.store.search_terms(self.terms(key, language), depth, allowed))
        if len(rankings) == 1:
            scored = rankings[0][:k]
        else:
            weights = (self.settings.dense_weight, 1.0 - self.settings.dense_weight)
            scored = fuse(rankings, fusion, self.settings.rrf_k, weights)[:k]
        rows = self.store.chunks_by_id(i for i, _ in scored)
        return [
            Hit(
                text=rows[i].text,
                score=score,
                document_id=rows[i].external_id or rows[i].document_key,
                source=rows[i].source,
                start=rows[i].start,
                end=rows[i].end,
                title=rows[i].title,
                language=rows[i].language,
                metadata=rows[i].metadata,
            )
            for i, score in scored
            if i in rows
        ]

    def info(self) -> dict[str, Any]:
        return {
            "path": str(self.store.folder),
            "generation": self.store.generation,
            "embedding_model": self.settings.embedding_model,
            "dimension": self.store.dimension,
            **self.store.counts(),
        }

    def close(self) -> None:
        self.store.close()
