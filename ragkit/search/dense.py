"""The dense index: FAISS by size — Flat (exact), HNSW, or IVF-PQ with exact re-scoring.

=========  =====================================  ==========================================
chunks     index                                  why
=========  =====================================  ==========================================
< 50k      ``IndexFlatIP`` (exact)                a scan of 50k × 384 floats takes ~5 ms
≥ 50k      ``IndexHNSWFlat`` (M, efSearch)        sub-linear search (recall by efSearch:
                                                  ``benchmarks/search.py``)
≥ 2M       ``IVF{nlist},PQ{m}`` + exact re-score  PQ codes are 48 bytes, not 1.5 kB, per
                                                  vector; PQ alone ranks poorly, so the
                                                  top ``k × rescore_factor`` are re-scored
                                                  with the exact vectors stored in SQLite
=========  =====================================  ==========================================

Thresholds and parameters are :class:`ragkit.config.Settings` fields (``hnsw_threshold``,
``hnsw_m``, ``hnsw_ef_search``, ``ivf_threshold``, ``ivf_nprobe``, ``ivf_pq_m``,
``rescore_factor``). Every index is wrapped in ``IndexIDMap2`` so FAISS ids are chunk ids.

A generation's vectors are :class:`DenseVectors`: the main index above plus a *tail*, the vectors
added by the commits since the main index was written, kept in an exact flat index and searched
beside it. A commit that only adds appends to the tail (:func:`advance`) — it costs its own
vectors, not the collection, neither a copy of the main index nor its insertion into an HNSW
graph — while the tail stays under ``dense_tail_fraction`` of the main index and
``dense_tail_max`` vectors. Past that, or when chunks leave, the commit carries the main index
forward (:func:`carry`): tail and new vectors are added to a copy, removed chunks taken out, and
the tail starts empty; the main index grows by a fraction each time, so its copies cost a
constant amount per added vector. A rebuild from SQLite
happens only when the size calls for another kind, or when chunks leave an HNSW graph, which
FAISS cannot remove from (a commit that replaces or prunes documents of an HNSW index rebuilds
it, unless they all were in the tail; adding documents does not). An IVF index keeps the lists it was trained with until the kind
changes. :func:`mismatch` compares an index with the vectors SQLite holds, so damage in a FAISS
file is found rather than carried into the next generation.

Example:
    >>> from ragkit.config import Settings
    >>> dense_kind(10_000, Settings()), dense_kind(60_000, Settings())
    ('flat', 'hnsw')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import faiss
import numpy as np

from ragkit.config import Settings

DenseKind = Literal["flat", "hnsw", "ivf"]
VectorBatches = Callable[[], Iterator[tuple[np.ndarray, np.ndarray]]]
VectorFetcher = Callable[[list[int]], dict[int, np.ndarray]]
ChunkIds = Sequence[int] | np.ndarray  # chunk ids, as a list or an int64 array
_TRAIN_SAMPLE = 100_000


def dense_kind(total: int, settings: Settings) -> DenseKind:
    if total >= settings.ivf_threshold:
        return "ivf"
    if total >= settings.hnsw_threshold:
        return "hnsw"
    return "flat"


def kind_of(index: faiss.Index | DenseVectors) -> DenseKind:
    """The kind of an index (of the main index of :class:`DenseVectors`)."""
    if isinstance(index, DenseVectors):
        index = index.main
    inner = faiss.downcast_index(index.index) if isinstance(index, faiss.IndexIDMap) else index
    if isinstance(inner, faiss.IndexHNSW):
        return "hnsw"
    if isinstance(inner, faiss.IndexIVF):
        return "ivf"
    return "flat"


def empty_index(dimension: int) -> faiss.Index:
    return faiss.IndexIDMap2(faiss.IndexFlatIP(dimension))


def flat_index(ids: np.ndarray, vectors: np.ndarray) -> faiss.Index:
    """An exact index holding ``vectors`` under the chunk ids ``ids``."""
    index = empty_index(vectors.shape[1])
    if len(ids):
        index.add_with_ids(np.ascontiguousarray(vectors, np.float32), np.asarray(ids, np.int64))
    return index


def held(index: faiss.Index) -> tuple[np.ndarray, np.ndarray]:
    """The (chunk ids, vectors) a flat index holds, in the order they were added."""
    ids = faiss.vector_to_array(index.id_map).astype(np.int64)
    vectors = faiss.downcast_index(index.index).reconstruct_n(0, index.ntotal)
    return ids, vectors.reshape(len(ids), index.d)


@dataclass(frozen=True)
class DenseVectors:
    """The vectors of one generation: ``main`` (flat, HNSW or IVF, by size) and ``tail``, an
    exact flat index of the vectors added since ``main`` was written. Both are read-only once
    a generation holds them; the next generation copies what it changes.

    Example:
        >>> vectors = DenseVectors.of(empty_index(2)).appended([5], np.eye(1, 2, dtype=np.float32))
        >>> vectors.ntotal, vectors.tail.ntotal, vectors.kind
        (1, 1, 'flat')
    """

    main: faiss.Index
    tail: faiss.Index

    @classmethod
    def of(cls, main: faiss.Index) -> DenseVectors:
        """``main`` with an empty tail."""
        return cls(main, empty_index(main.d))

    @property
    def ntotal(self) -> int:
        return int(self.main.ntotal + self.tail.ntotal)

    @property
    def kind(self) -> DenseKind:
        return kind_of(self.main)

    @property
    def parts(self) -> tuple[faiss.Index, faiss.Index]:
        return self.main, self.tail

    def appended(self, ids: ChunkIds, vectors: np.ndarray) -> DenseVectors:
        """These vectors with ``vectors`` added to a copy of the tail under ``ids``."""
        tail = faiss.clone_index(self.tail)
        if len(ids):
            tail.add_with_ids(np.ascontiguousarray(vectors, np.float32), np.asarray(ids, np.int64))
        return DenseVectors(self.main, tail)


def tail_limit(main_total: int, settings: Settings) -> int:
    """How many vectors the tail beside a main index of ``main_total`` may hold.

    Example:
        >>> tail_limit(1_000_000, Settings()), tail_limit(40_000, Settings()), tail_limit(3, Settings())
        (50000, 10000, 0)
    """
    return min(settings.dense_tail_max, int(settings.dense_tail_fraction * main_total))


def advance(
    current: DenseVectors,
    total: int,
    settings: Settings,
    removed: ChunkIds,
    ids: ChunkIds,
    vectors: np.ndarray,
) -> DenseVectors | None:
    """The vectors of the next generation, for a collection of ``total`` chunks: ``vectors``
    appended to the tail (``result.main is current.main``) when nothing is removed, the kind
    stays and the tail stays within :func:`tail_limit`; otherwise a main index carried forward
    with the tail merged in (:func:`carry`) and an empty tail; None when it must be rebuilt.

    Example:
        >>> current = DenseVectors.of(flat_index(np.arange(8), np.eye(8, dtype=np.float32)))
        >>> added = advance(current, 10, Settings(), [], [8, 9], np.eye(2, 8, dtype=np.float32))
        >>> added.main is current.main, added.tail.ntotal
        (True, 2)
        >>> merged = advance(added, 9, Settings(), [0], [], np.zeros((0, 8), np.float32))
        >>> merged.main.ntotal, merged.tail.ntotal
        (9, 0)
    """
    same_kind = dense_kind(total, settings) == current.kind
    limit = tail_limit(current.main.ntotal, settings)
    if not len(removed) and same_kind and current.tail.ntotal + len(ids) <= limit:
        return current.appended(ids, vectors)
    tail_ids, tail_vectors = held(current.tail)
    gone = np.asarray(removed, dtype=np.int64)
    kept = ~np.isin(tail_ids, gone)
    main = carry(
        current.main,
        total,
        settings,
        gone[~np.isin(gone, tail_ids)],  # chunks that left the tail never reach the main index
        np.concatenate([tail_ids[kept], np.asarray(ids, dtype=np.int64)]),
        np.vstack(
            [tail_vectors[kept], np.asarray(vectors, np.float32).reshape(-1, current.main.d)]
        ),
    )
    return None if main is None else DenseVectors.of(main)


def build_index(
    dimension: int, total: int, settings: Settings, batches: VectorBatches
) -> faiss.Index:
    """A new index of the kind ``total`` calls for, filled from ``batches()`` (ids, vectors)."""
    kind = dense_kind(total, settings)
    if kind == "hnsw":
        inner = faiss.IndexHNSWFlat(dimension, settings.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        inner.hnsw.efSearch = settings.hnsw_ef_search
    elif kind == "ivf":
        nlist = max(64, int(4 * math.sqrt(total)))
        inner = faiss.index_factory(
            dimension, f"IVF{nlist},PQ{settings.ivf_pq_m}", faiss.METRIC_INNER_PRODUCT
        )
        # Polysemous training reorders PQ codes for Hamming pre-filtering, which ragkit does not
        # use; it costs minutes of training.
        faiss.downcast_index(inner).do_polysemous_training = False
        inner.train(_training_sample(batches(), dimension))
        faiss.extract_index_ivf(inner).nprobe = settings.ivf_nprobe
    else:
        inner = faiss.IndexFlatIP(dimension)
    index = faiss.IndexIDMap2(inner)
    for ids, vectors in batches():
        index.add_with_ids(vectors, ids)
    return index


def carry(
    index: faiss.Index,
    total: int,
    settings: Settings,
    removed: ChunkIds,
    ids: ChunkIds,
    vectors: np.ndarray,
) -> faiss.Index | None:
    """A copy of ``index`` without the ``removed`` chunk ids and with ``vectors`` added under
    ``ids``, for a collection of ``total`` chunks; None when it must be rebuilt instead: the
    size calls for another kind, or an HNSW graph would lose chunks. The original is left as it
    is (searches keep reading it until the commit lands).

    Example:
        >>> index = empty_index(2)
        >>> index.add_with_ids(np.eye(2, dtype=np.float32), np.array([1, 2]))
        >>> carry(index, 2, Settings(), [1], [3], np.ones((1, 2), np.float32)).ntotal
        2
        >>> carry(index, 60_000, Settings(), [], [3], np.ones((1, 2), np.float32)) is None
        True
    """
    kind = kind_of(index)
    if dense_kind(total, settings) != kind or (kind == "hnsw" and len(removed)):
        return None
    copy = faiss.clone_index(index)
    if len(removed):
        copy.remove_ids(np.asarray(removed, dtype=np.int64))
    if len(ids):
        copy.add_with_ids(vectors, np.asarray(ids, dtype=np.int64))
    return copy


def mismatch(index: faiss.Index | DenseVectors, batches: VectorBatches) -> str | None:
    """How ``index`` (or main and tail together) differs from the (ids, vectors) ``batches()``
    yields, in words; None when it holds exactly those ids with those vectors. IVF-PQ codes are
    approximate, so only its ids are compared.

    Example:
        >>> index = empty_index(2)
        >>> index.add_with_ids(np.eye(2, dtype=np.float32), np.array([7, 9]))
        >>> stored = lambda: iter([(np.array([7, 9]), np.array([[1, 0], [0, -1]], np.float32))])
        >>> mismatch(index, stored)
        '1 vectors differ from SQLite'
    """
    parts = index.parts if isinstance(index, DenseVectors) else (index,)
    if not all(isinstance(part, faiss.IndexIDMap) for part in parts):
        return "no id map"
    part_ids = [np.sort(faiss.vector_to_array(part.id_map).astype(np.int64)) for part in parts]
    every_held = np.sort(np.concatenate(part_ids))
    stored: list[np.ndarray] = []
    differ = 0
    for ids, vectors in batches():
        stored.append(ids)
        for part, holds in zip(parts, part_ids, strict=True):
            known = np.isin(ids, holds)
            if kind_of(part) != "ivf" and known.any():
                copies = part.reconstruct_batch(ids[known])
                close = np.isclose(copies, vectors[known], rtol=0, atol=1e-5).all(axis=1)
                differ += int((~close).sum())
    every = np.sort(np.concatenate(stored)) if stored else np.zeros(0, np.int64)
    problems = []
    if not np.array_equal(every_held, every):
        missing = len(np.setdiff1d(every, every_held))
        extra = len(np.setdiff1d(every_held, every))
        problems.append(
            f"ids differ from SQLite ({missing} chunks missing, {extra} unknown ids, "
            f"{len(every_held)} vs {len(every)})"
        )
    if differ:
        problems.append(f"{differ} vectors differ from SQLite")
    return "; ".join(problems) or None


def _training_sample(
    batches: Iterable[tuple[np.ndarray, np.ndarray]], dimension: int
) -> np.ndarray:
    sample: list[np.ndarray] = []
    taken = 0
    for _, vectors in batches:
        sample.append(vectors[: _TRAIN_SAMPLE - taken])
        taken += len(sample[-1])
        if taken >= _TRAIN_SAMPLE:
            break
    return np.vstack(sample) if sample else np.zeros((0, dimension), np.float32)


def search(
    index: faiss.Index | DenseVectors,
    query: np.ndarray,
    k: int,
    settings: Settings,
    allowed: np.ndarray | None = None,
    fetch: VectorFetcher | None = None,
) -> list[tuple[int, float]]:
    """Best ``k`` (chunk id, inner product); ``allowed`` restricts to those chunk ids. Main and
    tail of :class:`DenseVectors` are searched each, their hits merged by score.

    ``settings.hnsw_ef_search`` and ``settings.ivf_nprobe`` apply at every search (not only
    the values the index was built with). IVF results are re-scored exactly with vectors from
    ``fetch`` (chunk ids → vectors).
    """
    parts = index.parts if isinstance(index, DenseVectors) else (index,)
    parts = tuple(part for part in parts if part.ntotal)
    if not parts or (allowed is not None and not len(allowed)):
        return []
    query = query.reshape(1, -1).astype(np.float32)
    selector = None
    if allowed is not None:
        selector = faiss.IDSelectorBatch(np.asarray(allowed, dtype=np.int64))
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)  # one query: threads only add start-up and spin overhead
    try:
        found = [hit for part in parts for hit in _search(part, query, k, settings, selector)]
    finally:
        faiss.omp_set_num_threads(threads)
    if kind_of(parts[0]) == "ivf" and fetch is not None:
        vectors = fetch([i for i, _ in found])
        found = [(i, float(vectors[i] @ query[0])) for i, _ in found if i in vectors]
    return sorted(found, key=lambda pair: -pair[1])[:k]


def _search(
    index: faiss.Index, query: np.ndarray, k: int, settings: Settings, selector: faiss.IDSelector
) -> list[tuple[int, float]]:
    """The best (chunk id, score) of one index: ``k`` of them, ``k × rescore_factor`` from an
    IVF-PQ index, whose approximate scores the caller replaces with exact ones."""
    kind = kind_of(index)
    wanted = k * settings.rescore_factor if kind == "ivf" else k
    if kind == "hnsw":
        params = faiss.SearchParametersHNSW(sel=selector, efSearch=settings.hnsw_ef_search)
    elif kind == "ivf":
        params = faiss.SearchParametersIVF(sel=selector, nprobe=settings.ivf_nprobe)
    else:
        params = faiss.SearchParameters(sel=selector)
    scores, ids = index.search(query, min(wanted, index.ntotal), params=params)
    return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]
