"""Search latency, recall and memory of the dense, sparse and hybrid indexes by size.

Run::

    .venv/bin/python -m benchmarks.search                 # real-embedding recall; 10k, 100k, 1M
    .venv/bin/python -m benchmarks.search --sizes 10000   # a quick run
    .venv/bin/python -m benchmarks.search --no-real       # synthetic sizes only
    .venv/bin/python -m benchmarks.search --sizes         # real-embedding recall only
    .venv/bin/python -m benchmarks.search --no-real --sizes 1000000 --skip hnsw

**Latency by size** uses synthetic data, as latency does not depend on meaning: random unit
vectors (384-d, the bundled models' width) and token documents drawn from a Zipf distribution
over 30k terms (60 terms each). For each size it builds the BM25 index
(:class:`ragkit.search.sparse.SparseIndex`, peak RSS recorded) and every dense index kind with ragkit's
own builder (:func:`ragkit.search.dense.build_index`: Flat, HNSW, IVF-PQ + exact re-scoring), then times
200 queries (query vectors given, so encoding is excluded) of: dense search per kind and search
setting, sparse search, and hybrid = dense + sparse + the default fusion (weighted; the calls
:meth:`ragkit.Index.search` makes, minus fetching the 10 result rows from SQLite). Each query's
wall-clock time and its CPU time (``time.thread_time``) are recorded: on a loaded shared machine
the wall clock mostly measures waiting for a core, the CPU time what the query costs. One process,
one FAISS thread for building and searching (single-query latency; on this shared 2-core
machine a 2-thread build was 4x slower than 1 thread). Memory per million chunks is the
serialized size of each index scaled to 1M (vectors as indexed; SQLite's copy of the vectors is
on disk, not in memory). Recall@10 against Flat is reported here too, but random isotropic
vectors have no neighbourhood structure: a worst case, not a guide to the defaults.

A part not run (``--no-real``, sizes not given) is kept from the file as it is when this run
writes; ``--skip``
leaves index kinds out of a size (and its hybrid row, when the skipped kind is the one ragkit
would pick), for builds too long for the machine.

**Recall on real embeddings** (what the HNSW and IVF defaults are chosen by): ~60k real English
passages — paragraphs of the Python 3.11 documentation (``ragkit.corpora``, ``en``) and the
sentences of Cranfield and CISI — embedded with the bundled all-MiniLM-L6-v2 (vectors cached under
``~/.cache/ragkit/benchmarks``). Two query sets: the 337 Cranfield + CISI queries, and every
200th passage, held out of the index. Recall@10 against exact search and p50 latency are swept
over ``hnsw_ef_search`` and over ``ivf_nprobe`` × ``rescore_factor``.

Writes ``benchmarks/results/search.json`` and prints tables.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import ragkit  # noqa: F401  (thread policy before torch/faiss load: ragkit.threads)

# isort: split

import faiss
import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks.common import BEIR, peak_rss_mb, percentile, read_result, result_path, write_result
from ragkit.config import Settings
from ragkit.corpora import load_corpus
from ragkit.embed import Encoder
from ragkit.evaluate import load_queries
from ragkit.paths import cache_dir
from ragkit.search import dense
from ragkit.search.fusion import fuse
from ragkit.search.sparse import SparseIndex

DIMENSION = 384
VOCABULARY = 30_000
DOC_TERMS = 60
QUERIES = 200
K = 10
FUSION = Settings().fusion  # what Index.search fuses with by default
REAL_MODEL = "all-minilm-l6-v2"
HELD_OUT_EVERY = 200
EF_SEARCH = (16, 32, 64, 128, 256)
NPROBE = (4, 8, 16, 32, 64)
RESCORE = (2, 5, 10)
SWEEPS: dict[str, list[dict[str, int]]] = {
    "flat": [{}],
    "hnsw": [{"hnsw_ef_search": ef} for ef in EF_SEARCH],
    "ivf": [{"ivf_nprobe": n, "rescore_factor": r} for n in NPROBE for r in RESCORE],
}
_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"(?<=[.?!])\s+")
Fetch = Callable[[list[int]], dict[int, np.ndarray]]


def unit_vectors(count: int, rng: np.random.Generator) -> np.ndarray:
    vectors = rng.standard_normal((count, DIMENSION), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def token_docs(count: int, rng: np.random.Generator) -> list[str]:
    terms = (rng.zipf(1.2, size=count * DOC_TERMS) - 1) % VOCABULARY
    return [
        " ".join(f"t{t}" for t in terms[i * DOC_TERMS : (i + 1) * DOC_TERMS]) for i in range(count)
    ]


class Timings:
    """Per-query wall-clock and CPU seconds (this thread's CPU time: what the query cost)."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    @contextmanager
    def measure(self) -> Iterator[None]:
        wall, cpu = time.perf_counter(), time.thread_time()
        yield
        self.wall.append(time.perf_counter() - wall)
        self.cpu.append(time.thread_time() - cpu)

    def summary(self) -> dict[str, float]:
        wall, cpu = np.array(self.wall) * 1000, np.array(self.cpu) * 1000
        return {
            "p50_ms": percentile(wall, 50),
            "p95_ms": percentile(wall, 95),
            "cpu_p50_ms": percentile(cpu, 50),
            "cpu_p95_ms": percentile(cpu, 95),
        }


def timed_search(
    index: faiss.Index, queries: np.ndarray, settings: Settings, fetch: Fetch
) -> tuple[Timings, list[list[int]]]:
    """Timings and found ids of ragkit's dense search, one query at a time."""
    times, found = Timings(), []
    for query in queries:
        with times.measure():
            hits = dense.search(index, query, K, settings, fetch=fetch)
        found.append([i for i, _ in hits])
    return times, found


def recall(found: list[list[int]], exact: list[list[int]]) -> float:
    return float(np.mean([len(set(f) & set(e)) / K for f, e in zip(found, exact, strict=True)]))


def kind_settings(kind: str, **overrides: int) -> Settings:
    """Settings whose thresholds make :func:`ragkit.search.dense.build_index` build ``kind``."""
    thresholds = {"flat": (10**12, 10**12), "hnsw": (1, 10**12), "ivf": (1, 1)}[kind]
    return Settings(hnsw_threshold=thresholds[0], ivf_threshold=thresholds[1], **overrides)


def build(kind: str, vectors: np.ndarray) -> tuple[faiss.Index, float]:
    """A ``kind`` index over ``vectors`` (ids = row numbers), and its build seconds."""
    ids = np.arange(len(vectors), dtype=np.int64)

    def batches() -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for start in range(0, len(vectors), 50_000):
            yield ids[start : start + 50_000], vectors[start : start + 50_000]

    clock = time.perf_counter()
    index = dense.build_index(DIMENSION, len(vectors), kind_settings(kind), batches)
    return index, time.perf_counter() - clock


def run_size(
    size: int, rng: np.random.Generator, console: Console, skip: tuple[str, ...] = ()
) -> dict:
    """Build and time every index kind but those in ``skip`` at ``size`` chunks."""
    docs = token_docs(size, rng)
    query_terms = [docs[int(i)].split()[:4] for i in rng.integers(0, size, QUERIES)]
    result: dict = {
        "chunks": size,
        "dense": [],
        "hybrid": [],
        "build_seconds": {},
        "skipped": list(skip),
    }
    clock = time.perf_counter()
    sparse = SparseIndex.build(zip(range(size), docs, strict=True))
    result["build_seconds"]["bm25"] = time.perf_counter() - clock
    del docs
    gc.collect()
    result["peak_rss_mb_after_bm25"] = peak_rss_mb()
    console.print(f"{size:>9,} bm25: built in {result['build_seconds']['bm25']:.1f} s")
    vectors = unit_vectors(size, rng)
    queries = unit_vectors(QUERIES, rng)

    def fetch(wanted: list[int]) -> dict[int, np.ndarray]:
        return {i: vectors[i] for i in wanted}

    exact: list[list[int]] = []
    chosen_kind = settings_kind(size)
    for kind, grid in SWEEPS.items():
        if kind in skip:
            continue
        index, result["build_seconds"][kind] = build(kind, vectors)
        console.print(f"{size:>9,} {kind}: built in {result['build_seconds'][kind]:.1f} s")
        megabytes = len(faiss.serialize_index(index)) / 1e6
        for overrides in grid:
            times, found = timed_search(index, queries, kind_settings(kind, **overrides), fetch)
            exact = exact or found
            result["dense"].append(
                {
                    "kind": kind,
                    "settings": overrides,
                    **times.summary(),
                    "recall_at_10_vs_flat": recall(found, exact),
                    "mb_per_million": megabytes * 1_000_000 / size,
                }
            )
        if kind == chosen_kind:
            chosen = index
        del index
    bm25_bytes = (
        sum(getattr(part, "nbytes", 0) for part in sparse.retriever.scores.values())
        + sparse.chunk_ids.nbytes
    )
    sparse_times = Timings()
    for terms in query_terms:
        with sparse_times.measure():
            sparse.search(terms, 100)
    result["sparse"] = {**sparse_times.summary(), "mb_per_million": bm25_bytes / size}
    for overrides in [] if chosen_kind in skip else SWEEPS[chosen_kind]:
        settings = kind_settings(chosen_kind, **overrides)
        hybrid_times = Timings()
        for query, terms in zip(queries, query_terms, strict=True):
            with hybrid_times.measure():
                rankings = [
                    dense.search(chosen, query, 100, settings, fetch=fetch),
                    sparse.search(terms, 100),
                ]
                fuse(rankings, FUSION)[:K]
        result["hybrid"].append(
            {"dense_kind": chosen_kind, "settings": overrides, **hybrid_times.summary()}
        )
    result["peak_rss_mb"] = peak_rss_mb()
    return result


def settings_kind(size: int) -> str:
    """The kind ragkit's default thresholds pick at ``size`` chunks."""
    return dense.dense_kind(size, Settings())


def real_texts() -> tuple[list[str], list[str]]:
    """Passages (Python docs paragraphs, Cranfield and CISI sentences) and the BEIR queries."""
    passages = [
        paragraph.strip()
        for doc in load_corpus("en")
        for paragraph in _PARAGRAPH.split(doc.text)
        if len(paragraph.split()) >= 8
    ]
    queries: list[str] = []
    for name in ("cranfield", "cisi"):
        with (BEIR / name / "corpus.jsonl").open(encoding="utf-8") as handle:
            for record in map(json.loads, handle):
                text = f"{record.get('title', '')}. {record['text']}"
                passages += [s for s in _SENTENCE.split(text) if len(s.split()) >= 6]
        queries += load_queries(BEIR / name / "queries.jsonl").values()
    return list(dict.fromkeys(passages)), queries


def cached_vectors(texts: list[str], encode: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """``encode(texts)``, cached under the ragkit cache by a hash of the model and texts."""
    digest = hashlib.sha256("\n".join([REAL_MODEL, *texts]).encode()).hexdigest()[:16]
    path = cache_dir() / "benchmarks" / f"search-{digest}.npy"
    if path.exists():
        return np.load(path)
    vectors = encode(texts)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def real_recall(console: Console) -> dict:
    """Recall@10 and p50 of HNSW and IVF-PQ settings against exact search on real embeddings."""
    passages, beir_queries = real_texts()
    held_out = passages[::HELD_OUT_EVERY]
    indexed = [p for i, p in enumerate(passages) if i % HELD_OUT_EVERY]
    encoder = Encoder(REAL_MODEL, batch_size=64)
    clock = time.perf_counter()
    vectors = cached_vectors(indexed, encoder.encode_passages)
    query_sets = {
        "beir_queries": cached_vectors(beir_queries, encoder.encode_queries),
        "held_out_passages": cached_vectors(held_out, encoder.encode_passages),
    }
    console.print(
        f"real: {len(indexed):,} passages embedded in {time.perf_counter() - clock:.0f} s"
    )

    def fetch(wanted: list[int]) -> dict[int, np.ndarray]:
        return {i: vectors[i] for i in wanted}

    flat, _ = build("flat", vectors)
    exact = {
        name: timed_search(flat, q, kind_settings("flat"), fetch) for name, q in query_sets.items()
    }
    result: dict = {
        "model": REAL_MODEL,
        "passages": len(indexed),
        "queries": {name: len(q) for name, q in query_sets.items()},
        "flat": exact["beir_queries"][0].summary(),
        "hnsw": [],
        "ivf": [],
    }
    del flat
    for kind in ("hnsw", "ivf"):
        index, result[f"{kind}_build_seconds"] = build(kind, vectors)
        for overrides in SWEEPS[kind]:
            row: dict = {"settings": overrides}
            for name, queries in query_sets.items():
                times, found = timed_search(index, queries, kind_settings(kind, **overrides), fetch)
                row[name] = {**times.summary(), "recall_at_10": recall(found, exact[name][1])}
            result[kind].append(row)
        del index
    return result


def setting_text(settings: dict[str, int]) -> str:
    return ", ".join(f"{name} {value}" for name, value in settings.items())


def latency(row: dict) -> list[str]:
    """CPU p50, p95 and wall p50 ("–" where a run recorded no CPU time)."""
    keys = ("cpu_p50_ms", "cpu_p95_ms", "p50_ms")
    return [f"{row[key]:.2f}" if key in row else "–" for key in keys]


def print_tables(results: list[dict], real: dict | None, console: Console) -> None:
    if real:
        table = Table(
            "index",
            "setting",
            "recall@10 BEIR queries",
            "recall@10 held-out passages",
            "CPU p50 ms",
            title=f"real embeddings: {real['passages']:,} passages, {real['model']}"
            f" (Flat CPU p50 {real['flat']['cpu_p50_ms']:.2f} ms)",
        )
        for kind in ("hnsw", "ivf"):
            for row in real[kind]:
                table.add_row(
                    kind,
                    setting_text(row["settings"]),
                    f"{row['beir_queries']['recall_at_10']:.3f}",
                    f"{row['held_out_passages']['recall_at_10']:.3f}",
                    f"{row['beir_queries']['cpu_p50_ms']:.2f}",
                )
        console.print(table)
    table = Table(
        "chunks",
        "index",
        "setting",
        "CPU p50 ms",
        "CPU p95 ms",
        "wall p50 ms",
        "recall@10 (random)",
        "MB / 1M chunks",
        "build s",
        title="search latency (query encoding excluded), 2-core CPU",
    )
    for result in results:
        chunks, built = f"{result['chunks']:,}", result["build_seconds"]
        for row in result["dense"]:
            table.add_row(
                chunks,
                f"dense {row['kind']}",
                setting_text(row["settings"]),
                *latency(row),
                f"{row['recall_at_10_vs_flat']:.3f}",
                f"{row['mb_per_million']:.0f}",
                f"{built[row['kind']]:.1f}",
            )
        sparse = result["sparse"]
        table.add_row(
            chunks,
            "sparse bm25",
            "",
            *latency(sparse),
            "",
            f"{sparse['mb_per_million']:.0f}",
            f"{built['bm25']:.1f}",
        )
        for row in result["hybrid"]:
            table.add_row(
                chunks,
                f"hybrid ({row['dense_kind']} + bm25, {FUSION})",
                setting_text(row["settings"]),
                *latency(row),
                "",
                "",
                "",
            )
    console.print(table)


def merged(current: dict, real: dict | None, measured: dict[int, dict]) -> dict:
    """This run's parts over the file's ``current`` ones (a part not run here is kept)."""
    results = {r["chunks"]: r for r in current.get("results", []) if isinstance(r["dense"], list)}
    results.update(measured)
    return {
        "real_embeddings": real or current.get("real_embeddings"),
        "results": [results[size] for size in sorted(results)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--no-real", action="store_true", help="skip the real-embedding sweep")
    parser.add_argument(
        "--skip", nargs="*", default=[], choices=["hnsw", "ivf"], help="index kinds not built"
    )
    args = parser.parse_args()
    console = Console()
    faiss.omp_set_num_threads(1)  # see the module docstring
    current = read_result("search")
    real = None if args.no_real else real_recall(console)
    measured: dict[int, dict] = {}
    rng = np.random.default_rng(0)
    for size in [None, *args.sizes]:  # written after each stage: a long 1M run keeps the rest
        if size is not None:
            measured[size] = run_size(size, rng, console, tuple(args.skip))
        document = merged(current, real, measured)
        parts = [*(["real"] if real else []), *map(str, measured)]
        write_result("search", document, parts=parts, earlier=current)
    print_tables(document["results"], real, console)
    console.print(f"wrote {result_path('search')}")


if __name__ == "__main__":
    main()
