"""Search latency, recall and memory of the dense, sparse and hybrid indexes by size.

Run::

    .venv/bin/python benchmarks/search.py                 # 10k, 100k, 1M chunks
    .venv/bin/python benchmarks/search.py --sizes 10000   # a quick run

Data is synthetic, as latency does not depend on meaning: random unit vectors (384-d, the
bundled models' width) and token documents drawn from a Zipf distribution over 30k terms
(60 terms each). For each size it builds every dense index kind with ragkit's own builder
(:func:`ragkit.dense.build_index`: Flat, HNSW, IVF-PQ + exact re-scoring) and the BM25 index
(:class:`ragkit.sparse.SparseIndex`), then times 200 queries (query vectors given, so encoding
is excluded) of: dense search per kind, sparse search, and hybrid = dense + sparse + RRF fusion
(the calls :meth:`ragkit.Index.search` makes, minus fetching the 10 result rows from SQLite).
Indexes are built with 2 FAISS threads and queried with 1 (single-query latency). Recall@10 of the approximate kinds is measured against
Flat on the same queries. Memory per million chunks is the serialized size of each index
scaled to 1M (vectors as indexed; SQLite's copy of the vectors is on disk, not in memory).

Writes ``benchmarks/results/search.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import faiss
import numpy as np
from rich.console import Console
from rich.table import Table

from ragkit import dense
from ragkit.config import Settings
from ragkit.retrieve import fuse
from ragkit.sparse import SparseIndex

ROOT = Path(__file__).resolve().parent.parent
RESULT = ROOT / "benchmarks" / "results" / "search.json"
DIMENSION = 384
VOCABULARY = 30_000
DOC_TERMS = 60
QUERIES = 200
K = 10


def unit_vectors(count: int, rng: np.random.Generator) -> np.ndarray:
    vectors = rng.standard_normal((count, DIMENSION), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def token_docs(count: int, rng: np.random.Generator) -> list[str]:
    terms = (rng.zipf(1.2, size=count * DOC_TERMS) - 1) % VOCABULARY
    return [
        " ".join(f"t{t}" for t in terms[i * DOC_TERMS : (i + 1) * DOC_TERMS]) for i in range(count)
    ]


def percentiles(seconds: list[float]) -> dict[str, float]:
    values = np.array(seconds) * 1000
    return {"p50_ms": float(np.percentile(values, 50)), "p95_ms": float(np.percentile(values, 95))}


def run_size(size: int, rng: np.random.Generator, console: Console) -> dict:
    vectors = unit_vectors(size, rng)
    ids = np.arange(size, dtype=np.int64)
    docs = token_docs(size, rng)
    queries = unit_vectors(QUERIES, rng)
    query_terms = [docs[int(i)].split()[:4] for i in rng.integers(0, size, QUERIES)]

    def batches():
        for start in range(0, size, 50_000):
            yield ids[start : start + 50_000], vectors[start : start + 50_000]

    def fetch(wanted: list[int]) -> dict[int, np.ndarray]:
        return {i: vectors[i] for i in wanted}

    result: dict = {"chunks": size, "dense": {}, "build_seconds": {}}
    exact: list[list[int]] = []
    kinds = {
        "flat": Settings(hnsw_threshold=10**12, ivf_threshold=10**12),
        "hnsw": Settings(hnsw_threshold=1, ivf_threshold=10**12),
        "ivf": Settings(hnsw_threshold=1, ivf_threshold=1),
    }
    for kind, settings in kinds.items():
        faiss.omp_set_num_threads(2)  # building uses both cores
        clock = time.perf_counter()
        index = dense.build_index(DIMENSION, size, settings, batches)
        result["build_seconds"][kind] = time.perf_counter() - clock
        faiss.omp_set_num_threads(1)  # one query at a time: threads only add overhead
        times, found = [], []
        for query in queries:
            clock = time.perf_counter()
            hits = dense.search(index, query, K, settings, fetch=fetch)
            times.append(time.perf_counter() - clock)
            found.append([i for i, _ in hits])
        if kind == "flat":
            exact = found
        recall = np.mean([len(set(f) & set(e)) / K for f, e in zip(found, exact, strict=True)])
        megabytes = len(faiss.serialize_index(index)) / 1e6
        result["dense"][kind] = {
            **percentiles(times),
            "recall_at_10_vs_flat": float(recall),
            "mb_per_million": megabytes * 1_000_000 / size,
        }
        console.print(f"{size:>9,} {kind}: built in {result['build_seconds'][kind]:.1f} s")
        if kind == settings_kind(size):
            chosen, chosen_settings = index, settings
        else:
            del index
    clock = time.perf_counter()
    sparse = SparseIndex.build(zip(range(size), docs, strict=True))
    result["build_seconds"]["bm25"] = time.perf_counter() - clock
    bm25_bytes = (
        sum(getattr(part, "nbytes", 0) for part in sparse.retriever.scores.values())
        + sparse.chunk_ids.nbytes
    )
    sparse_times, hybrid_times = [], []
    for query, terms in zip(queries, query_terms, strict=True):
        clock = time.perf_counter()
        sparse.search(terms, 100)
        sparse_times.append(time.perf_counter() - clock)
        clock = time.perf_counter()
        rankings = [
            dense.search(chosen, query, 100, chosen_settings, fetch=fetch),
            sparse.search(terms, 100),
        ]
        fuse(rankings, "rrf")[:K]
        hybrid_times.append(time.perf_counter() - clock)
    result["sparse"] = {**percentiles(sparse_times), "mb_per_million": bm25_bytes / size}
    result["hybrid"] = {**percentiles(hybrid_times), "dense_kind": settings_kind(size)}
    return result


def settings_kind(size: int) -> str:
    """The kind ragkit's default thresholds pick at ``size`` chunks."""
    return dense.dense_kind(size, Settings())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    args = parser.parse_args()
    console = Console()
    rng = np.random.default_rng(0)
    results = [run_size(size, rng, console) for size in args.sizes]
    RESULT.parent.mkdir(parents=True, exist_ok=True)
    RESULT.write_text(json.dumps({"results": results}, indent=2) + "\n")
    table = Table(
        "chunks",
        "index",
        "p50 ms",
        "p95 ms",
        "recall@10",
        "MB / 1M chunks",
        "build s",
        title="search latency (query encoding excluded), 2-core CPU",
    )
    for result in results:
        for kind, row in result["dense"].items():
            table.add_row(
                f"{result['chunks']:,}",
                f"dense {kind}",
                f"{row['p50_ms']:.2f}",
                f"{row['p95_ms']:.2f}",
                f"{row['recall_at_10_vs_flat']:.3f}",
                f"{row['mb_per_million']:.0f}",
                f"{result['build_seconds'][kind]:.1f}",
            )
        sparse, hybrid = result["sparse"], result["hybrid"]
        table.add_row(
            f"{result['chunks']:,}",
            "sparse bm25",
            f"{sparse['p50_ms']:.2f}",
            f"{sparse['p95_ms']:.2f}",
            "",
            f"{sparse['mb_per_million']:.0f}",
            f"{result['build_seconds']['bm25']:.1f}",
        )
        table.add_row(
            f"{result['chunks']:,}",
            f"hybrid ({hybrid['dense_kind']} + bm25, RRF)",
            f"{hybrid['p50_ms']:.2f}",
            f"{hybrid['p95_ms']:.2f}",
            "",
            "",
            "",
        )
    console.print(table)
    console.print(f"wrote {RESULT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
