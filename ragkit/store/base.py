"""The store interface: what ingest, search and the index's management need of a backend.

It is three protocols, split by who calls them, so a caller names only what it needs:
:class:`IndexReader` (what searches, queries and listings read), :class:`IndexWriter` (what an
ingest writes) and :class:`IndexMaintenance` (re-analysis, near-duplicates, settings);
:class:`IndexStore` is all three, what a backend implements.

Two backends implement it: the index folder (:class:`ragkit.store.FolderStore`: SQLite + FAISS +
BM25 on one machine) and Milvus (:class:`ragkit.store.milvus.MilvusStore`: Milvus Lite, or a
Milvus Standalone / Distributed server). :func:`ragkit.store.address.open_store` picks one by
the index's location. Everything above this interface — normalization, language routing,
chunking, embedding, the analyzers that make sparse terms, fusion, reranking — is the same
for both.

``allowed`` (the result of :meth:`IndexStore.filtered_chunk_ids`) is whatever the same store's
searches take to keep to the chunks a filter selected: chunk ids in the folder store, the
selected documents' ids in Milvus.

Example:
    >>> import tempfile
    >>> from pathlib import Path
    >>> from ragkit.config import Settings
    >>> from ragkit.store import FolderStore
    >>> store: IndexStore = FolderStore.create(Path(tempfile.mkdtemp()) / "idx", Settings(), 4)
    >>> reader: IndexReader = store
    >>> reader.document_hashes(), reader.generation
    ({}, 0)
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

import numpy as np

from ragkit.chunking import ChunkingRecord
from ragkit.config import Settings
from ragkit.normalize.detect import LanguageGuess
from ragkit.store.records import DocumentEntry, PendingDocument, StoredChunk

__all__ = ["IndexMaintenance", "IndexReader", "IndexStore", "IndexWriter"]


class IndexReader(Protocol):
    """What searches, queries and listings read of one index, wherever it lives. ``location``
    names it in messages (a folder, or a ``milvus://`` / ``milvus-lite://`` address without its
    token)."""

    settings: Settings
    dimension: int
    generation: int

    @property
    def location(self) -> str:
        """The index as messages name it."""
        ...

    # -- following writers -------------------------------------------------------------------
    def committed_generation(self) -> int:
        """The generation the last commit (of any writer) made."""
        ...

    def refresh(self) -> None:
        """Follow the last committed generation (and the settings it was committed with)."""
        ...

    # -- documents ---------------------------------------------------------------------------
    def document_hashes(self) -> dict[str, str]:
        """Each stored document's key and content hash."""
        ...

    def document_sources(self) -> dict[str, str]:
        """Each stored document's key and the file it came from."""
        ...

    def document_texts(self) -> Iterator[str]:
        """The original text of every stored document."""
        ...

    def languages(self) -> dict[tuple[str, str], int]:
        """Characters of text per ``(script, language)``, most first."""
        ...

    def counts(self) -> dict[str, int]:
        """``documents``, ``chunks`` and ``vectors`` held."""
        ...

    def chunker_counts(self) -> dict[str, int]:
        """How many documents each chunker was chosen for."""
        ...

    def chunking(self, key: str) -> ChunkingRecord | None:
        """The chunking record of the document ``key`` (None: no such document)."""
        ...

    def language_decision(self, key: str) -> LanguageGuess | None:
        """How the language of the document ``key`` was decided (None: no such document)."""
        ...

    def list_documents(
        self, pattern: str | None = None, filters: Mapping[str, Any] | None = None
    ) -> list[DocumentEntry]:
        """The documents whose key or source matches ``pattern`` (all when None) and that
        match the search ``filters`` (all when None), by key (:mod:`ragkit.store.catalog`)."""
        ...

    def texts_of(self, keys: Sequence[str]) -> dict[str, str]:
        """The original text of each stored document of ``keys`` (absent ones left out)."""
        ...

    def chunk_records(self, vectors: bool = False) -> Iterator[dict[str, Any]]:
        """Every chunk as ``ragkit export`` writes it, by document key then position."""
        ...

    def stored_documents(self, keys: Sequence[str]) -> list[PendingDocument]:
        """The documents ``keys`` (those stored) read back whole, as :meth:`commit` takes them."""
        ...

    def near_duplicate_groups(self, keys: Iterable[str] | None = None) -> dict[str, str]:
        """Key → near-duplicate group key (the group's smallest key) of the documents ``keys``
        (all when None) that are in a group of at least two different contents."""
        ...

    # -- searching ---------------------------------------------------------------------------
    def filtered_chunk_ids(self, filters: dict[str, Any]) -> np.ndarray:
        """What the searches take as ``allowed`` to keep to the chunks whose document matches
        ``filters`` (:mod:`ragkit.store.filters`: the same documents on every backend); a
        malformed filter, or a metadata key no document has when nothing matched, is an
        :class:`ragkit.errors.InvalidArgumentError`."""
        ...

    def search_vectors(
        self, query: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """Chunk ids and inner products of the ``k`` nearest vectors, best first."""
        ...

    def search_terms(
        self,
        terms: list[str],
        k: int,
        allowed: np.ndarray | None = None,
        include: Collection[int] = (),
    ) -> list[tuple[int, float]]:
        """Chunk ids and BM25 scores of the ``k`` best matches of ``terms``, plus the scores of
        the ``include`` chunk ids, best first."""
        ...

    def score_vectors(self, query: np.ndarray, ids: list[int]) -> list[tuple[int, float]]:
        """Exact inner products of ``query`` with the stored vectors of the chunks ``ids``."""
        ...

    def term_idf(self, terms: list[str]) -> list[float]:
        """The BM25 IDF of each of ``terms`` over the chunks the index shows, as its BM25
        scores use it (Lucene: ``ln(1 + (N - df + 0.5) / (df + 0.5))``); a term no chunk holds
        gets the largest (df 0)."""
        ...

    def chunks_by_id(self, ids: Iterable[int]) -> dict[int, StoredChunk]:
        """The chunks ``ids`` with their documents (ids no longer stored are left out)."""
        ...

    def vectors_by_id(self, ids: list[int]) -> dict[int, np.ndarray]:
        """The stored vectors of the chunks ``ids`` (dense feedback: :mod:`ragkit.search.feedback`)."""
        ...

    def terms_by_id(self, ids: list[int]) -> dict[int, list[str]]:
        """The stored sparse terms of the chunks ``ids`` (sparse feedback)."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


class IndexWriter(Protocol):
    """What an ingest writes: documents committed as one new generation at a time."""

    def writing(self, wait: bool | float) -> AbstractContextManager[None]:
        """Hold what a write needs for its duration: the folder's writer lock (``wait`` as in
        :class:`ragkit.store.folder.lock.WriteLock`), or nothing where the backend takes concurrent
        writers (Milvus)."""
        ...

    def commit(self, pending: list[PendingDocument], remove_keys: Iterable[str] = ()) -> int:
        """Replace or insert ``pending`` and delete ``remove_keys``; the new generation."""
        ...

    def rename_documents(self, renames: Mapping[str, tuple[str, str]]) -> int:
        """Give documents new keys and sources (old key → (key, source)), keeping their
        chunks and vectors; how many were renamed."""
        ...

    def ensure_sparse(self) -> object:
        """Make sparse search ready for the committed generation (BM25 of the folder)."""
        ...

    def log_run(self, started: str, summary: dict) -> None:
        """Keep the summary of an ingest or re-analysis."""
        ...


class IndexMaintenance(Protocol):
    """What keeps an index's derived data current: re-analysis (tokenizers, language rules),
    near-duplicate signatures and groups, settings re-derived or an ``auto`` model chosen."""

    def replace_settings(self, settings: Settings) -> None:
        """Store new settings (an ``auto`` model chosen, or analysis settings re-derived)."""
        ...

    def stale_tokenizers(self) -> dict[str, list[str]]:
        """Languages whose stored sparse pieces another tokenizer than today's cut."""
        ...

    def reset_tokenizers(self) -> None:
        """Record today's tokenizers as those that cut every language's pieces."""
        ...

    def reset_language_rules(self) -> None:
        """Record today's language rules as those that decided every document."""
        ...

    def signatures(self) -> dict[str, bytes]:
        """Each document's MinHash signature by key (``b""``: too short to compare;
        :mod:`ragkit.pipeline.near_duplicates`); documents never signed are missing."""
        ...

    def write_near_duplicates(
        self, rows: Mapping[str, tuple[bytes, str | None]], removed: Iterable[str] = ()
    ) -> None:
        """Write signatures and groups (key → (signature, group key or None)) and drop the
        entries of the ``removed`` keys (derived data: no new generation)."""
        ...


class IndexStore(IndexReader, IndexWriter, IndexMaintenance, Protocol):
    """One index, wherever it lives: everything the reader, writer and maintenance protocols
    hold; what a backend implements (:class:`ragkit.store.FolderStore`,
    :class:`ragkit.store.milvus.MilvusStore`)."""
