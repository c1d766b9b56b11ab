"""Searches of a Milvus index's chunks that return committed chunks only, scored as the
folder store scores them.

A chunk is visible while its ``version`` is the one its document row holds
(:mod:`ragkit.store.milvus.store`); hidden rows of unfinished writes can take places in
Milvus's top k, so a search asks for more until ``k`` visible chunks are found (or none are
left). Dense scores: inner products as Milvus returns them. Sparse scores: Milvus's BM25 finds
the candidates — every chunk holding a query term when at most :data:`CANDIDATES` (or ``4k``)
do, else its best that many — and ragkit scores them with the statistics of the visible chunks
(:mod:`ragkit.store.milvus.statistics`), since Milvus's own still count deleted rows.

Example:
    >>> score({"distance": -6.25}, "sparse"), score({"distance": 0.5}, "vector")
    (2.5, 0.5)
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, TypeVar

import numpy as np
from pymilvus import MilvusClient

from ragkit.store.milvus.address import MilvusAddress
from ragkit.store.milvus.collections import BM25_SCALE, guarded, id_list, names
from ragkit.store.milvus.rows import stored_chunk
from ragkit.store.milvus.statistics import TermStatistics
from ragkit.store.milvus.terms import spelled_query
from ragkit.store.records import StoredChunk

__all__ = ["ChunkSearch", "score"]

EF_SEARCH = 128  # HNSW candidates per search at least (more when more hits are asked for)
MAX_LIMIT = 16_384  # Milvus's largest top-k
CANDIDATES = 200  # sparse candidates scored at least (all of them when fewer match)

T = TypeVar("T")
Records = Callable[[Iterable[int]], dict[int, dict[str, Any]]]
"""Document rows by id (with ``version`` and what a hit shows of its document)."""
Statistics = Callable[[], TermStatistics]
"""The BM25 statistics of the visible chunks (followed to the current generation)."""


def score(hit: Mapping[str, Any], field: str) -> float:
    """A hit's score as the folder store gives it."""
    distance = float(hit["distance"])
    return distance if field == "vector" else abs(distance) / BM25_SCALE


class ChunkSearch:
    """Dense and sparse searches, scoring and row reads over one index's chunk collection;
    ``records`` reads document rows and ``statistics`` gives the BM25 statistics (the store
    keeps both per generation)."""

    def __init__(
        self,
        address: MilvusAddress,
        client: MilvusClient,
        records: Records,
        statistics: Statistics,
    ) -> None:
        self.address = address
        self.client = client
        self.chunks_collection = names(address.collection)["chunks"]
        self.records = records
        self.statistics = statistics

    def vectors(
        self, query: np.ndarray, k: int, allowed: np.ndarray | None
    ) -> list[tuple[int, float]]:
        """Chunk ids and inner products of the ``k`` nearest vectors (HNSW)."""
        params = {"metric_type": "IP", "params": {"ef": max(EF_SEARCH, k)}}
        vector = np.asarray(query, dtype=np.float32).tolist()
        return self._nearest(vector, "vector", k, allowed, params)

    def terms(
        self, terms: list[str], k: int, allowed: np.ndarray | None, include: Collection[int]
    ) -> list[tuple[int, float]]:
        """Chunk ids and BM25 scores of the ``k`` best matches of ragkit's ``terms``, plus the
        scores (0 where no term matches) of the ``include`` ids, best first — the scores the
        folder store gives, from the statistics of the visible chunks."""
        if not terms:
            return []
        stats = self.statistics()
        limit = min(stats.matching(terms), max(CANDIDATES, 4 * k), MAX_LIMIT)
        found = self._nearest(spelled_query(terms), "sparse", limit, allowed,
                              {"metric_type": "BM25"}) if limit else []  # fmt: skip
        candidates = [chunk for chunk, _ in found]
        extra = [i for i in dict.fromkeys(include) if i not in set(candidates)]
        rows = {int(r["id"]): r for r in self._rows(candidates + extra, ["document_id", "terms"])}
        kept = None if allowed is None else {int(i) for i in allowed}
        scored = [(c, stats.score(terms, rows[c]["terms"])) for c in candidates if c in rows]
        best = sorted((pair for pair in scored if pair[1] > 0), key=lambda pair: -pair[1])[:k]
        best += [
            (chunk, stats.score(terms, row["terms"]))
            for chunk in extra
            if (row := rows.get(chunk)) is not None
            and (kept is None or int(row["document_id"]) in kept)
        ]
        return sorted(best, key=lambda pair: -pair[1])

    def score_vectors(self, query: np.ndarray, ids: list[int]) -> list[tuple[int, float]]:
        """Exact inner products of ``query`` with the stored vectors of ``ids``."""
        rows = {int(r["id"]): r["vector"] for r in self._rows(list(ids), ["vector"])}
        vector = np.asarray(query, dtype=np.float32)
        return [(i, float(np.asarray(rows[i], np.float32) @ vector)) for i in ids if i in rows]

    def stored(self, ids: list[int], field: str, convert: Callable[[Any], T]) -> dict[int, T]:
        """One stored field (``vector``, ``terms``) of the chunks ``ids``, converted."""
        return {int(row["id"]): convert(row[field]) for row in self._rows(list(ids), [field])}

    def chunks(self, ids: Iterable[int]) -> dict[int, StoredChunk]:
        """The visible chunks among ``ids``, with their documents."""
        rows = self._rows(list(ids), ["document_id", "version", "text", "start", "end"])
        records = self.records(row["document_id"] for row in rows)
        return {
            int(row["id"]): stored_chunk(row, record)
            for row in rows
            if (record := records.get(int(row["document_id"]))) is not None
            and record["version"] == row["version"]
        }

    def _visible(self, hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``hits`` whose document row holds their version: committed content only."""
        versions = self.records(h["entity"]["document_id"] for h in hits)
        return [
            hit
            for hit in hits
            if (row := versions.get(int(hit["entity"]["document_id"]))) is not None
            and row["version"] == hit["entity"]["version"]
        ]

    def _nearest(
        self, data: Any, field: str, k: int, allowed: np.ndarray | None, params: dict
    ) -> list[tuple[int, float]]:
        """The ``k`` best visible chunks for ``data`` on ``field``."""
        if allowed is not None and not len(allowed):
            return []
        expression = f"document_id in {id_list(allowed)}" if allowed is not None else ""
        limit = k
        while True:
            found = guarded(self.address, "searching", self.client.search,
                            self.chunks_collection, data=[data], anns_field=field, limit=limit,
                            filter=expression, output_fields=["document_id", "version"],
                            search_params=params)[0]  # fmt: skip
            hits = self._visible(list(found))
            if len(hits) >= k or len(found) < limit or limit >= MAX_LIMIT:
                return [(int(hit["id"]), score(hit, field)) for hit in hits[:k]]
            limit = min(limit * 2, MAX_LIMIT)

    def _rows(self, ids: list[int], fields: list[str]) -> list[dict[str, Any]]:
        if not ids:
            return []
        return list(guarded(self.address, "reading chunks", self.client.get,
                            self.chunks_collection, ids=ids, output_fields=fields))  # fmt: skip
