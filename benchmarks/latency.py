"""Query latency a user feels: warm hybrid ``Index.search`` idle and on a busy machine, and
``ragkit serve`` over HTTP with 1 and 8 concurrent clients.

Run::

    .venv/bin/python -m benchmarks.latency                  # builds the index once, then measures
    .venv/bin/python -m benchmarks.latency --queries 100    # a quicker run

The index: the Cranfield corpus (``../shared/data/beir``, 1,400 abstracts; ``--datasets
cranfield cisi`` adds CISI's 1,460) ingested with the ``sentence`` chunker at
``--chunk-tokens`` (64: more, shorter chunks) and all-MiniLM-L6-v2, kept under
``~/.cache/ragkit/benchmarks`` and reused by later runs (``--rebuild`` makes it again;
``--build-only`` stops after building). ``--datasets cranfield cisi python-manual
--chunk-tokens 32`` adds the Python 3.11 manual (:mod:`ragkit.corpora`) for an index of
~129k chunks; it took 50 minutes to build on this shared 2-core machine. Queries: the
Cranfield and CISI queries, in turn (median 20 tokens, the longest 114).

In one run, with ragkit's default thread policy (:mod:`ragkit.threads`):

- **in-process**: ``Index.search(query, k=10)`` (hybrid, query encoding included) after 10
  warm-up queries, with the machine as it is (``idle``), then again while two busy processes
  (``python -c "while True: pass"``) run beside it (``busy``). The load average is recorded
  with each, as other work on a shared machine counts too.
- **query encoding alone**, idle, in the same run: ragkit's query path
  (:meth:`ragkit.embed.Encoder.encode_queries`: ONNX Runtime on one thread,
  :mod:`ragkit.embed.onnx_runtime`), its torch path (``Encoder._forward``: one forward pass of the
  torch modules on one thread, what runs where ONNX Runtime cannot) and, as the peer,
  ``SentenceTransformer.encode`` of the same model on ragkit's thread count.
- **HTTP**: ``ragkit serve`` started on a free port (start-up = until ``/health`` answers),
  ``POST /search`` from 1 client, then from 8 concurrent clients (threads, one connection
  each): p50/p95 per request and requests per second.
- **cold CLI**: one ``ragkit query`` wall clock in a new process, as a user runs it (the query
  on the checked ONNX copy, torch never imported: :mod:`ragkit.embed.onnx_runtime`) and, as the
  peer, with ``RAGKIT_EMBED_RUNTIME=torch`` (the process loads torch and the model).

Writes ``benchmarks/results/latency.json`` and prints a table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import ragkit  # noqa: F401  (thread policy before torch/faiss load: ragkit.threads)

# isort: split

import httpx
from rich.console import Console
from rich.table import Table

from benchmarks.common import BEIR, RAGKIT, per_call_ms, serve, summary, write_result
from ragkit import Index
from ragkit.corpora import load_corpus
from ragkit.evaluate import load_queries
from ragkit.paths import cache_dir

MODEL = "all-minilm-l6-v2"
DATASETS = ("cranfield", "cisi")
CORPORA = (*DATASETS, "python-manual")  # the manual: ragkit.corpora's English source


def build_index(
    folder: Path, datasets: list[str], chunk_tokens: int, rebuild: bool
) -> dict[str, float]:
    """The benchmark index at ``folder``: made (``rebuild``: again) or completed (documents an
    earlier run did not commit); its counts and the seconds this run spent on it."""
    if rebuild:
        shutil.rmtree(folder, ignore_errors=True)
    clock = time.perf_counter()
    settings = {"chunker": "sentence", "chunk_tokens": chunk_tokens}
    with Index.open(folder, create=True, model=MODEL, **settings) as index:
        report = index.ingest([corpus_file(name) for name in datasets])
        counts = index.store.counts()
    spent = round(time.perf_counter() - clock, 1)
    return {**counts, "documents_added": report.documents_added, "build_seconds": spent}


def corpus_file(name: str) -> Path:
    """The JSONL file of corpus ``name``: a shared BEIR corpus, or the Python 3.11 manual
    (497 pages, 1.4M words; :func:`ragkit.corpora.load_corpus`) written out once as records."""
    if name in DATASETS:
        return BEIR / name / "corpus.jsonl"
    path = cache_dir() / "benchmarks" / "python-manual.jsonl"
    if not path.exists():
        records = (
            json.dumps({"_id": doc.id, "text": doc.text}, ensure_ascii=False)
            for doc in load_corpus("en")
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"{line}\n" for line in records), encoding="utf-8")
    return path


def queries(limit: int) -> list[str]:
    """The Cranfield and CISI queries, alternating, at most ``limit`` (both sets are asked
    whichever corpora the index holds)."""
    sets = [list(load_queries(BEIR / name / "queries.jsonl").values()) for name in DATASETS]
    mixed = [q for pair in zip(*sets, strict=False) for q in pair]
    return mixed[:limit]


@contextmanager
def busy_processes(count: int) -> Iterator[None]:
    """``count`` processes spinning on a core each, stopped on exit."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]
    time.sleep(1.0)
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def http_clients(url: str, texts: list[str], clients: int) -> dict[str, float]:
    """``texts`` sent as ``POST /search`` by ``clients`` threads, one connection each."""
    shares = [texts[i::clients] for i in range(clients)]

    def run(share: list[str]) -> list[float]:
        with httpx.Client(base_url=url, timeout=120) as client:
            return per_call_ms(
                lambda q: client.post("/search", json={"query": q}).raise_for_status(), share
            )

    clock = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        spent = [ms for part in pool.map(run, shares) for ms in part]
    return summary(spent, time.perf_counter() - clock)


