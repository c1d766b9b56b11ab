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

Example:
    >>> from ragkit.config import Settings
    >>> dense_kind(10_000, Settings()), dense_kind(60_000, Settings())
    ('flat', 'hnsw')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
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
