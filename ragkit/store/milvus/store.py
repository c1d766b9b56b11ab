"""A ragkit index in Milvus: the store interface (:class:`ragkit.store.base.IndexStore`) over
the collections of :mod:`ragkit.store.milvus.collections`.

Writes need no lock: rows have stable ids, so writers at once (several ingest processes, Dask
workers) and a writer run again after a crash upsert the same rows instead of adding copies.
A document becomes visible when its document row is written, after its chunks and text:

0. record the metadata keys and value kinds no document held before (:mod:`.metadata_kinds`,
   which search filters rely on), counting a generation when there were any;
1. upsert the chunk rows and text parts of the new content (``version`` = its content hash);
2. upsert the document row — the commit point: searches keep only chunks whose version is the
   one their document row holds, so a search sees the old content whole or the new content
   whole, never half of either, and never both;
3. delete the rows of the document's other versions.

Removing a document deletes its document row first (its chunks are hidden from then on), then
its chunks and text. A writer killed between steps leaves hidden rows only; the next write of
the document deletes them, and ``ragkit doctor --repair`` deletes any that remain.

Example:
    >>> from ragkit.store.milvus.address import parse_milvus
    >>> address = parse_milvus("milvus-lite:///tmp/ragkit-doctest.db?collection=doctest")
    >>> store = MilvusStore.create(address, Settings(), dimension=4)  # doctest: +SKIP
    >>> store.counts()  # doctest: +SKIP
    {'documents': 0, 'chunks': 0, 'vectors': 0}
"""

from __future__ import annotations

import json
import threading
import uuid
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from pymilvus import MilvusClient

from ragkit.chunking import ChunkingRecord
from ragkit.config import ANALYSIS_SETTINGS, Settings
from ragkit.errors import RagkitError
from ragkit.normalize.detect import RULES_VERSION, LanguageGuess
from ragkit.store import language_rules, tokenizers
from ragkit.store.milvus import collections, lifecycle
from ragkit.store.milvus.address import MilvusAddress
from ragkit.store.milvus.collections import guarded, id_list, names, scan
from ragkit.store.milvus.filtering import DocumentFilter
from ragkit.store.milvus.lifecycle import state_row
from ragkit.store.milvus.metadata_kinds import MetadataKinds
from ragkit.store.milvus.near_duplicates import NearDuplicateRows
from ragkit.store.milvus.rows import (
    CHUNK_FIELDS,
    DOCUMENT_FIELDS,
    document_id,
    document_rows,
    pending_from,
)
from ragkit.store.milvus.search import ChunkSearch
from ragkit.store.milvus.selection import FIELDS, DocumentTable
from ragkit.store.milvus.statistics import TermStatistics
from ragkit.store.records import DocumentEntry, PendingDocument, StoredChunk

__all__ = ["MilvusStore"]

WRITE_BATCH = 256  # rows per upsert call
HIT_CACHE = 100_000  # document rows kept for searches (per generation)
HIT_FIELDS = ["version", "key", "external_id", "source", "title", "language", "metadata"]
WHOLE_SCAN = 1000  # documents whose chunk terms are read by scanning every chunk row


