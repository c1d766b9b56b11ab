"""Prefect flow: ingest files into a ragkit index, once or on a schedule.

The flow runs ragkit's one ingest sequence (:class:`ragkit.pipeline.Ingest`, the same code
``ragkit ingest`` runs) with :class:`PrefectStages`, whose stages are Prefect tasks::

    discover ─▶ load (per file) ─▶ chunk (per file: chunk + normalize) ─▶ embed (batches) ─▶ commit

- ``discover`` lists the supported files and hashes each one (SHA-256 of its bytes);
- ``load`` is cached by that hash, so an unchanged file is not parsed again; documents whose
  content hash the index already holds are neither chunked nor embedded; ``chunk`` is cached by
  its documents' content hashes and the index settings;
- ``load`` retries read failures (``retries`` times); a file that still fails is reported with
  its reason and the run goes on, like a file ``ragkit ingest`` skips;
- ``embed`` gets batches of ``embed_batch_size × 8`` chunk texts, one task each, so a Dask
  cluster spreads them over its workers;
- ``commit`` runs in the flow's own process under the index's writer lock: one writer; into a
  Milvus server, ``write`` tasks (parts of ``WRITE_PART`` documents) run on the workers instead,
  each writing directly with its own client (Milvus takes writers at once);
- a markdown artifact (``ragkit-ingest``) summarizes the run.

Run once (on the temporary server Prefect starts, or ``PREFECT_API_URL``)::

    ragkit flows run ingest docs/ --index my-index [--runner dask [--dask-address tcp://…]]

Example:
    >>> ingest_flow.name, [t.name for t in (discover, load, chunk, embed, commit)]
    ('ragkit-ingest', ['discover', 'load', 'chunk', 'embed', 'commit'])
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from typing import Any, cast

import numpy as np
from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE
from prefect.context import TaskRunContext
from prefect.futures import PrefectFuture, wait
from prefect.task_runners import ThreadPoolTaskRunner
from prefect.utilities.annotations import NotSet, quote

import ragkit
from ragkit.config import Settings
from ragkit.documents import Document, LoadOptions, LoadResult, SkippedFile, document_key
from ragkit.documents import discover as discover_files
from ragkit.embed import Encoder
from ragkit.errors import RagkitError, validation_message
from ragkit.index import Index
from ragkit.paths import file_sha256
from ragkit.pipeline import DocumentChunker, IngestReport, PreparedDocument, chunk_embed, prepare
from ragkit.pipeline import load as load_file
from ragkit.pipeline.scheduling import EncoderSource
from ragkit.store import IndexStore, PendingDocument
from ragkit.store.address import default_name, is_milvus, open_store
from ragkit.store.milvus.address import parse_milvus

LOAD_RETRIES = 2
WRITE_PART = 32  # documents per write task (Milvus servers)


def writes_from_workers(location: str) -> bool:
    """Whether commits run as ``write`` tasks on the workers: for a Milvus server, which takes
    writers at once. A folder has one writer (the flow's process, under its lock), and an
    embedded Milvus Lite file one process.

    Example:
        >>> writes_from_workers("milvus://db:19530/docs"), writes_from_workers("/srv/index")
        (True, False)
    """
    return is_milvus(location) and not parse_milvus(location).embedded


@dataclass(frozen=True)
class SourceFile:
    """A discovered file and the SHA-256 of its bytes ("" when it could not be read)."""

    path: str
    sha256: str


@functools.cache
def encoder(model: str, batch_size: int, precision: str) -> Encoder:
    """One encoder per process (each Dask worker loads the model once)."""
    return Encoder(model, batch_size, precision)


@functools.cache
def code_fingerprint() -> str:
    """SHA-256 over ragkit's source files: cached results never outlive a code change."""
    digest = hashlib.sha256()
    for path in sorted(Path(ragkit.__file__).parent.rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _key(*parts: str) -> str:
    return hashlib.sha256("\x00".join((code_fingerprint(), *parts)).encode()).hexdigest()


def file_cache_key(context: TaskRunContext, parameters: dict[str, Any]) -> str | None:
    """``load``'s cache key: the file's path, content hash (none when unreadable) and the
    text field of its records."""
    source: SourceFile = parameters["source"]
    text_field: str = parameters.get("text_field", "text")
    return _key("load", source.path, source.sha256, text_field) if source.sha256 else None


def chunk_cache_key(context: TaskRunContext, parameters: dict[str, Any]) -> str | None:
    """``chunk``'s cache key: the documents' keys and content hashes, and the index settings
    that shape chunks."""
    documents: list[Document] = parameters["documents"]
    settings: Settings = parameters["settings"]
    hashes = (f"{d.key}\x00{d.content_hash}" for d in documents)
    return _key("chunk", *hashes, settings.model_dump_json())


@task(name="discover", retries=2, retry_delay_seconds=2, cache_policy=NO_CACHE)
def discover(
    paths: list[str], options: LoadOptions | None = None
) -> tuple[list[SourceFile], list[SkippedFile]]:
    """Supported files under ``paths`` that ``options`` select, with their content hashes;
    unsupported ones skipped."""
    files, skipped = discover_files([Path(p) for p in paths], options)
    found: list[SourceFile] = []
    for path in files:
        try:
            digest = file_sha256(path)
        except OSError:
            digest = ""  # not cached; ``load`` retries the read and reports it
        found.append(SourceFile(str(path), digest))
    return found, skipped


@task(
    name="load",
    retries=LOAD_RETRIES,
    retry_delay_seconds=2,
    cache_key_fn=file_cache_key,
    persist_result=True,
)
def load(source: SourceFile, text_field: str = "text") -> LoadResult:
    """One file's documents; read failures raise (and are retried), bad content is skipped."""
    return load_file(Path(source.path), raise_io_errors=True, text_field=text_field)


@task(name="chunk", cache_key_fn=chunk_cache_key, persist_result=True)
def chunk(documents: list[Document], settings: Settings) -> list[PreparedDocument]:
    """Chunk (adaptive or the configured chunker) and normalize one file's documents."""

    def model() -> Encoder:
        return encoder(
            settings.embedding_model, settings.embed_batch_size, settings.embedding_precision
        )

    chunker = DocumentChunker(settings, embed=chunk_embed(settings, model))
    return prepare(documents, chunker, settings)


@task(name="embed", cache_policy=NO_CACHE)
def embed(texts: list[str], model: str, batch_size: int, precision: str) -> np.ndarray:
    """Vectors of one batch of chunk texts."""
    return encoder(model, batch_size, precision).encode_passages(texts)


@task(name="commit", cache_policy=NO_CACHE)
def commit(store: IndexStore, pending: list[PendingDocument]) -> int:
    """Commit one batch of documents as a new generation (called in the flow's process)."""
    return store.commit(pending)


@functools.cache
def milvus_store(location: str) -> IndexStore:
    """One client of the Milvus index ``location`` per process (each Dask worker opens its
    own; a server's token comes from the worker's ``MILVUS_TOKEN``)."""
    return open_store(location)


@task(name="write", cache_policy=NO_CACHE)
def write(location: str, pending: list[PendingDocument]) -> int:
    """Write documents into the Milvus index at ``location`` from the process this task runs
    in (a Dask worker): Milvus takes concurrent writers, each document atomically."""
    return milvus_store(location).commit(pending)


def _reason(error: BaseException | None, path: str) -> str:
    message = str(error).removeprefix(f"{path}: ") if error else "unknown error"
    return f"{message} (failed after {LOAD_RETRIES + 1} attempts)"


@dataclass
class FlowStats:
    """What the flow itself adds to the ingest report: caching and embedding work."""

    files_cached: int = 0
    embed_batches: int = 0
    chunks_embedded: int = 0
    write_tasks: int = 0  # Milvus writes run as tasks on the workers


class PrefectStages:
    """The ingest stages as Prefect tasks, for :class:`ragkit.pipeline.Ingest`.

    ``load`` runs per file (retried, cached by content hash), ``prepare`` per file's documents
    (cached by their content hashes and the settings), ``embed`` in batches of
    ``embed_batch_size × 8`` texts that a Dask cluster spreads over its workers, and
    ``commit`` in the flow's own process — or, into a Milvus server, as ``write`` tasks that
    the workers run with their own clients. Each worker loads its own encoder once.
    ``loading``: include/exclude globs and the text field of records. Steps run one after the
    other: the embed tasks already spread a step over the cluster's workers.
    """

    embeds_beside_chunking = False

    def __init__(
        self,
        retry_delay_seconds: float = 2.0,
        refresh_cache: bool = False,
        loading: LoadOptions | None = None,
    ) -> None:
        self.loading = loading or LoadOptions()
        self.retry_delay_seconds = retry_delay_seconds
        # NotSet keeps each task's own setting (Prefect's default) unless a refresh is asked for
        self.refresh_cache: bool | type[NotSet] = True if refresh_cache else NotSet
        self.stats = FlowStats()
        self._sources: dict[str, SourceFile] = {}  # discovered files by path, with their hash

    def discover(self, roots: list[Path]) -> tuple[list[Path], list[SkippedFile]]:
        files, skipped = discover([str(root) for root in roots], self.loading)
        self._sources = {source.path: source for source in files}
        return [Path(source.path) for source in files], skipped

    def load_files(self, files: list[Path]) -> LoadResult:
        loader = load.with_options(
            retry_delay_seconds=self.retry_delay_seconds, refresh_cache=self.refresh_cache
        )
        sources = [self._sources[str(path)] for path in files]
        loads = [loader.submit(source, self.loading.text_field) for source in sources]
        wait(loads)
        result = LoadResult()
        unreadable: list[SkippedFile] = []
        for source, future in zip(sources, loads, strict=True):
            if future.state.is_completed():
                loaded = future.result()
                result.documents.extend(loaded.documents)
                unreadable.extend(loaded.skipped)
                self.stats.files_cached += future.state.name == "Cached"
            else:
                error = cast(BaseException, future.result(raise_on_failure=False))
                result.skipped.append(SkippedFile(source.path, _reason(error, source.path)))
        result.skipped.extend(unreadable)
        return result

    def prepare(
        self,
        documents: list[Document],
        settings: Settings,
        encoder: EncoderSource,
        seconds: dict[str, float],
    ) -> list[PreparedDocument]:
        clock = time.perf_counter()
        chunker = chunk.with_options(refresh_cache=self.refresh_cache)
        by_file = [list(group) for _, group in groupby(documents, key=lambda d: d.source)]
        futures = [chunker.submit(group, settings) for group in by_file]
        prepared = [item for future in futures for item in future.result()]
        seconds["chunk"] = seconds.get("chunk", 0.0) + time.perf_counter() - clock
        return prepared

    def embed(
        self,
        texts: list[str],
        settings: Settings,
        encoder: EncoderSource,
        progress: Callable[[int], None] | None,
    ) -> np.ndarray:
        step = settings.embed_batch_size * 8
        futures: list[PrefectFuture[np.ndarray]] = [
            embed.submit(
                texts[i : i + step],
                settings.embedding_model,
                settings.embed_batch_size,
                settings.embedding_precision,
            )
            for i in range(0, len(texts), step)
        ]
        vectors = [future.result() for future in futures]
        self.stats.embed_batches += len(futures)
        self.stats.chunks_embedded += len(texts)
        return np.concatenate(vectors).astype(np.float32)

    def commit(self, store: IndexStore, pending: list[PendingDocument]) -> int:
        if not writes_from_workers(store.location):
            # quote(): Prefect passes both through as they are, without walking them for futures
            return commit(quote(store), quote(pending))  # type: ignore[call-overload]
        parts = [pending[i : i + WRITE_PART] for i in range(0, len(pending), WRITE_PART)]
        futures = [write.submit(store.location, part) for part in parts]
        wait(futures)
        for future in futures:
            future.result()  # a rejected write fails the run, naming the index
        self.stats.write_tasks += len(futures)
        store.refresh()
        return store.generation


@flow(name="ragkit-ingest")
def ingest_flow(
    paths: list[str],
    index: str,
    prune: bool = False,
    model: str | None = None,
    settings: dict[str, Any] | None = None,
    wait_for_lock: bool = True,
    retry_delay_seconds: float = 2.0,
    refresh_cache: bool = False,
    include: list[str] | None = None,
    exclude: list[str] | None = None,
    text_field: str = "text",
    max_delete: str | None = None,
    prune_empty: bool = False,
) -> IngestReport:
    """Ingest ``paths`` into the index folder ``index`` (created with ``model`` and
    ``settings`` when missing); the same result as ``ragkit ingest PATHS --index INDEX``.

    ``refresh_cache`` loads and chunks every file again (and refreshes the cache) instead of
    reusing the results of an unchanged file. ``include``, ``exclude``, ``text_field``,
    ``max_delete``, ``prune_empty``: as ``ragkit ingest --include/--exclude/--text-field/
    --max-delete/--prune-empty`` (a root that yields no file — a share that is down — prunes
    nothing unless ``prune_empty``).
    """
    logger = get_run_logger()
    opened = Index.open(index, create=True, model=model, **(settings or {}))
    loading = LoadOptions(tuple(include or ()), tuple(exclude or ()), text_field)
    stages = PrefectStages(retry_delay_seconds, refresh_cache, loading)
    report = opened.ingest(
        paths,
        prune=prune,
        wait=wait_for_lock,
        stages=stages,
        max_delete=max_delete,
        prune_empty=prune_empty,
    )
    logger.info(
        "%d files, %d documents added, %d unchanged, %d chunks embedded, %d skipped",
        report.files_seen,
        report.documents_added,
        report.documents_unchanged,
        stages.stats.chunks_embedded,
        len(report.skipped),
    )
    create_markdown_artifact(
        key="ragkit-ingest",
        markdown=summary_markdown(index, report, stages.stats, opened.store.chunker_counts()),
        description=f"ragkit ingest into {index}",
    )
    opened.close()
    return report


def summary_markdown(
    index: str, report: IngestReport, stats: FlowStats, chunkers: dict[str, int]
) -> str:
    """The run summary published as the flow's artifact.

    Example:
        >>> print(summary_markdown("idx", IngestReport(files_seen=2), FlowStats(), {})
        ...       .splitlines()[0])
        # ragkit ingest → `idx` (generation 0)
    """
    rows = [
        ("files seen", report.files_seen),
        ("files unchanged (cached load + chunk)", stats.files_cached),
        ("documents added", report.documents_added),
        ("documents unchanged", report.documents_unchanged),
        ("documents removed", report.documents_removed),
        ("documents renamed (moved, not embedded again)", report.documents_renamed),
        ("chunks embedded", stats.chunks_embedded),
        ("embedding batches", stats.embed_batches),
        ("files skipped", len(report.skipped)),
    ]
    lines = [
        f"# ragkit ingest → `{index}` (generation {report.generation})",
        "",
        "| | |",
        "|---|---:|",
        *(f"| {name} | {value} |" for name, value in rows),
        "",
        "| stage | seconds |",
        "|---|---:|",
        *(f"| {stage} | {seconds:.2f} |" for stage, seconds in report.seconds.items()),
    ]
    if chunkers:
        lines += ["", "| chunker chosen | documents |", "|---|---:|"]
        lines += [f"| {name} | {count} |" for name, count in chunkers.items()]
    if report.skipped:
        lines += ["", "## Skipped", ""]
        lines += [f"- `{s.path}`: {s.reason}" for s in report.skipped]
    return "\n".join(lines) + "\n"


def task_runner(runner: str = "local", address: str | None = None, workers: int | None = None):
    """``local``: threads in this process; ``dask``: prefect-dask's ``DaskTaskRunner`` on the
    scheduler at ``address``, or on a new ``LocalCluster`` of ``workers`` processes."""
    if runner == "local":
        return ThreadPoolTaskRunner(max_workers=workers)
    if runner != "dask":
        raise RagkitError(f"--runner {runner!r}: use local or dask")
    from prefect_dask import DaskTaskRunner

    if address:
        return DaskTaskRunner(address=address)
    cluster = {"n_workers": workers or 2, "threads_per_worker": 1, "dashboard_address": None}
    return DaskTaskRunner(cluster_kwargs=cluster)


def run_ingest(
    paths: list[str],
    index: str,
    runner: str = "local",
    address: str | None = None,
    workers: int | None = None,
    **parameters: Any,
) -> IngestReport:
    """Run :func:`ingest_flow` once with the chosen task runner (``ragkit flows run ingest``)."""
    chosen = ingest_flow.with_options(task_runner=task_runner(runner, address, workers))
    return chosen(paths=paths, index=index, **parameters)


def serve_ingest(
    index: str | Path,
    watch: list[Path],
    cron: str = "0 2 * * *",
    name: str | None = None,
    model: str | None = None,
    prune: bool = True,
    files: dict[str, Any] | None = None,
) -> None:
    """Register a deployment of :func:`ingest_flow` that re-ingests ``watch`` into ``index``
    on ``cron``, and serve it until interrupted (``ragkit flows serve``). ``files``: the
    flow's ``include``, ``exclude``, ``text_field`` and new-index ``settings`` parameters.

    Schedules live on a Prefect server: ``prefect server start`` and ``PREFECT_API_URL``.
    """
    from prefect.client.schemas.schedules import CronSchedule
    from prefect.settings import PREFECT_API_URL
    from pydantic import ValidationError

    try:
        CronSchedule(cron=cron)
    except ValidationError as error:
        raise RagkitError(
            f"--cron {cron!r}: {validation_message(error)}; write five fields: minute hour "
            "day-of-month month day-of-week, e.g. '0 2 * * *'"
        ) from error
    if not PREFECT_API_URL.value():
        raise RagkitError(
            "ragkit flows serve: schedules need a running Prefect server; start one with "
            "`prefect server start` and export PREFECT_API_URL=http://127.0.0.1:4200/api"
        )
    missing = [str(w) for w in watch if not w.exists()]
    if missing:
        raise RagkitError(f"--watch {', '.join(missing)}: no such file or folder")
    parameters = {
        "paths": [document_key(w) for w in watch],  # as document keys: links kept
        "index": index if is_milvus(index) else str(Path(index).resolve()),
        "prune": prune,
        "model": model,
        **(files or {}),
    }
    ingest_flow.serve(
        name=name or f"ragkit-{default_name(str(index))}", cron=cron, parameters=parameters
    )
