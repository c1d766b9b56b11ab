"""A ragkit index in Milvus: the store interface (:class:`ragkit.store.base.IndexStore`) over
the collections of :mod:`ragkit.store.milvus.collections`.

Writes need no lock: rows have stable ids, so writers at once (several ingest processes, Dask
workers) and a writer run again after a crash upsert the same rows instead of adding copies.
A document becomes visible when its document row is written, after its chunks and text:

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
import logging
import threading
import time
import uuid
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from pymilvus import MilvusClient, MilvusException

from ragkit.chunking import ChunkingRecord
from ragkit.config import ANALYSIS_SETTINGS, Settings
from ragkit.errors import RagkitError
from ragkit.normalize.detect import RULES_VERSION, LanguageGuess
from ragkit.store import language_rules, tokenizers
from ragkit.store.milvus import collections
from ragkit.store.milvus.address import MilvusAddress
from ragkit.store.milvus.collections import SCHEMA_VERSION, guarded, id_list, names, scan
from ragkit.store.milvus.rows import (
    CHUNK_FIELDS,
    DOCUMENT_FIELDS,
    document_id,
    document_rows,
    pending_from,
    stored_chunk,
)
from ragkit.store.milvus.selection import FIELDS, DocumentTable
from ragkit.store.milvus.terms import spelled_query
from ragkit.store.records import DocumentEntry, PendingDocument, StoredChunk
from ragkit.store.store import IndexExistsError

__all__ = ["MilvusStore"]

log = logging.getLogger(__name__)

WRITE_BATCH = 256  # rows per upsert call
EF_SEARCH = 128  # HNSW candidates per search at least (more when more hits are asked for)
MAX_LIMIT = 16_384  # Milvus's largest top-k
HIT_CACHE = 100_000  # document rows kept for searches (per generation)
HIT_FIELDS = ["version", "key", "external_id", "source", "title", "language", "metadata"]
CREATION_WAIT = 30.0  # seconds an open waits for an index another process is creating


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
        self._languages: tuple[int, dict[tuple[str, str], int]] | None = None
        self._hits: tuple[int, dict[int, dict[str, Any]]] = (-1, {})

    # -- opening -----------------------------------------------------------------------------
    @classmethod
    def exists(cls, address: MilvusAddress) -> bool:
        """Whether ``address`` holds a ragkit index: its state collection holds its settings
        (written last by :meth:`create`)."""
        if address.embedded and not Path(address.uri).exists():
            return False  # connecting would create the file
        client = collections.connect(address)
        try:
            return _created(address, client) is True
        finally:
            client.close()

    @classmethod
    def create(cls, address: MilvusAddress, settings: Settings, dimension: int) -> MilvusStore:
        """Create an empty index at ``address``; :class:`ragkit.store.IndexExistsError` when
        one is there, or another process is creating it. The settings, which make the index
        exist, are written last."""
        if address.embedded:
            Path(address.uri).parent.mkdir(parents=True, exist_ok=True)
        client = collections.connect(address)
        known = names(address.collection)
        try:
            if any(client.has_collection(name) for name in known.values()):
                raise IndexExistsError(f"{address.display}: already holds a ragkit index")
            collections.create(client, address.collection, dimension, settings)
            collections.create_state(client, address.collection)
        except MilvusException as error:
            client.close()
            if client_has(address, known["state"]):  # another process won the race
                raise IndexExistsError(f"{address.display}: created meanwhile") from error
            raise collections.failed(address, "creating the index", error) from error
        except IndexExistsError:
            client.close()
            raise
        rows = {
            "settings": settings.model_dump_json(),
            "dimension": str(dimension),
            "schema": str(SCHEMA_VERSION),
            "generation": "0",
        }
        store_rows = [_state_row(name, value) for name, value in rows.items()]
        guarded(address, "creating the index", client.upsert, known["state"], store_rows)
        return cls(address, client)

    @classmethod
    def open(cls, address: MilvusAddress) -> MilvusStore:
        """Open the index at ``address``: a missing index, or one an older ragkit wrote in
        another schema, is a :class:`RagkitError` saying what to do. An index another
        process is creating is waited for (up to :data:`CREATION_WAIT` seconds)."""
        absent = RagkitError(
            f"{address.display}: no ragkit index here; create one with "
            f"`ragkit ingest PATH --index {address.display}`"
        )
        if address.embedded and not Path(address.uri).exists():
            raise absent
        client = collections.connect(address)
        deadline = time.monotonic() + CREATION_WAIT
        while (created := _created(address, client)) is None and time.monotonic() < deadline:
            time.sleep(0.2)
        if created is not True:
            client.close()
            if created is False:
                raise absent
            listed = ", ".join(names(address.collection).values())
            raise RagkitError(
                f"{address.display}: the index was never finished (its creator stopped before "
                f"writing its settings); drop the collections {listed} and ingest again"
            )
        known = names(address.collection)
        missing = [name for name in known.values() if not client.has_collection(name)]
        for name in set(known.values()) - set(missing):
            loaded(address, client, name)
        store = cls(address, client)
        schema = int(store.state_values("schema").get("schema", "0"))
        if schema != SCHEMA_VERSION or missing:
            store.close()
            if missing:
                raise RagkitError(
                    f"{address.display}: collection {', '.join(missing)} missing; the index is "
                    "damaged: drop its collections and ingest again"
                )
            raise RagkitError(
                f"{address.display}: written by a ragkit with Milvus schema {schema}, this one "
                f"reads schema {SCHEMA_VERSION}; export it with that version "
                "(`ragkit export --vectors`) and ingest again into a new collection"
            )
        return store

    def close(self) -> None:
        with self._lock:
            if self._table is not None:
                self._table[1].close()
                self._table = None
            self.client.close()

    # -- state -------------------------------------------------------------------------------
    def state_values(self, *wanted: str) -> dict[str, str]:
        """State values (all when none are named)."""
        expression = f"name in {json.dumps(list(wanted))}" if wanted else 'name != ""'
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
        rows = [_state_row(name, value) for name, value in values.items()]
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
    def _documents(self, fields: list[str], expression: str = "") -> Iterator[dict[str, Any]]:
        return scan(self.client, self.collections["documents"], fields, expression)

    def _table_now(self) -> DocumentTable:
        """Every document row (for filters and globs), read once per generation."""
        self.refresh()
        with self._lock:
            if self._table is None or self._table[0] != self.generation:
                table = DocumentTable(self._documents(FIELDS))
                if self._table is not None:
                    self._table[1].close()
                self._table = (self.generation, table)
            return self._table[1]

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
        return list(scan(self.client, self.collections[kind], fields, expression))

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

    def list_documents(self, pattern: str | None = None) -> list[DocumentEntry]:
        return self._table_now().entries(pattern)

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
        """The ids of the documents matching every filter (what the searches take as
        ``allowed``)."""
        return self._table_now().ids(filters)

    def _visible(self, hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``hits`` (with ``document_id`` and ``version``) whose document row holds their
        version: committed content only."""
        versions = self._hit_records(h["entity"]["document_id"] for h in hits)
        return [
            hit
            for hit in hits
            if (row := versions.get(int(hit["entity"]["document_id"]))) is not None
            and row["version"] == hit["entity"]["version"]
        ]

    def _search(
        self, data: Any, field: str, k: int, allowed: np.ndarray | None, params: dict
    ) -> list[tuple[int, float]]:
        """The ``k`` best visible chunks for ``data`` on ``field`` (fetching more while
        hidden rows of unfinished writes took places)."""
        if allowed is not None and not len(allowed):
            return []
        expression = f"document_id in {id_list(allowed)}" if allowed is not None else ""
        limit = k
        while True:
            found = guarded(
                self.address,
                "searching",
                self.client.search,
                self.collections["chunks"],
                data=[data],
                anns_field=field,
                limit=limit,
                filter=expression,
                output_fields=["document_id", "version"],
                search_params=params,
            )[0]
            hits = self._visible(list(found))
            if len(hits) >= k or len(found) < limit or limit >= MAX_LIMIT:
                return [(int(hit["id"]), _score(hit, field)) for hit in hits[:k]]
            limit = min(limit * 2, MAX_LIMIT)

    def search_vectors(
        self, query: np.ndarray, k: int, allowed: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        params = {"metric_type": "IP", "params": {"ef": max(EF_SEARCH, k)}}
        vector = np.asarray(query, dtype=np.float32).tolist()
        return self._search(vector, "vector", k, allowed, params)

    def search_terms(
        self,
        terms: list[str],
        k: int,
        allowed: np.ndarray | None = None,
        include: Collection[int] = (),
    ) -> list[tuple[int, float]]:
        if not terms:
            return []
        text = spelled_query(terms)
        params = {"metric_type": "BM25"}
        scored = self._search(text, "sparse", k, allowed, params)
        extra = [i for i in dict.fromkeys(include) if i not in {c for c, _ in scored}]
        if extra:
            known = {chunk: score for chunk, score in self._score_terms(text, extra, allowed)}
            scored += [(chunk, known.get(chunk, 0.0)) for chunk in extra]
        return sorted(scored, key=lambda pair: -pair[1])

    def _score_terms(
        self, text: str, ids: list[int], allowed: np.ndarray | None
    ) -> list[tuple[int, float]]:
        """BM25 scores of the chunks ``ids`` (those matching no term are left out)."""
        where = f"id in {id_list(ids)}"
        if allowed is not None:
            where += f" and document_id in {id_list(allowed)}"
        found = guarded(
            self.address,
            "searching",
            self.client.search,
            self.collections["chunks"],
            data=[text],
            anns_field="sparse",
            limit=len(ids),
            filter=where,
            output_fields=["id"],
            search_params={"metric_type": "BM25"},
        )[0]
        return [(int(hit["id"]), _score(hit, "sparse")) for hit in found]

    def _chunk_rows(self, ids: list[int], fields: list[str]) -> list[dict[str, Any]]:
        if not ids:
            return []
        return list(
            guarded(
                self.address,
                "reading chunks",
                self.client.get,
                self.collections["chunks"],
                ids=ids,
                output_fields=fields,
            )
        )

    def score_vectors(self, query: np.ndarray, ids: list[int]) -> list[tuple[int, float]]:
        rows = {int(r["id"]): r["vector"] for r in self._chunk_rows(list(ids), ["vector"])}
        vector = np.asarray(query, dtype=np.float32)
        return [(i, float(np.asarray(rows[i], np.float32) @ vector)) for i in ids if i in rows]

    def chunks_by_id(self, ids: Iterable[int]) -> dict[int, StoredChunk]:
        fields = ["document_id", "version", "text", "start", "end"]
        chunks = self._chunk_rows(list(ids), fields)
        records = self._hit_records(c["document_id"] for c in chunks)
        return {
            int(chunk["id"]): stored_chunk(chunk, record)
            for chunk in chunks
            if (record := records.get(int(chunk["document_id"]))) is not None
            and record["version"] == chunk["version"]
        }

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


def _created(address: MilvusAddress, client: MilvusClient) -> bool | None:
    """True when the index at ``address`` exists, False when none of its collections do,
    None while it is being created (some collections, no settings yet)."""
    known = names(address.collection)
    if guarded(address, "looking for the index", client.has_collection, known["state"]):
        loaded(address, client, known["state"])
        settings = guarded(
            address,
            "reading the index state",
            client.query,
            known["state"],
            filter='name == "settings"',
            output_fields=["name"],
        )
        if settings:
            return True
    present = guarded(address, "looking for the index", client.list_collections)
    return None if set(known.values()) & set(present) else False


def loaded(address: MilvusAddress, client: MilvusClient, collection: str) -> None:
    """Load ``collection`` into memory unless it is (a restarted Milvus, or one whose
    collections were released, answers nothing until they are)."""
    state = guarded(address, "loading", client.get_load_state, collection)
    if "Loaded" not in str(state.get("state")):
        guarded(address, f"loading {collection}", client.load_collection, collection)


def client_has(address: MilvusAddress, collection: str) -> bool:
    """Whether ``collection`` exists, asked on a new connection."""
    client = collections.connect(address)
    try:
        return bool(client.has_collection(collection))
    finally:
        client.close()


def _score(hit: Mapping[str, Any], field: str) -> float:
    """A hit's score as the folder store gives it: the inner product, or the BM25 score
    (a negative distance from Milvus Lite, positive from Milvus) without Milvus's k1 + 1."""
    distance = float(hit["distance"])
    return distance if field == "vector" else abs(distance) / collections.BM25_SCALE


def _state_row(name: str, value: str) -> dict[str, Any]:
    return {"name": name, "value": value, "placeholder": collections.PLACEHOLDER}