def cold_query(folder: Path, text: str, runtime: str = "auto") -> float:
    """Wall seconds of one ``ragkit query`` in a new process (``RAGKIT_EMBED_RUNTIME``)."""
    clock = time.perf_counter()
    subprocess.run(
        [RAGKIT, "query", text, "--index", str(folder), "-k", "10"],
        check=True,
        capture_output=True,
        env={**os.environ, "RAGKIT_EMBED_RUNTIME": runtime},
    )
    return time.perf_counter() - clock


def show(result: dict) -> None:
    table = Table(
        "condition",
        "p50 ms",
        "p95 ms",
        "req/s",
        "load avg",
        title=f"warm hybrid search, {result['index']['chunks']:,} chunks, k=10",
    )
    for name, row in result["rows"].items():
        rate = row.get("requests_per_s")
        table.add_row(
            name,
            f"{row['p50_ms']}",
            f"{row['p95_ms']}",
            f"{rate}" if rate else "–",
            f"{row['load_average']}",
        )
    console = Console()
    console.print(table)
    console.print(
        f"serve start-up {result['serve_startup_s']:.1f} s · cold `ragkit query` "
        f"{result['cold_query_s']:.1f} s (torch: {result['cold_query_torch_s']:.1f} s) · "
        f"threads {result['threads']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=200, help="queries per condition")
    parser.add_argument("--chunk-tokens", type=int, default=64)
    parser.add_argument(
        "--datasets", nargs="+", choices=CORPORA, default=["cranfield"], help="corpora indexed"
    )
    parser.add_argument("--rebuild", action="store_true", help="build the index again")
    parser.add_argument(
        "--build-only", action="store_true", help="build (or complete) the index, then stop"
    )
    args = parser.parse_args()
    folder = cache_dir() / "benchmarks" / f"latency-{'-'.join(args.datasets)}-{args.chunk_tokens}"
    built = build_index(folder, args.datasets, args.chunk_tokens, args.rebuild)
    if args.build_only:
        print(json.dumps(built))
        return
    texts = queries(args.queries)
    rows: dict[str, dict[str, float]] = {}
    with Index.open(folder) as index:
        per_call_ms(index.search, texts[:10])
        rows["in-process, idle"] = summary(per_call_ms(index.search, texts))
        encoder = index.encoder
        rows["query encoding, ragkit"] = summary(
            per_call_ms(lambda q: encoder.encode_queries([q]), texts)
        )
        rows["query encoding, ragkit torch path"] = summary(
            per_call_ms(lambda q: encoder._forward([encoder.spec.query_prefix + q]), texts)
        )
        rows["query encoding, sentence-transformers"] = summary(
            per_call_ms(
                lambda q: encoder.model.encode(
                    [encoder.spec.query_prefix + q],
                    normalize_embeddings=True,
                    show_progress_bar=False,
                ),
                texts,
            )
        )
        with busy_processes(2):
            rows["in-process, 2 busy processes"] = summary(per_call_ms(index.search, texts))
    with serve(str(folder)) as (url, startup):
        http_clients(url, texts[:10], 1)
        rows["HTTP, 1 client"] = http_clients(url, texts, 1)
        rows["HTTP, 8 clients"] = http_clients(url, texts, 8)
    result = {
        "index": {"datasets": args.datasets, "chunk_tokens": args.chunk_tokens, **built},
        "model": MODEL,
        "threads": os.environ.get("OMP_NUM_THREADS"),
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        "cpus": os.cpu_count(),
        "rows": rows,
        "serve_startup_s": round(startup, 2),
        "cold_query_s": round(cold_query(folder, texts[0]), 2),
        "cold_query_torch_s": round(cold_query(folder, texts[0], "torch"), 2),
    }
    write_result("latency", result)
    show(result)


if __name__ == "__main__":
    main()
