"""What :class:`ragkit.Index` reports and manages beside ingest and search: the index at a
glance (:class:`IndexInfo`), documents removed in one generation, chunks exported.

Example:
    >>> IndexInfo("i", 1, "m", 4, "adaptive", 2, 3, 3, {"sentence": 2}).rows()[-1]
    ('chunkers chosen', 'sentence 2')
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ragkit.config import Settings
from ragkit.errors import InvalidArgumentError, NotFoundError, RagkitError
from ragkit.pipeline.near_duplicates import DuplicateGroup
from ragkit.pipeline.near_duplicates import update as update_near_duplicates
from ragkit.store import IndexStore
from ragkit.store.catalog import EXPORT_FORMATS, exact_keys, select_keys, write_jsonl
from ragkit.store.milvus.address import is_milvus


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
        """``(field, value)`` pairs to print, in order."""
        chosen = ", ".join(f"{name} {count}" for name, count in self.chunkers_chosen.items())
        listed = [f.name for f in dataclasses.fields(self) if f.name not in _LISTS]
        fields = [(name, str(getattr(self, name))) for name in listed]
        return [*fields, ("chunkers chosen", chosen or "—"), *self.settings]


_LISTS = ("chunkers_chosen", "settings")  # IndexInfo fields that rows() prints its own way


def index_info(store: IndexStore, settings: Settings, groups: list[DuplicateGroup]) -> IndexInfo:
    """The index of ``store`` at a glance, with the effective ``settings`` and its duplicate
    ``groups`` (:meth:`ragkit.Index.duplicates`)."""
    counts = store.counts()
    exact = [group for group in groups if group.kind == "exact"]
    near = [group for group in groups if group.kind == "near"]
    return IndexInfo(
        path=str(store.location),
        generation=store.generation,
        embedding_model=settings.embedding_model,
        dimension=store.dimension,
        chunker=settings.chunker,
        documents=counts["documents"],
        chunks=counts["chunks"],
        vectors=counts["vectors"],
        chunkers_chosen=store.chunker_counts(),
        settings=settings.summary(),
        duplicate_documents=sum(len(group.members) for group in exact),
        duplicate_groups=len(exact),
        near_duplicate_documents=sum(len(group.members) for group in near),
        near_duplicate_groups=len(near),
    )


def keys_of_ids(store: IndexStore, ids: list[str], missing_ok: bool = False) -> list[str]:
    """The keys of the documents whose id is exactly one of ``ids``
    (:func:`ragkit.store.catalog.exact_keys`); an id the index does not hold raises
    :class:`NotFoundError` unless ``missing_ok``."""
    found = exact_keys(store, ids)
    missing = [i for i, key in found.items() if key is None]
    if missing and not missing_ok:
        raise NotFoundError(
            f"{store.location}: no document has the id {', '.join(map(repr, missing[:5]))}; "
            "nothing removed (Index.documents() or `ragkit ls` lists the ids; "
            "Index.delete_matching removes by glob)"
        )
    return list(dict.fromkeys(key for key in found.values() if key is not None))


def keys_matching(store: IndexStore, patterns: list[str]) -> list[str]:
    """The keys of the documents whose key or source matches one of ``patterns``; a pattern
    that matches nothing raises :class:`NotFoundError`."""
    matched = select_keys(store, patterns)
    unmatched = [pattern for pattern, keys in matched.items() if not keys]
    if unmatched:
        raise NotFoundError(
            f"{store.location}: no document matches {', '.join(map(repr, unmatched))}; "
            "nothing removed (Index.documents() or `ragkit ls` lists the keys)"
        )
    return list(dict.fromkeys(key for found in matched.values() for key in found))


def remove_documents(store: IndexStore, keys: list[str]) -> None:
    """Commit the removal of the documents ``keys`` in one generation (under the writer
    lock): their chunks, vectors and BM25 terms, and their near-duplicate entries."""
    if not keys:
        return
    store.commit([], remove_keys=keys)
    update_near_duplicates(store, {})  # drops their entries, regroups the rest
    store.ensure_sparse()


def export_chunks(
    store: IndexStore,
    destination: str | Path | TextIO,
    format: str = "jsonl",
    vectors: bool = False,
) -> int:
    """Every chunk of ``store`` written as one JSON object per line to ``destination`` (a path,
    written to a temporary file and renamed, or an open text stream); how many
    (:meth:`ragkit.Index.export`)."""
    if format not in EXPORT_FORMATS:
        raise InvalidArgumentError(
            f"export format {format!r}: use {' or '.join(EXPORT_FORMATS)} (one JSON "
            "object per chunk per line)"
        )
    if isinstance(destination, str | Path):
        check_outside(store, Path(destination))
    store.refresh()
    records = store.chunk_records(vectors)
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


def check_outside(store: IndexStore, path: Path) -> None:
    """Refuse to write ``path`` inside the index folder (it would overwrite the index)."""
    if is_milvus(store.location):
        return
    folder = Path(store.location).resolve()
    if path.resolve() == folder or folder in path.resolve().parents:
        raise InvalidArgumentError(
            f"{path}: inside the index folder {folder}; write the export elsewhere (it "
            "would overwrite or mix with the index's own files)"
        )
