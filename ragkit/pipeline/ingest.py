"""The ingest sequence, written once: discover → load in groups (facts kept, texts spooled:
:mod:`~ragkit.pipeline.streaming`) → plan → languages → model → in steps (chunk → normalize →
embed), committed by documents, chunks or seconds, whichever first
(:mod:`~ragkit.pipeline.cadence`) → prune → BM25 → run log, timing each stage.

:meth:`ragkit.Index.ingest` runs it with :class:`LocalStages` (everything in this process);
the Prefect flow in ``flows/ingest.py`` runs the same sequence with stages that are Prefect
tasks (per-file loading with retries and caching, embedding batches spread over workers). Only
the :class:`IngestStages` differ; planning, the model choice, commits and pruning do not.

Example:
    >>> import tempfile
    >>> from ragkit.store import FolderStore
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.txt").write_text("Water boils at 100 degrees.")
    >>> settings = Settings(embedding_model="all-minilm-l6-v2", chunker="sentence")
    >>> store = FolderStore.create(folder / "index", settings, dimension=384)
    >>> report = Ingest(store, settings, LocalStages()).run([folder / "a.txt"])  # doctest: +SKIP
    >>> report.documents_added, report.chunks_added  # doctest: +SKIP
    (1, 1)
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ragkit.config import Settings
from ragkit.documents import (
    Document,
    Identified,
)
from ragkit.documents.discovery import others_than
from ragkit.documents.given import RecordReader, is_record_source
from ragkit.documents.stream import windows
from ragkit.embed import Encoder
from ragkit.embed.models import AUTO_MODEL, MINILM_NAMES, MULTILINGUAL_MODEL, choose_model
from ragkit.errors import RagkitError
from ragkit.normalize.detect import LanguageGuess
from ragkit.pipeline.ahead import OneAhead, one_at_a_time
from ragkit.pipeline.cadence import Cadence
from ragkit.pipeline.duplicates import as_copy, embed_once, plan_copies
from ragkit.pipeline.identity import StoredIdentity, plan_renames
from ragkit.pipeline.near_duplicates import signature
from ragkit.pipeline.near_duplicates import update as update_near_duplicates
from ragkit.pipeline.plan import (
    PruneGuard,
    check_roots_exist,
    check_roots_yield,
    first_of_each_key,
    max_document_chars,
    stale_keys,
    stale_records,
    without_oversized,
)
from ragkit.pipeline.report import TIMED, IngestReport, ProgressCallback
from ragkit.pipeline.scheduling import IngestStages
from ragkit.pipeline.stages import (
    attach_vectors,
    embedding_texts,
)
from ragkit.pipeline.streaming import (
    DocumentFacts,
    FileSpool,
    ListSpool,
    Spool,
    read_files,
    resolve_facts,
)
from ragkit.store import IndexStore, PendingDocument

log = logging.getLogger(__name__)


@dataclass
class _Counts:
    """What a run has done so far, for progress: documents to chunk and to commit (known so
    far), documents chunked, distinct chunk texts embedded."""

    to_chunk: int = 0
    to_commit: int = 0
    documents_chunked: int = 0
    embedded: int = 0


class Ingest:
    """One ingest into ``store`` with ``settings``; :meth:`run` it under the writer lock.

    After the run, :attr:`settings` and :attr:`encoder` hold the model an ``auto`` index chose
    from the documents of its first ingest (``encoder`` stays None when nothing needed it).
    """

    def __init__(
        self,
        store: IndexStore,
        settings: Settings,
        stages: IngestStages,
        encoder: Encoder | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.stages = stages
        self.encoder = encoder  # None until a stage needs it, or an ``auto`` choice loads it
        self.model_choice = ""  # "name (why)" when this ingest resolved an ``auto`` model
        # of the documents this run committed (None: a copy, which takes its content's)
        self.signatures: dict[str, bytes | None] = {}
        self.cadence = Cadence.of(settings)
        self._counts = _Counts()
        self._warned_foreign = False

    def _load_encoder(self) -> Encoder:
        """The encoder of :attr:`settings`' model (loaded on first use)."""
        if self.encoder is None:
            settings = self.settings
            self.encoder = Encoder(
                settings.embedding_model, settings.embed_batch_size, settings.embedding_precision
            )
        return self.encoder

    def run(
        self,
        roots: Sequence[Path],
        prune: bool = False,
        progress: ProgressCallback | None = None,
        guard: PruneGuard | None = None,
    ) -> IngestReport:
        """Load ``roots``, then chunk, embed and commit the new or changed documents (a commit
        every ``commit_every_documents``, ``commit_every_chunks`` or ``commit_every_seconds``,
        whichever first); with ``prune`` remove documents no longer found, within ``guard``'s
        limits (checked before anything is committed)."""
        started = datetime.now(UTC).isoformat()
        report = IngestReport()
        longest = max_document_chars()  # a bad RAGKIT_MAX_DOCUMENT_CHARS fails the run first
        if prune:
            check_roots_exist(roots)
        clock = time.perf_counter()
        files, passed_over = self.stages.discover(list(roots))
        passed_over = others_than(passed_over, self.store.location)
        with FileSpool() as spool:
            loaded, skipped = read_files(
                files,
                self.stages.load_files,
                self.settings.commit_every_documents,
                longest,
                self.store.document_hashes(),
                spool,
            )
            duplicates = self._rename(loaded, report)
            sources = self.store.document_sources()
            loaded, collisions = first_of_each_key(loaded, sources)
            report.record_loaded(loaded, [*passed_over, *skipped, *collisions])
            report.seconds["load"] = time.perf_counter() - clock
            report.seconds.update(dict.fromkeys(TIMED, 0.0))
            gone = stale_keys(loaded, list(roots), sources, report.skipped) if prune else []
            if gone:
                guard = guard or PruneGuard()
                if not guard.allow_empty:
                    check_roots_yield(roots, loaded, report.skipped, sources)
                guard.check(gone, len(sources))
            return self._ingest(loaded, spool, [*duplicates, *gone], report, started, progress)

    def run_records(
        self,
        records: Iterable[Any],
        source: str,
        prune: bool = False,
        progress: ProgressCallback | None = None,
        guard: PruneGuard | None = None,
    ) -> IngestReport:
        """Chunk, embed and commit the new or changed ``records`` (all from ``source``:
        :mod:`ragkit.documents.given`) as :meth:`run` does files, one window of them at a time
        (:func:`ragkit.documents.stream.windows`: ``commit_every_documents`` records, or
        ``commit_every_seconds``, or a pause of the producer), so records read over time are
        committed while they go on and memory holds one window. With ``prune``, once
        ``records`` end, remove the stored records of ``source`` they did not give, within
        ``guard``'s limits (what was given is committed by then, whatever the check says)."""
        started = datetime.now(UTC).isoformat()
        report = IngestReport()
        report.seconds.update(dict.fromkeys(["load", *TIMED], 0.0))
        reader = RecordReader(source)
        longest = max_document_chars()
        every = self.settings
        for window in windows(records, every.commit_every_documents, every.commit_every_seconds):
            clock = time.perf_counter()
            loaded = without_oversized(reader.read(window), longest)
            documents, collisions = first_of_each_key(
                loaded.documents, self.store.document_sources()
            )
            report.skipped.extend([*loaded.skipped, *collisions])
            report.seconds["load"] += time.perf_counter() - clock
            facts = [DocumentFacts.of(document, n) for n, document in enumerate(documents)]
            self._commit_new(facts, ListSpool(documents), [], report, progress)
        report.records_seen = reader.records_seen
        sources = self.store.document_sources()
        gone = stale_records(reader.present(), reader.complete, source, sources) if prune else []
        if gone:
            guard = guard or PruneGuard()
            if not guard.allow_empty and not reader.records_seen:
                raise RagkitError(
                    f"{source}: no record given, but documents indexed from it: {len(gone)}; "
                    "nothing was removed — pass --prune-empty (prune_empty=True) to remove them"
                )
            guard.check(gone, len(sources))
        return self._finish(report, started, gone)

    def _ingest(
        self,
        documents: list[DocumentFacts],
        spool: Spool,
        stale: list[str],
        report: IngestReport,
        started: str,
        progress: ProgressCallback | None,
    ) -> IngestReport:
        """Commit the new or changed ``documents``, their texts read back from ``spool`` as
        they are chunked, then remove ``stale`` keys."""
        self._commit_new(documents, spool, stale, report, progress)
        return self._finish(report, started, stale)

    def _commit_new(
        self,
        documents: list[DocumentFacts],
        spool: Spool,
        stale: list[str],
        report: IngestReport,
        progress: ProgressCallback | None,
    ) -> None:
        """Decide the languages of the new or changed ``documents`` with the collection,
        choose an ``auto`` model, then chunk, embed and commit them (copies of stored content
        last, without embedding); ``stale`` keys are about to go, so nothing copies them."""
        known = self.store.document_hashes()
        changed = [d for d in documents if known.get(d.key) != d.content_hash]
        report.documents_unchanged += len(documents) - len(changed)
        # Only the documents to commit: unchanged ones are already stored (and counted there).
        decided = dict(
            zip((d.position for d in changed), resolve_facts(self.store.languages(), changed))
        )
        if -1 in decided:  # read_files put aside every text the index did not hold
            raise RagkitError(f"{self.store.location}: a changed document's text was not kept")
        report.languages_from_collection += sum(
            decided[d.position].language != d.guess.language for d in changed
        )
        chars: Counter[str] = Counter()
        for document in changed:
            chars[decided[document.position].language] += document.chars
        languages = [decided[d.position].language for d in changed]
        self._choose_model(dict(chars), languages)
        self._warn_foreign(languages)
        report.model_choice = self.model_choice
        unstable = {d.key for d in changed} | set(stale)
        plan = plan_copies(changed, {k: h for k, h in known.items() if k not in unstable})
        counts = self._counts
        counts.to_chunk += len(plan.originals)
        counts.to_commit += len(changed)
        if progress:
            progress("chunk", counts.documents_chunked, counts.to_chunk)
            progress("embed", counts.embedded, 0)
            progress("documents", report.documents_added, counts.to_commit)
        originals = [d.position for d in plan.originals]
        self._commit_originals(self._documents(spool, originals, decided), report, progress)
        copies = [d.position for d in changed if d.key in plan.copies]
        batch: list[Document] = []
        for copy in self._documents(spool, copies, decided):
            batch.append(copy)
            if len(batch) == self.settings.commit_every_documents:
                self._commit_copies(batch, plan.copies, report, progress)
                batch = []
        if batch:
            self._commit_copies(batch, plan.copies, report, progress)

    def _documents(
        self, spool: Spool, positions: list[int], decided: dict[int, LanguageGuess]
    ) -> Iterator[Document]:
        """The documents at ``positions`` read back from ``spool`` one at a time, with their
        language decided with the collection."""
        for position, document in zip(sorted(positions), spool.documents(positions)):
            document.decide_language(decided[position])
            yield document

    def _commit_originals(
        self, documents: Iterator[Document], report: IngestReport, progress: ProgressCallback | None
    ) -> None:
        """Chunk, normalize and embed ``documents`` in steps sized by :attr:`cadence` (a step's
        embedding beside the next step's chunking where the stages allow it:
        :mod:`~ragkit.pipeline.ahead`), and commit what the steps made each time the cadence
        says so, and at the end."""
        pending: list[PendingDocument] = []
        chunks = 0
        step: list[Document] = []
        chars = 0
        progress = one_at_a_time(progress)

        def collect(finished: list[list[PendingDocument]]) -> None:
            nonlocal pending, chunks
            for made in finished:
                pending.extend(made)
                chunks += sum(len(p.chunks) for p in made)
            if finished and self.cadence.due(len(pending), chunks):
                self._commit_pending(pending, report, progress)
                pending, chunks = [], 0

        with OneAhead[list[PendingDocument]](self._embeds_ahead()) as ahead:
            for document in documents:
                step.append(document)
                chars += len(document.text)
                full = len(pending) + len(step) >= self.cadence.documents
                if chars >= self.cadence.step_chars() or full:
                    collect(ahead.push(self._step(step, chars, report, progress)))
                    step, chars = [], 0
            if step:
                collect(ahead.push(self._step(step, chars, report, progress)))
            collect(ahead.drain())
        if pending:
            self._commit_pending(pending, report, progress)

    def _embeds_ahead(self) -> bool:
        """Whether a step's embedding may run beside the next step's chunking: the stages
        allow it, and chunk selection does not use the encoder itself (its tokenizer is not
        shared between threads on the torch path)."""
        return self.stages.embeds_beside_chunking and self.settings.chunk_vectors != "encoder"

    def _step(
        self,
        documents: list[Document],
        chars: int,
        report: IngestReport,
        progress: ProgressCallback | None,
    ) -> Callable[[], list[PendingDocument]]:
        """Chunk and normalize one step of ``documents`` (``chars`` characters of text) now;
        return its embedding (each distinct text once) as work to run."""
        clock = time.perf_counter()
        prepared = self.stages.prepare(documents, self.settings, self._load_encoder, report.seconds)
        preparing = time.perf_counter() - clock
        counts = self._counts
        counts.documents_chunked += len(documents)
        if progress:
            progress("chunk", counts.documents_chunked, counts.to_chunk)

        def embed() -> list[PendingDocument]:
            embedding = time.perf_counter()
            texts = embedding_texts(prepared, self.settings)
            distinct = len(set(texts))
            done = counts.embedded

            def embedded(batch: int) -> None:  # each batch of this step's texts, as it ends
                nonlocal done
                done += batch
                if progress:
                    progress("embed", done, 0)

            embedded(0)
            vectors = (
                embed_once(
                    texts,
                    lambda unique: self.stages.embed(
                        unique, self.settings, self._load_encoder, embedded
                    ),
                )
                if texts
                else np.zeros((0, self.store.dimension), dtype=np.float32)
            )
            counts.embedded += distinct
            if progress:
                progress("embed", counts.embedded, 0)
            seconds = time.perf_counter() - embedding
            report.seconds["embed"] += seconds
            report.chunks_embedded += distinct
            self.cadence.measured(chars, len(texts), preparing + seconds)
            return attach_vectors(prepared, vectors)

        return embed

    def _commit_pending(
        self,
        pending: list[PendingDocument],
        report: IngestReport,
        progress: ProgressCallback | None,
    ) -> None:
        """Commit the documents of one or more steps as one generation."""
        clock = time.perf_counter()
        self.stages.commit(self.store, pending)
        self.cadence.committed()
        report.seconds["commit"] += time.perf_counter() - clock
        clock = time.perf_counter()
        self.signatures.update((p.document.key, signature(p.document.text)) for p in pending)
        report.seconds["near_duplicates"] += time.perf_counter() - clock
        report.chunks_added += sum(len(p.chunks) for p in pending)
        report.documents_added += len(pending)
        if progress:
            progress("documents", report.documents_added, self._counts.to_commit)

    def _commit_copies(
        self,
        batch: list[Document],
        copies: dict[str, str],
        report: IngestReport,
        progress: ProgressCallback | None,
    ) -> None:
        """Commit one batch of copies, each with the stored content of the document it copies
        (:mod:`ragkit.pipeline.duplicates`): nothing chunked or embedded."""
        clock = time.perf_counter()
        wanted = list(dict.fromkeys(copies[d.key] for d in batch))
        stored = {p.document.key: p for p in self.store.stored_documents(wanted)}
        missing = [key for key in wanted if key not in stored]
        if missing:
            raise RagkitError(f"{self.store.location}: {missing[0]} vanished while copied")
        pending = [as_copy(d, stored[copies[d.key]]) for d in batch]
        self.stages.commit(self.store, pending)
        self.cadence.committed()
        report.seconds["commit"] += time.perf_counter() - clock
        self.signatures.update(dict.fromkeys((d.key for d in batch), None))
        report.chunks_added += sum(len(p.chunks) for p in pending)
        report.documents_added += len(batch)
        report.documents_copied += len(batch)
        if progress:
            progress("documents", report.documents_added, self._counts.to_commit)

    def _rename(self, documents: Sequence[Identified], report: IngestReport) -> list[str]:
        """Rename in place the stored documents that ``documents`` are moves of, or that were
        keyed by a relative path (:func:`ragkit.pipeline.identity.plan_renames`); returns the
        relative-key duplicates of documents stored under their absolute key (to remove)."""
        hashes = self.store.document_hashes()
        stored = {
            key: StoredIdentity(source, hashes[key])
            for key, source in self.store.document_sources().items()
            if not is_record_source(source)  # given records have no file to move
        }
        plan = plan_renames(documents, stored)
        report.documents_renamed = self.store.rename_documents(plan.renames)
        for old, (new, _) in plan.renames.items():
            log.info("renamed %s -> %s (content kept, not embedded again)", old, new)
        return plan.duplicates

    def _choose_model(self, chars: dict[str, int], languages: list[str]) -> None:
        """Resolve an ``auto`` model from the characters per language of the first documents
        to ingest (:func:`ragkit.embed.models.choose_model`; ``languages``: theirs, one per
        document) and store the choice."""
        if self.settings.embedding_model == AUTO_MODEL and languages:
            name, reason = choose_model(chars)
            encoder = Encoder(
                name, self.settings.embed_batch_size, self.settings.embedding_precision
            )
            if encoder.dimension != self.store.dimension:
                raise RagkitError(f"model {name}: {encoder.dimension}-d, the index is not")
            chosen = {"embedding_model": name, "embedding_precision": encoder.precision}
            # (the store keeps its own reranking settings)
            self.store.replace_settings(self.store.settings.model_copy(update=chosen))
            self.settings = self.settings.model_copy(update=chosen)
            self.encoder = encoder
            self.model_choice = f"{name} ({reason})"
            log.info("embedding model: %s", self.model_choice)

    def _warn_foreign(self, languages: list[str]) -> None:
        """With an English-only model, warn once per run about documents of other
        ``languages`` (those of the first window that has any, for records read over time)."""
        foreign = Counter(x for x in languages if x not in ("en", "und"))
        if foreign and self.settings.embedding_model in MINILM_NAMES and not self._warned_foreign:
            self._warned_foreign = True
            log.warning(
                "%s not English (%s) but %s embeds English only; index %s in a folder "
                "created with --model %s",
                f"{foreign.total()} document is"
                if foreign.total() == 1
                else f"{foreign.total()} documents are",
                ", ".join(sorted(foreign)),
                self.settings.embedding_model,
                "it" if foreign.total() == 1 else "them",
                MULTILINGUAL_MODEL,
            )

    def _finish(self, report: IngestReport, started: str, stale: list[str]) -> IngestReport:
        """Remove ``stale`` documents, bring near-duplicate signatures and groups up to date,
        rebuild BM25 once and log the run (after all commits)."""
        stale = list(dict.fromkeys(stale))
        report.documents_removed = len(stale)
        if stale:
            self.store.commit([], remove_keys=stale)
        found = update_near_duplicates(self.store, self.signatures)
        report.seconds["near_duplicates"] += found.seconds
        report.near_duplicate_documents = found.grouped
        report.near_duplicate_groups = found.groups
        clock = time.perf_counter()
        self.store.ensure_sparse()  # once per ingest: a full rebuild after this run's commits
        report.seconds["sparse"] = time.perf_counter() - clock
        report.generation = self.store.generation
        self.store.log_run(started, report.as_dict())
        return report


def text_by_language(documents: Sequence[Document]) -> dict[str, int]:
    """Characters of text per language (what ``auto`` chooses the model by).

    Example:
        >>> from ragkit.documents import Document
        >>> docs = [Document("a", "a", "Water boils.", "h", [], language="en"),
        ...         Document("b", "b", "الماء يغلي", "h", [], language="ar")]
        >>> text_by_language(docs)
        {'en': 12, 'ar': 10}
    """
    chars: Counter[str] = Counter()
    for document in documents:
        chars[document.language] += len(document.text)
    return dict(chars)
