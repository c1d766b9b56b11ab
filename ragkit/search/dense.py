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

Each commit carries the index forward (:func:`carry`): new vectors are added to a copy, removed
chunks taken out, so a commit costs its own vectors, not the collection. A rebuild from SQLite
happens only when the size calls for another kind, or when chunks leave an HNSW graph, which
FAISS cannot remove from (a commit that replaces or prunes documents of an HNSW index rebuilds
it; adding documents does not). An IVF index keeps the lists it was trained with until the kind
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
from typing import Literal

import faiss
import numpy as np

from ragkit.config import Settings

DenseKind = Literal["flat", "hnsw", "ivf"]
VectorBatches = Callable[[], Iterator[tuple[np.ndarray, np.ndarray]]]
VectorFetcher = Callable[[list[int]], dict[int, np.ndarray]]
_TRAIN_SAMPLE = 100_000


def dense_kind(total: int, settings: Settings) -> DenseKind:
    if total >= settings.ivf_threshold:
        return "ivf"
    if total >= settings.hnsw_threshold:
        return "hnsw"
    return "flat"


def kind_of(index: faiss.Index) -> DenseKind:
    inner = faiss.downcast_index(index.index) if isinstance(index, faiss.IndexIDMap) else index
    if isinstance(inner, faiss.IndexHNSW):
        return "hnsw"
    if isinstance(inner, faiss.IndexIVF):
        return "ivf"
    return "flat"


def empty_index(dimension: int) -> faiss.Index:
    return faiss.IndexIDMap2(faiss.IndexFlatIP(dimension))


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
    removed: Sequence[int],
    ids: Sequence[int],
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


def mismatch(index: faiss.Index, batches: VectorBatches) -> str | None:
    """How ``index`` differs from the (ids, vectors) ``batches()`` yields, in words; None when
    it holds exactly those ids with those vectors. IVF-PQ codes are approximate, so only its
    ids are compared.

    Example:
        >>> index = empty_index(2)
        >>> index.add_with_ids(np.eye(2, dtype=np.float32), np.array([7, 9]))
        >>> stored = lambda: iter([(np.array([7, 9]), np.array([[1, 0], [0, -1]], np.float32))])
        >>> mismatch(index, stored)
        '1 vectors differ from SQLite'
    """
    if not isinstance(index, faiss.IndexIDMap):
        return "no id map"
    held = np.sort(faiss.vector_to_array(index.id_map).astype(np.int64))
    exact = kind_of(index) != "ivf"
    stored: list[np.ndarray] = []
    differ = 0
    for ids, vectors in batches():
        stored.append(ids)
        known = np.isin(ids, held)
        if exact and known.any():
            copies = index.reconstruct_batch(ids[known])
            close = np.isclose(copies, vectors[known], rtol=0, atol=1e-5).all(axis=1)
            differ += int((~close).sum())
    every = np.sort(np.concatenate(stored)) if stored else np.zeros(0, np.int64)
    problems = []
    if not np.array_equal(held, every):
        missing, extra = len(np.setdiff1d(every, held)), len(np.setdiff1d(held, every))
        problems.append(
            f"ids differ from SQLite ({missing} chunks missing, {extra} unknown ids, "
            f"{len(held)} vs {len(every)})"
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
    index: faiss.Index,
    query: np.ndarray,
    k: int,
    settings: Settings,
    allowed: np.ndarray | None = None,
    fetch: VectorFetcher | None = None,
) -> list[tuple[int, float]]:
    """Best ``k`` (chunk id, inner product); ``allowed`` restricts to those chunk ids.

    ``settings.hnsw_ef_search`` and ``settings.ivf_nprobe`` apply at every search (not only
    the values the index was built with). IVF results are re-scored exactly with vectors from
    ``fetch`` (chunk ids → vectors).
    """
    if index.ntotal == 0 or (allowed is not None and not len(allowed)):
        return []
    kind = kind_of(index)
    wanted = k * settings.rescore_factor if kind == "ivf" else k
    query = query.reshape(1, -1).astype(np.float32)
    selector = None
    if allowed is not None:
        selector = faiss.IDSelectorBatch(np.asarray(allowed, dtype=np.int64))
    if kind == "hnsw":
        params = faiss.SearchParametersHNSW(sel=selector, efSearch=settings.hnsw_ef_search)
    elif kind == "ivf":
        params = faiss.SearchParametersIVF(sel=selector, nprobe=settings.ivf_nprobe)
    else:
        params = faiss.SearchParameters(sel=selector)
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)  # one query: threads only add start-up and spin overhead
    try:
        scores, ids = index.search(query, min(wanted, index.ntotal), params=params)
    finally:
        faiss.omp_set_num_threads(threads)
    found = [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]
    if kind != "ivf" or fetch is None:
        return found[:k]
    vectors = fetch([i for i, _ in found])
    exact = [(i, float(vectors[i] @ query[0])) for i, _ in found if i in vectors]
    return sorted(exact, key=lambda pair: -pair[1])[:k]
