"""The Python API: open or create an index, ingest files or add records, search.

Example:
    >>> from ragkit import Index
    >>> index = Index.open("my-index", create=True, model="all-minilm-l6-v2")  # doctest: +SKIP
    >>> report = index.ingest(["examples/"])  # doctest: +SKIP
    >>> index.search("boiling point of water", k=3)[0].source  # doctest: +SKIP
    'examples/en/water.md'
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self, TextIO

from ragkit.chunking import ChunkingRecord
from ragkit.config import (
    ANALYSIS_SETTINGS,
    CHOSEN_WITH_MODEL,
    CONFIG_NAME,
    Settings,
    check_setting_names,
    handle_settings,
    with_settings_file,
)
from ragkit.documents import LoadOptions, document_key
from ragkit.documents.discovery import check_apart
from ragkit.documents.given import DEFAULT_SOURCE, check_source
from ragkit.embed import Encoder
from ragkit.embed.models import AUTO_DIMENSION, AUTO_MODEL
from ragkit.errors import IndexNotFoundError, InvalidArgumentError, NotFoundError, RagkitError
from ragkit.management import (
    IndexInfo,
    export_chunks,
    index_info,
    keys_matching,
    keys_of_ids,
    remove_documents,
)
from ragkit.pipeline import (
    Ingest,
    IngestReport,
    IngestStages,
    LocalStages,
    ProgressCallback,
    matching_key,
    sparse_terms,
)
from ragkit.pipeline.near_duplicates import DuplicateGroup, duplicate_groups
from ragkit.pipeline.plan import PruneGuard
from ragkit.pipeline.reanalyze import ReanalyzeReport, reanalyze
from ragkit.query.hits import ExplainedHit, Hit
from ragkit.query.options import SearchOptions
from ragkit.query.sequence import Search
from ragkit.query.vectors import Vector
from ragkit.store import DocumentEntry, FolderStore, IndexExistsError, IndexStore
from ragkit.store.address import Location, create_store, display, index_exists, open_store
from ragkit.store.consistent import one_generation
from ragkit.store.milvus.address import is_milvus
from ragkit.store.tokenizers import stale_message

if TYPE_CHECKING:
    from ragkit.rerank.reranker import Reranker

log = logging.getLogger(__name__)


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
        check_setting_names(settings, "Index.open")
        exists = index_exists(location)
        if not create and not exists:
            raise IndexNotFoundError(
                f"{folder}: no ragkit index here; create one with "
                f"Index.open({str(folder)!r}, create=True) or `ragkit ingest PATH --index "
                f"{folder}`"
            )
        folder_file = None if is_milvus(location) else Path(location) / CONFIG_NAME
        model, settings, filed = with_settings_file(config, folder_file, model, settings)
        if create and not exists:
            chosen = Settings.model_validate(
                ({"embedding_model": model} if model else {}) | settings
            )
            encoder = None
            if chosen.embedding_model != AUTO_MODEL:  # a named model: its precision resolved
                encoder = Encoder(
                    chosen.embedding_model, chosen.embed_batch_size, chosen.embedding_precision
                )
                chosen = chosen.model_copy(update={"embedding_precision": encoder.precision})
            dimension = encoder.dimension if encoder else AUTO_DIMENSION
            try:
                index = cls(create_store(location, chosen, dimension))
            except IndexExistsError:  # another process created it meanwhile: open it below
                pass
            else:
                index._encoder = encoder
                return index
        index = cls(open_store(location))
        index.settings = handle_settings(index.settings, model, settings, filed, str(folder))
        stale = index.store.stale_tokenizers()
        if stale:
            log.warning("%s", stale_message(folder, stale))
        return index

    @property
    def reranker(self) -> Reranker:
        """The groupwise reranker named by the ``reranker`` setting (loaded on first use);
        ``auto`` picks the shipped one that reads the index's languages."""
        if self._reranker is None:
            from ragkit.rerank.reranker import Reranker

            held = {language for _, language in self.store.languages()}
            self._reranker = Reranker.for_index(self.settings, held)
        return self._reranker

    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            if self.settings.embedding_model == AUTO_MODEL:
                raise RagkitError(
                    f"{self.store.location}: no embedding model yet; model 'auto' is chosen from "
                    "the documents of the first ingest"
                )
            settings = self.settings
            self._encoder = Encoder(
                settings.embedding_model, settings.embed_batch_size, settings.embedding_precision
            )
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
            raise InvalidArgumentError(
                f"Index.ingest({str(paths)!r}): give a list of paths, e.g. "
                f"Index.ingest([{str(paths)!r}])"
            )
        if isinstance(self.store, FolderStore):
            check_apart([Path(p) for p in paths], self.store.folder)
        guard = PruneGuard(max_delete, prune_empty)
        loading = LoadOptions(tuple(include), tuple(exclude), text_field)
        if stages is not None and loading != LoadOptions():
            raise InvalidArgumentError(
                "Index.ingest: give include/exclude/text_field to the stages"
            )
        self._stages.loading = loading
        with self.store.writing(wait):
            self._follow_model()
            run = Ingest(self.store, self.settings, stages or self._stages, self._encoder)
            try:
                report = run.run([Path(p) for p in paths], prune, progress, guard)
            finally:
                self._take_model(run)
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

        An unchanged record is skipped, a changed one indexed again; one that cannot be a
        document (no id or text, an id given twice, unknown fields…) is reported in the
        report's ``skipped`` and the others are indexed. ``source`` names the records'
        collection (``<records>`` by default; each hit's ``source``); with ``prune`` its stored
        records this call does not give are removed, once ``records`` end (``max_delete``,
        ``prune_empty`` as in :meth:`ingest`). ``records`` are read as they come and committed
        window by window (``commit_every_documents`` records or ``commit_every_seconds``), so a
        long generator's records are searchable, and kept, while it goes on. See
        docs/records.md.

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
            raise InvalidArgumentError(
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
        return report

    def _take_model(self, run: Ingest) -> None:
        """Keep the model (and loaded encoder) an ingest of an ``auto`` index chose."""
        if run.settings.embedding_model != self.settings.embedding_model:
            model = {name: getattr(run.settings, name) for name in CHOSEN_WITH_MODEL}
            self.settings = self.settings.model_copy(update=model)
        self._encoder = run.encoder or self._encoder

    def _follow_model(self) -> None:
        """Take the model another handle's (or process's) first ingest chose for this ``auto``
        index since this handle opened it (a server started before it serves its commits)."""
        if self.settings.embedding_model == AUTO_MODEL:
            self.store.refresh()
            stored = self.store.settings
            chosen = {name: getattr(stored, name) for name in CHOSEN_WITH_MODEL}
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
            raise NotFoundError(
                f"{self.store.location}: no document {key!r} (keys are absolute file paths, plus "
                "'#id' for records; `ragkit ls` lists them)"
            )
        return record

    def stored_key(self, key: str) -> str:
        """``key`` as the index stores it: as given when a document has it, else the absolute
        form of a path typed relative to the current folder (:func:`document_key`)."""
        return key if self.store.language_decision(key) is not None else document_key(key)

    @one_generation
    def search(self, query: str, options: SearchOptions | None = None, **given: Any) -> list[Hit]:
        """The ``k`` best chunks for ``query``, best first (thresholds: ``Hit.relevance``).

        The options are :class:`ragkit.query.SearchOptions` (``k``, ``mode``, ``filters``,
        ``rerank``, ``mmr_lambda``…), as one object or its fields as keywords (keywords win;
        what is not given takes the index's setting). The stages: :class:`ragkit.query.Search`.

        Example:
            >>> index.search("boiling point of water", k=3, mode="sparse")[0].key  # doctest: +SKIP
            '/docs/water.md'
        """
        return [hit for hit, *_ in self._sequence().run(query, SearchOptions.of(options, **given))]

    @one_generation
    def search_by_vector(
        self, vector: Any, options: SearchOptions | None = None, **given: Any
    ) -> list[Hit]:
        """The ``k`` chunks nearest ``vector`` (as :meth:`embed_query` gives), best first, as
        dense :meth:`search` finds them; a vector not of the index's dimension, not finite or
        not numbers is an :class:`InvalidArgumentError`.

        Example:
            >>> index.search_by_vector(index.embed_query("boiling water"), k=1)  # doctest: +SKIP
        """
        found = self._sequence().run_vector(vector, SearchOptions.of(options, **given))
        return [hit for hit, *_ in found]

    def embed_query(self, text: str) -> Vector:
        """``text`` embedded as :meth:`search` embeds a query (unit length)."""
        return self._sequence().query_vector(text)

    @one_generation
    def explain(
        self, query: str, options: SearchOptions | None = None, **given: Any
    ) -> list[ExplainedHit]:
        """The hits of :meth:`search` (the same options, the same hits), each with the parts of
        its first-stage score (:mod:`ragkit.search.contributions`) and its relevance evidence.

        Example:
            >>> found = index.explain("boiling point of water", k=1)[0]  # doctest: +SKIP
            >>> part = found.contribution  # doctest: +SKIP
            >>> part.dense + part.sparse == found.hit.score  # doctest: +SKIP
            True
        """
        chosen = SearchOptions.of(options, **given)
        found = self._sequence().run(query, chosen, explain=True)
        return [ExplainedHit(h, part, chosen.rerank, e) for h, part, e in found if part is not None]

    def _sequence(self) -> Search:  # with the model an ingest chose since this handle opened
        self._follow_model()
        return Search(self.store, self.settings, lambda: self.encoder, lambda: self.reranker)

    def info(self) -> IndexInfo:
        """Where the index is, its model and chunker, its counts, the chunkers chosen and the
        effective settings (reranking overrides of this handle included)."""
        return index_info(self.store, self.settings, self.duplicates())

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

    def documents(
        self, glob: str | None = None, filters: Mapping | None = None
    ) -> list[DocumentEntry]:
        """The documents the index holds, by key: all, or those whose key or source equals
        ``glob`` or matches it as a glob, and that match the search ``filters``.

        Example:
            >>> [d.key for d in Index.open("my-index").documents("*.md", {"year": 2020})]  # doctest: +SKIP
            ['examples/en/water.md']
        """
        self.store.refresh()
        return self.store.list_documents(glob, filters)

    def delete(
        self, ids: str | Iterable[str], wait: bool | float = True, missing_ok: bool = False
    ) -> list[str]:
        """Remove the documents whose id (key) is exactly one of ``ids``: its chunks, vectors
        and BM25 terms, in one new generation committed as atomically as an ingest. Returns
        the removed keys.

        An id is never read as a pattern: ``"*"`` removes the record whose id is ``*`` and
        nothing else. A relative path that is no key names the file document of that path
        from the current folder (file documents are keyed by absolute path). An id the index
        does not hold raises :class:`RagkitError` and nothing is removed, unless
        ``missing_ok`` (then it is passed over). To remove by glob or by source, use
        :meth:`delete_matching`. ``wait`` as in :meth:`ingest`.

        Example:
            >>> Index.open("my-index").delete(["faq-2", "*"])  # doctest: +SKIP
            ['faq-2', '*']
        """
        wanted = [ids] if isinstance(ids, str) else [str(i) for i in ids]
        if not wanted:
            raise InvalidArgumentError("Index.delete: give at least one document id")
        with self.store.writing(wait):
            keys = keys_of_ids(self.store, wanted, missing_ok)
            remove_documents(self.store, keys)
        return keys

    def delete_matching(
        self, patterns: str | Iterable[str], wait: bool | float = True
    ) -> list[str]:
        """Remove every document whose key or source matches one of ``patterns`` (keys, or
        globs as in :meth:`documents`), in one new generation as :meth:`delete` does. Returns
        the removed keys.

        Nothing is removed when a pattern matches no document (:class:`RagkitError`).
        ``wait`` as in :meth:`ingest`.

        Example:
            >>> Index.open("my-index").delete_matching(["examples/fa/*"])  # doctest: +SKIP
            ['examples/fa/poem.txt']
        """
        wanted = [patterns] if isinstance(patterns, str) else list(patterns)
        if not wanted:
            raise InvalidArgumentError(
                "Index.delete_matching: give at least one document key or glob"
            )
        with self.store.writing(wait):
            keys = keys_matching(self.store, wanted)
            remove_documents(self.store, keys)
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
        return export_chunks(self.store, destination, format, vectors)

    def close(self) -> None:
        """Close the index's database connections (``with Index.open(...)`` does it)."""
        self.store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
