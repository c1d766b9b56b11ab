"""The folder store against Milvus: quality, ingest speed, query latency, memory per chunk.

Run::

    .venv/bin/python -m benchmarks.backends                    # every part
    .venv/bin/python -m benchmarks.backends --parts quality    # nDCG / Recall / MRR only
    .venv/bin/python -m benchmarks.backends --parts speed --sizes 10000

Milvus is a ``milvus-lite server`` started here on a free port (a real gRPC endpoint, as
Milvus Standalone is reached). Milvus Lite is a pure-Python re-implementation: its speed says
little about a Milvus server's, so the speed figures of the Milvus column are Lite's, and the
README's deployment estimate does not scale them.

**quality** — each shared judged collection (``../shared/data/beir/*``) through ``ragkit eval``'s
code (:func:`ragkit.evaluate.evaluate`: the whole pipeline, default settings) once into a folder
and once into Milvus; nDCG@10, Recall@100 and MRR@10 per mode side by side. Goal: Milvus within
0.005 of the folder on every collection and mode. Also each index's ingest time (same encoder,
so the difference is the store's) and warm hybrid search p50/p95 on that real index, in-process
(``Index.search``) and through ``ragkit serve`` (HTTP, one client): every judged query twice,
the second round timed.

**speed** — each store at ``--sizes`` chunks (10k, 100k): synthetic rows (random unit
384-d vectors, 60 Zipf-drawn terms per chunk, 500-character texts) committed in batches of
``--batch`` documents of 4 chunks; commit throughput (chunks/s), then 200 queries of 4 of
those terms: each store call alone (dense top 100; sparse top 100 with the dense list's ids
scored too, as weighted fusion asks; the rows of the top 10), then the whole hybrid
``Index.search`` in-process (all-MiniLM-L6-v2 encoding the query) and through ``ragkit
serve``: p50/p95 ms. Plus the bytes per chunk each store writes to disk (folder: SQLite +
FAISS + BM25 files; Milvus Lite: what its data folder grew by), a ground of the README's
100M-chunk estimate.

**dask** — ``ragkit flows run ingest --runner dask`` of Cranfield (one file per abstract) into
Milvus with 1 and 2 workers (``--workers``): the workers load, chunk, embed and write
(``write`` tasks); documents/s.

Writes ``benchmarks/results/backends.json`` (parts not run are kept from the file) and prints
tables.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import uuid
from pathlib import Path

import ragkit  # noqa: F401  (thread policy before torch/faiss load)

# isort: split

import httpx
import numpy as np
from rich.console import Console
from rich.table import Table

from benchmarks.common import BEIR, p50_p95, read_result, serve, write_result
from ragkit import Index
from ragkit.chunking import Chunk
from ragkit.config import Settings
from ragkit.documents import Document
from ragkit.evaluate import evaluate, load_judgments
from ragkit.store import PendingDocument
from ragkit.store.address import create_store
from ragkit.store.milvus.server import LiteServer

MODES = ("sparse", "dense", "hybrid")
console = Console()


def _folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def quality(server: str, work: Path) -> dict:
    """Every judged collection into both backends through the whole pipeline."""
    found: dict = {}
    for dataset in sorted(BEIR.iterdir()):
        judgments = load_judgments(dataset)
        queries = list(judgments.queries.values())
        for backend, where in (
            ("folder", str(work / f"{dataset.name}-folder")),
            ("milvus", f"milvus://{server}/q_{dataset.name}_{uuid.uuid4().hex[:6]}"),
        ):
            clock = time.perf_counter()
            reports = evaluate(dataset, "auto", where, MODES)
            total = time.perf_counter() - clock
            with Index.open(where) as index:
                for query in queries:  # warm: encoder, caches
                    index.search(query, k=10)
                timed = []
                for query in queries:
                    start = time.perf_counter()
                    index.search(query, k=10)
                    timed.append(time.perf_counter() - start)
                chunks = index.info().chunks
            over_http = _served(where, queries)
            found.setdefault(dataset.name, {})[backend] = {
                "modes": {
                    r.mode: {
                        "ndcg_at_10": r.ndcg_at_10,
                        "recall_at_100": r.recall_at_100,
                        "mrr_at_10": r.mrr_at_10,
                    }
                    for r in reports
                },
                "model": reports[0].model,
                "chunks": chunks,
                "ingest_seconds": {
                    k: v for k, v in reports[0].seconds.items() if k.startswith("ingest_")
                },
                "eval_seconds": total,
                "search_hybrid": p50_p95([1000 * s for s in timed], 3),
                "search_hybrid_http": over_http,
            }
            console.print(f"{dataset.name} {backend}: done in {total:.0f} s", highlight=False)
    return found


def _served(where: str, queries: list[str]) -> dict[str, float]:
    """p50/p95 of hybrid searches through ``ragkit serve`` over ``where`` (one client, warm)."""
    timed = []
    with (
        serve(f"bench={where}", timeout=180) as (url, _),
        httpx.Client(base_url=url, timeout=120) as client,
    ):
        for round_ in range(2):
            for query in queries:
                start = time.perf_counter()
                client.post("/search", json={"query": query, "k": 10}).raise_for_status()
                if round_:
                    timed.append(time.perf_counter() - start)
    return p50_p95([1000 * s for s in timed], 3)


def dask(server: str, work: Path, workers: list[int]) -> dict:
    """``ragkit flows run ingest --runner dask --workers N`` of Cranfield (1,400 abstracts, one
    file each) into Milvus: the workers load, chunk, embed and write; documents/s for each N
    (one run each, a fresh collection, no cached results)."""
    from ragkit.flows.ingest import run_ingest  # Prefect loads only for this part

    corpus = work / "cranfield-files"  # one file per abstract, so loading and chunking spread
    corpus.mkdir(exist_ok=True)
    with (BEIR / "cranfield" / "corpus.jsonl").open() as lines:
        for line in lines:
            record = json.loads(line)
            text = f"{record.get('title', '')}\n\n{record['text']}".strip() + "\n"
            (corpus / f"{record['_id']}.txt").write_text(text, encoding="utf-8")
    found: dict = {}
    for count in workers:
        where = f"milvus://{server}/d_{count}_{uuid.uuid4().hex[:6]}"
        clock = time.perf_counter()
        report = run_ingest([str(corpus)], where, runner="dask", workers=count,
                            model="all-minilm-l6-v2", refresh_cache=True)  # fmt: skip
        seconds = time.perf_counter() - clock
        found[str(count)] = {
            "documents": report.documents_added,
            "chunks": report.chunks_added,
            "seconds": seconds,
            "documents_per_second": report.documents_added / seconds,
        }
        console.print(f"dask {count} workers: {seconds:.0f} s", highlight=False)
    return found


def _synthetic(
    count: int, rng: np.random.Generator, per_document: int = 4
) -> list[PendingDocument]:
    """``count`` synthetic chunks in documents of ``per_document``."""
    vocabulary = [f"w{i}" for i in range(30_000)]
    weights = 1.0 / np.arange(1, len(vocabulary) + 1)
    weights /= weights.sum()
    documents = []
    for number in range(0, count, per_document):
        size = min(per_document, count - number)
        vectors = rng.standard_normal((size, 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        texts = ["x" * 500 for _ in range(size)]
        chunks = [Chunk(t, 500 * i, 500 * (i + 1), 100, "fixed-256") for i, t in enumerate(texts)]
        terms = [" ".join(rng.choice(vocabulary, 60, p=weights)) for _ in range(size)]
        document = Document(
            f"/bench/{number}.txt", f"/bench/{number}.txt", "".join(texts), f"h{number}", [],
            language="en", script="Latn",
        )  # fmt: skip
        documents.append(PendingDocument(document, chunks, vectors, texts, terms))
    return documents


def speed(server: str, work: Path, sizes: list[int], batch: int) -> dict:
    """Commit throughput, search latency and bytes per chunk of each store, synthetic rows."""
    rng = np.random.default_rng(7)
    found: dict = {}
    for size in sizes:
        pending = _synthetic(size, rng)
        queries = rng.standard_normal((200, 384)).astype(np.float32)
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        query_terms = [list(rng.choice(pending[0].terms[0].split(), 4)) for _ in range(200)]
        settings = Settings(embedding_model="all-minilm-l6-v2")
        for backend, where in (
            ("folder", str(work / f"speed-{size}")),
            ("milvus", f"milvus://{server}/s_{size}_{uuid.uuid4().hex[:6]}"),
        ):
            store = create_store(where, settings, 384)
            disk_before = _folder_bytes(work / "milvus" / "db")
            clock = time.perf_counter()
            for start in range(0, len(pending), batch):
                store.commit(pending[start : start + batch])
            store.ensure_sparse()
            committed = time.perf_counter() - clock
            timings: dict[str, list[float]] = {"dense": [], "sparse": [], "rows": []}
            for vector, terms in zip(queries, query_terms, strict=True):
                start = time.perf_counter()
                dense = store.search_vectors(vector, 100)
                timings["dense"].append(time.perf_counter() - start)
                start = time.perf_counter()
                store.search_terms(terms, 100, None, [i for i, _ in dense])
                timings["sparse"].append(time.perf_counter() - start)
                start = time.perf_counter()
                store.chunks_by_id(i for i, _ in dense[:10])
                timings["rows"].append(time.perf_counter() - start)
            texts = [" ".join(terms) for terms in query_terms]
            index = Index(store)
            for text in texts[:20]:  # warm: the encoder, caches
                index.search(text, k=10)
            searched = []
            for text in texts:
                start = time.perf_counter()
                index.search(text, k=10)
                searched.append(time.perf_counter() - start)
            index.close()
            timings_http = _served(where, texts)
            on_disk = (
                _folder_bytes(Path(where))
                if backend == "folder"
                else _folder_bytes(work / "milvus" / "db") - disk_before
            )
            found.setdefault(str(size), {})[backend] = {
                "commit_chunks_per_second": size / committed,
                "commit_seconds": committed,
                **{
                    f"{kind}_{k}": v
                    for kind, t in timings.items()
                    for k, v in p50_p95([1000 * s for s in t], 3).items()
                },
                **{f"search_{k}": v for k, v in p50_p95([1000 * s for s in searched], 3).items()},
                **{f"http_{k}": v for k, v in timings_http.items()},
                "bytes_on_disk_per_chunk": on_disk / size,
            }
            console.print(f"{size} {backend}: {size / committed:.0f} chunks/s", highlight=False)
    return found


def _print(results: dict) -> None:
    for dataset, backends in results.get("quality", {}).items():
        table = Table(title=f"{dataset}: folder vs Milvus ({backends['folder']['model']})")
        for column in ("mode", "metric", "folder", "milvus", "Δ"):
            table.add_column(column)
        for mode in MODES:
            for metric in ("ndcg_at_10", "recall_at_100", "mrr_at_10"):
                a = backends["folder"]["modes"][mode][metric]
                b = backends["milvus"]["modes"][mode][metric]
                table.add_row(mode, metric, f"{a:.4f}", f"{b:.4f}", f"{b - a:+.4f}")
        console.print(table)
    for dataset, backends in results.get("quality", {}).items():
        table = Table(title=f"{dataset}: warm hybrid search, ms (p50 / p95)")
        for column in ("backend", "chunks", "in-process", "ragkit serve (HTTP)"):
            table.add_column(column)
        for backend, figures in backends.items():
            local, http = figures["search_hybrid"], figures.get("search_hybrid_http", {})
            table.add_row(
                backend,
                str(figures["chunks"]),
                f"{local['p50_ms']:.1f} / {local['p95_ms']:.1f}",
                f"{http.get('p50_ms', 0):.1f} / {http.get('p95_ms', 0):.1f}",
            )
        console.print(table)
    if "dask" in results:
        table = Table(title="flows run ingest --runner dask into Milvus (Cranfield)")
        for column in ("workers", "documents", "seconds", "documents/s"):
            table.add_column(column)
        for count, figures in results["dask"].items():
            table.add_row(count, str(figures["documents"]), f"{figures['seconds']:.0f}",
                          f"{figures['documents_per_second']:.1f}")  # fmt: skip
        console.print(table)
    for size, backends in results.get("speed", {}).items():
        table = Table(title=f"{size} synthetic chunks (Milvus = milvus-lite server)")
        table.add_column("figure")
        for backend in backends:
            table.add_column(backend)
        for figure in next(iter(backends.values())):
            table.add_row(figure, *(f"{b[figure]:,.1f}" for b in backends.values()))
        console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", nargs="*", default=["quality", "speed", "dask"])
    parser.add_argument("--workers", nargs="*", type=int, default=[1, 2], help="dask part")
    parser.add_argument("--sizes", nargs="*", type=int, default=[10_000, 100_000])
    parser.add_argument("--batch", type=int, default=250, help="documents per commit (speed)")
    args = parser.parse_args()
    earlier = read_result("backends")
    results = dict(earlier)
    results["machine"] = {"milvus": "milvus-lite server (pure Python)"}
    parts = {
        "quality": lambda server, work: quality(server, work),
        "speed": lambda server, work: speed(server, work, args.sizes, args.batch),
        "dask": lambda server, work: dask(server, work, args.workers),
    }
    with tempfile.TemporaryDirectory(prefix="ragkit-backends-") as scratch:
        work = Path(scratch)
        with LiteServer(work / "milvus") as server:
            for name in args.parts:
                found = parts[name](server, work)
                results[name] = results.get(name, {}) | found  # sizes not run are kept
                write_result("backends", results, parts=args.parts, earlier=earlier)
    _print(results)


if __name__ == "__main__":
    main()
