"""The Python API: open or create an index, ingest files or add records, search.

Example:
    >>> from ragkit import Index
    >>> index = Index.open("my-index", create=True, model="all-minilm-l6-v2")  # doctest: +SKIP
    >>> report = index.ingest(["examples/"])  # doctest: +SKIP
    >>> index.search("boiling point of water", k=3)[0].source  # doctest: +SKIP
    'examples/en/water.md'
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TextIO

import numpy as np
from pydantic import ValidationError

from ragkit.chunking import ChunkingRecord
from ragkit.config import (
    ANALYSIS_SETTINGS,
    CONFIG_NAME,
    QUERY_SETTINGS,
    Settings,
    read_settings_file,
)
from ragkit.documents import LoadOptions, document_key
from ragkit.documents.given import DEFAULT_SOURCE, check_source
from ragkit.embed import Encoder
from ragkit.embed.models import AUTO_DIMENSION, AUTO_MODEL, MINILM_NAMES
from ragkit.errors import RagkitError, validation_message
from ragkit.normalize.detect import check_language
from ragkit.pipeline import (
    Ingest,
    IngestReport,
    IngestStages,
    LocalStages,
    ProgressCallback,
    matching_key,
    sparse_terms,
)
from ragkit.pipeline.languages import query_languages
from ragkit.pipeline.near_duplicates import THRESHOLD as NEAR_DUPLICATE_THRESHOLD
from ragkit.pipeline.near_duplicates import DuplicateGroup, duplicate_groups
from ragkit.pipeline.near_duplicates import update as update_near_duplicates
from ragkit.pipeline.plan import PruneGuard
from ragkit.pipeline.reanalyze import ReanalyzeReport, reanalyze
from ragkit.pipeline.stages import embeds_normalized
from ragkit.search.collapse import distinct
from ragkit.search.contributions import Contribution, contributions, single_list
from ragkit.search.evidence import EVIDENCE_CHOICES, DocumentEvidence, uses_evidence
from ragkit.search.evidence import document_evidence as evidence
from ragkit.search.feedback import (
    FEEDBACK_CHOICES,
    Feedback,
    FeedbackParams,
    levers,
    looks_up,
    repeated,
    rm3,
    rocchio,
)
from ragkit.search.fusion import SEARCH_MODES, FusionMethod, Ranking, SearchMode, fuse
from ragkit.search.phrase import (
    CANDIDATES,
    MIN_TERMS,
    PHRASE_CHOICES,
    PhraseEvidence,
    holds_phrase,
    phrase_first,
    phrase_words,
    uses_phrase,
)
from ragkit.search.query import check_query
from ragkit.store import DocumentEntry, IndexExistsError, IndexStore, StoredChunk
from ragkit.store.address import Location, create_store, display, index_exists, open_store
from ragkit.store.catalog import EXPORT_FORMATS, select_keys, write_jsonl
from ragkit.store.consistent import one_generation
from ragkit.store.milvus.address import is_milvus
from ragkit.store.tokenizers import stale_message

if TYPE_CHECKING:
    from ragkit.rerank.reranker import Reranker

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Hit:
    """One search result: a chunk of a document, with offsets into the document's original text.

    ``document_id`` is the record's own id (a JSONL or CSV ``id``, what relevance judgments
    name) or, for a file, its key; ``key`` is the document's key in the index, as ``ragkit ls``,
    ``rm`` and ``info --document`` take it (``path#id`` for a record).
    """

    text: str
    score: float
    document_id: str
    source: str
    start: int
    end: int
    title: str = ""
    language: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    key: str = ""
    duplicates: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ExplainedHit:
    """A hit of :meth:`Index.explain` and how its first-stage score came about
    (:class:`ragkit.search.contributions.Contribution`); ``reranked``: ``hit.score`` is the
    reranker's, ``contribution.score`` the first stage's."""

    hit: Hit
    contribution: Contribution
    reranked: bool = False


@dataclass(frozen=True)
class IndexInfo:
    """An index at a glance (``ragkit info``); ``chunkers_chosen`` counts documents per chosen
    chunker (``unrecorded`` for documents indexed before the choice was kept); ``settings``:
    the effective settings that shape results (:meth:`ragkit.config.Settings.summary`);
    ``duplicate_*``: documents sharing their content with another and how many such sets,
    ``near_duplicate_*``: documents in near-duplicate groups and how many groups
    (:meth:`Index.duplicates` lists both)."""

    path: str
    generation: int
    embedding_model: str
    dimension: int
    chunker: str
    documents: int
    chunks: int
    vectors: int
    chunkers_chosen: dict[str, int]
    settings: list[tuple[str, str]] = field(default_factory=list)
    duplicate_documents: int = 0
    duplicate_groups: int = 0
    near_duplicate_documents: int = 0
    near_duplicate_groups: int = 0

    def rows(self) -> list[tuple[str, str]]:
        """``(field, value)`` pairs to print, in order.

        Example:
            >>> IndexInfo("i", 1, "m", 4, "adaptive", 2, 3, 3, {"sentence": 2}).rows()[-1]
            ('chunkers chosen', 'sentence 2')
        """
        chosen = ", ".join(f"{name} {count}" for name, count in self.chunkers_chosen.items())
        listed = [f.name for f in dataclasses.fields(self) if f.name not in _LISTS]
        fields = [(name, str(getattr(self, name))) for name in listed]
        return [*fields, ("chunkers chosen", chosen or "—"), *self.settings]


_LISTS = ("chunkers_chosen", "settings")  # IndexInfo fields that rows() prints its own way


def _hit(row: StoredChunk, score: float, duplicates: list[str] | None = None) -> Hit:
    """The hit of a stored chunk."""
    return Hit(
        text=row.text,
        score=score,
        document_id=row.external_id or row.document_key,
        source=row.source,
        start=row.start,
        end=row.end,
        title=row.title,
        language=row.language,
        metadata=row.metadata,
        key=row.document_key,
        duplicates=duplicates or [],
    )


def _with_file_settings(
    location: Location, config: str | Path | None, model: str | None, settings: dict[str, Any]
) -> tuple[str | None, dict[str, Any], dict[str, Path]]:
    """``model`` and ``settings`` completed from the settings file (``config``, else the
    index folder's ``ragkit.toml`` when present; a Milvus index has no folder); the third
    item maps each setting taken from the file to the file."""
    if config is None and is_milvus(location):
        return model, settings, {}
    path = Path(config) if config is not None else Path(location) / CONFIG_NAME
    if config is None and not path.is_file():
        return model, settings, {}
    from_file = {k: v for k, v in read_settings_file(path).items() if k not in settings}
    if model is None:
        model = from_file.get("embedding_model")
    from_file.pop("embedding_model", None)
    return model, from_file | settings, dict.fromkeys(from_file, path)


class Index:
    """A ragkit index — a folder (SQLite + FAISS + BM25) or a Milvus collection
    (:mod:`ragkit.store.address`) — with the encoder it was built with.

    Open or create one with :meth:`open` (a context manager: ``with Index.open(...)``), add
    files with :meth:`ingest` and text held in memory with :meth:`add`, query with :meth:`search`, look inside with :meth:`info`,
    :meth:`documents` and :meth:`export`, remove documents with :meth:`delete`.

    Example:
        >>> with Index.open("my-index", create=True) as index:  # doctest: +SKIP
        ...     report = index.ingest(["docs/"], exclude=["drafts/*"])
        ...     hits = index.search("boiling point of water", k=3)
    """

    def __init__(self, store: IndexStore) -> None:
        self.store = store
        self.settings = store.settings
        self._encoder: Encoder | None = None
        self._reranker: Reranker | None = None
        self._stages = LocalStages()

    @classmethod
    def open(
        cls,
        path: Location,
        create: bool = False,
        model: str | None = None,
        config: str | Path | None = None,
        **settings: Any,
    ) -> Index:
        """Open the index at ``path``; with ``create=True`` make it when it does not exist.

        ``path`` is a folder, ``milvus://HOST:PORT/COLLECTION`` (a Milvus server; its token
        from ``MILVUS_TOKEN``) or ``milvus-lite:///ABSOLUTE/PATH.db[?collection=NAME]`` (an
        embedded Milvus Lite file).

        ``settings`` of a new index are stored with it. For an existing index they must match
        the stored ones, except the query settings (``QUERY_SETTINGS``: ``reranker``,
        ``rerank_depth``, ``rerank_weight``, ``rerank_passes``, ``collapse``), which apply to
        this handle only, e.g. ``Index.open("my-index", rerank_weight=0.3)``. A setting that does not
        exist, or a missing index without ``create=True``, raises :class:`RagkitError`.

        Settings not given here come from the settings file: ``config``, or ``ragkit.toml``
        in the index folder when it exists (:mod:`ragkit.config`); the same rules apply to
        them.
        """
        location = path if is_milvus(path) else Path(path)
        folder = display(location)
        unknown = sorted(set(settings) - set(Settings.model_fields))
        if unknown:
            raise RagkitError(
                f"Index.open: unknown setting(s) {', '.join(unknown)}; the settings are "
                f"{', '.join(Settings.model_fields)}"
            )
        exists = index_exists(location)
        if not create and not exists:
            raise RagkitError(
                f"{folder}: no ragkit index here; create one with "
                f"Index.open({str(folder)!r}, create=True) or `ragkit ingest PATH --index "
                f"{folder}`"
            )
        model, settings, filed = _with_file_settings(location, config, model, settings)
        if create and not exists:
            chosen = Settings.model_validate(
                ({"embedding_model": model} if model else {}) | settings
            )
            encoder = None
            if chosen.embedding_model != AUTO_MODEL:
                encoder = Encoder(chosen.embedding_model, chosen.embed_batch_size)
            dimension = encoder.dimension if encoder else AUTO_DIMENSION
            try:
                index = cls(create_store(location, chosen, dimension))
            except IndexExistsError:  # another process created it meanwhile: open it below
                pass
            else:
                index._encoder = encoder
                return index
        index = cls(open_store(location))
        if model and model not in (AUTO_MODEL, index.settings.embedding_model):
            raise RagkitError(
                f"{folder}: built with {index.settings.embedding_model!r}, not {model!r}; "
                "use a new --index folder for another model"
            )
        for name, value in settings.items():
            if name not in QUERY_SETTINGS and getattr(index.settings, name) != value:
                where = f" (set in {filed[name]})" if name in filed else ""
                raise RagkitError(
                    f"{folder}: built with {name}={getattr(index.settings, name)!r}, not "
                    f"{value!r}{where}; use a new --index folder for other settings"
                )
        stale = index.store.stale_tokenizers()
        if stale:
            log.warning("%s", stale_message(folder, stale))
        overrides = {n: v for n, v in settings.items() if n in QUERY_SETTINGS}
        if overrides:
            try:
                index.settings = Settings.model_validate(index.settings.model_dump() | overrides)
            except ValidationError as error:
                setting = error.errors()[0]["loc"][0]
                raise RagkitError(f"{folder}: {setting}: {validation_message(error)}") from error
        return index

    @property
    def reranker(self) -> Reranker:
        """The groupwise reranker named by the ``reranker`` setting (loaded on first use);
        ``auto`` picks the shipped one that reads the index's languages."""
        if self._reranker is None:
            from ragkit.rerank.reranker import Reranker

            held = {language for _, language in self.store.languages()}
            self._reranker = Reranker.load(
                self.settings.reranker,
                languages=held,
                passes=self.settings.rerank_passes,
                first_stage_weight=self.settings.rerank_weight,
            )
            others = sorted(held - {"en", "und"})
            if others and self._reranker.config.backbone in MINILM_NAMES:
                log.warning(
                    "reranker %r reads English only (%s); hits in %s are reranked as if English",
                    self.settings.reranker,
                    self._reranker.config.backbone,
                    ", ".join(others),
                )
        return self._reranker

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            if self.settings.embedding_model == AUTO_MODEL:
                raise RagkitError(
                    f"{self.store.location}: no embedding model yet; model 'auto' is chosen from "
                    "the documents of the first ingest"
                )
            self._encoder = Encoder(self.settings.embedding_model, self.settings.embed_batch_size)
        return self._encoder

    def ingest(
        self,
        paths: Iterable[str | Path],
        prune: bool = False,
        progress: ProgressCallback | None = None,
        wait: bool | float = True,
        stages: IngestStages | None = None,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        text_field: str = "text",
        max_delete: int | str | None = None,
        prune_empty: bool = False,
    ) -> IngestReport:
        """Load, chunk, embed and commit files under the index's writer lock; documents whose
        content hash the index already holds are skipped.

        ``wait``: while another writer holds the index, wait (True, logging whom for), fail at
        once with a :class:`RagkitError` (False) or wait at most that many seconds.
        ``stages``: how loading, chunking and embedding are scheduled (default: in this
        process; the Prefect flow passes its tasks). ``progress(stage, done, total)`` is
        called after each commit (``"documents"``) and while embedding (``"embed"``).
        ``include`` / ``exclude``: globs choosing the files read under folders, ``text_field``:
        the field or column holding a record's text in ``.json``/``.csv``/``.tsv`` files
        (:class:`ragkit.documents.LoadOptions`; ``stages`` of their own take them instead).
        A prune removes nothing, and raises :class:`RagkitError`, when it would remove more
        than ``max_delete`` documents (a number, or a share of the stored ones: ``"10%"``), or
        the documents of a root that yields no file now (an unmounted share) unless
        ``prune_empty`` (:class:`ragkit.pipeline.plan.PruneGuard`).

        Example:
            >>> index.ingest(["docs/"], exclude=["drafts/*"])  # doctest: +SKIP
        """
        if isinstance(paths, str | Path):
            raise RagkitError(
                f"Index.ingest({str(paths)!r}): give a list of paths, e.g. "
                f"Index.ingest([{str(paths)!r}])"
            )
        guard = PruneGuard(max_delete, prune_empty)
        loading = LoadOptions(tuple(include), tuple(exclude), text_field)
        if stages is not None and loading != LoadOptions():
            raise RagkitError("Index.ingest: give include/exclude/text_field to the stages")
        self._stages.loading = loading
        with self.store.writing(wait):
            self._follow_model()
            run = Ingest(self.store, self.settings, stages or self._stages, self._encoder)
            try:
                report = run.run([Path(p) for p in paths], prune, progress, guard)
            finally:
                self._take_model(run)
        self._prepare_query_copy()
        return report

    def add(
        self,
        records: Iterable[Any],
        prune: bool = False,
        wait: bool | float = True,
        progress: ProgressCallback | None = None,
        source: str = DEFAULT_SOURCE,
        max_delete: int | str | None = None,
        prune_empty: bool = False,
    ) -> IngestReport:
        """Index text held in memory: each record (a :class:`ragkit.Record` or a dict with
        ``id`` and ``text``, optionally ``metadata``, ``title`` and ``language``) becomes a
        document keyed by its id, through the same pipeline as files (languages, adaptive
        chunking, normalization, embedding), under the index's writer lock.

        A record whose fields are unchanged since it was added is skipped; a changed one is
        indexed again. A record that cannot be a document (no id or text, text that is not a
        string, an id given twice in one call, unknown fields…) is reported in the returned
        report's ``skipped`` by its place and id; the others are indexed. ``source`` names
        the collection the records belong to (``<name>``, default ``<records>``; it is each
        hit's ``source`` and a filter/``delete`` pattern); with ``prune`` the stored records
        of ``source`` that this call does not give are removed. ``wait`` and ``progress`` as
        in :meth:`ingest`; ``max_delete`` and ``prune_empty`` as there (a call that gives no
        record at all prunes nothing unless ``prune_empty``). Remove records by id with
        :meth:`delete`.

        ``records`` are read as they come, under the writer lock: a generator over a long
        query or a feed is committed window by window — every ``commit_every_documents``
        records or ``commit_every_seconds`` — so what it gave is searchable (and kept if the
        process dies) while it goes on, and memory holds one window. A prune happens, and its
        limits are checked, once ``records`` end.

        Example:
            >>> with Index.open("my-index", create=True) as index:  # doctest: +SKIP
            ...     report = index.add([
            ...         {"id": "faq-1", "text": "Water boils at 100 C.", "metadata": {"year": 2021}},
            ...         Record("faq-2", "الماء يغلي عند مئة درجة", language="ar"),
            ...     ])
            ...     index.search("boiling point", k=1)[0].key
            'faq-1'
        """
        if isinstance(records, str | bytes | Mapping) or not isinstance(records, Iterable):
            raise RagkitError(
                f"Index.add({type(records).__name__}): give an iterable of records, e.g. "
                'Index.add([{"id": "a", "text": "…"}])'
            )
        check_source(source)
        guard = PruneGuard(max_delete, prune_empty)
        with self.store.writing(wait):
            self._follow_model()
            run = Ingest(self.store, self.settings, self._stages, self._encoder)
            try:
                report = run.run_records(records, source, prune, progress, guard)
            finally:
                self._take_model(run)
        self._prepare_query_copy()
        return report

    def _take_model(self, run: Ingest) -> None:
        """Keep the model (and loaded encoder) an ingest of an ``auto`` index chose."""
        if run.settings.embedding_model != self.settings.embedding_model:
            model = {"embedding_model": run.settings.embedding_model}
            self.settings = self.settings.model_copy(update=model)
        self._encoder = run.encoder or self._encoder

    def _prepare_query_copy(self) -> None:
        """After an ingest that loaded the encoder, its query copy for later processes."""
        if self._encoder is not None and self._encoder.loaded:
            self._encoder.prepare_query_copy()  # later query processes start without torch

    def _follow_model(self) -> None:
        """Take the model another handle's (or process's) first ingest chose for this ``auto``
        index since this handle opened it: a server started before the first ingest then
        serves what was committed."""
        if self.settings.embedding_model == AUTO_MODEL:
            self.store.refresh()
            chosen = {"embedding_model": self.store.settings.embedding_model}
            self.settings = self.settings.model_copy(update=chosen)

    def reanalyze(self, wait: bool | float = True) -> ReanalyzeReport:
        """Re-derive every document's language, matching keys and sparse terms with today's
        rules and today's analysis settings (``ANALYSIS_SETTINGS``, e.g. ``exact_terms``),
        under the writer lock, keeping the stored vectors
        (:func:`ragkit.pipeline.reanalyze.reanalyze`)."""
        if self.settings.embedding_model == AUTO_MODEL:
            return ReanalyzeReport(generation=self.store.generation)  # nothing ingested yet
        today = Settings().model_dump(include=set(ANALYSIS_SETTINGS))
        settings = self.settings.model_copy(update=today)
        with self.store.writing(wait):
            report = reanalyze(self.store, settings, lambda: self.encoder)
            self.store.replace_settings(settings)
        self.settings = settings
        return report

    def _query_terms(self, keys: list[str], languages: list[str]) -> list[str]:
        """A query's sparse terms in each of its languages: the first language's as they are
        (a word the query repeats weighs more), then each other language's new terms."""
        terms: list[str] = []
        for key, language in zip(keys, languages, strict=True):
            seen = set(terms)
            terms += [term for term in self.terms(key, language) if term not in seen]
        return terms

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

    def chunking(self, key: str) -> ChunkingRecord:
        """The chunking record of the document ``key`` (its stored key, or its path as typed
        here): the chosen chunker and, for adaptive chunking, every candidate's metric scores."""
        record = self.store.chunking(self.stored_key(key))
        if record is None:
            raise RagkitError(
                f"{self.store.location}: no document {key!r} (keys are absolute file paths, plus "
                "'#id' for records; `ragkit ls` lists them)"
            )
        return record

    def stored_key(self, key: str) -> str:
        """``key`` as the index stores it: as given when a document has it, else the absolute
        form of a path typed relative to the current folder (:func:`document_key`)."""
        if self.store.language_decision(key) is not None:
            return key
        return document_key(key)

    @one_generation
    def search(
        self,
        query: str,
        k: int = 10,
        mode: SearchMode = "hybrid",
        filters: dict[str, Any] | None = None,
        fusion: FusionMethod | None = None,
        rerank: bool = False,
        language: str | None = None,
        collapse: bool | None = None,
        feedback: Feedback | None = None,
        document_evidence: DocumentEvidence | None = None,
        phrase_evidence: PhraseEvidence | None = None,
    ) -> list[Hit]:
        """The ``k`` best chunks for ``query``, best first.

        ``k`` ≥ 1. ``mode``: ``hybrid`` (dense + BM25, fused), ``dense`` or ``sparse``.
        ``filters`` keep chunks whose document matches every entry (``language``, ``source``
        glob, or any metadata key; a list of values matches any of them;
        :mod:`ragkit.store.filters`) and apply before fusion. ``fusion``: ``weighted`` or
        ``rrf`` (default: the ``fusion`` setting).
        ``rerank``: the first stage's top ``rerank_depth`` go through the groupwise reranker
        (:mod:`ragkit.rerank`) and ``score`` becomes the reranker's (interpolated) score.
        ``language``: analyze the query as this language (ISO 639 code). By default it is
        analyzed with the languages the index holds for the query's script
        (:func:`ragkit.pipeline.languages.query_languages`), never with one it does not hold.
        ``collapse``: fold hits whose text a better hit already shows into it (listed in its
        ``duplicates``), so the ``k`` hits are ``k`` distinct passages (default: the
        ``collapse`` setting, on; :mod:`ragkit.search.collapse`).
        ``feedback``: ``off``, ``sparse`` (the query's terms expanded from the first pass's top
        chunks, RM3), ``dense`` (its vector moved towards theirs, Rocchio), ``both``, or ``auto``
        (what was measured to help for the query's languages); default: the ``feedback``
        setting (:mod:`ragkit.search.feedback`). ``document_evidence``: ``on`` lifts a chunk
        whose document has other chunks scoring below it (:mod:`ragkit.search.evidence`),
        ``off``, ``auto``; default: the ``document_evidence`` setting. ``phrase_evidence``:
        ``on`` puts the chunks holding the query's terms side by side and in order first
        (:mod:`ragkit.search.phrase`), ``off``, ``auto`` (on for no language yet);
        default: the ``phrase_evidence`` setting (off).
        """
        found = self._search(
            query, k, mode, filters, fusion, rerank, language, collapse,
            feedback=feedback, document_evidence=document_evidence,
            phrase_evidence=phrase_evidence,
        )  # fmt: skip
        return [hit for hit, _ in found]

    @one_generation
    def explain(
        self,
        query: str,
        k: int = 10,
        mode: SearchMode = "hybrid",
        filters: dict[str, Any] | None = None,
        fusion: FusionMethod | None = None,
        rerank: bool = False,
        language: str | None = None,
        collapse: bool | None = None,
        feedback: Feedback | None = None,
        document_evidence: DocumentEvidence | None = None,
        phrase_evidence: PhraseEvidence | None = None,
    ) -> list[ExplainedHit]:
        """The hits of :meth:`search` (the same arguments, the same hits), each with the dense
        and sparse lists' parts of its first-stage score
        (:func:`ragkit.search.contributions.contributions`).

        Example:
            >>> found = index.explain("boiling point of water", k=1)[0]  # doctest: +SKIP
            >>> part = found.contribution  # doctest: +SKIP
            >>> part.dense + part.sparse == found.hit.score  # doctest: +SKIP
            True
        """
        found = self._search(
            query, k, mode, filters, fusion, rerank, language, collapse, True,
            feedback=feedback, document_evidence=document_evidence,
            phrase_evidence=phrase_evidence,
        )  # fmt: skip
        return [ExplainedHit(hit, part, rerank) for hit, part in found if part is not None]

    def _search(
        self,
        query: str,
        k: int,
        mode: SearchMode,
        filters: dict[str, Any] | None,
        fusion: FusionMethod | None,
        rerank: bool,
        language: str | None,
        collapse: bool | None,
        explain: bool = False,
        *,
        feedback: Feedback | None = None,
        document_evidence: DocumentEvidence | None = None,
        phrase_evidence: PhraseEvidence | None = None,
    ) -> list[tuple[Hit, Contribution | None]]:
        """:meth:`search`'s hits, each with its contribution when ``explain`` (else None)."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise RagkitError(f"k={k!r}: ask for at least one hit (a whole number ≥ 1)")
        if filters is not None and not isinstance(filters, dict):
            raise RagkitError(
                f"filters={filters!r:.60}: give a dict of field → value, e.g. "
                '{"language": "ar", "year": {">=": 2000}}'
            )
        self._follow_model()
        check_query(query)
        if language is not None:
            language = check_language(language, "language")
        for name, value, choices in (
            ("feedback", feedback, FEEDBACK_CHOICES),
            ("document_evidence", document_evidence, EVIDENCE_CHOICES),
            ("phrase_evidence", phrase_evidence, PHRASE_CHOICES),
        ):
            if value is not None and value not in choices:
                raise RagkitError(f"{name}={value!r}: use one of {', '.join(choices)}")
        if rerank:
            depth = max(k, self.settings.rerank_depth)
            candidates = self._search(
                query, depth, mode, filters, fusion, False, language, collapse, explain,
                feedback=feedback, document_evidence=document_evidence,
                phrase_evidence=phrase_evidence,
            )  # fmt: skip
            first = {(hit.key, hit.start, hit.end): part for hit, part in candidates}
            reranked = self.reranker.rerank_hits(query, [hit for hit, _ in candidates], k)
            return [(hit, first[hit.key, hit.start, hit.end]) for hit in reranked]
        if mode not in SEARCH_MODES:
            raise RagkitError(f"search mode {mode!r}: use one of {', '.join(SEARCH_MODES)}")
        if self.settings.embedding_model == AUTO_MODEL:
            return []  # nothing ingested yet
        allowed = self.store.filtered_chunk_ids(filters) if filters else None
        depth = max(k, self.settings.fusion_depth)
        languages = [language] if language else query_languages(query, self.store.languages())
        keys = [self.matching_key(query, each) for each in languages]
        method = fusion or self.settings.fusion
        vector = None
        if mode in ("hybrid", "dense"):
            text = keys[0] if embeds_normalized(languages[0], self.settings) else query
            vector = self.encoder.encode_queries([text])[0]
        terms = self._query_terms(keys, languages) if mode != "dense" else []
        asked = terms  # the query's own terms, before any feedback
        lists = self._lists(mode, method, vector, terms, depth, allowed)
        sparse_feedback, dense_feedback = levers(feedback or self.settings.feedback, languages)
        sparse_feedback &= mode != "dense"
        dense_feedback &= mode != "sparse"
        if sparse_feedback or dense_feedback:
            vector, terms = self._feedback(lists[2], vector, terms, sparse_feedback, dense_feedback)
            lists = self._lists(mode, method, vector, terms, depth, allowed)
        dense, sparse, scored = lists
        parts: dict[int, Contribution] = {}
        if explain:
            if mode == "hybrid":
                weights = (self.settings.dense_weight, 1.0 - self.settings.dense_weight)
                parts = contributions(dense, sparse, method, self.settings.rrf_k, weights)
            else:
                parts = single_list(scored, "dense" if mode == "dense" else "sparse")
        if uses_evidence(document_evidence or self.settings.document_evidence, languages):
            owner = self.store.chunks_by_id(i for i, _ in scored)
            before = dict(scored)
            scored = evidence(
                [(i, s) for i, s in scored if i in owner],
                {i: row.document_key for i, row in owner.items()},
            )
            parts = {
                i: dataclasses.replace(part, score=score, evidence=score - before[i])
                for i, score in scored
                if (part := parts.get(i)) is not None
            }
        if uses_phrase(phrase_evidence or self.settings.phrase_evidence, languages):
            scored, parts = self._phrase_first(scored, parts, asked, sparse)
        folding = self.settings.collapse if collapse is None else collapse
        if not folding:
            rows = self.store.chunks_by_id(i for i, _ in scored[:k])
            return [(_hit(rows[i], score), parts.get(i)) for i, score in scored[:k] if i in rows]
        passages = distinct(
            scored,
            k,
            self.store.chunks_by_id,
            lambda row: row.text,
            lambda row: row.document_key,
            self.store.near_duplicate_groups,
            NEAR_DUPLICATE_THRESHOLD,
        )
        return [
            (_hit(row, score, copies), parts.get(row.chunk_id)) for row, score, copies in passages
        ]

    def _lists(
        self,
        mode: SearchMode,
        method: FusionMethod,
        vector: np.ndarray | None,
        terms: list[str],
        depth: int,
        allowed: np.ndarray | None,
    ) -> tuple[Ranking, Ranking, Ranking]:
        """The dense list, the sparse list and the ranking a search makes of them."""
        dense: Ranking = []
        if vector is not None:
            dense = self.store.search_vectors(vector, depth, allowed)
        if mode == "dense":
            return dense, [], dense
        # Weighted fusion compares scores, so each list scores the other's candidates too
        # (not 0 for "below this list's depth").
        complete = mode == "hybrid" and method == "weighted"
        include = [i for i, _ in dense] if complete else []
        sparse = self.store.search_terms(terms, depth, allowed, include)
        if mode == "sparse":
            return [], sparse, sparse
        if complete and vector is not None:
            found = {i for i, _ in dense}
            missing = [i for i, _ in sparse if i not in found]
            dense = dense + self.store.score_vectors(vector, missing)
        weights = (self.settings.dense_weight, 1.0 - self.settings.dense_weight)
        return dense, sparse, fuse([dense, sparse], method, self.settings.rrf_k, weights)

    def _phrase_first(
        self,
        scored: Ranking,
        parts: dict[int, Contribution],
        terms: list[str],
        sparse: Ranking,
    ) -> tuple[Ranking, dict[int, Contribution]]:
        """``scored`` with the chunks holding ``terms`` as a phrase first (among the sparse
        list's top :data:`~ragkit.search.phrase.CANDIDATES`; :mod:`ragkit.search.phrase`),
        their contributions carrying the ``phrase`` lift."""
        if phrase_words(terms) < MIN_TERMS:
            return scored, parts
        top = sorted(sparse, key=lambda item: -item[1])[:CANDIDATES]
        stored = self.store.terms_by_id([i for i, _ in top])
        matching = {i for i, chunk_terms in stored.items() if holds_phrase(terms, chunk_terms)}
        before = dict(scored)
        scored = phrase_first(scored, matching)
        parts = {
            i: dataclasses.replace(part, score=score, phrase=score - before[i])
            for i, score in scored
            if (part := parts.get(i)) is not None
        }
        return scored, parts

    def _feedback(
        self,
        scored: Ranking,
        vector: np.ndarray | None,
        terms: list[str],
        sparse: bool,
        dense: bool,
    ) -> tuple[np.ndarray | None, list[str]]:
        """The query vector and terms of the second pass, learned from the first pass's top
        chunks (:mod:`ragkit.search.feedback`)."""
        params = FeedbackParams()
        if sparse and terms:
            top = scored[: params.documents]
            stored = self.store.terms_by_id([i for i, _ in top])
            found = [(stored[i], s) for i, s in top if i in stored]
            if found and not looks_up(terms, found[0][0], params.lookup_terms):
                weights = rm3(
                    terms,
                    [each for each, _ in found],
                    [s for _, s in found],
                    params.terms,
                    params.original_weight,
                )
                terms = repeated(weights)
        if dense and vector is not None:
            top = scored[: params.dense_documents]
            vectors = self.store.vectors_by_id([i for i, _ in top])
            vector = rocchio(vector, list(vectors.values()), params.dense_original_weight)
        return vector, terms

    def info(self) -> IndexInfo:
        """Where the index is, its model and chunker, its counts, the chunkers chosen and the
        effective settings (reranking overrides of this handle included)."""
        counts = self.store.counts()
        groups = self.duplicates()
        exact = [group for group in groups if group.kind == "exact"]
        near = [group for group in groups if group.kind == "near"]
        return IndexInfo(
            path=str(self.store.location),
            generation=self.store.generation,
            embedding_model=self.settings.embedding_model,
            dimension=self.store.dimension,
            chunker=self.settings.chunker,
            documents=counts["documents"],
            chunks=counts["chunks"],
            vectors=counts["vectors"],
            chunkers_chosen=self.store.chunker_counts(),
            settings=self.settings.summary(),
            duplicate_documents=sum(len(group.members) for group in exact),
            duplicate_groups=len(exact),
            near_duplicate_documents=sum(len(group.members) for group in near),
            near_duplicate_groups=len(near),
        )

    def duplicates(self) -> list[DuplicateGroup]:
        """The groups of documents holding the same text (``exact``) or almost the same
        (``near``: a near-duplicate group of MinHash signatures,
        :mod:`ragkit.pipeline.near_duplicates`), by key.

        Example:
            >>> [(g.kind, g.members) for g in Index.open("my-index").duplicates()]  # doctest: +SKIP
            [('near', ['/usr/share/doc/a/copyright', '/usr/share/doc/b/copyright'])]
        """
        self.store.refresh()
        return duplicate_groups(self.store.document_hashes(), self.store.near_duplicate_groups())

    def documents(self, glob: str | None = None) -> list[DocumentEntry]:
        """The documents the index holds, by key: all, or those whose key or source equals
        ``glob`` or matches it as a glob (``*`` crosses ``/``).

        Example:
            >>> [d.key for d in Index.open("my-index").documents("*.md")]  # doctest: +SKIP
            ['examples/en/water.md']
        """
        self.store.refresh()
        return self.store.list_documents(glob)

    def delete(self, patterns: str | Iterable[str], wait: bool | float = True) -> list[str]:
        """Remove every document whose key or source matches one of ``patterns`` (keys, or
        globs as in :meth:`documents`), its chunks, vectors and BM25 terms, in one new
        generation committed as atomically as an ingest. Returns the removed keys.

        Nothing is removed when a pattern matches no document (:class:`RagkitError`).
        ``wait`` as in :meth:`ingest`.

        Example:
            >>> Index.open("my-index").delete(["examples/fa/*"])  # doctest: +SKIP
            ['examples/fa/poem.txt']
        """
        wanted = [patterns] if isinstance(patterns, str) else list(patterns)
        if not wanted:
            raise RagkitError("Index.delete: give at least one document key or glob")
        with self.store.writing(wait):
            matched = select_keys(self.store, wanted)
            unmatched = [pattern for pattern, keys in matched.items() if not keys]
            if unmatched:
                raise RagkitError(
                    f"{self.store.location}: no document matches {', '.join(map(repr, unmatched))}"
                    "; nothing removed (Index.documents() or `ragkit ls` lists the keys)"
                )
            keys = list(dict.fromkeys(key for found in matched.values() for key in found))
            self.store.commit([], remove_keys=keys)
            update_near_duplicates(self.store, {})  # drops their entries, regroups the rest
            self.store.ensure_sparse()
        return keys

    def export(
        self, destination: str | Path | TextIO, format: str = "jsonl", vectors: bool = False
    ) -> int:
        """Write every chunk as one JSON object per line to ``destination`` (a path or an
        open text stream) and return how many: text, ``start``/``end`` offsets into the
        original document, the document's key, source, title, language, script and metadata,
        the chunker, and with ``vectors`` the embedding
        (:meth:`ragkit.store.IndexStore.chunk_records`).

        Example:
            >>> Index.open("my-index").export("chunks.jsonl", vectors=True)  # doctest: +SKIP
            12
        """
        if format not in EXPORT_FORMATS:
            raise RagkitError(
                f"export format {format!r}: use {' or '.join(EXPORT_FORMATS)} (one JSON "
                "object per chunk per line)"
            )
        if isinstance(destination, str | Path):
            self._check_outside(Path(destination))
        self.store.refresh()
        records = self.store.chunk_records(vectors)
        if not isinstance(destination, str | Path):
            return write_jsonl(records, destination)
        target = Path(destination)
        if target.exists() and not target.is_file():  # /dev/null, a FIFO: written as it is
            try:
                with open(target, "w", encoding="utf-8") as stream:
                    return write_jsonl(records, stream)
            except OSError as error:
                raise RagkitError(f"{destination}: cannot write ({error.strerror})") from error
        scratch = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            with open(scratch, "w", encoding="utf-8") as stream:
                written = write_jsonl(records, stream)
            os.replace(scratch, target)  # a reader never sees half a file, an error no file
            return written
        except OSError as error:
            raise RagkitError(f"{destination}: cannot write ({error.strerror})") from error
        finally:
            scratch.unlink(missing_ok=True)

    def _check_outside(self, path: Path) -> None:
        """Refuse to write ``path`` inside the index folder (it would overwrite the index)."""
        if is_milvus(self.store.location):
            return
        folder = Path(self.store.location).resolve()
        if path.resolve() == folder or folder in path.resolve().parents:
            raise RagkitError(
                f"{path}: inside the index folder {folder}; write the export elsewhere (it "
                "would overwrite or mix with the index's own files)"
            )

    def close(self) -> None:
        """Close the index's database connections (``with Index.open(...)`` does it)."""
        self.store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