class MilvusStore:
    """One ragkit index in Milvus. Open with :meth:`open` or :meth:`create`."""

    def __init__(self, address: MilvusAddress, client: MilvusClient) -> None:
        self.address = address
        self.location = address.display
        self.client = client
        self.collections = names(address.collection)
        self._lock = threading.RLock()
        state = self.state_values("settings", "dimension", "generation")
        self.settings = Settings.from_index(state["settings"])
        self.dimension = int(state["dimension"])
        self.generation = int(state.get("generation", "0"))
        self._table: tuple[int, DocumentTable] | None = None
        self._kinds: tuple[int, dict[str, set[str]] | None] | None = None
        self._languages: tuple[int, dict[tuple[str, str], int]] | None = None
        self._hits: tuple[int, dict[int, dict[str, Any]]] = (-1, {})
        self._statistics = TermStatistics()
        self._followed = -1  # the generation the statistics follow
        self.search = ChunkSearch(address, client, self._hit_records, self._statistics_now)
        self.near_duplicates = NearDuplicateRows(address, client, self.collections["state"])
        self.metadata_kinds = MetadataKinds(address, client, self.collections["state"])
        self.document_filter = DocumentFilter(address, client)

    # -- opening -----------------------------------------------------------------------------
    @classmethod
    def exists(cls, address: MilvusAddress) -> bool:
        """Whether ``address`` holds a ragkit index (:func:`~.lifecycle.exists`)."""
        return lifecycle.exists(address)

    @classmethod
    def create(cls, address: MilvusAddress, settings: Settings, dimension: int) -> MilvusStore:
        """Create an empty index at ``address`` (:func:`~.lifecycle.create`)."""
        store = cls(address, lifecycle.create(address, settings, dimension))
        store.metadata_kinds.start()
        return store

    @classmethod
    def open(cls, address: MilvusAddress) -> MilvusStore:
        """Open the index at ``address`` (:func:`~.lifecycle.connect_existing`)."""
        return cls(address, lifecycle.connect_existing(address))

    def close(self) -> None:
        with self._lock:
            if self._table is not None:
                self._table[1].close()
                self._table = None
            self.client.close()

    # -- state -------------------------------------------------------------------------------
    def state_values(self, *wanted: str) -> dict[str, str]:
        """The state values named ``wanted`` that are recorded (ragkit's own names only)."""
        expression = f"name in {json.dumps(list(wanted))}"
        rows = guarded(
            self.address,
            "reading the index state",
            self.client.query,
            self.collections["state"],
            filter=expression,
            output_fields=["name", "value"],
        )
        return {row["name"]: row["value"] for row in rows}

    def _put_state(self, values: Mapping[str, str]) -> None:
        rows = [state_row(name, value) for name, value in values.items()]
        guarded(
            self.address,
            "writing the index state",
            self.client.upsert,
            self.collections["state"],
            rows,
        )

    def committed_generation(self) -> int:
        return int(self.state_values("generation").get("generation", "0"))

    def refresh(self) -> None:
        """Follow the last commit of any writer (and the settings it committed with)."""
        state = self.state_values("generation", "settings")
        generation = int(state.get("generation", "0"))
        if generation != self.generation:
            self.generation = generation
            self.settings = Settings.from_index(state["settings"])

    @contextmanager
    def writing(self, wait: bool | float = True) -> Iterator[None]:
        """Nothing to hold: Milvus takes several writers at once (``wait`` has nothing to
        wait for)."""
        del wait
        self.refresh()
        yield

    def replace_settings(self, settings: Settings) -> None:
        """Store new settings for an index without chunks, or ones that differ only in
        ``ANALYSIS_SETTINGS``."""
        old, new = self.settings.model_dump(), settings.model_dump()
        changed = {name for name in new if new[name] != old.get(name)}
        if self.counts()["chunks"] and changed - ANALYSIS_SETTINGS:
            raise RagkitError(f"{self.location}: settings of an index with chunks are fixed")
        self._put_state({"settings": settings.model_dump_json()})
        self.settings = settings

    def stale_tokenizers(self) -> tokenizers.Record:
        recorded = self._tokenizers()
        return tokenizers.stale(recorded, tokenizers.current(recorded, self.settings))

    def _tokenizers(self) -> tokenizers.Record:
        value = self.state_values(tokenizers.STATE_KEY).get(tokenizers.STATE_KEY)
        return {lang: list(prints) for lang, prints in json.loads(value or "{}").items()}

    def reset_tokenizers(self) -> None:
        held = {language for _, language in self.languages()}
        now = tokenizers.current(held, self.settings)
        record = {language: [print_] for language, print_ in now.items()}
        self._put_state({tokenizers.STATE_KEY: json.dumps(record)})

    def reset_language_rules(self) -> None:
        self._put_state({language_rules.STATE_KEY: str(RULES_VERSION)})

    def log_run(self, started: str, summary: dict) -> None:
        text = json.dumps(summary, ensure_ascii=False)
        if len(text.encode()) > collections.VARCHAR_BYTES:  # a long list of skipped files
            skipped = len(summary.get("skipped", []))
            text = json.dumps(summary | {"skipped": f"{skipped} files"}, ensure_ascii=False)
        self._put_state({f"run:{started}:{uuid.uuid4().hex[:8]}": text[:60_000]})

    def ensure_sparse(self) -> None:
        """Flush the chunk and document rows written since the last flush (once per ingest,
        as the folder store rebuilds BM25 once): Milvus seals them into segments and builds
        their HNSW and inverted indexes, so searches stop scanning unsealed rows one by one.
        Rows are searchable before the flush too (``Strong`` consistency)."""
        for kind in ("chunks", "documents"):
            guarded(self.address, f"flushing {kind}", self.client.flush, self.collections[kind])

    # -- reading documents -------------------------------------------------------------------
    def _documents(self, fields: list[str]) -> Iterator[dict[str, Any]]:
        """Every document row (``id`` and ``fields``)."""
        return scan(self.address, self.client, self.collections["documents"], fields)

    def _table_now(self) -> DocumentTable:
        """Every document row (for ``ls`` and ``rm`` patterns), read once per generation."""
        self.refresh()
        with self._lock:
            if self._table is None or self._table[0] != self.generation:
                table = DocumentTable(self._documents(FIELDS))
                if self._table is not None:
                    self._table[1].close()
                self._table = (self.generation, table)
            return self._table[1]

    def _statistics_now(self) -> TermStatistics:
        """The BM25 statistics of the chunks visible at the last commit (:mod:`.statistics`:
        only documents changed since the generation they last followed are read)."""
        self.refresh()
        with self._lock:
            if self._followed != self.generation:
                generation = self.generation
                visible = {int(r["id"]): int(r["version"]) for r in self._documents(["version"])}
                self._statistics.follow(visible, self._chunk_terms)
                self._followed = generation
            return self._statistics

    def _chunk_terms(self, wanted: list[tuple[int, int]]) -> Iterator[tuple[int, int, str]]:
        """``(document id, version, terms)`` of the chunks of the ``wanted`` documents (every
        chunk row scanned once when there are many)."""
        fields = ["document_id", "version", "terms"]
        batches = [""] if len(wanted) > WHOLE_SCAN else [
            f"document_id in {id_list(doc for doc, _ in wanted[i : i + WRITE_BATCH])}"
            for i in range(0, len(wanted), WRITE_BATCH)
        ]  # fmt: skip
        for expression in batches:
            for row in scan(
                self.address, self.client, self.collections["chunks"], fields, expression
            ):
                yield int(row["document_id"]), int(row["version"]), row["terms"]

    def document_hashes(self) -> dict[str, str]:
        return {row["key"]: row["content_hash"] for row in self._documents(["key", "content_hash"])}

    def document_sources(self) -> dict[str, str]:
        return {row["key"]: row["source"] for row in self._documents(["key", "source"])}

    def document_texts(self) -> Iterator[str]:
        for row in self._documents(["version"]):
            parts = self._rows("texts", ["part", "text"], row["id"], row["version"])
            yield "".join(p["text"] for p in sorted(parts, key=lambda part: part["part"]))

    def _rows(self, kind: str, fields: list[str], doc: int, version: int) -> list[dict]:
        expression = f"document_id == {int(doc)} and version == {int(version)}"
        return list(scan(self.address, self.client, self.collections[kind], fields, expression))

    def _records(self, ids: Iterable[int], fields: Sequence[str]) -> dict[int, dict[str, Any]]:
        wanted = list(dict.fromkeys(int(i) for i in ids))
        if not wanted:
            return {}
        rows = guarded(
            self.address,
            "reading documents",
            self.client.get,
            self.collections["documents"],
            ids=wanted,
            output_fields=list(fields),
        )
        return {int(row["id"]): row for row in rows}

    def _hit_records(self, ids: Iterable[int]) -> dict[int, dict[str, Any]]:
        """The document rows searches need (:data:`HIT_FIELDS`), kept for the generation
        this store last followed: while no writer commits, a document is read once, and
        every commit (each bumps the generation after its document rows) starts afresh."""
        wanted = {int(i) for i in ids}
        with self._lock:
            if self._hits[0] != self.generation or len(self._hits[1]) > HIT_CACHE:
                self._hits = (self.generation, {})
            cached = self._hits[1]
            found = {i: cached[i] for i in wanted if i in cached}
        missing = wanted - found.keys()
        if missing:
            fetched = self._records(missing, HIT_FIELDS)
            found |= fetched
            with self._lock:
                if self._hits[0] == self.generation:
                    self._hits[1].update(fetched)
        return found

    def _record(self, key: str, fields: Sequence[str]) -> dict[str, Any] | None:
        row = self._records([document_id(key)], ["key", *fields]).get(document_id(key))
        return row if row is not None and row["key"] == key else None

    def languages(self) -> dict[tuple[str, str], int]:
        """Characters per ``(script, language)``, read once per generation (every search
        routes its query by them)."""
        self.refresh()
        with self._lock:
            if self._languages is None or self._languages[0] != self.generation:
                held: Counter[tuple[str, str]] = Counter()
                for row in self._documents(["script", "language", "characters"]):
                    held[(row["script"], row["language"])] += int(row["characters"])
                ordered = dict(sorted(held.items(), key=lambda item: (-item[1], item[0][1])))
                self._languages = (self.generation, ordered)
            return self._languages[1]

    def counts(self) -> dict[str, int]:
        documents = self._count("documents")
        chunks = self._count("chunks")
        return {"documents": documents, "chunks": chunks, "vectors": chunks}

    def _count(self, kind: str) -> int:
        rows = guarded(
            self.address,
            "counting",
            self.client.query,
            self.collections[kind],
            filter="",
            output_fields=["count(*)"],
        )
        return int(rows[0]["count(*)"])

    def chunker_counts(self) -> dict[str, int]:
        chosen = Counter(
            json.loads(row["chunking"] or "{}").get("chosen") or "unrecorded"
            for row in self._documents(["chunking"])
        )
        return dict(sorted(chosen.items(), key=lambda item: (-item[1], item[0])))

    def chunking(self, key: str) -> ChunkingRecord | None:
        row = self._record(key, ["chunking"])
        return None if row is None else ChunkingRecord.from_dict(json.loads(row["chunking"]))

    def language_decision(self, key: str) -> LanguageGuess | None:
        fields = ["language", "script", "language_confidence", "language_method"]
        row = self._record(key, fields)
        if row is None:
            return None
        confidence = float(row["language_confidence"])
        return LanguageGuess(
            row["language"], row["script"], confidence, row["language_method"] or "default"
        )

    def list_documents(
        self, pattern: str | None = None, filters: Mapping[str, Any] | None = None
    ) -> list[DocumentEntry]:
        """The documents whose key or source matches ``pattern`` (all when None) and that
        match ``filters`` (a Milvus expression, each candidate checked exactly:
        :meth:`.filtering.DocumentFilter.matching`), by key."""
        if not filters:
            return self._table_now().entries(pattern)
        ids = self.document_filter.matching(dict(filters), self._kinds_now()).tolist()
        rows = [
            row
            for start in range(0, len(ids), WRITE_BATCH)
            for row in self._records(ids[start : start + WRITE_BATCH], FIELDS).values()
        ]
        table = DocumentTable(rows)  # only the matching rows, for the pattern and the order
        try:
            return table.entries(pattern)
        finally:
            table.close()

    def texts_of(self, keys: Sequence[str]) -> dict[str, str]:
        """The original texts of the documents ``keys``: their document rows (for the
        version) then their text parts, :data:`WRITE_BATCH` documents a query."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, str] = {}
        for start in range(0, len(wanted), WRITE_BATCH):
            batch = {document_id(key): key for key in wanted[start : start + WRITE_BATCH]}
            rows = self._records(batch, ["key", "version"])
            held = {
                doc: int(row["version"]) for doc, row in rows.items() if row["key"] == batch[doc]
            }
            if not held:
                continue
            parts: dict[int, list[dict[str, Any]]] = {doc: [] for doc in held}
            fields = ["document_id", "version", "part", "text"]
            expression = f"document_id in {id_list(held)}"
            for part in scan(
                self.address, self.client, self.collections["texts"], fields, expression
            ):
                doc = int(part["document_id"])
                if held.get(doc) == int(part["version"]):
                    parts[doc].append(part)
            for doc, pieces in parts.items():
                pieces.sort(key=lambda part: part["part"])
                found[batch[doc]] = "".join(part["text"] for part in pieces)
        return found

    def stored_documents(self, keys: Iterable[str]) -> list[PendingDocument]:
        found = []
        for key in keys:
            record = self._record(key, DOCUMENT_FIELDS)
            if record is None:
                continue
            doc, version = record["id"], record["version"]
            chunks = self._rows("chunks", [*CHUNK_FIELDS, "vector"], doc, version)
            texts = self._rows("texts", ["part", "text"], doc, version)
            found.append(pending_from(record, chunks, texts, self.dimension))
        return found

    def signatures(self) -> dict[str, bytes]:
        """Each document's MinHash signature by key (:mod:`.near_duplicates`: state rows)."""
        return self.near_duplicates.signatures()

    def near_duplicate_groups(self, keys: Iterable[str] | None = None) -> dict[str, str]:
        return self.near_duplicates.groups(keys)

    def write_near_duplicates(
        self, rows: Mapping[str, tuple[bytes, str | None]], removed: Iterable[str] = ()
    ) -> None:
        self.near_duplicates.write(rows, removed)

    def chunk_records(self, vectors: bool = False) -> Iterator[dict[str, Any]]:
        fields = [*CHUNK_FIELDS, *(["vector"] if vectors else [])]
        records = sorted(self._documents(DOCUMENT_FIELDS), key=lambda row: row["key"])
        for record in records:
            chunks = self._rows("chunks", fields, record["id"], record["version"])
            for chunk in sorted(chunks, key=lambda row: (row["start"], row["position"])):
                yield {
                    "chunk_id": int(chunk["id"]),
                    "document": record["key"],
                    "source": record["source"],
                    "external_id": record["external_id"],
                    "title": record["title"],
                    "language": record["language"],
                    "script": record["script"],
                    "start": chunk["start"],
                    "end": chunk["end"],
                    "token_count": chunk["token_count"],
                    "chunker": chunk["chunker"],
                    "text": chunk["text"],
                    "metadata": dict(record["metadata"] or {}),
                    **({"vector": [float(x) for x in chunk["vector"]]} if vectors else {}),
                }

    # -- searching ---------------------------------------------------------------------------
    def filtered_chunk_ids(self, filters: dict[str, Any]) -> np.ndarray:
        """The ids of the documents matching ``filters`` (what the searches take as
        ``allowed``): a Milvus expression, each candidate checked exactly
        (:mod:`.filtering`)."""
        return self.document_filter.ids(filters, self._kinds_now())

    def _kinds_now(self) -> dict[str, set[str]] | None:
        """The record of metadata keys and kinds (:mod:`.metadata_kinds`), read once per
        generation (a commit that records a new one counts a generation first)."""
        self.refresh()
        with self._lock:
            if self._kinds is None or self._kinds[0] != self.generation:
                self._kinds = (self.generation, self.metadata_kinds.read())
            return self._kinds[1]

    def search_vectors(
        self, query: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        return self.search.vectors(query, k, allowed)

    def search_terms(
        self,
        terms: list[str],
        k: int,
        allowed: np.ndarray | None = None,
        include: Collection[int] = (),
    ) -> list[tuple[int, float]]:
        return self.search.terms(terms, k, allowed, include)

    def score_vectors(self, query: np.ndarray, ids: list[int]) -> list[tuple[int, float]]:
        return self.search.score_vectors(query, ids)

    def term_idf(self, terms: list[str]) -> list[float]:
        return self._statistics_now().idf(terms)

    def chunks_by_id(self, ids: Iterable[int]) -> dict[int, StoredChunk]:
        return self.search.chunks(ids)

    def vectors_by_id(self, ids: list[int]) -> dict[int, np.ndarray]:
        return self.search.stored(ids, "vector", lambda v: np.asarray(v, dtype=np.float32))

    def terms_by_id(self, ids: list[int]) -> dict[int, list[str]]:
        return self.search.stored(ids, "terms", lambda terms: str(terms).split())

    # -- writing -----------------------------------------------------------------------------
    def commit(self, pending: list[PendingDocument], remove_keys: Iterable[str] = ()) -> int:
        """Write ``pending`` documents and remove ``remove_keys`` (each document atomically,
        see the module's commit order); returns the new generation."""
        replaced = {item.document.key for item in pending}
        removing = [key for key in dict.fromkeys(remove_keys) if key not in replaced]
        self._remove([document_id(key) for key in removing])
        rows, refused = [], []
        for item in pending:
            try:
                rows.append(document_rows(item))
            except RagkitError as error:  # too long for Milvus: the rest of the batch goes on
                refused.append(str(error))
        if rows and self._record_kinds([each.document["metadata"] for each in rows]):
            self._advance()  # readers re-read the record before a document of a new kind shows
        self._upsert("chunks", [chunk for each in rows for chunk in each.chunks])
        self._upsert("texts", [text for each in rows for text in each.texts])
        self._upsert("documents", [each.document for each in rows])
        if rows:
            stale = " or ".join(
                f"(document_id == {each.document['id']} and version != {each.document['version']})"
                for each in rows
            )
            for kind in ("chunks", "texts"):
                self.delete_rows(kind, stale)
            self._record_commit({item.document.language for item in pending})
        generation = self._advance()
        if refused:
            raise RagkitError(
                f"{self.location}: not stored: {'; '.join(refused)} (the other {len(rows)} "
                "documents of the batch were committed)"
            )
        return generation

    def _record_kinds(self, metadata: list[dict[str, Any]]) -> bool:
        """Record the keys and kinds of ``metadata`` (:mod:`.metadata_kinds`); whether any
        was new."""
        return self.metadata_kinds.record(
            metadata, lambda: (row["metadata"] for row in self._documents(["metadata"]))
        )

    def _remove(self, ids: list[int]) -> None:
        """Delete documents: their rows first (hiding their chunks), then chunks and text."""
        for start in range(0, len(ids), WRITE_BATCH):
            expression = f"document_id in {id_list(ids[start : start + WRITE_BATCH])}"
            self.delete_rows("documents", f"id in {id_list(ids[start : start + WRITE_BATCH])}")
            self.delete_rows("chunks", expression)
            self.delete_rows("texts", expression)

    def _upsert(self, kind: str, rows: list[dict[str, Any]]) -> None:
        for start in range(0, len(rows), WRITE_BATCH):
            batch = rows[start : start + WRITE_BATCH]
            guarded(
                self.address, f"writing {kind}", self.client.upsert, self.collections[kind], batch
            )

    def delete_rows(self, kind: str, expression: str) -> None:
        guarded(
            self.address,
            f"deleting {kind}",
            self.client.delete,
            self.collections[kind],
            filter=expression,
        )

    def _record_commit(self, languages: set[str]) -> None:
        """Record the tokenizers that cut this commit's pieces and the language rules that
        decided its documents."""
        state = self.state_values(tokenizers.STATE_KEY, language_rules.STATE_KEY)
        recorded = json.loads(state.get(tokenizers.STATE_KEY, "{}"))
        used = tokenizers.current(languages, self.settings)
        rules = state.get(language_rules.STATE_KEY)
        self._put_state(
            {
                tokenizers.STATE_KEY: json.dumps(tokenizers.merged(recorded, used)),
                language_rules.STATE_KEY: str(
                    language_rules.after_commit(None if rules is None else int(rules), False)
                ),
            }
        )

    def _advance(self) -> int:
        """Count one more generation (readers use it to notice commits)."""
        generation = self.committed_generation() + 1
        self._put_state({"generation": str(generation)})
        self.generation = generation
        return generation

    def rename_documents(self, renames: Mapping[str, tuple[str, str]]) -> int:
        """Move documents to new keys and sources, keeping their chunks and vectors (the rows
        are written again under the new key's ids; nothing is embedded again)."""
        moved = []
        for item in self.stored_documents(list(renames)):
            key, source = renames[item.document.key]
            item.document.key, item.document.source = key, source
            moved.append(item)
        if moved:
            self.commit(moved, remove_keys=list(renames))
        return len(moved)
