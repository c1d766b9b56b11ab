"""The Python API: open or create an index, ingest files, search.

Example:
    >>> from ragkit import Index
    >>> index = Index.open("my-index", create=True, model="all-minilm-l6-v2")  # doctest: +SKIP
    >>> report = index.ingest(["examples/"])  # doctest: +SKIP
    >>> index.search("boiling point of water", k=3)[0].source  # doctest: +SKIP
    'examples/en/water.md'
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import ValidationError

from ragkit.config import RERANK_SETTINGS, Settings
from ragkit.documents import Document, SkippedFile, iter_batches, load_paths
from ragkit.embed import Encoder
from ragkit.errors import RagkitError
from ragkit.lock import WriteLock
from ragkit.models import (
    AUTO_DIMENSION,
    AUTO_MODEL,
    MINILM_NAMES,
    MULTILINGUAL_MODEL,
    choose_model,
)
from ragkit.normalize import detect_language
from ragkit.pipeline import (
    DocumentChunker,
    attach_vectors,
    embedding_texts,
    matching_key,
    normalize_document_chunks,
    sparse_terms,
)
from ragkit.pipeline import PreparedDocument as Prepared
from ragkit.retrieve import SEARCH_MODES, FusionMethod, SearchMode, fuse
from ragkit.store import DB_NAME, Store

if TYPE_CHECKING:
    from ragkit.rerank.reranker import Reranker

log = logging.getLogger(__name__)


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

    def record_loaded(self, documents: list[Document], skipped: list[SkippedFile]) -> None:
        """Count the files seen (those that gave documents, and skipped ones) and keep the
        skip reasons."""
        self.skipped = list(skipped)
        self.files_seen = len({d.source for d in documents}) + len(skipped)

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
        self._reranker: Reranker | None = None
        self._chunker: DocumentChunker | None = None

    @classmethod
    def open(
        cls, path: str | Path, create: bool = False, model: str | None = None, **settings: Any
    ) -> Index:
        """Open the index at ``path``; with ``create=True`` make it when it does not exist.

        ``settings`` of a new index are stored with it. For an existing index they must match
        the stored ones, except the reranking settings (``RERANK_SETTINGS``: ``reranker``,
        ``rerank_depth``, ``rerank_weight``, ``rerank_passes``), which apply to this handle
        only, e.g. ``Index.open("my-index", rerank_weight=0.3)``.
        """
        folder = Path(path)
        if create and not (folder / DB_NAME).exists():
            chosen = Settings(**({"embedding_model": model} if model else {}), **settings)
            if chosen.embedding_model == AUTO_MODEL:
                return cls(Store.create(folder, chosen, AUTO_DIMENSION))
            encoder = Encoder(chosen.embedding_model, chosen.embed_batch_size)
            index = cls(Store.create(folder, chosen, encoder.dimension))
            index._encoder = encoder
            return index
        index = cls(Store.open(folder))
        if model and model not in (AUTO_MODEL, index.settings.embedding_model):
            raise RagkitError(
                f"{folder}: built with {index.settings.embedding_model!r}, not {model!r}; "
                "use a new --index folder for another model"
            )
        for name, value in settings.items():
            if name not in RERANK_SETTINGS and getattr(index.settings, name) != value:
                raise RagkitError(
                    f"{folder}: built with {name}={getattr(index.settings, name)!r}, not "
                    f"{value!r}; use a new --index folder for other settings"
                )
        overrides = {n: v for n, v in settings.items() if n in RERANK_SETTINGS}
        if overrides:
            try:
                index.settings = Settings.model_validate(index.settings.model_dump() | overrides)
            except ValidationError as error:
                raise RagkitError(f"{folder}: {error}") from error
        return index

    @property
    def reranker(self) -> Reranker:
        """The groupwise reranker named by the ``reranker`` setting (loaded on first use)."""
        if self._reranker is None:
            from ragkit.rerank.reranker import Reranker

            self._reranker = Reranker.load(
                self.settings.reranker,
                passes=self.settings.rerank_passes,
                first_stage_weight=self.settings.rerank_weight,
            )
        return self._reranker

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            if self.settings.embedding_model == AUTO_MODEL:
                raise RagkitError(
                    f"{self.store.folder}: no embedding model yet; model 'auto' is chosen from "
                    "the documents of the first ingest"
                )
            self._encoder = Encoder(self.settings.embedding_model, self.settings.embed_batch_size)
        return self._encoder

    def choose_model(self, documents: Sequence[Document]) -> None:
        """Resolve an ``auto`` model from the languages of the first documents to ingest
        (:func:`ragkit.models.choose_model`) and store the choice; then, with an English-only
        model, log a warning naming the languages of any other documents among ``documents``."""
        languages = [d.language for d in documents]
        if self.settings.embedding_model == AUTO_MODEL and documents:
            name, reason = choose_model(languages)
            encoder = Encoder(name, self.settings.embed_batch_size)
            if encoder.dimension != self.store.dimension:
                raise RagkitError(f"model {name}: {encoder.dimension}-d, the index is not")
            chosen = {"embedding_model": name}  # the store keeps its own reranking settings
            self.store.replace_settings(self.store.settings.model_copy(update=chosen))
            self.settings = self.settings.model_copy(update=chosen)
            self._encoder, self._chunker = encoder, None
            log.info("embedding model: %s (%s)", name, reason)
        foreign = Counter(x for x in languages if x not in ("en", "und"))
        if foreign and self.settings.embedding_model in MINILM_NAMES:
            log.warning(
                "%d documents are not English (%s) but %s embeds English only; index them "
                "in a folder created with --model %s",
                foreign.total(),
                ", ".join(sorted(foreign)),
                self.settings.embedding_model,
                MULTILINGUAL_MODEL,
            )

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
        with self.writing(wait):
            return self._ingest(paths, prune, progress)

    @contextmanager
    def writing(self, wait: bool | float = True) -> Iterator[None]:
        """Hold the index's writer lock (see :meth:`ingest` for ``wait``) for a whole ingest:
        follow the last committed generation and drop a crashed commit's leftovers first."""
        with WriteLock(self.store.folder, wait):
            self.store.refresh()  # another writer may have committed while this one waited
            self.store.remove_stale_files()
            yield

    def plan(
        self, documents: list[Document], roots: list[Path], prune: bool, report: IngestReport
    ) -> tuple[list[Document], list[str]]:
        """The documents to (re-)ingest — new or changed content hash — and, with ``prune``,
        the keys of stored documents under ``roots`` that were not found; counted in
        ``report``."""
        known = self.store.document_hashes()
        changed = [d for d in documents if known.get(d.key) != d.content_hash]
        report.documents_unchanged = len(documents) - len(changed)
        stale = self._stale_keys(documents, roots, known) if prune else []
        report.documents_removed = len(stale)
        return changed, stale

    def finish(self, report: IngestReport, started: str, stale: list[str]) -> IngestReport:
        """Remove ``stale`` documents, rebuild BM25 once and log the run (after all commits)."""
        if stale:
            self.store.commit([], remove_keys=stale)
        clock = time.perf_counter()
        self.store.ensure_sparse()  # once per ingest: a full rebuild after this run's commits
        report.seconds["sparse"] = time.perf_counter() - clock
        report.generation = self.store.generation
        self.store.log_run(started, report.as_dict())
        return report

    def _ingest(
        self,
        paths: Iterable[str | Path],
        prune: bool = False,
        progress: ProgressCallback | None = None,
    ) -> IngestReport:
        """Load, chunk, embed and commit files; unchanged documents are skipped by content hash."""
        started = datetime.now(UTC).isoformat()
        report = IngestReport()
        clock = time.perf_counter()
        roots = [Path(p) for p in paths]
        loaded = load_paths(roots)
        report.record_loaded(loaded.documents, loaded.skipped)
        report.seconds["load"] = time.perf_counter() - clock

        changed, stale = self.plan(loaded.documents, roots, prune, report)
        self.choose_model(changed)
        total_chunks = 0
        report.seconds.update(chunk=0.0, normalize=0.0, embed=0.0, commit=0.0)
        for batch in iter_batches(changed, self.settings.commit_every_documents):
            clock = time.perf_counter()
            chunked = self.chunker(batch)
            report.seconds["chunk"] += time.perf_counter() - clock
            clock = time.perf_counter()
            prepared = [
                Prepared(doc, chunks, *normalize_document_chunks(doc, chunks, self.settings), rec)
                for doc, (chunks, rec) in zip(batch, chunked, strict=True)
            ]
            report.seconds["normalize"] += time.perf_counter() - clock
            clock = time.perf_counter()
            texts = embedding_texts(prepared, self.settings)
            done = total_chunks
            vectors = self.encoder.encode_passages(
                texts,
                progress=(lambda n, done=done: progress("embed", done + n, 0))
                if progress
                else None,
            )
            report.seconds["embed"] += time.perf_counter() - clock
            clock = time.perf_counter()
            self.store.commit(attach_vectors(prepared, vectors))
            report.seconds["commit"] += time.perf_counter() - clock
            total_chunks += len(texts)
            report.documents_added += len(batch)
            if progress:
                progress("documents", report.documents_added, len(changed))
        report.chunks_added = total_chunks
        return self.finish(report, started, stale)

    @property
    def chunker(self) -> DocumentChunker:
        """The chunk stage this index's settings define (adaptive unless ``chunker`` names one);
        adaptive scoring and the ``semantic`` chunker embed with the index's own encoder."""
        if self._chunker is None:
            self._chunker = DocumentChunker(self.settings, embed=self._embed_units)
        return self._chunker

    def _embed_units(self, texts: list[str]) -> np.ndarray:
        return self.encoder.encode_passages(texts)

    def terms(self, key: str, language: str) -> list[str]:
        """Sparse terms of a matching key (:func:`ragkit.pipeline.sparse_terms`)."""
        return sparse_terms(key, language, self.settings)

    def matching_key(self, text: str, language: str | None = None) -> str:
        """``text`` normalized as this index normalizes (``language`` detected when None).

        Example:
            >>> index = Index.open("my-index")  # doctest: +SKIP
            >>> index.matching_key("إِلَى", "ar")  # doctest: +SKIP
            'الي'
        """
        return matching_key(text, language, self.settings)

    def chunking(self, key: str) -> dict[str, Any]:
        """The chunking record of the document ``key``: the chosen chunker and, for adaptive
        chunking, every candidate's metric scores (:meth:`ragkit.chunking.Selection.as_dict`).
        """
        record = self.store.chunking(key)
        if record is None:
            raise RagkitError(f"{self.store.folder}: no document {key!r} (keys are file paths)")
        return record

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
        fusion: FusionMethod | None = None,
        rerank: bool = False,
    ) -> list[Hit]:
        """The ``k`` best chunks for ``query``, best first.

        ``mode``: ``hybrid`` (dense + BM25, fused), ``dense`` or ``sparse``. ``filters`` keep
        chunks whose document matches every entry (``language``, ``source`` glob, or any
        metadata key) and apply before fusion. ``fusion``: ``weighted`` or ``rrf`` (default: the
        ``fusion`` setting).
        ``rerank``: the first stage's top ``rerank_depth`` go through the groupwise reranker
        (:mod:`ragkit.rerank`) and ``score`` becomes the reranker's (interpolated) score.
        """
        if rerank:
            depth = max(k, self.settings.rerank_depth)
            candidates = self.search(query, depth, mode, filters, fusion)
            return self.reranker.rerank_hits(query, candidates, k)
        if mode not in SEARCH_MODES:
            raise RagkitError(f"search mode {mode!r}: use one of {', '.join(SEARCH_MODES)}")
        if self.settings.embedding_model == AUTO_MODEL:
            return []  # nothing ingested yet
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
            method = fusion or self.settings.fusion
            scored = fuse(rankings, method, self.settings.rrf_k, weights)[:k]
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
            "chunker": self.settings.chunker,
            **self.store.counts(),
            "chunkers chosen": self.store.chunker_counts(),
        }

    def close(self) -> None:
        self.store.close()
